import http from 'node:http';
import net from 'node:net';

/** A finished HTTP exchange: status and the whole body as text. */
export interface Reply {
  status: number;
  body: string;
}

interface Pending {
  resolve: (reply: Reply) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const CRLF = Buffer.from('\r\n');
const CHUNKED_END = '0\r\n\r\n';

function endsWithTerminator(last: Buffer, parts: Buffer[]): boolean {
  const tail = last.length >= 5 ? last.subarray(last.length - 5) : Buffer.concat(parts.slice(-2)).subarray(-5);
  return tail.toString('latin1') === CHUNKED_END;
}
const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One benchmark client: a single keep-alive connection with one request in flight, as a real
 * client process would hold. It writes requests as prebuilt strings and parses responses with
 * a minimal HTTP/1.1 reader (status, Content-Length or chunked), so the load generator spends a
 * few microseconds per request instead of the ~100 µs of node:http's client: on a 2-core
 * machine the benchmark then measures the server, not itself.
 */
export class Client {
  private socket: net.Socket | undefined;
  private buffer: Buffer = Buffer.alloc(0);
  /** Data received while a response is incomplete; joined only when it may be complete. */
  private parts: Buffer[] = [];
  private partsLength = 0;
  private expectedLength = -1;
  private pending: Pending | undefined;
  private readonly host: string;
  private readonly port: number;
  private readonly extraHeaders: string;
  /** The streamed exchange in progress (see `send`), which reads responses with its own parser. */
  private streaming: StreamedExchange | undefined;

  constructor(base: string, headers: Record<string, string> = {}) {
    const url = new URL(base);
    this.host = url.hostname;
    this.port = Number(url.port);
    this.extraHeaders = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  }

  private connect(): net.Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err: Error) => {
      // A connection dropped earlier (see `send`) must not fail the exchange on its successor.
      if (this.socket !== undefined && this.socket !== socket) return;
      const p = this.pending;
      this.pending = undefined;
      const streamed = this.streaming;
      this.streaming = undefined;
      if (streamed) streamed.closed(err);
      this.socket = undefined;
      this.buffer = Buffer.alloc(0);
      this.parts = [];
      this.partsLength = 0;
      this.expectedLength = -1;
      if (p) {
        clearTimeout(p.timer);
        p.reject(err);
      }
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
    this.socket = socket;
    return socket;
  }

