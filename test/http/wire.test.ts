/**
 * Wire rules over real HTTP, checked against CouchDB 1.6 (couch_httpd): 405 with Allow, HEAD,
 * content negotiation, standard headers, unknown global handlers, malformed URLs, oversized and
 * hostile bodies, half-sent requests and many parallel clients. Ends by checking the server is
 * still alive and answering.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { serverForFile } from '../helpers/server.js';
import type { Response } from '../helpers/http.js';

const { server, c } = await serverForFile();
let host: string;
let port: number;

before(async () => {
  const u = new URL(server.url);
  host = u.hostname;
  port = Number(u.port);
  assert.equal((await c.put('/wire')).status, 201);
});

interface RawOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body in pieces of this many bytes with chunked transfer encoding. */
  chunked?: number;
  agent?: Agent;
}

/**
 * A request whose path and headers are sent exactly as given: no URL normalisation (`..`,
 * `%2E`), no default Accept header.
 */
function raw(method: string, path: string, options: RawOptions = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    const r = httpRequest({ host, port, method, path, headers, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (ch: Buffer) => chunks.push(ch));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    const body = options.body;
    if (body === undefined) {
      r.end();
    } else if (options.chunked) {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      const size = options.chunked;
      let offset = 0;
      const pump = () => {
        while (offset < buf.length) {
          const piece = buf.subarray(offset, offset + size);
          offset += piece.length;
          if (!r.write(piece)) {
            r.once('drain', pump);
            return;
          }
        }
        r.end();
      };
      pump();
    } else {
      r.end(body);
    }
  });
}

/** Opens a raw TCP connection to the server. */
function socket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, host, () => resolve(s));
    s.once('error', reject);
  });
}

async function alive(): Promise<void> {
  const r = await c.get('/');
  assert.equal(r.status, 200);
  assert.equal(r.body.couchdb, 'Welcome');
  assert.equal(server.process.exitCode, null, 'the server process is still running');
}

// ----------------------------------------------------------------------------- 405 + Allow

test('wrong methods are 405 method_not_allowed with an Allow header', async () => {
  const cases: Array<[string, string, string[]]> = [
    ['PUT', '/_all_dbs', ['GET', 'HEAD']],
    ['POST', '/_all_dbs', ['GET', 'HEAD']],
    ['DELETE', '/_uuids', ['GET']],
    ['POST', '/_uuids', ['GET']],
    ['POST', '/', ['GET', 'HEAD']],
    ['DELETE', '/', ['GET', 'HEAD']],
    ['GET', '/_restart', ['POST']],
    ['PUT', '/_active_tasks', ['GET', 'HEAD']],
    ['DELETE', '/_log', ['GET', 'POST']],
    ['PUT', '/favicon.ico', ['GET', 'HEAD']],
  ];
  for (const [method, path, methods] of cases) {
    // Node frames a body only for PUT and POST; a DELETE or GET body would be sent unframed.
    const r = await c.request(method, path, method === 'PUT' || method === 'POST' ? { body: {} } : {});
    assert.equal(r.status, 405, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.error, 'method_not_allowed', `${method} ${path}`);
    assert.equal(typeof r.body.reason, 'string');
    assert.equal(typeof r.headers.allow, 'string', `${method} ${path} has Allow`);
    const allow = String(r.headers.allow).split(',');
    for (const m of methods) assert.ok(allow.includes(m), `${method} ${path}: Allow ${r.headers.allow} lacks ${m}`);
    assert.ok(!allow.includes(method), `${method} is not in its own Allow`);
    assert.match(r.body.reason, new RegExp(`Only .*${methods[0]}.* allowed`));
  }
});

test('a 405 does not change anything', async () => {
  const before = (await c.get('/_all_dbs')).body;
  assert.equal((await c.request('DELETE', '/_all_dbs')).status, 405);
  assert.deepEqual((await c.get('/_all_dbs')).body, before);
});

// ------------------------------------------------------------------------------------ HEAD

