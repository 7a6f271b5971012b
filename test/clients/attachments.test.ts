/**
 * Attachments through real clients against a real Settee process: PouchDB 9's HTTP adapter
 * (putAttachment, getAttachment, removeAttachment, inline `_attachments`, allDocs and changes
 * with attachments), replication with attachments between a local leveldb PouchDB and Settee
 * in both directions (updates and conflicts included), and nano 11 (attachment insert / get /
 * getAsStream / destroy, multipart insert and get). All client traffic goes through the
 * logging proxy, so a failure shows the exact requests the client sent.
 *
 * Digests: CouchDB's digest is the MD5 of the bytes it stores. For types matching
 * `[attachments] compressible_types` those are gzip'd, so the digest of a `text/*` attachment
 * is not the MD5 of its content (PouchDB's local digest is). Exact digest equality between a
 * local PouchDB and Settee is therefore checked on non-compressible types; for compressible
 * ones the Settee digest is checked against the gzip bytes Settee itself serves.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import nano from 'nano';
import { type TestServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { type LoggingProxy, type Exchange } from './proxy.js';
import { PouchFixture, failure } from './pouch-fixture.js';

let fx: PouchFixture;
let server: TestServer;
let proxy: LoggingProxy;
let raw: ReturnType<typeof client>;
let couch: nano.ServerScope;

before(async () => {
  fx = await PouchFixture.start('settee-attclients-');
  ({ server, proxy, raw } = fx);
  couch = nano(proxy.url);
});
after(async () => fx.close());

// ---------------------------------------------------------------------------------------------
// Content used throughout.

/** Every byte value once, in order. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
/** 2 MiB of random bytes. */
const BIG = randomBytes(2 * 1024 * 1024);
const EMPTY = Buffer.alloc(0);
const TEXT = Buffer.from('héllo wörld — ✓ ünïcödé\n'.repeat(200), 'utf8');
/** Attachment names with Unicode, spaces and slashes. */
const UNICODE_NAME = 'ünï cödé ✓ 日本語.bin';
const SLASH_NAME = 'dir/sub dir/fïlé ✓.bin';

const md5 = (b: Buffer) => `md5-${createHash('md5').update(b).digest('base64')}`;
const b64 = (b: Buffer) => b.toString('base64');

// ---------------------------------------------------------------------------------------------
// Helpers.




/** The URL path of one attachment, as CouchDB clients write it (segments encoded, `/` kept). */
function attPath(db: string, id: string, name: string, query = ''): string {
  return `/${encodeURIComponent(db)}/${encodeURIComponent(id)}/${name.split('/').map(encodeURIComponent).join('/')}${query}`;
}

interface Bytes { status: number; headers: IncomingHttpHeaders; body: Buffer }

/** A raw GET straight to Settee (no proxy), the body kept as bytes, no decompression. */
function getBytes(path: string, headers: Record<string, string> = {}): Promise<Bytes> {
  const url = new URL(path.replace(/^\//, ''), server.url);
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end();
  });
}

/** The attachment stubs of a document as Settee stores them (raw GET, no proxy). */
async function setteeStubs(db: string, id: string, rev?: string): Promise<Record<string, any>> {
  const r = await raw.get(`/${encodeURIComponent(db)}/${encodeURIComponent(id)}${rev ? `?rev=${rev}` : ''}`);
  assert.equal(r.status, 200, r.text);
  return r.body._attachments ?? {};
}

/**
 * Checks one attachment on Settee: the identity bytes served by a plain GET, the stub's
 * length and type, and the digest against the stored bytes (gzip'd ones when Settee
 * compressed the attachment, which a GET with Accept-Encoding: gzip serves as they are).
 */
async function assertOnSettee(db: string, id: string, name: string, expected: Buffer, type: string, rev?: string): Promise<any> {
  const stubs = await setteeStubs(db, id, rev);
  const stub = stubs[name];
  assert.ok(stub, `${id} has ${JSON.stringify(name)}: ${JSON.stringify(Object.keys(stubs))}`);
  assert.equal(stub.stub, true);
  assert.equal(stub.content_type, type);
  assert.equal(stub.length, expected.length, `${id}/${name} length`);
  const q = rev ? `?rev=${rev}` : '';
  const plain = await getBytes(attPath(db, id, name, q));
  assert.equal(plain.status, 200, plain.body.toString());
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.body.equals(expected), `${id}/${name}: ${plain.body.length} bytes served, ${expected.length} expected`);
  const stored = await getBytes(attPath(db, id, name, q), { 'Accept-Encoding': 'gzip' });
  assert.equal(stored.status, 200);
  if (stored.headers['content-encoding'] === 'gzip') {
    assert.ok(gunzipSync(stored.body).equals(expected), `${id}/${name}: gzip bytes decode to the content`);
    assert.equal(stub.digest, md5(stored.body), `${id}/${name}: digest is the MD5 of the stored (gzip) bytes`);
  } else {
    assert.ok(stored.body.equals(expected));
    assert.equal(stub.digest, md5(expected), `${id}/${name}: digest is the MD5 of the content`);
  }
  return stub;
}

/** PouchDB's getAttachment result (a Buffer in Node) compared byte for byte. */
async function assertPouchBytes(db: any, id: string, name: string, expected: Buffer, opts: any = {}): Promise<void> {
  const got = await db.getAttachment(id, name, opts);
  assert.ok(Buffer.isBuffer(got), `getAttachment(${id}, ${name}) gives a Buffer`);
  assert.ok(got.equals(expected), `getAttachment(${id}, ${JSON.stringify(name)}, ${JSON.stringify(opts)}): ${got.length} bytes, ${expected.length} expected`);
}

/** The exchanges (method, path, status) made since `from` whose path starts with `/db/`. */
function traffic(db: string, from: number): Exchange[] {
  return proxy.log.slice(from).filter((e) => e.path.startsWith(`/${db}/`) || e.path.startsWith(`/${db}?`));
}
const line = (e: Exchange) => `${e.method} ${e.path} -> ${e.status}`;

/** Both sides' leaves of one document. */
async function leaves(db: any, id: string): Promise<string[]> {
  const res = await db.get(id, { open_revs: 'all' });
  return res.map((l: any) => (l.ok ? l.ok._rev + (l.ok._deleted ? ' deleted' : '') : `missing ${l.missing}`)).sort();
}

/** `_all_docs` rows (id and winning rev). */
async function rows(db: any) {
  const res = await db.allDocs();
  return res.rows.map((r: any) => [r.id, r.value.rev]);
}

// ---------------------------------------------------------------------------------------------
// PouchDB, HTTP adapter.

