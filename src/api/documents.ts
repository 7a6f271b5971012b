/** Document endpoints: GET/HEAD/PUT/DELETE/COPY of `/{db}/{docid}`, design and local documents. */
import { badRequest, conflict, notFound } from '../errors.js';
import { emptyDoc, parseIncomingDoc, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import type { Database, OpenOptions, OpenedDoc } from '../core/database.js';
import { parseRev } from '../core/revtree.js';
import { json, raw, type HeaderMap, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import {
  absoluteUrl, docPath, durableWrite, ifMatchRev, openDb, quote, raiseResult, readObject,
} from './common.js';
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
  return {
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
  const db = await openDb(svc, p.db);
  if (isLocalId(p.docId)) {
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    return json(200, db.openLocal(rec, req.bool('revs')), { ETag: quote(`0-${rec.rev}`) });
  }
  const options = openOptions(req);
  if (req.has('open_revs')) return openRevs(req, db, p.docId, options);

  const doc = await db.openDoc(p.docId, options);
  const etag = quote(doc.rev);
  if (req.header('if-none-match') === etag) return raw(304, '', 'application/json', { ETag: etag });
  const headers: HeaderMap = options.conflicts || options.deletedConflicts ? {} : { ETag: etag };
  return json(200, doc.json, headers);
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
  const results = await db.openRevs(id, revs, options);
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

/** The revision a write names: body `_rev`, `?rev=` or `If-Match`, which must agree. */
function resolveRev(req: Request, doc: IncomingDoc): void {
  const queryRev = req.string('rev');
  const headerRev = ifMatchRev(req);
  for (const rev of [queryRev, headerRev]) {
    if (rev === undefined) continue;
    if (!parseRev(rev)) throw badRequest('Invalid rev format');
    if (doc.rev !== undefined && doc.rev !== rev) {
      throw badRequest('Document rev from request body and query string have different values');
    }
    doc.rev = rev;
  }
}

async function putDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db);
  validateDocId(p.docId);
  checkDocSize(req, svc);
  const doc = parseIncomingDoc(await readObject(req, svc));
  doc.id = p.docId;
  resolveRev(req, doc);
  return writeOne(req, p, svc, db, doc, 201);
}

async function deleteDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db);
  const rev = req.string('rev') ?? ifMatchRev(req);
  if (isLocalId(p.docId)) {
    await db.putLocal(emptyDoc(p.docId, rev, true), durableWrite(req, svc));
    return json(200, { ok: true, id: p.docId, rev: '0-0' });
  }
  if (rev === undefined) throw conflict();
  if (!parseRev(rev)) throw badRequest('Invalid rev format');
  const doc: IncomingDoc = emptyDoc(p.docId, rev, true);
  return writeOne(req, p, svc, db, doc, 200);
}

/** Writes one document and answers as CouchDB does (201/200, 202 for batch=ok, ETag, Location). */
async function writeOne(req: Request, p: RouteParams, svc: Services, db: Database, doc: IncomingDoc, status: number): Promise<Reply> {
  const id = doc.id!;
  if (isLocalId(id)) {
    const rev = await db.putLocal(doc, durableWrite(req, svc));
    return json(201, { ok: true, id, rev }, { ETag: quote(rev) });
  }
  const newEdits = req.bool('new_edits', true);
  if (req.string('batch') === 'ok') {
    void db.edit([doc], { newEdits, allOrNothing: false, durable: false }).catch(() => undefined);
    return json(202, { ok: true, id });
  }
  const [result] = await db.edit([doc], { newEdits, allOrNothing: false, durable: durableWrite(req, svc) });
  if (!result!.ok) raiseResult(result!);
  return json(status, { ok: true, id, rev: result!.rev }, {
    ETag: quote(result!.rev),
    Location: absoluteUrl(req, docPath(p.db, id)),
  });
}

async function copyDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db);
  const destination = req.header('destination');
  if (!destination) throw badRequest('Destination header is mandatory for COPY.');
  const { id: targetId, rev: targetRev } = parseDestination(destination);
  validateDocId(targetId);

  let source: { body: Record<string, unknown>; attachments: Record<string, unknown> | undefined };
  if (isLocalId(p.docId)) {
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    source = { body: JSON.parse(rec.body) as Record<string, unknown>, attachments: undefined };
  } else {
    const opened: OpenedDoc = await db.openDoc(p.docId, { rev: req.string('rev') ?? ifMatchRev(req) });
    if (opened.deleted) throw notFound('deleted');
    const parsed = parseIncomingDoc(JSON.parse(opened.json));
    source = { body: parsed.body, attachments: parsed.attachments };
  }
  const doc: IncomingDoc = { ...emptyDoc(targetId, targetRev, false), body: source.body, bodyJson: JSON.stringify(source.body), attachments: source.attachments };
  return writeOne(req, { ...p, docId: targetId }, svc, db, doc, 201);
}

/** `Destination: id` or `Destination: id?rev=N-x` (the rev being the destination's current one). */
function parseDestination(header: string): { id: string; rev: string | undefined } {
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
