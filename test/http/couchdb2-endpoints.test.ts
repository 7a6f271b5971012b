/**
 * CouchDB 2/3 conveniences that cost CouchDB 1.6 clients nothing, over real HTTP: `/_up`,
 * `/_node/{node}[/_config...]`, `_dbs_info` (POST by name, GET every database), `_all_dbs`
 * paged like a view, the `_design_docs` and `_local_docs` listings with `_all_docs`'
 * parameters, and multiple queries in one request (`POST .../queries`) for views and listings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile, startServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { basic, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();

const ids = (rows: { id?: string; key: string }[]): string[] => rows.map((r) => r.id ?? `!${r.key}`);

test('setup: a database with design, local and plain documents', async () => {
  assert.equal((await c.put('/c2')).status, 201);
  for (const id of ['a', 'z', '_design/one', '_design/three', '_design/two']) {
    assert.equal((await c.put(`/c2/${id}`, { n: id })).status, 201);
  }
  const gone = await c.put('/c2/_design/zz-deleted', {});
  assert.equal((await c.del(`/c2/_design/zz-deleted?rev=${gone.body.rev}`)).status, 200);
  for (const id of ['l1', 'l2', 'l3']) assert.equal((await c.put(`/c2/_local/${id}`, { local: id })).status, 201);
});

test('GET /_up answers ok, and 404 with the mode while [couchdb] maintenance_mode is set', async () => {
  const up = await c.get('/_up');
  assert.equal(up.status, 200);
  assert.deepEqual(up.body, { status: 'ok', seeds: {} });
  for (const mode of ['true', 'nolb']) {
    assert.equal((await c.put('/_config/couchdb/maintenance_mode', mode)).status, 200);
    const down = await c.get('/_up');
    assert.equal(down.status, 404);
    assert.deepEqual(down.body, { status: mode === 'true' ? 'maintenance_mode' : 'nolb' });
  }
  assert.equal((await c.del('/_config/couchdb/maintenance_mode')).status, 200);
  assert.equal((await c.get('/_up')).status, 200);
});

test('/_node/_local and /_node/{name} name the node; their _config is /_config', async () => {
  const local = await c.get('/_node/_local');
  assert.equal(local.status, 200);
  const name = local.body.name as string;
  const membership = await c.get('/_membership');
  assert.deepEqual(membership.body.all_nodes, [name]);
  for (const node of ['_local', encodeURIComponent(name)]) {
    const put = await c.put(`/_node/${node}/_config/c2test/key`, 'v1');
    assert.equal(put.status, 200, put.text);
    assert.equal((await c.get('/_config/c2test/key')).body, 'v1');
    assert.equal((await c.get(`/_node/${node}/_config/c2test/key`)).body, 'v1');
    assert.deepEqual((await c.get(`/_node/${node}/_config/c2test`)).body, { key: 'v1' });
    assert.equal((await c.del(`/_node/${node}/_config/c2test/key`)).body, 'v1');
    assert.equal((await c.get('/_config/c2test/key')).status, 404);
  }
  assert.equal((await c.get('/_node/nobody@nowhere/_config')).status, 404);
  assert.equal((await c.get('/_node/_local/_nothing')).status, 404);
});

test('POST /_dbs_info: each named database info, not_found for others; keys are required and bounded', async () => {
  const r = await c.post('/_dbs_info', { keys: ['c2', 'no-such-db'] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.length, 2);
  assert.equal(r.body[0].key, 'c2');
  assert.equal(r.body[0].info.db_name, 'c2');
  assert.equal(r.body[0].info.doc_count, (await c.get('/c2')).body.doc_count);
  assert.deepEqual(r.body[1], { key: 'no-such-db', error: 'not_found' });

  const missing = await c.post('/_dbs_info', {});
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { error: 'bad_request', reason: '`keys` member must exist.' });
  const many = await c.post('/_dbs_info', { keys: Array.from({ length: 101 }, (_, i) => `db${i}`) });
  assert.equal(many.status, 400);
  assert.equal(many.body.reason, 'too_many_keys');
  const form = await c.post('/_dbs_info', 'keys=x', { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415);
});

test('GET /_dbs_info lists every database with its info, paged like a view', async () => {
  const all = (await c.get('/_all_dbs')).body as string[];
  const r = await c.get('/_dbs_info');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.map((e: { key: string }) => e.key), all);
  assert.ok(r.body.every((e: { key: string; info: { db_name: string } }) => e.info.db_name === e.key));
  const page = await c.get('/_dbs_info?startkey="c2"&limit=1');
  assert.deepEqual(page.body.map((e: { key: string }) => e.key), ['c2']);
  const down = await c.get('/_dbs_info?descending=true&limit=2');
  assert.deepEqual(down.body.map((e: { key: string }) => e.key), [...all].reverse().slice(0, 2));
});

test('GET /_all_dbs pages like a view, as in CouchDB 2: start and end keys, descending, skip, limit', async () => {
  const all = (await c.get('/_all_dbs')).body as string[];
  assert.deepEqual([...all].sort(), all);
  assert.deepEqual((await c.get('/_all_dbs?startkey="_users"&limit=2')).body, all.slice(all.indexOf('_users'), all.indexOf('_users') + 2));
  assert.deepEqual((await c.get('/_all_dbs?descending=true&skip=1&limit=2')).body, [...all].reverse().slice(1, 3));
  assert.deepEqual((await c.get('/_all_dbs?start_key="c2"&end_key="c2"')).body, ['c2']);
  assert.deepEqual((await c.get('/_all_dbs?startkey="c2"&endkey="c2"&inclusive_end=false')).body, []);
  assert.deepEqual((await c.get('/_all_dbs?descending=true&startkey="c2"&endkey="_users"')).body, ['c2', '_users']);
  assert.equal((await c.get('/_all_dbs?limit=-1')).status, 400);
});

test('GET /_all_dbs and /_dbs_info read their query as _all_docs does (couch_mrview_http:parse_params): key, and its errors', async () => {
  assert.deepEqual((await c.get('/_all_dbs?key="c2"')).body, ['c2']);
  assert.deepEqual((await c.get('/_dbs_info?key="c2"')).body.map((e: { key: string }) => e.key), ['c2']);
  for (const path of ['/_all_dbs', '/_dbs_info']) {
    for (const query of ['startkey=abc', 'limit=-1', 'skip=x', 'stale=bad', 'reduce=true']) {
      const listing = await c.get(`${path}?${query}`);
      const allDocs = await c.get(`/c2/_all_docs?${query}`);
      assert.equal(allDocs.status, 400, query);
      assert.deepEqual([listing.status, listing.body], [allDocs.status, allDocs.body], `${path}?${query}`);
    }
  }
});

test('_dbs_info is for server admins', async () => {
  const other = await startServer();
  try {
    const oc = client(other.url);
    await defineAdmin(other.url, 'root', 'rootpw');
    assert.equal((await oc.get('/_dbs_info')).status, 401);
    assert.equal((await oc.get('/_dbs_info', { headers: basic('root', 'rootpw') })).status, 200);
    assert.equal((await oc.get('/_up')).status, 200, '/_up stays public');
  } finally {
    await other.stop();
  }
});

test('_design_docs lists live design documents only, counted among themselves', async () => {
  const r = await c.get('/c2/_design_docs');
  assert.equal(r.status, 200);
  assert.equal(r.body.total_rows, 3);
  assert.equal(r.body.offset, 0);
  assert.deepEqual(ids(r.body.rows), ['_design/one', '_design/three', '_design/two']);
  assert.equal(r.body.rows[0].value.rev, (await c.get('/c2/_design/one')).body._rev);

  const docs = await c.get('/c2/_design_docs?include_docs=true&limit=1');
  assert.equal(docs.body.rows[0].doc.n, '_design/one');

  const from = await c.get('/c2/_design_docs?startkey="_design/t"');
  assert.equal(from.body.offset, 1);
  assert.deepEqual(ids(from.body.rows), ['_design/three', '_design/two']);
  const skip = await c.get('/c2/_design_docs?skip=2');
  assert.equal(skip.body.offset, 2);
  assert.deepEqual(ids(skip.body.rows), ['_design/two']);
  const down = await c.get('/c2/_design_docs?descending=true&limit=2');
  assert.equal(down.body.offset, 0);
  assert.deepEqual(ids(down.body.rows), ['_design/two', '_design/three']);
  const bounded = await c.get('/c2/_design_docs?endkey="_design/three"&inclusive_end=false');
  assert.deepEqual(ids(bounded.body.rows), ['_design/one']);
  // Bounds outside the design documents are cut to them.
  const wide = await c.get('/c2/_design_docs?startkey="0"&endkey="zzz"');
  assert.deepEqual(ids(wide.body.rows), ['_design/one', '_design/three', '_design/two']);
  const past = await c.get('/c2/_design_docs?startkey="zzz"');
  assert.deepEqual(past.body.rows, []);
  assert.equal(past.body.offset, 3);
});

test('_design_docs with keys: design documents only, the rest not_found', async () => {
  const r = await c.post('/c2/_design_docs', { keys: ['_design/two', 'a', '_design/zz-deleted', '_design/none'] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.total_rows, 3);
  assert.deepEqual(ids(r.body.rows), ['_design/two', '!a', '_design/zz-deleted', '!_design/none']);
  assert.equal(r.body.rows[2].value.deleted, true);
});

test('_local_docs lists _local documents with their 0-N revisions; no counts', async () => {
  const r = await c.get('/c2/_local_docs');
  assert.equal(r.status, 200);
  assert.equal(r.body.total_rows, null);
  assert.equal(r.body.offset, null);
  assert.deepEqual(ids(r.body.rows), ['_local/l1', '_local/l2', '_local/l3']);
  assert.deepEqual(r.body.rows[0].value, { rev: '0-1' });

  const docs = await c.get('/c2/_local_docs?include_docs=true&descending=true&limit=2');
  assert.deepEqual(ids(docs.body.rows), ['_local/l3', '_local/l2']);
  assert.deepEqual(docs.body.rows[0].doc, { _id: '_local/l3', _rev: '0-1', local: 'l3' });
  const range = await c.get('/c2/_local_docs?startkey="_local/l2"&skip=1');
  assert.deepEqual(ids(range.body.rows), ['_local/l3']);
  const keyed = await c.post('/c2/_local_docs', { keys: ['_local/l2', '_local/none', 'a'] });
  assert.deepEqual(ids(keyed.body.rows), ['_local/l2', '!_local/none', '!a']);
  // None of it shows in _all_docs.
  const all = await c.get('/c2/_all_docs');
  assert.ok(all.body.rows.every((row: { id: string }) => !row.id.startsWith('_local/')));
});

test('multiple queries: POST .../queries and a body with `queries` answer each as its GET, in order', async () => {
  const plain = await c.post('/c2/_all_docs/queries', { queries: [{}, { keys: ['z', 'nope'] }, { startkey: '_design/', endkey: '_design0', limit: 1, skip: 1 }, { descending: true, limit: 1, include_docs: true }] });
  assert.equal(plain.status, 200, plain.text);
  const results = plain.body.results as { total_rows: number; offset: number; rows: any[] }[];
  assert.equal(results.length, 4);
  assert.deepEqual(results[0], (await c.get('/c2/_all_docs')).body);
  assert.deepEqual(ids(results[1]!.rows), ['z', '!nope']);
  assert.deepEqual(results[2], (await c.get('/c2/_all_docs?startkey="_design/"&endkey="_design0"&limit=1&skip=1')).body);
  assert.equal(results[3]!.rows[0].doc.n, 'z');
  // CouchDB 2.0's form: the queries in the body of a POST to the listing itself.
  assert.deepEqual((await c.post('/c2/_all_docs', { queries: [{ limit: 1 }] })).body, { results: [(await c.get('/c2/_all_docs?limit=1')).body] });
  assert.deepEqual(ids((await c.post('/c2/_design_docs/queries', { queries: [{ limit: 2 }] })).body.results[0].rows), ['_design/one', '_design/three']);
  assert.deepEqual(ids((await c.post('/c2/_local_docs/queries', { queries: [{ keys: ['_local/l2'] }] })).body.results[0].rows), ['_local/l2']);

  assert.equal((await c.put('/c2/_design/mq', { views: { n: { map: 'function(doc) { if (doc.n) emit(doc.n, 1); }', reduce: '_count' } } })).status, 201);
  // (Views leave design documents out: the rows are a's and z's.)
  const views = await c.post('/c2/_design/mq/_view/n/queries', { queries: [{ reduce: false, startkey: 'b' }, {}, { group: true, keys: ['z', 'a', 'q'] }] });
  assert.equal(views.status, 200, views.text);
  assert.deepEqual(views.body.results.map((r: { rows: any[] }) => r.rows.map((row) => row.key)), [['z'], [null], ['z', 'a']]);
  assert.equal(views.body.results[1].rows[0].value, 2);
  assert.deepEqual(views.body.results[0], (await c.get('/c2/_design/mq/_view/n?reduce=false&startkey="b"')).body);
  assert.deepEqual((await c.post('/c2/_design/mq/_view/n', { queries: [{ reduce: false, limit: 1 }] })).body.results[0].rows.map((r: { key: string }) => r.key), ['a']);
});

test('a POST body gives view parameters beside keys; the query string wins where both give one', async () => {
  const view = await c.post('/c2/_design/mq/_view/n', { keys: ['z', 'a'], reduce: false, include_docs: true, limit: 1 });
  assert.equal(view.status, 200, view.text);
  assert.deepEqual(view.body.rows.map((r: { key: string; doc: { _id: string } }) => [r.key, r.doc._id]), [['z', 'z']]);
  const both = await c.post('/c2/_design/mq/_view/n?reduce=true&group=true', { keys: ['z', 'a'], reduce: false });
  assert.deepEqual(both.body.rows, [{ key: 'z', value: 1 }, { key: 'a', value: 1 }]);
  const docs = await c.post('/c2/_all_docs?limit=2', { startkey: 'a', limit: 1, descending: false });
  assert.deepEqual(ids(docs.body.rows), ['a', 'z']);
});

test('multiple queries: CouchDB\'s errors', async () => {
  const cases: [string, unknown, number, string][] = [
    ['/c2/_all_docs/queries', {}, 400, 'POST body must include `queries` parameter.'],
    ['/c2/_all_docs/queries', { queries: {} }, 400, '`queries` member must be an array.'],
    ['/c2/_all_docs', { queries: [{}], keys: ['a'] }, 400, '`keys` and `queries` are mutually exclusive'],
    ['/c2/_design/mq/_view/n/queries', { queries: [{}, { group_level: 'x' }] }, 400, ''],
    ['/c2/_design/mq/_view/n/queries', { queries: [{ include_docs: true }] }, 400, ''],
  ];
  for (const [path, body, status, reason] of cases) {
    const r = await c.post(path, body);
    assert.equal(r.status, status, `${path} ${JSON.stringify(body)}: ${r.text}`);
    if (reason) assert.equal(r.body.reason, reason);
  }
  const get = await c.get('/c2/_all_docs/queries');
  assert.equal(get.status, 405);
  assert.equal(get.headers['allow'], 'POST');
  assert.equal((await c.get('/c2/_design/mq/_view/n/queries')).status, 405);
});

test('the listings keep database access rules', async () => {
  await defineAdmin(server.url, 'boss', 'bosspw');
  const admin = { headers: basic('boss', 'bosspw') };
  assert.equal((await c.put('/c2/_security', { members: { names: ['someone'] } }, admin)).status, 200);
  for (const path of ['/c2/_design_docs', '/c2/_local_docs']) {
    assert.equal((await c.get(path)).status, 401, path);
    assert.equal((await c.get(path, admin)).status, 200, path);
  }
});
