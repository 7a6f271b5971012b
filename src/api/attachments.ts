/**
 * Standalone attachments: GET/HEAD/PUT/DELETE `/{db}/{docid}/{attname}`. Content streams in and
 * out; GET honours Range (over the identity bytes), If-None-Match on the digest, and sends
 * gzip-stored content as it is to clients that accept gzip.
 */
import { badRequest, conflict, CouchError, notFound } from '../errors.js';
import { emptyDoc, parseIncomingDoc, type AttachmentInput, type IncomingDoc } from '../core/document.js';
import type { Database, OpenedDoc } from '../core/database.js';
import { parseRev } from '../core/revtree.js';
import { validateDocId, isLocalId } from '../core/names.js';
import { json, raw, stream, type HeaderMap, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { absoluteUrl, docPath, durableWrite, ifMatchRev, openDb, quote, raiseResult } from './common.js';

export const attachmentRoutes: Route[] = [
  { shape: 'attachment', methods: { GET: getAttachment, PUT: putAttachment, DELETE: deleteAttachment } },
];

interface Stub {
  content_type: string;
  revpos: number;
  digest: string;
  length: number;
}

function stubsOf(doc: OpenedDoc): Record<string, Stub> {
  return doc.attachments ? (JSON.parse(doc.attachments) as Record<string, Stub>) : {};
}

function attachmentPath(db: string, docId: string, name: string): string {
  return `${docPath(db, docId)}/${name.split('/').map(encodeURIComponent).join('/')}`;
}

async function getAttachment(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  if (isLocalId(p.docId)) throw notFound('missing');
  const rev = req.string('rev');
  if (rev !== undefined && !parseRev(rev)) throw badRequest('Invalid rev format');
  const doc = await db.openDoc(p.docId, { rev });
  const stub = stubsOf(doc)[p.attachment];
  if (!stub) throw notFound('Document is missing attachment');
  const content = await db.attachments.info(stub.digest);
  if (!content) throw new CouchError(500, 'missing_content', `attachment content ${stub.digest} is missing`);

  const etag = quote(stub.digest.slice(4));
  const headers: HeaderMap = { ETag: etag, 'Accept-Ranges': 'bytes' };
  if (req.header('if-none-match') === etag) return raw(304, '', stub.content_type, headers);

  const range = parseRange(req.header('range'), stub.length);
  if (range === 'unsatisfiable') {
    return json(416, { error: 'requested_range_not_satisfiable', reason: 'Requested range not satisfiable' },
      { 'Content-Range': `bytes */${stub.length}` });
  }
  if (range) {
    return stream(206, db.attachments.read(stub.digest, { decode: true, start: range.start, end: range.end }), {
      ...headers,
      'Content-Range': `bytes ${range.start}-${range.end}/${stub.length}`,
      'Content-Length': range.end - range.start + 1,
    }, stub.content_type);
  }
  const sendEncoded = content.encoding === 'gzip' && acceptsGzip(req);
  if (sendEncoded) {
    headers['Content-Encoding'] = 'gzip';
    headers['Content-Length'] = content.encodedLength!;
  } else {
    headers['Content-Length'] = stub.length;
    // The digest is of the stored bytes: it is the body's MD5 only when nothing was encoded.
    if (!content.encoding) headers['Content-MD5'] = stub.digest.slice(4);
  }
  return stream(200, db.attachments.read(stub.digest, { decode: !sendEncoded }), headers, stub.content_type);
}

function acceptsGzip(req: Request): boolean {
  const accept = req.header('accept-encoding');
  return accept !== undefined && /(^|,)\s*gzip\s*(;\s*q=(?!0(\.0*)?\s*(,|$))[\d.]+)?\s*(,|$)/i.test(accept);
}

/** A single `bytes=` range over `length` bytes; several ranges are answered with the whole body. */
export function parseRange(header: string | undefined, length: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(header.trim());
  if (!m) return undefined;
  const [, first, last] = m;
  if (first === '' && last === '') return undefined;
  let start: number;
  let end: number;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, length - suffix);
    end = length - 1;
  } else {
    start = Number(first);
    if (start >= length) return 'unsatisfiable';
    // A last byte before the first makes the header invalid: it is ignored (RFC 7233).
    if (last !== '' && Number(last) < start) return undefined;
    end = last === '' ? length - 1 : Math.min(Number(last), length - 1);
  }
  if (length === 0) return 'unsatisfiable';
  return { start, end };
}

