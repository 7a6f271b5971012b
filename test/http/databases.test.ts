/**
 * Database endpoints over real HTTP, checked against CouchDB 1.6: name rules, PUT/GET/HEAD/DELETE
 * of /{db}, the database information object, POST /{db}, and the small per-database handlers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { serverForFile } from '../helpers/server.js';
import type { Response } from '../helpers/http.js';

const { server, c } = await serverForFile();

const ILLEGAL_REASON = /Only lowercase characters \(a-z\), digits \(0-9\), and any of the characters _, \$, \(, \), \+, -, and \/ are allowed\. Must begin with a letter\./;

/** A request whose path is sent exactly as written (no URL normalisation of `..` or `%2E`). */
function rawRequest(method: string, path: string, headers: Record<string, string> = {}): Promise<Response> {
  const base = new URL(server.url);
  return new Promise((resolve, reject) => {
    const r = httpRequest({ host: base.hostname, port: base.port, method, path, headers: { Accept: 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (ch: Buffer) => chunks.push(ch));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    r.on('error', reject);
    r.end();
  });
}

const urlName = (name: string) => `/${encodeURIComponent(name)}`;

async function allDbs(): Promise<string[]> {
  const r = await c.get('/_all_dbs');
  assert.equal(r.status, 200);
  return r.body as string[];
}

// ------------------------------------------------------------------------------ name rules

const VALID_NAMES = [
  'db-a',
  'db1',
  'db_under_score',
  'db$dollar',
  'db(paren)',
  'db+plus',
  'db-minus',
  'db/slash',
  'db/two/slashes',
  'z_$()+-/09',
];

test('PUT creates databases with every allowed character (201, ok, absolute Location)', async () => {
  for (const name of VALID_NAMES) {
    const r = await c.put(urlName(name));
    assert.equal(r.status, 201, `${name}: ${r.text}`);
    assert.deepEqual(r.body, { ok: true });
    const location = String(r.headers.location);
    assert.match(location, /^http:\/\//, `absolute Location for ${name}: ${location}`);
    const path = new URL(location).pathname;
    assert.equal(decodeURIComponent(path.slice(1)), name, `Location names ${name}: ${location}`);
    assert.ok(!path.slice(1).includes('/'), `the / of ${name} is percent-encoded in Location`);
  }
  const listed = await allDbs();
  for (const name of VALID_NAMES) assert.ok(listed.includes(name), `${name} in _all_dbs`);
});

test("Location writes the name as couch_util:url_encode does: only letters, digits and _.-: stay as they are", async () => {
  const r = await c.put(urlName('dbs-loc$(a)+b/c'));
  assert.equal(r.status, 201, r.text);
  assert.equal(new URL(String(r.headers.location)).pathname, '/dbs-loc%24%28a%29%2Bb%2Fc');
});

test('GET on each valid name reports that name as db_name', async () => {
  for (const name of VALID_NAMES) {
    const r = await c.get(urlName(name));
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.equal(r.body.db_name, name);
  }
});

test('a %2F in the URL stays inside the database name', async () => {
  const r = await c.put('/dbs-enc%2Fsub');
  assert.equal(r.status, 201);
  assert.equal((await c.get('/dbs-enc%2Fsub')).body.db_name, 'dbs-enc/sub');
  assert.ok((await allDbs()).includes('dbs-enc/sub'));
  // A lower-case escape means the same thing.
  assert.equal((await c.get('/dbs-enc%2fsub')).body.db_name, 'dbs-enc/sub');
});

test('a raw + in the path is a space, as in CouchDB (send %2B for a plus)', async () => {
  const raw = await c.put('/dbs+rawplus');
  assert.equal(raw.status, 400);
  assert.equal(raw.body.error, 'illegal_database_name');
  assert.match(raw.body.reason, /'dbs rawplus'/);
  const encoded = await c.put('/dbs%2Brawplus');
  assert.equal(encoded.status, 201);
  assert.ok((await allDbs()).includes('dbs+rawplus'));
});

const INVALID_NAMES = [
  'Abc', // upper case
  'dbUpper',
  'ABC',
  '1abc', // leading digit
  '9',
  '-abc', // leading punctuation
  '$abc',
  '(abc)',
  '+abc',
  '/abc',
  'a b', // space
  'a.b', // dot
  'a..b',
  'a@b',
  'a*b',
  'a:b',
  'a%b',
  'a"b',
  'é',
  'aé',
  'a\tb',
  'a/../b',
];

test('PUT with an illegal name is 400 illegal_database_name naming the rule', async () => {
  for (const name of INVALID_NAMES) {
    const r = await c.put(urlName(name));
    assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.text}`);
    assert.equal(r.body.error, 'illegal_database_name', JSON.stringify(name));
    assert.match(r.body.reason, ILLEGAL_REASON);
  }
  const listed = await allDbs();
  for (const name of INVALID_NAMES) assert.ok(!listed.includes(name), `${name} not created`);
});

test('GET and DELETE with an illegal name are 400 illegal_database_name too', async () => {
  for (const name of ['Abc', '1abc', 'a.b']) {
    const g = await c.get(urlName(name));
    assert.equal(g.status, 400, name);
    assert.equal(g.body.error, 'illegal_database_name');
    const d = await c.del(urlName(name));
    assert.equal(d.status, 400, name);
    assert.equal(d.body.error, 'illegal_database_name');
  }
});

test('an underscore-prefixed name that is not a system database is illegal', async () => {
  const r = await c.put('/_mydb');
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'illegal_database_name');
  assert.match(r.body.reason, /'_mydb'/);
});

test('the system databases _users and _replicator exist and answer like databases', async () => {
  const listed = await allDbs();
  for (const name of ['_users', '_replicator']) {
    assert.ok(listed.includes(name), `${name} exists`);
    const r = await c.get(`/${name}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.db_name, name);
  }
});

test('names with .. never escape the data directory', async () => {
  for (const path of ['/..', '/%2E%2E', '/dbs-a%2F..%2F..%2Fescape', '/dbs-a%2F..']) {
    const r = await rawRequest('PUT', path);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.equal(r.body.error, 'illegal_database_name', path);
  }
  const listed = await allDbs();
  assert.ok(!listed.some((n) => n.includes('..') || n.includes('escape')));
  assert.equal((await c.get('/')).status, 200);
});

// ------------------------------------------------------------------------- create and delete

test('PUT on an existing database is 412 file_exists', async () => {
  assert.equal((await c.put('/dbs-twice')).status, 201);
  const r = await c.put('/dbs-twice');
  assert.equal(r.status, 412);
  assert.equal(r.body.error, 'file_exists');
  assert.equal(r.body.reason, 'The database could not be created, the file already exists.');
});

test('a missing database is 404 not_found / no_db_file', async () => {
  const r = await c.get('/dbs-never-created');
  assert.equal(r.status, 404);
  assert.deepEqual(r.body, { error: 'not_found', reason: 'no_db_file' });
  // The server survives asking again.
  assert.equal((await c.get('/dbs-never-created')).status, 404);
  assert.equal((await c.get('/')).status, 200);
});

test('HEAD /{db} answers 200 without a body, 404 for a missing database', async () => {
  assert.equal((await c.put('/dbs-head')).status, 201);
  const h = await c.head('/dbs-head');
  assert.equal(h.status, 200);
  assert.equal(h.text, '');
  assert.equal(h.headers['content-type'], 'application/json');
  const missing = await c.head('/dbs-head-missing');
  assert.equal(missing.status, 404);
  assert.equal(missing.text, '');
});

test('DELETE answers 200 {ok:true}, then the database is gone (404) and unlisted', async () => {
  assert.equal((await c.put('/dbs-del')).status, 201);
  assert.equal((await c.put('/dbs-del/doc', { a: 1 })).status, 201);
  const r = await c.del('/dbs-del');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ok: true });
  const g = await c.get('/dbs-del');
  assert.equal(g.status, 404);
  assert.equal(g.body.error, 'not_found');
  assert.equal((await c.get('/dbs-del/doc')).status, 404);
  assert.ok(!(await allDbs()).includes('dbs-del'));
  const again = await c.del('/dbs-del');
  assert.equal(again.status, 404);
  assert.equal(again.body.error, 'not_found');
});