test('PouchDB putAttachment / getAttachment: text, all 256 byte values, 2 MiB random, empty', { timeout: 60000 }, async () => {
  const dbName = 'att-pouch-put';
  const db = await fx.remote(dbName);
  // No rev: the document is created by the upload.
  const r1 = await db.putAttachment('doc', 'hello.txt', TEXT, 'text/plain');
  assert.equal(r1.ok, true, proxy.show('/att-pouch-put/doc'));
  assert.equal(r1.id, 'doc');
  assert.match(r1.rev, /^1-[0-9a-f]{32}$/);
  const r2 = await db.putAttachment('doc', 'all-bytes.bin', r1.rev, ALL_BYTES, 'application/octet-stream');
  assert.match(r2.rev, /^2-/);
  const r3 = await db.putAttachment('doc', 'big.bin', r2.rev, BIG, 'application/octet-stream');
  assert.match(r3.rev, /^3-/, proxy.show('big.bin').slice(0, 2000));
  const r4 = await db.putAttachment('doc', 'empty.bin', r3.rev, EMPTY, 'application/octet-stream');
  assert.match(r4.rev, /^4-/, proxy.show('empty.bin'));

  // Byte for byte through PouchDB (node-fetch asks for gzip and decodes it).
  await assertPouchBytes(db, 'doc', 'hello.txt', TEXT);
  await assertPouchBytes(db, 'doc', 'all-bytes.bin', ALL_BYTES);
  await assertPouchBytes(db, 'doc', 'big.bin', BIG);
  await assertPouchBytes(db, 'doc', 'empty.bin', EMPTY);
  // An older revision's attachment, by rev.
  await assertPouchBytes(db, 'doc', 'all-bytes.bin', ALL_BYTES, { rev: r2.rev });

  // Stubs as PouchDB sees them: revpos is the revision that uploaded each one.
  const doc = await db.get('doc');
  assert.equal(doc._rev, r4.rev);
  assert.deepEqual(Object.keys(doc._attachments).sort(), ['all-bytes.bin', 'big.bin', 'empty.bin', 'hello.txt']);
  const want: Record<string, [number, Buffer]> = { 'hello.txt': [1, TEXT], 'all-bytes.bin': [2, ALL_BYTES], 'big.bin': [3, BIG], 'empty.bin': [4, EMPTY] };
  for (const [name, [revpos, bytes]] of Object.entries(want)) {
    const s = doc._attachments[name];
    assert.equal(s.stub, true, name);
    assert.equal(s.revpos, revpos, `${name} revpos`);
    assert.equal(s.length, bytes.length, `${name} length`);
    assert.match(s.digest, /^md5-[A-Za-z0-9+/]{22}==$/);
  }
  // Digests: of the content for binary types; of the stored gzip bytes for text/plain.
  assert.equal(doc._attachments['all-bytes.bin'].digest, md5(ALL_BYTES));
  assert.equal(doc._attachments['big.bin'].digest, md5(BIG));
  assert.equal(doc._attachments['empty.bin'].digest, md5(EMPTY));
  await assertOnSettee(dbName, 'doc', 'hello.txt', TEXT, 'text/plain');
  await assertOnSettee(dbName, 'doc', 'empty.bin', EMPTY, 'application/octet-stream');
  await assertOnSettee(dbName, 'doc', 'big.bin', BIG, 'application/octet-stream');

  // PouchDB sent Content-Type and the raw bytes, with ?rev= after the first upload.
  const puts = proxy.log.filter((e) => e.method === 'PUT' && e.path.startsWith(`/${dbName}/doc/`));
  assert.deepEqual(puts.map((e) => [e.path.replace(/\?rev=.*/, '?rev=…'), e.requestHeaders['content-type'], e.status]), [
    [`/${dbName}/doc/hello.txt`, 'text/plain', 201],
    [`/${dbName}/doc/all-bytes.bin?rev=…`, 'application/octet-stream', 201],
    [`/${dbName}/doc/big.bin?rev=…`, 'application/octet-stream', 201],
    [`/${dbName}/doc/empty.bin?rev=…`, 'application/octet-stream', 201],
  ]);

  // A stale rev is a conflict; a missing attachment is 404.
  const stale = await failure(db.putAttachment('doc', 'x.bin', r1.rev, ALL_BYTES, 'application/octet-stream'));
  assert.equal(stale.status, 409);
  assert.equal(stale.name, 'conflict');
  const missing = await failure(db.getAttachment('doc', 'nope.bin'));
  assert.equal(missing.status, 404);
});

test('PouchDB removeAttachment', async () => {
  const db = await fx.remote('att-pouch-remove');
  const r1 = await db.putAttachment('doc', 'a.bin', ALL_BYTES, 'application/octet-stream');
  const r2 = await db.putAttachment('doc', 'b.bin', r1.rev, BIG.subarray(0, 1000), 'application/octet-stream');
  const removed = await db.removeAttachment('doc', 'a.bin', r2.rev);
  assert.equal(removed.ok, true, proxy.show('/att-pouch-remove/doc/a.bin'));
  assert.match(removed.rev, /^3-/);
  const doc = await db.get('doc');
  assert.deepEqual(Object.keys(doc._attachments), ['b.bin']);
  assert.equal(doc._attachments['b.bin'].revpos, 2);
  const gone = await failure(db.getAttachment('doc', 'a.bin'));
  assert.equal(gone.status, 404);
  // Still readable in the revision that had it.
  await assertPouchBytes(db, 'doc', 'a.bin', ALL_BYTES, { rev: r2.rev });
  // Removing the last attachment leaves a document with no _attachments.
  const last = await db.removeAttachment('doc', 'b.bin', removed.rev);
  const bare = await db.get('doc');
  assert.equal(bare._rev, last.rev);
  assert.equal(bare._attachments, undefined, JSON.stringify(bare));
  // Removing with a stale rev: 409.
  const stale = await failure(db.removeAttachment('doc', 'b.bin', r2.rev));
  assert.equal(stale.status, 409);
});

