/** JSONP (`allow_jsonp`), the real port in /_config, and Location behind a reverse proxy. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/jp')).status, 201);
  assert.equal((await c.put('/jp/0', { a: 0 })).status, 201);
});

test('?callback= is ignored while allow_jsonp is off', async () => {
  const r = await c.get('/jp/0?callback=jsonp_no_chunk');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.body.a, 0);
});

test('with allow_jsonp, JSON answers are wrapped in the callback as text/javascript (CouchDB 1.6), chunked or not', async () => {
  await c.put('/_config/httpd/allow_jsonp', 'true');
  try {
    const doc = await c.get('/jp/0?callback=jsonp_no_chunk');
    assert.equal(doc.headers['content-type'], 'text/javascript');
    const m = /^\/\* CouchDB \*\/jsonp_no_chunk\((.*)\);\n$/s.exec(doc.text);
    assert.ok(m, doc.text);
    assert.equal(JSON.parse(m[1]!)._id, '0');

    const rows = await c.get('/jp/_all_docs?callback=cb.rows');
    const m2 = /^\/\* CouchDB \*\/cb\.rows\((.*)\);\n$/s.exec(rows.text);
    assert.ok(m2, rows.text);
    assert.equal(rows.headers['content-type'], 'text/javascript');
    assert.equal(JSON.parse(m2[1]!).total_rows, 1);
    // CouchDB 1.6 closes the callback before the newline that ends a view's rows
    // (end_json_response), but after the one _changes writes itself.
    assert.ok(rows.text.endsWith('\r\n]});\n'), JSON.stringify(rows.text));
    const changes = await c.get('/jp/_changes?callback=cb');
    assert.equal(changes.headers['content-type'], 'text/javascript');
    assert.ok(changes.text.startsWith('/* CouchDB */cb({"results":[\n'), JSON.stringify(changes.text));
    assert.ok(changes.text.endsWith('],\n"last_seq":1}\n);\n'), JSON.stringify(changes.text));
    // Without a callback that last newline follows the feed's own: a blank line ends the body.
    assert.ok((await c.get('/jp/_changes')).text.endsWith('"last_seq":1}\n\n'));
    const continuous = await c.get('/jp/_changes?feed=continuous&timeout=10&callback=cb');
    assert.ok(continuous.text.endsWith('\n{"last_seq":1}\n);\n'), JSON.stringify(continuous.text));

    const missing = await c.get('/jp/nothing?callback=cb');
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], 'text/javascript');
    assert.equal(missing.text, '/* CouchDB */cb({"error":"not_found","reason":"missing"});\n');

    const bad = await c.get('/jp/0?callback=alert(1)');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'bad_request');
  } finally {
    await c.put('/_config/httpd/allow_jsonp', 'false');
  }
});

test('/_config/httpd/port reports the port actually listened on', async () => {
  const r = await c.get('/_config/httpd/port');
  assert.equal(r.body, String(server.port));
});

test('Location follows X-Forwarded-Host behind a reverse proxy', async () => {
  const r = await c.put('/jp/proxied', { x: 1 }, { headers: { 'X-Forwarded-Host': 'couch.example.org' } });
  assert.equal(r.status, 201);
  assert.equal(r.headers.location, 'http://couch.example.org/jp/proxied');
  const direct = await c.put('/jp/direct', { x: 1 });
  assert.equal(direct.headers.location, `http://127.0.0.1:${server.port}/jp/direct`);
});

test('Location follows X-Forwarded-Proto: https and X-Forwarded-Ssl: on, or the headers [httpd] names', async () => {
  const host = { 'X-Forwarded-Host': 'couch.example.org' };
  const put = async (id: string, headers: Record<string, string>) => (await c.put(`/jp/${id}`, { x: 1 }, { headers: { ...host, ...headers } })).headers.location;
  assert.equal(await put('proto', { 'X-Forwarded-Proto': 'https' }), 'https://couch.example.org/jp/proto');
  assert.equal(await put('ssl', { 'X-Forwarded-Ssl': 'on' }), 'https://couch.example.org/jp/ssl');
  // Only https changes the scheme.
  assert.equal(await put('other', { 'X-Forwarded-Proto': 'gopher', 'X-Forwarded-Ssl': 'off' }), 'http://couch.example.org/jp/other');
  await c.put('/_config/httpd/x_forwarded_proto', 'X-Scheme', { headers: { 'X-Couch-Persist': 'false' } });
  try {
    assert.equal(await put('named', { 'X-Scheme': 'https' }), 'https://couch.example.org/jp/named');
    assert.equal(await put('unnamed', { 'X-Forwarded-Proto': 'https' }), 'http://couch.example.org/jp/unnamed');
  } finally {
    await c.del('/_config/httpd/x_forwarded_proto', { headers: { 'X-Couch-Persist': 'false' } });
  }
});
