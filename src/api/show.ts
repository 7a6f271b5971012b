/**
 * `_show`: `/{db}/_design/{ddoc}/_show/{func}[/{docid}]`, with any method (as CouchDB 1.6), runs
 * `shows.<func>(doc, req)` (doc null when missing) and answers what it returns, with
 * provides()/registerType() content negotiation done in the sandbox. Answers carry an ETag of
 * the design document, document, Accept header, user and query (If-None-Match on it is a 304
 * for GET), and `Vary: Accept`.
 */
import { createHash } from 'node:crypto';
import { shapeResponse } from '../design/response.js';
import { raw, type Reply } from './reply.js';
import { everyMethod, type Route, type RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { etagMatches, quote } from './common.js';
import { openDocFunction, renderedReply, requestJson } from './design-request.js';

export const showRoutes: Route[] = [
  { shape: 'designHandler', name: '_show', methods: everyMethod(show) },
];

async function show(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const { db, ddoc, fn, docId, doc } = await openDocFunction(req, p, svc, 'shows');
  const etag = quote(createHash('md5')
    .update(JSON.stringify([ddoc.rev, doc.rev ?? null, req.header('accept') ?? '', req.userCtx.name, req.userCtx.roles, req.url]))
    .digest('hex'));
  if (req.method === 'GET' && etagMatches(req, etag)) return raw(304, '', 'text/plain', { ETag: etag });
  const resp = await fn.show(doc.json, await requestJson(req, svc, db, docId ?? null));
  // As CouchDB 1.6 does, the server's ETag and `Vary: Accept` (the answer depends on the Accept
  // header through provides()) replace any the function set.
  const shaped = shapeResponse(resp);
  const headers = Object.fromEntries(Object.entries(shaped.headers).filter(([name]) => !/^(etag|vary)$/i.test(name)));
  return renderedReply({ ...shaped, headers }, { ETag: etag, Vary: 'Accept' });
}
