/**
 * `_rewrite`: `/{db}/_design/{ddoc}/_rewrite/{path}` routed by the design document's `rewrites`
 * rules (design/rewrite.ts), or by its rewrite function when `rewrites` is one (CouchDB 2), to a
 * path relative to the design document, then dispatched through the server's router again
 * (Services.dispatch), so every endpoint is reachable and none is duplicated here. A rewrite
 * function may also answer the request itself (`{code, headers, body}`). `[httpd]
 * secure_rewrites` (default true) keeps targets inside the database; `[httpd] rewrite_limit`
 * (default 100) stops rules that rewrite into `_rewrite` forever.
 */
import { CouchError, badRequest, notFound } from '../errors.js';
import { applyRewrites, checkQuery, checkRules, resolveSegments, type RewriteRule } from '../design/rewrite.js';
import type { Reply } from './reply.js';
import { everyMethod, type Route, type RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { openDb } from './common.js';
import { handlerMethod, requestJson } from './design-request.js';
import { raw } from './reply.js';
import type { Database } from '../core/database.js';
import type { DesignDocument } from '../design/service.js';
import { HTTPD_SECTIONS } from '../couchdb-names.js';

export const rewriteRoutes: Route[] = [
  { shape: 'designHandler', name: '_rewrite', methods: everyMethod(rewrite) },
];

async function rewrite(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  if (req.rewriteDepth >= svc.config.layered(HTTPD_SECTIONS).getInt('rewrite_limit', 100)) throw badRequest('Exceeded rewrite recursion limit');
  const db = await openDb(svc, p.db, req);
  const ddoc = await svc.design.designDoc(db, p.docId);
  const rules = ddoc.body['rewrites'];
  if (typeof rules === 'string') return functionRewrite(req, p, svc, db, ddoc);
  checkQuery([...req.query]);
  if (!Array.isArray(rules)) throw new CouchError(404, 'rewrite_error', 'Invalid path.');
  const secure = svc.config.layered(HTTPD_SECTIONS).getBool('secure_rewrites', true);
  checkRules(rules as RewriteRule[], secure);
  const target = applyRewrites(rules as RewriteRule[], handlerMethod(req), p.rest, [...req.query]);
  if (!target) throw notFound('missing');
  const search = new URLSearchParams(target.query).toString();
  return svc.dispatch(req.rewritten(targetUrl(p, target.path, search, secure), req.method));
}

/**
 * The URL of a target path (segments relative to the design document); `secure`: it must stay
 * inside the database (`secure_rewrites`, which CouchDB applies to rules, not to functions).
 * For rules, checkRules has already refused the `..` their text holds, as CouchDB does; this
 * also refuses `..` that path variables bring (`/_rewrite/doc/%2E%2E` through `../../:id`),
 * which CouchDB would follow up to the server's root.
 */
function targetUrl(p: RouteParams, path: string[], search: string, secure: boolean): string {
  const base = [p.db, '_design', p.docId.slice('_design/'.length)];
  const resolved = resolveSegments(base, path);
  if (!resolved || (secure && (resolved.length === 0 || resolved[0] !== p.db))) {
    // A 500, as CouchDB 1.6 answers it (an error of the design document, not of the caller).
    throw new CouchError(500, 'insecure_rewrite_rule', 'too many ../.. segments');
  }
  return `/${resolved.map(encodeURIComponent).join('/')}${search ? `?${search}` : ''}`;
}

/**
 * `rewrites` as a function of the request object (without `info`, `form`, `uuid` and `id`, as
 * CouchDB 2 gives it): its `{path, query, method, headers, body}` routes the request, its
 * `{code, headers, body}` answers it.
 */
async function functionRewrite(req: Request, p: RouteParams, svc: Services, db: Database, ddoc: DesignDocument): Promise<Reply> {
  const fn = await svc.design.rewriteFunction(db, ddoc);
  const reqObject = JSON.parse(await requestJson(req, svc, db, null)) as Record<string, unknown>;
  for (const name of ['info', 'form', 'uuid', 'id']) delete reqObject[name];
  const result = await fn.rewrite(JSON.stringify(reqObject));
  const headers = stringMembers(result['headers']);
  const body = result['body'];
  if (result['code'] !== undefined) {
    const code = Number(result['code']);
    if (!Number.isInteger(code) || code < 100 || code > 599) throw new CouchError(500, 'rewrite_error', 'Invalid response code from rewrite function');
    const text = typeof body === 'string' ? body : body === undefined || body === null ? '' : JSON.stringify(body);
    return raw(code, text, headers['Content-Type'] ?? headers['content-type'] ?? 'text/plain; charset=utf-8', headers);
  }
  const path = result['path'];
  if (typeof path !== 'string') throw new CouchError(500, 'rewrite_error', 'Rewrite result must produce a new path.');
  const [pathPart = '', inlineQuery] = path.split(/\?(.*)/s, 2);
  const query = result['query'];
  // Without a query of its own, the request keeps the client's.
  const search = query === undefined ? inlineQuery ?? req.query.toString() : typeof query === 'string' ? query : queryString(query);
  const segments = pathPart.split('/').filter((s) => s !== '').map(decodeURIComponent);
  const method = typeof result['method'] === 'string' ? result['method'].toUpperCase() : req.method;
  const replace = {
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(typeof body === 'string' ? { body: Buffer.from(body) } : {}),
  };
  return svc.dispatch(req.rewritten(targetUrl(p, segments, search, false), method, replace));
}

/** A rewrite result's `query` object as a query string: strings as they are, other values as JSON. */
function queryString(query: unknown): string {
  if (query === null || typeof query !== 'object') return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    search.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return search.toString();
}

/** The string-valued members of a `headers` object (anything else gives none). */
function stringMembers(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