test('PouchDB get with attachments: true (base64) and attachments + binary (Buffers)', async () => {
  const db = await fx.remote('att-pouch-get');
  const put = await db.put({
    _id: 'doc', kind: 'inline',
    _attachments: {
      'all-bytes.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES) },
      'text.txt': { content_type: 'text/plain', data: b64(TEXT) },
      'empty.bin': { content_type: 'application/octet-stream', data: '' },
      [UNICODE_NAME]: { content_type: 'image/png', data: b64(BIG.subarray(0, 70000)) },
    },
  });
  assert.equal(put.ok, true);

  const withData = await db.get('doc', { attachments: true });
  assert.equal(withData.kind, 'inline');
  const atts = withData._attachments;
  assert.deepEqual(Object.keys(atts).sort(), ['all-bytes.bin', 'empty.bin', 'text.txt', UNICODE_NAME].sort());
  assert.equal(atts['all-bytes.bin'].data, b64(ALL_BYTES));
  assert.equal(atts['text.txt'].data, b64(TEXT));
  assert.equal(atts['empty.bin'].data, '');
  assert.equal(atts[UNICODE_NAME].data, b64(BIG.subarray(0, 70000)));
  assert.equal(atts['all-bytes.bin'].stub, undefined);
  assert.equal(atts['all-bytes.bin'].digest, md5(ALL_BYTES));
  assert.equal(atts[UNICODE_NAME].content_type, 'image/png');

  const binary = await db.get('doc', { attachments: true, binary: true });
  for (const [name, bytes] of [['all-bytes.bin', ALL_BYTES], ['text.txt', TEXT], ['empty.bin', EMPTY], [UNICODE_NAME, BIG.subarray(0, 70000)]] as const) {
    const data = binary._attachments[name].data;
    assert.ok(Buffer.isBuffer(data), `${name}: a Buffer`);
    assert.ok(data.equals(bytes), `${name}: ${data.length} bytes, ${bytes.length} expected`);
  }
  // The HTTP adapter fetched each attachment by name with ?rev= (the Unicode name encoded).
  const fetched = proxy.log.filter((e) => e.method === 'GET' && e.path.startsWith('/att-pouch-get/doc/'));
  assert.ok(fetched.some((e) => e.path === `/att-pouch-get/doc/${encodeURIComponent(UNICODE_NAME)}?rev=${put.rev}` && e.status === 200), fetched.map(line).join('\n'));
  assert.ok(fetched.every((e) => e.status === 200), fetched.map(line).join('\n'));

  // bulkGet with attachments: PouchDB asks _bulk_get?attachments=true and reads inline base64.
  const bg = await db.bulkGet({ docs: [{ id: 'doc', rev: put.rev }], attachments: true });
  assert.ok(proxy.log.some((e) => e.path === '/att-pouch-get/_bulk_get?attachments=true' && e.status === 200), proxy.show('_bulk_get'));
  const bgDoc = bg.results[0].docs[0].ok;
  assert.ok(bgDoc, JSON.stringify(bg).slice(0, 500));
  assert.equal(bgDoc._attachments['all-bytes.bin'].data, b64(ALL_BYTES));
  assert.equal(bgDoc._attachments['text.txt'].data, b64(TEXT));
  assert.equal(bgDoc._attachments['empty.bin'].data, '');
  assert.equal(bgDoc._attachments[UNICODE_NAME].data, b64(BIG.subarray(0, 70000)));
  const bgBin = await db.bulkGet({ docs: [{ id: 'doc' }], attachments: true, binary: true });
  const bgData = bgBin.results[0].docs[0].ok._attachments['all-bytes.bin'].data;
  assert.ok(Buffer.isBuffer(bgData) && bgData.equals(ALL_BYTES), 'bulkGet binary: a Buffer with the bytes');
});