test('HEAD on GET endpoints answers the GET status and headers without a body', async () => {
  for (const path of ['/', '/_all_dbs', '/_uuids', '/_config', '/_config/uuids', '/_active_tasks', '/wire', '/_log']) {
    const g = await c.get(path);
    const h = await c.head(path);
    assert.equal(h.status, g.status, path);
    assert.equal(h.status, 200, path);
    assert.equal(h.text, '', `${path} HEAD has no body`);
    assert.equal(h.headers['content-type'], g.headers['content-type'], path);
  }
  const g = await c.get('/');
  const h = await c.head('/');
  assert.equal(h.headers['content-length'], g.headers['content-length']);
  assert.equal(Number(h.headers['content-length']), Buffer.byteLength(g.text));
});

test('HEAD of a streamed answer says Content-Length: 0, as mochiweb answers HEAD of a chunked response', async () => {
  for (const path of ['/wire/_all_docs', '/wire/_changes']) {
    const h = await c.head(path);
    assert.equal(h.status, 200, path);
    assert.equal(h.text, '', path);
    assert.equal(h.headers['content-length'], '0', path);
    assert.equal(h.headers['transfer-encoding'], undefined, path);
  }
});

test('HEAD on a missing resource is 404 without a body', async () => {
  for (const path of ['/wire-missing', '/wire/missing-doc']) {
    const h = await c.head(path);
    assert.equal(h.status, 404, path);
    assert.equal(h.text, '');
  }
});

// -------------------------------------------------------------------- content negotiation

test('JSON content type only for clients that name application/json in Accept', async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ Accept: 'application/json' }, 'application/json'],
    [{ Accept: 'text/html, application/json' }, 'application/json'],
    [{ Accept: 'text/html,application/json,*/*' }, 'application/json'],
    [{ Accept: '*/*' }, 'text/plain; charset=utf-8'],
    [{ Accept: 'text/html' }, 'text/plain; charset=utf-8'],
    [{ Accept: 'application/*' }, 'text/plain; charset=utf-8'],
    [{ Accept: 'application/jsonp' }, 'text/plain; charset=utf-8'],
    [{}, 'text/plain; charset=utf-8'],
  ];
  for (const [headers, type] of cases) {
    const r = await raw('GET', '/', { headers });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], type, JSON.stringify(headers));
    assert.equal(r.body.couchdb, 'Welcome', 'the body is JSON either way');
  }
});

test('Accept is matched by exact tokens cut at commas and spaces, as couch_httpd does', async () => {
  const cases: Array<[string, string]> = [
    // Parameters glued to the type make another token; a space before them does not.
    ['application/json;q=0.5', 'text/plain; charset=utf-8'],
    ['application/json; charset=utf-8', 'text/plain; charset=utf-8'],
    ['application/json ;q=0.5', 'application/json'],
    ['text/html;q=0.9,application/json;q=0.8', 'text/plain; charset=utf-8'],
    // Spaces alone separate types.
    ['text/html application/json', 'application/json'],
    ['text/html,  application/json', 'application/json'],
    // Case counts, and so does every character of the type.
    ['Application/JSON', 'text/plain; charset=utf-8'],
    ['application/jsonx', 'text/plain; charset=utf-8'],
    ['xapplication/json', 'text/plain; charset=utf-8'],
  ];
  for (const [accept, type] of cases) {
    const r = await raw('GET', '/', { headers: { Accept: accept } });
    assert.equal(r.headers['content-type'], type, accept);
  }
});

test('errors are negotiated the same way', async () => {
  const plain = await raw('GET', '/wire-missing');
  assert.equal(plain.status, 404);
  assert.equal(plain.headers['content-type'], 'text/plain; charset=utf-8');
  assert.deepEqual(plain.body, { error: 'not_found', reason: 'no_db_file' });
  const json = await raw('GET', '/wire-missing', { headers: { Accept: 'application/json' } });
  assert.equal(json.headers['content-type'], 'application/json');
  const notAllowed = await raw('PUT', '/_all_dbs');
  assert.equal(notAllowed.status, 405);
  assert.equal(notAllowed.headers['content-type'], 'text/plain; charset=utf-8');
});

// --------------------------------------------------------------------- standard headers

