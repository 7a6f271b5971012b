/**
 * A tiny logging HTTP proxy for client tests: clients talk to the proxy, the proxy forwards
 * every request unchanged to Settee and records what went over the wire (method, path,
 * request headers and body, response status and the start of the response body). When a test
 * fails, the exchange log shows the exact request the real client sent.
 *
 * Set SETTEE_CLIENT_TRACE=1 to print every exchange to stderr as it happens.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Exchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  requestBody: string;
  status: number;
  /** The first 2000 characters of the response body (streams: what arrived). */
  responseBody: string;
}

export interface LoggingProxy {
  /** Base URL with a trailing slash. */
  url: string;
  log: Exchange[];
  /** The exchanges whose path contains `fragment`, formatted for an assertion message. */
  show(fragment?: string): string;
  stop(): Promise<void>;
}

const TRACE = process.env['SETTEE_CLIENT_TRACE'] === '1';

export async function startProxy(target: string): Promise<LoggingProxy> {
  const upstream = new URL(target);
  const log: Exchange[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers, host: upstream.host };
      const entry: Exchange = {
        method: req.method ?? '', path: req.url ?? '', requestHeaders: req.headers,
        requestBody: body.toString('utf8').slice(0, 2000), status: 0, responseBody: '',
      };
      log.push(entry);
      const out = httpRequest({
        host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers,
      }, (up) => {
        entry.status = up.statusCode ?? 0;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.on('data', (c: Buffer) => {
          if (entry.responseBody.length < 2000) entry.responseBody += c.toString('utf8').slice(0, 2000 - entry.responseBody.length);
          res.write(c);
        });
        up.on('end', () => {
          if (TRACE) process.stderr.write(`${format(entry)}\n`);
          res.end();
        });
        up.on('error', () => res.destroy());
      });
      out.on('error', (err) => {
        entry.status = 599;
        entry.responseBody = `proxy: ${err.message}`;
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      // A client that goes away (a cancelled live feed) ends the upstream request too.
      res.on('close', () => out.destroy());
      out.end(body);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    log,
    show(fragment) {
      return log.filter((e) => fragment === undefined || e.path.includes(fragment)).map(format).join('\n');
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export function format(e: Exchange): string {
  const ct = e.requestHeaders['content-type'];
  return `${e.method} ${e.path}${ct ? ` [${ct}]` : ''}${e.requestBody ? ` ${e.requestBody.slice(0, 500)}` : ''}\n  -> ${e.status} ${e.responseBody.slice(0, 500)}`;
}
