/** Document endpoints: GET/HEAD/PUT/DELETE/COPY of `/{db}/{docid}`, design and local documents. */
import { badRequest, conflict, CouchError, notFound } from '../errors.js';
import { emptyDoc, parseIncomingDoc, type AttachmentInput, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import type { Database, OpenOptions, OpenedDoc } from '../core/database.js';
import { parseRev, winner } from '../core/revtree.js';
import { json, raw, type HeaderMap, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import {
  absoluteUrl, docPath, durableWrite, ifMatchRev, maxDocumentSize, openDb, quote, raiseResult, requestLimit, editDocs } from './common.js';
import { checkDocSize } from './databases.js';
import { randomBytes } from 'node:crypto';

export const documentRoutes: Route[] = [
  {
    shape: 'document',
    methods: { GET: getDocument, PUT: putDocument, DELETE: deleteDocument, COPY: copyDocument },
  },
];

/** The read options a request asks for (`meta` = conflicts + deleted_conflicts + revs_info). */
export function openOptions(req: Request): OpenOptions {
  const meta = req.bool('meta');
  const rev = req.string('rev');
  if (rev !== undefined && !parseRev(rev)) throw badRequest('Invalid rev format');
  const attsSince = req.json('atts_since');
  if (attsSince !== undefined && (!Array.isArray(attsSince) || attsSince.some((r) => typeof r !== 'string'))) {
    throw badRequest('atts_since must be a JSON array of revisions');
  }
  return {
    attachments: req.bool('attachments'),
    attsSince: attsSince as string[] | undefined,
    attEncodingInfo: req.bool('att_encoding_info'),
    rev,
    revs: req.bool('revs'),
    revsInfo: req.bool('revs_info') || meta,
    conflicts: req.bool('conflicts') || meta,
    deletedConflicts: req.bool('deleted_conflicts') || meta,
    localSeq: req.bool('local_seq'),
    latest: req.bool('latest'),
  };
}

async function getDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  if (isLocalId(p.docId)) {
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    const localEtag = quote(`0-${rec.rev}`);
    if (etagMatches(req, localEtag)) return raw(304, '', 'application/json', { ETag: localEtag });
    return json(200, db.openLocal(rec, req.bool('revs')), { ETag: localEtag });
  }
  const options = openOptions(req);
  if (req.has('open_revs')) return openRevs(req, db, p.docId, options);

  const doc = await db.openDoc(p.docId, options);
  // CouchDB sends an ETag, and honours If-None-Match, only when the answer carries no meta
  // information (couch_httpd_db:send_doc).
  if (hasMeta(doc, options)) return json(200, doc.json);
  const etag = quote(doc.rev);
  if (etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  return json(200, doc.json, { ETag: etag });
}

/** If-None-Match lists the given ETag (CouchDB splits the header on commas and spaces). */
function etagMatches(req: Request, etag: string): boolean {
  const header = req.header('if-none-match');
  return header !== undefined && header.split(/[, ]+/).includes(etag);
}

/**
 * Whether an opened document carries meta information: `_revs_info` and `_local_seq` always do
 * when asked; `conflicts`/`deleted_conflicts` only when there actually are such revisions.
 */
function hasMeta(doc: OpenedDoc, options: OpenOptions): boolean {
  if (options.revsInfo || options.localSeq) return true;
  if (!options.conflicts && !options.deletedConflicts) return false;
  const fields = JSON.parse(doc.json) as Record<string, unknown>;
  return '_conflicts' in fields || '_deleted_conflicts' in fields;
}

async function openRevs(req: Request, db: Database, id: string, options: OpenOptions): Promise<Reply> {
  const param = req.string('open_revs')!;
  let revs: 'all' | string[];
  if (param === 'all') {
    revs = 'all';
  } else {
    const parsed = req.json('open_revs');
    if (!Array.isArray(parsed) || parsed.some((r) => typeof r !== 'string' || !parseRev(r))) {
      throw badRequest('open_revs must be "all" or a JSON array of revisions');
    }
    revs = parsed as string[];
  }
  let results: Awaited<ReturnType<Database['openRevs']>>;
  try {
    results = await db.openRevs(id, revs, options);
  } catch (err) {
    // CouchDB answers open_revs=all of a document it does not have with an empty list.
    if (revs !== 'all' || !(err instanceof CouchError) || err.status !== 404) throw err;
    results = [];
  }
  const accept = req.header('accept') ?? '';
  if (accept.includes('multipart/mixed')) {
    const boundary = randomBytes(16).toString('hex');
    let body = '';
    for (const r of results) {
      body += `--${boundary}\r\n`;
      if ('ok' in r) body += `Content-Type: application/json\r\n\r\n${r.ok.json}\r\n`;
      else body += `Content-Type: application/json; error="true"\r\n\r\n${JSON.stringify({ missing: r.missing })}\r\n`;
    }
    body += `--${boundary}--`;
    return raw(200, body, `multipart/mixed; boundary="${boundary}"`);
  }
  const parts = results.map((r) => ('ok' in r ? `{"ok":${r.ok.json}}` : JSON.stringify(r)));
  return json(200, `[${parts.join(',')}]`);
}

/**
 * The revision a write names: body `_rev`, `?rev=` or `If-Match`, which must agree, with
 * couch_httpd_db's reasons: body against query first, then either against the If-Match ETag.
 */
function resolveRev(req: Request, doc: IncomingDoc): void {
  const queryRev = req.string('rev');
  if (queryRev !== undefined && !parseRev(queryRev)) throw badRequest('Invalid rev format');
  if (doc.rev !== undefined && queryRev !== undefined && doc.rev !== queryRev) {
    throw badRequest('Document rev from request body and query string have different values');
  }
  const explicit = doc.rev ?? queryRev;
  const etagRev = ifMatchRev(req);
  if (etagRev !== undefined) {
    if (!parseRev(etagRev)) throw badRequest('Invalid rev format');
    if (explicit !== undefined && explicit !== etagRev) throw badRequest('Document rev and etag have different values');
  }
  doc.rev = explicit ?? etagRev;
}

async function putDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  validateDocId(p.docId);
  checkDocSize(req, svc);
  // max_document_size bounds the body however it is sent: chunked bodies have no Content-Length.
  const body = await req.jsonBody(Math.min(requestLimit(svc), maxDocumentSize(svc)));
  const doc = parseIncomingDoc(body); // a non-object is "Document must be a JSON object", as CouchDB
  doc.id = p.docId;
  resolveRev(req, doc);
  return writeOne(req, p, svc, db, doc, doc.deleted ? 200 : 201, true);
}

async function deleteDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const doc: IncomingDoc = emptyDoc(p.docId, undefined, true);
  resolveRev(req, doc);
  if (isLocalId(p.docId)) {
    await db.putLocal(doc, durableWrite(req, svc));
    return json(200, { ok: true, id: p.docId, rev: '0-0' });
  }
  // As CouchDB, look the document up first: a missing or already deleted one is a 404 whatever
  // revision was given (deleting a tombstone must not stack another tombstone on it).
  const info = await db.docInfo(p.docId);
  if (!info) throw notFound('missing');
  if (winner(info.tree)!.deleted) throw notFound('deleted');
  if (doc.rev === undefined) throw conflict();
  return writeOne(req, p, svc, db, doc, 200, false);
}

