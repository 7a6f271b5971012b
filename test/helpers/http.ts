/** A small raw HTTP client for tests: every request is real HTTP, nothing is mocked. */
import { request as httpRequest } from 'node:http';

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when the body is not JSON). */
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Follows a redirect's Location with the same method, as a browser's XHR does. */
  followRedirects?: boolean;
}

/** Sends a request to `base` + `path`; JSON bodies get Content-Type application/json. */
export function req(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const url = new URL(path.replace(/^\//, ''), base);
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  let payload: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
        const location = res.headers.location;
        if (options.followRedirects && [301, 302, 303, 307, 308].includes(res.statusCode ?? 0) && location) {
          const next = new URL(location, url);
          resolve(req(`${next.origin}/`, method, `${next.pathname}${next.search}`, options));
          return;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(payload);
  });
}

/**
 * Binds `req` to one server. `base` may be a function, read at each request, for a server that
 * is restarted on another port.
 */
export function client(base: string | (() => string)) {
  const at = typeof base === 'string' ? () => base : base;
  return {
    get: (path: string, o?: RequestOptions) => req(at(), 'GET', path, o),
    head: (path: string, o?: RequestOptions) => req(at(), 'HEAD', path, o),
    put: (path: string, body?: unknown, o?: RequestOptions) => req(at(), 'PUT', path, { ...o, body }),
    post: (path: string, body?: unknown, o?: RequestOptions) => req(at(), 'POST', path, { ...o, body }),
    del: (path: string, o?: RequestOptions) => req(at(), 'DELETE', path, o),
    copy: (path: string, o?: RequestOptions) => req(at(), 'COPY', path, o),
    request: (method: string, path: string, o?: RequestOptions) => req(at(), method, path, o),
  };
}

/** What `client` returns. */
export type Client = ReturnType<typeof client>;
