/**
 * `_rewrite`: `/{db}/_design/{ddoc}/_rewrite/{path}` routed by the design document's `rewrites`
 * rules (design/rewrite.ts) to a path relative to the design document, then dispatched through
 * the server's router again (Services.dispatch), so every endpoint is reachable and none is
 * duplicated here. `[httpd] secure_rewrites` (default true) keeps targets inside the database;
 * `[httpd] rewrite_limit` (default 100) stops rules that rewrite into `_rewrite` forever.
 */
import { CouchError, badRequest, notFound } from '../errors.js';
import { applyRewrites, resolveSegments, type RewriteRule } from '../design/rewrite.js';
import type { Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { openDb } from './common.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'COPY'] as const;

export const rewriteRoutes: Route[] = [
  { shape: 'designHandler', name: '_rewrite', methods: Object.fromEntries(METHODS.map((m) => [m, rewrite])) },
];

async function rewrite(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  if (req.rewriteDepth >= svc.config.getInt('httpd', 'rewrite_limit', 100)) throw badRequest('Exceeded rewrite recursion limit');
  const db = await openDb(svc, p.db, req);
  const ddoc = await svc.design.designDoc(db, p.docId);
  const rules = ddoc.body['rewrites'];
  if (typeof rules === 'string') throw new CouchError(400, 'rewrite_error', 'Rewrite rules are a String. They must be a JSON Array.');
  if (!Array.isArray(rules)) throw new CouchError(404, 'rewrite_error', 'Invalid path.');
  const target = applyRewrites(rules as RewriteRule[], req.method, p.rest, [...req.query]);
  if (!target) throw notFound('missing');
  const base = [p.db, '_design', p.docId.slice('_design/'.length)];
  const resolved = resolveSegments(base, target.path);
  const secure = svc.config.getBool('httpd', 'secure_rewrites', true);
  if (!resolved || (secure && (resolved.length === 0 || resolved[0] !== p.db))) {
    // A 500, as CouchDB 1.6 answers it (an error of the design document, not of the caller).
    throw new CouchError(500, 'insecure_rewrite_rule', 'too many ../.. segments');
  }
  const search = new URLSearchParams(target.query).toString();
  const url = `/${resolved.map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
  return svc.dispatch(req.rewritten(url, req.method));
}
