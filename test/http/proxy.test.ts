/**
 * CouchDB 1.6's HTTP proxy handler (`{couch_httpd_proxy, handle_proxy_req, <<"URL">>}` in
 * `[httpd_global_handlers]`), ported from test/etap/180-http-proxy.t: a small upstream server
 * started here (as the etap test's test_web) checks what the proxy sends it and answers as each
 * check asks; the client checks what comes back through Settee.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { serverForFile } from '../helpers/server.js';
import { basic, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();

/** What the upstream received. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: Buffer;
}

/** How the upstream answers: whole, in chunks (chunked encoding), or ended by closing (`eof`). */
interface Answer {
  status: number;
  headers?: string[];
  body?: string | Buffer;
  chunks?: string[];
  eof?: boolean;
  /** Sends the headers and a chunk, then holds the answer open; called once it closes. */
  hold?: () => void;
}

/** A test_web: each check sets `expect` to look at the request and say how to answer. */
function upstream() {
  let expect: ((seen: Seen) => Answer) | undefined;
  let last: Seen | undefined;
  let failure: unknown;
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
      last = seen;
      let answer: Answer;
      try {
        if (!expect) throw new Error('no check set');
        answer = expect(seen);
      } catch (err) {
        failure = err;
        answer = { status: 200, body: `Error: ${String(err)}` };
      }
      expect = undefined;
      void respond(res, answer);
    });
  });
  return {
    srv,
    get port() { return (srv.address() as AddressInfo).port; },
    /** The URL to proxy to, as the etap test writes it (with a trailing slash). */
    get url() { return `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`; },
    set(check: (seen: Seen) => Answer) { expect = check; last = undefined; failure = undefined; },
    /** Throws what the check found wrong; answers what the upstream received. */
    checked(): Seen {
      if (failure) throw failure;
      assert.ok(last, 'the upstream got the request');
      return last;
    },
  };
}

async function respond(res: ServerResponse, answer: Answer): Promise<void> {
  if (answer.hold) {
    res.writeHead(answer.status, ['Transfer-Encoding', 'chunked']);
    res.write('first');
    res.once('close', answer.hold);
    return;
  }
  if (answer.chunks) {
    res.writeHead(answer.status, [...(answer.headers ?? []), 'Transfer-Encoding', 'chunked']);
    res.flushHeaders();
    for (const chunk of answer.chunks) {
      await new Promise((r) => setTimeout(r, 50));
      res.write(chunk);
    }
    res.end();
    return;
  }
  if (answer.eof) {
    // No length and no chunks: the body ends with the connection (HTTP/1.0 style).
    res.useChunkedEncodingByDefault = false;
    res.shouldKeepAlive = false;
    res.writeHead(answer.status, [...(answer.headers ?? []), 'Connection', 'close']);
    res.write('foo');
    res.write('bar');
    res.end('bazinga');
    return;
  }
  const body = answer.body ?? 'ok';
  res.writeHead(answer.status, [...(answer.headers ?? []), 'Content-Length', String(Buffer.byteLength(body))]);
  res.end(body);
}

function listen(srv: ReturnType<typeof upstream>['srv']): Promise<void> {
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
}

const web = upstream();
const other = upstream();
await listen(web.srv);
await listen(other.srv);
after(() => {
  for (const srv of [web.srv, other.srv]) {
    srv.close();
    srv.closeAllConnections();
  }
});

const proxySpec = (url: string) => `{couch_httpd_proxy, handle_proxy_req, <<"${url}">>}`;

async function setHandler(name: string, value: string): Promise<void> {
  const r = await c.put(`/_config/httpd_global_handlers/${name}`, value);
  assert.equal(r.status, 200, r.text);
}

await setHandler('_test', proxySpec(web.url));

/** The server's `/_test/` URL, as the etap test's server(). */
const proxied = () => `http://127.0.0.1:${server.port}/_test/`;

interface Got {
  status: number;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: string;
}

/** A request to the server with exact headers; a `chunks` body goes out chunked, one write each. */
function send(method: string, path: string, options: { headers?: Record<string, string>; body?: string; chunks?: string[] } = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(`http://127.0.0.1:${server.port}${path}`, { method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    r.on('error', reject);
    if (options.chunks) {
      void (async () => {
        for (const chunk of options.chunks!) {
          r.write(chunk);
          await new Promise((t) => setTimeout(t, 20));
        }
        r.end();
      })();
    } else {
      r.end(options.body);
    }
  });
}