test('a deleted and re-created database starts empty', async () => {
  assert.equal((await c.put('/dbs-recreate')).status, 201);
  assert.equal((await c.put('/dbs-recreate/doc', { a: 1 })).status, 201);
  assert.equal((await c.del('/dbs-recreate')).status, 200);
  assert.equal((await c.put('/dbs-recreate')).status, 201);
  const info = await c.get('/dbs-recreate');
  assert.equal(info.body.doc_count, 0);
  assert.equal(info.body.update_seq, 0);
  assert.equal((await c.get('/dbs-recreate/doc')).status, 404);
});

test('DELETE /{db}?rev=... is 400 and leaves the database alone', async () => {
  assert.equal((await c.put('/dbs-delrev')).status, 201);
  const r = await c.del('/dbs-delrev?rev=1-abc');
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(typeof r.body.reason, 'string');
  assert.equal((await c.get('/dbs-delrev')).status, 200);
});

test('DELETE of a database with a %2F in its name', async () => {
  assert.equal((await c.put('/dbs-del%2Fnested')).status, 201);
  assert.equal((await c.del('/dbs-del%2Fnested')).status, 200);
  assert.equal((await c.get('/dbs-del%2Fnested')).status, 404);
  assert.ok(!(await allDbs()).includes('dbs-del/nested'));
});

