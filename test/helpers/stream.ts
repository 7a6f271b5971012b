/**
 * Streaming HTTP for tests of live feeds: opens a request, exposes the text as it arrives and
 * waits (always with a bound) for a condition on it or for the end of the response.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

export interface OpenStream {
  status: number;
  headers: IncomingMessage['headers'];
  /** Everything received so far. */
  readonly text: string;
  /** True once the server ended the response (or the connection closed). */
  readonly ended: boolean;
  /** Resolves with the text once `predicate(text)` holds; rejects after `ms` with what arrived. */
  waitFor(predicate: (text: string) => boolean, ms?: number, what?: string): Promise<string>;
  /** Resolves with the whole text once the response ends; rejects after `ms`. */
  waitForEnd(ms?: number): Promise<string>;
  /** Complete lines received so far (text up to the last newline, split on newlines). */
  lines(): string[];
  /** Aborts the request: the client goes away. */
  close(): void;
}

export interface StreamOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** How long to wait for the response headers. */
  headerTimeoutMs?: number;
}

/** Opens `method base+path` and resolves as soon as the status line and headers arrived. */
export function openStream(base: string, method: string, path: string, options: StreamOptions = {}): Promise<OpenStream> {
  const url = new URL(path.replace(/^\//, ''), base);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    let text = '';
    let ended = false;
    const waiters = new Set<() => void>();
    const wake = () => { for (const w of [...waiters]) w(); };
    let r: ClientRequest;
    const headerTimer = setTimeout(() => {
      r.destroy();
      reject(new Error(`no response headers for ${method} ${path} within ${options.headerTimeoutMs ?? 5000} ms`));
    }, options.headerTimeoutMs ?? 5000);
    r = httpRequest(url, { method, headers }, (res) => {
      clearTimeout(headerTimer);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; wake(); });
      const finish = () => { if (!ended) { ended = true; wake(); } };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const s: OpenStream = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get text() { return text; },
        get ended() { return ended; },
        waitFor(predicate, ms = 5000, what = 'condition') {
          return new Promise((ok, fail) => {
            const check = () => {
              if (predicate(text)) { done(); ok(text); return true; }
              if (ended) { done(); fail(new Error(`stream ended before ${what}; received ${JSON.stringify(text)}`)); return true; }
              return false;
            };
            const timer = setTimeout(() => {
              done();
              fail(new Error(`timed out after ${ms} ms waiting for ${what}; received ${JSON.stringify(text)}`));
            }, ms);
            const done = () => { clearTimeout(timer); waiters.delete(check); };
            if (!check()) waiters.add(check);
          });
        },
        waitForEnd(ms = 5000) {
          return new Promise((ok, fail) => {
            const check = () => {
              if (ended) { done(); ok(text); return true; }
              return false;
            };
            const timer = setTimeout(() => {
              done();
              fail(new Error(`timed out after ${ms} ms waiting for the end; received ${JSON.stringify(text)}`));
            }, ms);
            const done = () => { clearTimeout(timer); waiters.delete(check); };
            if (!check()) waiters.add(check);
          });
        },
        lines() {
          const complete = text.slice(0, text.lastIndexOf('\n') + 1);
          return complete === '' ? [] : complete.slice(0, -1).split('\n');
        },
        close() {
          r.destroy();
          res.destroy();
        },
      };
      resolve(s);
    });
    r.on('error', (err) => {
      clearTimeout(headerTimer);
      if (!ended) { ended = true; wake(); }
      reject(err);
    });
    r.end(payload);
  });
}

/** Binds `openStream` to one server. */
export function streamer(base: string) {
  return {
    get: (path: string, o?: StreamOptions) => openStream(base, 'GET', path, o),
    post: (path: string, body?: unknown, o?: StreamOptions) => openStream(base, 'POST', path, { ...o, body }),
  };
}

/** Parses the non-empty lines of a continuous feed. */
export function jsonLines(text: string): any[] {
  return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
}

/** Parses server-sent events: blocks separated by blank lines, `field: value` lines. */
export function parseEvents(text: string): { event?: string; data?: string; id?: string }[] {
  const events: { event?: string; data?: string; id?: string }[] = [];
  const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
  for (const block of complete.split('\n\n')) {
    if (block === '') continue;
    const ev: { event?: string; data?: string; id?: string } = {};
    for (const line of block.split('\n')) {
      const i = line.indexOf(':');
      if (i <= 0) continue;
      const field = line.slice(0, i);
      const value = line.slice(i + 1).replace(/^ /, '');
      if (field === 'event' || field === 'data' || field === 'id') ev[field] = value;
    }
    // Extra blank lines (a feed's closing newline) carry no fields and dispatch nothing.
    if (Object.keys(ev).length > 0) events.push(ev);
  }
  return events;
}