test('PouchDB bulkDocs with _attachments base64 data, stubs kept, revpos', async () => {
  const dbName = 'att-pouch-bulk';
  const db = await fx.remote(dbName);
  const res = await db.bulkDocs([
    { _id: 'a', _attachments: { 'all.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES) } } },
    { _id: 'b', _attachments: { 'note.txt': { content_type: 'text/plain', data: b64(TEXT) }, 'empty.bin': { content_type: 'application/octet-stream', data: '' } } },
    // Buffers: PouchDB converts them to base64 before POSTing.
    { _id: 'c', _attachments: { [SLASH_NAME]: { content_type: 'application/octet-stream', data: BIG.subarray(0, 100000) } } },
  ]);
  assert.equal(res.length, 3);
  assert.ok(res.every((r: any) => r.ok === true), JSON.stringify(res) + proxy.show(`/${dbName}/_bulk_docs`));
  const bulk = proxy.log.find((e) => e.path === `/${dbName}/_bulk_docs`)!;
  assert.match(bulk.requestBody, /"_attachments":\{"all\.bin":\{"data":"AAECAwQF/, 'inline base64 data was sent');

  await assertOnSettee(dbName, 'a', 'all.bin', ALL_BYTES, 'application/octet-stream');
  await assertOnSettee(dbName, 'b', 'note.txt', TEXT, 'text/plain');
  await assertOnSettee(dbName, 'b', 'empty.bin', EMPTY, 'application/octet-stream');
  await assertOnSettee(dbName, 'c', SLASH_NAME, BIG.subarray(0, 100000), 'application/octet-stream');
  await assertPouchBytes(db, 'c', SLASH_NAME, BIG.subarray(0, 100000));

  // Second revision: one attachment kept as a stub, one replaced, one added.
  const b = await db.get('b');
  const res2 = await db.bulkDocs([{
    ...b, edited: true,
    _attachments: {
      'note.txt': b._attachments['note.txt'],
      'empty.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES) },
      'new.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES.subarray(10, 20)) },
    },
  }]);
  assert.equal(res2[0].ok, true, JSON.stringify(res2));
  const b2 = await db.get('b');
  assert.equal(b2.edited, true);
  assert.equal(b2._attachments['note.txt'].revpos, 1);
  assert.equal(b2._attachments['note.txt'].digest, b._attachments['note.txt'].digest);
  assert.equal(b2._attachments['empty.bin'].revpos, 2);
  assert.equal(b2._attachments['empty.bin'].length, 256);
  assert.equal(b2._attachments['new.bin'].revpos, 2);
  await assertPouchBytes(db, 'b', 'note.txt', TEXT);
  await assertPouchBytes(db, 'b', 'empty.bin', ALL_BYTES);
  await assertPouchBytes(db, 'b', 'new.bin', ALL_BYTES.subarray(10, 20));
  // The first revision still has the empty attachment.
  await assertPouchBytes(db, 'b', 'empty.bin', EMPTY, { rev: b._rev });

  // Replication-style write (new_edits=false) with inline data and a revision history.
  const nw = await db.bulkDocs([{
    _id: 'd', _rev: '2-bbbb', _revisions: { start: 2, ids: ['bbbb', 'aaaa'] },
    _attachments: { 'x.bin': { content_type: 'application/octet-stream', revpos: 2, digest: md5(ALL_BYTES), data: b64(ALL_BYTES) } },
  }], { new_edits: false });
  assert.deepEqual(nw, []);
  const d = await db.get('d', { revs: true });
  assert.equal(d._rev, '2-bbbb');
  assert.equal(d._attachments['x.bin'].revpos, 2);
  assert.equal(d._attachments['x.bin'].digest, md5(ALL_BYTES));
  await assertPouchBytes(db, 'd', 'x.bin', ALL_BYTES);
});

test('PouchDB allDocs({include_docs, attachments}) and changes({include_docs, attachments})', async () => {
  const dbName = 'att-pouch-feeds';
  const db = await fx.remote(dbName);
  await db.bulkDocs([
    { _id: 'a', n: 1, _attachments: { 'all.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES) } } },
    { _id: 'b', n: 2, _attachments: { 'note.txt': { content_type: 'text/plain', data: b64(TEXT) }, 'empty.bin': { content_type: 'application/octet-stream', data: '' } } },
    { _id: 'c', n: 3 },
  ]);
  const r = await db.putAttachment('a', SLASH_NAME, (await db.get('a'))._rev, BIG.subarray(0, 50000), 'application/octet-stream');
  assert.equal(r.ok, true);

  const expected: Record<string, Record<string, Buffer>> = {
    a: { 'all.bin': ALL_BYTES, [SLASH_NAME]: BIG.subarray(0, 50000) },
    b: { 'note.txt': TEXT, 'empty.bin': EMPTY },
  };
  const check = (doc: any, where: string) => {
    const want = expected[doc._id];
    if (!want) {
      assert.equal(doc._attachments, undefined, `${where}: ${doc._id} has no attachments`);
      return;
    }
    assert.deepEqual(Object.keys(doc._attachments).sort(), Object.keys(want).sort(), where);
    for (const [name, bytes] of Object.entries(want)) {
      const att = doc._attachments[name];
      assert.equal(att.stub, undefined, `${where}: ${doc._id}/${name} is not a stub`);
      assert.equal(att.data, b64(bytes), `${where}: ${doc._id}/${name} data (identity bytes, even when stored gzip'd)`);
      assert.equal(typeof att.digest, 'string');
    }
  };

  const all = await db.allDocs({ include_docs: true, attachments: true });
  assert.deepEqual(all.rows.map((row: any) => row.id), ['a', 'b', 'c']);
  for (const row of all.rows) check(row.doc, 'allDocs');
  assert.ok(proxy.log.some((e) => e.path.startsWith(`/${dbName}/_all_docs?`) && e.path.includes('attachments=true')), proxy.show('_all_docs'));

  const binary = await db.allDocs({ include_docs: true, attachments: true, binary: true });
  const bin = binary.rows[0].doc._attachments['all.bin'].data;
  assert.ok(Buffer.isBuffer(bin) && bin.equals(ALL_BYTES), 'allDocs binary: a Buffer with the bytes');

  // Without attachments: stubs only.
  const stubs = await db.allDocs({ include_docs: true });
  assert.equal(stubs.rows[0].doc._attachments['all.bin'].stub, true);
  assert.equal(stubs.rows[0].doc._attachments['all.bin'].data, undefined);

  const changes = await db.changes({ include_docs: true, attachments: true });
  assert.deepEqual(changes.results.map((c: any) => c.id).sort(), ['a', 'b', 'c']);
  for (const c of changes.results) check(c.doc, 'changes');
  assert.ok(proxy.log.some((e) => e.path.startsWith(`/${dbName}/_changes?`) && e.path.includes('attachments=true')), proxy.show('_changes'));

  const since = await db.changes({ include_docs: true, attachments: true, binary: true, since: changes.results.find((c: any) => c.id === 'c').seq });
  assert.deepEqual(since.results.map((c: any) => c.id), ['a']);
  const big = since.results[0].doc._attachments[SLASH_NAME].data;
  assert.ok(Buffer.isBuffer(big) && big.equals(BIG.subarray(0, 50000)), 'changes binary: a Buffer with the bytes');
});

test('PouchDB: Unicode and / in attachment names, on normal and design documents', async () => {
  const dbName = 'att-pouch-names';
  const db = await fx.remote(dbName);
  const names = [UNICODE_NAME, SLASH_NAME, 'a/b', 'x%2Fy ?#&+=.bin', 'emoji 🙂/😀 .bin'];
  for (const id of ['plain', '_design/dd', 'doc/with slash é']) {
    let rev: string | undefined;
    for (const [i, name] of names.entries()) {
      const bytes = Buffer.concat([ALL_BYTES, Buffer.from(`${id}:${name}`)]);
      const r = rev === undefined
        ? await db.putAttachment(id, name, bytes, 'application/octet-stream')
        : await db.putAttachment(id, name, rev, bytes, 'application/octet-stream');
      assert.equal(r.ok, true, `${id} / ${name}\n${proxy.show().split('\n').slice(-2).join('\n')}`);
      assert.equal(r.id, id);
      rev = r.rev;
      assert.match(rev!, new RegExp(`^${i + 1}-`));
    }
    const doc = await db.get(id);
    assert.deepEqual(Object.keys(doc._attachments).sort(), [...names].sort(), `${id}: ${JSON.stringify(Object.keys(doc._attachments))}`);
    for (const name of names) {
      const bytes = Buffer.concat([ALL_BYTES, Buffer.from(`${id}:${name}`)]);
      await assertPouchBytes(db, id, name, bytes);
      assert.equal(doc._attachments[name].digest, md5(bytes), `${id} / ${name} digest`);
    }
    const removed = await db.removeAttachment(id, SLASH_NAME, rev);
    assert.equal(removed.ok, true, proxy.show(`/${dbName}/`).split('\n').slice(-2).join('\n'));
    assert.ok(!(SLASH_NAME in (await db.get(id))._attachments));
  }
  // The wire: the name's segments encoded one by one, the slashes left as slashes.
  assert.ok(proxy.log.some((e) => e.method === 'PUT' && e.path.startsWith(`/${dbName}/plain/dir/sub%20dir/f%C3%AF`)), proxy.show('/plain/dir'));
});

// ---------------------------------------------------------------------------------------------
// Replication between a local leveldb PouchDB and Settee.

/** Attachments put in `att-repl-*` documents: [doc, name, bytes, type]. */
const REPL_SET: Array<[string, string, Buffer, string]> = [
  ['bin', 'all-bytes.bin', ALL_BYTES, 'application/octet-stream'],
  ['bin', 'big.bin', BIG, 'application/octet-stream'],
  ['bin', 'empty.bin', EMPTY, 'application/octet-stream'],
  ['txt', 'note.txt', TEXT, 'text/plain'],
  ['names', UNICODE_NAME, ALL_BYTES.subarray(100), 'image/png'],
  ['names', SLASH_NAME, ALL_BYTES.subarray(0, 100), 'application/octet-stream'],
];
function replDocs(): any[] {
  const docs = new Map<string, any>();
  for (const [id, name, bytes, type] of REPL_SET) {
    const d = docs.get(id) ?? { _id: id, _attachments: {} };
    d._attachments[name] = { content_type: type, data: bytes };
    docs.set(id, d);
  }
  return [...docs.values()];
}

/** Every REPL_SET attachment identical on both sides: bytes, lengths, revs; digests as explained. */
async function assertReplicated(ldb: any, rdb: any, dbName: string): Promise<void> {
  assert.deepEqual(await rows(ldb), await rows(rdb));
  for (const [id, name, bytes, type] of REPL_SET) {
    await assertPouchBytes(ldb, id, name, bytes);
    const remoteStub = await assertOnSettee(dbName, id, name, bytes, type);
    const localStub = (await ldb.get(id))._attachments[name];
    assert.equal(localStub.length, bytes.length);
    assert.equal(localStub.content_type, type);
    assert.equal(localStub.digest, md5(bytes), `local ${id}/${name} digest`);
    // No revpos comparison: PouchDB's leveldb adapter sets the revpos of every attachment it
    // receives with data to the revision's position (pouchdb 9, lib/index.js `att.revpos =`).
    assert.ok(remoteStub.revpos >= 1);
    if (!type.startsWith('text/')) assert.equal(remoteStub.digest, localStub.digest, `${id}/${name}: same digest on both sides`);
  }
}

test('replication local → Settee (push) with attachments', { timeout: 60000 }, async () => {
  const dbName = 'att-repl-push';
  const rdb = await fx.remote(dbName);
  const ldb = fx.local('push-local');
  const put = await ldb.bulkDocs(replDocs());
  assert.ok(put.every((r: any) => r.ok), JSON.stringify(put));

  const from = proxy.log.length;
  const res = await ldb.replicate.to(rdb);
  assert.equal(res.ok, true);
  assert.equal(res.docs_written, 3);
  assert.equal(res.doc_write_failures, 0, JSON.stringify(res.errors));
  await assertReplicated(ldb, rdb, dbName);
  for (const id of ['bin', 'txt', 'names']) {
    assert.deepEqual((await rdb.get(id, { revs: true }))._revisions, (await ldb.get(id, { revs: true }))._revisions);
  }
  // The push wrote inline base64 data through _bulk_docs with new_edits=false.
  const seen = traffic(dbName, from);
  const bulk = seen.filter((e) => e.method === 'POST' && e.path === `/${dbName}/_bulk_docs`);
  assert.ok(bulk.length >= 1 && bulk.every((e) => e.status === 201), seen.map(line).join('\n'));
  // The proxy keeps only the first 2000 characters of a body, and PouchDB orders the documents
  // as it likes: look for inline data of whichever attachment comes first, and new_edits=false.
  assert.ok(bulk.some((e) => /"data":"[A-Za-z0-9+/]{8}/.test(e.requestBody)), bulk.map((e) => e.requestBody.slice(0, 300)).join('\n'));
  assert.ok(bulk.every((e) => /"new_edits":\s*false/.test(e.requestBody) || e.requestBody.length >= 2000), bulk.map((e) => e.requestBody.slice(0, 300)).join('\n'));

  // A second push writes nothing.
  const again = await ldb.replicate.to(rdb);
  assert.equal(again.docs_written, 0);
});

test('replication Settee → local (pull) with attachments; which requests PouchDB makes', { timeout: 60000 }, async (t) => {
  const dbName = 'att-repl-pull';
  const rdb = await fx.remote(dbName);
  // Written through the HTTP adapter: standalone uploads and inline data.
  let rev: string | undefined;
  for (const [id, name, bytes, type] of REPL_SET.filter(([id]) => id === 'bin')) {
    const r = rev === undefined ? await rdb.putAttachment(id, name, bytes, type) : await rdb.putAttachment(id, name, rev, bytes, type);
    rev = r.rev;
  }
  const rest = replDocs().filter((d) => d._id !== 'bin');
  const put = await rdb.bulkDocs(rest);
  assert.ok(put.every((r: any) => r.ok), JSON.stringify(put));

  const ldb = fx.local('pull-local');
  const from = proxy.log.length;
  const res = await ldb.replicate.from(rdb);
  assert.equal(res.ok, true);
  assert.equal(res.docs_written, 3);
  assert.equal(res.doc_write_failures, 0, JSON.stringify(res.errors));
  await assertReplicated(ldb, rdb, dbName);
  for (const id of ['bin', 'txt', 'names']) {
    assert.deepEqual((await ldb.get(id, { revs: true }))._revisions, (await rdb.get(id, { revs: true }))._revisions);
  }

  // What PouchDB 9 asked for: _bulk_get (revs, latest; no attachments=true), then each
  // attachment with a standalone GET; no GET with open_revs.
  const seen = traffic(dbName, from);
  t.diagnostic(`pull requests:\n${seen.map(line).join('\n')}`);
  const bulkGet = seen.filter((e) => e.path.startsWith(`/${dbName}/_bulk_get`));
  assert.ok(bulkGet.length >= 1 && bulkGet.every((e) => e.status === 200), seen.map(line).join('\n'));
  assert.ok(!seen.some((e) => e.path.includes('open_revs=')), seen.map(line).join('\n'));
  const attGets = seen.filter((e) => e.method === 'GET' && /^\/att-repl-pull\/(bin|txt|names)\/./.test(e.path));
  assert.equal(attGets.length, REPL_SET.length, seen.map(line).join('\n'));
  assert.ok(attGets.every((e) => e.status === 200), attGets.map(line).join('\n'));
});

test('replication both ways: attachments updated on either side, removed, and a conflict', { timeout: 90000 }, async (t) => {
  const dbName = 'att-repl-sync';
  const rdb = await fx.remote(dbName);
  const ldb = fx.local('sync-local');
  const v = (tag: string, size = 300) => Buffer.concat([Buffer.from(`${tag}:`), randomBytes(size)]);
  const content: Record<string, Buffer> = { lu: v('lu1'), ru: v('ru1'), shared: v('shared1', 5000), gone: v('gone') };
  await ldb.bulkDocs([
    { _id: 'lu', _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: content.lu } } },
    { _id: 'shared', _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: content.shared } } },
  ]);
  await rdb.bulkDocs([
    { _id: 'ru', _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: content.ru } } },
    { _id: 'rm', _attachments: { 'gone.bin': { content_type: 'application/octet-stream', data: content.gone }, 'kept.txt': { content_type: 'text/plain', data: TEXT } } },
  ]);
  const s1 = await ldb.sync(rdb);
  assert.equal(s1.push.docs_written, 2);
  assert.equal(s1.pull.docs_written, 2);
  assert.deepEqual(await rows(ldb), await rows(rdb));

  // Updates, one side per document: locally lu's attachment is replaced; on Settee ru's is
  // replaced and another added, and one of rm's two attachments is removed.
  const lu2 = v('lu2', 4000);
  await ldb.putAttachment('lu', 'a.bin', (await ldb.get('lu'))._rev, lu2, 'application/octet-stream');
  const ru2 = v('ru2', 4000);
  const ruPut = await rdb.putAttachment('ru', 'a.bin', (await rdb.get('ru'))._rev, ru2, 'application/octet-stream');
  await rdb.putAttachment('ru', SLASH_NAME, ruPut.rev, ALL_BYTES, 'application/octet-stream');
  await rdb.removeAttachment('rm', 'gone.bin', (await rdb.get('rm'))._rev);

  const from = proxy.log.length;
  const s2 = await ldb.sync(rdb);
  assert.equal(s2.push.doc_write_failures, 0);
  assert.equal(s2.pull.doc_write_failures, 0);
  t.diagnostic(`sync requests:\n${traffic(dbName, from).map(line).join('\n')}`);
  assert.deepEqual(await rows(ldb), await rows(rdb));
  for (const side of [ldb, rdb]) {
    await assertPouchBytes(side, 'lu', 'a.bin', lu2);
    await assertPouchBytes(side, 'ru', 'a.bin', ru2);
    await assertPouchBytes(side, 'ru', SLASH_NAME, ALL_BYTES);
    await assertPouchBytes(side, 'rm', 'kept.txt', TEXT);
    assert.deepEqual(Object.keys((await side.get('rm'))._attachments), ['kept.txt']);
    assert.equal((await failure(side.getAttachment('rm', 'gone.bin'))).status, 404);
  }
  for (const id of ['lu', 'ru']) {
    const [l, r] = [await ldb.get(id), await rdb.get(id)];
    for (const name of Object.keys(r._attachments)) {
      assert.equal(l._attachments[name].digest, r._attachments[name].digest, `${id}/${name} digest`);
    }
  }
  await assertOnSettee(dbName, 'lu', 'a.bin', lu2, 'application/octet-stream');
  await assertOnSettee(dbName, 'rm', 'kept.txt', TEXT, 'text/plain');

  // A conflict: the same attachment replaced differently on each side.
  const base = (await ldb.get('shared'))._rev;
  assert.equal((await rdb.get('shared'))._rev, base);
  const L = v('shared-local', 9000);
  const R = v('shared-remote', 7000);
  const lEdit = await ldb.putAttachment('shared', 'a.bin', base, L, 'application/octet-stream');
  const rEdit = await rdb.putAttachment('shared', 'a.bin', base, R, 'application/octet-stream');
  // Pull, then push (not sync's concurrent directions): PouchDB fetches a pulled revision's
  // attachment without ?rev=, i.e. Settee's winner, which is the pulled revision only while
  // Settee has no other leaf.
  const pull = await ldb.replicate.from(rdb);
  assert.equal(pull.doc_write_failures, 0);
  const push = await ldb.replicate.to(rdb);
  assert.equal(push.doc_write_failures, 0);

  const bytesOf: Record<string, Buffer> = { [lEdit.rev]: L, [rEdit.rev]: R };
  const winner = [lEdit.rev, rEdit.rev].sort().at(-1)!;
  const loser = winner === lEdit.rev ? rEdit.rev : lEdit.rev;
  assert.deepEqual(await leaves(rdb, 'shared'), [lEdit.rev, rEdit.rev].sort(), proxy.show(`/${dbName}/shared`));
  assert.deepEqual(await leaves(ldb, 'shared'), [lEdit.rev, rEdit.rev].sort());
  for (const [label, side] of [['local', ldb], ['Settee', rdb]] as const) {
    const doc = await side.get('shared', { conflicts: true });
    assert.equal(doc._rev, winner, label);
    assert.deepEqual(doc._conflicts, [loser], label);
    await assertPouchBytes(side, 'shared', 'a.bin', bytesOf[winner]!);
    for (const rev of [lEdit.rev, rEdit.rev]) {
      await assertPouchBytes(side, 'shared', 'a.bin', bytesOf[rev]!, { rev });
      const atRev = await side.get('shared', { rev });
      assert.equal(atRev._attachments['a.bin'].digest, md5(bytesOf[rev]!), `${label} ${rev} digest`);
      assert.equal(atRev._attachments['a.bin'].revpos, parseInt(rev, 10), `${label} ${rev} revpos`);
      assert.equal(atRev._attachments['a.bin'].length, bytesOf[rev]!.length);
    }
  }
  await assertOnSettee(dbName, 'shared', 'a.bin', L, 'application/octet-stream', lEdit.rev);
  await assertOnSettee(dbName, 'shared', 'a.bin', R, 'application/octet-stream', rEdit.rev);

  // open_revs=all with attachments through the HTTP adapter: each leaf with its own bytes.
  const all = await rdb.get('shared', { open_revs: 'all', attachments: true, binary: true });
  assert.equal(all.length, 2);
  for (const leaf of all) {
    const data = leaf.ok._attachments['a.bin'].data;
    assert.ok(Buffer.isBuffer(data) && data.equals(bytesOf[leaf.ok._rev]!), `open_revs leaf ${leaf.ok._rev}`);
  }

  // Resolve on Settee by deleting the loser; the resolution replicates back.
  await rdb.remove('shared', loser);
  await ldb.replicate.from(rdb);
  const resolved = await ldb.get('shared', { conflicts: true });
  assert.equal(resolved._rev, winner);
  assert.equal(resolved._conflicts, undefined);
  await assertPouchBytes(ldb, 'shared', 'a.bin', bytesOf[winner]!);
  assert.deepEqual(await rows(ldb), await rows(rdb));
});

// ---------------------------------------------------------------------------------------------
// nano.

/**
 * nano sends attachment and multipart PUTs without an Accept header (fetch then sends `*\/*`),
 * so CouchDB 1.6 (and Settee) answer `text/plain; charset=utf-8` and nano hands the JSON back
 * as a string: parse it.
 */
function asJson(r: unknown): any {
  return typeof r === 'string' ? JSON.parse(r) : r;
}

/** Collects a readable stream fully by piping it into a Writable. */
async function drain(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(stream, new Writable({
    write(chunk: Buffer, _enc, cb) { chunks.push(Buffer.from(chunk)); cb(); },
  }));
  return Buffer.concat(chunks);
}

test('nano attachment.insert / get / destroy, byte for byte', { timeout: 60000 }, async () => {
  const dbName = 'att-nano';
  await couch.db.create(dbName);
  const db = couch.use(dbName);

  // No rev: creates the document.
  const r1 = asJson(await db.attachment.insert('doc', 'all-bytes.bin', ALL_BYTES, 'application/octet-stream'));
  assert.equal(r1.ok, true, proxy.show(`/${dbName}/doc`));
  assert.equal(r1.id, 'doc');
  assert.match(r1.rev, /^1-/);
  const r2 = asJson(await db.attachment.insert('doc', 'big.bin', BIG, 'application/octet-stream', { rev: r1.rev }));
  const r3 = asJson(await db.attachment.insert('doc', 'empty.bin', EMPTY, 'application/octet-stream', { rev: r2.rev }));
  const r4 = asJson(await db.attachment.insert('doc', 'note.txt', TEXT, 'text/plain; charset=utf-8', { rev: r3.rev }));
  assert.match(r4.rev, /^4-/);

  const all = await db.attachment.get('doc', 'all-bytes.bin');
  assert.ok(Buffer.isBuffer(all) && all.equals(ALL_BYTES));
  const big = await db.attachment.get('doc', 'big.bin');
  assert.ok(big.equals(BIG), `big.bin: ${big.length} bytes`);
  const empty = await db.attachment.get('doc', 'empty.bin');
  assert.equal(empty.length, 0);
  // nano hands text/* back as a string (fetch decoded gzip if Settee sent it).
  const note: unknown = await db.attachment.get('doc', 'note.txt');
  assert.equal(note, TEXT.toString('utf8'));
  const old = await db.attachment.get('doc', 'all-bytes.bin', { rev: r1.rev });
  assert.ok(old.equals(ALL_BYTES));

  const doc = await db.get('doc');
  assert.equal(doc._attachments['note.txt'].content_type, 'text/plain; charset=utf-8');
  assert.equal(doc._attachments['big.bin'].digest, md5(BIG));
  assert.equal(doc._attachments['empty.bin'].length, 0);
  await assertOnSettee(dbName, 'doc', 'note.txt', TEXT, 'text/plain; charset=utf-8');

  const gone = await db.attachment.destroy('doc', 'big.bin', { rev: r4.rev });
  assert.equal(gone.ok, true);
  assert.match(gone.rev, /^5-/);
  const err = await failure(db.attachment.get('doc', 'big.bin'));
  assert.equal(err.statusCode, 404);
  assert.equal(err.error, 'not_found');
  const stale = await failure(db.attachment.destroy('doc', 'all-bytes.bin', { rev: r4.rev }));
  assert.equal(stale.statusCode, 409);
  assert.equal(stale.error, 'conflict');
  const noDoc = await failure(db.attachment.get('nodoc', 'x'));
  assert.equal(noDoc.statusCode, 404);
});

test('nano attachment.getAsStream piped fully: 2 MiB binary, compressible text, empty', { timeout: 60000 }, async () => {
  const dbName = 'att-nano-stream';
  await couch.db.create(dbName);
  const db = couch.use(dbName);
  const r1 = asJson(await db.attachment.insert('doc', 'big.bin', BIG, 'application/octet-stream'));
  const longText = Buffer.from('streamed text line ✓\n'.repeat(50000));
  const r2 = asJson(await db.attachment.insert('doc', 'long.txt', longText, 'text/plain', { rev: r1.rev }));
  await db.attachment.insert('doc', 'empty.bin', EMPTY, 'application/octet-stream', { rev: r2.rev });

  const big = await drain(db.attachment.getAsStream('doc', 'big.bin'));
  assert.equal(big.length, BIG.length);
  assert.ok(big.equals(BIG));
  const text = await drain(db.attachment.getAsStream('doc', 'long.txt'));
  assert.ok(text.equals(longText), `long.txt: ${text.length} bytes, ${longText.length} expected`);
  const empty = await drain(db.attachment.getAsStream('doc', 'empty.bin'));
  assert.equal(empty.length, 0);
  // A missing attachment: the stream errors with the status.
  const err = await failure(drain(db.attachment.getAsStream('doc', 'missing.bin')));
  assert.equal(err.statusCode, 404);
});

test('nano: Unicode and / in attachment names (nano appends the name unencoded)', async () => {
  const dbName = 'att-nano-names';
  await couch.db.create(dbName);
  const db = couch.use(dbName);
  const names = [UNICODE_NAME, SLASH_NAME, 'a/b/c.bin'];
  let rev: string | undefined;
  for (const name of names) {
    const bytes = Buffer.concat([ALL_BYTES, Buffer.from(name)]);
    const r = asJson(await db.attachment.insert('doc é/x', name, bytes, 'application/octet-stream', rev ? { rev } : undefined));
    assert.equal(r.ok, true, proxy.show().split('\n').slice(-2).join('\n'));
    assert.equal(r.id, 'doc é/x');
    rev = r.rev;
  }
  const doc = await db.get('doc é/x');
  assert.deepEqual(Object.keys(doc._attachments).sort(), [...names].sort());
  for (const name of names) {
    const bytes = Buffer.concat([ALL_BYTES, Buffer.from(name)]);
    const got = await db.attachment.get('doc é/x', name);
    assert.ok(got.equals(bytes), name);
    // The same attachment with its name fully encoded (%2F for the slashes).
    const encoded = await db.attachment.get('doc é/x', encodeURIComponent(name));
    assert.ok(encoded.equals(bytes), `${name} as ${encodeURIComponent(name)}`);
  }
  // nano sent the document id encoded (%2F) and the attachment name raw (fetch encoded the rest).
  assert.ok(proxy.log.some((e) => e.method === 'PUT' && e.path.startsWith(`/${dbName}/doc%20%C3%A9%2Fx/dir/sub%20dir/`)), proxy.show(`/${dbName}/doc`));
  const gone = await db.attachment.destroy('doc é/x', SLASH_NAME, { rev });
  assert.equal(gone.ok, true);
  assert.deepEqual(Object.keys((await db.get('doc é/x'))._attachments).sort(), [UNICODE_NAME, 'a/b/c.bin'].sort());
});

/** Splits a multipart body on its boundary into parts of headers and bytes. */
function parseMultipart(body: Buffer, boundary: string): Array<{ headers: Record<string, string>; body: Buffer }> {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ headers: Record<string, string>; body: Buffer }> = [];
  let pos = body.indexOf(delimiter);
  assert.ok(pos >= 0, `no boundary ${boundary} in ${body.subarray(0, 200).toString()}`);
  for (;;) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === '--') break;
    assert.equal(body.subarray(pos, pos + 2).toString(), '\r\n', 'CRLF after a boundary');
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    const headers: Record<string, string> = {};
    for (const h of body.subarray(pos + 2, headerEnd).toString('latin1').split('\r\n')) {
      if (h === '') continue;
      const i = h.indexOf(':');
      headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
    }
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    assert.ok(next >= 0, 'every part ends with CRLF and a boundary');
    parts.push({ headers, body: body.subarray(headerEnd + 4, next) });
    pos = next + 2;
  }
  return parts;
}