/** Sends raw bytes on a new connection and reads until the server closes it. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
  });
}

test('basic proxy test: GET / reaches the upstream with no body', async () => {
  web.set((seen) => {
    assert.equal(seen.method, 'GET');
    assert.equal(seen.url, '/');
    assert.equal(seen.body.length, 0);
    return { status: 200, headers: ['Content-Type', 'text/plain'], body: 'ok' };
  });
  const r = await send('GET', '/_test/');
  web.checked();
  assert.equal(r.status, 200);
  assert.equal(r.body, 'ok');
  assert.equal(r.headers['content-type'], 'text/plain');
});

test('the proxy path alone is the target itself', async () => {
  web.set((seen) => { assert.equal(seen.url, '/'); return { status: 200 }; });
  const r = await send('GET', '/_test');
  web.checked();
  assert.equal(r.body, 'ok');
});

test('alternate status', async () => {
  web.set((seen) => { assert.equal(seen.url, '/alternate_status'); return { status: 201 }; });
  const r = await send('GET', '/_test/alternate_status');
  web.checked();
  assert.equal(r.status, 201);
  assert.equal(r.body, 'ok');
});

test('trailing slash', async () => {
  web.set((seen) => { assert.equal(seen.url, '/trailing_slash/'); return { status: 200 }; });
  const r = await send('GET', '/_test/trailing_slash/');
  web.checked();
  assert.equal(r.status, 200);
});

test('query strings and encoded paths pass as sent', async () => {
  web.set((seen) => { assert.equal(seen.url, '/some/path%2Fx?q=1&name=a%20b+c'); return { status: 200 }; });
  assert.equal((await send('GET', '/_test/some/path%2Fx?q=1&name=a%20b+c')).status, 200);
  web.checked();
  web.set((seen) => { assert.equal(seen.url, '/?q=1'); return { status: 200 }; });
  assert.equal((await send('GET', '/_test?q=1')).status, 200);
  web.checked();
});

test('passes header', async () => {
  web.set((seen) => {
    assert.equal(seen.url, '/passes_header');
    assert.equal(seen.headers['x-couchdb-ralph'], 'plankton');
    assert.ok(seen.rawHeaders.includes('X-CouchDB-Ralph'), 'header names keep their case');
    return { status: 200 };
  });
  const r = await send('GET', '/_test/passes_header', { headers: { 'X-CouchDB-Ralph': 'plankton' } });
  web.checked();
  assert.equal(r.status, 200);
});

test('passes host header', async () => {
  web.set((seen) => {
    assert.equal(seen.url, '/passes_host_header');
    assert.equal(seen.headers.host, 'www.google.com');
    return { status: 200 };
  });
  const r = await send('GET', '/_test/passes_host_header', { headers: { Host: 'www.google.com' } });
  web.checked();
  assert.equal(r.status, 200);
});

test('passes header back, duplicates kept', async () => {
  web.set((seen) => {
    assert.equal(seen.url, '/passes_header_back');
    return { status: 200, headers: ['X-CouchDB-Plankton', 'ralph', 'Set-Cookie', 'a=1; Path=/', 'Set-Cookie', 'b=2; Path=/'] };
  });
  const r = await send('GET', '/_test/passes_header_back');
  web.checked();
  assert.equal(r.status, 200);
  const at = r.rawHeaders.indexOf('X-CouchDB-Plankton');
  assert.ok(at !== -1 && r.rawHeaders[at + 1] === 'ralph', JSON.stringify(r.rawHeaders));
  assert.deepEqual(r.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
});

/** The upstream answers 302 with `header: location`; the client must see `expected`. */
async function rewriteCheck(header: string, location: string, expected: string): Promise<void> {
  web.set((seen) => { assert.equal(seen.url, '/rewrite_test'); return { status: 302, headers: [header, location] }; });
  const r = await send('GET', '/_test/rewrite_test');
  web.checked();
  assert.equal(r.status, 302);
  assert.equal(r.body, 'ok');
  assert.equal(r.headers[header.toLowerCase()], expected, `${header}: ${location}`);
}

test('rewrites location headers pointing at the upstream', async () => {
  await rewriteCheck('Location', `${web.url}foo/bar`, `${proxied()}foo/bar`);
  await rewriteCheck('Content-Location', `${web.url}bing?q=2`, `${proxied()}bing?q=2`);
  await rewriteCheck('Uri', `${web.url}zip#frag`, `${proxied()}zip#frag`);
  await rewriteCheck('Destination', web.url, proxied());
});

