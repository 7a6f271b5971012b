/**
 * Single documents and their revisions over real HTTP, as CouchDB 1.6 answers them:
 * PUT/GET/HEAD/DELETE/POST/COPY, revision metadata, open_revs, conflicts, _local and design
 * documents, ids, body validation and size limits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { serverForFile } from '../helpers/server.js';
import type { Response } from '../helpers/http.js';

const { server, c } = await serverForFile();

const REV = /^\d+-[0-9a-f]{32}$/;
const HASH_A = 'a'.repeat(32);
const HASH_B = 'b'.repeat(32);
const HASH_C = 'c'.repeat(32);

let dbCounter = 0;
/** Creates a database with a name unique to this test file run. */
async function freshDb(label: string): Promise<string> {
  const name = `docs_${label}_${++dbCounter}`;
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
  return name;
}

async function create(db: string, id: string, body: Record<string, unknown>): Promise<string> {
  const r = await c.put(`/${db}/${encodeURIComponent(id)}`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.rev as string;
}

function assertError(r: Response, status: number, error: string, reason?: string | RegExp): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body?.error, error, r.text);
  assert.equal(typeof r.body?.reason, 'string', r.text);
  if (typeof reason === 'string') assert.equal(r.body.reason, reason);
  else if (reason) assert.match(r.body.reason, reason);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until GET answers 200 (batch=ok writes land shortly after the 202). */
async function eventually(path: string): Promise<Response> {
  let r = await c.get(path);
  for (let i = 0; i < 200 && r.status !== 200; i++) {
    await sleep(10);
    r = await c.get(path);
  }
  return r;
}

/** Splits a multipart body into parts of {headers, body}. */
function parseMultipart(contentType: string, text: string): { headers: Record<string, string>; body: string }[] {
  const m = /boundary="?([^";]+)"?/.exec(contentType);
  assert.ok(m, `no boundary in ${contentType}`);
  const delimiter = `--${m[1]}`;
  const segments = text.split(delimiter).slice(1);
  const parts: { headers: Record<string, string>; body: string }[] = [];
  for (const seg of segments) {
    if (seg.startsWith('--')) break; // closing delimiter
    const s = seg.replace(/^\r\n/, '');
    const split = s.indexOf('\r\n\r\n');
    assert.ok(split >= 0, `part without header end: ${JSON.stringify(s)}`);
    const headers: Record<string, string> = {};
    for (const line of s.slice(0, split).split('\r\n')) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: s.slice(split + 4).replace(/\r\n$/, '') });
  }
  return parts;
}

/** A request whose body is sent with Transfer-Encoding: chunked (no Content-Length). */
function chunkedRequest(method: string, path: string, body: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const r = httpRequest(new URL(path.replace(/^\//, ''), server.url), {
      method,
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    const half = Math.floor(body.length / 2);
    r.write(body.slice(0, half));
    r.write(body.slice(half));
    r.end();
  });
}

// ------------------------------------------------------------------------------- create, read

test('PUT creates a document: 201, {ok,id,rev}, ETag and absolute Location', async () => {
  const db = await freshDb('put');
  const r = await c.put(`/${db}/doc1`, { hello: 'world', n: 1 });
  assert.equal(r.status, 201);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.id, 'doc1');
  assert.match(r.body.rev, /^1-[0-9a-f]{32}$/);
  assert.equal(r.headers.etag, `"${r.body.rev}"`);
  assert.equal(r.headers.location, `${server.url}${db}/doc1`);

  const g = await c.get(`/${db}/doc1`);
  assert.equal(g.status, 200);
  assert.equal(g.headers['content-type'], 'application/json');
  assert.equal(g.headers.etag, `"${r.body.rev}"`);
  assert.deepEqual(g.body, { _id: 'doc1', _rev: r.body.rev, hello: 'world', n: 1 });
  // _id and _rev come first, as CouchDB writes them.
  assert.deepEqual(Object.keys(g.body).slice(0, 2), ['_id', '_rev']);
});

test('PUT takes the id from the URL, not from the body', async () => {
  const db = await freshDb('urlid');
  const r = await c.put(`/${db}/from_url`, { _id: 'from_body', v: 1 });
  assert.equal(r.status, 201);
  assert.equal(r.body.id, 'from_url');
  assert.equal((await c.get(`/${db}/from_url`)).body.v, 1);
  assert.equal((await c.get(`/${db}/from_body`)).status, 404);
});

test('GET of a missing document is 404 not_found/missing', async () => {
  const db = await freshDb('missing');
  assertError(await c.get(`/${db}/nope`), 404, 'not_found', 'missing');
});

test('HEAD answers the headers of GET without a body', async () => {
  const db = await freshDb('head');
  const rev = await create(db, 'h', { a: 'some text', b: [1, 2, 3] });
  const g = await c.get(`/${db}/h`);
  const h = await c.head(`/${db}/h`);
  assert.equal(h.status, 200);
  assert.equal(h.text, '');
  assert.equal(h.headers.etag, `"${rev}"`);
  assert.equal(Number(h.headers['content-length']), Buffer.byteLength(g.text));

  const missing = await c.head(`/${db}/nope`);
  assert.equal(missing.status, 404);
  assert.equal(missing.text, '');
});

test('If-None-Match with the current ETag is 304 (GET and HEAD); an old one is 200', async () => {
  const db = await freshDb('inm');
  const rev1 = await create(db, 'e', { v: 1 });
  const put2 = await c.put(`/${db}/e`, { v: 2 }, { headers: { 'If-Match': `"${rev1}"` } });
  assert.equal(put2.status, 201);
  const etag = put2.headers.etag as string;
  assert.equal(etag, `"${put2.body.rev}"`);

  const notModified = await c.get(`/${db}/e`, { headers: { 'If-None-Match': etag } });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.text, '');
  const head = await c.head(`/${db}/e`, { headers: { 'If-None-Match': etag } });
  assert.equal(head.status, 304);

  const old = await c.get(`/${db}/e`, { headers: { 'If-None-Match': `"${rev1}"` } });
  assert.equal(old.status, 200);
  assert.equal(old.body.v, 2);
  const garbage = await c.head(`/${db}/e`, { headers: { 'If-None-Match': 's' } });
  assert.equal(garbage.status, 200);
  assert.equal(garbage.headers.etag, etag);
});

// ------------------------------------------------------------------------------- updates

test('updates need the current revision: body _rev, ?rev= or If-Match; otherwise 409', async () => {
  const db = await freshDb('update');
  const rev1 = await create(db, 'u', { v: 1 });

  assertError(await c.put(`/${db}/u`, { v: 2 }), 409, 'conflict', 'Document update conflict.');

  const viaBody = await c.put(`/${db}/u`, { _rev: rev1, v: 2 });
  assert.equal(viaBody.status, 201);
  assert.match(viaBody.body.rev, /^2-[0-9a-f]{32}$/);

  // A stale revision conflicts.
  assertError(await c.put(`/${db}/u`, { _rev: rev1, v: 3 }), 409, 'conflict');

  const viaQuery = await c.put(`/${db}/u?rev=${viaBody.body.rev}`, { v: 3 });
  assert.equal(viaQuery.status, 201);
  assert.match(viaQuery.body.rev, /^3-/);

  const viaHeader = await c.put(`/${db}/u`, { v: 4 }, { headers: { 'If-Match': `"${viaQuery.body.rev}"` } });
  assert.equal(viaHeader.status, 201);
  assert.match(viaHeader.body.rev, /^4-/);

  const g = await c.get(`/${db}/u`);
  assert.deepEqual(g.body, { _id: 'u', _rev: viaHeader.body.rev, v: 4 });
});

test('a revision on a document that does not exist is a conflict', async () => {
  const db = await freshDb('norev');
  assertError(await c.put(`/${db}/ghost`, { _rev: `1-${HASH_A}`, v: 1 }), 409, 'conflict');
  assert.equal((await c.get(`/${db}/ghost`)).status, 404);
});

