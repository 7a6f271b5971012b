/**
 * The HTTP transport: node:http in, router, handler, Reply out. Negotiates JSON vs text/plain as
 * CouchDB does, adds CouchDB's standard headers, pumps streaming replies with backpressure and
 * turns every failure into a CouchDB-shaped error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Request } from '../api/request.js';
import type { HeaderMap, RelayReply, Reply } from '../api/reply.js';
import type { Route } from '../api/route.js';
import type { Services } from '../api/services.js';
import { badRequest, toCouchError, type CouchError } from '../errors.js';
import { HEADER_BODY_TIME, HEADER_REQUEST_ID, HTTPD_SECTIONS, SERVER_HEADER } from '../couchdb-names.js';
import { addressedHost } from '../api/common.js';
import { Router } from './router.js';
import { authorize, openAsMember } from '../api/authorize.js';
import { challengeHeaders } from './challenge.js';
import { corsFor } from './cors.js';
import { parseGlobals, parseVhostRules, routeVhost, type VhostRoute, type VhostRule } from './vhosts.js';
import type { Config } from '../config/config.js';
import { syncProxies } from './proxy.js';

export interface RequestObserver {
  (method: string, status: number, elapsedMs: number, req: Request): void;
}

export class HttpServer {
  private readonly router: Router;
  private readonly server: Server;
  /** The HTTPS listener, when TLS is configured: the same API on another port. */
  private tlsServer: Server | undefined;
  private readonly observers: RequestObserver[] = [];
  private readonly arrivalObservers: ((method: string) => void)[] = [];
  /**
   * What the transport takes from the configuration: `[vhosts]` rules and global handlers
   * (parsed once, and again when they change), whether `+` in a path is a space (`[chttpd]
   * decode_plus_to_space`), and the `[httpd_global_handlers]` proxies mounted
   * on the router. A restart brings a new configuration, which `follow` binds in its place.
   */
  private bound: { config: Config; vhosts: VhostRule[]; vhostGlobals: string[]; plusIsSpace: boolean; release: () => void } | undefined;

  /**
   * `services` are the server's current ones; `restarting`, a restart under way, which a new
   * request waits for rather than reach services being closed.
   */
  constructor(
    routes: readonly Route[],
    private readonly services: () => Services,
    private readonly restarting: () => Promise<void> | undefined = () => undefined,
  ) {
    this.router = new Router(routes);
    this.server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0 }, (req, res) => {
      this.handle(req, res, false).catch((err: unknown) => this.lastResort(res, err));
    });
    this.server.on('clientError', onClientError);
  }

  /** Serves the same API over TLS with this certificate and key (PEM). */
  listenTls(port: number, host: string, tls: { cert: Buffer; key: Buffer }): Promise<AddressInfo> {
    const server = createTlsServer({ ...tls, keepAliveTimeout: 60_000, requestTimeout: 0 }, (req, res) => {
      this.handle(req, res, true).catch((err: unknown) => this.lastResort(res, err));
    });
    server.on('clientError', onClientError);
    this.tlsServer = server;
    return listenOn(server, port, host);
  }

  onRequest(observer: RequestObserver): void {
    this.observers.push(observer);
  }

  /** Calls `observer` with each request's method as it arrives, before it is handled. */
  onArrival(observer: (method: string) => void): void {
    this.arrivalObservers.push(observer);
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return listenOn(this.server, port, host);
  }

  async close(): Promise<void> {
    const closing = [this.server, this.tlsServer].map((server) => new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
    await Promise.all(closing);
  }

  /**
   * Routes an authenticated request to its handler, checking the route's access rule. Also
   * reached through `Services.dispatch` by `_rewrite`, which routes a request again under its
   * rewritten URL (and the rewritten route's access rule).
   */
  async dispatch(req: Request): Promise<Reply> {
    if (req.badQuery) throw badRequest('Invalid URL encoding in query string');
    const services = this.services();
    const resolved = this.router.resolve(req.method, req.rawSegments, this.follow(services.config).plusIsSpace);
    if (resolved.jsonBeforeAccess) {
      // The database is opened, as its member, before the content type is looked at.
      await openAsMember(req, resolved, services);
      req.requireJsonContentType();
    }
    return (await authorize(req, resolved, services)) ?? resolved.handler(req, resolved.params, services);
  }

  private async handle(raw: IncomingMessage, res: ServerResponse, secure: boolean): Promise<void> {
    const started = performance.now();
    const req = new Request(raw, secure, undefined, this.virtualHost(raw));
    res.once('close', () => req.clientGone());
    for (const observer of this.arrivalObservers) observer(req.method);
    let status = 500;
    try {
      if (req.badQuery) throw badRequest('Invalid URL encoding in query string');
      const restarting = this.restarting();
      if (restarting) await restarting.catch(() => undefined);
      const services = this.services();
      const cors = corsFor(req, services.config);
      if (cors.kind === 'preflight') {
        status = 204;
        res.writeHead(204, { ...standardHeaders(req), ...cors.headers, 'Content-Length': 0 });
        res.end();
        return;
      }
      if (cors.kind === 'actual') req.addReplyHeaders(cors.headers);
      const auth = await services.auth.authenticate(req);
      req.userCtx = auth.ctx;
      req.authMethod = auth.method;
      if (auth.setCookie) req.addReplyHeaders({ 'Set-Cookie': auth.setCookie });
      const reply = await this.dispatch(req);
      status = reply.status;
      await this.write(req, res, reply);
    } catch (err) {
      const error = toCouchError(err);
      status = error.status;
      if (error.status >= 500) this.services().log.error(`${req.method} ${raw.url} failed: ${describe(err)}`);
      this.writeError(req, res, error);
    } finally {
      req.finished();
      // Bodies nobody read (errors before reading) must be drained for keep-alive to work.
      if (!raw.complete) raw.resume();
      const elapsed = performance.now() - started;
      for (const observer of this.observers) {
        try {
          observer(req.method, status, elapsed, req);
        } catch (err) {
          // An observer (access log, stats) must never take the server down with it.
          this.services().log.error(`request observer failed: ${describe(err)}`);
        }
      }
    }
  }

  /** Binds the transport to `config` (see `bound`), releasing a previous one. */
  private follow(config: Config): NonNullable<HttpServer['bound']> {
    if (this.bound?.config === config) return this.bound;
    this.bound?.release();
    const readVhosts = () => {
      bound.vhosts = parseVhostRules(config.section('vhosts'));
      bound.vhostGlobals = parseGlobals(config.layered(HTTPD_SECTIONS).get('vhost_global_handlers'));
    };
    const readPlus = () => {
      bound.plusIsSpace = config.getBool('chttpd', 'decode_plus_to_space', true);
    };
    const bound = { config, vhosts: [] as VhostRule[], vhostGlobals: [] as string[], plusIsSpace: true, release: () => {} };
    readVhosts();
    readPlus();
    const unmountProxies = syncProxies(config, this.router);
    const unwatch = config.onChange((section, key) => {
      if (section === 'vhosts' || (config.layered(HTTPD_SECTIONS).sections.includes(section) && key === 'vhost_global_handlers')) readVhosts();
      if (section === 'chttpd' && key === 'decode_plus_to_space') readPlus();
    });
    bound.release = () => {
      unmountProxies();
      unwatch();
    };
    this.bound = bound;
    return bound;
  }

  /** Where `[vhosts]` routes a request, if a rule matches its host. */
  private virtualHost(raw: IncomingMessage): VhostRoute | undefined {
    const config = this.services().config;
    const { vhosts, vhostGlobals } = this.follow(config);
    if (vhosts.length === 0) return undefined;
    const header = (name: string): string | undefined => {
      const value = raw.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    };
    const host = addressedHost(header, config) ?? '';
    return routeVhost(vhosts, vhostGlobals, host, raw.url ?? '/');
  }

  /** Anything that escaped handle(): log it and drop the connection rather than the process. */
  private lastResort(res: ServerResponse, err: unknown): void {
    try {
      this.services().log.error(`unhandled request failure: ${describe(err)}`);
    } catch {
      // Nothing left to report to.
    }
    if (!res.destroyed) res.destroy();
  }

  /**
   * The JSONP callback a request names (`?callback=`), when `[httpd] allow_jsonp` is on.
   * CouchDB allows only letters, digits, `.`, `_`, `[` and `]` in it.
   */
  private jsonpCallback(req: Request): string | undefined {
    const callback = req.string('callback');
    if (callback === undefined || callback === '') return undefined;
    if (!this.services().config.layered(HTTPD_SECTIONS).getBool('allow_jsonp', false)) return undefined;
    if (!/^[A-Za-z0-9._[\]]+$/.test(callback)) throw badRequest('invalid_callback');
    return callback;
  }

  private async write(req: Request, res: ServerResponse, reply: Reply): Promise<void> {
    if (reply.kind === 'relay') return relay(req, res, reply);
    const head = sentAsHead(req);
    const jsonp = reply.kind === 'raw' || (reply.kind === 'stream' && reply.contentType) ? undefined : this.jsonpCallback(req);
    if (reply.kind === 'json') {
      const json = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      const text = jsonp ? `/* CouchDB */${jsonp}(${json});\n` : `${json}\n`;
      res.writeHead(reply.status, {
        ...standardHeaders(req),
        ...req.extraHeaders,
        'Content-Type': jsonp ? JSONP_CONTENT_TYPE : jsonContentType(req),
        'Content-Length': Buffer.byteLength(text),
        ...reply.headers,
      });
      res.end(head ? undefined : text);
      return;
    }
    if (reply.kind === 'raw') {
      const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
      res.writeHead(reply.status, {
        ...standardHeaders(req),
        ...req.extraHeaders,
        'Content-Type': reply.contentType,
        'Content-Length': body.byteLength,
        ...reply.headers,
      });
      res.end(head ? undefined : body);
      return;
    }
    const headers: HeaderMap = {
      ...standardHeaders(req),
      ...req.extraHeaders,
      'Content-Type': jsonp ? JSONP_CONTENT_TYPE : reply.contentType ?? jsonContentType(req),
      ...reply.headers,
    };
    if (head) {
      // mochiweb answers HEAD of a chunked response (one whose length is not known in advance)
      // with Content-Length: 0 ("what Google does").
      const sized = Object.keys(headers).some((name) => name.toLowerCase() === 'content-length');
      res.writeHead(reply.status, sized ? headers : { ...headers, 'Content-Length': 0 });
      res.end();
      return;
    }
    // Chunks produced in one turn of the event loop go out in one write. A reply complete within
    // its first turn (most) is sent whole with a Content-Length; a longer one goes out chunked,
    // its headers on the next turn even if no chunk is ready (live feeds), then chunks gathered
    // per turn or per COALESCE_BYTES.
    const pending: (string | Uint8Array)[] = [];
    let pendingBytes = 0;
    let started = false;
    const flush = (): Promise<boolean> | boolean => {
      if (!started) {
        started = true;
        res.writeHead(reply.status, headers);
        // writeHead only queues the headers: send them now even if no chunk is ready.
        if (pending.length === 0) res.flushHeaders();
      }
      if (pending.length === 0) return true;
      res.cork();
      let ok = true;
      for (const chunk of pending.splice(0)) ok = !res.destroyed && res.write(chunk) && ok;
      pendingBytes = 0;
      res.uncork();
      return ok || drained(res);
    };
    let scheduled: NodeJS.Immediate | undefined = setImmediate(() => { scheduled = undefined; void flush(); });
    try {
      if (jsonp) pending.push(`/* CouchDB */${jsonp}(`);
      const body = jsonp && reply.finalNewlineEndsResponse ? withoutFinalNewline(reply.body) : reply.body;
      for await (const chunk of body) {
        if (res.destroyed) break;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= COALESCE_BYTES) {
          if (!(await flush())) break;
        } else {
          scheduled ??= setImmediate(() => { scheduled = undefined; void flush(); });
        }
      }
      if (scheduled) clearImmediate(scheduled);
      if (jsonp) pending.push(');\n');
      if (res.destroyed) return;
      if (!started) {
        const body = pending.every((c) => typeof c === 'string') ? pending.join('') : Buffer.concat(pending.map(toBytes));
        res.writeHead(reply.status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      // The last chunks and the chunked-encoding terminator in one write.
      res.cork();
      const last = pending.pop();
      for (const chunk of pending) res.write(chunk);
      res.end(last);
      res.uncork();
    } catch (err) {
      if (scheduled) clearImmediate(scheduled);
      const error = toCouchError(err);
      // A stream cut by its database's deletion (404) is no fault of the server's.
      if (error.status >= 500) this.services().log.error(`stream ${req.method} ${req.rawPath} failed: ${describe(err)}`);
      else this.services().log.info(`stream ${req.method} ${req.rawPath} ended: ${error.error}: ${error.reason}`);
      if (!started && !res.headersSent) {
        // Nothing sent yet: the failure can still be an honest error reply.
        this.writeError(req, res, error);
        return;
      }
      // Headers are gone: the only honest signal left is an unterminated chunked body.
      res.destroy();
    }
  }

  private writeError(req: Request, res: ServerResponse, err: CouchError): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const json = JSON.stringify({ error: err.error, reason: err.reason });
    // Errors are wrapped in a valid JSONP callback too, as CouchDB's send_error does.
    let jsonp: string | undefined;
    try {
      jsonp = this.jsonpCallback(req);
    } catch {
      jsonp = undefined;
    }
    const text = jsonp ? `/* CouchDB */${jsonp}(${json});\n` : `${json}\n`;
    const challenge = err.status === 401 ? challengeHeaders(req, err, this.services().config) : undefined;
    res.writeHead(challenge?.status ?? err.status, {
      ...standardHeaders(req),
      ...req.extraHeaders,
      'Content-Type': jsonp ? JSONP_CONTENT_TYPE : jsonContentType(req),
      'Content-Length': Buffer.byteLength(text),
      ...err.headers,
      ...challenge?.headers,
    });
    res.end(sentAsHead(req) ? undefined : text);
  }
}