test('does not rewrite external locations', async () => {
  const external = 'https://www.google.com/';
  await rewriteCheck('Location', `${external}search`, `${external}search`);
  await rewriteCheck('Content-Location', `${external}s?q=2`, `${external}s?q=2`);
  await rewriteCheck('Uri', `${external}f#f`, `${external}f#f`);
  await rewriteCheck('Destination', `${external}f?q=2#f`, `${external}f?q=2#f`);
  // The upstream's host on another port is another server.
  await rewriteCheck('Location', `http://127.0.0.1:${other.port + 1}/x`, `http://127.0.0.1:${other.port + 1}/x`);
});

test('rewrites relative locations', async () => {
  await rewriteCheck('Location', '/foo', `${proxied()}foo`);
  await rewriteCheck('Content-Location', 'bar', `${proxied()}bar`);
  await rewriteCheck('Uri', '/zing?q=3', `${proxied()}zing?q=3`);
  await rewriteCheck('Destination', 'bing?q=stuff#yay', `${proxied()}bing?q=stuff#yay`);
});

test('an HTTP/1.0 client gets the whole answer', async () => {
  web.set((seen) => { assert.equal(seen.url, '/uses_same_version'); return { status: 200, chunks: ['foo', 'bar'] }; });
  const text = await rawExchange('GET /_test/uses_same_version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n');
  web.checked();
  assert.match(text, /^HTTP\/1\.[01] 200/);
  assert.doesNotMatch(text, /transfer-encoding/i);
  assert.ok(text.endsWith('\r\n\r\nfoobar'), JSON.stringify(text));
});

test('passes body (Content-Length)', async () => {
  web.set((seen) => {
    assert.equal(seen.method, 'PUT');
    assert.equal(seen.url, '/passes_body');
    assert.equal(seen.headers['content-length'], '7');
    assert.equal(seen.body.toString(), 'Hooray!');
    return { status: 201 };
  });
  const r = await send('PUT', '/_test/passes_body', { body: 'Hooray!', headers: { 'Content-Length': '7' } });
  web.checked();
  assert.equal(r.status, 201);
  assert.equal(r.body, 'ok');
});

test('passes eof body back', async () => {
  web.set((seen) => { assert.equal(seen.url, '/passes_eof_body'); return { status: 200, eof: true }; });
  const r = await send('GET', '/_test/passes_eof_body');
  web.checked();
  assert.equal(r.status, 200);
  assert.equal(r.body, 'foobarbazinga');
});

test('passes chunked body', async () => {
  web.set((seen) => {
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/passes_chunked_body');
    assert.equal(seen.headers['transfer-encoding'], 'chunked');
    assert.equal(seen.headers['content-length'], undefined);
    assert.equal(seen.body.toString(), 'foobarbazinga');
    return { status: 201 };
  });
  const r = await send('POST', '/_test/passes_chunked_body', { chunks: ['foo', 'bar', 'bazinga'], headers: { 'Transfer-Encoding': 'chunked' } });
  web.checked();
  assert.equal(r.status, 201);
});

test('passes chunked body back', async () => {
  web.set((seen) => { assert.equal(seen.url, '/passes_chunked_body_back'); return { status: 200, chunks: ['foo', 'bar', 'bazinga'] }; });
  const r = await send('GET', '/_test/passes_chunked_body_back');
  web.checked();
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.body, 'foobarbazinga');
});

test('HEAD and DELETE go out as they came, without a body', async () => {
  web.set((seen) => { assert.equal(seen.method, 'HEAD'); assert.equal(seen.url, '/h'); return { status: 200, body: 'twelve bytes' }; });
  const head = await send('HEAD', '/_test/h');
  web.checked();
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], '12');
  assert.equal(head.body, '');
  web.set((seen) => { assert.equal(seen.method, 'DELETE'); assert.equal(seen.body.length, 0); return { status: 200 }; });
  assert.equal((await send('DELETE', '/_test/d')).status, 200);
  web.checked();
});

test('large bodies stream both ways intact', async () => {
  const size = 8 * 1024 * 1024;
  const payload = Buffer.alloc(size, 'abcdefghij');
  web.set((seen) => {
    assert.equal(seen.body.length, size);
    assert.ok(seen.body.equals(payload));
    return { status: 200, body: seen.body };
  });
  const r = await send('PUT', '/_test/big', { body: payload.toString(), headers: { 'Content-Length': String(size) } });
  web.checked();
  assert.equal(r.status, 200);
  assert.equal(r.body.length, size);
  assert.ok(r.body === payload.toString());
});