/**
 * Writes one document and answers as CouchDB does: 201 (200 for a deletion), 202 for batch=ok,
 * ETag, and Location for PUT and COPY (not DELETE).
 */
async function writeOne(
  req: Request, p: RouteParams, svc: Services, db: Database, doc: IncomingDoc, status: number, withLocation: boolean,
): Promise<Reply> {
  const id = doc.id!;
  const location: HeaderMap = withLocation ? { Location: absoluteUrl(req, docPath(p.db, id), svc) } : {};
  if (isLocalId(id)) {
    const rev = await db.putLocal(doc, durableWrite(req, svc));
    return json(status, { ok: true, id, rev }, { ETag: quote(rev), ...location });
  }
  const newEdits = req.bool('new_edits', true);
  if (req.string('batch') === 'ok') {
    void editDocs(db, [doc], { newEdits, allOrNothing: false, durable: false }).catch(() => undefined);
    return json(202, { ok: true, id });
  }
  const [result] = await editDocs(db, [doc], { newEdits, allOrNothing: false, durable: durableWrite(req, svc) });
  if (!result!.ok) raiseResult(result!);
  return json(status, { ok: true, id, rev: result!.rev }, { ETag: quote(result!.rev), ...location });
}

async function copyDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const destination = req.header('destination');
  if (!destination) throw badRequest('Destination header is mandatory for COPY.');
  const { id: targetId, rev: targetRev } = parseDestination(destination);
  validateDocId(targetId);

  let source: { body: Record<string, unknown>; atts: Map<string, AttachmentInput> | undefined };
  if (isLocalId(p.docId)) {
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    source = { body: JSON.parse(rec.body) as Record<string, unknown>, atts: undefined };
  } else {
    const opened: OpenedDoc = await db.openDoc(p.docId, { rev: req.string('rev') ?? ifMatchRev(req) });
    if (opened.deleted) throw notFound('deleted');
    const parsed = parseIncomingDoc(JSON.parse(opened.json));
    source = { body: parsed.body, atts: copiedAttachments(opened.attachments) };
  }
  const doc: IncomingDoc = { ...emptyDoc(targetId, targetRev, false), body: source.body, bodyJson: JSON.stringify(source.body), atts: source.atts };
  return writeOne(req, { ...p, docId: targetId }, svc, db, doc, 201, true);
}

/** The source's attachments as content the copy stores again by digest (no upload needed). */
function copiedAttachments(stubsJson: string | undefined): Map<string, AttachmentInput> | undefined {
  if (stubsJson === undefined) return undefined;
  const stubs = JSON.parse(stubsJson) as Record<string, { content_type: string; digest: string; length: number }>;
  return new Map(Object.entries(stubs).map(([name, s]) => [name, { kind: 'content', contentType: s.content_type, digest: s.digest, length: s.length }]));
}

/** `Destination: id` or `Destination: id?rev=N-x` (the rev being the destination's current one). */
function parseDestination(header: string): { id: string; rev: string | undefined } {
  if (/^https?:\/\//.test(header)) throw badRequest('Destination URL must be relative.');
  const q = header.indexOf('?');
  const rawId = q === -1 ? header : header.slice(0, q);
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    throw badRequest('Invalid Destination header');
  }
  let rev: string | undefined;
  if (q !== -1) {
    rev = new URLSearchParams(header.slice(q + 1)).get('rev') ?? undefined;
    if (rev !== undefined && !parseRev(rev)) throw badRequest('Invalid rev format');
  }
  return { id, rev };
}