/**
 * Writes a relayed reply with its own headers and framing, the body with backpressure; the
 * body's iterator is closed however the writing ends, so an upstream exchange is never left open.
 */
async function relay(req: Request, res: ServerResponse, reply: RelayReply): Promise<void> {
  const headers: string[] = [];
  let hasServer = false;
  for (const [name, value] of reply.headers) {
    const lower = name.toLowerCase();
    if (lower === 'server') hasServer = true;
    // An HTTP/1.0 client cannot read chunks: the body then ends with the connection.
    if (lower === 'transfer-encoding' && req.raw.httpVersion === '1.0') continue;
    headers.push(name, value);
  }
  if (!hasServer) headers.push('Server', SERVER_HEADER);
  for (const [name, value] of Object.entries(req.extraHeaders ?? {})) {
    for (const one of Array.isArray(value) ? value : [value]) headers.push(name, String(one));
  }
  const body = reply.body[Symbol.asyncIterator]();
  try {
    res.writeHead(reply.status, headers);
    if (!sentAsHead(req)) {
      for (let next = await body.next(); !next.done; next = await body.next()) {
        if (res.destroyed || (!res.write(next.value) && !(await drained(res)))) return;
      }
    }
    res.end();
  } finally {
    await body.return?.();
  }
}

/**
 * Whether the request came as a HEAD, whose answer has no body. Mochiweb strips bodies by the
 * method on the wire, so a POST that X-HTTP-Method-Override turns into a HEAD still gets one.
 */
