/**
 * CouchDB 1.6's HTTP proxy handler (couch_httpd_proxy): an `[httpd_global_handlers]` entry
 *
 *   _fti = {couch_httpd_proxy, handle_proxy_req, <<"http://127.0.0.1:5985">>}
 *
 * forwards `/_fti/some/path?q=1` to `http://127.0.0.1:5985/some/path?q=1`: method, headers (all
 * of them, Host included, as the client sent them) and body go out as they came; status, headers
 * and body come back, the headers naming a URL of the upstream (Location, Content-Location, Uri,
 * Destination) rewritten to the proxy's path. Bodies stream both ways with backpressure.
 *
 * The entries are read from the configuration and followed as it changes (`syncProxies`), so a
 * proxy is mounted, moved or removed through `/_config` without a restart.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CouchError } from '../errors.js';
import { absoluteUrl } from '../api/common.js';
import { parseErlangTerm } from '../config/erlang-term.js';
import type { RelayReply } from '../api/reply.js';
import type { Handler } from '../api/route.js';
import type { Request } from '../api/request.js';
import type { Services } from '../api/services.js';
import type { Config } from '../config/config.js';

export const GLOBAL_HANDLERS_SECTION = 'httpd_global_handlers';

/**
 * The proxies an `[httpd_global_handlers]` section defines: name → upstream URL. Entries naming
 * other modules (Settee's handlers are fixed in code) and the root entry `/` are not proxies.
 */
export function parseProxies(section: Readonly<Record<string, string>>): Map<string, string> {
  const proxies = new Map<string, string>();
  for (const [name, spec] of Object.entries(section)) {
    if (name === '' || name.includes('/')) continue;
    const term = parseErlangTerm(spec);
    if (term?.t !== 'tuple' || term.items.length !== 3) continue;
    const [mod, fun, target] = term.items;
    if (mod?.t === 'text' && mod.v === 'couch_httpd_proxy' && fun?.t === 'text' && fun.v === 'handle_proxy_req' && target?.t === 'text') {
      proxies.set(name, target.v);
    }
  }
  return proxies;
}

/** Where mounted handlers go: the router's table of handlers defined by configuration. */
export interface MountTable {
  replaceMounted(handlers: ReadonlyMap<string, Handler>): void;
}

/**
 * Mounts the proxies `config` defines on `table` and keeps them in step with its changes.
 * Answers a function that stops following the configuration.
 */
export function syncProxies(config: Config, table: MountTable): () => void {
  const mount = () => {
    const handlers = new Map<string, Handler>();
    for (const [name, target] of parseProxies(config.section(GLOBAL_HANDLERS_SECTION))) handlers.set(name, proxyHandler(target));
    table.replaceMounted(handlers);
  };
  mount();
  return config.onChange((section) => {
    if (section === GLOBAL_HANDLERS_SECTION) mount();
  });
}

/** The handler of one proxy entry; it checks no access itself (couch_httpd_proxy does not). */
export function proxyHandler(target: string): Handler {
  return (req, _params, svc) => forward(req, target, svc);
}

/** Methods whose body CouchDB never forwards. */
const BODILESS = new Set(['GET', 'HEAD', 'DELETE']);

/**
 * Headers about one connection, not the message: each side's connection is its own (CouchDB
 * passes them on; Settee lets Node manage both connections).
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive']);

/** Response headers holding a URL that may point back into the upstream. */
const URL_HEADERS = new Set(['location', 'content-location', 'uri', 'destination']);

async function forward(req: Request, target: string, svc: Services): Promise<RelayReply> {
  // The prefix is the first path segment as sent (CouchDB's handler key is the raw one).
  const prefix = `/${req.rawSegments[0] ?? ''}`;
  const sourceUrl = absoluteUrl(req, prefix, svc.config);
  // A target starting with `/` is a path on this server.
  const base = target.startsWith('/') ? absoluteUrl(req, target, svc.config) : target;
  const dest = parseUrl(base);
  if (!dest) throw new CouchError(500, 'error', `invalid_uri: ${base}`);
  const upstreamUrl = parseUrl(upstreamFor(base, req.url.slice(prefix.length)))!;

  const bodiless = BODILESS.has(req.method);
  const headers: string[] = [];
  let hasHost = false;
  let hasAuthorization = false;
  for (const [name, value] of req.headerList()) {
    const lower = name.toLowerCase();
    if (bodiless && (lower === 'content-length' || lower === 'transfer-encoding')) continue;
    if (HOP_BY_HOP.has(lower)) continue;
    if (lower === 'host') hasHost = true;
    if (lower === 'authorization') hasAuthorization = true;
    headers.push(name, value);
  }
  if (!hasHost) headers.push('Host', dest.authority);
  if (dest.userinfo && !hasAuthorization) {
    headers.push('Authorization', `Basic ${Buffer.from(decodeURIComponent(dest.userinfo)).toString('base64')}`);
  }

  const send = dest.protocol === 'https' ? httpsRequest : httpRequest;
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    let out: ClientRequest;
    try {
      out = send({
        protocol: `${dest.protocol}:`,
        host: dest.host.replace(/^\[(.*)\]$/, '$1'),
        port: dest.port,
        method: req.method,
        path: upstreamUrl.path,
        headers,
      });
    } catch (err) {
      reject(new CouchError(500, 'error', err instanceof Error ? err.message : String(err)));
      return;
    }
    // The client leaving abandons the exchange upstream too.
    const onGone = () => out.destroy();
    req.signal.addEventListener('abort', onGone, { once: true });
    out.once('close', () => req.signal.removeEventListener('abort', onGone));
    let connected = false;
    out.once('socket', (socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => { connected = true; });
    });
    out.once('response', resolve);
    // Later failures (after the answer began) end the body's stream instead.
    out.on('error', (err: NodeJS.ErrnoException) => reject(req.signal.aborted ? new CouchError(500, 'error', 'client_gone') : upstreamError(err, connected)));
    if (bodiless || req.raw.readableEnded) {
      out.end();
    } else {
      req.raw.pipe(out);
    }
  });

  // Read through the body's iterator; a failure there is the writer's to see, not an uncaught one.
  upstream.on('error', () => undefined);
  const source = parseUrl(sourceUrl)!;
  const replyHeaders: [string, string][] = [];
  const raw = upstream.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (HOP_BY_HOP.has(name.toLowerCase())) continue;
    replyHeaders.push([name, URL_HEADERS.has(name.toLowerCase()) ? rewriteLocation(value, source, dest) : value]);
  }
  return { kind: 'relay', status: upstream.statusCode ?? 502, headers: replyHeaders, body: upstream };
}

