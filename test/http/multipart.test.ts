/**
 * CouchDB's multipart attachment protocols over real HTTP: multipart/related document PUTs and
 * GETs, and multipart/mixed open_revs (what CouchDB's replicator reads).
 * `_bulk_get` answers multipart/mixed (or multipart/related) to a client that does not take JSON,
 * as CouchDB 3 chttpd_db bulk_get_ret_multipart does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { serverForFile } from '../helpers/server.js';
import { parseMultipart, boundaryOf } from '../../src/api/multipart.js';

const { server, c } = await serverForFile();

/** A raw request returning the body as bytes. */
function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(new URL(path.replace(/^\//, ''), server.url), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

function related(boundary: string, doc: unknown, parts: Buffer[]): Buffer {
  const pieces: Buffer[] = [Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(doc)}`)];
  for (const part of parts) pieces.push(Buffer.from(`\r\n--${boundary}\r\n\r\n`), part);
  pieces.push(Buffer.from(`\r\n--${boundary}--`));
  return Buffer.concat(pieces);
}

async function* once(buf: Buffer): AsyncIterable<Buffer> {
  yield buf;
}

/** The parts of a multipart body, each read whole. */
async function partsOf(contentType: string, body: Buffer): Promise<{ headers: Record<string, string>; body: Buffer }[]> {
  const out: { headers: Record<string, string>; body: Buffer }[] = [];
  for await (const part of parseMultipart(once(body), boundaryOf(contentType))) {
    out.push({ headers: part.headers, body: await part.buffer(1 << 26) });
  }
  return out;
}

const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const text = Buffer.from('hello multipart world\n'.repeat(200));

test('PUT multipart/related stores the document and its follows attachments', async () => {
  assert.equal((await c.put('/mp-put')).status, 201);
  const doc = { title: 'x', _attachments: {
    'bin.dat': { content_type: 'application/octet-stream', follows: true, length: binary.length },
    'note.txt': { content_type: 'text/plain', follows: true, length: text.length },
  } };
  const r = await send('PUT', '/mp-put/doc', { 'Content-Type': 'multipart/related; boundary="xyz"', Accept: 'application/json' }, related('xyz', doc, [binary, text]));
  assert.equal(r.status, 201, r.body.toString());
  const got = await c.get('/mp-put/doc');
  assert.equal(got.body.title, 'x');
  assert.equal(got.body._attachments['bin.dat'].length, 256);
  assert.equal(got.body._attachments['note.txt'].length, text.length);
  assert.deepEqual((await send('GET', '/mp-put/doc/bin.dat', {})).body, binary);
  assert.deepEqual((await send('GET', '/mp-put/doc/note.txt', {})).body, text);
});

test('malformed multipart bodies are a 400 and store nothing', async () => {
  assert.equal((await c.put('/mp-bad')).status, 201);
  const doc = { _attachments: { 'a.bin': { content_type: 'application/octet-stream', follows: true, length: 3 } } };
  const cases: [string, Record<string, string>, Buffer][] = [
    ['no boundary', { 'Content-Type': 'multipart/related' }, related('b1', doc, [Buffer.from('abc')])],
    ['boundary never found', { 'Content-Type': 'multipart/related; boundary="other"' }, related('b1', doc, [Buffer.from('abc')])],
    ['missing part', { 'Content-Type': 'multipart/related; boundary="b1"' }, related('b1', doc, [])],
    ['length mismatch', { 'Content-Type': 'multipart/related; boundary="b1"' }, related('b1', doc, [Buffer.from('abcdef')])],
    ['truncated', { 'Content-Type': 'multipart/related; boundary="b1"' }, related('b1', doc, [Buffer.from('abc')]).subarray(0, 80)],
  ];
  for (const [name, headers, body] of cases) {
    const r = await send('PUT', '/mp-bad/doc', { ...headers, Accept: 'application/json' }, body);
    assert.equal(r.status, 400, `${name}: ${r.status} ${r.body.toString()}`);
    assert.equal(JSON.parse(r.body.toString()).error, 'bad_request', name);
    assert.equal((await c.get('/mp-bad/doc')).status, 404, `${name} stored nothing`);
  }
  assert.equal((await c.get('/mp-bad')).body.doc_count, 0);
});

test('a document part that is not application/json is 415 bad_content_type (couch_doc:mp_parse_doc); parameters and case do not matter', async () => {
  assert.equal((await c.put('/mp-ctype')).status, 201);
  const headers = { 'Content-Type': 'multipart/related; boundary="b2"', Accept: 'application/json' };
  for (const [name, partHeaders] of [['no headers', ''], ['text/plain', 'Content-Type: text/plain\r\n']]) {
    const body = Buffer.from(`--b2\r\n${partHeaders}\r\n{"a":1}\r\n--b2--`);
    const r = await send('PUT', '/mp-ctype/doc', headers, body);
    assert.equal(r.status, 415, `${name}: ${r.body.toString()}`);
    assert.deepEqual(JSON.parse(r.body.toString()), { error: 'bad_content_type', reason: 'Content-Type must be application/json' }, name);
  }
  assert.equal((await c.get('/mp-ctype/doc')).status, 404);
  const ok = await send('PUT', '/mp-ctype/doc', headers, Buffer.from('--b2\r\nContent-Type: Application/JSON; charset=utf-8\r\n\r\n{"a":1}\r\n--b2--'));
  assert.equal(ok.status, 201, ok.body.toString());
});

test('a follows part must have the digest its entry gives: a mismatch is 400 content_md5_mismatch and stores nothing', async () => {
  assert.equal((await c.put('/mp-digest')).status, 201);
  const md5 = (b: Buffer) => `md5-${createHash('md5').update(b).digest('base64')}`;
  const put = (path: string, doc: unknown, part: Buffer) =>
    send('PUT', path, { 'Content-Type': 'multipart/related; boundary="d1"', Accept: 'application/json' }, related('d1', doc, [part]));
  const entry = (type: string, part: Buffer, digest: string) => ({ _attachments: { a: { content_type: type, follows: true, length: part.length, digest } } });
  // Stored as sent (binary) and compressed by the server (text): the digest is of the bytes sent.
  for (const [type, part] of [['application/octet-stream', binary], ['text/plain', text]] as const) {
    const wrong = await put(`/mp-digest/${type.length}`, entry(type, part, md5(Buffer.from('other'))), part);
    assert.equal(wrong.status, 400, type);
    assert.deepEqual(JSON.parse(wrong.body.toString()), { error: 'content_md5_mismatch', reason: 'Possible message corruption.' });
    const replicated = await put(`/mp-digest/r${type.length}?new_edits=false`, { _rev: '1-abc', ...entry(type, part, md5(Buffer.from('other'))) }, part);
    assert.equal(replicated.status, 400, `${type}, new_edits=false`);
    const right = await put(`/mp-digest/${type.length}`, entry(type, part, md5(part)), part);
    assert.equal(right.status, 201, `${type}: ${right.body.toString()}`);
    assert.deepEqual((await send('GET', `/mp-digest/${type.length}/a`, {})).body, part);
  }
  assert.equal((await c.get('/mp-digest')).body.doc_count, 2);
});

test('GET with Accept: multipart/related answers the document then its attachments', async () => {
  assert.equal((await c.put('/mp-get')).status, 201);
  const put = await c.put('/mp-get/doc', { n: 1, _attachments: {
    'bin.dat': { content_type: 'application/octet-stream', data: binary.toString('base64') },
    'note.txt': { content_type: 'text/plain', data: text.toString('base64') },
  } });
  assert.equal(put.status, 201);
  const r = await send('GET', '/mp-get/doc?attachments=true', { Accept: 'multipart/related' });
  assert.equal(r.status, 200);
  const type = String(r.headers['content-type']);
  assert.match(type, /^multipart\/related; boundary=/);
  assert.equal(r.headers.etag, `"${put.body.rev}"`);
  const parts = await partsOf(type, r.body);
  assert.equal(parts.length, 3);
  const json = JSON.parse(parts[0]!.body.toString());
  assert.equal(json.n, 1);
  assert.equal(json._attachments['bin.dat'].follows, true);
  assert.equal(json._attachments['bin.dat'].data, undefined);
  // Parts follow in the order the JSON lists the attachments.
  const names = Object.keys(json._attachments);
  const byName = new Map(names.map((name, i) => [name, parts[i + 1]!]));
  assert.deepEqual(byName.get('bin.dat')!.body, binary);
  // Compressed content travels as stored, and the JSON says so.
  const note = json._attachments['note.txt'];
  assert.equal(note.encoding, 'gzip');
  assert.equal(byName.get('note.txt')!.body.length, note.encoded_length);
  assert.deepEqual(gunzipSync(byName.get('note.txt')!.body), text);
});

test('open_revs with Accept: multipart/mixed nests multipart/related parts with attachments', async () => {
  assert.equal((await c.put('/mp-revs')).status, 201);
  const v1 = await c.put('/mp-revs/doc', { v: 1, _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: binary.toString('base64') } } });
  const v2 = await c.put('/mp-revs/doc', { _rev: v1.body.rev, v: 2, _attachments: { 'a.bin': { stub: true } } });
  const missing = `9-${'0'.repeat(32)}`;
  const revs = encodeURIComponent(JSON.stringify([v2.body.rev, missing]));
  // atts_since = v1: a.bin (revpos 1) is not sent again.
  const since = encodeURIComponent(JSON.stringify([v1.body.rev]));
  const lean = await send('GET', `/mp-revs/doc?open_revs=${revs}&atts_since=${since}`, { Accept: 'multipart/mixed' });
  assert.equal(lean.status, 200);
  const leanParts = await partsOf(String(lean.headers['content-type']), lean.body);
  assert.equal(leanParts.length, 2);
  assert.match(leanParts[0]!.headers['content-type']!, /^application\/json/);
  assert.equal(JSON.parse(leanParts[0]!.body.toString())._attachments['a.bin'].stub, true);
  assert.match(leanParts[1]!.headers['content-type']!, /error="true"/);
  assert.deepEqual(JSON.parse(leanParts[1]!.body.toString()), { missing });

  const full = await send('GET', `/mp-revs/doc?open_revs=${revs}&attachments=true`, { Accept: 'multipart/mixed' });
  const fullParts = await partsOf(String(full.headers['content-type']), full.body);
  assert.match(fullParts[0]!.headers['content-type']!, /^multipart\/related; boundary=/);
  const inner = await partsOf(fullParts[0]!.headers['content-type']!, fullParts[0]!.body);
  assert.equal(JSON.parse(inner[0]!.body.toString()).v, 2);
  assert.deepEqual(inner[1]!.body, binary);
});

test('attachments=true answers multipart/related unless the Accept header rules it out (mochiweb accepts_content_type)', async () => {
  assert.equal((await c.put('/mp-accept')).status, 201);
  const put = await c.put('/mp-accept/doc', { _attachments: {
    'bin.dat': { content_type: 'application/octet-stream', data: binary.toString('base64') },
  } });
  assert.equal(put.status, 201);
  // No Accept header is */*, which takes multipart/related, as does a browser's list.
  for (const accept of [undefined, '*/*', 'text/html,application/xhtml+xml,*/*;q=0.8', 'multipart/*']) {
    const r = await send('GET', '/mp-accept/doc?attachments=true', accept === undefined ? {} : { Accept: accept });
    assert.equal(r.status, 200, String(accept));
    assert.match(String(r.headers['content-type']), /^multipart\/related; boundary=/, String(accept));
    assert.equal(r.headers.etag, `"${put.body.rev}"`);
    const parts = await partsOf(String(r.headers['content-type']), r.body);
    assert.equal(JSON.parse(parts[0]!.body.toString())._attachments['bin.dat'].follows, true);
    assert.deepEqual(parts[1]!.body, binary);
  }
  // An Accept that leaves multipart/related out, or refuses it, gets the inline Base64 JSON.
  for (const accept of ['application/json', 'multipart/related;q=0, */*', 'text/plain']) {
    const r = await send('GET', '/mp-accept/doc?attachments=true', { Accept: accept });
    assert.equal(r.status, 200, accept);
    assert.doesNotMatch(String(r.headers['content-type']), /^multipart/, accept);
    assert.equal(JSON.parse(r.body.toString())._attachments['bin.dat'].data, binary.toString('base64'), accept);
  }
  // The ETag answers If-None-Match as for any document GET.
  const cached = await send('GET', '/mp-accept/doc?attachments=true', { 'If-None-Match': `"${put.body.rev}"` });
  assert.equal(cached.status, 304);
  assert.equal(cached.body.length, 0);
});

test('a multipart answer with nothing to follow is JSON whose stubs carry their encoding (couch_doc:len_doc_to_multi_part_stream)', async () => {
  assert.equal((await c.put('/mp-stubs')).status, 201);
  const v1 = await c.put('/mp-stubs/doc', { _attachments: { 'note.txt': { content_type: 'text/plain', data: text.toString('base64') } } });
  const v2 = await c.put('/mp-stubs/doc', { _rev: v1.body.rev, v: 2, _attachments: { 'note.txt': { stub: true } } });
  const since = encodeURIComponent(JSON.stringify([v1.body.rev]));
  const r = await send('GET', `/mp-stubs/doc?atts_since=${since}`, { Accept: 'multipart/related' });
  assert.equal(r.status, 200);
  assert.doesNotMatch(String(r.headers['content-type']), /^multipart/);
  assert.equal(r.headers.etag, `"${v2.body.rev}"`);
  const note = JSON.parse(r.body.toString())._attachments['note.txt'];
  assert.equal(note.stub, true);
  assert.equal(note.encoding, 'gzip');
  assert.equal(typeof note.encoded_length, 'number');
  // So is an open_revs part of multipart/mixed.
  const revs = encodeURIComponent(JSON.stringify([v2.body.rev]));
  const mixed = await send('GET', `/mp-stubs/doc?open_revs=${revs}&atts_since=${since}`, { Accept: 'multipart/mixed' });
  const parts = await partsOf(String(mixed.headers['content-type']), mixed.body);
  assert.match(parts[0]!.headers['content-type']!, /^application\/json/);
  assert.equal(JSON.parse(parts[0]!.body.toString())._attachments['note.txt'].encoding, 'gzip');
});

// ------------------------------------------------------------------ _bulk_get (chttpd_db bulk_get_ret_multipart)

/** A `_bulk_get` POST of `docs` with the given Accept header (none when undefined). */
function bulkGet(db: string, docs: unknown[], accept: string | undefined, query = '') {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(accept === undefined ? {} : { Accept: accept }) };
  return send('POST', `/${db}/_bulk_get${query}`, headers, Buffer.from(JSON.stringify({ docs })));
}

test('_bulk_get multipart: a part per revision, related with X-Doc-Id/X-Rev-Id when content follows, error parts bare (send_docs_multipart_bulk_get)', async () => {
  assert.equal((await c.put('/mp-bg')).status, 201);
  const withAtts = await c.put('/mp-bg/a', { v: 1, _attachments: {
    'bin.dat': { content_type: 'application/octet-stream', data: binary.toString('base64') },
    'note.txt': { content_type: 'text/plain', data: text.toString('base64') },
  } });
  const plain = await c.put('/mp-bg/b', { v: 'b' });
  const missing = `9-${'0'.repeat(32)}`;
  const r = await bulkGet('mp-bg', [
    { id: 'a' }, { id: 'b' }, { id: 'a', rev: missing }, { id: 'nope' }, { id: 'nope', rev: missing }, { rev: missing }, 'x', { id: '_bad' },
  ], 'multipart/mixed', '?revs=true');
  assert.equal(r.status, 200);
  const contentType = String(r.headers['content-type']);
  // bulk_get_multipart_boundary: a random boundary after `--`, quoted in the Content-Type.
  const boundary = /^multipart\/mixed; boundary="(--[0-9a-f]{32})"$/.exec(contentType)?.[1];
  assert.ok(boundary, contentType);
  const body = r.body.toString('latin1');
  // Every part starts with CRLF and the delimiter, the first too; the close ends with CRLF.
  assert.ok(body.startsWith(`\r\n--${boundary}\r\n`), JSON.stringify(body.slice(0, 80)));
  assert.ok(body.endsWith(`\r\n--${boundary}--\r\n`), JSON.stringify(body.slice(-80)));

  const parts = await partsOf(contentType, r.body);
  assert.equal(parts.length, 8);
  // A revision with attachments: multipart/related, the boundary unquoted, after X-Doc-Id and X-Rev-Id.
  const related = parts[0]!;
  assert.equal(related.headers['x-doc-id'], 'a');
  assert.equal(related.headers['x-rev-id'], withAtts.body.rev);
  assert.match(related.headers['content-type']!, /^multipart\/related; boundary=--[0-9a-f]{32}$/);
  assert.ok(body.includes(`X-Doc-Id: a\r\nX-Rev-Id: ${withAtts.body.rev}\r\nContent-Type: multipart/related; boundary=--`));
  const inner = await partsOf(related.headers['content-type']!, related.body);
  assert.equal(inner.length, 3);
  assert.match(inner[0]!.headers['content-type']!, /^application\/json$/);
  const doc = JSON.parse(inner[0]!.body.toString());
  assert.equal(doc._rev, withAtts.body.rev);
  assert.equal(doc._revisions.start, 1); // the query's options apply
  assert.equal(doc._attachments['bin.dat'].follows, true);
  const byName = new Map(inner.slice(1).map((p) => [/filename="([^"]+)"/.exec(p.headers['content-disposition']!)![1]!, p]));
  assert.deepEqual(byName.get('bin.dat')!.body, binary);
  assert.equal(byName.get('bin.dat')!.headers['content-length'], String(binary.length));
  // Compressed content goes as stored, as send_docs_multipart_bulk_get's SendEncodedAtts says.
  assert.equal(byName.get('note.txt')!.headers['content-encoding'], 'gzip');
  assert.equal(doc._attachments['note.txt'].encoding, 'gzip');
  assert.deepEqual(gunzipSync(byName.get('note.txt')!.body), text);

  // A revision without attachments: its JSON alone.
  assert.deepEqual(parts[1]!.headers, { 'content-type': 'application/json' });
  const b = JSON.parse(parts[1]!.body.toString());
  assert.equal(b._rev, plain.body.rev);
  assert.equal(b.v, 'b');

  const errors = parts.slice(2).map((p) => {
    assert.deepEqual(p.headers, { 'content-type': 'application/json; error="true"' });
    return JSON.parse(p.body.toString());
  });
  assert.deepEqual(errors, [
    // A missing revision names its rev only, as send_docs_multipart_bulk_get writes it.
    { rev: missing, error: 'not_found', reason: 'missing' },
    // An item's own error is the bare error object of the JSON answer.
    { id: 'nope', rev: 'undefined', error: 'not_found', reason: 'missing' },
    { rev: missing, error: 'not_found', reason: 'missing' },
    { id: null, rev: null, error: 'bad_request', reason: 'document id missed' },
    { id: null, rev: null, error: 'bad_request', reason: 'document must be a JSON object' },
    { id: '_bad', rev: null, error: 'bad_request', reason: 'Only reserved document ids may start with underscore.' },
  ]);
});

test('_bulk_get multipart: conflicts are a part each; atts_since leaves the JSON alone with stubs', async () => {
  assert.equal((await c.put('/mp-bg-revs')).status, 201);
  const h = (ch: string) => ch.repeat(32);
  const put = await c.post('/mp-bg-revs/_bulk_docs', { new_edits: false, docs: [
    { _id: 'c', _rev: `1-${h('a')}`, v: 'a' },
    { _id: 'c', _rev: `1-${h('b')}`, v: 'b' },
  ] });
  assert.equal(put.status, 201);
  const v1 = await c.put('/mp-bg-revs/d', { _attachments: { 'bin.dat': { content_type: 'application/octet-stream', data: binary.toString('base64') } } });
  const v2 = await c.put('/mp-bg-revs/d', { _rev: v1.body.rev, v: 2, _attachments: { 'bin.dat': { stub: true } } });
  const r = await bulkGet('mp-bg-revs', [{ id: 'c' }, { id: 'd', atts_since: [v1.body.rev] }, { id: 'd', rev: v1.body.rev }], 'multipart/mixed');
  const parts = await partsOf(String(r.headers['content-type']), r.body);
  assert.equal(parts.length, 4);
  assert.deepEqual(parts.slice(0, 2).map((p) => JSON.parse(p.body.toString())._rev).sort(), [`1-${h('a')}`, `1-${h('b')}`]);
  // Nothing follows past atts_since: the JSON part alone, its stub with its revpos.
  assert.deepEqual(parts[2]!.headers, { 'content-type': 'application/json' });
  const lean = JSON.parse(parts[2]!.body.toString());
  assert.equal(lean._rev, v2.body.rev);
  assert.equal(lean._attachments['bin.dat'].stub, true);
  // Without atts_since the content follows whether or not attachments=true is given.
  assert.equal(parts[3]!.headers['x-rev-id'], v1.body.rev);
  const inner = await partsOf(parts[3]!.headers['content-type']!, parts[3]!.body);
  assert.deepEqual(inner[1]!.body, binary);
});

test('_bulk_get answers multipart only to a client that takes no JSON (chttpd_db bulk_get_is_multipart)', async () => {
  assert.equal((await c.put('/mp-bg-accept')).status, 201);
  const put = await c.put('/mp-bg-accept/a', { v: 1 });
  const expectedJson = `{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"${put.body.rev}","v":1}}]}]}`;
  // No Accept header, */* and lists naming JSON all take JSON: the answer is the JSON one, unchanged.
  for (const accept of [undefined, '*/*', 'application/json', 'multipart/mixed, application/json', 'multipart/*, */*;q=0.5', 'text/plain']) {
    const r = await bulkGet('mp-bg-accept', [{ id: 'a' }], accept);
    assert.equal(r.status, 200, String(accept));
    assert.match(String(r.headers['content-type']), /^(application\/json|text\/plain)/, String(accept));
    assert.equal(r.body.toString().trimEnd(), expectedJson, String(accept));
  }
  // Multipart/mixed when taken; multipart/related (the outer type too) when only it is.
  for (const [accept, type] of [
    ['multipart/mixed', 'multipart/mixed'],
    ['multipart/*', 'multipart/mixed'],
    ['multipart/mixed, application/json;q=0', 'multipart/mixed'],
    ['multipart/related', 'multipart/related'],
    ['multipart/related, multipart/mixed;q=0', 'multipart/related'],
  ] as const) {
    const r = await bulkGet('mp-bg-accept', [{ id: 'a' }], accept);
    assert.equal(r.status, 200, accept);
    assert.match(String(r.headers['content-type']), new RegExp(`^${type}; boundary="--[0-9a-f]{32}"$`), accept);
    const parts = await partsOf(String(r.headers['content-type']), r.body);
    assert.equal(parts.length, 1, accept);
    assert.equal(JSON.parse(parts[0]!.body.toString())._rev, put.body.rev, accept);
  }
});

test('_bulk_get multipart with no docs is an empty body: no closing delimiter without an item', async () => {
  assert.equal((await c.put('/mp-bg-empty')).status, 201);
  const r = await bulkGet('mp-bg-empty', [], 'multipart/mixed');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^multipart\/mixed; boundary="--[0-9a-f]{32}"$/);
  assert.equal(r.body.length, 0);
  // The body's own errors stay JSON errors, before any part.
  const noDocs = await send('POST', '/mp-bg-empty/_bulk_get', { 'Content-Type': 'application/json', Accept: 'multipart/mixed' }, Buffer.from('{}'));
  assert.equal(noDocs.status, 400);
  assert.deepEqual(JSON.parse(noDocs.body.toString()), { error: 'bad_request', reason: "Missing JSON list of 'docs'." });
});
