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
      const p = this.pending;
      this.pending = undefined;
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