test('nano multipart.insert: a document and its attachments in one multipart/related PUT', async () => {
  const dbName = 'att-nano-mp-insert';
  await couch.db.create(dbName);
  const db = couch.use(dbName);
  const from = proxy.log.length;
  let res: any;
  try {
    res = asJson(await db.multipart.insert({ kind: 'mp', n: 1 } as any, [
      { name: 'all-bytes.bin', data: ALL_BYTES, content_type: 'application/octet-stream' },
      { name: 'note.txt', data: TEXT, content_type: 'text/plain' },
      { name: UNICODE_NAME, data: BIG.subarray(0, 200000), content_type: 'image/png' },
      { name: 'empty.bin', data: EMPTY, content_type: 'application/octet-stream' },
    ], { docName: 'mpdoc' }));
  } catch (err) {
    const sent = proxy.log.slice(from).map((e) => `${e.method} ${e.path} [${e.requestHeaders['content-type']}] -> ${e.status} ${e.responseBody}`).join('\n');
    assert.fail(`multipart.insert failed: ${(err as Error).message}\n${sent}`);
  }
  assert.equal(res.ok, true);
  assert.equal(res.id, 'mpdoc');
  assert.match(res.rev, /^1-/);
  const sent = proxy.log[from]!;
  assert.equal(sent.method, 'PUT');
  assert.equal(sent.path, `/${dbName}/mpdoc`);
  assert.match(String(sent.requestHeaders['content-type']), /^multipart\/related; boundary=/);

  const doc = await db.get('mpdoc');
  assert.equal((doc as any).kind, 'mp');
  await assertOnSettee(dbName, 'mpdoc', 'all-bytes.bin', ALL_BYTES, 'application/octet-stream');
  await assertOnSettee(dbName, 'mpdoc', 'note.txt', TEXT, 'text/plain');
  await assertOnSettee(dbName, 'mpdoc', UNICODE_NAME, BIG.subarray(0, 200000), 'image/png');
  await assertOnSettee(dbName, 'mpdoc', 'empty.bin', EMPTY, 'application/octet-stream');
  for (const name of ['all-bytes.bin', 'note.txt', UNICODE_NAME, 'empty.bin']) {
    assert.equal(doc._attachments[name].revpos, 1, name);
    assert.equal(doc._attachments[name].follows, undefined, name);
  }

  // A second multipart PUT updating the document: its rev in the JSON part.
  const res2 = asJson(await db.multipart.insert({ _rev: res.rev, kind: 'mp', n: 2 } as any, [
    { name: 'all-bytes.bin', data: Buffer.from(ALL_BYTES).reverse(), content_type: 'application/octet-stream' },
  ], { docName: 'mpdoc' }));
  assert.match(res2.rev, /^2-/);
  const doc2 = await db.get('mpdoc');
  assert.deepEqual(Object.keys(doc2._attachments), ['all-bytes.bin'], 'attachments not in the new revision are dropped');
  await assertOnSettee(dbName, 'mpdoc', 'all-bytes.bin', Buffer.from(ALL_BYTES).reverse(), 'application/octet-stream');
});