function sentAsHead(req: Request): boolean {
  return req.raw.method === 'HEAD';
}

function onClientError(_err: Error, socket: import('node:stream').Duplex): void {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
}

function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

function standardHeaders(req: Request): HeaderMap {
  return {
    Server: SERVER_HEADER,
    'Cache-Control': 'must-revalidate',
    [HEADER_REQUEST_ID]: req.requestId,
    [HEADER_BODY_TIME]: req.bodyTime,
  };
}

/**
 * CouchDB 1.6 answers JSON as application/json only to clients whose Accept header holds that
 * exact token, the header cut at every comma and space (couch_httpd:negotiate_content_type);
 * wildcards, parameters attached to it (`application/json;q=0.5`) and other spellings of it do
 * not count. Others get text/plain.
 */
export function jsonContentType(req: Request): string {
  const accept = req.header('accept') ?? '';
  const named = accept.split(/[, ]/).includes('application/json');
  return named ? 'application/json' : 'text/plain; charset=utf-8';
}

/** Bytes of streamed chunks gathered before they are written without waiting for the next turn. */
const COALESCE_BYTES = 16 * 1024;
/**
 * A JSONP answer's type, as couch_httpd:negotiate_content_type gives it in CouchDB 1.6 (CouchDB 2
 * switched to application/javascript).
 */