  request(method: string, path: string, body?: string, timeoutMs = 60_000): Promise<Reply> {
    if (this.pending) return Promise.reject(new Error('one request at a time per client'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.socket?.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending = { resolve, reject, timer };
      let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\nAccept: application/json\r\n${this.extraHeaders}`;
      if (body !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
      else if (method !== 'GET' && method !== 'HEAD') head += 'Content-Length: 0\r\n';
      this.connect().write(body === undefined ? `${head}\r\n` : `${head}\r\n${body}`);
    });
  }

  private onData(chunk: Buffer): void {
    if (this.streaming) {
      this.streaming.data(chunk);
      return;
    }
    // Large streamed bodies arrive in many pieces: keep them aside and parse only when the
    // declared length is reached or the chunked terminator has arrived (linear, not quadratic).
    this.parts.push(chunk);
    this.partsLength += chunk.length;
    if (this.expectedLength > 0 && this.partsLength < this.expectedLength) return;
    if (this.expectedLength === 0 && !endsWithTerminator(chunk, this.parts)) return;
    this.buffer = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [this.buffer];
    const reply = this.parse();
    if (!reply) {
      this.learnExpectation();
      return;
    }
    this.parts = this.buffer.length > 0 ? [this.buffer] : [];
    this.partsLength = this.buffer.length;
    this.expectedLength = -1;
    if (!reply) return;
    const p = this.pending;
    this.pending = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.resolve(reply);
    }
  }

  /** After a partial parse: how much to wait for (byte count), or 0 for "until chunked end". */
  private learnExpectation(): void {
    const buf = this.buffer;
    const headEnd = buf.indexOf(HEADER_END);
    if (headEnd < 0) return;
    const lower = buf.toString('latin1', 0, headEnd).toLowerCase();
    const m = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    this.expectedLength = m ? headEnd + 4 + Number(m[1]) : 0;
  }

  /** A complete response from the buffer (consuming it), or undefined while incomplete. */
  private parse(): Reply | undefined {
    const buf = this.buffer;
    const headEnd = buf.indexOf(HEADER_END);
    if (headEnd < 0) return undefined;
    const head = buf.toString('latin1', 0, headEnd);
    const status = Number(head.slice(9, 12));
    const lower = head.toLowerCase();
    const bodyStart = headEnd + 4;
    const lengthMatch = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    if (lengthMatch) {
      const end = bodyStart + Number(lengthMatch[1]);
      if (buf.length < end) return undefined;
      this.buffer = buf.subarray(end);
      return { status, body: buf.toString('utf8', bodyStart, end) };
    }
    if (lower.includes('\r\ntransfer-encoding: chunked')) {
      const parts: Buffer[] = [];
      let pos = bodyStart;
      for (;;) {
        const lineEnd = buf.indexOf(CRLF, pos);
        if (lineEnd < 0) return undefined;
        const size = parseInt(buf.toString('latin1', pos, lineEnd), 16);
        const dataStart = lineEnd + 2;
        if (buf.length < dataStart + size + 2) return undefined;
        if (size === 0) {
          this.buffer = buf.subarray(dataStart + 2);
          return { status, body: Buffer.concat(parts).toString('utf8') };
        }
        parts.push(buf.subarray(dataStart, dataStart + size));
        pos = dataStart + size + 2;
      }
    }
    // No length and not chunked (204/304): no body.
    this.buffer = buf.subarray(bodyStart);
    return { status, body: '' };
  }

  /** Sends a request and returns the reply, throwing unless the status is one of `expected`. */
  async expect(method: string, path: string, expected: number[], body?: string, timeoutMs?: number): Promise<Reply> {
    const reply = await this.request(method, path, body, timeoutMs);
    if (!expected.includes(reply.status)) {
      throw new Error(`${method} ${path} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
    }
    return reply;
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  /**
   * One exchange with a binary or streamed body, and a response read as it arrives: its body is
   * handed to `onBody` chunk by chunk (and only its first `keepBytes` are kept), so a gigabyte
   * can go in and out without being held. The request body is a Buffer, or chunks written with
   * backpressure under a declared Content-Length. If the server answers before the whole body
   * is sent, writing stops and the connection is dropped after the reply.
   */
  async send(method: string, path: string, opts: SendOptions = {}): Promise<StreamedReply> {
    if (this.pending || this.streaming) throw new Error('one request at a time per client');
    opts.signal?.throwIfAborted();
    const socket = this.connect();
    const body = opts.body;
    const length = body?.length ?? 0;
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n${this.extraHeaders}`;
    for (const [k, v] of Object.entries(opts.headers ?? {})) head += `${k}: ${v}\r\n`;
    if (body !== undefined || (method !== 'GET' && method !== 'HEAD')) head += `Content-Length: ${length}\r\n`;
    head += '\r\n';

    const exchange = new StreamedExchange(method === 'HEAD', opts.onBody, opts.keepBytes ?? 64 * 1024);
    this.streaming = exchange;
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      socket.destroy(new Error(`${method} ${path}: not finished within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    const onAbort = (): void => {
      const reason: unknown = opts.signal?.reason;
      socket.destroy(reason instanceof Error ? reason : new Error(String(reason)));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let sentAll = body === undefined || Buffer.isBuffer(body);
    try {
      if (body === undefined || Buffer.isBuffer(body)) {
        socket.cork();
        socket.write(head);
        if (body !== undefined && body.length > 0) socket.write(body);
        socket.uncork();
      } else {
        socket.write(head);
        let written = 0;
        for await (const chunk of body.chunks) {
          if (exchange.settled || socket.destroyed) break;
          written += chunk.length;
          if (written > length) throw new Error(`request body longer than its Content-Length ${length}`);
          if (!socket.write(chunk)) await drained(socket);
        }
        if (!exchange.settled && !socket.destroyed && written !== length) {
          throw new Error(`request body of ${written} bytes, ${length} declared`);
        }
        sentAll = written === length;
      }
      const reply = await exchange.done;
      // Answered before the whole body went out: the connection is out of step, drop it.
      if (!sentAll || reply.closeAfter) this.close();
      return reply;
    } catch (err) {
      this.close();
      if (this.streaming === exchange) this.streaming = undefined;
      exchange.closed(err as Error);
      throw err;
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (this.streaming === exchange) this.streaming = undefined;
    }
  }
}

/** Options of `Client.send`. */
export interface SendOptions {
  /** Extra request headers (Host, Content-Length and the client's own headers are added). */
  headers?: Record<string, string>;
  /** The request body: bytes, or chunks adding up to exactly `length` bytes. */
  body?: Buffer | { length: number; chunks: AsyncIterable<Buffer> | Iterable<Buffer> };
  /** Called with every piece of the response body as it arrives; the client keeps none beyond `keepBytes`. */
  onBody?: (chunk: Buffer) => void;
  /** How many leading bytes of the response body to keep in `StreamedReply.body` (default 64 KiB). */
  keepBytes?: number;
  /** Time for the whole exchange, body included (default 60 s). */
  timeoutMs?: number;
  /** Aborting drops the connection and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A streamed exchange's answer: status, headers (lower-case names), body size and its first bytes. */
export interface StreamedReply {
  status: number;
  headers: Record<string, string>;
  /** Body bytes received (after undoing chunked transfer coding). */
  bytes: number;
  /** The first `keepBytes` of the body. */
  body: Buffer;
  /** The server will close the connection (or it had to, to mark the body's end). */
  closeAfter: boolean;
}

function drained(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** An incremental HTTP/1.1 response reader: head, then a body by length, chunked or until close. */
class StreamedExchange {
  readonly done: Promise<StreamedReply>;
  settled = false;
  private resolve!: (reply: StreamedReply) => void;
  private reject!: (err: Error) => void;
  private state: 'head' | 'length' | 'size' | 'data' | 'data-end' | 'trailer' | 'close' = 'head';
  private headParts: Buffer[] = [];
  private line = '';
  private remaining = 0;
  private status = 0;
  private headers: Record<string, string> = {};
  private bytes = 0;
  private kept: Buffer[] = [];
  private keptLength = 0;
  private closeAfter = false;

  constructor(
    private readonly isHead: boolean,
    private readonly onBody: ((chunk: Buffer) => void) | undefined,
    private readonly keepBytes: number,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A rejection nobody awaits yet (the body is still being written) is not unhandled.
    this.done.catch(() => undefined);
  }

  /** The connection ended: the end of a body read until close, or a failure. */
  closed(err: Error): void {
    if (this.settled) return;
    if (this.state === 'close') this.finish();
    else this.fail(err);
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    let pos = 0;
    if (this.state === 'head') {
      this.headParts.push(chunk);
      const buf = this.headParts.length === 1 ? chunk : Buffer.concat(this.headParts);
      const headEnd = buf.indexOf(HEADER_END);
      if (headEnd < 0) {
        this.headParts = [buf];
        return;
      }
      this.headParts = [];
      this.readHead(buf.toString('latin1', 0, headEnd));
      if (this.settled) return;
      chunk = buf;
      pos = headEnd + 4;
    }
    while (pos < chunk.length && !this.settled) {
      switch (this.state) {
        case 'length':
        case 'data': {
          const n = Math.min(this.remaining, chunk.length - pos);
          this.deliver(pos === 0 && n === chunk.length ? chunk : chunk.subarray(pos, pos + n));
          pos += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            if (this.state === 'length') this.finish();
            else this.state = 'data-end';
          }
          break;
        }
        case 'close':
          this.deliver(pos === 0 ? chunk : chunk.subarray(pos));
          pos = chunk.length;
          break;
        case 'size':
        case 'data-end':
        case 'trailer': {
          const nl = chunk.indexOf(10, pos);
          if (nl < 0) {
            this.line += chunk.toString('latin1', pos);
            pos = chunk.length;
            break;
          }
          const line = (this.line + chunk.toString('latin1', pos, nl)).trim();
          this.line = '';
          pos = nl + 1;
          if (this.state === 'data-end') {
            this.state = 'size';
          } else if (this.state === 'trailer') {
            if (line === '') this.finish();
          } else {
            const size = parseInt(line, 16);
            if (!Number.isFinite(size)) {
              this.fail(new Error(`bad chunk size line ${JSON.stringify(line.slice(0, 40))}`));
              return;
            }
            if (size === 0) this.state = 'trailer';
            else {
              this.state = 'data';
              this.remaining = size;
            }
          }
          break;
        }
        default:
          return;
      }
    }
  }

  private readHead(head: string): void {
    this.status = Number(head.slice(9, 12));
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) this.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    this.closeAfter = /\bclose\b/i.test(this.headers['connection'] ?? '');
    const length = this.headers['content-length'];
    if (this.isHead || this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) {
      this.finish();
    } else if (/\bchunked\b/i.test(this.headers['transfer-encoding'] ?? '')) {
      this.state = 'size';
    } else if (length !== undefined) {
      this.remaining = Number(length);
      this.state = 'length';
      if (this.remaining === 0) this.finish();
    } else {
      this.state = 'close';
      this.closeAfter = true;
    }
  }

  private deliver(piece: Buffer): void {
    this.bytes += piece.length;
    if (this.keptLength < this.keepBytes) {
      const part = piece.subarray(0, this.keepBytes - this.keptLength);
      this.kept.push(part);
      this.keptLength += part.length;
    }
    this.onBody?.(piece);
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve({
      status: this.status,
      headers: this.headers,
      bytes: this.bytes,
      body: this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept),
      closeAfter: this.closeAfter,
    });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }
}

/** A line-oriented streaming response (e.g. a continuous _changes feed). */
export interface LineStream {
  /** Resolves once the response headers have arrived (rejects on a non-200 status). */
  opened: Promise<void>;
  close(): void;
}

/** Opens a long-lived GET and calls `onLine` for every complete non-empty line of its body. */
export function openLineStream(
  base: string,
  path: string,
  headers: Record<string, string>,
  onLine: (line: string) => void,
): LineStream {
  const url = new URL(base);
  let req: http.ClientRequest | undefined;
  const opened = new Promise<void>((resolve, reject) => {
    req = http.request(
      { host: url.hostname, port: Number(url.port), method: 'GET', path, agent: false, headers: { ...headers, accept: 'application/json' } },
      (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`GET ${path} answered ${res.statusCode}`));
          res.resume();
          return;
        }
        resolve();
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          let nl: number;
          while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl).trim();
            pending = pending.slice(nl + 1);
            if (line !== '') onLine(line);
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end();
  });
  return { opened, close: () => req?.destroy() };
}
