/**
 * View parameters given as JSON, as CouchDB 2 takes them for views and `_all_docs`,
 * `_design_docs`, `_local_docs`: in a POST body beside `keys` (the query string wins where both
 * give one), and as multiple queries in one request (`POST .../queries`, or `queries` in the
 * POST body of the endpoint itself), answered `{"results": [...]}`, one GET answer per query.
 */
import { badRequest } from '../errors.js';
import { stream, type Reply } from './reply.js';
import type { Handler, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';

/** Parameters whose query-string form is JSON text (the rest go as they are when strings). */
const JSON_PARAMS = new Set(['key', 'keys', 'startkey', 'start_key', 'endkey', 'end_key']);

/** The `queries` of a body, or undefined when it has none (`keys` and `queries` exclude each other). */
export function bodyQueries(body: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const queries = body['queries'];
  if (queries === undefined) return undefined;
  if (!Array.isArray(queries)) throw badRequest('`queries` member must be an array.');
  if (body['keys'] !== undefined) throw badRequest('`keys` and `queries` are mutually exclusive');
  if (!queries.every((q) => q !== null && typeof q === 'object' && !Array.isArray(q))) {
    throw badRequest('Each member of `queries` must be a JSON object.');
  }
  return queries as Record<string, unknown>[];
}

/** The `queries` of a `POST .../queries` body, which must have them. */
export function requiredQueries(body: Record<string, unknown>): Record<string, unknown>[] {
  const queries = bodyQueries(body);
  if (queries === undefined) throw badRequest('POST body must include `queries` parameter.');
  return queries;
}

/** Body members that are not view parameters. */
const NOT_PARAMS = new Set(['keys', 'queries']);

/**
 * The request with its POST body's view parameters added to the query string, where the
 * query string does not already give them (CouchDB 2's parse_body_and_query).
 */
export function withBodyParams(req: Request, body: Record<string, unknown>): Request {
  const search = new URLSearchParams(req.query);
  const given = Object.entries(body).filter(([name]) => !NOT_PARAMS.has(name) && !search.has(name));
  if (given.length === 0) return req;
  appendParams(search, given);
  return req.rewritten(`${req.rawPath}?${search.toString()}`, req.method);
}

function appendParams(search: URLSearchParams, params: Iterable<[string, unknown]>): void {
  for (const [name, value] of params) {
    search.append(name, typeof value === 'string' && !JSON_PARAMS.has(name) ? value : JSON.stringify(value));
  }
}

/**
 * Every query run through `single` as a GET of the endpoint (the request's path without
 * `/queries`). All of them are parsed and started before the first byte is sent, so a bad
 * parameter in any is the whole request's 400.
 */
export async function runQueries(req: Request, p: RouteParams, svc: Services, queries: readonly Record<string, unknown>[], single: Handler): Promise<Reply> {
  const path = req.rawPath.replace(/\/queries\/?$/, '');
  const replies: Reply[] = [];
  for (const query of queries) {
    const search = new URLSearchParams();
    appendParams(search, Object.entries(query));
    replies.push(await single(req.rewritten(`${path}?${search.toString()}`, 'GET'), p, svc));
  }
  return stream(200, (async function* () {
    yield '{"results":[\n';
    for (const [i, reply] of replies.entries()) {
      if (i > 0) yield ',\n';
      yield* replyText(reply);
    }
    yield '\n]}\n';
  })());
}

/** A reply's body as JSON text (what a GET would have sent). */
async function* replyText(reply: Reply): AsyncIterable<string | Uint8Array> {
  switch (reply.kind) {
    case 'json':
      yield typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      return;
    case 'raw':
      yield reply.body;
      return;
    case 'stream':
    case 'relay':
      yield* reply.body;
  }
}
