/**
 * Attachments over real HTTP, checked against CouchDB 1.6 (couch_httpd_db:db_attachment_req,
 * couch_doc, and the JavaScript suite's attachments.js, attachment_names.js, attachment_paths.js,
 * attachment_ranges.js): standalone PUT/GET/HEAD/DELETE, names, revisions, ETags and 304s,
 * ranges, compression, inline Base64 attachments and stubs, attachments in _all_docs and
 * _changes, byte-for-byte round trips up to 50 MB, concurrent uploads, COPY, compaction and
 * interrupted uploads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { createCipheriv, createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

const MB = 1024 * 1024;
const REV = /^\d+-[0-9a-f]{32}$/;
/** The 29 bytes CouchDB's own attachment tests use, and their Base64. */
const TEXT = 'This is a base64 encoded text';
const TEXT_B64 = Buffer.from(TEXT).toString('base64');
const json = { 'Content-Type': 'application/json' };

let dbCounter = 0;
/** Creates a database with a name unique to this test file run. */
async function freshDb(label: string): Promise<string> {
  const name = `atts_${label}_${++dbCounter}`;
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
  return name;
}

function assertError(r: { status: number; text: string; body: any }, status: number, error: string, reason?: string | RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error, error, r.text);
  assert.equal(typeof r.body?.reason, 'string', r.text);
  if (typeof reason === 'string') assert.equal(r.body.reason, reason);
  else if (reason) assert.match(r.body.reason, reason);
}

const md5b64 = (data: Buffer | string): string => createHash('md5').update(data).digest('base64');
const digestOf = (data: Buffer | string): string => `md5-${md5b64(data)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as received (empty when a sink consumed it). */
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
  text: string;
}

interface RawOptions {
  headers?: Record<string, string | number>;
  /** Sent as is; an iterable is streamed (chunked unless the headers give a Content-Length). */
  body?: Buffer | string | AsyncIterable<Buffer> | Iterable<Buffer>;
  /** Receives the response body chunk by chunk instead of collecting it. */
  sink?: (chunk: Buffer) => void;
}

/** A raw HTTP request whose response body stays bytes (the shared helper decodes UTF-8). */
function rawRequest(method: string, path: string, options: RawOptions = {}): Promise<RawResponse> {
  const url = new URL(path.replace(/^\//, ''), server.url);
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, { method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => (options.sink ? options.sink(chunk) : chunks.push(chunk)));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        const text = body.toString('utf8');
        let parsed: unknown;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: parsed, text });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    const body = options.body;
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) r.end(body);
    else Readable.from(body).pipe(r);
  });
}

/** PUTs raw bytes as an attachment. */
function putAtt(path: string, body: Buffer | string, contentType: string | undefined = 'application/octet-stream', headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest('PUT', path, { body, headers: { ...(contentType ? { 'Content-Type': contentType } : {}), ...headers } });
}

/** Deterministic pseudo-random bytes (AES-256-CTR keystream), `chunk` bytes at a time. */
function* pseudoRandom(total: number, seed: string, chunk = MB): Generator<Buffer> {
  const cipher = createCipheriv('aes-256-ctr', createHash('sha256').update(seed).digest(), Buffer.alloc(16));
  const zeros = Buffer.alloc(chunk);
  for (let left = total; left > 0; left -= chunk) {
    yield cipher.update(left >= chunk ? zeros : zeros.subarray(0, left));
  }
}

function randomBytesOf(total: number, seed: string): Buffer {
  return Buffer.concat([...pseudoRandom(total, seed)]);
}

/** Compressible text: lines that repeat with variations. */
function sampleText(lines: number): string {
  let out = '';
  for (let i = 0; i < lines; i++) out += `line ${i}: the quick brown fox jumps over the lazy dog ${i % 7}\n`;
  return out;
}

async function getDoc(db: string, id: string, query = ''): Promise<any> {
  const r = await c.get(`/${db}/${id}${query}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function createDoc(db: string, id: string, body: Record<string, unknown>): Promise<string> {
  const r = await c.put(`/${db}/${id}`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.rev as string;
}

/** Waits (bounded) for a database's compaction to finish. */
async function waitForCompaction(db: string): Promise<any> {
  for (let i = 0; i < 1200; i++) {
    const info = await c.get(`/${db}`);
    if (!info.body.compact_running) return info.body;
    await sleep(50);
  }
  assert.fail(`compaction of ${db} did not finish`);
}

// ------------------------------------------------------------------ standalone PUT/GET/HEAD/DELETE

test('PUT of an attachment creates the document: 201, ETag, Location; GET answers the bytes', async () => {
  const db = await freshDb('create');
  const bytes = Buffer.from(TEXT);
  const put = await putAtt(`/${db}/doc/foo.bin`, bytes);
  assert.equal(put.status, 201, put.text);
  assert.equal(put.json.ok, true);
  assert.equal(put.json.id, 'doc');
  assert.match(put.json.rev, /^1-[0-9a-f]{32}$/);
  assert.equal(put.headers.etag, `"${put.json.rev}"`);
  assert.match(put.headers.location ?? '', /^http:\/\/[^/]+\//);
  assert.ok(put.headers.location!.endsWith(`/${db}/doc/foo.bin`), put.headers.location);

  const get = await rawRequest('GET', `/${db}/doc/foo.bin`);
  assert.equal(get.status, 200);
  assert.deepEqual(get.body, bytes);
  assert.equal(get.headers['content-type'], 'application/octet-stream');
  // The ETag of an attachment is its quoted Base64 MD5 (attachments.js: "aEI7pOYCRBLTRQvvqYrrJQ==").
  assert.equal(get.headers.etag, '"aEI7pOYCRBLTRQvvqYrrJQ=="');
  assert.equal(get.headers['content-length'], String(bytes.length));
  assert.equal(get.headers['content-md5'], 'aEI7pOYCRBLTRQvvqYrrJQ==');
  assert.equal(get.headers['accept-ranges'], 'bytes');

  const doc = await getDoc(db, 'doc');
  assert.equal(doc._rev, put.json.rev);
  assert.deepEqual(doc._attachments, {
    'foo.bin': { content_type: 'application/octet-stream', revpos: 1, digest: 'md5-aEI7pOYCRBLTRQvvqYrrJQ==', length: 29, stub: true },
  });
});

test('PUT without Content-Type stores application/octet-stream; the upload content type is answered as given', async () => {
  const db = await freshDb('ctype');
  const put = await putAtt(`/${db}/doc/raw`, 'abc', undefined);
  assert.equal(put.status, 201, put.text);
  const get = await rawRequest('GET', `/${db}/doc/raw`);
  assert.equal(get.headers['content-type'], 'application/octet-stream');
  assert.equal(get.text, 'abc');

  const put2 = await putAtt(`/${db}/doc/page.html?rev=${put.json.rev}`, '<p>hi</p>', 'text/html;charset=utf-8');
  assert.equal(put2.status, 201, put2.text);
  const get2 = await rawRequest('GET', `/${db}/doc/page.html`);
  assert.equal(get2.headers['content-type']?.toLowerCase(), 'text/html;charset=utf-8');
  assert.equal(get2.text, '<p>hi</p>');
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments['page.html'].content_type.toLowerCase(), 'text/html;charset=utf-8');
  assert.equal(doc._attachments['page.html'].length, 9);
});

test('PUT on an existing document needs its current rev, by ?rev= or If-Match; stale or missing → 409', async () => {
  const db = await freshDb('revs');
  const rev1 = await createDoc(db, 'doc', { a: 1 });

  // Without a rev on a live document: conflict.
  const noRev = await putAtt(`/${db}/doc/x.txt`, 'x', 'text/plain');
  assertError({ status: noRev.status, text: noRev.text, body: noRev.json }, 409, 'conflict', 'Document update conflict.');

  const put = await putAtt(`/${db}/doc/x.txt?rev=${rev1}`, 'x', 'text/plain');
  assert.equal(put.status, 201, put.text);
  const rev2 = put.json.rev as string;
  assert.match(rev2, /^2-/);

  // The stale rev, and a well-formed rev the document never had: conflict.
  const stale = await putAtt(`/${db}/doc/y.txt?rev=${rev1}`, 'y', 'text/plain');
  assertError({ status: stale.status, text: stale.text, body: stale.json }, 409, 'conflict');
  const unknown = await putAtt(`/${db}/doc/y.txt?rev=1-adae8575ecea588919bd08eb020c708e`, 'y', 'text/plain');
  assertError({ status: unknown.status, text: unknown.text, body: unknown.json }, 409, 'conflict');
  const bad = await putAtt(`/${db}/doc/y.txt?rev=nonsense`, 'y', 'text/plain');
  assertError({ status: bad.status, text: bad.text, body: bad.json }, 400, 'bad_request');

  // If-Match carries the rev as the document's ETag.
  const ifMatch = await putAtt(`/${db}/doc/y.txt`, 'y', 'text/plain', { 'If-Match': `"${rev2}"` });
  assert.equal(ifMatch.status, 201, ifMatch.text);
  const rev3 = ifMatch.json.rev as string;
  assert.equal(ifMatch.headers.etag, `"${rev3}"`);
  // ?rev= and If-Match that disagree: 400 (couch_httpd_db:extract_header_rev).
  const both = await putAtt(`/${db}/doc/z.txt?rev=${rev3}`, 'z', 'text/plain', { 'If-Match': `"${rev2}"` });
  assertError({ status: both.status, text: both.text, body: both.json }, 400, 'bad_request', 'Document rev and etag have different values');

  const doc = await getDoc(db, 'doc');
  assert.equal(doc._rev, rev3);
  assert.equal(doc.a, 1, 'the body is kept');
  assert.deepEqual(Object.keys(doc._attachments).sort(), ['x.txt', 'y.txt']);
  assert.equal(doc._attachments['x.txt'].revpos, 2);
  assert.equal(doc._attachments['y.txt'].revpos, 3);
});

test('PUT with a rev on a document that does not exist is a conflict, as in CouchDB', async () => {
  const db = await freshDb('revmissing');
  const r = await putAtt(`/${db}/nodoc/a.txt?rev=1-adae8575ecea588919bd08eb020c708e`, 'a', 'text/plain');
  assertError({ status: r.status, text: r.text, body: r.json }, 409, 'conflict');
  assert.equal((await c.get(`/${db}/nodoc`)).status, 404);
});

test('PUT with the rev of a deleted revision edits it and the document stays deleted (couch_httpd_db:db_attachment_req); without a rev it is recreated', async () => {
  const db = await freshDb('revdeleted');
  const rev1 = await createDoc(db, 'doc', { a: 1 });
  const del = await c.del(`/${db}/doc?rev=${rev1}`);
  assert.equal(del.status, 200, del.text);
  const put = await putAtt(`/${db}/doc/a.txt?rev=${del.body.rev}`, 'a', 'text/plain');
  assert.equal(put.status, 201, put.text);
  assert.match(put.json.rev, /^3-/);
  assertError(await c.get(`/${db}/doc`), 404, 'not_found', 'deleted');
  const stored = await getDoc(db, 'doc', `?rev=${put.json.rev}`);
  assert.equal(stored._deleted, true);
  assert.equal(stored._attachments['a.txt'].revpos, 3);
  assert.equal((await rawRequest('GET', `/${db}/doc/a.txt?rev=${put.json.rev}`)).text, 'a');
  const again = await putAtt(`/${db}/doc/b.txt`, 'b', 'text/plain');
  assert.equal(again.status, 201, again.text);
  assert.deepEqual(Object.keys((await getDoc(db, 'doc'))._attachments), ['b.txt']);
});

test('PUT replaces an attachment of the same name; the older revision still reads the old content', async () => {
  const db = await freshDb('replace');
  const first = await putAtt(`/${db}/doc/att.txt`, 'first version', 'text/plain');
  assert.equal(first.status, 201);
  const second = await putAtt(`/${db}/doc/att.txt?rev=${first.json.rev}`, 'second version', 'text/plain');
  assert.equal(second.status, 201);
  assert.equal((await rawRequest('GET', `/${db}/doc/att.txt`)).text, 'second version');
  assert.equal((await rawRequest('GET', `/${db}/doc/att.txt?rev=${first.json.rev}`)).text, 'first version');
  assert.equal((await rawRequest('GET', `/${db}/doc/att.txt?rev=${second.json.rev}`)).text, 'second version');
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments['att.txt'].revpos, 2);
  assert.equal(doc._attachments['att.txt'].length, 14);
});