test('disagreeing revisions in body, query and If-Match are 400 with CouchDB reasons', async () => {
  const db = await freshDb('revmismatch');
  const rev1 = await create(db, 'm', { v: 1 });
  const other = `1-${HASH_A}`;

  assertError(await c.put(`/${db}/m?rev=${other}`, { _rev: rev1, v: 2 }), 400, 'bad_request',
    'Document rev from request body and query string have different values');
  assertError(await c.put(`/${db}/m`, { _rev: rev1, v: 2 }, { headers: { 'If-Match': `"${other}"` } }), 400, 'bad_request',
    'Document rev and etag have different values');
  assertError(await c.put(`/${db}/m?rev=${rev1}`, { v: 2 }, { headers: { 'If-Match': `"${other}"` } }), 400, 'bad_request',
    'Document rev and etag have different values');
  assertError(await c.del(`/${db}/m?rev=${rev1}`, { headers: { 'If-Match': `"${other}"` } }), 400, 'bad_request',
    'Document rev and etag have different values');

  // Agreeing ones are fine.
  const ok = await c.put(`/${db}/m?rev=${rev1}`, { _rev: rev1, v: 2 }, { headers: { 'If-Match': `"${rev1}"` } });
  assert.equal(ok.status, 201);
});

test('a malformed revision is 400 bad_request', async () => {
  const db = await freshDb('badrev');
  await create(db, 'b', { v: 1 });
  assertError(await c.get(`/${db}/b?rev=notarev`), 400, 'bad_request', 'Invalid rev format');
  assertError(await c.put(`/${db}/b`, { _rev: 'notarev' }), 400, 'bad_request');
  assertError(await c.del(`/${db}/b?rev=notarev`), 400, 'bad_request');
});

test('atts_since and open_revs entries must be revisions, as couch_doc:parse_revs reads them', async () => {
  const db = await freshDb('revlists');
  const rev = await create(db, 'd', { v: 1 });
  const get = (id: string, param: string, value: unknown) =>
    c.get(`/${db}/${id}?${param}=${encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value))}`, { headers: { Accept: 'application/json' } });
  for (const param of ['atts_since', 'open_revs']) {
    assertError(await get('d', param, ['notarev']), 400, 'bad_request', 'Invalid rev format');
    assertError(await get('d', param, [rev, 'x-1']), 400, 'bad_request', 'Invalid rev format');
    assertError(await get('d', param, [1]), 400, 'bad_request', 'Invalid rev format');
    assertError(await get('d', param, { a: rev }), 400, 'bad_request', 'Invalid list of revisions');
    assertError(await get('d', param, 'not json'), 400, 'bad_request', 'invalid_json');
  }
  // _local documents parse the query the same way before finding no revisions.
  await c.put(`/${db}/_local/l`, { v: 1 });
  assertError(await get('_local/l', 'atts_since', ['notarev']), 400, 'bad_request', 'Invalid rev format');
  assertError(await c.get(`/${db}/_local/l?open_revs=all&rev=notarev`), 400, 'bad_request', 'Invalid rev format');
  // Well-formed revisions, known or not, are fine; an upper-case hash names the same revision.
  const since = await get('d', 'atts_since', [`9-${HASH_A}`, rev.toUpperCase()]);
  assert.equal(since.status, 200, since.text);
  assert.equal(since.body._rev, rev);
});