test('Cache-Control: must-revalidate and a CouchDB Server header on every JSON response', async () => {
  const responses: Array<[string, Response]> = [
    ['GET /', await c.get('/')],
    ['HEAD /', await c.head('/')],
    ['GET /_all_dbs', await c.get('/_all_dbs')],
    ['GET /_uuids', await c.get('/_uuids')],
    ['GET /_config/uuids', await c.get('/_config/uuids')],
    ['PUT /wire-cc', await c.put('/wire-cc')],
    ['PUT /wire-cc (412)', await c.put('/wire-cc')],
    ['PUT doc', await c.put('/wire-cc/doc', { a: 1 })],
    ['GET doc', await c.get('/wire-cc/doc')],
    ['GET missing (404)', await c.get('/wire-cc/nope')],
    ['PUT /_all_dbs (405)', await c.put('/_all_dbs')],
    ['GET /Bad (400)', await c.get('/Bad')],
    ['GET /_uuids?count=x (400)', await c.get('/_uuids?count=x')],
    ['DELETE /wire-cc', await c.del('/wire-cc')],
  ];
  for (const [label, r] of responses) {
    assert.match(String(r.headers['cache-control']), /must-revalidate/, label);
    assert.match(String(r.headers.server), /^CouchDB\/1\.6/, label);
    if (r.text !== '') assert.ok(r.text.endsWith('\n'), `${label}: JSON ends with a newline`);
  }
});

test('a trailing slash names the same database', async () => {
  const r = await c.get('/wire/');
  assert.equal(r.status, 200);
  assert.equal(r.body.db_name, 'wire');
});

// ------------------------------------------------------------------ unknown global names

test('an unknown /_name is 400 illegal_database_name, as CouchDB routes it to the database handler', async () => {
  for (const [method, path] of [['GET', '/_foo'], ['PUT', '/_foo'], ['DELETE', '/_foo'], ['GET', '/_foo/bar'], ['POST', '/_foo']] as const) {
    const r = await c.request(method, path, method === 'POST' ? { body: {} } : {});
    assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.error, 'illegal_database_name');
    assert.match(r.body.reason, /^Name: '_foo'\. Only lowercase characters/);
  }
  assert.ok(!(await c.get('/_all_dbs')).body.includes('_foo'));
});

// --------------------------------------------------------------------- malformed URLs

test('bad percent-encoding in the path is 400 bad_request', async () => {
  for (const path of ['/%ZZ', '/wire/%ZZ', '/wire/%E0%A4%A', '/%', '/wire/doc%', '/_config/%G1/x', '/wire/_design/%zz']) {
    const r = await raw('GET', path, { headers: { Accept: 'application/json' } });
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.equal(r.body.error, 'bad_request', path);
  }
  await alive();
});

test('escapes that are not UTF-8 name no document: reading one is 404, writing one is 400', async () => {
  for (const path of ['/wire/%FF', '/wire/%C3%28']) {
    assert.deepEqual((await c.get(path)).body, { error: 'not_found', reason: 'missing' }, path);
    const put = await c.put(path, {});
    assert.equal(put.status, 400, path);
    assert.equal(put.body.reason, 'Document id must be valid UTF-8', path);
  }
});

test('bad percent-encoding in the query string is 400 bad_request', async () => {
  for (const path of ['/_all_dbs?x=%ZZ', '/_uuids?count=%', '/wire?a=%E0%A4%A', '/wire/_all_docs?startkey=%G0']) {
    const r = await raw('GET', path, { headers: { Accept: 'application/json' } });
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.equal(r.body.error, 'bad_request', path);
  }
  await alive();
});

test('.. in a database name is refused, raw or percent-encoded', async () => {
  for (const path of ['/..', '/%2E%2E', '/%2e%2e', '/wire%2F..', '/wire%2F..%2F..%2Fescape', '/a..b']) {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const r = await raw(method, path, { headers: { Accept: 'application/json' } });
      assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.error, 'illegal_database_name', `${method} ${path}`);
    }
  }
  const dbs = (await c.get('/_all_dbs')).body as string[];
  assert.ok(!dbs.some((d) => d.includes('..') || d.includes('escape')), JSON.stringify(dbs));
  await alive();
});