test('DELETE of an attachment: needs a rev (409 without), 200 without Location, then 404; rev= still reads it', async () => {
  const db = await freshDb('delete');
  const put = await putAtt(`/${db}/doc/gone.txt`, 'going away', 'text/plain');
  const rev1 = put.json.rev as string;
  const keep = await putAtt(`/${db}/doc/kept.txt?rev=${rev1}`, 'staying', 'text/plain');
  const rev2 = keep.json.rev as string;

  const noRev = await rawRequest('DELETE', `/${db}/doc/gone.txt`);
  assertError({ status: noRev.status, text: noRev.text, body: noRev.json }, 409, 'conflict');
  const stale = await rawRequest('DELETE', `/${db}/doc/gone.txt?rev=${rev1}`);
  assertError({ status: stale.status, text: stale.text, body: stale.json }, 409, 'conflict');

  const del = await rawRequest('DELETE', `/${db}/doc/gone.txt?rev=${rev2}`);
  assert.equal(del.status, 200, del.text);
  assert.equal(del.json.ok, true);
  assert.equal(del.json.id, 'doc');
  assert.match(del.json.rev, /^3-/);
  assert.equal(del.headers.location, undefined);

  const missing = await rawRequest('GET', `/${db}/doc/gone.txt`);
  assertError({ status: missing.status, text: missing.text, body: missing.json }, 404, 'not_found', 'Document is missing attachment');
  const old = await rawRequest('GET', `/${db}/doc/gone.txt?rev=${rev2}`);
  assert.equal(old.status, 200);
  assert.equal(old.text, 'going away');
  assert.equal(old.headers['content-type'], 'text/plain');

  // If-Match works for DELETE too.
  const del2 = await rawRequest('DELETE', `/${db}/doc/kept.txt`, { headers: { 'If-Match': `"${del.json.rev}"` } });
  assert.equal(del2.status, 200, del2.text);
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments, undefined);
});

test('DELETE of an attachment the document lacks, or of a document that does not exist, is 404', async () => {
  const db = await freshDb('delmissing');
  const rev = await createDoc(db, 'doc', { a: 1 });
  // CouchDB 1.6 answered 200 with a new revision here (COUCHDB-1594, fixed in 3.2 by PR #3667);
  // its documentation, and Settee, say 404.
  const noAtt = await rawRequest('DELETE', `/${db}/doc/notexisting.txt?rev=${rev}`);
  assertError({ status: noAtt.status, text: noAtt.text, body: noAtt.json }, 404, 'not_found', 'Document is missing attachment');
  assert.equal((await getDoc(db, 'doc'))._rev, rev, 'no new revision');
  // Without a rev on a document that does not exist: 404, and no document is created (COUCHDB-3362).
  const noDoc = await rawRequest('DELETE', `/${db}/nodoc/a.txt`);
  assertError({ status: noDoc.status, text: noDoc.text, body: noDoc.json }, 404, 'not_found');
  assert.equal((await c.get(`/${db}/nodoc`)).status, 404);
  // With a rev the document never had: conflict, as PUT.
  const unknownRev = await rawRequest('DELETE', `/${db}/nodoc/a.txt?rev=1-adae8575ecea588919bd08eb020c708e`);
  assertError({ status: unknownRev.status, text: unknownRev.text, body: unknownRev.json }, 409, 'conflict');
});

test('missing attachment, document or database: 404 not_found', async () => {
  const db = await freshDb('missing');
  await createDoc(db, 'doc', {});
  const noAtt = await rawRequest('GET', `/${db}/doc/nothing.txt`);
  assertError({ status: noAtt.status, text: noAtt.text, body: noAtt.json }, 404, 'not_found', 'Document is missing attachment');
  const noDoc = await rawRequest('GET', `/${db}/nodoc/nothing.txt`);
  assertError({ status: noDoc.status, text: noDoc.text, body: noDoc.json }, 404, 'not_found', 'missing');
  const noDb = await rawRequest('GET', `/atts_no_such_db/doc/nothing.txt`);
  assertError({ status: noDb.status, text: noDb.text, body: noDb.json }, 404, 'not_found');
  const head = await rawRequest('HEAD', `/${db}/doc/nothing.txt`);
  assert.equal(head.status, 404);
  assert.equal(head.body.length, 0);
});

test('an attachment GET reads the document query as a document GET does: a bad rev, open_revs or atts_since is its 400', async () => {
  const db = await freshDb('docquery');
  const put = await putAtt(`/${db}/doc/a.txt`, TEXT, 'text/plain');
  assert.equal(put.status, 201, put.text);
  const rev = put.json.rev as string;
  // couch_httpd_db:db_attachment_req calls parse_doc_query, as db_doc_req does.
  for (const query of ['rev=abc', 'open_revs=nonsense', 'open_revs={}', 'open_revs=[1]', 'atts_since=nonsense', 'atts_since=[1]', 'atts_since=["abc"]']) {
    const att = await rawRequest('GET', `/${db}/doc/a.txt?${query}`);
    const doc = await c.get(`/${db}/doc?${query}`);
    assert.equal(doc.status, 400, `${query}: ${doc.text}`);
    assert.equal(att.status, 400, `${query}: ${att.text}`);
    assert.deepEqual(att.json, doc.body, query);
  }
  // Well-formed values are read and, but for rev, change nothing about what is served.
  for (const query of ['open_revs=all', `open_revs=["${rev}"]`, `atts_since=["${rev}"]`, `rev=${rev}&revs=true&conflicts=true`]) {
    const att = await rawRequest('GET', `/${db}/doc/a.txt?${query}`);
    assert.equal(att.status, 200, `${query}: ${att.text}`);
    assert.equal(att.text, TEXT);
  }
});

test('If-None-Match with the digest answers 304; another ETag answers 200', async () => {
  const db = await freshDb('etag');
  await putAtt(`/${db}/doc/a.bin`, TEXT);
  const get = await rawRequest('GET', `/${db}/doc/a.bin`);
  const etag = get.headers.etag!;
  assert.equal(etag, `"${md5b64(TEXT)}"`);
  const cached = await rawRequest('GET', `/${db}/doc/a.bin`, { headers: { 'If-None-Match': etag } });
  assert.equal(cached.status, 304);
  assert.equal(cached.body.length, 0);
  assert.equal(cached.headers.etag, etag);
  const other = await rawRequest('GET', `/${db}/doc/a.bin`, { headers: { 'If-None-Match': '"c29tZXRoaW5nIGVsc2U="' } });
  assert.equal(other.status, 200);
  assert.equal(other.text, TEXT);
  // The attachment ETag does not change when the document gets another revision.
  const rev = (await getDoc(db, 'doc'))._rev;
  await putAtt(`/${db}/doc/b.bin?rev=${rev}`, 'other');
  assert.equal((await rawRequest('GET', `/${db}/doc/a.bin`, { headers: { 'If-None-Match': etag } })).status, 304);
});

test('an upload with Content-MD5 is checked against the body (attachments.js)', async () => {
  const db = await freshDb('md5');
  const ok = await putAtt(`/${db}/bin_doc7/attachment.txt`, 'foo bar', 'application/octet-stream', { 'Content-MD5': 'MntvB0NYESObxH4VRDUycw==' });
  assert.equal(ok.status, 201, ok.text);
  const get = await rawRequest('GET', `/${db}/bin_doc7/attachment.txt`);
  assert.equal(get.headers['content-md5'], 'MntvB0NYESObxH4VRDUycw==');
  const bad = await putAtt(`/${db}/other/attachment.txt`, 'foo baz', 'application/octet-stream', { 'Content-MD5': 'MntvB0NYESObxH4VRDUycw==' });
  assertError({ status: bad.status, text: bad.text, body: bad.json }, 400, 'content_md5_mismatch');
  assert.equal((await c.get(`/${db}/other`)).status, 404, 'nothing was stored');
  // For a compressible type the check is of the body as sent, not of the stored gzip bytes.
  const text = await putAtt(`/${db}/text/a.txt`, sampleText(30), 'text/plain', { 'Content-MD5': md5b64(sampleText(30)) });
  assert.equal(text.status, 201, text.text);
});

test('a chunked upload may send Content-MD5 as a trailer (test/etap/130-attachments-md5.t)', async () => {
  const db = await freshDb('md5trailer');
  const upload = (path: string, parts: string[], md5: string) => new Promise<{ status: number; body: { error?: string } }>((resolve, reject) => {
    const r = httpRequest(new URL(path.slice(1), server.url), {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', Trailer: 'Content-MD5' },
    }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error?: string } }));
    });
    r.on('error', reject);
    for (const part of parts) r.write(part);
    r.addTrailers({ 'Content-MD5': md5 });
    r.end();
  });
  const body = ['We all live in a yellow ', 'submarine!'];
  const good = await upload(`/${db}/readme/foo.txt`, body, md5b64(body.join('')));
  assert.equal(good.status, 201, JSON.stringify(good.body));
  assert.equal((await c.get(`/${db}/readme/foo.txt`)).text, body.join(''));
  const bad = await upload(`/${db}/other/foo.txt`, body, md5b64('something else'));
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'content_md5_mismatch');
});

