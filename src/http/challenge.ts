/**
 * What a 401 carries besides its body, as CouchDB 1.6 decides it (couch_httpd:error_headers):
 *
 * - `X-CouchDB-WWW-Authenticate: <scheme>` from the client is echoed as `WWW-Authenticate`, so
 *   a browser app can ask for `Cookie` and never see the Basic login popup;
 * - else `[httpd] WWW-Authenticate`, when configured, is sent;
 * - else, with `[couch_httpd_auth] authentication_redirect` set (or `[chttpd_auth]`'s): under `require_valid_user` the
 *   Basic challenge; otherwise a client that takes HTML but not JSON is redirected (302) to the
 *   login page with `?return=<path>&reason=<reason>`.
 */
import type { Config } from '../config/config.js';
import type { CouchError } from '../errors.js';
import type { HeaderMap } from '../api/reply.js';
import type { Request } from '../api/request.js';
import { absoluteUrl, couchUrlEncode } from '../api/common.js';
import { AUTH_SECTIONS, HEADER_WWW_AUTHENTICATE, HTTPD_SECTIONS } from '../couchdb-names.js';
import { requireValidUser } from '../auth/authenticator.js';

export function challengeHeaders(req: Request, err: CouchError, config: Config): { status?: number; headers: HeaderMap } | undefined {
  const requested = req.header(HEADER_WWW_AUTHENTICATE);
  if (requested) return { headers: { 'WWW-Authenticate': requested } };
  const configured = config.layered(HTTPD_SECTIONS).get('WWW-Authenticate');
  if (configured) return { headers: { 'WWW-Authenticate': configured } };
  if (err.error !== 'unauthorized') return undefined;
  const redirect = config.layered(AUTH_SECTIONS).get('authentication_redirect');
  if (!redirect) return undefined;
  if (requireValidUser(config)) {
    return { headers: { 'WWW-Authenticate': 'Basic realm="server"' } };
  }
  if (req.accepts('application/json') || !req.accepts('text/html')) return undefined;
  const location = `${redirect}?return=${couchUrlEncode(decodedPath(req.rawPath))}&reason=${couchUrlEncode(err.reason)}`;
  return { status: 302, headers: { Location: absoluteUrl(req, location, config) } };
}

/** The path as decoded text (kept as sent where its escapes are not UTF-8). */
function decodedPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