test('a document id of .. stays a document id inside its database', async () => {
  const put = await raw('PUT', '/wire/..', { headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: '{"dots":true}' });
  // CouchDB takes path segments literally: the id is "..".
  assert.equal(put.status, 201, put.text);
  assert.equal(put.body.id, '..');
  const get = await raw('GET', '/wire/%2E%2E', { headers: { Accept: 'application/json' } });
  assert.equal(get.status, 200);
  assert.equal(get.body.dots, true);
  assert.equal((await c.get('/wire')).body.db_name, 'wire');
});

// ------------------------------------------------------------------------ hostile bodies

const HUNDRED_MB = 100 * 1024 * 1024;

function bigDocument(): Buffer {
  const prefix = Buffer.from('{"big":"');
  const suffix = Buffer.from('"}');
  const filler = Buffer.alloc(HUNDRED_MB - prefix.length - suffix.length, 'a');
  return Buffer.concat([prefix, filler, suffix]);
}

test('a 100 MB document body is 413 too_large (Content-Length), and the server survives', async () => {
  const r = await raw('PUT', '/wire/huge', {
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: bigDocument(),
  });
  assert.equal(r.status, 413, r.text);
  assert.equal(r.body.error, 'too_large');
  assert.equal((await c.get('/wire/huge')).status, 404);
  await alive();
});

test('a 100 MB chunked document body is 413 too_large, and the server survives', async () => {
  const r = await raw('PUT', '/wire/huge-chunked', {
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: bigDocument(),
    chunked: 1024 * 1024,
  });
  assert.equal(r.status, 413, r.text);
  assert.equal(r.body.error, 'too_large');
  assert.equal((await c.get('/wire/huge-chunked')).status, 404);
  await alive();
});

test('a 100 MB POST /{db} body is 413 too_large', async () => {
  const r = await raw('POST', '/wire', {
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: bigDocument(),
  });
  assert.equal(r.status, 413, r.text);
  await alive();
});

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

test('deeply nested JSON (100k levels) is 400 bad_request, not a crash', async () => {
  const depth = 100_000;
  const bodies: Array<[string, string, string]> = [
    ['PUT', '/wire/deep-arrays', `{"a":${nested(depth, '[', ']')}}`],
    ['PUT', '/wire/deep-objects', `{"a":${nested(depth, '{"a":', '}')}}`],
    ['POST', '/wire', `{"_id":"deep-post","a":${nested(depth, '[', ']')}}`],
    ['POST', '/wire/_bulk_docs', `{"docs":[{"_id":"deep-bulk","a":${nested(depth, '[', ']')}}]}`],
    ['PUT', '/wire/_security', `{"admins":${nested(depth, '{"a":', '}')}}`],
  ];
  for (const [method, path, body] of bodies) {
    const r = await raw(method, path, { headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body });
    assert.equal(r.status, 400, `${method} ${path}: ${r.text.slice(0, 200)}`);
    assert.equal(r.body.error, 'bad_request', `${method} ${path}`);
    await alive();
  }
  // A config value that is not a string, however deep, is refused (config.test.ts).
  const config = await raw('PUT', '/_config/wire/deep', { headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: nested(depth, '[', ']', '"x"') });
  assert.deepEqual([config.status, config.body], [400, { error: 'bad_request', reason: 'config values must be json-encoded strings' }]);
  await alive();
  assert.equal((await c.get('/_config/wire/deep')).status, 404);
  for (const id of ['deep-arrays', 'deep-objects', 'deep-post', 'deep-bulk']) {
    assert.equal((await c.get(`/wire/${id}`)).status, 404, id);
  }
});

test('moderately nested JSON (100 levels) is stored and read back intact', async () => {
  const body = `{"a":${nested(100, '[', ']')}}`;
  const r = await raw('PUT', '/wire/nested-ok', { headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body });
  assert.equal(r.status, 201, r.text);
  const g = await c.get('/wire/nested-ok');
  assert.equal(JSON.stringify(g.body.a), nested(100, '[', ']'));
});

