/** What the endpoints of design-document functions share: CouchDB's `req` object from an HTTP request, the document a function gets, its reply. */
import { CouchError, notFound } from '../errors.js';
import type { Database } from '../core/database.js';
import { isLocalId } from '../core/names.js';
import type { ShapedResponse } from '../design/response.js';
import { raw, type HeaderMap, type Reply } from './reply.js';
import { requestObject } from '../design/request-object.js';
import { decodeSegment, type Request } from './request.js';
import type { Services } from './services.js';
import { countRead, openDb, requestLimit } from './common.js';
import { everyMethod, OTHER_DESIGN_HANDLER, type Route, type RouteParams } from './route.js';

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

function segments(path: string): string[] {
  return path.split('/').slice(1).filter((s, i, all) => s !== '' || i < all.length - 1).map((s) => decodeSegment(s));
}

/**
 * Any other `_name` under a design document: as couch_httpd_db:handle_design_req, the design
 * document is opened first (a 404 as for it), then there is no handler for the name.
 */
export const otherDesignHandlerRoutes: Route[] = [{
  shape: 'designHandler',
  name: OTHER_DESIGN_HANDLER,
  methods: everyMethod(async (req: Request, p: RouteParams, svc: Services) => {
    const ddoc = await (await openDb(svc, p.db, req)).openDoc(p.docId);
    throw notFound(ddoc.deleted ? 'deleted' : `missing handler: ${p.rest[0]}`);
  }),
}];

/** The method CouchDB's design handlers see: HEAD is GET to them (the body is dropped on the way out). */
export function handlerMethod(req: Request): string {
  return req.method === 'HEAD' ? 'GET' : req.method;
}

/** The `req` of a function run for `req`, as JSON text; `id` is the document it is about (shows, updates). */
export async function requestJson(req: Request, svc: Services, db: Database, id: string | null): Promise<string> {
  const body = BODYLESS.has(req.method) && !req.header('content-length') && !req.header('transfer-encoding')
    ? undefined
    : await req.text(requestLimit(svc));
  return JSON.stringify(requestObject({
    info: await db.info(),
    id,
    uuid: svc.uuids.next(),
    method: handlerMethod(req),
    requestedPath: segments(req.requestedPath),
    path: segments(req.rawPath),
    rawPath: req.url,
    query: [...req.query],
    headers: req.headerList(),
    body,
    peer: req.peer,
    dbName: db.name,
    userCtx: req.userCtx,
    secObj: db.getSecurity(),
  }));
}

/**
 * The document a show or update function is called with, as JSON text (with `_revisions`, as
 * CouchDB's json_doc gives it, and `_conflicts`, as couch_mrview_show opens it), or `null` when
 * there is no id or no such live document.
 */
export async function docForFunction(db: Database, id: string | undefined): Promise<{ json: string; rev: string | undefined }> {
  if (id === undefined) return { json: 'null', rev: undefined };
  if (isLocalId(id)) {
    const rec = await db.getLocal(id);
    return rec ? { json: db.openLocal(rec), rev: `0-${rec.rev}` } : { json: 'null', rev: undefined };
  }
  try {
    const doc = await db.openDoc(id, { revs: true, conflicts: true });
    return doc.deleted ? { json: 'null', rev: undefined } : { json: doc.json, rev: doc.rev };
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) return { json: 'null', rev: undefined };
    throw err;
  }
}

/**
 * A function's shaped response as a Reply; `extra` headers (X-Couch-Id ...) go under the function's
 * own. A `json` answer goes as couch_httpd_external:send_external_response sends it, through
 * couch_httpd:send_json: a newline after the JSON, a JSONP callback when one is asked for and
 * allowed. Its Content-Type is the answer's own: CouchDB 1.x also put the negotiated one before
 * it in the same header (COUCHDB-1876, `application/json, application/json`), which 2.0 fixed.
 */
export function renderedReply(shaped: ShapedResponse, extra: HeaderMap = {}): Reply {
  const headers = { ...extra, ...shaped.headers };
  if (shaped.json) return { kind: 'json', status: shaped.status, body: shaped.body.toString(), headers: { ...headers, 'Content-Type': shaped.contentType } };
  return raw(shaped.status, shaped.body, shaped.contentType, headers);
}

/**
 * What a show or update call needs, from `/{db}/_design/{ddoc}/_show|_update/{func}[/{docid}]`:
 * the database, design document, compiled function, and the document (ids may hold `/`).
 */
export async function openDocFunction(req: Request, p: RouteParams, svc: Services, group: 'shows' | 'updates') {
  const [name, ...idParts] = p.rest;
  // CouchDB 1.6 names the endpoint in this error: show_error or update_error.
  if (name === undefined) throw new CouchError(404, group === 'shows' ? 'show_error' : 'update_error', 'Invalid path.');
  const db = await openDb(svc, p.db, req);
  const ddoc = await svc.design.designDoc(db, p.docId);
  const fn = await svc.design.function(db, ddoc, group, name);
  const docId = idParts.length > 0 ? idParts.join('/') : undefined;
  // couch_httpd_show opens the document with couch_doc_open: a read, found or not.
  if (docId !== undefined) countRead(svc, db);
  return { db, ddoc, fn, docId, doc: await docForFunction(db, docId) };
}
