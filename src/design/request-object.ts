/**
 * The `req` object design-document functions receive, as CouchDB 1.6 builds it
 * (couch_httpd_external:json_req_obj): info, id, uuid, method, requested_path, path, raw_path,
 * query, headers, body, peer, form, cookie, userCtx, secObj.
 */
import type { UserContext } from '../auth/user-context.js';
import { invalidJson } from '../errors.js';
import { HEADER_REQUESTED_PATH, HEADER_VHOST_PATH } from '../couchdb-names.js';

/** What the HTTP layer knows of a request, for building `req`. */
export interface RequestFacts {
  /** The database's info object (GET /db). */
  info: unknown;
  /** The document id the function is called for (shows, updates), else null. */
  id: string | null;
  uuid: string;
  method: string;
  /** Decoded path segments as the client asked (before any _rewrite). */
  requestedPath: string[];
  /** Decoded path segments as handled (after _rewrite). */
  path: string[];
  /** The raw path with its query string, as handled. */
  rawPath: string;
  /** Query parameters in order (later duplicates win, as in CouchDB's JSON object). */
  query: [string, string][];
  /** Headers as the client sent them (names in its case, repeats kept), then any the server added. */
  headers: [string, string][];
  /** The body text; undefined when the request has none (CouchDB then says "undefined"). */
  body: string | undefined;
  peer: string;
  dbName: string;
  userCtx: UserContext;
  secObj: unknown;
}

/** CouchDB parses these query parameters as JSON in `req.query` (json_query_keys): one that is no JSON is a 400. */
const JSON_QUERY_KEYS = new Set(['startkey', 'endkey', 'key']);

export function requestObject(f: RequestFacts): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [k, v] of f.query) {
    if (JSON_QUERY_KEYS.has(k)) {
      try {
        query[k] = JSON.parse(v);
      } catch {
        throw invalidJson();
      }
      continue;
    }
    query[k] = v;
  }
  const headers = headerObject(f.headers);
  let contentType = '';
  let cookieHeader = '';
  for (const [k, v] of Object.entries(headers)) {
    const lower = k.toLowerCase();
    if (lower === 'content-type') contentType = v;
    if (lower === 'cookie') cookieHeader = v;
  }
  const form: Record<string, string> = {};
  if (f.body !== undefined && contentType.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded') {
    for (const [k, v] of new URLSearchParams(f.body)) form[k] = v;
  }
  const cookie: Record<string, string> = {};
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    cookie[name] = value;
  }
  return {
    info: f.info,
    id: f.id,
    uuid: f.uuid,
    method: f.method,
    requested_path: f.requestedPath,
    path: f.path,
    raw_path: f.rawPath,
    query,
    headers,
    body: f.body ?? 'undefined',
    peer: f.peer,
    form,
    cookie,
    userCtx: { db: f.dbName, name: f.userCtx.name, roles: f.userCtx.roles },
    secObj: f.secObj,
  };
}

/** Header names CouchDB's own handlers add to a request under these exact (lower-case) names. */
const SERVER_ADDED_HEADERS = new Set([HEADER_REQUESTED_PATH, HEADER_VHOST_PATH]);
/** Erlang's HTTP packet parser keeps longer header names as sent. */
const MAX_NORMALIZED_NAME = 50;

/**
 * A header name as Erlang's HTTP packet parser (packet_parser.c, under mochiweb) hands it to
 * CouchDB 1.6: the first letter and each letter after a `-` upper case, the others lower case.
 */
function erlangHeaderName(name: string): string {
  if (name.length > MAX_NORMALIZED_NAME || SERVER_ADDED_HEADERS.has(name)) return name;
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}

/**
 * `req.headers` as couch_httpd_external:json_req_obj builds it from mochiweb's header table:
 * names normalized as Erlang's parser does, a repeated header one entry of its values joined by
 * ", " under its first spelling (mochiweb_headers:insert), entries in the order of their
 * lower-cased names (the table is a gb_tree keyed by them).
 */
function headerObject(list: readonly [string, string][]): Record<string, string> {
  const byKey = new Map<string, [string, string]>();
  for (const [rawName, value] of list) {
    const name = erlangHeaderName(rawName);
    const key = name.toLowerCase();
    const seen = byKey.get(key);
    if (seen) seen[1] = `${seen[1]}, ${value}`;
    else byKey.set(key, [name, value]);
  }
  const headers: Record<string, string> = {};
  for (const key of [...byKey.keys()].sort()) {
    const [name, value] = byKey.get(key)!;
    headers[name] = value;
  }
  return headers;
}