test('databases with long names, and names of many slashes, are created, listed, used and deleted', async () => {
  const longest = `l${'x'.repeat(237)}`;
  const slashes = `s${'/b'.repeat(110)}`;
  // CouchDB 1.6's check_dbname has no length limit (2.x's 238 came later).
  const longer = `m${'x'.repeat(238)}`;
  const longerStill = `n${'y'.repeat(600)}`;
  for (const name of [longest, `${longest.slice(0, 230)}y`, slashes, longer, longerStill, `${longerStill}/z`]) {
    const path = `/${encodeURIComponent(name)}`;
    assert.equal((await c.put(path)).status, 201, name);
    assert.equal((await c.put(`${path}/doc`, { v: 1 })).status, 201, name);
    assert.equal((await c.get(path)).body.db_name, name);
    assert.ok((await allDbs()).includes(name), name);
    const deleted = await c.del(path);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await c.get(path)).status, 404);
    assert.ok(!(await allDbs()).includes(name), name);
  }
});

// --------------------------------------------------------------------- information object

test('GET /{db} has every field of the information object with the right types', async () => {
  assert.equal((await c.put('/dbs-info')).status, 201);
  const r = await c.get('/dbs-info');
  assert.equal(r.status, 200);
  const info = r.body;
  assert.equal(info.db_name, 'dbs-info');
  for (const field of ['doc_count', 'doc_del_count', 'update_seq', 'purge_seq', 'disk_size', 'data_size', 'disk_format_version', 'committed_update_seq']) {
    assert.equal(typeof info[field], 'number', field);
    assert.ok(Number.isInteger(info[field]) && info[field] >= 0, `${field} = ${info[field]}`);
  }
  assert.equal(typeof info.compact_running, 'boolean');
  assert.equal(typeof info.instance_start_time, 'string');
  assert.match(info.instance_start_time, /^\d+$/);
  assert.equal(info.doc_count, 0);
  assert.equal(info.doc_del_count, 0);
  assert.equal(info.update_seq, 0);
  assert.equal(info.purge_seq, 0);
  assert.equal(info.compact_running, false);
  assert.ok(info.disk_size > 0);
});

