/**
 * The HTTP transport: node:http in, router, handler, Reply out. Negotiates JSON vs text/plain as
 * CouchDB does, adds CouchDB's standard headers, pumps streaming replies with backpressure and
 * turns every failure into a CouchDB-shaped error.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Request } from '../api/request.js';
import type { HeaderMap, Reply } from '../api/reply.js';
import type { Route } from '../api/route.js';
import type { Services } from '../api/services.js';
import { badRequest, toCouchError, type CouchError } from '../errors.js';
import { SERVER_HEADER } from '../couchdb-names.js';
import { Router } from './router.js';

export interface RequestObserver {
  (method: string, status: number, elapsedMs: number, req: Request): void;
}

export class HttpServer {
  private readonly router: Router;
  private readonly server: Server;
  private readonly observers: RequestObserver[] = [];

  constructor(routes: readonly Route[], private readonly services: () => Services) {
    this.router = new Router(routes);
    this.server = createServer({ keepAliveTimeout: 60_000, requestTimeout: 0 }, (req, res) => {
      this.handle(req, res).catch((err: unknown) => this.lastResort(res, err));
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    });
  }

  onRequest(observer: RequestObserver): void {
    this.observers.push(observer);
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /**
   * Routes a request to its handler. Also reached through `Services.dispatch` by `_rewrite`,
   * which routes a request again under its rewritten URL.
   */
  async dispatch(req: Request): Promise<Reply> {
    if (req.badQuery) throw badRequest('Invalid URL encoding in query string');
    const { handler, params } = this.router.resolve(req.method, req.rawSegments);
    return handler(req, params, this.services());
  }

  private async handle(raw: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const req = new Request(raw);
    res.once('close', () => req.clientGone());
    let status = 500;
    try {
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
    if (!this.services().config.getBool('httpd', 'allow_jsonp', false)) return undefined;
    if (!/^[A-Za-z0-9._[\]]+$/.test(callback)) throw badRequest('invalid_callback');
    return callback;
  }

  private async write(req: Request, res: ServerResponse, reply: Reply): Promise<void> {
    const head = req.method === 'HEAD';
    const jsonp = reply.kind === 'raw' || (reply.kind === 'stream' && reply.contentType) ? undefined : this.jsonpCallback(req);
    if (reply.kind === 'json') {
      const json = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      const text = jsonp ? `/* CouchDB */${jsonp}(${json});\n` : `${json}\n`;
      res.writeHead(reply.status, {
        ...standardHeaders(),
        'Content-Type': jsonp ? 'application/javascript' : jsonContentType(req),
        'Content-Length': Buffer.byteLength(text),
        ...reply.headers,
      });
      res.end(head ? undefined : text);
      return;
    }
    if (reply.kind === 'raw') {
      const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
      res.writeHead(reply.status, {
        ...standardHeaders(),
        'Content-Type': reply.contentType,
        'Content-Length': body.byteLength,
        ...reply.headers,
      });
      res.end(head ? undefined : body);
      return;
    }
    res.writeHead(reply.status, {
      ...standardHeaders(),
      'Content-Type': jsonp ? 'application/javascript' : reply.contentType ?? jsonContentType(req),
      ...reply.headers,
    });
    if (head) {
      res.end();
      return;
    }
    res.flushHeaders();
    try {
      if (jsonp) res.write(`/* CouchDB */${jsonp}(`);
      for await (const chunk of reply.body) {
        if (!(await writeChunk(res, chunk))) break;
      }
      res.end(jsonp ? ');\n' : undefined);
    } catch (err) {
      // Headers are gone: the only honest signal left is an unterminated chunked body.
      this.services().log.error(`stream ${req.method} ${req.rawPath} failed: ${describe(err)}`);
      res.destroy();
    }
  }

  private writeError(req: Request, res: ServerResponse, err: CouchError): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const text = JSON.stringify({ error: err.error, reason: err.reason }) + '\n';
    res.writeHead(err.status, {
      ...standardHeaders(),
      'Content-Type': jsonContentType(req),
      'Content-Length': Buffer.byteLength(text),
      ...err.headers,
    });
    res.end(req.method === 'HEAD' ? undefined : text);
  }
}

function standardHeaders(): HeaderMap {
  return { Server: SERVER_HEADER, 'Cache-Control': 'must-revalidate' };
}

/**
 * CouchDB answers JSON only to clients that name application/json in Accept (wildcards do not
 * count); others get text/plain.
 */
export function jsonContentType(req: Request): string {
  const accept = req.header('accept') ?? '';
  const named = accept.split(',').some((part) => part.split(';')[0]!.trim().toLowerCase() === 'application/json');
  return named ? 'application/json' : 'text/plain; charset=utf-8';
}

/**
 * Writes a chunk, waiting for the socket to drain when its buffer is full, so a slow client holds
 * back the producer instead of growing server memory. False once the client is gone.
 */
function writeChunk(res: ServerResponse, chunk: string | Uint8Array): Promise<boolean> | boolean {
  if (res.destroyed || res.writableEnded) return false;
  if (res.write(chunk)) return true;
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