test('a client leaving ends the exchange with the upstream', async () => {
  let closed!: () => void;
  const upstreamClosed = new Promise<void>((resolve) => { closed = resolve; });
  web.set(() => ({ status: 200, hold: closed }));
  await new Promise<void>((resolve, reject) => {
    const r = httpRequest(`${proxied()}held`, (res) => {
      res.once('data', (chunk: Buffer) => {
        assert.equal(chunk.toString(), 'first');
        r.destroy();
        resolve();
      });
    });
    r.on('error', () => undefined);
    r.end();
    setTimeout(() => reject(new Error('no first chunk')), 5000).unref();
  });
  await upstreamClosed;
  web.checked();
  // The server carries on.
  web.set(() => ({ status: 200 }));
  assert.equal((await send('GET', '/_test/after')).body, 'ok');
  web.checked();
});

test('connect error: the upstream down answers 500', async () => {
  // A port nothing listens on: open one, close it.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  await setHandler('_error', proxySpec(`http://127.0.0.1:${port}/`));
  const r = await c.get('/_error');
  assert.equal(r.status, 500);
  assert.deepEqual(r.body, { error: 'error', reason: '{conn_failed,{error,econnrefused}}' });
  assert.equal((await c.del('/_config/httpd_global_handlers/_error')).status, 200);
});

test('configuration changes take effect at once', async () => {
  // Added.
  await setHandler('_live', proxySpec(other.url));
  other.set((seen) => { assert.equal(seen.url, '/x?y=1'); return { status: 200, body: 'other' }; });
  assert.equal((await send('GET', '/_live/x?y=1')).body, 'other');
  other.checked();
  // Changed: another upstream, with a path of its own.
  await setHandler('_live', proxySpec(`${web.url}base`));
  web.set((seen) => { assert.equal(seen.url, '/base/x'); return { status: 301, headers: ['Location', `${web.url}base/y`] }; });
  const moved = await send('GET', '/_live/x');
  web.checked();
  assert.equal(moved.body, 'ok');
  assert.equal(moved.headers.location, `http://127.0.0.1:${server.port}/_live/y`);
  // Deleted: as any unknown `_name`, CouchDB's database handler refuses it.
  assert.equal((await c.del('/_config/httpd_global_handlers/_live')).status, 200);
  const gone = await c.get('/_live/x');
  assert.equal(gone.status, 400);
  assert.equal(gone.body.error, 'illegal_database_name');
});

test('entries naming other modules stay ignored', async () => {
  await setHandler('_other', '{couch_httpd_misc_handlers, handle_welcome_req, <<"Hi">>}');
  assert.equal((await c.get('/_other')).status, 400);
  await setHandler('_other', 'not a term');
  assert.equal((await c.get('/_other')).status, 400);
  assert.equal((await c.del('/_config/httpd_global_handlers/_other')).status, 200);
});

test('a proxy entry replaces a built-in handler of its name, as in CouchDB', async () => {
  const original = (await c.get('/_config/httpd_global_handlers/_utils')).body as string;
  await setHandler('_utils', proxySpec(web.url));
  web.set((seen) => { assert.equal(seen.url, '/index.html'); return { status: 200, body: 'proxied' }; });
  assert.equal((await send('GET', '/_utils/index.html')).body, 'proxied');
  web.checked();
  await setHandler('_utils', original);
  const futon = await send('GET', '/_utils/');
  assert.equal(futon.status, 200);
  assert.match(futon.headers['content-type'] ?? '', /text\/html/);
});

test('anyone may use a proxy; require_valid_user closes it to anonymous callers', async () => {
  await defineAdmin(server.url, 'root', 'secret');
  const ROOT = basic('root', 'secret');
  web.set((seen) => {
    assert.equal(seen.url, '/open');
    return { status: 200, body: 'anonymous' };
  });
  assert.equal((await send('GET', '/_test/open')).body, 'anonymous');
  web.checked();
  assert.equal((await c.put('/_config/couch_httpd_auth/require_valid_user', 'true', { headers: ROOT })).status, 200);
  assert.equal((await send('GET', '/_test/open')).status, 401);
  web.set((seen) => {
    // Credentials go on to the upstream, as CouchDB passes every header.
    assert.equal(seen.headers.authorization, ROOT.Authorization);
    return { status: 200 };
  });
  assert.equal((await send('GET', '/_test/open', { headers: ROOT })).status, 200);
  web.checked();
  assert.equal((await c.put('/_config/couch_httpd_auth/require_valid_user', 'false', { headers: ROOT })).status, 200);
  assert.equal((await c.del('/_config/admins/root', { headers: ROOT })).status, 200);
});