test('database info counts follow writes, updates, deletes and local documents', async () => {
  assert.equal((await c.put('/dbs-counts')).status, 201);
  const before = (await c.get('/dbs-counts')).body;
  const revs: Record<string, string> = {};
  for (const id of ['a', 'b', 'c']) {
    const w = await c.put(`/dbs-counts/${id}`, { v: id });
    assert.equal(w.status, 201);
    revs[id] = w.body.rev;
  }
  let info = (await c.get('/dbs-counts')).body;
  assert.equal(info.doc_count, 3);
  assert.equal(info.doc_del_count, 0);
  assert.equal(info.update_seq, 3);

  const upd = await c.put('/dbs-counts/a', { _rev: revs['a'], v: 'a2' });
  assert.equal(upd.status, 201);
  const del = await c.del(`/dbs-counts/b?rev=${revs['b']}`);
  assert.equal(del.status, 200);
  info = (await c.get('/dbs-counts')).body;
  assert.equal(info.doc_count, 2, 'update keeps the count, delete lowers it');
  assert.equal(info.doc_del_count, 1);
  assert.equal(info.update_seq, 5);

  const ddoc = await c.put('/dbs-counts/_design/x', { views: {} });
  assert.equal(ddoc.status, 201);
  info = (await c.get('/dbs-counts')).body;
  assert.equal(info.doc_count, 3, 'design documents count');
  assert.equal(info.update_seq, 6);

  const local = await c.put('/dbs-counts/_local/cp', { seq: 1 });
  assert.equal(local.status, 201);
  info = (await c.get('/dbs-counts')).body;
  assert.equal(info.doc_count, 3, 'local documents do not count');
  assert.equal(info.update_seq, 6, 'local documents do not move update_seq');
  assert.equal(info.doc_del_count, 1);
  assert.equal(info.committed_update_seq, info.update_seq);
  assert.equal(info.instance_start_time, before.instance_start_time);
  assert.ok(info.data_size >= before.data_size);
});

// --------------------------------------------------------------------------- POST /{db}

test('POST /{db} creates a document with a generated id (201, Location, ETag)', async () => {
  assert.equal((await c.put('/dbs-post')).status, 201);
  const r = await c.post('/dbs-post', { hello: 'world' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.ok, true);
  assert.match(r.body.id, /^[0-9a-f]{32}$/);
  assert.match(r.body.rev, /^1-[0-9a-f]{32}$/);
  assert.equal(r.headers.etag, `"${r.body.rev}"`);
  assert.match(String(r.headers.location), new RegExp(`^http://.+/dbs-post/${r.body.id}$`));
  const doc = await c.get(`/dbs-post/${r.body.id}`);
  assert.equal(doc.body.hello, 'world');

  const named = await c.post('/dbs-post', { _id: 'given', x: 1 });
  assert.equal(named.status, 201);
  assert.equal(named.body.id, 'given');
  const conflict = await c.post('/dbs-post', { _id: 'given', x: 2 });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error, 'conflict');
});