test('nano multipart.get: GET ?attachments=true with Accept: multipart/related', async () => {
  const dbName = 'att-nano-mp-get';
  await couch.db.create(dbName);
  const db = couch.use(dbName);
  // Written with inline JSON, so this test does not depend on multipart uploads.
  // nano reads a multipart/related answer as text: the contents here are valid UTF-8 of
  // non-compressible types, so nano's text is byte-exact.
  const utf8a = Buffer.from('première pièce ✓\r\n--not-a-boundary\r\n'.repeat(10));
  const utf8b = Buffer.from('zweites Stück 🙂');
  const put = await db.insert({
    _id: 'doc', n: 1,
    _attachments: {
      'a.dat': { content_type: 'application/octet-stream', data: b64(utf8a) },
      [UNICODE_NAME]: { content_type: 'application/x-thing', data: b64(utf8b) },
      'empty.bin': { content_type: 'application/octet-stream', data: '' },
    },
  } as any);
  assert.equal(put.ok, true);

  const from = proxy.log.length;
  const text: unknown = await db.multipart.get('doc');
  const ex = proxy.log[from]!;
  assert.equal(ex.path, `/${dbName}/doc?attachments=true`);
  assert.equal(ex.requestHeaders['accept'], 'multipart/related');
  assert.equal(typeof text, 'string', `Settee answered ${ex.status} ${ex.responseBody.slice(0, 300)}`);
  const body = Buffer.from(text as string, 'utf8');
  const boundary = /^--([^\r\n]+)\r\n/.exec(text as string)?.[1];
  assert.ok(boundary, (text as string).slice(0, 200));
  const parts = parseMultipart(body, boundary);
  assert.equal(parts.length, 4);
  assert.match(parts[0]!.headers['content-type']!, /^application\/json/);
  const json = JSON.parse(parts[0]!.body.toString('utf8'));
  assert.equal(json._id, 'doc');
  assert.equal(json._rev, put.rev);
  assert.equal(json.n, 1);
  const names = Object.keys(json._attachments);
  assert.deepEqual([...names].sort(), ['a.dat', 'empty.bin', UNICODE_NAME].sort());
  const expected: Record<string, Buffer> = { 'a.dat': utf8a, [UNICODE_NAME]: utf8b, 'empty.bin': EMPTY };
  names.forEach((name, i) => {
    const att = json._attachments[name];
    assert.equal(att.follows, true, name);
    assert.equal(att.length, expected[name]!.length, name);
    assert.equal(att.data, undefined, name);
    assert.ok(parts[i + 1]!.body.equals(expected[name]!), `part ${i + 1} is ${name}`);
  });
});