test('HEAD answers the headers of GET without a body', async () => {
  const db = await freshDb('head');
  await putAtt(`/${db}/doc/a.bin`, TEXT);
  const head = await rawRequest('HEAD', `/${db}/doc/a.bin`);
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(head.headers['content-length'], '29');
  assert.equal(head.headers.etag, `"${md5b64(TEXT)}"`);
  assert.equal(head.headers['content-type'], 'application/octet-stream');
  assert.equal(head.headers['content-encoding'], undefined);
  assert.equal(head.headers['content-md5'], md5b64(TEXT));
});

// ------------------------------------------------------------------ names

test('names with "/" are reachable with a raw or an encoded slash; "%2F" inside a name stays apart', async () => {
  const db = await freshDb('slash');
  const rev = await createDoc(db, 'bin_doc', {
    _attachments: {
      'foo/bar.txt': { content_type: 'text/plain', data: TEXT_B64 },
      'foo%2Fbaz.txt': { content_type: 'text/plain', data: Buffer.from('We like percent two F.').toString('base64') },
    },
  });
  const plain = await rawRequest('GET', `/${db}/bin_doc/foo/bar.txt`);
  assert.equal(plain.status, 200);
  assert.equal(plain.text, TEXT);
  assert.equal(plain.headers['content-type'], 'text/plain');
  assert.equal((await rawRequest('GET', `/${db}/bin_doc/foo%2Fbar.txt`)).text, TEXT);
  assert.equal((await rawRequest('GET', `/${db}/bin_doc/foo/baz.txt`)).status, 404);
  const pct = await rawRequest('GET', `/${db}/bin_doc/foo%252Fbaz.txt`);
  assert.equal(pct.status, 200);
  assert.equal(pct.text, 'We like percent two F.');

  // A standalone PUT under a slashed name needs the rev like any other.
  assert.equal((await putAtt(`/${db}/bin_doc/foo/attachment.txt`, 'Just some text', 'text/plain')).status, 409);
  const put = await putAtt(`/${db}/bin_doc/foo/bar2.txt?rev=${rev}`, 'This is no base64 encoded text', 'text/plain;charset=utf-8');
  assert.equal(put.status, 201, put.text);
  assert.ok(put.headers.location?.endsWith(`/${db}/bin_doc/foo/bar2.txt`), put.headers.location);
  const doc = await getDoc(db, 'bin_doc');
  assert.deepEqual(Object.keys(doc._attachments).sort(), ['foo%2Fbaz.txt', 'foo/bar.txt', 'foo/bar2.txt']);
  assert.equal(doc._attachments['foo/bar2.txt'].length, 30);
  assert.equal((await rawRequest('GET', `/${db}/bin_doc/foo%2Fbar2.txt`)).text, 'This is no base64 encoded text');
});

test('Unicode names, and names with spaces, round trip through URLs and documents', async () => {
  const db = await freshDb('unicode');
  const names = ['Колян.txt', 'ümlaut ñ 日本語 😀.bin', 'a b+c&d=e?.txt'];
  let rev: string | undefined;
  for (const [i, name] of names.entries()) {
    const url = `/${db}/doc/${encodeURIComponent(name)}${rev ? `?rev=${rev}` : ''}`;
    const put = await putAtt(url, `content ${i}`);
    assert.equal(put.status, 201, `${name}: ${put.text}`);
    rev = put.json.rev;
  }
  const doc = await getDoc(db, 'doc');
  assert.deepEqual(Object.keys(doc._attachments).sort(), [...names].sort());
  for (const [i, name] of names.entries()) {
    const get = await rawRequest('GET', `/${db}/doc/${encodeURIComponent(name)}`);
    assert.equal(get.status, 200, name);
    assert.equal(get.text, `content ${i}`);
  }
  // An inline attachment with a Unicode name is reachable by its encoded URL (attachment_names.js).
  await createDoc(db, 'good_doc', { _attachments: { 'Колян.txt': { content_type: 'application/octet-stream', data: TEXT_B64 } } });
  const get = await rawRequest('GET', `/${db}/good_doc/${encodeURIComponent('Колян.txt')}`);
  assert.equal(get.text, TEXT);
  assert.equal(get.headers.etag, '"aEI7pOYCRBLTRQvvqYrrJQ=="');
});