test('POST /{db} needs Content-Type application/json (415) and an object body (400)', async () => {
  assert.equal((await c.put('/dbs-post-ct')).status, 201);
  const noType = await c.request('POST', '/dbs-post-ct', { raw: '{"a":1}', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(noType.status, 415);
  assert.equal(noType.body.error, 'bad_content_type');
  for (const raw of ['[1,2]', '"str"', '12', 'not json', '']) {
    const r = await c.request('POST', '/dbs-post-ct', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${JSON.stringify(raw)}: ${r.text}`);
    assert.equal(r.body.error, 'bad_request');
  }
  assert.equal((await c.get('/dbs-post-ct')).body.doc_count, 0);
});

test('POST /{db}?batch=ok answers 202 with an id and no rev', async () => {
  assert.equal((await c.put('/dbs-batch')).status, 201);
  const r = await c.post('/dbs-batch?batch=ok', { _id: 'later', a: 1 });
  assert.equal(r.status, 202);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.id, 'later');
  assert.equal(r.body.rev, undefined);
});

test('POST to a missing database is 404', async () => {
  const r = await c.post('/dbs-post-missing', { a: 1 });
  assert.equal(r.status, 404);
  assert.equal(r.body.error, 'not_found');
});

// ---------------------------------------------------------------- per-database handlers

test('_revs_limit defaults to 1000, can be set, and rejects non-integers', async () => {
  assert.equal((await c.put('/dbs-revs')).status, 201);
  const g = await c.get('/dbs-revs/_revs_limit');
  assert.equal(g.status, 200);
  assert.equal(g.body, 1000);
  const p = await c.put('/dbs-revs/_revs_limit', 7);
  assert.equal(p.status, 200);
  assert.deepEqual(p.body, { ok: true });
  assert.equal((await c.get('/dbs-revs/_revs_limit')).body, 7);
  for (const bad of ['"x"', '{}', '1.5']) {
    const r = await c.request('PUT', '/dbs-revs/_revs_limit', { raw: bad, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, bad);
  }
  // Integers below 1: couch_db:set_revs_limit's invalid_revs_limit, a 500.
  for (const bad of ['0', '-1']) {
    const r = await c.request('PUT', '/dbs-revs/_revs_limit', { raw: bad, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 500, bad);
  }
  assert.equal((await c.get('/dbs-revs/_revs_limit')).body, 7);
});

test('_security is {} by default and stores what is PUT', async () => {
  assert.equal((await c.put('/dbs-sec')).status, 201);
  assert.deepEqual((await c.get('/dbs-sec/_security')).body, {});
  const sec = { admins: { names: ['a'], roles: [] }, members: { names: [], roles: ['r'] } };
  const p = await c.put('/dbs-sec/_security', sec);
  assert.equal(p.status, 200);
  assert.deepEqual(p.body, { ok: true });
  assert.deepEqual((await c.get('/dbs-sec/_security')).body, sec);
});

test('_ensure_full_commit answers 201 with the instance start time', async () => {
  assert.equal((await c.put('/dbs-efc')).status, 201);
  const info = (await c.get('/dbs-efc')).body;
  const r = await c.post('/dbs-efc/_ensure_full_commit', undefined, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 201);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.instance_start_time, info.instance_start_time);
});

test('_compact needs application/json (415), then answers 202 and keeps the documents', async () => {
  assert.equal((await c.put('/dbs-compact')).status, 201);
  assert.equal((await c.put('/dbs-compact/d', { a: 1 })).status, 201);
  const bad = await c.request('POST', '/dbs-compact/_compact');
  assert.equal(bad.status, 415);
  const r = await c.post('/dbs-compact/_compact', undefined, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { ok: true });
  assert.equal((await c.get('/dbs-compact/d')).body.a, 1);
  assert.equal((await c.get('/dbs-compact')).body.doc_count, 1);
});

test('_compact/{ddoc} names the design document by the one segment after _compact; later ones are ignored', async () => {
  assert.equal((await c.put('/dbs-compact-ddoc')).status, 201);
  assert.equal((await c.put('/dbs-compact-ddoc/_design/v', { views: { v: { map: 'function (doc) { emit(doc._id, null); }' } } })).status, 201);
  const json = { headers: { 'Content-Type': 'application/json' } };
  const extra = await c.post('/dbs-compact-ddoc/_compact/v/extra', undefined, json);
  assert.equal(extra.status, 202, extra.text);
  assert.deepEqual(extra.body, { ok: true });
  const missing = await c.post('/dbs-compact-ddoc/_compact/nope/v', undefined, json);
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: 'not_found', reason: 'missing' });
});

test('PUT or POST to an unknown _name under a database is 400 bad_request (invalid_docids.js)', async () => {
  assert.equal((await c.put('/dbs-unknown-handler')).status, 201);
  const put = await c.put('/dbs-unknown-handler/_other', {});
  assert.equal(put.status, 400);
  assert.equal(put.body.error, 'bad_request');
  const post = await c.post('/dbs-unknown-handler/_tmp_view', {});
  assert.equal(post.status, 400);
  assert.equal(post.body.error, 'bad_request');
  assert.equal((await c.get('/dbs-unknown-handler')).body.doc_count, 0);
});

test('the server still answers GET / at the end', async () => {
  assert.equal((await c.get('/')).status, 200);
  assert.equal(server.process.exitCode, null);
});
