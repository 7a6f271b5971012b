/**
 * Standalone attachments: GET/HEAD/PUT/DELETE `/{db}/{docid}/{attname}`. Content streams in and
 * out; GET honours Range (over the identity bytes), If-None-Match on the digest, and sends
 * gzip-stored content as it is to clients that accept gzip.
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { badRequest, conflict, CouchError, notFound } from '../errors.js';
import { emptyDoc, parseIncomingDoc, type AttachmentInput, type IncomingDoc } from '../core/document.js';
import type { Database, OpenedDoc } from '../core/database.js';
import { winner } from '../core/revtree.js';
import { validateDocId, isLocalId } from '../core/names.js';
import { json, raw, stream, type HeaderMap, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { parseDocQuery } from './documents.js';
import { absoluteUrl, countRead, docPath, durableWrite, etagMatches, openDb, quote, raiseResult, editDocs, requestRev } from './common.js';

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
  countRead(svc, db);
  if (isLocalId(p.docId)) throw notFound('missing');
  // CouchDB 1.6 reads the whole document query here (parse_doc_query), so a bad rev, open_revs
  // or atts_since is the 400 a document GET answers; only rev chooses what is served.
  const { options: { rev } } = parseDocQuery(req);
  const doc = await db.openDoc(p.docId, { rev });
  const stub = stubsOf(doc)[p.attachment];
  if (!stub) throw notFound('Document is missing attachment');
  const content = await db.attachments.info(stub.digest);
  if (!content) throw new CouchError(500, 'missing_content', `attachment content ${stub.digest} is missing`);

  // CouchDB reads Accept-Encoding before anything else, so a bad one fails even a 304 or a range.
  const acceptsGzip = req.acceptedEncodings(['gzip', 'identity']).includes('gzip');
  const etag = quote(stub.digest.slice(4));
  // Ranges are served of content stored as sent; compressed content goes whole, as CouchDB's.
  const headers: HeaderMap = { ETag: etag, 'Accept-Ranges': content.encoding ? 'none' : 'bytes' };
  // As couch_httpd:etag_match, If-None-Match may list several ETags.
  if (etagMatches(req, etag)) return raw(304, '', stub.content_type, headers);

  const ranges = parseRanges(req.header('range'), stub.length);
  if (ranges === 'unsatisfiable') {
    return json(416, { error: 'requested_range_not_satisfiable', reason: 'Requested range not satisfiable' },
      { 'Content-Range': `bytes */${stub.length}` });
  }
  const served = content.encoding ? undefined : ranges;
  if (served?.length === 1) {
    const [range] = served as [ByteRange];
    return stream(206, db.attachments.read(stub.digest, { decode: true, start: range.start, end: range.end }), {
      ...headers,
      'Content-Range': `bytes ${range.start}-${range.end}/${stub.length}`,
      'Content-Length': range.end - range.start + 1,
    }, stub.content_type);
  }
  // Several ranges (fewer than ten, as CouchDB) are one multipart/byteranges body.
  if (served && served.length < 10) {
    const boundary = randomBytes(16).toString('hex');
    return stream(206, byteRanges(db, stub, served, boundary), headers, `multipart/byteranges; boundary="${boundary}"`);
  }
  const sendEncoded = content.encoding === 'gzip' && acceptsGzip;
  // The digest is of the stored bytes: it is the body's MD5 when they are sent as stored.
  if (sendEncoded || !content.encoding) headers['Content-MD5'] = stub.digest.slice(4);
  if (sendEncoded) {
    headers['Content-Encoding'] = 'gzip';
    headers['Content-Length'] = content.encodedLength!;
  } else {
    headers['Content-Length'] = stub.length;
  }
  return stream(200, db.attachments.read(stub.digest, { decode: !sendEncoded }), headers, stub.content_type);
}

interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/**
 * The ranges a `Range: bytes=` header asks of `length` bytes, as couch_httpd_db:parse_ranges
 * reads them: none (the whole body) when the header is absent or malformed or a range is `0-`;
 * unsatisfiable when a range ends before it starts or starts past the end. As mochiweb's
 * parse_range_request splits the list (string:tokens), empty entries between commas are skipped.
 */
export function parseRanges(header: string | undefined, length: number): ByteRange[] | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(.+)$/.exec(header.trim());
  if (!m) return undefined;
  const specs = m[1]!.split(',').filter((spec) => spec.trim() !== '');
  if (specs.length === 0) return undefined;
  const ranges: ByteRange[] = [];
  for (const spec of specs) {
    const r = /^\s*(\d*)\s*-\s*(\d*)\s*$/.exec(spec);
    if (!r || (r[1] === '' && r[2] === '')) return undefined;
    const [, first, last] = r as unknown as [string, string, string];
    if (first === '') {
      const suffix = Number(last);
      if (suffix === 0 || length === 0) return 'unsatisfiable';
      ranges.push({ start: Math.max(0, length - suffix), end: length - 1 });
      continue;
    }
    const start = Number(first);
    if (last === '' && start === 0) return undefined;
    if (last !== '' && Number(last) < start) return 'unsatisfiable';
    if (start >= length) return 'unsatisfiable';
    ranges.push({ start, end: last === '' ? length - 1 : Math.min(Number(last), length - 1) });
  }
  return ranges;
}

/** A multipart/byteranges body in couch_httpd_db:send_ranges_multipart's shape. */
async function* byteRanges(db: Database, stub: Stub, ranges: ByteRange[], boundary: string): AsyncIterable<string | Buffer> {
  yield `--${boundary}`;
  for (const { start, end } of ranges) {
    yield `\r\nContent-Type: ${stub.content_type}\r\nContent-Range: bytes ${start}-${end}/${stub.length}\r\n\r\n`;
    yield* db.attachments.read(stub.digest, { decode: true, start, end });
    yield `\r\n--${boundary}`;
  }
  yield '--';
}

/** The request body as a stream of chunks, hashed into `md5` (if any) as it passes. */
async function* requestBody(req: Request, md5: Hash | undefined): AsyncIterable<Buffer> {
  for await (const chunk of req.raw) {
    md5?.update(chunk as Buffer);
    yield chunk as Buffer;
  }
}

async function putAttachment(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  if (isLocalId(p.docId)) throw badRequest('Local documents cannot have attachments');
  validateDocId(p.docId);
  const name = p.attachment;
  if (name.startsWith('_')) throw badRequest("Attachment name can't start with '_'");
  const rev = requestRev(req);
  const contentType = req.header('content-type') ?? 'application/octet-stream';
  const encodingHeader = req.header('content-encoding')?.trim().toLowerCase();
  if (encodingHeader && encodingHeader !== 'identity' && encodingHeader !== 'gzip') {
    throw new CouchError(415, 'bad_content_type', 'Only gzip and identity content-encodings are supported');
  }

  // The edit it extends: the named revision, or none (a new document).
  const base = rev === undefined ? undefined : await openForEdit(svc, db, p.docId, rev);
  if (rev === undefined) {
    // Without a rev only a new (or deleted) document may take the attachment.
    const info = await db.docInfo(p.docId);
    if (info && !winner(info.tree)!.deleted) throw conflict();
  }

  // Content-MD5, when given, is of the body as sent (couch_util:check_md5); a chunked upload
  // may send it as a trailer instead. Only then is the body hashed as it arrives: the store
  // hashes what it keeps anyway, and a second MD5 pass over every byte was the largest CPU
  // cost of an upload.
  const md5 = req.header('content-md5') !== undefined || req.header('transfer-encoding') !== undefined ? createHash('md5') : undefined;
  const upload = await db.attachments.write(requestBody(req, md5), {
    contentType,
    encoding: encodingHeader === 'gzip' ? 'gzip' : undefined,
  });
  try {
    const trailer = req.raw.trailers['content-md5'];
    const expectedMd5 = req.header('content-md5') ?? (typeof trailer === 'string' ? trailer : undefined);
    if (expectedMd5 !== undefined && expectedMd5.trim() !== md5?.digest('base64')) {
      throw new CouchError(400, 'content_md5_mismatch', 'Possible message corruption.');
    }
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
  const rev = requestRev(req);
  if (rev === undefined) {
    // A document that is not there is a 404 (as CouchDB since COUCHDB-3362), a live one a conflict.
    await db.openDoc(p.docId);
    throw conflict();
  }
  const base = await openForEdit(svc, db, p.docId, rev);
  if (!stubsOf(base)[p.attachment]) throw notFound('Document is missing attachment');
  const doc = editOf(p.docId, rev, base);
  doc.atts!.delete(p.attachment);
  return commit(req, p, svc, db, doc, 200, undefined);
}

/**
 * The revision an attachment edit names; one the document does not have (or a document that
 * does not exist) is a conflict, as couch_httpd_db says of open_doc_revs' `{not_found, missing}`.
 * open_doc_revs counts it in `database_reads`, found or not.
 */
async function openForEdit(svc: Services, db: Database, id: string, rev: string): Promise<OpenedDoc> {
  countRead(svc, db);
  try {
    return await db.openDoc(id, { rev });
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) throw conflict();
    throw err;
  }
}

/**
 * A new revision keeping the base's body and attachments (as stubs). An edit of a deleted
 * revision stays deleted, as couch_httpd_db:db_attachment_req edits the #doc open_doc_revs gave.
 */
function editOf(id: string, rev: string | undefined, base: OpenedDoc | undefined): IncomingDoc {
  const doc: IncomingDoc = base ? parseIncomingDoc(JSON.parse(base.json)) : emptyDoc(id, undefined, false);
  doc.id = id;
  doc.rev = rev;
  doc.deleted = base?.deleted ?? false;
  doc.attachments = undefined;
  const atts = new Map<string, AttachmentInput>();
  if (base) for (const [n, stub] of Object.entries(stubsOf(base))) atts.set(n, { kind: 'stub', digest: stub.digest });
  doc.atts = atts;
  return doc;
}

async function commit(req: Request, p: RouteParams, svc: Services, db: Database, doc: IncomingDoc, status: number, location: string | undefined): Promise<Reply> {
  if (req.string('batch') === 'ok') {
    // As a document's batch=ok: 202 whatever becomes of the edit, written without waiting for
    // the disk. It is made before the answer (its upload is held only until then).
    await editDocs(req, svc, db, [doc], { newEdits: true, allOrNothing: false, durable: false }).catch(() => undefined);
    // The PUT's Location comes along (couch_httpd_db:update_doc sends its headers with the 202).
    return json(202, { ok: true, id: doc.id }, location ? { Location: absoluteUrl(req, location, svc.config) } : {});
  }
  const [result] = await editDocs(req, svc, db, [doc], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) });
  if (!result!.ok) raiseResult(result!);
  const headers: HeaderMap = { ETag: quote(result!.rev) };
  if (location) headers['Location'] = absoluteUrl(req, location, svc.config);
  return json(status, { ok: true, id: doc.id, rev: result!.rev }, headers);
}
