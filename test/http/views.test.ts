/** Views over real HTTP: map/reduce queries with CouchDB's parameters and index behaviour. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

async function setup(db: string, docs: Record<string, unknown>[], views: Record<string, { map: string; reduce?: string }>, options?: Record<string, unknown>) {
  assert.equal((await c.put(`/${db}`)).status, 201);
  assert.equal((await c.post(`/${db}/_bulk_docs`, { docs })).status, 201);
  const ddoc = await c.put(`/${db}/_design/test`, { views, ...(options ? { options } : {}) });
  assert.equal(ddoc.status, 201, JSON.stringify(ddoc.body));
}

const numbers = (n: number) => Array.from({ length: n }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, n: i, type: i % 2 ? 'odd' : 'even' }));

test('map view: rows sorted by key, total_rows and offset', async () => {
  await setup('v-basic', numbers(10), { by_n: { map: 'function(doc) { emit(doc.n, doc.type); }' } });
  const r = await c.get('/v-basic/_design/test/_view/by_n');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.total_rows, 10);
  assert.equal(r.body.offset, 0);
  assert.deepEqual(r.body.rows.map((x: { key: number }) => x.key), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(r.body.rows[3], { id: 'd003', key: 3, value: 'odd' });
  const range = await c.get(`/v-basic/_design/test/_view/by_n?startkey=3&endkey=6&inclusive_end=false`);
  assert.deepEqual(range.body.rows.map((x: { key: number }) => x.key), [3, 4, 5]);
  assert.equal(range.body.offset, 3);
  const desc = await c.get(`/v-basic/_design/test/_view/by_n?descending=true&startkey=6&endkey=3&limit=2&skip=1`);
  assert.deepEqual(desc.body.rows.map((x: { key: number }) => x.key), [5, 4]);
  assert.equal(desc.body.offset, 4);
  const key = await c.get(`/v-basic/_design/test/_view/by_n?key=7`);
  assert.deepEqual(key.body.rows.map((x: { id: string }) => x.id), ['d007']);
  const keys = await c.post('/v-basic/_design/test/_view/by_n', { keys: [9, 1, 42] });
  assert.deepEqual(keys.body.rows.map((x: { key: number }) => x.key), [9, 1]);
});

test('collation: null, booleans, numbers, strings (ICU), arrays, objects', async () => {
  const keys = [null, false, true, 1, 2, 3.5, 'a', 'A', 'aa', 'b', 'B', ['a'], ['b', 'c'], { a: 1 }, { b: 1 }];
  const docs = keys.map((k, i) => ({ _id: `k${i}`, k }));
  await setup('v-collate', [...docs].reverse(), { by_k: { map: 'function(doc) { emit(doc.k, null); }' } });
  const r = await c.get('/v-collate/_design/test/_view/by_k');
  assert.deepEqual(r.body.rows.map((x: { key: unknown }) => x.key), keys);
});

test('reduce: _sum, _count, _stats, group, group_level, reduce=false', async () => {
  await setup('v-reduce', numbers(20), {
    sum: { map: 'function(doc) { emit([doc.type, doc.n], doc.n); }', reduce: '_sum' },
    count: { map: 'function(doc) { emit(doc.type, 1); }', reduce: '_count' },
    stats: { map: 'function(doc) { emit(null, doc.n); }', reduce: '_stats' },
    js: { map: 'function(doc) { emit(doc.type, doc.n); }', reduce: 'function(keys, values, rereduce) { return sum(values); }' },
  });
  const total = await c.get('/v-reduce/_design/test/_view/sum');
  assert.deepEqual(total.body.rows, [{ key: null, value: 190 }]);
  const byType = await c.get('/v-reduce/_design/test/_view/sum?group_level=1');
  assert.deepEqual(byType.body.rows, [{ key: ['even'], value: 90 }, { key: ['odd'], value: 100 }]);
  const count = await c.get('/v-reduce/_design/test/_view/count?group=true');
  assert.deepEqual(count.body.rows, [{ key: 'even', value: 10 }, { key: 'odd', value: 10 }]);
  const stats = await c.get('/v-reduce/_design/test/_view/stats');
  assert.deepEqual(stats.body.rows[0].value, { sum: 190, count: 20, min: 0, max: 19, sumsqr: 2470 });
  const js = await c.get('/v-reduce/_design/test/_view/js?group=true');
  assert.deepEqual(js.body.rows, [{ key: 'even', value: 90 }, { key: 'odd', value: 100 }]);
  const noReduce = await c.get('/v-reduce/_design/test/_view/count?reduce=false&limit=3');
  assert.equal(noReduce.body.total_rows, 20);
  assert.equal(noReduce.body.rows.length, 3);
  const ranged = await c.get(`/v-reduce/_design/test/_view/sum?startkey=${q(['odd'])}&endkey=${q(['odd', {}])}`);
  assert.deepEqual(ranged.body.rows, [{ key: null, value: 100 }]);
});

test('builtin reduces refuse values as CouchDB 1.6\'s couch_query_servers does: 500 invalid_value; arrays sum from [0]', async () => {
  await setup('v-reduce-invalid', [{ _id: 'a', v: 1 }, { _id: 'b', v: 'x' }, { _id: 'c', v: [1, 2] }, { _id: 'e', v: [] }], {
    sum: { map: 'function(doc) { if (doc._id !== "c" && doc._id !== "e") emit(doc._id, doc.v); }', reduce: '_sum' },
    sum_array: { map: 'function(doc) { if (doc._id === "b") emit(doc._id, [1, doc.v]); }', reduce: '_sum' },
    stats: { map: 'function(doc) { if (doc._id === "a" || doc._id === "b") emit(doc._id, doc.v); }', reduce: '_stats' },
    empty_array: { map: 'function(doc) { if (doc._id === "e") emit(doc._id, doc.v); }', reduce: '_sum' },
  });
  const sumError = { error: 'invalid_value', reason: 'builtin _sum function requires map values to be numbers or lists of numbers' };
  for (const view of ['sum', 'sum?group=true', 'sum_array']) {
    const r = await c.get(`/v-reduce-invalid/_design/test/_view/${view}`);
    assert.equal(r.status, 500, view);
    assert.deepEqual(r.body, sumError, view);
  }
  const stats = await c.get('/v-reduce-invalid/_design/test/_view/stats');
  assert.equal(stats.status, 500);
  assert.deepEqual(stats.body, { error: 'invalid_value', reason: 'builtin _stats function requires map values to be numbers' });
  // The sum starts at 0, so an empty array sums to [0] (sum_terms([0], [])).
  assert.deepEqual((await c.get('/v-reduce-invalid/_design/test/_view/empty_array')).body.rows, [{ key: null, value: [0] }]);
  assert.deepEqual((await c.get('/v-reduce-invalid/_design/test/_view/empty_array?group=true')).body.rows, [{ key: 'e', value: [0] }]);
});

test('reduce_overflow_error previews the reply line as CouchDB 1.6\'s views.js runReduce does: the array of reductions, brackets included', async () => {
  await setup('v-reduce-overflow', [{ _id: 'a' }, { _id: 'b' }], {
    big: { map: 'function(doc) { emit(doc._id, 1); }', reduce: 'function(keys, values) { return new Array(301).join("x"); }' },
  });
  const r = await c.get('/v-reduce-overflow/_design/test/_view/big');
  assert.equal(r.status, 500, r.text);
  const line = JSON.stringify(['x'.repeat(300)]);
  assert.deepEqual(r.body, {
    error: 'reduce_overflow_error',
    reason: `Reduce output must shrink more rapidly: Current output: '${line.slice(0, 100)}'... (first 100 of ${line.length} bytes)`,
  });
});

test('a reduce naming a builtin CouchDB does not have is saved, as 1.6 saves it; its reduce queries are CouchDB 2\'s 400 invalid_design_doc', async () => {
  await setup('v-reduce-unknown', [{ _id: 'a' }, { _id: 'b' }], { foo: { map: 'function(doc) { emit(doc._id, 1); }', reduce: '_foo' } });
  for (const query of ['', '?group=true', '?key="a"']) {
    const r = await c.get(`/v-reduce-unknown/_design/test/_view/foo${query}`);
    assert.equal(r.status, 400, query);
    assert.deepEqual(r.body, { error: 'invalid_design_doc', reason: '`_foo` is not a supported reduce function.' }, query);
  }
  assert.equal((await c.get('/v-reduce-unknown/_design/test/_view/foo?reduce=false')).body.total_rows, 2);
});

test('reduce with keys: skip and limit count the rows of all keys together, as couch_mrview\'s red_fold', async () => {
  await setup('v-keyed-reduce', numbers(12), {
    by_type: { map: 'function(doc) { emit(doc.type, doc.n); }', reduce: '_sum' },
    by_type_js: { map: 'function(doc) { emit(doc.type, 1); }', reduce: 'function(k, v, re) { return sum(v); }' },
  });
  for (const view of ['by_type', 'by_type_js']) {
    const path = `/v-keyed-reduce/_design/test/_view/${view}`;
    const keysOf = (r: { body: { rows: { key: string }[] } }) => r.body.rows.map((x) => x.key);
    const all = await c.post(`${path}?group=true`, { keys: ['odd', 'even', 'none'] });
    assert.deepEqual(keysOf(all), ['odd', 'even'], view);
    assert.deepEqual(keysOf(await c.post(`${path}?group=true&limit=1`, { keys: ['odd', 'even'] })), ['odd'], view);
    assert.deepEqual(keysOf(await c.post(`${path}?group=true&skip=1`, { keys: ['odd', 'even'] })), ['even'], view);
    assert.deepEqual(keysOf(await c.post(`${path}?group=true&limit=0`, { keys: ['odd', 'even'] })), [], view);
    assert.deepEqual(keysOf(await c.get(`${path}?group=true&skip=1&limit=1&keys=${q(['even', 'odd', 'even'])}`)), ['odd'], view);
  }
});

test('incremental updates: edits, deletions and new documents show up', async () => {
  await setup('v-incr', numbers(5), { by_n: { map: 'function(doc) { if (doc.n !== undefined) emit(doc.n, null); }', reduce: '_count' } });
  assert.deepEqual((await c.get('/v-incr/_design/test/_view/by_n')).body.rows, [{ key: null, value: 5 }]);
  const d1 = await c.get('/v-incr/d001');
  await c.put('/v-incr/d001', { ...d1.body, n: 100 });
  const d2 = await c.get('/v-incr/d002');
  await c.del(`/v-incr/d002?rev=${d2.body._rev}`);
  await c.put('/v-incr/extra', { n: -1 });
  const r = await c.get('/v-incr/_design/test/_view/by_n?reduce=false');
  assert.deepEqual(r.body.rows.map((x: { key: number }) => x.key), [-1, 0, 3, 4, 100]);
  assert.deepEqual((await c.get('/v-incr/_design/test/_view/by_n')).body.rows, [{ key: null, value: 5 }]);
});

test('stale=ok answers from the index as it is; stale=update_after updates afterwards', async () => {
  await setup('v-stale', numbers(3), { by_n: { map: 'function(doc) { emit(doc.n, null); }' } });
  assert.equal((await c.get('/v-stale/_design/test/_view/by_n')).body.rows.length, 3);
  await c.put('/v-stale/new', { n: 50 });
  assert.equal((await c.get('/v-stale/_design/test/_view/by_n?stale=ok')).body.rows.length, 3);
  assert.equal((await c.get('/v-stale/_design/test/_view/by_n?stale=update_after')).body.rows.length, 3);
  let rows = 0;
  for (let i = 0; i < 50 && rows !== 4; i++) {
    rows = (await c.get('/v-stale/_design/test/_view/by_n?stale=ok')).body.rows.length;
    if (rows !== 4) await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(rows, 4);
});

test('include_docs, and values {_id} join other documents', async () => {
  await setup('v-docs', [{ _id: 'a', other: 'b', x: 1 }, { _id: 'b', x: 2 }], {
    self: { map: 'function(doc) { emit(doc._id, null); }' },
    join: { map: 'function(doc) { if (doc.other) emit(doc._id, {_id: doc.other}); }' },
  });
  const self = await c.get('/v-docs/_design/test/_view/self?include_docs=true');
  assert.equal(self.body.rows[0].doc.x, 1);
  const join = await c.get('/v-docs/_design/test/_view/join?include_docs=true');
  assert.equal(join.body.rows[0].doc._id, 'b');
  assert.equal(join.body.rows[0].doc.x, 2);
});

test('bad queries are query_parse_error; missing views are 404', async () => {
  await setup('v-errors', numbers(3), {
    map: { map: 'function(doc) { emit(doc.n, 1); }' },
    red: { map: 'function(doc) { emit(doc.n, 1); }', reduce: '_count' },
  });
  for (const path of [
    '/v-errors/_design/test/_view/map?group=true',
    '/v-errors/_design/test/_view/red?include_docs=true',
    '/v-errors/_design/test/_view/map?startkey=5&endkey=1',
    '/v-errors/_design/test/_view/map?limit=-1',
    '/v-errors/_design/test/_view/map?stale=sometimes',
  ]) {
    const r = await c.get(path);
    assert.equal(r.status, 400, path);
    assert.equal(r.body.error, 'query_parse_error', path);
  }
  // A key that is not JSON is a bad request (CouchDB 1.6's view_errors).
  const notJson = await c.get('/v-errors/_design/test/_view/map?startkey=notjson');
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error, 'bad_request');
  assert.equal((await c.get('/v-errors/_design/test/_view/nope')).status, 404);
  assert.equal((await c.get('/v-errors/_design/nope/_view/map')).status, 404);
});

test('a map function that does not compile is a compilation_error; one that throws skips the document', async () => {
  await setup('v-bad', numbers(4), {
    broken: { map: 'function(doc) { emit(doc.n; }' },
    throws: { map: 'function(doc) { if (doc.n === 2) throw new Error("boom"); emit(doc.n, null); }' },
  });
  const broken = await c.get('/v-bad/_design/test/_view/broken');
  assert.equal(broken.status, 400);
  assert.equal(broken.body.error, 'compilation_error');
  // A broken function in the design document poisons its index; a sound one in another works.
  await c.put('/v-bad/_design/ok', { views: { throws: { map: 'function(doc) { if (doc.n === 2) throw new Error("boom"); emit(doc.n, null); }' } } });
  const r = await c.get('/v-bad/_design/ok/_view/throws');
  assert.deepEqual(r.body.rows.map((x: { key: number }) => x.key), [0, 1, 3]);
  // The same on an empty database (nothing to map), and on one large enough that documents are
  // read ahead while the sandbox compiles: the error every time, never an index left half built.
  await setup('v-bad-empty', [], { broken: { map: 'function(doc) { emit(doc.n; }' } });
  await setup('v-bad-large', numbers(999).concat(numbers(999).map((d) => ({ ...d, _id: `e${d._id}` }))).concat(numbers(999).map((d) => ({ ...d, _id: `f${d._id}` }))),
    { broken: { map: 'function(doc) { emit(doc.n; }' } });
  for (const db of ['v-bad-empty', 'v-bad-large', 'v-bad-large']) {
    const again = await c.get(`/${db}/_design/test/_view/broken`);
    assert.equal(again.status, 400, `${db}: ${again.text}`);
    assert.equal(again.body.error, 'compilation_error');
    const info = await c.get(`/${db}/_design/test/_info`);
    assert.equal(info.body.view_index.update_seq, 0, db);
  }
});

test('ETag and 304, _info, _temp_view, _view_cleanup', async () => {
  await setup('v-misc', numbers(3), { by_n: { map: 'function(doc) { emit(doc.n, null); }' } });
  const r = await c.get('/v-misc/_design/test/_view/by_n');
  assert.ok(r.headers.etag);
  const again = await c.get('/v-misc/_design/test/_view/by_n', { headers: { 'If-None-Match': String(r.headers.etag) } });
  assert.equal(again.status, 304);
  const info = await c.get('/v-misc/_design/test/_info');
  assert.equal(info.body.name, 'test');
  assert.match(info.body.view_index.signature, /^[0-9a-f]{32}$/);
  assert.equal(info.body.view_index.language, 'javascript');
  const temp = await c.post('/v-misc/_temp_view', { map: 'function(doc) { emit(doc.type, 1); }', reduce: '_count' });
  assert.equal(temp.status, 200, temp.text);
  assert.deepEqual(temp.body.rows, [{ key: null, value: 3 }]);
  assert.equal((await c.post('/v-misc/_view_cleanup', undefined, { headers: { 'Content-Type': 'application/json' } })).status, 202);
  assert.equal((await c.get('/v-misc/_design/test/_view/by_n')).body.rows.length, 3);
});

test("a new index starts at the database's purge_seq: _info reports it before the first build", async () => {
  await setup('v-purged-info', numbers(3), { by_n: { map: 'function(doc) { emit(doc.n, null); }' } });
  const d0 = (await c.get('/v-purged-info/d000')).body;
  const purged = await c.post('/v-purged-info/_purge', { d000: [d0._rev] });
  assert.equal(purged.status, 200, purged.text);
  // Another design document, so its index is created after the purge.
  assert.equal((await c.put('/v-purged-info/_design/later', { views: { v: { map: 'function(doc) { emit(doc._id, null); }' } } })).status, 201);
  const info = await c.get('/v-purged-info/_design/later/_info');
  assert.equal(info.status, 200, info.text);
  assert.equal(info.body.view_index.purge_seq, 1);
  assert.equal(info.body.view_index.update_seq, 0);
  const rows = await c.get('/v-purged-info/_design/later/_view/v');
  assert.deepEqual(rows.body.rows.map((x: { id: string }) => x.id), ['d001', 'd002']);
  const built = await c.get('/v-purged-info/_design/later/_info');
  assert.equal(built.body.view_index.purge_seq, 1);
  assert.equal(built.body.view_index.update_seq, (await c.get('/v-purged-info')).body.update_seq);
});

test('_changes?filter=_view passes documents the map function emits for', async () => {
  await setup('v-chfilter', numbers(6), { odd: { map: 'function(doc) { if (doc.type === "odd") emit(doc.n, null); }' } });
  const r = await c.get('/v-chfilter/_changes?filter=_view&view=test/odd');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.results.map((x: { id: string }) => x.id), ['d001', 'd003', 'd005']);
  assert.equal((await c.get('/v-chfilter/_changes?filter=_view&view=test/none')).status, 404);
  assert.equal((await c.get('/v-chfilter/_changes?filter=_view')).status, 400);
});

test('rows one document emits under one key come in Erlang term order of their values, as CouchDB sorts them', async () => {
  // Emitted in a scrambled order, with another key in between; "😀" is before "｡" in UTF-16
  // but after it in UTF-8 bytes, which is how Erlang compares binaries.
  const values = ['😀', 'ab', { b: 1 }, [2], 'B', true, 2, {}, '｡', null, [], false, 1.5, 'a', [1, 2], { a: 2 }, { a: 1, b: 1 }];
  await setup('v-dups', [{ _id: 'one', values }, { _id: 'two', values: ['z', 0] }], {
    by_k: { map: 'function(doc) { doc.values.forEach(function(v, i) { emit("k", v); if (i === 3) emit("other", v); }); }' },
  });
  const expected = [1.5, 2, false, null, true, {}, { a: 1, b: 1 }, { a: 2 }, { b: 1 }, [], [1, 2], [2], 'B', 'a', 'ab', '｡', '😀'];
  const rowsOf = async () => (await c.get(`/v-dups/_design/test/_view/by_k?key=${q('k')}`)).body.rows as { id: string; value: unknown }[];
  const rows = await rowsOf();
  assert.deepEqual(rows.filter((r) => r.id === 'one').map((r) => r.value), expected);
  // Rows of different documents still follow document ids.
  assert.deepEqual(rows.map((r) => r.id), [...expected.map(() => 'one'), 'two', 'two']);
  assert.deepEqual(rows.filter((r) => r.id === 'two').map((r) => r.value), [0, 'z']);
  // An edit replaces the rows, in the order of the new values.
  const one = (await c.get('/v-dups/one')).body;
  assert.equal((await c.put('/v-dups/one', { ...one, values: [[0], 'x', 3] })).status, 201);
  assert.deepEqual((await rowsOf()).filter((r) => r.id === 'one').map((r) => r.value), [3, [0], 'x']);
  const total = (await c.get('/v-dups/_design/test/_view/by_k')).body;
  assert.equal(total.total_rows, 5);
});

test('a map function that times out in the middle of a build fails the query; the index then builds once the document is fixed', async () => {
  const docs = Array.from({ length: 1600 }, (_, i) => ({ _id: `d${String(i).padStart(4, '0')}`, n: i }));
  await setup('v-spin', docs, { by_n: { map: 'function(doc) { if (doc.n === 1234) while (true) {} emit(doc.n, null); }' } });
  assert.equal((await c.put('/_config/couchdb/os_process_timeout', '"300"')).status, 200);
  try {
    const failed = await c.get('/v-spin/_design/test/_view/by_n?limit=1');
    assert.equal(failed.status, 500, failed.text);
    assert.equal(failed.body.error, 'os_process_error');
    const doc = await c.get('/v-spin/d1234');
    assert.equal((await c.put('/v-spin/d1234', { ...doc.body, n: 99999 })).status, 201);
    const r = await c.get('/v-spin/_design/test/_view/by_n?skip=1598');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.total_rows, 1600);
    assert.deepEqual(r.body.rows.map((x: { key: number }) => x.key), [1599, 99999]);
  } finally {
    await c.put('/_config/couchdb/os_process_timeout', '"5000"');
  }
});

test('a document may emit tens of thousands of rows, in the interpreter and in the sandbox', async () => {
  const many = 'function(doc) { for (var i = 0; i < doc.count; i++) emit([doc._id, i], null); emit([doc._id, 3], "again"); }';
  // log() keeps this one in the sandbox.
  const sandboxed = 'function(doc) { for (var i = 0; i < doc.count; i++) emit([doc._id, i], null); emit([doc._id, 3], "again"); log("mapped"); }';
  await setup('v-many-rows', [{ _id: 'big', count: 70_000 }, { _id: 'small', count: 2 }], { fast: { map: many }, slow: { map: sandboxed } });
  for (const view of ['fast', 'slow']) {
    const r = await c.get(`/v-many-rows/_design/test/_view/${view}?limit=3&skip=3`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.total_rows, 70_004);
    assert.deepEqual(r.body.rows.map((x: { key: unknown; value: unknown }) => [x.key, x.value]), [[['big', 3], null], [['big', 3], 'again'], [['big', 4], null]]);
  }
});

test('a document may emit more than 65,535 rows with one key; document-id bounds cover all of them', async () => {
  const map = 'function(doc) { for (var i = 0; i < doc.count; i++) emit("same", i); }';
  await setup('v-one-key', [{ _id: 'big', count: 70_000 }, { _id: 'small', count: 2 }], { v: { map, reduce: '_count' } });
  const view = '/v-one-key/_design/test/_view/v';
  const count = await c.get(view);
  assert.equal(count.status, 200, count.text);
  assert.deepEqual(count.body.rows, [{ key: null, value: 70_002 }]);
  const values = (r: { body: { rows: { id: string; value: number }[] } }) => r.body.rows.map((x) => `${x.id} ${x.value}`);
  // A document's rows of one key are in the order of their values.
  const across = await c.get(`${view}?reduce=false&key="same"&skip=65534&limit=4`);
  assert.deepEqual(values(across), ['big 65534', 'big 65535', 'big 65536', 'big 65537']);
  const endOfBig = await c.get(`${view}?reduce=false&key="same"&endkey_docid=big&skip=69998`);
  assert.deepEqual(values(endOfBig), ['big 69998', 'big 69999']);
  const fromEnd = await c.get(`${view}?reduce=false&key="same"&descending=true&startkey_docid=big&limit=2`);
  assert.deepEqual(values(fromEnd), ['big 69999', 'big 69998']);
  assert.equal(fromEnd.body.offset, 2);
});

test('a design document with 300 views keeps every view apart (numbers from 255 on take three bytes)', async () => {
  const views: Record<string, { map: string; reduce?: string }> = {};
  for (let i = 0; i < 300; i++) views[`v${String(i).padStart(3, '0')}`] = { map: `function(doc) { emit([doc.n, ${i}], ${i}); }`, reduce: '_sum' };
  await setup('v-300-views', numbers(20), views);
  for (const i of [0, 1, 254, 255, 256, 299]) {
    const name = `v${String(i).padStart(3, '0')}`;
    const all = await c.get(`/v-300-views/_design/test/_view/${name}?reduce=false`);
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.total_rows, 20, name);
    assert.deepEqual(all.body.rows.map((r: { key: [number, number] }) => r.key), Array.from({ length: 20 }, (_, n) => [n, i]), name);
    const range = await c.get(`/v-300-views/_design/test/_view/${name}?reduce=false&startkey=${q([5, i])}&endkey=${q([7, i])}`);
    assert.equal(range.body.offset, 5, name);
    assert.deepEqual(range.body.rows.map((r: { key: [number, number] }) => r.key[0]), [5, 6, 7], name);
    const sum = await c.get(`/v-300-views/_design/test/_view/${name}`);
    assert.deepEqual(sum.body.rows, [{ key: null, value: 20 * i }], name);
  }
  // An update moves rows of high-numbered views as well.
  const doc = await c.get('/v-300-views/d005');
  assert.equal((await c.put('/v-300-views/d005', { ...doc.body, n: 100 })).status, 201);
  const moved = await c.get(`/v-300-views/_design/test/_view/v299?reduce=false&startkey=${q([100, 0])}`);
  assert.deepEqual(moved.body.rows.map((r: { id: string; key: unknown }) => [r.id, r.key]), [['d005', [100, 299]]]);
  assert.equal(moved.body.offset, 19);
});

test('a design document with more views than index keys can number answers 400 bad_request', async () => {
  const views: Record<string, { map: string }> = {};
  for (let i = 0; i <= 65_790; i++) views[`v${i}`] = { map: 'function(doc) {}' };
  await setup('v-too-many-views', numbers(1), views);
  const r = await c.get('/v-too-many-views/_design/test/_view/v0');
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { error: 'bad_request', reason: 'A design document may hold at most 65790 views' });
});

test('[query_server_config] map_interpreter: off, every map runs in the sandbox, with the same rows', async () => {
  const map = 'function(doc) { if (doc.type === "odd") emit([doc.type, doc.n], doc.n); else emit(doc.missing.x, 1); }';
  await setup('v-interp-on', numbers(20), { v: { map } });
  const on = await c.get('/v-interp-on/_design/test/_view/v');
  assert.equal(on.status, 200, on.text);
  const off = await c.put('/_config/query_server_config/map_interpreter', '"false"');
  assert.equal(off.status, 200, off.text);
  try {
    await setup('v-interp-off', numbers(20), { v: { map } });
    const r = await c.get('/v-interp-off/_design/test/_view/v');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.total_rows, 10);
    assert.deepEqual(r.body.rows, on.body.rows);
  } finally {
    assert.equal((await c.put('/_config/query_server_config/map_interpreter', '"true"')).status, 200);
  }
});

test('map functions see each document exactly as stored: non-ASCII text, attachments, empty bodies, both map runners', async () => {
  const db = 'v-texts';
  const docs: Record<string, unknown>[] = [
    { _id: 'ascii', s: 'plain', n: 1 },
    { _id: 'café', s: 'crème brûlée', n: 2, nested: { k: ['日本語', 'Ελληνικά', '😀 emoji'] } },
    { _id: '日本', s: '\u0000 control \u2028 separators \ud83d\ude00', n: 3 },
    { _id: 'empty' },
    { _id: 'spaced', ' key with spaces ': ' value ', '': 'empty name' },
    { _id: 'with-att', n: 4, _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from('héllo').toString('base64') } } },
  ];
  // One map within the interpreter's subset, one outside it (QuickJS maps it).
  await setup(db, docs, {
    whole: { map: 'function(doc) { emit(doc._id, doc); }' },
    keys: { map: 'function(doc) { var names = Object.keys(doc).sort(); emit(doc._id, names.join("|")); }' },
  });
  const whole = await c.get(`/${db}/_design/test/_view/whole`);
  assert.equal(whole.status, 200, whole.text);
  const seen = new Map((whole.body.rows as { id: string; value: Record<string, unknown> }[]).map((r) => [r.id, r.value]));
  for (const doc of docs) {
    const got = seen.get(doc._id as string)!;
    assert.ok(got, `row of ${String(doc._id)}`);
    const stored = await c.get(`/${db}/${encodeURIComponent(doc._id as string)}`);
    assert.deepEqual(got, stored.body, `the map saw ${String(doc._id)} as a GET returns it`);
  }
  assert.deepEqual(Object.keys((seen.get('with-att')!['_attachments'] as object)), ['a.txt']);
  const keys = await c.get(`/${db}/_design/test/_view/keys?key=${q('café')}`);
  assert.deepEqual(keys.body.rows, [{ id: 'café', key: 'café', value: '_id|_rev|n|nested|s' }]);
  const spaced = await c.get(`/${db}/_design/test/_view/keys?key=${q('spaced')}`);
  assert.deepEqual(spaced.body.rows[0].value, '| key with spaces |_id|_rev');
});
