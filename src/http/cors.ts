/**
 * CORS as CouchDB 1.6 configures it (couch_httpd_cors): on when `[httpd] enable_cors` is true,
 * for the origins listed in `[cors] origins` (`*` for any), with `credentials` (cookies and
 * Authorization from the browser), `methods` and `headers` widening the defaults. A
 * `[cors:<host>]` section (the Host, or forwarded host, without its port) overrides `[cors]` for
 * requests addressed to that host, key by key.
 *
 * Any OPTIONS request from an allowed origin is a preflight, answered here with 204, unless it
 * asks for a method or headers not allowed: that one goes on to its handler, as other requests
 * from an allowed origin do, and gets the Allow-Origin and Expose-Headers headers on its reply,
 * whatever it is. Requests from origins not allowed get no CORS headers (the browser then
 * withholds the reply); the server still answers them.
 */
import { LayeredSection, type Config } from '../config/config.js';
import type { HeaderMap } from '../api/reply.js';
import type { Request } from '../api/request.js';
import { HTTPD_SECTIONS } from '../couchdb-names.js';
import { addressedHost } from '../api/common.js';
import { hostAndPort } from './vhosts.js';

const DEFAULT_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT', 'COPY', 'OPTIONS'];
const DEFAULT_HEADERS = ['accept', 'accept-language', 'authorization', 'content-type', 'expires', 'last-modified', 'pragma',
  'origin', 'content-length', 'if-match', 'destination', 'x-requested-with', 'x-http-method-override', 'content-range',
  'x-couchdb-www-authenticate', 'x-couch-full-commit', 'x-couch-persist'];
const EXPOSED_HEADERS = 'Cache-Control, Content-Type, ETag, Server, Location, X-Couch-Id, X-Couch-Update-NewRev, Accept-Ranges, Content-Range, X-Couch-Request-ID, X-CouchDB-Body-Time';
// couch_httpd_cors's CORS_DEFAULT_MAX_AGE.
const MAX_AGE = 12345;

const list = (value: string | undefined): string[] =>
  (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');

export type CorsOutcome =
  | { kind: 'none' }
  | { kind: 'preflight'; headers: HeaderMap }
  | { kind: 'actual'; headers: HeaderMap };

export function corsFor(req: Request, config: Config): CorsOutcome {
  if (!config.layered(HTTPD_SECTIONS).getBool('enable_cors', false)) return { kind: 'none' };
  const origin = req.header('origin');
  if (!origin) return { kind: 'none' };
  const settings = corsSettings(req, config);
  const origins = list(settings.get('origins')).map((o) => o.toLowerCase().replace(/\/$/, ''));
  const anyOrigin = origins.includes('*');
  if (!anyOrigin && !origins.includes(origin.toLowerCase())) return { kind: 'none' };
  // couch_httpd_cors:make_cors_header names the origin, also when any is allowed (never `*`);
  // allow_credentials refuses credentials only to an Origin that is literally `*`.
  const credentials = origin !== '*' && settings.getBool('credentials', false);
  // Vary (which CouchDB does not send) keeps shared caches from serving one origin's answer to another.
  const base: HeaderMap = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
  if (credentials) base['Access-Control-Allow-Credentials'] = 'true';

  const actual: CorsOutcome = { kind: 'actual', headers: { ...base, 'Access-Control-Expose-Headers': EXPOSED_HEADERS } };
  if (req.method !== 'OPTIONS') return actual;
  const configuredMethods = list(settings.get('methods')).map((m) => m.toUpperCase());
  const methods = configuredMethods.length > 0 ? configuredMethods : DEFAULT_METHODS;
  const preflight: HeaderMap = {
    ...base,
    'Access-Control-Max-Age': maxAge(settings.get('max_age')),
    'Access-Control-Allow-Methods': methods.join(', '),
  };
  // couch_httpd_cors:handle_preflight_request: an OPTIONS without a requested method is still
  // answered as a preflight; one asking for a method or headers not allowed goes on to its
  // handler, whose reply carries the CORS headers of any request from an allowed origin.
  const requestedMethod = req.header('access-control-request-method');
  if (requestedMethod === undefined) return { kind: 'preflight', headers: preflight };
  if (!methods.includes(requestedMethod.trim().toUpperCase())) return actual;
  const allowedHeaders = new Set([...DEFAULT_HEADERS, ...list(settings.get('headers')).map((h) => h.toLowerCase())]);
  const requestedHeaders = req.header('access-control-request-headers');
  if (list(requestedHeaders).some((h) => !allowedHeaders.has(h.toLowerCase()))) return actual;
  // The headers allowed are those asked for, as they were asked.
  return { kind: 'preflight', headers: { ...preflight, 'Access-Control-Allow-Headers': requestedHeaders ?? '' } };
}

/**
 * The `[cors]` settings as they apply to this request: from `[cors:<host>]` when that section has
 * the key (couch_httpd_cors:cors_config; the host as couch_httpd_vhost:host reads it, without a port).
 */
function corsSettings(req: Request, config: Config): LayeredSection {
  const { host } = hostAndPort(addressedHost((name) => req.header(name), config) ?? '');
  return new LayeredSection(config, [`cors:${host}`, 'cors']);
}

function maxAge(value: string | undefined): string {
  const trimmed = value?.trim();
  return trimmed !== undefined && /^\d+$/.test(trimmed) ? trimmed : String(MAX_AGE);
}