/**
 * The upstream URL of a request: the target, then what follows the proxy's prefix in the
 * request's path and query string (`/_p` → the target itself; `/_p/a?q` and `/_p?q` → below it).
 */
export function upstreamFor(base: string, remainder: string): string {
  if (remainder === '') return base;
  const trimmed = base.replace(/[\s/]+$/, '');
  return `${trimmed}/${remainder.startsWith('/') ? remainder.slice(1) : remainder}`;
}

/** An absolute http(s) URL, split without normalising its path. */
export interface ParsedUrl {
  protocol: 'http' | 'https';
  userinfo: string | undefined;
  /** Lower-cased; IPv6 addresses keep their brackets. */
  host: string;
  port: number;
  /** `host[:port]` as written. */
  authority: string;
  /** Path, query and fragment as written; `/` when empty. */
  path: string;
}

export function parseUrl(url: string): ParsedUrl | undefined {
  const m = /^(https?):\/\/([^/?#]*)(.*)$/is.exec(url.trim());
  if (!m) return undefined;
  const protocol = m[1]!.toLowerCase() as 'http' | 'https';
  let authority = m[2]!;
  let userinfo: string | undefined;
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    userinfo = authority.slice(0, at);
    authority = authority.slice(at + 1);
  }
  const hp = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(authority);
  if (!hp || hp[1] === '') return undefined;
  const port = hp[2] ? Number(hp[2]) : protocol === 'https' ? 443 : 80;
  const rest = m[3]!;
  return { protocol, userinfo, host: hp[1]!.toLowerCase(), port, authority, path: rest.startsWith('/') ? rest : `/${rest}` };
}

/**
 * A URL header of the upstream's reply as the client should see it (couch_httpd_proxy's
 * rewrite_location): a URL on the upstream's host, port and scheme moves under the proxy's path;
 * a URL elsewhere stays; a relative one is taken relative to the proxy's path.
 */
export function rewriteLocation(value: string, source: ParsedUrl, dest: ParsedUrl): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim())) {
    const location = parseUrl(value);
    if (!location || location.protocol !== dest.protocol || location.host !== dest.host || location.port !== dest.port) return value;
    // Where the target has a path of its own, a URL below it maps back to the same place under
    // the proxy (CouchDB appends the whole path, which names another upstream URL).
    const basePath = dest.path.replace(/[?#].*$/s, '').replace(/\/+$/, '');
    let path = location.path;
    if (basePath !== '' && path.startsWith(basePath) && /^($|[/?#])/.test(path.slice(basePath.length))) path = path.slice(basePath.length);
    return urlOf(source, joinPath(source.path, path));
  }
  return urlOf(source, joinPath(source.path, value));
}

function joinPath(src: string, dst: string): string {
  return `${src.endsWith('/') ? src.slice(0, -1) : src}/${dst.startsWith('/') ? dst.slice(1) : dst}`;
}

function urlOf(at: ParsedUrl, path: string): string {
  const defaultPort = (at.protocol === 'http' && at.port === 80) || (at.protocol === 'https' && at.port === 443);
  return `${at.protocol}://${at.host}${defaultPort ? '' : `:${at.port}`}${path.startsWith('/') ? path : `/${path}`}`;
}

/**
 * CouchDB's answer when the upstream fails before answering: a 500 `{"error": "error"}` whose
 * reason is the client library's, as Erlang prints it (`{conn_failed,{error,econnrefused}}`).
 */
function upstreamError(err: NodeJS.ErrnoException, connected: boolean): CouchError {
  const code = err.code === 'ENOTFOUND' ? 'nxdomain' : (err.code ?? 'unknown').toLowerCase();
  return new CouchError(500, 'error', connected ? code : `{conn_failed,{error,${code}}}`);
}