test('attachment names starting with "_" are rejected, standalone and inline', async () => {
  const db = await freshDb('underscore');
  const standalone = await putAtt(`/${db}/doc/_foo.txt`, 'x', 'text/plain');
  assertError({ status: standalone.status, text: standalone.text, body: standalone.json }, 400, 'bad_request', "Attachment name can't start with '_'");
  assert.equal((await c.get(`/${db}/doc`)).status, 404, 'nothing was created');
  const inline = await c.put(`/${db}/doc2`, { _attachments: { '_foo.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  assertError(inline, 400, 'bad_request', "Attachment name can't start with '_'");
  // A document id starting with "_" cannot be created implicitly either (COUCHDB-565).
  const reserved = await putAtt(`/${db}/_nonexistant/attachment.txt`, 'x', 'text/plain');
  assert.equal(reserved.status, 400);
});

test('an attachment name whose escapes are not UTF-8 is a 400 to write and absent to read', async () => {
  const db = await freshDb('badutf8name');
  const put = await putAtt(`/${db}/doc/bad%FFname.txt`, 'x', 'text/plain');
  assertError({ status: put.status, text: put.text, body: put.json }, 400, 'bad_request', 'Attachment name is not UTF-8 encoded');
  assert.equal((await c.get(`/${db}/doc`)).status, 404, 'nothing was created');
  const rev = await createDoc(db, 'doc', { _attachments: { 'a.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  const del = await rawRequest('DELETE', `/${db}/doc/dir/%C3?rev=${rev}`);
  assert.equal(del.status, 400, del.text);
  assert.equal(JSON.parse(del.text).reason, 'Attachment name is not UTF-8 encoded');
  const get = await rawRequest('GET', `/${db}/doc/%FF`);
  assert.equal(get.status, 404, get.text);
  assert.deepEqual(JSON.parse(get.text), { error: 'not_found', reason: 'Document is missing attachment' });
  assert.equal((await getDoc(db, 'doc'))._rev, rev, 'the document is unchanged');
});

test('attachments of design documents: PUT creates the ddoc, every URL form reads it, rev required', async () => {
  const db = await freshDb('design');
  const put = await putAtt(`/${db}/_design/dd/foo/bar.txt`, TEXT, 'text/plain');
  assert.equal(put.status, 201, put.text);
  assert.equal(put.json.id, '_design/dd');
  assert.ok(put.headers.location?.endsWith(`/${db}/_design/dd/foo/bar.txt`), put.headers.location);
  for (const path of ['_design/dd/foo/bar.txt', '_design/dd/foo%2Fbar.txt']) {
    const get = await rawRequest('GET', `/${db}/${path}`);
    assert.equal(get.status, 200, path);
    assert.equal(get.text, TEXT, path);
  }
  // With the design document's slash encoded, a GET is redirected to the plain path.
  for (const [path, plain] of [['_design%2Fdd/foo/bar.txt', '_design/dd/foo/bar.txt'], ['_design%2Fdd/foo%2Fbar.txt', '_design/dd/foo%2Fbar.txt']]) {
    const get = await rawRequest('GET', `/${db}/${path}`);
    assert.equal(get.status, 301, path);
    assert.equal(get.headers.location, `${server.url}${db}/${plain}`, path);
  }
  assert.equal((await putAtt(`/${db}/_design%2Fdd/foo/other.txt`, 'x', 'text/plain')).status, 409);
  const put2 = await putAtt(`/${db}/_design%2Fdd/foo/bar2.txt?rev=${put.json.rev}`, 'This is no base64 encoded text', 'text/plain;charset=utf-8');
  assert.equal(put2.status, 201, put2.text);
  const ddoc = await getDoc(db, '_design/dd');
  assert.deepEqual(Object.keys(ddoc._attachments).sort(), ['foo/bar.txt', 'foo/bar2.txt']);
  assert.equal(ddoc._attachments['foo/bar2.txt'].length, 30);
  const del = await rawRequest('DELETE', `/${db}/_design/dd/foo/bar.txt?rev=${put2.json.rev}`);
  assert.equal(del.status, 200, del.text);
  assert.equal((await rawRequest('GET', `/${db}/_design/dd/foo/bar.txt`)).status, 404);
});

// ------------------------------------------------------------------ ranges

test('Range on an identity attachment: 206 with Content-Range, as attachment_ranges.js', async () => {
  const db = await freshDb('ranges');
  await createDoc(db, 'bin_doc', { _attachments: { 'foo.txt': { content_type: 'application/octet-stream', data: TEXT_B64 } } });
  const range = (r: string) => rawRequest('GET', `/${db}/bin_doc/foo.txt`, { headers: { Range: r } });

  const cases: [string, string, string][] = [
    ['bytes=0-28', TEXT, 'bytes 0-28/29'],
    ['bytes=2-', TEXT.slice(2), 'bytes 2-28/29'],
    ['bytes=0-29', TEXT, 'bytes 0-28/29'],
    ['bytes=0-3', 'This', 'bytes 0-3/29'],
    ['bytes=10-15', 'base64', 'bytes 10-15/29'],
    ['bytes=-3', 'ext', 'bytes 26-28/29'],
  ];
  for (const [header, body, contentRange] of cases) {
    const r = await range(header);
    assert.equal(r.status, 206, header);
    assert.equal(r.text, body, header);
    assert.equal(r.headers['content-range'], contentRange, header);
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(body)), header);
    assert.equal(r.headers['content-type'], 'application/octet-stream', header);
  }
  // The whole entity without an end offset is a plain 200, as is a badly formed header.
  const whole = await range('bytes=0-');
  assert.equal(whole.status, 200);
  assert.equal(whole.text, TEXT);
  assert.equal(whole.headers['content-range'], undefined);
  assert.equal(whole.headers['content-length'], '29');
  const badlyFormed = await range('bytes:0-');
  assert.equal(badlyFormed.status, 200);
  assert.equal(badlyFormed.text, TEXT);
  // Backward and out-of-entity ranges cannot be satisfied.
  const backward = await range('bytes=5-3');
  assertError({ status: backward.status, text: backward.text, body: backward.json }, 416, 'requested_range_not_satisfiable');
  assert.equal((await range('bytes=300-310')).status, 416);
  assert.equal((await range('bytes=29-')).status, 416);

  // Several ranges: one multipart/byteranges body (couch_httpd_db:send_ranges_multipart).
  const multi = await range('bytes=0-3,10-15,-3');
  assert.equal(multi.status, 206);
  const boundary = /^multipart\/byteranges; boundary="?([^";]+)"?$/.exec(String(multi.headers['content-type']))?.[1];
  assert.ok(boundary, String(multi.headers['content-type']));
  const parts = multi.text.split(`--${boundary}`);
  assert.equal(parts.shift(), '');
  assert.equal(parts.pop(), '--');
  assert.deepEqual(parts.map((part) => {
    const [head, body] = part.split('\r\n\r\n') as [string, string];
    return { head: head.trim().split('\r\n').sort(), body: body.replace(/\r\n$/, '') };
  }), [
    { head: ['Content-Range: bytes 0-3/29', 'Content-Type: application/octet-stream'], body: 'This' },
    { head: ['Content-Range: bytes 10-15/29', 'Content-Type: application/octet-stream'], body: 'base64' },
    { head: ['Content-Range: bytes 26-28/29', 'Content-Type: application/octet-stream'], body: 'ext' },
  ]);
  assert.equal((await range('bytes=0-3,5-4')).status, 416);
  // Empty entries in the list are skipped, as mochiweb's parse_range_request (string:tokens)
  // splits it: a trailing comma leaves one range, doubled commas separate two.
  const trailing = await range('bytes=0-3,');
  assert.equal(trailing.status, 206);
  assert.equal(trailing.text, 'This');
  assert.equal(trailing.headers['content-range'], 'bytes 0-3/29');
  const doubled = await range('bytes=0-3,,10-15');
  assert.equal(doubled.status, 206);
  assert.match(String(doubled.headers['content-type']), /^multipart\/byteranges; /);
  assert.match(doubled.text, /Content-Range: bytes 0-3\/29\r\n\r\nThis\r\n/);
  assert.match(doubled.text, /Content-Range: bytes 10-15\/29\r\n\r\nbase64\r\n/);
  const plain = await rawRequest('GET', `/${db}/bin_doc/foo.txt`);
  assert.equal(plain.headers['accept-ranges'], 'bytes');
});

test('Range on a compressed (text/plain) attachment is ignored, as CouchDB: the whole body, Accept-Ranges none; still 416 past the end', async () => {
  const db = await freshDb('gzranges');
  const text = sampleText(400);
  const put = await putAtt(`/${db}/doc/log.txt`, text, 'text/plain');
  assert.equal(put.status, 201);
  const info = await getDoc(db, 'doc', '?att_encoding_info=true');
  assert.equal(info._attachments['log.txt'].encoding, 'gzip', 'stored compressed');
  const len = Buffer.byteLength(text);

  const plain = await rawRequest('GET', `/${db}/doc/log.txt`, { headers: { Range: 'bytes=1000-1999' } });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['accept-ranges'], 'none');
  assert.equal(plain.headers['content-range'], undefined);
  assert.equal(plain.text, text);
  const gzipped = await rawRequest('GET', `/${db}/doc/log.txt`, { headers: { Range: 'bytes=-50', 'Accept-Encoding': 'gzip' } });
  assert.equal(gzipped.status, 200);
  assert.equal(gzipped.headers['content-encoding'], 'gzip');
  assert.equal(gunzipSync(gzipped.body).toString(), text);
  assert.equal((await rawRequest('GET', `/${db}/doc/log.txt`, { headers: { Range: `bytes=${len}-${len + 10}` } })).status, 416);
});

// ------------------------------------------------------------------ compression

test('Accept-Encoding is read as mochiweb reads it: * takes gzip, a bad q-value is 400, refusing everything is 406', async () => {
  const db = await freshDb('acceptenc');
  const text = sampleText(300);
  await putAtt(`/${db}/doc/readme.txt`, text, 'text/plain');
  await putAtt(`/${db}/pic/pic.png`, 'not really a png', 'image/png');
  for (const accept of ['*', 'gzip;q=0.5, identity', 'deflate, *;q=0.1', 'identity;q=0, gzip']) {
    const r = await rawRequest('GET', `/${db}/doc/readme.txt`, { headers: { 'Accept-Encoding': accept } });
    assert.equal(r.status, 200, accept);
    assert.equal(r.headers['content-encoding'], 'gzip', accept);
    assert.equal(gunzipSync(r.body).toString('utf8'), text, accept);
  }
  for (const accept of ['*;q=0, identity', 'gzip;level=1', 'x-gzip']) {
    const r = await rawRequest('GET', `/${db}/doc/readme.txt`, { headers: { 'Accept-Encoding': accept } });
    assert.equal(r.status, 200, accept);
    assert.equal(r.headers['content-encoding'], undefined, accept);
    assert.equal(r.text, text, accept);
  }
  // The header is read for every attachment, whatever its encoding, before the ETag is compared.
  for (const path of ['doc/readme.txt', 'pic/pic.png']) {
    for (const accept of ['gzip;q=2', 'gzip;q=0.1234', 'gzip;q=AB', 'gzip; ;q=1']) {
      const bad = await rawRequest('GET', `/${db}/${path}`, { headers: { 'Accept-Encoding': accept, 'If-None-Match': '"x"' } });
      assert.equal(bad.status, 400, `${path} ${accept}`);
      assert.deepEqual(JSON.parse(bad.text), { error: 'bad_request', reason: '' });
    }
    for (const accept of ['*;q=0', 'identity;q=0', 'identity;q=0, deflate']) {
      const refused = await rawRequest('GET', `/${db}/${path}`, { headers: { 'Accept-Encoding': accept } });
      assert.equal(refused.status, 406, `${path} ${accept}`);
      assert.deepEqual(JSON.parse(refused.text), { error: 'not_acceptable', reason: 'unsupported encoding' });
    }
  }
  // identity refused but gzip taken: an identity attachment still goes as it is stored.
  const png = await rawRequest('GET', `/${db}/pic/pic.png`, { headers: { 'Accept-Encoding': 'gzip, identity;q=0' } });
  assert.equal(png.status, 200);
  assert.equal(png.headers['content-encoding'], undefined);
  assert.equal(png.text, 'not really a png');
});

test('text/plain is stored gzip\'d: gzip to clients that accept it, identity bytes to others', async () => {
  const db = await freshDb('gzip');
  const text = sampleText(300);
  const len = Buffer.byteLength(text);
  const put = await putAtt(`/${db}/doc/readme.txt`, text, 'text/plain');
  assert.equal(put.status, 201);

  const stub = (await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments['readme.txt'];
  assert.equal(stub.encoding, 'gzip');
  assert.equal(stub.length, len);
  assert.ok(stub.encoded_length > 0 && stub.encoded_length < len / 3, `encoded_length ${stub.encoded_length}`);
  assert.equal(stub.stub, true);
  // Without att_encoding_info nothing is said about the encoding.
  const plainStub = (await getDoc(db, 'doc'))._attachments['readme.txt'];
  assert.equal(plainStub.encoding, undefined);
  assert.equal(plainStub.encoded_length, undefined);

  const gz = await rawRequest('GET', `/${db}/doc/readme.txt`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(gz.status, 200);
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gz.headers['content-length'], String(stub.encoded_length));
  assert.equal(gz.body.length, stub.encoded_length);
  assert.equal(gunzipSync(gz.body).toString('utf8'), text);
  // The digest (and ETag) is the MD5 of the stored, gzip'd bytes.
  assert.equal(stub.digest, digestOf(gz.body));
  assert.equal(gz.headers.etag, `"${md5b64(gz.body)}"`);
  assert.equal(gz.headers['content-md5'], md5b64(gz.body));

  for (const accept of [undefined, 'identity', 'gzip;q=0', 'deflate']) {
    const id = await rawRequest('GET', `/${db}/doc/readme.txt`, { headers: accept ? { 'Accept-Encoding': accept } : {} });
    assert.equal(id.status, 200, String(accept));
    assert.equal(id.headers['content-encoding'], undefined, String(accept));
    assert.equal(id.headers['content-length'], String(len), String(accept));
    assert.equal(id.text, text, String(accept));
    assert.equal(id.headers['content-type'], 'text/plain');
    // The stored digest is not the MD5 of decoded bytes: no Content-MD5 then.
    assert.equal(id.headers['content-md5'], undefined, String(accept));
  }

  const headGz = await rawRequest('HEAD', `/${db}/doc/readme.txt`, { headers: { 'Accept-Encoding': 'gzip, deflate' } });
  assert.equal(headGz.status, 200);
  assert.equal(headGz.headers['content-encoding'], 'gzip');
  assert.equal(headGz.headers['content-length'], String(stub.encoded_length));
  assert.equal(headGz.headers['content-type'], 'text/plain');
  assert.equal(headGz.headers.etag, `"${stub.digest.slice(4)}"`);
  assert.equal(headGz.body.length, 0);
  const headId = await rawRequest('HEAD', `/${db}/doc/readme.txt`);
  assert.equal(headId.headers['content-encoding'], undefined);
  assert.equal(headId.headers['content-length'], String(len));

  // Types outside compressible_types are stored as they are.
  const rev = (await getDoc(db, 'doc'))._rev;
  await putAtt(`/${db}/doc/data.bin?rev=${rev}`, text, 'application/octet-stream');
  const bin = (await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments['data.bin'];
  assert.equal(bin.encoding, undefined);
  assert.equal(bin.encoded_length, undefined);
  assert.equal(bin.digest, digestOf(text));
  const binGz = await rawRequest('GET', `/${db}/doc/data.bin`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(binGz.headers['content-encoding'], undefined);
  assert.equal(binGz.text, text);
});

test('compressed content is zlib\'s own gzip: digests, and so revisions, are CouchDB\'s', async () => {
  const db = await freshDb('zlib-digest');
  // The digests CouchDB gives these (level 8, from its zlib), as PouchDB's suite records them:
  // Node's bundled zlib deflates the 29 bytes differently (md5-HUt2e+9/LhneNlN5dQ7mNw==).
  const r = await c.put(`/${db}/doc`, { _attachments: {
    'foo.txt': { content_type: 'text/plain', data: TEXT_B64 },
    'empty.txt': { content_type: 'text/plain', data: '' },
  } });
  assert.equal(r.status, 201, r.text);
  const doc = await getDoc(db, 'doc', '?att_encoding_info=true');
  assert.equal(doc._attachments['foo.txt'].digest, 'md5-qUUYqS41RhwF0TrCsTAxFg==');
  assert.equal(doc._attachments['foo.txt'].encoding, 'gzip');
  assert.equal(doc._attachments['empty.txt'].digest, 'md5-cCkGbCesb17xjWYNV0GXmg==');
  // The stored bytes are what the digest says, and decode to the content.
  const gz = await rawRequest('GET', `/${db}/doc/foo.txt`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(`md5-${createHash('md5').update(gz.body).digest('base64')}`, 'md5-qUUYqS41RhwF0TrCsTAxFg==');
  assert.equal(gunzipSync(gz.body).toString(), TEXT);
  // Content larger than one deflate slice, compressible and not, round-trips with its digest.
  const big = Array.from({ length: 40000 }, (_, i) => `line ${i} ${(i * 7919) % 1000}\n`).join('');
  const put = await putAtt(`/${db}/doc/big.txt?rev=${doc._rev}`, big, 'text/plain');
  assert.equal(put.status, 201, put.text);
  const stored = await rawRequest('GET', `/${db}/doc/big.txt`, { headers: { 'Accept-Encoding': 'gzip' } });
  const info = (await getDoc(db, 'doc'))._attachments['big.txt'];
  assert.equal(info.digest, `md5-${createHash('md5').update(stored.body).digest('base64')}`);
  assert.equal(gunzipSync(stored.body).toString(), big);
  assert.equal((await rawRequest('GET', `/${db}/doc/big.txt`)).text, big);
});

test('compression_level 0 stores compressible types as identity', async () => {
  const db = await freshDb('nocompress');
  const saved = await c.get('/_config/attachments/compression_level');
  assert.equal(saved.status, 200, saved.text);
  const set = await c.put('/_config/attachments/compression_level', '0');
  assert.equal(set.status, 200, set.text);
  try {
    const text = sampleText(100);
    const put = await putAtt(`/${db}/doc/plain.txt`, text, 'text/plain');
    assert.equal(put.status, 201);
    const stub = (await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments['plain.txt'];
    assert.equal(stub.encoding, undefined);
    assert.equal(stub.encoded_length, undefined);
    assert.equal(stub.digest, digestOf(text));
    const get = await rawRequest('GET', `/${db}/doc/plain.txt`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(get.headers['content-encoding'], undefined);
    assert.equal(get.text, text);
  } finally {
    const restore = await c.put('/_config/attachments/compression_level', saved.body);
    assert.equal(restore.status, 200, restore.text);
  }
  // Back on: new uploads are compressed again.
  const rev = (await getDoc(db, 'doc'))._rev;
  await putAtt(`/${db}/doc/again.txt?rev=${rev}`, sampleText(100), 'text/plain');
  assert.equal((await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments['again.txt'].encoding, 'gzip');
});

test('compressible_types entries are patterns as couch_db:compressible_att_type reads them: a wildcard anywhere, parameters allowed', async () => {
  const db = await freshDb('comptypes');
  const saved = await c.get('/_config/attachments/compressible_types');
  assert.equal(saved.status, 200, saved.text);
  const set = await c.put('/_config/attachments/compressible_types', '*/xml, application/vnd.*json');
  assert.equal(set.status, 200, set.text);
  try {
    const text = sampleText(100);
    const cases: [string, string, boolean][] = [
      ['a.xml', 'application/xml', true],
      ['b.xml', 'image/svg+xml', false],
      ['c.xml', 'TEXT/XML; charset=utf-8', true],
      ['d.json', 'application/vnd.api+json', true],
      ['e.txt', 'text/plain', false],
    ];
    let rev: string | undefined;
    for (const [name, type] of cases) {
      const put = await putAtt(`/${db}/doc/${name}${rev ? `?rev=${rev}` : ''}`, text, type);
      assert.equal(put.status, 201, put.text);
      rev = put.json.rev as string;
    }
    const stubs = (await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments;
    for (const [name, type, compressed] of cases) {
      assert.equal(stubs[name].encoding, compressed ? 'gzip' : undefined, `${name} (${type})`);
      assert.equal((await rawRequest('GET', `/${db}/doc/${name}`)).text, text);
    }
  } finally {
    const restore = await c.put('/_config/attachments/compressible_types', saved.body);
    assert.equal(restore.status, 200, restore.text);
  }
});

test('an upload sent with Content-Encoding: gzip is kept as it is', async () => {
  const db = await freshDb('pregz');
  const text = sampleText(200);
  const gz = gzipSync(Buffer.from(text), { level: 1 });
  const put = await putAtt(`/${db}/doc/sent.txt`, gz, 'text/plain', { 'Content-Encoding': 'gzip' });
  assert.equal(put.status, 201, put.text);
  const stub = (await getDoc(db, 'doc', '?att_encoding_info=true'))._attachments['sent.txt'];
  assert.equal(stub.encoding, 'gzip');
  assert.equal(stub.encoded_length, gz.length);
  assert.equal(stub.length, Buffer.byteLength(text));
  assert.equal(stub.digest, digestOf(gz), 'the digest is of the bytes as sent');
  const asIs = await rawRequest('GET', `/${db}/doc/sent.txt`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(asIs.headers['content-encoding'], 'gzip');
  assert.deepEqual(asIs.body, gz, 'the stored gzip bytes are answered unchanged');
  const decoded = await rawRequest('GET', `/${db}/doc/sent.txt`);
  assert.equal(decoded.headers['content-encoding'], undefined);
  assert.equal(decoded.text, text);

  // A non-compressible type sent gzip'd is kept gzip'd too.
  const bin = gzipSync(randomBytesOf(5000, 'pregz'));
  const put2 = await putAtt(`/${db}/doc/blob?rev=${put.json.rev}`, bin, 'application/octet-stream', { 'Content-Encoding': 'gzip' });
  assert.equal(put2.status, 201, put2.text);
  const asIs2 = await rawRequest('GET', `/${db}/doc/blob`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.deepEqual(asIs2.body, bin);
  const decoded2 = await rawRequest('GET', `/${db}/doc/blob`);
  assert.deepEqual(decoded2.body, randomBytesOf(5000, 'pregz'));
});

// ------------------------------------------------------------------ inline attachments and stubs

test('inline Base64 attachments in PUT, POST /db and _bulk_docs', async () => {
  const db = await freshDb('inline');
  const bytes = randomBytesOf(1000, 'inline');
  const put = await c.put(`/${db}/put_doc`, {
    title: 'x',
    _attachments: {
      'a.txt': { content_type: 'text/plain', data: TEXT_B64 },
      'b.bin': { content_type: 'application/octet-stream', data: bytes.toString('base64') },
    },
  });
  assert.equal(put.status, 201, put.text);
  const doc = await getDoc(db, 'put_doc');
  assert.equal(doc.title, 'x');
  assert.deepEqual(doc._attachments['b.bin'], { content_type: 'application/octet-stream', revpos: 1, digest: digestOf(bytes), length: 1000, stub: true });
  assert.equal(doc._attachments['a.txt'].length, 29);
  assert.equal(doc._attachments['a.txt'].stub, true);
  assert.deepEqual((await rawRequest('GET', `/${db}/put_doc/b.bin`)).body, bytes);
  assert.equal((await rawRequest('GET', `/${db}/put_doc/a.txt`)).text, TEXT);

  const post = await c.post(`/${db}`, { _id: 'post_doc', _attachments: { 'p.txt': { content_type: 'text/plain', data: TEXT_B64 } } }, { headers: json });
  assert.equal(post.status, 201, post.text);
  assert.equal((await rawRequest('GET', `/${db}/post_doc/p.txt`)).text, TEXT);
  const postGenerated = await c.post(`/${db}`, { _attachments: { 'g.bin': { content_type: 'application/octet-stream', data: 'AAEC' } } }, { headers: json });
  assert.equal(postGenerated.status, 201, postGenerated.text);
  assert.deepEqual((await rawRequest('GET', `/${db}/${postGenerated.body.id}/g.bin`)).body, Buffer.from([0, 1, 2]));

  const bulk = await c.post(`/${db}/_bulk_docs`, {
    docs: [
      { _id: 'bulk1', _attachments: { 'one.txt': { content_type: 'text/plain', data: Buffer.from('one').toString('base64') } } },
      { _id: 'bulk2', _attachments: { 'two.bin': { content_type: 'application/octet-stream', data: bytes.toString('base64') } } },
    ],
  }, { headers: json });
  assert.equal(bulk.status, 201, bulk.text);
  assert.ok(bulk.body.every((r: any) => r.ok === true && REV.test(r.rev)), bulk.text);
  assert.equal((await rawRequest('GET', `/${db}/bulk1/one.txt`)).text, 'one');
  assert.deepEqual((await rawRequest('GET', `/${db}/bulk2/two.bin`)).body, bytes);
  assert.equal((await getDoc(db, 'bulk2'))._attachments['two.bin'].digest, digestOf(bytes));
});

test('batch=ok on attachment PUT and DELETE answers 202 {ok, id}, and the edit is made', async () => {
  const db = await freshDb('batch');
  const put = await c.request('PUT', `/${db}/bt/a.txt?batch=ok`, { raw: 'x', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(put.status, 202, put.text);
  assert.deepEqual(put.body, { ok: true, id: 'bt' });
  assert.match(String(put.headers['location'] ?? ''), /\/bt\/a\.txt$/, 'the PUT\'s Location comes with the 202');
  const doc = (await c.get(`/${db}/bt`)).body;
  assert.equal(doc._attachments['a.txt'].length, 1);
  const del = await c.del(`/${db}/bt/a.txt?batch=ok&rev=${doc._rev}`);
  assert.equal(del.status, 202, del.text);
  assert.deepEqual(del.body, { ok: true, id: 'bt' });
  assert.equal(del.headers['location'], undefined);
  assert.equal((await c.get(`/${db}/bt`)).body._attachments, undefined);
});

test('stubs keep attachments across revisions with their revpos; omitting _attachments drops them', async () => {
  const db = await freshDb('stubs');
  const rev1 = await createDoc(db, 'doc', { v: 1, _attachments: { 'a.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  // A bare stub is enough (COUCHDB-809), and new inline content can come along.
  const rev2 = await createDoc(db, 'doc', {
    _rev: rev1, v: 2,
    _attachments: { 'a.txt': { stub: true }, 'b.txt': { content_type: 'text/plain', data: Buffer.from('bee').toString('base64') } },
  });
  let doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments['a.txt'].revpos, 1);
  assert.equal(doc._attachments['b.txt'].revpos, 2);
  assert.equal(doc._attachments['a.txt'].digest, (await getDoc(db, 'doc', `?rev=${rev1}`))._attachments['a.txt'].digest);

  // The stubs exactly as GET answered them.
  const rev3 = await createDoc(db, 'doc', { ...doc, v: 3 });
  doc = await getDoc(db, 'doc');
  assert.equal(doc._rev, rev3);
  assert.equal(doc.v, 3);
  assert.equal(doc._attachments['a.txt'].revpos, 1);
  assert.equal(doc._attachments['b.txt'].revpos, 2);
  assert.equal((await rawRequest('GET', `/${db}/doc/a.txt`)).text, TEXT);
  assert.equal((await rawRequest('GET', `/${db}/doc/b.txt`)).text, 'bee');

  // Replacing one attachment inline gives it the new revpos; the stub keeps its own.
  const rev4 = await createDoc(db, 'doc', {
    _rev: rev3, v: 4,
    _attachments: { 'a.txt': { stub: true }, 'b.txt': { content_type: 'text/plain', data: Buffer.from('new bee').toString('base64') } },
  });
  doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments['a.txt'].revpos, 1);
  assert.equal(doc._attachments['b.txt'].revpos, 4);
  assert.equal((await rawRequest('GET', `/${db}/doc/b.txt`)).text, 'new bee');

  // An update without _attachments drops them all.
  const rev5 = await createDoc(db, 'doc', { _rev: rev4, v: 5 });
  doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments, undefined);
  assert.equal((await rawRequest('GET', `/${db}/doc/a.txt`)).status, 404);
  assert.equal((await rawRequest('GET', `/${db}/doc/a.txt?rev=${rev4}`)).text, TEXT);
  assert.match(rev5, /^5-/);
  assert.match(rev2, /^2-/);
});

test('a stub for an attachment that does not exist is 412 missing_stub', async () => {
  const db = await freshDb('missingstub');
  const rev1 = await createDoc(db, 'doc', { _attachments: { 'a.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  const missing = await c.put(`/${db}/doc`, { _rev: rev1, _attachments: { 'a.txt': { stub: true }, 'nope.txt': { stub: true } } });
  // CouchDB 1.6's words (couch_doc:merge_stubs); later versions say "Invalid attachment stub in …".
  assertError(missing, 412, 'missing_stub', 'id:doc, name:nope.txt');
  // On a new document, every stub is missing.
  const fresh = await c.put(`/${db}/newdoc`, { _attachments: { 'x.txt': { stub: true } } });
  assertError(fresh, 412, 'missing_stub', 'id:newdoc, name:x.txt');
  assert.equal((await c.get(`/${db}/newdoc`)).status, 404);
  // Even with a revision the new document does not have: the stub is the error, not the conflict.
  assertError(await c.put(`/${db}/newdoc`, { _rev: '1-abc', _attachments: { 'x.txt': { stub: true } } }), 412, 'missing_stub');
  // In _bulk_docs it refuses the whole request (couch_doc:merge_stubs throws out of update_docs):
  // nothing of it is written, not even its valid documents, with or without new_edits.
  const bulk = await c.post(`/${db}/_bulk_docs`, { docs: [
    { _id: 'fine', value: 1 },
    { _id: 'doc', _rev: rev1, _attachments: { 'nope.txt': { stub: true } } },
    { _id: 'fine2', value: 2 },
  ] }, { headers: json });
  assertError(bulk, 412, 'missing_stub', 'id:doc, name:nope.txt');
  assert.equal((await getDoc(db, 'doc'))._rev, rev1, 'nothing was written');
  assert.equal((await c.get(`/${db}/fine`)).status, 404, 'nor its batch-mates');
  assert.equal((await c.get(`/${db}/fine2`)).status, 404, 'nor its batch-mates');
  const replicated = await c.post(`/${db}/_bulk_docs`, { new_edits: false, docs: [
    { _id: 'fine', _rev: `1-${'a'.repeat(32)}`, value: 1 },
    { _id: 'doc', _rev: `2-${'b'.repeat(32)}`, _revisions: { start: 2, ids: ['b'.repeat(32), rev1.slice(2)] }, _attachments: { 'nope.txt': { stub: true } } },
  ] }, { headers: json });
  assertError(replicated, 412, 'missing_stub', 'id:doc, name:nope.txt');
  assert.equal((await c.get(`/${db}/fine`)).status, 404, 'nor its batch-mates');
  // Other errors stay per document; the stubs that do name an attachment are kept.
  const mixed = await c.post(`/${db}/_bulk_docs`, { docs: [
    { _id: 'doc', _rev: rev1, _attachments: { 'a.txt': { stub: true } }, edited: true },
    { _id: 'doc', _rev: rev1, edited: 'twice' },
  ] }, { headers: json });
  assert.equal(mixed.status, 201, mixed.text);
  assert.equal(mixed.body[0].ok, true, mixed.text);
  assert.equal(mixed.body[1].error, 'conflict', mixed.text);
  const edited = await getDoc(db, 'doc');
  assert.equal(edited.edited, true);
  assert.deepEqual(Object.keys(edited._attachments), ['a.txt']);
});

test('a replicated revision with stubs but no stored ancestor: 412 "Previous revision missing" (couch_db:make_first_doc_on_disk)', async () => {
  const db = await freshDb('stubnoancestor');
  await createDoc(db, 'doc', { _attachments: { 'a.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  const orphan = {
    _id: 'doc', _rev: `3-${'c'.repeat(32)}`, _revisions: { start: 3, ids: ['c'.repeat(32), 'b'.repeat(32), 'a'.repeat(32)] },
    _attachments: { 'a.txt': { stub: true } },
  };
  const r = await c.put(`/${db}/doc?new_edits=false`, orphan);
  assertError(r, 412, 'missing_stub', 'Previous revision missing for document doc');
  // A document the database never had names the stub itself.
  const fresh = await c.put(`/${db}/other?new_edits=false`, { ...orphan, _id: 'other' });
  assertError(fresh, 412, 'missing_stub', 'id:other, name:a.txt');
});

test('a stub whose revpos is not the stored one is 412 missing_stub (couch_doc:merge_stubs)', async () => {
  const db = await freshDb('stubrevpos');
  const rev1 = await createDoc(db, 'bin_doc6', { _attachments: { 'foo.txt': { content_type: 'text/plain', data: TEXT_B64 } } });
  const wrong = await c.put(`/${db}/bin_doc6`, { _rev: rev1, _attachments: { 'foo.txt': { stub: true, revpos: 10 } } });
  assertError(wrong, 412, 'missing_stub');
  const right = await c.put(`/${db}/bin_doc6`, { _rev: rev1, _attachments: { 'foo.txt': { stub: true, revpos: 1 } } });
  assert.equal(right.status, 201, right.text);
});

test('a stub\'s digest is not compared with the stored one (couch_doc:merge_stubs matches name and revpos)', async () => {
  const db = await freshDb('stubdigest');
  const text = sampleText(30);
  const rev1 = await createDoc(db, 'doc', { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') } } });
  const stored = (await getDoc(db, 'doc'))._attachments['a.txt'];
  // The MD5 of the identity bytes, as a client that computed its own digest (PouchDB) sends it;
  // the server's digest is of the gzip'd bytes it stored.
  assert.notEqual(stored.digest, digestOf(text));
  const r = await c.put(`/${db}/doc`, {
    _rev: rev1, _attachments: { 'a.txt': { stub: true, content_type: 'text/plain', revpos: 1, length: Buffer.byteLength(text), digest: digestOf(text) } },
  });
  assert.equal(r.status, 201, r.text);
  const after = (await getDoc(db, 'doc'))._attachments['a.txt'];
  assert.equal(after.digest, stored.digest, 'the stored attachment is kept');
  assert.equal((await rawRequest('GET', `/${db}/doc/a.txt`)).text, text);
});

test('replicated revisions (new_edits=false) keep stub attachments of their stored ancestors', async () => {
  const db = await freshDb('replstubs');
  const rev1 = await createDoc(db, 'doc', { _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: TEXT_B64 } } });
  const hash1 = rev1.slice(2);
  const hash2 = 'f'.repeat(32);
  const bulk = await c.post(`/${db}/_bulk_docs`, {
    new_edits: false,
    docs: [{
      _id: 'doc', _rev: `2-${hash2}`, _revisions: { start: 2, ids: [hash2, hash1] }, v: 2,
      _attachments: {
        'a.bin': { stub: true, revpos: 1 },
        'b.bin': { content_type: 'application/octet-stream', revpos: 2, data: Buffer.from('bee').toString('base64') },
      },
    }],
  }, { headers: json });
  assert.equal(bulk.status, 201, bulk.text);
  assert.deepEqual(bulk.body, []);
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._rev, `2-${hash2}`);
  assert.equal(doc._attachments['a.bin'].revpos, 1);
  assert.equal(doc._attachments['b.bin'].revpos, 2);
  assert.equal((await rawRequest('GET', `/${db}/doc/a.bin`)).text, TEXT);
  assert.equal((await rawRequest('GET', `/${db}/doc/b.bin`)).text, 'bee');
});

test('invalid Base64 data is 400 bad_request, and nothing is stored', async () => {
  const db = await freshDb('badb64');
  for (const data of ['not base64!!', 'A', '@@@@']) {
    const r = await c.put(`/${db}/doc`, { _attachments: { 'a.bin': { content_type: 'application/octet-stream', data } } });
    assertError(r, 400, 'bad_request');
  }
  assert.equal((await c.get(`/${db}/doc`)).status, 404);
  const bulk = await c.post(`/${db}/_bulk_docs`, { docs: [{ _id: 'b', _attachments: { 'a.bin': { content_type: 'text/plain', data: '%%%%' } } }] }, { headers: json });
  assert.ok(bulk.status === 400 || (bulk.status === 201 && bulk.body[0].error), bulk.text);
  assert.equal((await c.get(`/${db}/b`)).status, 404);
});

test('inline data that is missing or not a string is 400 "Invalid attachment data for <name>" (couch_att:inline_from_json)', async () => {
  const db = await freshDb('nodata');
  for (const entry of [{ content_type: 'text/plain' }, { content_type: 'text/plain', data: 5 }, { data: null }, { data: ['QUJD'] }]) {
    const r = await c.put(`/${db}/doc`, { _attachments: { 'a.txt': entry } });
    assertError(r, 400, 'bad_request', 'Invalid attachment data for a.txt');
  }
  assert.equal((await c.get(`/${db}/doc`)).status, 404);
});

test('inline data is the identity bytes whatever encoding it is labelled with, so a document read with att_encoding_info goes back as it came', async () => {
  const db = await freshDb('inlineenc');
  const text = sampleText(40);
  await createDoc(db, 'src', { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') } } });
  // CouchDB 1.6 answers both the decoded data and the stored encoding.
  const read = await getDoc(db, 'src', '?attachments=true&att_encoding_info=true');
  assert.equal(read._attachments['a.txt'].encoding, 'gzip');
  const { _id: _ignoredId, _rev: _ignoredRev, ...body } = read;
  await createDoc(db, 'copy', body);
  const copy = await rawRequest('GET', `/${db}/copy/a.txt`);
  assert.equal(copy.status, 200, copy.text);
  assert.equal(copy.text, text);
  assert.equal((await getDoc(db, 'copy'))._attachments['a.txt'].digest, read._attachments['a.txt'].digest);
  // Bytes that are gzip themselves are content like any other, kept as they were sent.
  const gz = gzipSync('not to be unpacked');
  await createDoc(db, 'gz', { _attachments: { 'x.bin': { content_type: 'application/octet-stream', data: gz.toString('base64'), encoding: 'gzip' } } });
  const got = await rawRequest('GET', `/${db}/gz/x.bin`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(got.status, 200, got.text);
  assert.equal(got.headers['content-encoding'], undefined);
  assert.deepEqual(got.body, gz);
});

// ------------------------------------------------------------------ reading with attachments=true, atts_since, att_encoding_info

test('?attachments=true embeds Base64 data (no length, no stub); identity bytes for compressed ones', async () => {
  const db = await freshDb('embed');
  const text = sampleText(50);
  const bytes = randomBytesOf(300, 'embed');
  await createDoc(db, 'doc', {
    _attachments: {
      'text.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') },
      'bytes.bin': { content_type: 'application/octet-stream', data: bytes.toString('base64') },
    },
  });
  const doc = await getDoc(db, 'doc', '?attachments=true');
  assert.deepEqual(doc._attachments['bytes.bin'], {
    content_type: 'application/octet-stream', revpos: 1, digest: digestOf(bytes), data: bytes.toString('base64'),
  });
  const t = doc._attachments['text.txt'];
  assert.equal(Buffer.from(t.data, 'base64').toString('utf8'), text);
  assert.equal(t.length, undefined);
  assert.equal(t.stub, undefined);
  assert.equal(t.revpos, 1);
  assert.equal(t.content_type, 'text/plain');
  // attachments=false is the default: stubs.
  const stubs = await getDoc(db, 'doc', '?attachments=false');
  assert.equal(stubs._attachments['bytes.bin'].stub, true);
  assert.equal(stubs._attachments['bytes.bin'].data, undefined);
});

test('atts_since embeds only attachments added after the listed revisions', async () => {
  const db = await freshDb('since');
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const rev1 = (await putAtt(`/${db}/doc/a.txt`, 'aaa', 'text/plain')).json.rev as string;
  const rev2 = (await putAtt(`/${db}/doc/b.txt?rev=${rev1}`, 'bbb', 'text/plain')).json.rev as string;
  const rev3 = (await putAtt(`/${db}/doc/c.txt?rev=${rev2}`, 'ccc', 'text/plain')).json.rev as string;
  const since = async (revs: string[]) => (await getDoc(db, 'doc', `?atts_since=${encodeURIComponent(JSON.stringify(revs))}`))._attachments;

  let atts = await since([rev1]);
  assert.equal(atts['a.txt'].stub, true);
  assert.equal(atts['a.txt'].data, undefined);
  assert.equal(atts['b.txt'].data, b64('bbb'));
  assert.equal(atts['c.txt'].data, b64('ccc'));
  assert.equal(atts['c.txt'].length, undefined);

  atts = await since([rev2]);
  assert.equal(atts['a.txt'].stub, true);
  assert.equal(atts['b.txt'].stub, true);
  assert.equal(atts['c.txt'].data, b64('ccc'));

  // The nearest ancestor listed counts; unknown revisions are ignored.
  atts = await since(['1-00000000000000000000000000000000', rev2, rev1]);
  assert.equal(atts['b.txt'].stub, true);
  assert.equal(atts['c.txt'].data, b64('ccc'));

  atts = await since([rev3]);
  assert.ok(Object.values(atts).every((a: any) => a.stub === true && a.data === undefined));

  atts = await since(['9-00000000000000000000000000000000']);
  assert.ok(Object.values(atts).every((a: any) => typeof a.data === 'string'), 'nothing known: everything embedded');
});

test('att_encoding_info=true adds encoding and encoded_length to compressed attachments only', async () => {
  const db = await freshDb('encinfo');
  const text = sampleText(80);
  await createDoc(db, 'doc', {
    _attachments: {
      'c.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') },
      'i.bin': { content_type: 'image/png', data: TEXT_B64 },
    },
  });
  const doc = await getDoc(db, 'doc', '?att_encoding_info=true');
  const cAtt = doc._attachments['c.txt'];
  assert.equal(cAtt.encoding, 'gzip');
  assert.equal(typeof cAtt.encoded_length, 'number');
  assert.ok(cAtt.encoded_length < cAtt.length);
  assert.equal(cAtt.length, Buffer.byteLength(text));
  assert.equal(cAtt.stub, true);
  assert.deepEqual(doc._attachments['i.bin'], { content_type: 'image/png', revpos: 1, digest: digestOf(TEXT), length: 29, stub: true });
  // Both options together: data and encoding information.
  const both = await getDoc(db, 'doc', '?att_encoding_info=true&attachments=true');
  assert.equal(Buffer.from(both._attachments['c.txt'].data, 'base64').toString('utf8'), text);
  assert.equal(both._attachments['c.txt'].encoding, 'gzip');
  assert.equal(both._attachments['c.txt'].encoded_length, cAtt.encoded_length);
});

test('_all_docs?include_docs=true&attachments=true embeds attachment data', async () => {
  const db = await freshDb('alldocs');
  const text = sampleText(40);
  await createDoc(db, 'd1', { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') } } });
  await createDoc(db, 'd2', { _attachments: { 'b.bin': { content_type: 'application/octet-stream', data: TEXT_B64 } } });

  const withData = await c.get(`/${db}/_all_docs?include_docs=true&attachments=true`);
  assert.equal(withData.status, 200, withData.text);
  const rows = withData.body.rows;
  assert.equal(rows.length, 2);
  assert.equal(Buffer.from(rows[0].doc._attachments['a.txt'].data, 'base64').toString('utf8'), text);
  assert.equal(rows[0].doc._attachments['a.txt'].stub, undefined);
  assert.equal(rows[1].doc._attachments['b.bin'].data, TEXT_B64);

  const stubs = await c.get(`/${db}/_all_docs?include_docs=true`);
  assert.equal(stubs.body.rows[0].doc._attachments['a.txt'].stub, true);
  assert.equal(stubs.body.rows[0].doc._attachments['a.txt'].data, undefined);

  const enc = await c.get(`/${db}/_all_docs?include_docs=true&att_encoding_info=true`);
  assert.equal(enc.body.rows[0].doc._attachments['a.txt'].encoding, 'gzip');
  assert.equal(typeof enc.body.rows[0].doc._attachments['a.txt'].encoded_length, 'number');
  assert.equal(enc.body.rows[1].doc._attachments['b.bin'].encoding, undefined);

  const keyed = await c.post(`/${db}/_all_docs?include_docs=true&attachments=true`, { keys: ['d2'] }, { headers: json });
  assert.equal(keyed.status, 200, keyed.text);
  assert.equal(keyed.body.rows[0].doc._attachments['b.bin'].data, TEXT_B64);
});

test('_changes?include_docs=true&attachments=true embeds attachment data', async () => {
  const db = await freshDb('changes');
  const text = sampleText(40);
  await createDoc(db, 'd1', { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from(text).toString('base64') } } });
  await putAtt(`/${db}/d2/b.bin`, TEXT);

  const withData = await c.get(`/${db}/_changes?include_docs=true&attachments=true`);
  assert.equal(withData.status, 200, withData.text);
  const results = withData.body.results;
  assert.equal(results.length, 2);
  assert.equal(Buffer.from(results[0].doc._attachments['a.txt'].data, 'base64').toString('utf8'), text);
  assert.equal(results[1].doc._attachments['b.bin'].data, TEXT_B64);
  assert.equal(results[1].doc._attachments['b.bin'].length, undefined);

  const stubs = await c.get(`/${db}/_changes?include_docs=true`);
  assert.equal(stubs.body.results[1].doc._attachments['b.bin'].stub, true);

  const enc = await c.get(`/${db}/_changes?include_docs=true&att_encoding_info=true`);
  assert.equal(enc.body.results[0].doc._attachments['a.txt'].encoding, 'gzip');
  assert.equal(enc.body.results[1].doc._attachments['b.bin'].encoding, undefined);
});

// ------------------------------------------------------------------ byte-for-byte round trips

test('all 256 byte values round trip, standalone and inline, stored plain or compressed', async () => {
  const db = await freshDb('bytes');
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const twice = Buffer.concat([all, Buffer.from(all).reverse()]);

  const put = await putAtt(`/${db}/standalone/all.bin`, twice);
  assert.equal(put.status, 201);
  const get = await rawRequest('GET', `/${db}/standalone/all.bin`);
  assert.deepEqual(get.body, twice);
  assert.equal((await getDoc(db, 'standalone'))._attachments['all.bin'].digest, digestOf(twice));

  // text/plain goes through gzip and back.
  const putText = await putAtt(`/${db}/standalone/all.txt?rev=${put.json.rev}`, twice, 'text/plain');
  assert.equal(putText.status, 201);
  assert.deepEqual((await rawRequest('GET', `/${db}/standalone/all.txt`)).body, twice);
  assert.deepEqual(gunzipSync((await rawRequest('GET', `/${db}/standalone/all.txt`, { headers: { 'Accept-Encoding': 'gzip' } })).body), twice);

  await createDoc(db, 'inline', { _attachments: { 'all.bin': { content_type: 'application/octet-stream', data: twice.toString('base64') } } });
  assert.deepEqual((await rawRequest('GET', `/${db}/inline/all.bin`)).body, twice);
  const embedded = await getDoc(db, 'inline', '?attachments=true');
  assert.deepEqual(Buffer.from(embedded._attachments['all.bin'].data, 'base64'), twice);
});

test('empty attachments: standalone (with and without Content-Length) and inline', async () => {
  const db = await freshDb('empty');
  const emptyDigest = digestOf('');
  const put = await putAtt(`/${db}/doc/empty.txt`, '', 'text/plain');
  assert.equal(put.status, 201, put.text);
  const get = await rawRequest('GET', `/${db}/doc/empty.txt`);
  assert.equal(get.status, 200);
  assert.equal(get.body.length, 0);
  assert.equal(get.headers['content-length'], '0');
  assert.equal(get.headers['content-type'], 'text/plain');

  // No body and no Content-Length at all (attachments.js, COUCHDB-497).
  const noBody = await rawRequest('PUT', `/${db}/doc/nobody.bin?rev=${put.json.rev}`, { headers: { 'Content-Type': 'application/octet-stream' } });
  assert.equal(noBody.status, 201, noBody.text);
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._attachments['nobody.bin'].length, 0);
  assert.equal(doc._attachments['nobody.bin'].digest, emptyDigest);
  assert.equal(doc._attachments['empty.txt'].length, 0);

  // Overwriting an empty attachment.
  const over = await putAtt(`/${db}/doc/empty.txt?rev=${noBody.json.rev}`, 'This is a string', 'text/plain');
  assert.equal(over.status, 201);
  assert.equal((await rawRequest('GET', `/${db}/doc/empty.txt`)).text, 'This is a string');

  await createDoc(db, 'inline', { _attachments: { 'e.bin': { content_type: 'application/octet-stream', data: '' } } });
  const inline = await getDoc(db, 'inline');
  assert.deepEqual(inline._attachments['e.bin'], { content_type: 'application/octet-stream', revpos: 1, digest: emptyDigest, length: 0, stub: true });
  const e = await rawRequest('GET', `/${db}/inline/e.bin`);
  assert.equal(e.status, 200);
  assert.equal(e.body.length, 0);
  assert.equal((await getDoc(db, 'inline', '?attachments=true'))._attachments['e.bin'].data, '');
});

test('a chunked upload (no Content-Length) is stored whole', async () => {
  const db = await freshDb('chunked');
  const parts = [...pseudoRandom(700 * 1024, 'chunked', 100 * 1024)];
  const whole = Buffer.concat(parts);
  const put = await rawRequest('PUT', `/${db}/doc/c.bin`, { body: parts, headers: { 'Content-Type': 'application/octet-stream' } });
  assert.equal(put.status, 201, put.text);
  const get = await rawRequest('GET', `/${db}/doc/c.bin`);
  assert.equal(get.body.length, whole.length);
  assert.ok(get.body.equals(whole));
  assert.equal((await getDoc(db, 'doc'))._attachments['c.bin'].length, whole.length);
});

test('5 MB of random bytes round trip byte for byte', async () => {
  const db = await freshDb('five');
  const data = randomBytesOf(5 * MB, 'five');
  const put = await putAtt(`/${db}/doc/five.bin`, data);
  assert.equal(put.status, 201, put.text);
  const head = await rawRequest('HEAD', `/${db}/doc/five.bin`);
  assert.equal(head.headers['content-length'], String(5 * MB));
  const get = await rawRequest('GET', `/${db}/doc/five.bin`);
  assert.equal(get.status, 200);
  assert.equal(get.body.length, data.length);
  assert.ok(get.body.equals(data), '5 MB differ');
  const stub = (await getDoc(db, 'doc'))._attachments['five.bin'];
  assert.equal(stub.length, 5 * MB);
  assert.equal(stub.digest, digestOf(data));
  // A range deep inside.
  const r = await rawRequest('GET', `/${db}/doc/five.bin`, { headers: { Range: `bytes=${3 * MB + 17}-${3 * MB + 4096}` } });
  assert.equal(r.status, 206);
  assert.ok(r.body.equals(data.subarray(3 * MB + 17, 3 * MB + 4097)));
});

test('50 MB streamed up and down byte for byte', async () => {
  const db = await freshDb('fifty');
  const total = 50 * MB;
  const sentMd5 = createHash('md5');
  const sentSha = createHash('sha256');
  const source = (function* () {
    for (const chunk of pseudoRandom(total, 'fifty')) {
      sentMd5.update(chunk);
      sentSha.update(chunk);
      yield chunk;
    }
  })();
  const put = await rawRequest('PUT', `/${db}/doc/fifty.bin`, {
    body: source, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': total },
  });
  assert.equal(put.status, 201, put.text);
  const expectedDigest = `md5-${sentMd5.digest('base64')}`;

  // Download, comparing against a regenerated copy of the stream as it arrives.
  const expected = pseudoRandom(total, 'fifty');
  let pending: Buffer = Buffer.alloc(0);
  let received = 0;
  let mismatchAt = -1;
  const gotSha = createHash('sha256');
  const get = await rawRequest('GET', `/${db}/doc/fifty.bin`, {
    sink: (chunk) => {
      gotSha.update(chunk);
      let offset = 0;
      while (offset < chunk.length && mismatchAt < 0) {
        if (pending.length === 0) {
          const next = expected.next();
          if (next.done) { mismatchAt = received + offset; break; }
          pending = next.value;
        }
        const n = Math.min(pending.length, chunk.length - offset);
        if (!chunk.subarray(offset, offset + n).equals(pending.subarray(0, n))) mismatchAt = received + offset;
        pending = pending.subarray(n);
        offset += n;
      }
      received += chunk.length;
    },
  });
  assert.equal(get.status, 200);
  assert.equal(get.headers['content-length'], String(total));
  assert.equal(received, total);
  assert.equal(mismatchAt, -1, `first difference at byte ${mismatchAt}`);
  assert.equal(gotSha.digest('hex'), sentSha.digest('hex'));
  const stub = (await getDoc(db, 'doc'))._attachments['fifty.bin'];
  assert.equal(stub.length, total);
  assert.equal(stub.digest, expectedDigest);
});

// ------------------------------------------------------------------ concurrency, COPY, compaction, interruption

test('concurrent uploads to one document with the same rev: exactly one 201, the others 409', async () => {
  const db = await freshDb('race');
  const rev1 = await createDoc(db, 'doc', {});
  const n = 8;
  const bodies = Array.from({ length: n }, (_, i) => randomBytesOf(64 * 1024 + i, `race${i}`));
  const results = await Promise.all(bodies.map((body, i) => putAtt(`/${db}/doc/att${i}.bin?rev=${rev1}`, body)));
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, ...Array(n - 1).fill(409)], JSON.stringify(results.map((r) => r.text)));
  const winner = results.findIndex((r) => r.status === 201);
  const doc = await getDoc(db, 'doc');
  assert.equal(doc._rev, results[winner]!.json.rev);
  assert.deepEqual(Object.keys(doc._attachments), [`att${winner}.bin`]);
  assert.ok((await rawRequest('GET', `/${db}/doc/att${winner}.bin`)).body.equals(bodies[winner]!));

  // Creating a new document by concurrent uploads: one wins too.
  const created = await Promise.all(bodies.map((body) => putAtt(`/${db}/fresh/same.bin`, body)));
  assert.deepEqual(created.map((r) => r.status).sort(), [201, ...Array(n - 1).fill(409)]);
  const fresh = await getDoc(db, 'fresh');
  assert.match(fresh._rev, /^1-/);
  const won = created.findIndex((r) => r.status === 201);
  assert.ok((await rawRequest('GET', `/${db}/fresh/same.bin`)).body.equals(bodies[won]!));
});

test('COPY keeps the attachments, with their content, digests and revpos', async () => {
  const db = await freshDb('copy');
  const bytes = randomBytesOf(2000, 'copy');
  const rev1 = await createDoc(db, 'src', { k: 'v', _attachments: { 'a.bin': { content_type: 'application/octet-stream', data: bytes.toString('base64') } } });
  const rev2 = (await putAtt(`/${db}/src/b.txt?rev=${rev1}`, sampleText(20), 'text/plain')).json.rev as string;
  assert.match(rev2, /^2-/);
  const copy = await c.copy(`/${db}/src`, { headers: { Destination: 'dst' } });
  assert.equal(copy.status, 201, copy.text);
  const src = await getDoc(db, 'src');
  const dst = await getDoc(db, 'dst');
  assert.equal(dst.k, 'v');
  assert.deepEqual(Object.keys(dst._attachments).sort(), ['a.bin', 'b.txt']);
  for (const name of ['a.bin', 'b.txt']) {
    assert.equal(dst._attachments[name].digest, src._attachments[name].digest, name);
    assert.equal(dst._attachments[name].length, src._attachments[name].length, name);
    assert.equal(dst._attachments[name].content_type, src._attachments[name].content_type, name);
  }
  assert.ok((await rawRequest('GET', `/${db}/dst/a.bin`)).body.equals(bytes));
  assert.equal((await rawRequest('GET', `/${db}/dst/b.txt`)).text, sampleText(20));
  // CouchDB keeps the revpos of attachments already on disk (couch_db:set_new_att_revpos).
  assert.equal(dst._attachments['a.bin'].revpos, src._attachments['a.bin'].revpos);
  assert.equal(dst._attachments['b.txt'].revpos, src._attachments['b.txt'].revpos);
});

test('compaction reclaims content no revision references; live attachments still read', async () => {
  const db = await freshDb('compact');
  const big = randomBytesOf(8 * MB, 'compact-big');
  const shared = randomBytesOf(MB, 'compact-shared');
  const small = Buffer.from(TEXT);
  const rev1 = (await putAtt(`/${db}/doc/big.bin`, big)).json.rev as string;
  const rev2 = (await putAtt(`/${db}/doc/small.bin?rev=${rev1}`, small)).json.rev as string;
  const rev3 = (await putAtt(`/${db}/doc/shared.bin?rev=${rev2}`, shared)).json.rev as string;
  // The same content on another document is stored once and outlives its removal here.
  assert.equal((await putAtt(`/${db}/other/copy.bin`, shared)).status, 201);
  const rev4 = (await rawRequest('DELETE', `/${db}/doc/big.bin?rev=${rev3}`)).json.rev as string;
  const rev5 = (await rawRequest('DELETE', `/${db}/doc/shared.bin?rev=${rev4}`)).json.rev as string;
  assert.match(rev5, /^5-/);
  // Before compaction the old revision still holds the big attachment.
  assert.equal((await rawRequest('HEAD', `/${db}/doc/big.bin?rev=${rev3}`)).status, 200);

  const before = (await c.get(`/${db}`)).body;
  const compact = await c.post(`/${db}/_compact`, undefined, { headers: json });
  assert.equal(compact.status, 202, compact.text);
  const afterInfo = await waitForCompaction(db);
  assert.ok(afterInfo.disk_size < before.disk_size - 6 * MB, `disk_size ${before.disk_size} → ${afterInfo.disk_size}`);

  assert.ok((await rawRequest('GET', `/${db}/doc/small.bin`)).body.equals(small));
  assert.ok((await rawRequest('GET', `/${db}/other/copy.bin`)).body.equals(shared));
  assert.equal((await rawRequest('GET', `/${db}/doc/big.bin`)).status, 404);
  assert.equal((await rawRequest('GET', `/${db}/doc/big.bin?rev=${rev3}`)).status, 404, 'the old revision is gone');
  const doc = await getDoc(db, 'doc');
  assert.deepEqual(Object.keys(doc._attachments), ['small.bin']);
  // The content can be uploaded again after it was collected.
  const again = await putAtt(`/${db}/doc/big.bin?rev=${rev5}`, big);
  assert.equal(again.status, 201, again.text);
  assert.ok((await rawRequest('GET', `/${db}/doc/big.bin`)).body.equals(big));
});

test('an interrupted upload leaves no trace and the server keeps working', async () => {
  const db = await freshDb('interrupted');
  const { hostname, port } = new URL(server.url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(
    `PUT /${db}/doc/big.bin HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/octet-stream\r\n`
    + `Content-Length: ${10 * MB}\r\nExpect: 100-continue\r\n\r\n`,
  );
  // The server has the request once it says to continue.
  let reply = '';
  socket.on('data', (chunk: Buffer) => { reply += chunk.toString('latin1'); });
  for (let i = 0; i < 500 && !reply.includes('100 Continue'); i++) await sleep(10);
  assert.match(reply, /^HTTP\/1\.1 100 Continue/);
  for (const chunk of pseudoRandom(MB, 'interrupted', 64 * 1024)) {
    if (!socket.write(chunk)) await once(socket, 'drain');
  }
  socket.destroy();
  await once(socket, 'close');

  assert.equal((await c.get('/')).status, 200, 'the server answers');
  assert.equal((await c.get(`/${db}/doc`)).status, 404);
  // The document is still new: an upload without rev creates it at 1-.
  const put = await putAtt(`/${db}/doc/small.bin`, 'small');
  assert.equal(put.status, 201, put.text);
  assert.match(put.json.rev, /^1-/);
  const doc = await getDoc(db, 'doc');
  assert.deepEqual(Object.keys(doc._attachments), ['small.bin']);
  const info = (await c.get(`/${db}`)).body;
  assert.equal(info.doc_count, 1);
  assert.equal(info.update_seq, 1);
  // And a full upload of the same size goes through on a fresh connection.
  const full = randomBytesOf(10 * MB, 'interrupted-full');
  const ok = await putAtt(`/${db}/doc/big.bin?rev=${put.json.rev}`, full);
  assert.equal(ok.status, 201, ok.text);
  assert.ok((await rawRequest('GET', `/${db}/doc/big.bin`)).body.equals(full));
});