const JSONP_CONTENT_TYPE = 'text/javascript';

/**
 * A stream without its last byte when that is a newline: each chunk's trailing `\n` is held back
 * until another chunk follows it.
 */
async function* withoutFinalNewline(body: AsyncIterable<string | Uint8Array>): AsyncIterable<string | Uint8Array> {
  let heldNewline = false;
  for await (const chunk of body) {
    if (chunk.length === 0) continue;
    if (heldNewline) yield '\n';
    const last = typeof chunk === 'string' ? chunk.charCodeAt(chunk.length - 1) : chunk[chunk.length - 1];
    heldNewline = last === 0x0a;
    if (!heldNewline) yield chunk;
    else yield typeof chunk === 'string' ? chunk.slice(0, -1) : chunk.subarray(0, -1);
  }
}

function toBytes(chunk: string | Uint8Array): Uint8Array {
  return typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
}

/**
 * Resolves once a response's buffered output has drained (true) or the response closed (false):
 * a slow client holds back the producer instead of growing server memory.
 */
function drained(res: ServerResponse): Promise<boolean> | boolean {
  if (res.destroyed || res.writableEnded) return false;
  if (!res.writableNeedDrain) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/** An error as a log line wants it: its stack when it has one. */
function describe(err: unknown): string {
  return err instanceof Error && err.stack ? err.stack : String(err);
}