test('multipart/related GET byte for byte: binary and gzip-stored attachments, as CouchDB 1.6 sends them', async () => {
  // The same request nano's multipart.get sends, read as bytes (nano decodes it as text).
  // CouchDB 1.6 (couch_httpd_db:send_doc_efficiently) answers it with
  // doc_to_multi_part_stream(..., SendEncodedAtts = true) and the JSON part rendered with
  // att_encoding_info: a gzip-stored attachment goes out as its stored gzip bytes, its JSON
  // entry saying "encoding": "gzip" and "encoded_length"; the ETag is the revision (no meta).
  const dbName = 'att-mp-get-bytes';
  await couch.db.create(dbName);
  const db = couch.use(dbName);
  const put = await db.insert({
    _id: 'doc',
    _attachments: {
      'all-bytes.bin': { content_type: 'application/octet-stream', data: b64(ALL_BYTES) },
      'note.txt': { content_type: 'text/plain', data: b64(TEXT) },
    },
  } as any);
  const res = await getBytes(`/${dbName}/doc?attachments=true`, { Accept: 'multipart/related' });
  assert.equal(res.status, 200);
  const ct = String(res.headers['content-type']);
  const m = /^multipart\/related;\s*boundary="?([^";]+)"?/.exec(ct);
  assert.ok(m, `Content-Type ${ct}: ${res.body.subarray(0, 200).toString()}`);
  const parts = parseMultipart(res.body, m[1]!);
  const json = JSON.parse(parts[0]!.body.toString('utf8'));
  const names = Object.keys(json._attachments);
  assert.deepEqual([...names].sort(), ['all-bytes.bin', 'note.txt']);
  assert.equal(parts.length, names.length + 1);
  const stored = await getBytes(`/${dbName}/doc/note.txt`, { 'Accept-Encoding': 'gzip' });
  assert.equal(stored.headers['content-encoding'], 'gzip', 'note.txt is stored gzip\'d (text/* is compressible)');
  const bin = parts[names.indexOf('all-bytes.bin') + 1]!.body;
  assert.ok(bin.equals(ALL_BYTES), 'binary part byte for byte');
  assert.deepEqual(json._attachments['all-bytes.bin'], {
    content_type: 'application/octet-stream', revpos: 1, digest: md5(ALL_BYTES), length: 256, follows: true,
  });
  const note = json._attachments['note.txt'];
  const notePart = parts[names.indexOf('note.txt') + 1]!.body;
  const detail = `note.txt entry ${JSON.stringify(note)}, part of ${notePart.length} bytes (identity ${TEXT.length}, stored gzip ${stored.body.length})`;
  assert.equal(note.follows, true);
  assert.equal(note.length, TEXT.length);
  assert.equal(note.encoding, 'gzip', detail);
  assert.equal(note.encoded_length, stored.body.length, detail);
  assert.ok(notePart.equals(stored.body), detail);
  assert.ok(gunzipSync(notePart).equals(TEXT));
  assert.equal(res.headers['etag'], `"${put.rev}"`, 'ETag of the revision, as for the JSON answer');
});