test('upper-case revision hashes name the same revision wherever a revision is given, and come back lower-case', async () => {
  // couch_doc:parse_rev reads 32 hex digits in either case as 16 bytes; revid_to_str renders them lower-case.
  const db = await freshDb('upperrev');
  const upper = (rev: string): string => rev.toUpperCase();
  const rev1 = await create(db, 'u', { v: 1 });

  const got = await c.get(`/${db}/u?rev=${upper(rev1)}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body._rev, rev1);

  const openRevs = await c.get(`/${db}/u?open_revs=${encodeURIComponent(JSON.stringify([upper(rev1), `2-${HASH_A.toUpperCase()}`]))}`);
  assert.deepEqual(openRevs.body, [{ ok: { _id: 'u', _rev: rev1, v: 1 } }, { missing: `2-${HASH_A}` }]);

  const diff = await c.post(`/${db}/_revs_diff`, { u: [upper(rev1), `2-${HASH_B.toUpperCase()}`] });
  assert.deepEqual(diff.body, { u: { missing: [`2-${HASH_B}`], possible_ancestors: [rev1] } });

  // Body, query and If-Match agree when they name one revision in different cases.
  const rev2 = (await c.put(`/${db}/u?rev=${rev1}`, { _rev: upper(rev1), v: 2 }, { headers: { 'If-Match': `"${upper(rev1)}"` } })).body.rev as string;
  assert.match(rev2, /^2-[0-9a-f]{32}$/);
  const byEtag = await c.put(`/${db}/u`, { v: 3 }, { headers: { 'If-Match': `"${upper(rev2)}"` } });
  assert.equal(byEtag.status, 201, byEtag.text);
  const rev3 = byEtag.body.rev as string;
  const bulk = await c.post(`/${db}/_bulk_docs`, { docs: [{ _id: 'u', _rev: upper(rev3), v: 4 }] });
  assert.equal(bulk.body[0].ok, true, bulk.text);
  const rev4 = bulk.body[0].rev as string;

  const att = await c.put(`/${db}/u/note.txt?rev=${upper(rev4)}`, undefined, { raw: 'hello', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(att.status, 201, att.text);
  const rev5 = att.body.rev as string;
  assert.equal((await c.get(`/${db}/u/note.txt?rev=${upper(rev5)}`)).text, 'hello');

  await create(db, 'target', { t: 1 });
  const targetRev = (await c.get(`/${db}/target`)).body._rev as string;
  const copied = await c.copy(`/${db}/u?rev=${upper(rev1)}`, { headers: { Destination: `target?rev=${upper(targetRev)}` } });
  assert.equal(copied.status, 201, copied.text);
  assert.equal((await c.get(`/${db}/target`)).body.v, 1);

  const deleted = await c.del(`/${db}/u?rev=${upper(rev5)}`);
  assert.equal(deleted.status, 200, deleted.text);
  assert.equal((await c.get(`/${db}/u`)).body.reason, 'deleted');
});

test('replicated revisions with upper-case hashes are stored as CouchDB stores them: lower-case, the same revisions', async () => {
  const db = await freshDb('upperrepl');
  const r = await c.post(`/${db}/_bulk_docs`, {
    new_edits: false,
    docs: [{ _id: 'r', _rev: `2-${HASH_B.toUpperCase()}`, _revisions: { start: 2, ids: [HASH_B.toUpperCase(), HASH_A.toUpperCase()] }, v: 1 }],
  });
  assert.equal(r.status, 201, r.text);
  const doc = await c.get(`/${db}/r?revs=true`);
  assert.equal(doc.body._rev, `2-${HASH_B}`);
  assert.deepEqual(doc.body._revisions, { start: 2, ids: [HASH_B, HASH_A] });
  // The same revision in lower case is already there: nothing new, no conflict.
  await c.post(`/${db}/_bulk_docs`, { new_edits: false, docs: [{ _id: 'r', _rev: `2-${HASH_B}`, _revisions: { start: 2, ids: [HASH_B, HASH_A] }, v: 1 }] });
  const all = await c.get(`/${db}/r?open_revs=all`);
  assert.equal(all.body.length, 1, all.text);

  // Hashes other than 32 hex digits are kept as given, case and all.
  await c.post(`/${db}/_bulk_docs`, { new_edits: false, docs: [{ _id: 'odd', _rev: '1-ABC', v: 1 }] });
  assert.equal((await c.get(`/${db}/odd`)).body._rev, '1-ABC');
  assert.equal((await c.get(`/${db}/odd?rev=1-abc`)).status, 404);
});

// ------------------------------------------------------------------------------- deletion

test('DELETE leaves a tombstone: 200 with ETag, GET 404 "deleted", old revisions still readable', async () => {
  const db = await freshDb('delete');
  const rev1 = await create(db, 'd', { keep: 'me' });
  const d = await c.del(`/${db}/d?rev=${rev1}`);
  assert.equal(d.status, 200);
  assert.equal(d.body.ok, true);
  assert.equal(d.body.id, 'd');
  assert.match(d.body.rev, /^2-[0-9a-f]{32}$/);
  assert.equal(d.headers.etag, `"${d.body.rev}"`);

  assertError(await c.get(`/${db}/d`), 404, 'not_found', 'deleted');
  const head = await c.head(`/${db}/d`);
  assert.equal(head.status, 404);

  const tomb = await c.get(`/${db}/d?rev=${d.body.rev}`);
  assert.equal(tomb.status, 200);
  assert.deepEqual(tomb.body, { _id: 'd', _rev: d.body.rev, _deleted: true });

  const old = await c.get(`/${db}/d?rev=${rev1}`);
  assert.equal(old.status, 200);
  assert.deepEqual(old.body, { _id: 'd', _rev: rev1, keep: 'me' });

  const info = await c.get(`/${db}`);
  assert.equal(info.body.doc_count, 0);
  assert.equal(info.body.doc_del_count, 1);
});

test('DELETE with If-Match; stale If-Match conflicts', async () => {
  const db = await freshDb('delifmatch');
  const rev1 = await create(db, 'x', { v: 1 });
  const rev2 = (await c.put(`/${db}/x`, { _rev: rev1, v: 2 })).body.rev as string;
  assertError(await c.del(`/${db}/x`, { headers: { 'If-Match': `"${rev1}"` } }), 409, 'conflict');
  const d = await c.del(`/${db}/x`, { headers: { 'If-Match': `"${rev2}"` } });
  assert.equal(d.status, 200);
  assert.match(d.body.rev, /^3-/);
});

test('DELETE without a revision is 409; of a missing document 404 missing', async () => {
  const db = await freshDb('delnorev');
  await create(db, 'x', { v: 1 });
  assertError(await c.del(`/${db}/x`), 409, 'conflict');
  assert.equal((await c.get(`/${db}/x`)).status, 200);
  assertError(await c.del(`/${db}/does-not-exist`), 404, 'not_found', 'missing');
  assertError(await c.del(`/${db}/does-not-exist?rev=1-${HASH_A}`), 404, 'not_found', 'missing');
});

test('deleting a deleted document is 404 "deleted", with or without its tombstone revision', async () => {
  const db = await freshDb('deldel');
  const rev1 = await create(db, 'x', { v: 1 });
  const del = await c.del(`/${db}/x?rev=${rev1}`);
  assert.equal(del.status, 200);
  assertError(await c.del(`/${db}/x?rev=${del.body.rev}`), 404, 'not_found', 'deleted');
  assertError(await c.del(`/${db}/x`), 404, 'not_found', 'deleted');
  // Nothing was written by the refused deletions.
  const info = await c.get(`/${db}`);
  assert.equal(info.body.update_seq, 2);
});

test('PUT with _deleted:true deletes and answers 200', async () => {
  const db = await freshDb('putdel');
  const rev1 = await create(db, 'x', { v: 1 });
  const r = await c.put(`/${db}/x`, { _rev: rev1, _deleted: true });
  assert.equal(r.status, 200);
  assert.equal(r.body.ok, true);
  assert.match(r.body.rev, /^2-/);
  assert.equal(r.headers.etag, `"${r.body.rev}"`);
  assert.equal(r.headers.location, undefined, 'no Location for a document left deleted (couch_httpd_db:update_doc)');
  assertError(await c.get(`/${db}/x`), 404, 'not_found', 'deleted');
});

test('recreating a deleted document continues its revision numbers; pre-deletion revs conflict', async () => {
  const db = await freshDb('recreate');
  const rev1 = await create(db, 'foo', { a: 'bar', b: 42 });
  const del = await c.del(`/${db}/foo?rev=${rev1}`);
  assert.equal(del.status, 200);

  const again = await c.put(`/${db}/foo`, { fresh: true });
  assert.equal(again.status, 201);
  assert.match(again.body.rev, /^3-[0-9a-f]{32}$/);
  const g = await c.get(`/${db}/foo?revs=true`);
  assert.equal(g.status, 200);
  assert.equal(g.body.fresh, true);
  assert.equal(g.body.a, undefined);
  assert.equal(g.body._deleted, undefined);
  assert.equal(g.body._revisions.start, 3);
  assert.equal(g.body._revisions.ids.length, 3);
  assert.equal(g.body._revisions.ids[2], rev1.split('-')[1]);

  // COUCHDB-292: saving on a revision that has since been deleted is a conflict.
  assertError(await c.put(`/${db}/foo`, { _rev: rev1, bar: 1 }), 409, 'conflict');
  assertError(await c.put(`/${db}/foo`, { _rev: '1-asfafasdf', bar: 1 }), 409, 'conflict');

  // And the cycle repeats.
  const del2 = await c.del(`/${db}/foo?rev=${again.body.rev}`);
  assert.match(del2.body.rev, /^4-/);
  const post = await c.post(`/${db}`, { _id: 'foo', round: 3 });
  assert.equal(post.status, 201);
  assert.match(post.body.rev, /^5-/);
  assert.equal((await c.get(`/${db}`)).body.doc_count, 1);
});

// ------------------------------------------------------------------------------- POST /db, batch

test('POST /db creates with a generated id, honours a given _id, Location and ETag', async () => {
  const db = await freshDb('post');
  const r = await c.post(`/${db}`, { foo: 'bar' });
  assert.equal(r.status, 201);
  assert.equal(r.body.ok, true);
  assert.match(r.body.id, /^[0-9a-f]{32}$/);
  assert.match(r.body.rev, /^1-/);
  assert.equal(r.headers.location, `${server.url}${db}/${r.body.id}`);
  assert.equal(r.headers.etag, `"${r.body.rev}"`);
  assert.equal((await c.get(`/${db}/${r.body.id}`)).body.foo, 'bar');

  const named = await c.post(`/${db}`, { _id: 'oppossum', yar: 'matey' });
  assert.equal(named.status, 201);
  assert.equal(named.body.id, 'oppossum');
  assert.equal((await c.get(`/${db}/oppossum`)).body.yar, 'matey');

  assertError(await c.post(`/${db}`, { _id: 'oppossum', yar: 'again' }), 409, 'conflict');
});

test('POST /db without an _id makes a new document: a `_rev` or `_revisions` sent with it is dropped (couch_httpd_db)', async () => {
  const db = await freshDb('postrev');
  for (const body of [{ _rev: `1-${HASH_A}`, v: 1 }, { _revisions: { start: 3, ids: [HASH_A, HASH_B] }, v: 2 }]) {
    const r = await c.post(`/${db}`, body);
    assert.equal(r.status, 201, r.text);
    assert.match(r.body.id, /^[0-9a-f]{32}$/);
    assert.match(r.body.rev, /^1-/);
    const got = (await c.get(`/${db}/${r.body.id}?revs=true`)).body;
    assert.equal(got.v, body.v);
    assert.equal(got._revisions.ids.length, 1);
  }
  // With an _id, `_rev` still names the edited revision.
  const first = await c.post(`/${db}`, { _id: 'named', v: 1 });
  const second = await c.post(`/${db}`, { _id: 'named', _rev: first.body.rev, v: 2 });
  assert.equal(second.status, 201, second.text);
  assert.match(second.body.rev, /^2-/);
});

test('POST /db needs Content-Type application/json (415)', async () => {
  const db = await freshDb('postctype');
  const r = await c.request('POST', `/${db}`, { raw: '{"a":1}', headers: { 'Content-Type': 'text/plain' } });
  assertError(r, 415, 'bad_content_type');
  assert.equal((await c.get(`/${db}`)).body.doc_count, 0);
});

test('batch=ok answers 202 {ok,id} without rev, and the write lands (PUT and POST)', async () => {
  const db = await freshDb('batch');
  const put = await c.put(`/${db}/b1?batch=ok`, { v: 1 });
  assert.equal(put.status, 202);
  assert.equal(put.body.ok, true);
  assert.equal(put.body.id, 'b1');
  assert.equal(put.body.rev, undefined);
  // The PUT's Location comes with the 202 (couch_httpd_db:update_doc); POST /db's batch answer has none.
  assert.equal(put.headers.location, `${server.url}${db}/b1`);
  assert.equal(put.headers.etag, undefined);

  const post = await c.post(`/${db}?batch=ok`, { v: 2 });
  assert.equal(post.status, 202);
  assert.equal(post.body.ok, true);
  assert.equal(typeof post.body.id, 'string');
  assert.equal(post.body.rev, undefined);
  assert.equal(post.headers.location, undefined);

  const copy = await c.copy(`/${db}/b1?batch=ok`, { headers: { Destination: 'b1copy' } });
  assert.equal(copy.status, 202, copy.text);
  assert.deepEqual(copy.body, { ok: true, id: 'b1copy' });
  assert.equal(copy.headers.location, `${server.url}${db}/b1copy`);

  const g1 = await eventually(`/${db}/b1`);
  assert.equal(g1.status, 200);
  assert.equal(g1.body.v, 1);
  const g2 = await eventually(`/${db}/${post.body.id}`);
  assert.equal(g2.status, 200);
  assert.equal(g2.body.v, 2);
});

// ------------------------------------------------------------------------------- ids and fields

test('ids starting with "_" are reserved: 400, except _design/ and _local/', async () => {
  const db = await freshDb('ids');
  assertError(await c.put(`/${db}/_foo`, {}), 400, 'bad_request');
  assertError(await c.put(`/${db}/_other`, { v: 1 }), 400, 'bad_request');
  assertError(await c.post(`/${db}`, { _id: '_invalid' }), 400, 'bad_request', 'Only reserved document ids may start with underscore.');
  assertError(await c.post(`/${db}`, { _id: 1 }), 400, 'bad_request');

  const design = await c.put(`/${db}/_design/ok`, { views: {} });
  assert.equal(design.status, 201);
  assert.equal(design.body.id, '_design/ok');
  const local = await c.put(`/${db}/_local/ok`, { v: 1 });
  assert.equal(local.status, 201);
  assert.equal(local.body.id, '_local/ok');

  const postedDesign = await c.post(`/${db}`, { _id: '_design/posted' });
  assert.equal(postedDesign.status, 201);
  assert.equal((await c.get(`/${db}/_design/posted`)).body._id, '_design/posted');
  const postedLocal = await c.post(`/${db}`, { _id: '_local/posted' });
  assert.equal(postedLocal.status, 201);
  assert.equal(postedLocal.body.rev, '0-1');
  assert.equal((await c.get(`/${db}/_local/posted`)).body._id, '_local/posted');
  assert.equal((await c.get(`/${db}`)).body.doc_count, 2);
});

test('unknown special fields are doc_validation, 500 as in CouchDB 1.6 (PUT and POST); known metadata is dropped', async () => {
  const db = await freshDb('specials');
  const bad: [string, Record<string, unknown>, string][] = [
    ['goldfish', { _zing: 4 }, '_zing'],
    ['zebrafish', { _zoom: 'hello' }, '_zoom'],
    ['mudfish', { zane: 'goldfish', _fan: 'something' }, '_fan'],
    ['tastyfish', { _bing: { 'wha?': 'soda can' } }, '_bing'],
    // Known members of the wrong type are bad members too (couch_doc:transfer_fields).
    ['yesfish', { _deleted: 'yes' }, '_deleted'],
    ['nullfish', { _deleted: null }, '_deleted'],
    ['fivefish', { _attachments: 5 }, '_attachments'],
    ['listfish', { _attachments: [] }, '_attachments'],
  ];
  for (const [id, body, field] of bad) {
    assertError(await c.put(`/${db}/${id}`, body), 500, 'doc_validation', `Bad special document member: ${field}`);
    assertError(await c.post(`/${db}`, body), 500, 'doc_validation', `Bad special document member: ${field}`);
    assert.equal((await c.get(`/${db}/${id}`)).status, 404);
  }
  assert.equal((await c.get(`/${db}`)).body.doc_count, 0);

  const meta = await c.put(`/${db}/withmeta`, {
    v: 1, _revs_info: [], _conflicts: ['1-x'], _deleted_conflicts: [], _local_seq: 9,
  });
  assert.equal(meta.status, 201);
  assert.deepEqual((await c.get(`/${db}/withmeta`)).body, { _id: 'withmeta', _rev: meta.body.rev, v: 1 });
});

test('PUT: the URL names the document, but an _id in the body must be a valid id too', async () => {
  const db = await freshDb('bodyid');
  assertError(await c.put(`/${db}/idn`, { _id: '_bad' }), 400, 'bad_request', 'Only reserved document ids may start with underscore.');
  assertError(await c.put(`/${db}/idn`, { _id: '' }), 400, 'bad_request');
  assert.equal((await c.get(`/${db}/idn`)).status, 404);
  const other = await c.put(`/${db}/idn`, { _id: 'another', v: 1 });
  assert.equal(other.status, 201);
  assert.equal(other.body.id, 'idn');
});

test('long document ids (3000+ characters) round-trip and stay distinct', async () => {
  const db = await freshDb('longid');
  const prefix = 'x'.repeat(3000);
  const ids = [`${prefix}-one`, `${prefix}-two`, `${'é'.repeat(1600)}-three`];
  const revs: string[] = [];
  for (const [i, id] of ids.entries()) revs.push(await create(db, id, { i }));
  for (const [i, id] of ids.entries()) {
    const g = await c.get(`/${db}/${encodeURIComponent(id)}`);
    assert.equal(g.status, 200);
    assert.equal(g.body._id, id);
    assert.equal(g.body.i, i);
  }
  const all = await c.get(`/${db}/_all_docs`);
  assert.deepEqual(all.body.rows.map((r: { id: string }) => r.id).sort(), [...ids].sort());

  const upd = await c.put(`/${db}/${encodeURIComponent(ids[0]!)}`, { _rev: revs[0], i: 'updated' });
  assert.equal(upd.status, 201);
  assert.equal((await c.get(`/${db}/${encodeURIComponent(ids[1]!)}`)).body.i, 1);
  const del = await c.del(`/${db}/${encodeURIComponent(ids[1]!)}?rev=${revs[1]}`);
  assert.equal(del.status, 200);
  assertError(await c.get(`/${db}/${encodeURIComponent(ids[1]!)}`), 404, 'not_found', 'deleted');
  assert.equal((await c.get(`/${db}/${encodeURIComponent(ids[0]!)}`)).body.i, 'updated');
  assert.equal((await c.get(`/${db}`)).body.doc_count, 2);
});

test('Unicode ids and %2F inside an id', async () => {
  const db = await freshDb('unicode');
  const id = 'ünïcødé ☃ 𝄞 日本語';
  const r = await c.put(`/${db}/${encodeURIComponent(id)}`, { snow: '☃' });
  assert.equal(r.status, 201);
  assert.equal(r.body.id, id);
  const g = await c.get(`/${db}/${encodeURIComponent(id)}`);
  assert.equal(g.status, 200);
  assert.equal(g.body._id, id);
  assert.equal(g.body.snow, '☃');

  const slash = await c.put(`/${db}/a%2Fb`, { v: 1 });
  assert.equal(slash.status, 201);
  assert.equal(slash.body.id, 'a/b');
  assert.ok((slash.headers.location as string).endsWith(`/${db}/a%2Fb`), String(slash.headers.location));
  const gs = await c.get(`/${db}/a%2Fb`);
  assert.equal(gs.status, 200);
  assert.equal(gs.body._id, 'a/b');
  // An unencoded slash is not part of the id: /db/a/b is (an attachment of) document "a".
  assertError(await c.get(`/${db}/a`), 404, 'not_found', 'missing');
  assert.notEqual((await c.get(`/${db}/a/b`)).status, 200);

  const ids = (await c.get(`/${db}/_all_docs`)).body.rows.map((row: { id: string }) => row.id);
  assert.ok(ids.includes(id));
  assert.ok(ids.includes('a/b'));
});

// ------------------------------------------------------------------------------- bodies

test('malformed JSON, invalid UTF-8 and non-object bodies are 400 {error, reason}', async () => {
  const db = await freshDb('bodies');
  assertError(await c.request('PUT', `/${db}/j`, { raw: '{"a":' }), 400, 'bad_request');
  assertError(await c.request('PUT', `/${db}/j`, { raw: '{"a":1}}' }), 400, 'bad_request');
  const badUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
  assertError(await c.request('PUT', `/${db}/j`, { raw: badUtf8 }), 400, 'bad_request');
  for (const raw of ['[]', '"a string"', '42', 'null', 'true']) {
    assertError(await c.request('PUT', `/${db}/j`, { raw }), 400, 'bad_request', 'Document must be a JSON object');
  }
  assertError(await c.request('POST', `/${db}`, { raw: '{"a":', headers: { 'Content-Type': 'application/json' } }), 400, 'bad_request');
  assertError(await c.request('POST', `/${db}`, { raw: badUtf8, headers: { 'Content-Type': 'application/json' } }), 400, 'bad_request');
  assert.equal((await c.get(`/${db}/j`)).status, 404);
  assert.equal((await c.get(`/${db}`)).body.doc_count, 0);
});

test('POST /db with a non-object body: 400 "Document must be a JSON object"', async () => {
  const db = await freshDb('postarray');
  assertError(await c.request('POST', `/${db}`, { raw: '[]', headers: { 'Content-Type': 'application/json' } }),
    400, 'bad_request', 'Document must be a JSON object');
});

test('unsupported methods on a document are 405 method_not_allowed', async () => {
  const db = await freshDb('methods');
  await create(db, 'x', {});
  const r = await c.request('PATCH', `/${db}/x`, { body: {} });
  assertError(r, 405, 'method_not_allowed');
});

test('max_document_size: larger documents are 413 too_large (PUT, POST, chunked PUT)', async () => {
  const db = await freshDb('maxsize');
  const set = await c.put('/_config/couchdb/max_document_size', '1024');
  assert.equal(set.status, 200, set.text);
  const previous = set.body as string;
  assert.equal(typeof previous, 'string');
  try {
    assert.equal((await c.get('/_config/couchdb/max_document_size')).body, '1024');
    const big = { blob: 'x'.repeat(2000) };
    assertError(await c.put(`/${db}/big`, big), 413, 'too_large');
    assertError(await c.post(`/${db}`, big), 413, 'too_large');
    assertError(await chunkedRequest('PUT', `/${db}/bigchunked`, JSON.stringify(big)), 413, 'too_large');
    assert.equal((await c.get(`/${db}/big`)).status, 404);
    assert.equal((await c.get(`/${db}/bigchunked`)).status, 404);

    const small = await c.put(`/${db}/small`, { blob: 'x'.repeat(100) });
    assert.equal(small.status, 201);
    const smallChunked = await chunkedRequest('PUT', `/${db}/smallchunked`, JSON.stringify({ blob: 'y'.repeat(100) }));
    assert.equal(smallChunked.status, 201, smallChunked.text);
  } finally {
    const restore = await c.put('/_config/couchdb/max_document_size', previous);
    assert.equal(restore.status, 200);
  }
  assert.equal((await c.get('/_config/couchdb/max_document_size')).body, previous);
  assert.equal((await c.put(`/${db}/big`, { blob: 'x'.repeat(2000) })).status, 201);
});

test('max_document_size also bounds a chunked POST /db body', async () => {
  const db = await freshDb('maxsizepost');
  const set = await c.put('/_config/couchdb/max_document_size', '1024');
  assert.equal(set.status, 200, set.text);
  try {
    const r = await chunkedRequest('POST', `/${db}`, JSON.stringify({ _id: 'bigpost', blob: 'x'.repeat(2000) }));
    assertError(r, 413, 'too_large');
    assert.equal((await c.get(`/${db}/bigpost`)).status, 404);
  } finally {
    assert.equal((await c.put('/_config/couchdb/max_document_size', set.body as string)).status, 200);
  }
});

// ------------------------------------------------------------------------------- revision metadata

test('revs=true gives _revisions; revs_info=true gives _revs_info newest first', async () => {
  const db = await freshDb('revs');
  const rev1 = await create(db, 'r', { v: 1 });
  const rev2 = (await c.put(`/${db}/r`, { _rev: rev1, v: 2 })).body.rev as string;
  const rev3 = (await c.put(`/${db}/r`, { _rev: rev2, v: 3 })).body.rev as string;

  const revs = await c.get(`/${db}/r?revs=true`);
  assert.deepEqual(revs.body._revisions, { start: 3, ids: [rev3, rev2, rev1].map((r) => r.split('-')[1]) });
  assert.equal(revs.headers.etag, `"${rev3}"`, 'revs is not meta: ETag stays');

  const info = await c.get(`/${db}/r?revs_info=true`);
  assert.deepEqual(info.body._revs_info, [
    { rev: rev3, status: 'available' },
    { rev: rev2, status: 'available' },
    { rev: rev1, status: 'available' },
  ]);
  assert.equal(info.headers.etag, undefined, 'no ETag when meta information is returned');

  // Of an old revision: the path from that revision down.
  const old = await c.get(`/${db}/r?rev=${rev2}&revs=true`);
  assert.equal(old.body.v, 2);
  assert.equal(old.headers.etag, `"${rev2}"`);
  assert.deepEqual(old.body._revisions, { start: 2, ids: [rev2, rev1].map((r) => r.split('-')[1]) });

  // A deleted revision named by rev is served, as its tombstone.
  const del = await c.del(`/${db}/r?rev=${rev3}`);
  const tomb = await c.get(`/${db}/r?rev=${del.body.rev}&revs=true`);
  assert.equal(tomb.status, 200);
  assert.equal(tomb.body._deleted, true);
  assert.equal(tomb.body._revisions.start, 4);

  assertError(await c.get(`/${db}/r?rev=9-${HASH_A}`), 404, 'not_found', 'missing');
});

test('a revision named by rev or open_revs comes without meta information, and with its ETag (couch_db:open_doc_revs)', async () => {
  const db = await freshDb('revnometa');
  const { loser, winner } = await conflicted(db, 'm');
  const meta = 'revs_info=true&conflicts=true&deleted_conflicts=true&local_seq=true';

  // The winner by rev: none of _revs_info, _conflicts, _local_seq (meta=true alike); ETag and If-None-Match apply.
  for (const query of [meta, 'meta=true']) {
    const byRev = await c.get(`/${db}/m?rev=${winner}&${query}`);
    assert.equal(byRev.status, 200, byRev.text);
    assert.deepEqual(Object.keys(byRev.body).filter((k) => k.startsWith('_')).sort(), ['_id', '_rev']);
    assert.equal(byRev.headers.etag, `"${winner}"`);
    const cached = await c.get(`/${db}/m?rev=${winner}&${query}`, { headers: { 'If-None-Match': `"${winner}"` } });
    assert.equal(cached.status, 304);
  }
  // revs still applies.
  const withRevs = await c.get(`/${db}/m?rev=${loser}&revs=true&${meta}`);
  assert.deepEqual(withRevs.body._revisions, { start: 1, ids: [loser.split('-')[1]] });
  assert.equal(withRevs.body._conflicts, undefined);

  // open_revs: each revision without meta information.
  const all = await c.get(`/${db}/m?open_revs=all&${meta}`, { headers: { Accept: 'application/json' } });
  assert.equal(all.status, 200);
  assert.equal(all.body.length, 2);
  for (const r of all.body as { ok: Record<string, unknown> }[]) {
    assert.deepEqual(Object.keys(r.ok).filter((k) => k.startsWith('_')).sort(), ['_id', '_rev']);
  }

  // Without rev the winner carries them.
  const plain = await c.get(`/${db}/m?${meta}`);
  assert.deepEqual(plain.body._conflicts, [loser]);
  assert.equal(typeof plain.body._local_seq, 'number');
  assert.equal(plain.headers.etag, undefined);
});

test('local_seq=true gives the document\'s update sequence', async () => {
  const db = await freshDb('localseq');
  const rev1 = await create(db, 'first', { v: 1 });
  await create(db, 'second', { v: 1 });
  const g = await c.get(`/${db}/first?local_seq=true`);
  assert.equal(g.body._local_seq, 1);
  assert.equal(g.headers.etag, undefined);
  await c.put(`/${db}/first`, { _rev: rev1, v: 2 });
  assert.equal((await c.get(`/${db}/first?local_seq=true`)).body._local_seq, 3);
  assert.equal((await c.get(`/${db}/second?local_seq=true`)).body._local_seq, 2);
});

/** Builds doc `id` with two conflicting leaves 1-aaa… and 1-bbb… (winner 1-bbb…). */
async function conflicted(db: string, id: string): Promise<{ loser: string; winner: string }> {
  const loser = `1-${HASH_A}`;
  const winner = `1-${HASH_B}`;
  const r = await c.post(`/${db}/_bulk_docs`, {
    new_edits: false,
    docs: [
      { _id: id, _rev: loser, side: 'a' },
      { _id: id, _rev: winner, side: 'b' },
    ],
  });
  assert.equal(r.status, 201, r.text);
  return { loser, winner };
}

test('conflicts from _bulk_docs new_edits=false: conflicts=true, open_revs=all, deterministic winner', async () => {
  const db = await freshDb('conflicts');
  const { loser, winner } = await conflicted(db, 'c');

  const plain = await c.get(`/${db}/c`);
  assert.deepEqual(plain.body, { _id: 'c', _rev: winner, side: 'b' });
  assert.equal(plain.headers.etag, `"${winner}"`);

  const withConflicts = await c.get(`/${db}/c?conflicts=true`);
  assert.deepEqual(withConflicts.body, { _id: 'c', _rev: winner, side: 'b', _conflicts: [loser] });
  assert.equal(withConflicts.headers.etag, undefined);

  const all = await c.get(`/${db}/c?open_revs=all`);
  assert.equal(all.status, 200);
  assert.ok(Array.isArray(all.body));
  const docs = all.body.map((entry: { ok: { _rev: string } }) => entry.ok).sort((a: { _rev: string }, b: { _rev: string }) => a._rev.localeCompare(b._rev));
  assert.deepEqual(docs, [
    { _id: 'c', _rev: loser, side: 'a' },
    { _id: 'c', _rev: winner, side: 'b' },
  ]);

  // Each loser is still readable by rev, and is a leaf one can edit.
  assert.equal((await c.get(`/${db}/c?rev=${loser}`)).body.side, 'a');
  const edited = await c.put(`/${db}/c`, { _rev: loser, side: 'a2' });
  assert.equal(edited.status, 201);
  assert.match(edited.body.rev, /^2-/);
  // Now the longer branch wins and 1-bbb… is the conflict.
  const after = await c.get(`/${db}/c?conflicts=true`);
  assert.equal(after.body._rev, edited.body.rev);
  assert.deepEqual(after.body._conflicts, [winner]);
});

test('deleted_conflicts, conflicts without conflicts, and meta=true', async () => {
  const db = await freshDb('delconf');
  const { loser, winner } = await conflicted(db, 'c');
  const del = await c.del(`/${db}/c?rev=${loser}`);
  assert.equal(del.status, 200);
  const tomb = del.body.rev as string;
  assert.match(tomb, /^2-/);

  // The live 1-bbb… beats the deeper deleted branch.
  const plain = await c.get(`/${db}/c`);
  assert.equal(plain.body._rev, winner);

  const dc = await c.get(`/${db}/c?deleted_conflicts=true`);
  assert.deepEqual(dc.body._deleted_conflicts, [tomb]);
  assert.equal(dc.body._conflicts, undefined);

  // conflicts=true with no live conflict adds nothing, so the ETag stays (CouchDB's meta is empty).
  const none = await c.get(`/${db}/c?conflicts=true`);
  assert.equal(none.body._conflicts, undefined);
  assert.equal(none.headers.etag, `"${winner}"`);

  const meta = await c.get(`/${db}/c?meta=true`);
  assert.deepEqual(meta.body._deleted_conflicts, [tomb]);
  assert.equal(meta.body._conflicts, undefined);
  assert.deepEqual(meta.body._revs_info, [{ rev: winner, status: 'available' }]);
  assert.equal(meta.headers.etag, undefined);

  // With meta information there is no ETag, so If-None-Match cannot short-cut the answer.
  const inm = await c.get(`/${db}/c?meta=true`, { headers: { 'If-None-Match': `"${winner}"` } });
  assert.equal(inm.status, 200);
  assert.deepEqual(inm.body._deleted_conflicts, [tomb]);
});

// ------------------------------------------------------------------------------- open_revs

test('open_revs as a JSON array: found revisions and {missing}', async () => {
  const db = await freshDb('openrevs');
  const rev1 = await create(db, 'o', { v: 1 });
  const rev2 = (await c.put(`/${db}/o`, { _rev: rev1, v: 2 })).body.rev as string;
  const missing = `3-${HASH_C}`;
  const r = await c.get(`/${db}/o?open_revs=${encodeURIComponent(JSON.stringify([rev1, missing]))}`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, [
    { ok: { _id: 'o', _rev: rev1, v: 1 } },
    { missing },
  ]);

  const withRevs = await c.get(`/${db}/o?revs=true&open_revs=${encodeURIComponent(JSON.stringify([rev2]))}`);
  assert.deepEqual(withRevs.body, [
    { ok: { _id: 'o', _rev: rev2, v: 2, _revisions: { start: 2, ids: [rev2, rev1].map((x) => x.split('-')[1]) } } },
  ]);

  // A document that does not exist: every asked revision is missing.
  const none = await c.get(`/${db}/nothing?open_revs=${encodeURIComponent(JSON.stringify([rev1]))}`);
  assert.equal(none.status, 200);
  assert.deepEqual(none.body, [{ missing: rev1 }]);

  assert.equal((await c.get(`/${db}/o?open_revs=${encodeURIComponent('[not json')}`)).status, 400);
});

test('open_revs=all includes deleted leaves; on a missing document it is an empty list', async () => {
  const db = await freshDb('openrevsall');
  const rev1 = await create(db, 'o', { v: 1 });
  const del = await c.del(`/${db}/o?rev=${rev1}`);
  const r = await c.get(`/${db}/o?open_revs=all`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, [{ ok: { _id: 'o', _rev: del.body.rev, _deleted: true } }]);

  const missing = await c.get(`/${db}/never-existed?open_revs=all`);
  assert.equal(missing.status, 200, missing.text);
  assert.deepEqual(missing.body, []);
});

test('open_revs with latest=true gives the leaf descending from the asked revision', async () => {
  const db = await freshDb('latest');
  const rev1 = await create(db, 'l', { v: 1 });
  const rev2 = (await c.put(`/${db}/l`, { _rev: rev1, v: 2 })).body.rev as string;
  const q = encodeURIComponent(JSON.stringify([rev1]));
  const plain = await c.get(`/${db}/l?open_revs=${q}`);
  assert.deepEqual(plain.body, [{ ok: { _id: 'l', _rev: rev1, v: 1 } }]);
  const latest = await c.get(`/${db}/l?open_revs=${q}&latest=true`);
  assert.deepEqual(latest.body, [{ ok: { _id: 'l', _rev: rev2, v: 2 } }]);
  const byRev = await c.get(`/${db}/l?rev=${rev1}&latest=true`);
  assert.equal(byRev.body._rev, rev2);
});

test('open_revs with Accept: multipart/mixed answers one part per revision', async () => {
  const db = await freshDb('multipart');
  const { loser, winner } = await conflicted(db, 'm');
  const missing = `2-${HASH_C}`;
  const q = encodeURIComponent(JSON.stringify([loser, winner, missing]));
  const r = await c.get(`/${db}/m?open_revs=${q}`, { headers: { Accept: 'multipart/mixed' } });
  assert.equal(r.status, 200);
  const ctype = r.headers['content-type'] as string;
  assert.match(ctype, /^multipart\/mixed; boundary=/);
  const parts = parseMultipart(ctype, r.text);
  assert.equal(parts.length, 3);
  const found = parts.filter((p) => !/error="true"/.test(p.headers['content-type'] ?? ''));
  assert.equal(found.length, 2);
  for (const p of found) assert.match(p.headers['content-type']!, /^application\/json/);
  assert.deepEqual(found.map((p) => JSON.parse(p.body)).sort((a, b) => a._rev.localeCompare(b._rev)), [
    { _id: 'm', _rev: loser, side: 'a' },
    { _id: 'm', _rev: winner, side: 'b' },
  ]);
  const errorPart = parts.find((p) => /error="true"/.test(p.headers['content-type'] ?? ''));
  assert.ok(errorPart);
  assert.deepEqual(JSON.parse(errorPart.body), { missing });

  const all = await c.get(`/${db}/m?open_revs=all`, { headers: { Accept: 'multipart/mixed' } });
  assert.equal(parseMultipart(all.headers['content-type'] as string, all.text).length, 2);
});

// ------------------------------------------------------------------------------- revision ids, stemming

test('revision ids are deterministic: the same edit in two databases gives the same rev', async () => {
  const one = await freshDb('detone');
  const two = await freshDb('dettwo');
  const body = { name: 'same', list: [1, 2, { deep: true }], n: 1.5 };
  const a1 = await create(one, 'doc', body);
  const b1 = await create(two, 'doc', body);
  assert.equal(a1, b1);
  const a2 = (await c.put(`/${one}/doc`, { _rev: a1, name: 'edited' })).body.rev;
  const b2 = (await c.put(`/${two}/doc`, { _rev: b1, name: 'edited' })).body.rev;
  assert.match(a2, REV);
  assert.equal(a2, b2);
  const ad = (await c.del(`/${one}/doc?rev=${a2}`)).body.rev;
  const bd = (await c.del(`/${two}/doc?rev=${b2}`)).body.rev;
  assert.equal(ad, bd);

  // A different edit gives a different revision.
  const other = await create(two, 'doc2', { ...body, n: 2 });
  assert.notEqual(other, a1);
});

test('_revs_limit stems revision histories on write', async () => {
  const db = await freshDb('stem');
  const set = await c.put(`/${db}/_revs_limit`, 3);
  assert.equal(set.status, 200);
  assert.equal((await c.get(`/${db}/_revs_limit`)).body, 3);

  const revs = [await create(db, 's', { v: 0 })];
  for (let i = 1; i <= 5; i++) {
    const r = await c.put(`/${db}/s`, { _rev: revs[revs.length - 1], v: i });
    assert.equal(r.status, 201);
    revs.push(r.body.rev);
  }
  const g = await c.get(`/${db}/s?revs=true`);
  assert.equal(g.body._rev, revs[5]);
  assert.equal(g.body._revisions.start, 6);
  assert.deepEqual(g.body._revisions.ids, revs.slice(3).reverse().map((r) => r.split('-')[1]));
  const info = await c.get(`/${db}/s?revs_info=true`);
  assert.equal(info.body._revs_info.length, 3);
  // A stemmed-away revision is unknown; the oldest kept one still reads.
  assertError(await c.get(`/${db}/s?rev=${revs[1]}`), 404, 'not_found', 'missing');
  assert.equal((await c.get(`/${db}/s?rev=${revs[3]}`)).body.v, 3);
});

// ------------------------------------------------------------------------------- _local documents

test('_local documents: 0-N revisions, conflicts, delete, If-None-Match', async () => {
  const db = await freshDb('local');
  const seqBefore = (await c.get(`/${db}`)).body.update_seq;

  const p1 = await c.put(`/${db}/_local/cp`, { last_seq: 1 });
  assert.equal(p1.status, 201);
  assert.deepEqual(p1.body, { ok: true, id: '_local/cp', rev: '0-1' });
  assert.equal(p1.headers.etag, '"0-1"');

  const g1 = await c.get(`/${db}/_local/cp`);
  assert.equal(g1.status, 200);
  assert.deepEqual(g1.body, { _id: '_local/cp', _rev: '0-1', last_seq: 1 });
  assert.equal(g1.headers.etag, '"0-1"');
  assert.equal((await c.get(`/${db}/_local/cp`, { headers: { 'If-None-Match': '"0-1"' } })).status, 304);

  assertError(await c.put(`/${db}/_local/cp`, { last_seq: 2 }), 409, 'conflict');
  const p2 = await c.put(`/${db}/_local/cp`, { _rev: '0-1', last_seq: 2 });
  assert.equal(p2.status, 201);
  assert.equal(p2.body.rev, '0-2');
  assertError(await c.put(`/${db}/_local/cp`, { _rev: '0-1', last_seq: 3 }), 409, 'conflict');
  const p3 = await c.put(`/${db}/_local/cp?rev=0-2`, { last_seq: 3 });
  assert.equal(p3.body.rev, '0-3');
  assert.deepEqual((await c.get(`/${db}/_local/cp`)).body, { _id: '_local/cp', _rev: '0-3', last_seq: 3 });

  // Not documents of the database: not counted, not listed, not in the changes feed, no seq.
  const info = await c.get(`/${db}`);
  assert.equal(info.body.doc_count, 0);
  assert.equal(info.body.update_seq, seqBefore);
  const all = await c.get(`/${db}/_all_docs`);
  assert.equal(all.body.rows.length, 0);
  const changes = await c.get(`/${db}/_changes`);
  assert.equal(changes.body.results.length, 0);

  assertError(await c.del(`/${db}/_local/cp`), 409, 'conflict');
  const d = await c.del(`/${db}/_local/cp?rev=0-3`);
  assert.equal(d.status, 200);
  assert.deepEqual(d.body, { ok: true, id: '_local/cp', rev: '0-0' });
  // As every DELETE answered by couch_httpd_db:update_doc: the new revision as ETag, no Location.
  assert.equal(d.headers.etag, '"0-0"');
  assert.equal(d.headers.location, undefined);
  assertError(await c.get(`/${db}/_local/cp`), 404, 'not_found', 'missing');
  assertError(await c.del(`/${db}/_local/cp?rev=0-3`), 404, 'not_found');
  assertError(await c.del(`/${db}/_local/cp?rev=0-0`), 404, 'not_found');
  // A PUT of a deletion is not looked up first (couch_db_updater:update_local_docs): from revision
  // 0 it changes nothing and answers 0-0; from another revision it is a conflict.
  const tombstone = await c.put(`/${db}/_local/never`, { _deleted: true });
  assert.equal(tombstone.status, 200, tombstone.text);
  assert.deepEqual(tombstone.body, { ok: true, id: '_local/never', rev: '0-0' });
  assertError(await c.put(`/${db}/_local/never`, { _deleted: true, _rev: '0-3' }), 409, 'conflict');
  assertError(await c.get(`/${db}/_local/never`), 404, 'not_found', 'missing');

  // Recreated from scratch.
  const again = await c.put(`/${db}/_local/cp`, { last_seq: 9 });
  assert.equal(again.status, 201);
  assert.equal(again.body.rev, '0-1');
});

// ------------------------------------------------------------------------------- design documents

test('design documents: create, read, update, list, copy, delete', async () => {
  const db = await freshDb('design');
  const ddoc = { language: 'javascript', views: { all: { map: 'function(doc) { emit(doc._id, null); }' } } };
  const p = await c.put(`/${db}/_design/app`, ddoc);
  assert.equal(p.status, 201);
  assert.equal(p.body.id, '_design/app');
  assert.equal(p.headers.etag, `"${p.body.rev}"`);

  const g = await c.get(`/${db}/_design/app`);
  assert.deepEqual(g.body, { _id: '_design/app', _rev: p.body.rev, ...ddoc });
  assert.equal(g.headers.etag, `"${p.body.rev}"`);

  assertError(await c.put(`/${db}/_design/app`, ddoc), 409, 'conflict');
  const u = await c.put(`/${db}/_design/app`, { ...ddoc, _rev: p.body.rev, views: {} });
  assert.equal(u.status, 201);
  assert.match(u.body.rev, /^2-/);
  assert.deepEqual((await c.get(`/${db}/_design/app`)).body.views, {});

  const all = await c.get(`/${db}/_all_docs`);
  assert.deepEqual(all.body.rows.map((r: { id: string }) => r.id), ['_design/app']);

  const copy = await c.copy(`/${db}/_design/app`, { headers: { Destination: '_design/app2' } });
  assert.equal(copy.status, 201);
  assert.equal(copy.body.id, '_design/app2');
  assert.deepEqual((await c.get(`/${db}/_design/app2`)).body.views, {});

  const d = await c.del(`/${db}/_design/app?rev=${u.body.rev}`);
  assert.equal(d.status, 200);
  assertError(await c.get(`/${db}/_design/app`), 404, 'not_found', 'deleted');
  assert.equal((await c.get(`/${db}`)).body.doc_count, 1);
});

test('_design%2F in the URL names the design document (design_paths.js)', async () => {
  const db = await freshDb('designslash');
  const p = await c.put(`/${db}/_design%2Fencoded`, { views: {} });
  assert.equal(p.status, 201, p.text);
  assert.equal(p.body.id, '_design/encoded');
  assert.equal((await c.get(`/${db}/_design/encoded`)).body._id, '_design/encoded');
  // CouchDB redirects a GET to the canonical /_design/ URL (a browser lands on the document).
  const g = await c.get(`/${db}/_design%2Fencoded`);
  assert.equal(g.status, 301);
  assert.ok(String(g.headers.location).endsWith(`/${db}/_design/encoded`), String(g.headers.location));
  assert.equal((await c.get(`/${db}/_design%2Fencoded`, { followRedirects: true })).body._id, '_design/encoded');
});

// ------------------------------------------------------------------------------- COPY

test('COPY to a new id: 201 {ok,id,rev} with ETag, same body', async () => {
  const db = await freshDb('copy');
  await create(db, 'doc_to_be_copied', { v: 1, nested: { a: [1] } });
  const r = await c.copy(`/${db}/doc_to_be_copied`, { headers: { Destination: 'doc_that_was_copied' } });
  assert.equal(r.status, 201);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.id, 'doc_that_was_copied');
  assert.match(r.body.rev, /^1-/);
  assert.equal(r.headers.etag, `"${r.body.rev}"`);
  assert.deepEqual((await c.get(`/${db}/doc_that_was_copied`)).body,
    { _id: 'doc_that_was_copied', _rev: r.body.rev, v: 1, nested: { a: [1] } });
});

test('COPY takes the Destination id as written: not percent-decoded, its bytes UTF-8', async () => {
  const db = await freshDb('copyname');
  await create(db, 'src', { v: 1 });
  const literal = await c.copy(`/${db}/src`, { headers: { Destination: 'sp%20ace' } });
  assert.equal(literal.status, 201, literal.text);
  assert.equal(literal.body.id, 'sp%20ace');
  assert.equal((await c.get(`/${db}/${encodeURIComponent('sp%20ace')}`)).body.v, 1);
  assert.equal((await c.get(`/${db}/sp%20ace`)).status, 404);
  const spaced = await c.copy(`/${db}/src`, { headers: { Destination: Buffer.from('dé s', 'utf8').toString('latin1') } });
  assert.equal(spaced.status, 201, spaced.text);
  assert.equal(spaced.body.id, 'dé s');
  assert.equal((await c.get(`/${db}/${encodeURIComponent('dé s')}`)).body.v, 1);
});

test('COPY onto an existing document needs ?rev= in Destination', async () => {
  const db = await freshDb('copyover');
  await create(db, 'src', { v: 1 });
  const target = await create(db, 'dst', { v: 2 });
  assertError(await c.copy(`/${db}/src`, { headers: { Destination: 'dst' } }), 409, 'conflict');
  assertError(await c.copy(`/${db}/src`, { headers: { Destination: `dst?rev=1-${HASH_A}` } }), 409, 'conflict');
  const r = await c.copy(`/${db}/src`, { headers: { Destination: `dst?rev=${target}` } });
  assert.equal(r.status, 201);
  assert.equal(r.body.id, 'dst');
  assert.match(r.body.rev, /^2-/);
  const over = await c.get(`/${db}/dst`);
  assert.equal(over.body._rev, r.body.rev);
  assert.equal(over.body.v, 1);
});

test('COPY reads the Destination query as couch_httpd_db:parse_copy_destination_header: one key=revision, its key not looked at', async () => {
  const db = await freshDb('copydestq');
  await create(db, 'src', { v: 1 });
  const target = await create(db, 'dst', { v: 2 });
  // Whatever the key, the value is the destination's revision.
  const r = await c.copy(`/${db}/src`, { headers: { Destination: `dst?current=${target}` } });
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.rev, /^2-/);
  assert.equal((await c.get(`/${db}/dst`)).body.v, 1);
  // A value that is no revision is 400 Invalid rev format, and nothing is written.
  for (const destination of ['fresh?foo=bar', 'fresh?rev=']) {
    assertError(await c.copy(`/${db}/src`, { headers: { Destination: destination } }), 400, 'bad_request', 'Invalid rev format');
  }
  // Other queries (CouchDB 1.6 crashed on them) are 400 bad_request too.
  for (const destination of ['fresh?', 'fresh?rev', `fresh?rev=${target}&batch=ok`, `fresh?rev=${target}?x`]) {
    const bad = await c.copy(`/${db}/src`, { headers: { Destination: destination } });
    assert.equal(bad.status, 400, `${destination}: ${bad.text}`);
    assert.equal(bad.body.error, 'bad_request');
  }
  assertError(await c.get(`/${db}/fresh`), 404, 'not_found', 'missing');
});

test('COPY of an old source revision (?rev=), and COPY errors', async () => {
  const db = await freshDb('copyrev');
  const rev1 = await create(db, 'src', { v: 1 });
  const rev2 = (await c.put(`/${db}/src`, { _rev: rev1, v: 2 })).body.rev as string;
  const r = await c.copy(`/${db}/src?rev=${rev1}`, { headers: { Destination: 'from_old' } });
  assert.equal(r.status, 201);
  assert.equal((await c.get(`/${db}/from_old`)).body.v, 1);
  // If-Match names the source revision too; with ?rev= the two must agree.
  const byEtag = await c.copy(`/${db}/src`, { headers: { Destination: 'from_etag', 'If-Match': `"${rev1}"` } });
  assert.equal(byEtag.status, 201);
  assert.equal((await c.get(`/${db}/from_etag`)).body.v, 1);
  assertError(await c.copy(`/${db}/src?rev=${rev1}`, { headers: { Destination: 'disagree', 'If-Match': `"${rev2}"` } }), 400, 'bad_request',
    'Document rev and etag have different values');
  assert.equal((await c.get(`/${db}/disagree`)).status, 404);

  assertError(await c.copy(`/${db}/src`), 400, 'bad_request');
  assertError(await c.copy(`/${db}/src`, { headers: { Destination: 'http://example.com/db/x' } }), 400, 'bad_request',
    'Destination URL must be relative.');
  assertError(await c.copy(`/${db}/nope`, { headers: { Destination: 'x' } }), 404, 'not_found', 'missing');

  const tomb = (await c.del(`/${db}/src?rev=${rev2}`)).body.rev as string;
  assertError(await c.copy(`/${db}/src`, { headers: { Destination: 'from_deleted' } }), 404, 'not_found', 'deleted');
  assert.equal((await c.get(`/${db}/from_deleted`)).status, 404);
  // The tombstone named by ?rev= is copied as it is: a deleted document, answered 200 without Location.
  const copiedTomb = await c.copy(`/${db}/src?rev=${tomb}`, { headers: { Destination: 'from_tomb' } });
  assert.equal(copiedTomb.status, 200, copiedTomb.text);
  assert.equal(copiedTomb.headers.etag, `"${copiedTomb.body.rev}"`);
  assert.equal(copiedTomb.headers.location, undefined);
  assertError(await c.get(`/${db}/from_tomb`), 404, 'not_found', 'deleted');
  const stored = await c.get(`/${db}/from_tomb?rev=${copiedTomb.body.rev}`);
  assert.equal(stored.body._deleted, true);
});

// Kept last: when it fails, it takes the server down with it.
test('document requests on a missing database are 404 no_db_file, and the server stays up', async () => {
  assertError(await c.get('/docs_no_such_db_here/nope'), 404, 'not_found', 'no_db_file');
  assertError(await c.put('/docs_no_such_db_here/nope', { v: 1 }), 404, 'not_found', 'no_db_file');
  await sleep(50);
  const root = await c.get('/');
  assert.equal(root.status, 200);
  assert.equal(root.body.couchdb, 'Welcome');
});

test('an id with a lone surrogate (a JSON escape) is created once, kept exactly, and a second create conflicts', async () => {
  assert.equal((await c.put('/docs_lone')).status, 201);
  const body = '{"_id":"a\\ud800b","n":1}';
  const json = { raw: body, headers: { 'Content-Type': 'application/json' } };
  const first = await c.request('POST', '/docs_lone', json);
  assert.equal(first.status, 201, first.text);
  const again = await c.request('POST', '/docs_lone', json);
  assert.equal(again.status, 409, again.text);
  const changes = await c.get('/docs_lone/_changes');
  assert.equal((changes.body as { results: { id: string }[] }).results[0]!.id, 'a\ud800b');
});