// --------------------------------------------------------------- half-sent requests

test('a partial request line and headers, then close, does not hurt the server', async () => {
  const s = await socket();
  s.write('GET /_all_dbs HTTP/1.1\r\nHost: x\r\nAccept: appl');
  // While that connection dangles, other clients are served.
  await alive();
  s.destroy();
  await alive();
});

test('a body shorter than its Content-Length, then close, does not hurt the server or the data', async () => {
  const s = await socket();
  s.write('PUT /wire/partial HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":');
  await alive();
  s.destroy();
  await alive();
  assert.equal((await c.get('/wire/partial')).status, 404, 'the half-sent document was not written');
});

test('many dangling connections at once do not stop the server from answering', async () => {
  const sockets = await Promise.all(Array.from({ length: 50 }, () => socket()));
  for (const [i, s] of sockets.entries()) s.write(`PUT /wire/dangle${i} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{`);
  await alive();
  const w = await c.put('/wire/while-dangling', { ok: true });
  assert.equal(w.status, 201);
  for (const s of sockets) s.destroy();
  await alive();
});

test('garbage that is not HTTP gets a 400 or a closed connection, never a crash', async () => {
  const s = await socket();
  const answer = new Promise<string>((resolve) => {
    let data = '';
    s.on('data', (d: Buffer) => { data += d.toString(); });
    s.on('close', () => resolve(data));
    s.on('error', () => resolve(data));
  });
  s.write('\x00\x01\x02 this is not http \r\n\r\n');
  const text = await answer;
  assert.ok(text === '' || /^HTTP\/1\.1 400/.test(text), JSON.stringify(text.slice(0, 80)));
  await alive();
});

test('a client that disconnects before reading a big response does not hurt the server', async () => {
  const s = await socket();
  s.write('GET /_uuids?count=1000 HTTP/1.1\r\nHost: x\r\n\r\n');
  s.destroy();
  await alive();
});

// --------------------------------------------------------------------- parallel clients

test('many parallel requests all succeed', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  try {
    const jobs: Array<Promise<[string, Response]>> = [];
    for (let i = 0; i < 300; i++) {
      const label = (p: Promise<Response>, l: string) => p.then((r): [string, Response] => [l, r]);
      switch (i % 5) {
        case 0: jobs.push(label(raw('GET', '/', { agent }), `GET / #${i}`)); break;
        case 1: jobs.push(label(raw('GET', '/_uuids?count=10', { agent }), `uuids #${i}`)); break;
        case 2: jobs.push(label(raw('PUT', `/wire/par-${i}`, { agent, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ i }) }), `PUT #${i}`)); break;
        case 3: jobs.push(label(raw('GET', '/wire', { agent }), `info #${i}`)); break;
        default: jobs.push(label(raw('GET', '/_all_dbs', { agent }), `all_dbs #${i}`)); break;
      }
    }
    const results = await Promise.all(jobs);
    for (const [l, r] of results) assert.ok(r.status === 200 || r.status === 201, `${l}: ${r.status} ${r.text}`);
    const uuids = results.filter(([l]) => l.startsWith('uuids')).flatMap(([, r]) => r.body.uuids as string[]);
    assert.equal(new Set(uuids).size, uuids.length, 'no uuid handed out twice');
    for (let i = 2; i < 300; i += 5) {
      const g = await c.get(`/wire/par-${i}`);
      assert.equal(g.body.i, i);
    }
  } finally {
    agent.destroy();
  }
});

test('parallel creation of the same database: exactly one 201, the rest 412', async () => {
  const results = await Promise.all(Array.from({ length: 20 }, () => c.put('/wire-race')));
  const created = results.filter((r) => r.status === 201).length;
  const exists = results.filter((r) => r.status === 412).length;
  assert.equal(created, 1, results.map((r) => r.status).join(','));
  assert.equal(exists, 19);
});

test('after all of this the server still answers GET /', async () => {
  await alive();
  const r = await c.get('/wire');
  assert.equal(r.status, 200);
});