/** The request body as a stream of chunks. */
async function* requestBody(req: Request): AsyncIterable<Buffer> {
  for await (const chunk of req.raw) yield chunk as Buffer;
}

async function putAttachment(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  if (isLocalId(p.docId)) throw badRequest('Local documents cannot have attachments');
  validateDocId(p.docId);
  const name = p.attachment;
  if (name.startsWith('_')) throw badRequest("Attachment name can't start with '_'");
  const rev = req.string('rev') ?? ifMatchRev(req);
  if (rev !== undefined && !parseRev(rev)) throw badRequest('Invalid rev format');
  const contentType = req.header('content-type') ?? 'application/octet-stream';
  const encodingHeader = req.header('content-encoding')?.trim().toLowerCase();
  if (encodingHeader && encodingHeader !== 'identity' && encodingHeader !== 'gzip') {
    throw new CouchError(415, 'bad_content_type', `Unsupported Content-Encoding: ${encodingHeader}`);
  }

  // The edit it extends: the named revision, or none (a new document).
  const base = rev === undefined ? undefined : await openForEdit(db, p.docId, rev);
  if (rev === undefined && (await db.docInfo(p.docId)) && !(await isDeleted(db, p.docId))) throw conflict();

  const upload = await db.attachments.write(requestBody(req), {
    contentType,
    encoding: encodingHeader === 'gzip' ? 'gzip' : undefined,
  });
  try {
    const doc = editOf(p.docId, rev, base);
    doc.atts!.set(name, { kind: 'content', contentType, digest: upload.digest, length: upload.length });
    return await commit(req, p, svc, db, doc, 201, attachmentPath(p.db, p.docId, name));
  } finally {
    upload.release();
  }
}

async function deleteAttachment(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  if (isLocalId(p.docId)) throw notFound('missing');
  const rev = req.string('rev') ?? ifMatchRev(req);
  if (rev === undefined) throw conflict();
  if (!parseRev(rev)) throw badRequest('Invalid rev format');
  const base = await openForEdit(db, p.docId, rev);
  if (!stubsOf(base)[p.attachment]) throw notFound('Document is missing attachment');
  const doc = editOf(p.docId, rev, base);
  doc.atts!.delete(p.attachment);
  return commit(req, p, svc, db, doc, 200, undefined);
}

async function isDeleted(db: Database, id: string): Promise<boolean> {
  try {
    await db.openDoc(id);
    return false;
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) return true;
    throw err;
  }
}

/** The revision an attachment edit names; a missing or stale one is a conflict, as CouchDB says. */
async function openForEdit(db: Database, id: string, rev: string): Promise<OpenedDoc> {
  try {
    return await db.openDoc(id, { rev });
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) {
      if (!(await db.docInfo(id))) throw notFound('missing');
      throw conflict();
    }
    throw err;
  }
}

/** A new revision keeping the base's body and attachments (as stubs). */
function editOf(id: string, rev: string | undefined, base: OpenedDoc | undefined): IncomingDoc {
  const doc: IncomingDoc = base ? parseIncomingDoc(JSON.parse(base.json)) : emptyDoc(id, undefined, false);
  doc.id = id;
  doc.rev = rev;
  doc.deleted = false;
  doc.attachments = undefined;
  const atts = new Map<string, AttachmentInput>();
  if (base) for (const [n, stub] of Object.entries(stubsOf(base))) atts.set(n, { kind: 'stub', digest: stub.digest });
  doc.atts = atts;
  return doc;
}

async function commit(req: Request, p: RouteParams, svc: Services, db: Database, doc: IncomingDoc, status: number, location: string | undefined): Promise<Reply> {
  const [result] = await db.edit([doc], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) });
  if (!result!.ok) raiseResult(result!);
  const headers: HeaderMap = { ETag: quote(result!.rev) };
  if (location) headers['Location'] = absoluteUrl(req, location, svc);
  return json(status, { ok: true, id: doc.id, rev: result!.rev }, headers);
}
