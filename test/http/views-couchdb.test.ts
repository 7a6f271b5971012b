/**
 * Views and design documents as CouchDB 1.6's own browser suite exercises them, one test per
 * suite file it comes from (view_collation, view_multi_key_design, reduce, etags_views, ...),
 * checked over real HTTP. The assertions restate the behaviour in our own words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
type ViewRow = { id: string; key: any; value: any; doc?: any };
const keysOf = (rows: ViewRow[]) => rows.map((r) => r.key);
const valuesOf = (rows: ViewRow[]) => rows.map((r) => r.value);

/** `count` documents {_id: "i", integer: i, string: "i"} from `from`, as the suite's makeDocs. */
const numbered = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ _id: String(from + i), integer: from + i, string: String(from + i) }));

async function freshDb(name: string, docs: Record<string, unknown>[] = []) {
  await c.del(`/${name}`);
  assert.equal((await c.put(`/${name}`)).status, 201);
  if (docs.length > 0) assert.equal((await c.post(`/${name}/_bulk_docs`, { docs })).status, 201);
}

async function putDesign(db: string, id: string, body: Record<string, unknown>) {
  const r = await c.put(`/${db}/_design/${id}`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.rev as string;
}

/** POST /_temp_view with the given functions and query string. */
async function temp(db: string, map: string, reduce?: string, query = '', extra: Record<string, unknown> = {}) {
  return c.post(`/${db}/_temp_view${query}`, { language: 'javascript', map, ...(reduce ? { reduce } : {}), ...extra });
}

test('view_collation: type order, descending, key, inclusive_end', async () => {
  const values: unknown[] = [null, false, true, 1, 2, 3.0, 4, 'a', 'A', 'aa', 'b', 'B', 'ba', 'bb',
    ['a'], ['b'], ['b', 'c'], ['b', 'c', 'a'], ['b', 'd'], ['b', 'd', 'e'],
    { a: 1 }, { a: 2 }, { b: 1 }, { b: 2 }, { b: 2, a: 1 }, { b: 2, c: 2 }];
  await freshDb('vc-collation', values.map((foo, i) => ({ _id: String(i), foo })));
  const map = 'function(doc) { emit(doc.foo, null); }';
  const asc = await temp('vc-collation', map);
  assert.deepEqual(keysOf(asc.body.rows), values);
  const desc = await temp('vc-collation', map, undefined, '?descending=true');
  assert.deepEqual(keysOf(desc.body.rows), [...values].reverse());
  for (const value of values.slice(1)) {
    const one = await temp('vc-collation', map, undefined, `?key=${q(value)}`);
    assert.deepEqual(keysOf(one.body.rows), [value]);
  }
  // key is startkey = endkey, so an exclusive end leaves nothing.
  assert.deepEqual((await temp('vc-collation', map, undefined, `?key=${q('b')}&inclusive_end=false`)).body.rows, []);
  const last = async (query: string) => {
    const r = await temp('vc-collation', map, undefined, query);
    return r.body.rows[r.body.rows.length - 1].key;
  };
  assert.equal(await last(`?endkey=${q('b')}&inclusive_end=true`), 'b');
  assert.equal(await last(`?endkey=${q('b')}&descending=true&inclusive_end=true`), 'b');
  assert.equal(await last(`?endkey=${q('b')}&inclusive_end=false`), 'aa');
  assert.equal(await last(`?endkey=${q('b')}&descending=true&inclusive_end=false`), 'B');
  // The row of "b" has id "10": an exclusive end before or at it leaves it out, after it keeps it.
  assert.equal(await last(`?endkey=${q('b')}&endkey_docid=10&inclusive_end=false`), 'aa');
  assert.equal(await last(`?endkey=${q('b')}&endkey_docid=11&inclusive_end=false`), 'b');
});

test('view_collation_raw: raw collation orders by type tag then bytes, key ranges follow it', async () => {
  const values: unknown[] = [1, 2, 3, 4, false, null, true,
    { a: 1 }, { a: 2 }, { b: 1 }, { b: 2 }, { b: 2, a: 1 }, { b: 2, c: 2 },
    ['a'], ['b'], ['b', 'c'], ['b', 'c', 'a'], ['b', 'd'], ['b', 'd', 'e'],
    'A', 'B', 'a', 'aa', 'b', 'ba', 'bb'];
  await freshDb('vc-raw', values.map((foo, i) => ({ _id: String(i), foo })));
  await putDesign('vc-raw', 'test', { views: { test: { map: 'function(doc) { emit(doc.foo, null); }', options: { collation: 'raw' } } } });
  const view = (query = '') => c.get(`/vc-raw/_design/test/_view/test${query}`);
  assert.deepEqual(keysOf((await view()).body.rows), values);
  const range = await view(`?startkey=${q('Z')}&endkey=${q('a')}`);
  assert.equal(range.status, 200, range.text);
  assert.deepEqual(keysOf(range.body.rows), ['a']);
  assert.deepEqual(keysOf((await view('?descending=true')).body.rows), [...values].reverse());
  for (const value of values.slice(1)) assert.deepEqual(keysOf((await view(`?key=${q(value)}`)).body.rows), [value]);
  const last = async (query: string) => {
    const rows = (await view(query)).body.rows;
    return rows[rows.length - 1].key;
  };
  assert.equal(await last(`?endkey=${q('b')}&inclusive_end=true`), 'b');
  assert.equal(await last(`?endkey=${q('b')}&descending=true&inclusive_end=true`), 'b');
  assert.equal(await last(`?endkey=${q('b')}&inclusive_end=false`), 'aa');
  assert.equal(await last(`?endkey=${q('b')}&descending=true&inclusive_end=false`), 'ba');
  assert.equal(await last(`?endkey=${q('b')}&endkey_docid=10&inclusive_end=false`), 'aa');
  assert.equal(await last(`?endkey=${q('b')}&endkey_docid=11&inclusive_end=false`), 'aa');
});

test('view_errors: undefined keys are null, throwing maps skip rows; bad parameters are rejected', async () => {
  await freshDb('vc-errors', [{ _id: 'x', integer: 1, string: '1', array: [1, 2, 3] }]);
  // CouchDB 1.6's query server sends rows as JSON: an undefined key or key element is null.
  const undefinedKey = (await temp('vc-errors', 'function(doc) { emit(doc.undef, null); }')).body;
  assert.equal(undefinedKey.total_rows, 1);
  assert.equal(undefinedKey.rows[0].key, null);
  assert.equal((await temp('vc-errors', 'function(doc) { doc.undef(); }')).body.total_rows, 0);
  const undefinedElement = (await temp('vc-errors', 'function(doc) { emit([doc._id, doc.undef], null); }')).body;
  assert.equal(undefinedElement.total_rows, 1);
  assert.deepEqual(undefinedElement.rows[0].key, ['x', null]);
  assert.equal((await temp('vc-errors', 'function(doc) { emit(doc._id, {a: doc.undef, b: 1}); }')).body.total_rows, 1);
  const badJson = await temp('vc-errors', 'function(doc) { emit(doc.integer, null); }', undefined, '?startkey=foo');
  assert.equal(badJson.status, 400);
  assert.equal(badJson.body.error, 'bad_request');
  // A temporary view's body must say it is JSON.
  const form = await c.post('/vc-errors/_temp_view', undefined, {
    raw: JSON.stringify({ language: 'javascript', map: 'function(doc) {}' }),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(form.status, 415, form.text);
  assert.equal(form.body.error, 'bad_content_type');
  const grouped = await temp('vc-errors', 'function(doc) { emit(doc.integer, doc.integer); }', undefined, '?group=true');
  assert.equal(grouped.status, 400);
  assert.equal(grouped.body.error, 'query_parse_error');
  await putDesign('vc-errors', 'test', {
    views: {
      no_reduce: { map: 'function(doc) { emit(doc._id, null); }' },
      with_reduce: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
    },
  });
  for (const query of ['no_reduce?group=true', 'no_reduce?group_level=1', 'no_reduce?reduce=true', 'with_reduce?group=true&reduce=false']) {
    const r = await c.get(`/vc-errors/_design/test/_view/${query}`);
    assert.equal(r.status, 400, query);
    assert.equal(r.body.error, 'query_parse_error', query);
  }
  assert.equal((await c.get('/vc-errors/_design/test/_view/no_reduce?reduce=false')).status, 200);
  const notObject = await c.post('/vc-errors/_design/test/_view/no_reduce', undefined, { raw: '[]', headers: { 'Content-Type': 'application/json' } });
  assert.equal(notObject.status, 400);
  assert.deepEqual(notObject.body, { error: 'bad_request', reason: 'Request body must be a JSON object' });
  const notArray = await c.post('/vc-errors/_design/test/_view/no_reduce', { keys: 1 });
  assert.equal(notArray.status, 400);
  assert.deepEqual(notArray.body, { error: 'bad_request', reason: '`keys` member must be a array.' });
  await putDesign('vc-errors', 'testbig', {
    views: { reduce_too_big: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { var chars = []; for (var i = 0; i < 1000; i++) chars.push("wazzap"); return chars; }' } },
  });
  const big = await c.get('/vc-errors/_design/testbig/_view/reduce_too_big');
  assert.equal(big.status, 500);
  assert.equal(big.body.error, 'reduce_overflow_error');
  const negative = await c.get('/vc-errors/_design/test/_view/no_reduce?limit=-1');
  assert.deepEqual(negative.body, { error: 'query_parse_error', reason: 'Invalid value for positive integer: "-1"' });
  const notInt = await c.get('/vc-errors/_design/test/_view/no_reduce?skip=many');
  assert.deepEqual(notInt.body, { error: 'query_parse_error', reason: 'Invalid value for integer: "many"' });
  const levelWithKeys = await c.post('/vc-errors/_design/test/_view/with_reduce?group_level=1', { keys: [1] });
  assert.equal(levelWithKeys.status, 400);
  assert.equal(levelWithKeys.body.error, 'query_parse_error');
  const reversed = await temp('vc-errors', 'function(doc) { emit(null, null); }', undefined, '?startkey=2&endkey=1');
  assert.equal(reversed.status, 400);
  assert.match(reversed.body.reason, /no rows can match/i);
});

test('view_errors: a map function that never returns is an os_process_error', async () => {
  await freshDb('vc-loop', [{ _id: 'x', integer: 1 }]);
  await putDesign('vc-loop', 'infinite', { views: { infinite_loop: { map: 'function(doc) { while (true) { emit(doc, doc); } }' } } });
  assert.equal((await c.put('/_config/couchdb/os_process_timeout', '500')).status, 200);
  try {
    const r = await c.get('/vc-loop/_design/infinite/_view/infinite_loop');
    assert.equal(r.status, 500);
    assert.equal(r.body.error, 'os_process_error');
  } finally {
    await c.put('/_config/couchdb/os_process_timeout', '5000');
  }
});

test('view_multi_key_design: keys with docid bounds, order, skip, limit, descending', async () => {
  await freshDb('vc-keys', numbered(0, 100));
  await putDesign('vc-keys', 'test', {
    views: {
      all_docs: { map: 'function(doc) { emit(doc.integer, doc.string); }' },
      multi_emit: { map: 'function(doc) { for (var i = 0; i < 3; i++) emit(i, doc.integer); }' },
      summate: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
    },
  });
  const view = (name: string, query: string, keys: unknown[]) => c.post(`/vc-keys/_design/test/_view/${name}${query}`, { keys });
  const missing = await view('summate', '?group=true', [101, 30, 15, 37, 50]);
  assert.deepEqual(missing.body.rows, [30, 15, 37, 50].map((k) => ({ key: k, value: k })));
  const keys = [10, 15, 30, 37, 50];
  const rows = (await view('all_docs', '', keys)).body.rows;
  assert.deepEqual(keysOf(rows), keys);
  assert.deepEqual(valuesOf(rows), keys.map(String));
  assert.deepEqual((await view('summate', '?group=true', keys)).body.rows, keys.map((k) => ({ key: k, value: k })));
  for (const bad of [`startkey=0`, `endkey=0`, `key=0`, `group_level=2`]) {
    const r = await view('all_docs', `?${bad}`, keys);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error, 'query_parse_error', bad);
  }
  const ungrouped = await view('summate', '', keys);
  assert.equal(ungrouped.status, 400);
  assert.equal(ungrouped.body.error, 'query_parse_error');
  assert.equal((await view('summate', '?reduce=false', keys)).body.rows.length, 5);

  // Document id bounds apply within every key.
  const bounded = (await view('multi_emit', '?startkey_docid=21&endkey_docid=23', [0, 2])).body.rows;
  assert.deepEqual(keysOf(bounded), [0, 0, 0, 2, 2, 2]);
  assert.deepEqual(valuesOf(bounded), [21, 22, 23, 21, 22, 23]);
  assert.deepEqual(keysOf((await view('all_docs', '?limit=1', keys)).body.rows), [10]);
  const skipped = (await view('multi_emit', '?skip=1', [0])).body.rows;
  assert.equal(skipped.length, 99);
  assert.equal(skipped[0].value, 1);
  const desc = (await view('multi_emit', '?descending=true', [1])).body.rows;
  assert.equal(desc.length, 100);
  assert.equal(desc[0].value, 99);
  assert.equal(desc[99].value, 0);
  assert.deepEqual(valuesOf((await view('multi_emit', '?descending=true&skip=3&limit=2', [2])).body.rows), [96, 95]);
  assert.deepEqual(valuesOf((await view('multi_emit', '?skip=2&limit=3&startkey_docid=13', [0])).body.rows), [15, 16, 17]);
  assert.deepEqual(valuesOf((await view('multi_emit', '?skip=1&limit=5&startkey_docid=25&endkey_docid=27', [1])).body.rows), [26, 27]);
  assert.deepEqual(valuesOf((await view('multi_emit', '?skip=1&limit=5&startkey_docid=28&endkey_docid=26&descending=true', [1])).body.rows), [27, 26]);

  // Keys are answered in the order given, descending or not; each key's rows follow the direction.
  assert.deepEqual(keysOf((await view('all_docs', '?descending=true', [3, 1, 2])).body.rows), [3, 1, 2]);
  const twoKeys = (await view('multi_emit', '?descending=true&limit=4', [0, 2])).body.rows;
  assert.deepEqual(twoKeys.map((r: ViewRow) => [r.key, r.value]), [[0, 99], [0, 98], [0, 97], [0, 96]]);
  // GET with keys=[...] in the query string works as the body does.
  const viaGet = await c.get(`/vc-keys/_design/test/_view/all_docs?keys=${q([37, 10])}`);
  assert.deepEqual(keysOf(viaGet.body.rows), [37, 10]);
  // The offset of a keyed query is where its first row lies in the view.
  assert.equal((await view('all_docs', '', [30, 10])).body.offset, 30);
  assert.equal((await view('all_docs', '?skip=1', [30, 10])).body.offset, 10);
  assert.equal((await view('all_docs', '', [])).body.rows.length, 0);
});

test('view_multi_key_temp: keys on temporary views, map and grouped reduce', async () => {
  await freshDb('vc-keys-temp', numbered(0, 100));
  const keys = [10, 15, 30, 37, 50];
  const map = 'function(doc) { emit(doc.integer, doc.integer); }';
  const rows = (await temp('vc-keys-temp', map, undefined, '', { keys })).body.rows;
  assert.deepEqual(keysOf(rows), keys);
  assert.deepEqual(valuesOf(rows), keys);
  const grouped = await temp('vc-keys-temp', map, 'function(keys, values) { return sum(values); }', '?group=true', { keys });
  assert.deepEqual(grouped.body.rows, keys.map((k) => ({ key: k, value: k })));
});

test('view_include_docs: docs joined by row id, by emitted _id and by emitted _rev', async () => {
  await freshDb('vc-incl', numbered(0, 100));
  await putDesign('vc-incl', 'test', {
    views: {
      all_docs: { map: 'function(doc) { emit(doc.integer, doc.string); }' },
      with_prev: { map: 'function(doc) { if (doc.prev) emit(doc._id, {_rev: doc.prev}); else emit(doc._id, {_rev: doc._rev}); }' },
      with_id: { map: 'function(doc) { if (doc.link) emit(doc._id, {_id: doc.link}); }' },
      summate: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
    },
  });
  const view = (name: string, query: string, keys?: unknown[]) => keys
    ? c.post(`/vc-incl/_design/test/_view/${name}${query}`, { keys })
    : c.get(`/vc-incl/_design/test/_view/${name}${query}`);
  const two = (await view('all_docs', '?include_docs=true&limit=2')).body.rows;
  assert.deepEqual(two.map((r: ViewRow) => [r.id, r.doc._id]), [['0', '0'], ['1', '1']]);
  const keyed = (await view('all_docs', '?include_docs=true', [29, 74])).body.rows;
  assert.deepEqual(keyed.map((r: ViewRow) => r.doc.integer), [29, 74]);
  const onReduce = await view('summate', '?include_docs=true');
  assert.equal(onReduce.status, 400);
  assert.equal(onReduce.body.error, 'query_parse_error');
  assert.equal((await view('summate', '?reduce=false&include_docs=true')).body.rows.length, 100);
  const reduced = await view('summate', '?reduce=true&include_docs=false');
  assert.deepEqual(reduced.body.rows, [{ key: null, value: 4950 }]);

  // A value {_rev} without _id joins that revision of the row's own document.
  const before = (await c.get('/vc-incl/0')).body;
  const edited = await c.put('/vc-incl/0', { ...before, integer: 100, prev: before._rev });
  assert.equal(edited.status, 201);
  const prev = (await view('with_prev', '?include_docs=true', ['0'])).body.rows[0];
  assert.equal(prev.doc._id, '0');
  assert.equal(prev.doc._rev, before._rev);
  assert.equal(prev.doc.integer, 0);
  assert.equal(prev.doc.prev, undefined);

  // {_id} joins another document; a missing one gives doc null.
  await c.post('/vc-incl/_bulk_docs', { docs: [{ _id: 'link-a', link: '5' }, { _id: 'link-b', link: 'nowhere' }] });
  const linked = (await view('with_id', '?include_docs=true')).body.rows;
  assert.deepEqual(linked.map((r: ViewRow) => [r.id, r.doc && r.doc._id]), [['link-a', '5'], ['link-b', null]]);
  assert.ok('doc' in linked[1]);

  // A deleted revision, or an _id that is not a string, joins nothing.
  await putDesign('vc-incl', 'joins', {
    views: {
      to_rev: { map: 'function(doc) { if (doc.rev_of) emit(doc._id, {_id: doc.rev_of, _rev: doc.rev}); }' },
      bad_id: { map: 'function(doc) { if (doc.rev_of) emit(doc._id, {_id: 42}); }' },
    },
  });
  const victim = await c.put('/vc-incl/victim', { a: 1 });
  const tomb = await c.del(`/vc-incl/victim?rev=${victim.body.rev}`);
  await c.put('/vc-incl/pointer', { rev_of: 'victim', rev: tomb.body.rev });
  assert.equal((await c.get('/vc-incl/_design/joins/_view/to_rev?include_docs=true')).body.rows[0].doc, null);
  assert.equal((await c.get('/vc-incl/_design/joins/_view/bad_id?include_docs=true')).body.rows[0].doc, null);
  await c.put('/vc-incl/pointer2', { rev_of: 'victim', rev: victim.body.rev });
  const older = (await c.get('/vc-incl/_design/joins/_view/to_rev?include_docs=true&key=%22pointer2%22')).body.rows[0];
  assert.deepEqual(older.doc, { _id: 'victim', _rev: victim.body.rev, a: 1 });

  // After compaction the old revision is gone: its row's doc is null.
  assert.equal((await c.post('/vc-incl/_compact', {})).status, 202);
  for (let i = 0; i < 200 && (await c.get('/vc-incl')).body.compact_running; i++) await new Promise((r) => setTimeout(r, 25));
  const after = (await view('with_prev', '?include_docs=true', ['0', '23'])).body.rows;
  assert.equal(after.length, 2);
  assert.equal(after[0].key, '0');
  assert.equal(after[0].doc, null);
  assert.equal(after[1].doc.integer, 23);
});

test('view_include_docs: conflicts=true adds _conflicts to joined documents', async () => {
  await freshDb('vc-incl-conf');
  await putDesign('vc-incl-conf', 'mydesign', { views: { myview: { map: 'function(doc) { emit(doc.value, 1); }' } } });
  const docs = [
    { _id: 'foo', _rev: '1-aaa', value: 1, str: '1' },
    { _id: 'foo', _rev: '1-bbb', value: 1, str: '666' },
    { _id: 'bar', _rev: '1-ccc', value: 2, str: '2' },
  ];
  assert.equal((await c.post('/vc-incl-conf/_bulk_docs', { docs, new_edits: false })).status, 201);
  const rows = (await c.get('/vc-incl-conf/_design/mydesign/_view/myview?include_docs=true&conflicts=true')).body.rows;
  assert.equal(rows.length, 2);
  assert.deepEqual(rows[0].doc._conflicts, ['1-aaa']);
  assert.equal(rows[1].doc._conflicts, undefined);
  const plain = (await c.get('/vc-incl-conf/_design/mydesign/_view/myview?include_docs=true')).body.rows;
  assert.equal(plain[0].doc._conflicts, undefined);
});

test('view_conflicts: map functions see _conflicts', async () => {
  await freshDb('vc-conflicts');
  const docs = [{ _id: 'foo', _rev: '1-aaa', bar: 41 }, { _id: 'foo', _rev: '1-bbb', bar: 43 }];
  assert.equal((await c.post('/vc-conflicts/_bulk_docs', { docs, new_edits: false })).status, 201);
  const r = await temp('vc-conflicts', 'function(doc) { if (doc._conflicts) emit(doc._id, doc._conflicts); }');
  assert.deepEqual(r.body.rows, [{ id: 'foo', key: 'foo', value: ['1-aaa'] }]);
});

test('view_offsets: offsets descending and past the end', async () => {
  const docs = [['a', 1], ['a', 2], ['a', 3], ['b', 1], ['b', 2], ['b', 3], ['b', 4], ['b', 5], ['c', 1], ['c', 2]]
    .map(([letter, number]) => ({ _id: `${letter}${number}`, letter, number, foo: 'bar' }));
  await freshDb('vc-offsets', docs);
  await putDesign('vc-offsets', 'test', { views: { offset: { map: 'function(doc) { emit([doc.letter, doc.number], doc); }' } } });
  const view = (query: string) => c.get(`/vc-offsets/_design/test/_view/offset${query}`);
  const expected: [unknown, number][] = [[['c', 2], 0], [['c', 1], 1], [['b', 5], 2], [['b', 4], 3], [['b', 3], 4],
    [['b', 2], 5], [['b', 1], 6], [['a', 3], 7], [['a', 2], 8], [['a', 1], 9]];
  for (const [startkey, offset] of expected) {
    assert.equal((await view(`?startkey=${q(startkey)}&descending=true`)).body.offset, offset);
  }
  const paged = await view(`?startkey=${q(['b', 4])}&startkey_docid=b4&endkey=${q(['b'])}&limit=2&descending=true&skip=1`);
  assert.equal(paged.body.offset, 4);
  assert.equal((await view(`?startkey=${q(['c', 3])}`)).body.offset, 10);
  assert.equal((await view(`?startkey=${q(['b', 6])}&endkey=${q(['b', 7])}`)).body.offset, 8);
  // Skipping past a range's end leaves the offset at the range's end.
  assert.equal((await view(`?startkey=${q(['a'])}&endkey=${q(['a', 9])}&skip=5`)).body.offset, 3);
});

test('view_pagination: startkey_docid and endkey_docid paging both ways', async () => {
  await freshDb('vc-pages', numbered(0, 100));
  const map = 'function(doc) { emit(doc.integer, null); }';
  for (let i = 0; i < 100; i += 10) {
    const r = await temp('vc-pages', map, undefined, `?startkey=${i}&startkey_docid=${i}&limit=10`);
    assert.deepEqual(keysOf(r.body.rows), Array.from({ length: 10 }, (_, j) => i + j));
    assert.equal(r.body.total_rows, 100);
    assert.equal(r.body.offset, i);
    const f = await temp('vc-pages', map, undefined, `?startkey=${i}&startkey_docid=${i}&descending=false&limit=10`);
    assert.equal(f.body.offset, i);
  }
  for (let i = 99; i >= 0; i -= 10) {
    const r = await temp('vc-pages', map, undefined, `?startkey=${i}&startkey_docid=${i}&descending=true&limit=10`);
    assert.deepEqual(keysOf(r.body.rows), Array.from({ length: 10 }, (_, j) => i - j));
    assert.equal(r.body.offset, 99 - i);
  }
  const nulls = 'function(doc) { emit(null, null); }';
  const ids = Array.from({ length: 100 }, (_, i) => String(i)).sort();
  const fwd = await temp('vc-pages', nulls, undefined, '?startkey=null&startkey_docid=1&endkey=null&endkey_docid=40');
  assert.deepEqual(fwd.body.rows.map((r: ViewRow) => r.id), ids.slice(ids.indexOf('1'), ids.indexOf('40') + 1));
  assert.equal(fwd.body.offset, 1);
  const rev = await temp('vc-pages', nulls, undefined, '?startkey=null&startkey_docid=40&endkey=null&endkey_docid=1&descending=true');
  assert.deepEqual(rev.body.rows.map((r: ViewRow) => r.id), ids.slice(ids.indexOf('1'), ids.indexOf('40') + 1).reverse());
  assert.equal(rev.body.offset, 100 - ids.indexOf('40') - 1);
  const exclusive = await temp('vc-pages', nulls, undefined, '?startkey=null&startkey_docid=1&endkey=null&endkey_docid=40&inclusive_end=false');
  assert.equal(exclusive.body.rows.length, ids.indexOf('40') - ids.indexOf('1'));
});

test('reduce: JavaScript reduces over ranges, groups, group levels, rereduce, docid-bounded ends', async () => {
  await freshDb('vc-reduce', numbered(1, 501));
  const map = 'function(doc) { emit(doc.integer, doc.integer); emit(doc.integer, doc.integer); }';
  const reduce = 'function(keys, values) { return sum(values); }';
  const summate = (n: number) => (n + 1) * n / 2;
  const value = async (query: string, fn = reduce) => (await temp('vc-reduce', map, fn, query)).body.rows[0].value;
  assert.equal(await value(''), 2 * summate(500));
  assert.equal(await value('?startkey=4&endkey=4'), 8);
  assert.equal(await value('?startkey=4&endkey=5'), 18);
  assert.equal(await value('?startkey=4&endkey=6'), 30);
  assert.deepEqual(valuesOf((await temp('vc-reduce', map, reduce, '?group=true&limit=3')).body.rows), [2, 4, 6]);
  for (let i = 1; i < 250; i += 30) assert.equal(await value(`?startkey=${i}&endkey=${500 - i}`), 2 * (summate(500 - i) - summate(i - 1)));
  // Builtins, with trailing characters ignored.
  for (const suffix of ['', '\n', 'orama', ' ']) {
    assert.equal(await value('', `_sum${suffix}`), 2 * summate(500));
    assert.equal(await value('', `_count${suffix}`), 1000);
    const stats = await value('', `_stats${suffix}`);
    assert.deepEqual({ ...stats }, { sum: 2 * summate(500), count: 1000, min: 1, max: 500, sumsqr: 2 * Array.from({ length: 500 }, (_, i) => (i + 1) ** 2).reduce((a, b) => a + b) });
  }
  assert.equal(await value('?startkey=4&endkey=6', '_count'), 6);

  await freshDb('vc-reduce-keys');
  const shapes = [['a'], ['a'], ['a', 'b'], ['a', 'b'], ['a', 'b', 'c'], ['a', 'b', 'd'], ['a', 'c', 'd'], ['d'], ['d', 'a'], ['d', 'b'], ['d', 'c']];
  for (let j = 0; j < 3; j++) await c.post('/vc-reduce-keys/_bulk_docs', { docs: shapes.map((keys) => ({ keys })) });
  const kmap = 'function(doc) { emit(doc.keys, 1); }';
  for (const fn of [reduce, '_sum', '_count']) {
    const rows = async (query: string) => (await temp('vc-reduce-keys', kmap, fn, query)).body.rows;
    assert.deepEqual((await rows('?group=true')).slice(0, 4), [{ key: ['a'], value: 6 }, { key: ['a', 'b'], value: 6 }, { key: ['a', 'b', 'c'], value: 3 }, { key: ['a', 'b', 'd'], value: 3 }]);
    assert.deepEqual(await rows('?group=true&limit=2'), [{ key: ['a'], value: 6 }, { key: ['a', 'b'], value: 6 }]);
    assert.deepEqual(await rows('?group_level=1'), [{ key: ['a'], value: 21 }, { key: ['d'], value: 12 }]);
    const level2 = [{ key: ['a'], value: 6 }, { key: ['a', 'b'], value: 12 }, { key: ['a', 'c'], value: 3 }, { key: ['d'], value: 3 }, { key: ['d', 'a'], value: 3 }, { key: ['d', 'b'], value: 3 }, { key: ['d', 'c'], value: 3 }];
    assert.deepEqual(await rows('?group_level=2'), level2);
    assert.deepEqual(await rows(`?group_level=2&endkey=${q(['d'])}&inclusive_end=true`), level2.slice(0, 4));
    assert.deepEqual(await rows(`?group_level=2&endkey=${q(['d'])}&inclusive_end=false`), level2.slice(0, 3));
  }

  await freshDb('vc-reduce-std', Array.from({ length: 100 }, (_, i) => ({ val: (i % 10 + 1) * 10 })));
  const std = 'function(keys, values, rereduce) { var count = 0, total = 0, sq = 0;' +
    ' if (!rereduce) { for (var i in values) { total += values[i]; sq += values[i] * values[i]; } count = values.length; }' +
    ' else { for (var i in values) { count += values[i].count; total += values[i].total; sq += values[i].sqrTotal; } }' +
    ' return {stdDeviation: Math.sqrt((sq - total * total / count) / count), count: count, total: total, sqrTotal: sq}; }';
  const dev = (await temp('vc-reduce-std', 'function(doc) { emit(doc.val, doc.val); }', std)).body.rows[0].value.stdDeviation;
  assert.ok(Math.abs(dev - 28.722813232690143) < 1e-10);
});

test('reduce: pagination by startkey_docid/endkey_docid on a reduce view', async () => {
  const docs: Record<string, unknown>[] = Array.from({ length: 1123 }, (_, i) => ({ _id: String(i), int: i }));
  docs.push({ _id: '_design/test', views: { view1: { map: 'function(doc) { emit(doc.int, doc._id); emit(doc.int + 1, doc._id); emit(doc.int + 2, doc._id); }', reduce: '_count' } } });
  await freshDb('vc-reduce-page', docs);
  const view = async (params: Record<string, unknown>) => {
    const query = Object.entries(params).map(([k, v]) => `${k}=${k.endsWith('key') ? q(v) : encodeURIComponent(String(v))}`).join('&');
    const r = await c.get(`/vc-reduce-page/_design/test/_view/view1?${query}`);
    assert.equal(r.status, 200, r.text);
    return r.body.rows as ViewRow[];
  };
  const total = async (params: Record<string, unknown>) => (await view(params))[0]!.value;
  assert.equal(await total({ startkey: 400, endkey: 402 }), 9);
  assert.equal(await total({ startkey: 402, endkey: 400, descending: true }), 9);
  assert.equal(await total({ startkey: 400, endkey: 402, inclusive_end: false }), 6);
  assert.equal(await total({ startkey: 402, endkey: 400, inclusive_end: false, descending: true }), 6);
  const cases: [Record<string, unknown>, number][] = [
    [{ endkey_docid: '400' }, 7], [{ endkey_docid: '400', inclusive_end: false }, 6],
    [{ endkey_docid: '401' }, 8], [{ endkey_docid: '401', inclusive_end: false }, 7],
    [{ endkey_docid: '402' }, 9], [{ endkey_docid: '402', inclusive_end: false }, 8],
  ];
  for (const [extra, expected] of cases) assert.equal(await total({ startkey: 400, endkey: 402, ...extra }), expected, JSON.stringify(extra));
  const descCases: [Record<string, unknown>, number][] = [
    [{ endkey_docid: '398' }, 9], [{ endkey_docid: '398', inclusive_end: false }, 8],
    [{ endkey_docid: '399' }, 8], [{ endkey_docid: '399', inclusive_end: false }, 7],
    [{ endkey_docid: '400' }, 7], [{ endkey_docid: '400', inclusive_end: false }, 6],
  ];
  for (const [extra, expected] of descCases) assert.equal(await total({ startkey: 402, endkey: 400, descending: true, ...extra }), expected, JSON.stringify(extra));
  assert.equal(await total({ startkey: 402, startkey_docid: '400', endkey: 400, descending: true }), 7);
  assert.equal(await total({ startkey: 402, startkey_docid: '401', endkey: 400, descending: true, inclusive_end: false }), 5);
  const grouped = async (params: Record<string, unknown>) => (await view({ group: true, ...params })).map((r) => [r.key, r.value]);
  assert.deepEqual(await grouped({ startkey: 400, endkey: 402 }), [[400, 3], [401, 3], [402, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, descending: true }), [[402, 3], [401, 3], [400, 3]]);
  assert.deepEqual(await grouped({ startkey: 400, endkey: 402, inclusive_end: false }), [[400, 3], [401, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, descending: true, inclusive_end: false }), [[402, 3], [401, 3]]);
  assert.deepEqual(await grouped({ startkey: 400, endkey: 402, endkey_docid: '401' }), [[400, 3], [401, 3], [402, 2]]);
  assert.deepEqual(await grouped({ startkey: 400, endkey: 402, endkey_docid: '400' }), [[400, 3], [401, 3], [402, 1]]);
  assert.deepEqual(await grouped({ startkey: 402, startkey_docid: '401', endkey: 400, descending: true }), [[402, 2], [401, 3], [400, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, startkey_docid: '400', endkey: 400, descending: true }), [[402, 1], [401, 3], [400, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, startkey_docid: '401', endkey: 400, descending: true, inclusive_end: false }), [[402, 2], [401, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, startkey_docid: '400', endkey: 400, descending: true, inclusive_end: false }), [[402, 1], [401, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, endkey_docid: '398', descending: true, inclusive_end: true }), [[402, 3], [401, 3], [400, 3]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true, inclusive_end: true }), [[402, 3], [401, 3], [400, 2]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true, inclusive_end: false }), [[402, 3], [401, 3], [400, 1]]);
  assert.deepEqual(await grouped({ startkey: 402, endkey: 400, endkey_docid: '400', descending: true, inclusive_end: false }), [[402, 3], [401, 3]]);
});

test('reduce_false: reduce=false answers the map rows of a reduce view', async () => {
  await freshDb('vc-reduce-false', numbered(1, 6));
  await putDesign('vc-reduce-false', 'test', { views: { summate: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' } } });
  const reduced = await c.get('/vc-reduce-false/_design/test/_view/summate');
  assert.deepEqual(reduced.body, { rows: [{ key: null, value: 15 }] });
  const rows = await c.get('/vc-reduce-false/_design/test/_view/summate?reduce=false');
  assert.equal(rows.body.total_rows, 5);
  assert.equal(rows.body.offset, 0);
  assert.deepEqual(rows.body.rows.map((r: ViewRow) => [r.id, r.key, r.value]), [['1', 1, 1], ['2', 2, 2], ['3', 3, 3], ['4', 4, 4], ['5', 5, 5]]);
});

test('view_update_seq: update_seq in view answers, stale=ok keeps the index as it was', async () => {
  await freshDb('vc-seq');
  await putDesign('vc-seq', 'test', {
    views: {
      all_docs: { map: 'function(doc) { emit(doc.integer, doc.string); }' },
      summate: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
    },
  });
  await c.post('/vc-seq/_bulk_docs', { docs: numbered(0, 100) });
  const view = (name: string, query: string) => c.get(`/vc-seq/_design/test/_view/${name}${query}`);
  assert.equal((await view('all_docs', '?limit=1&update_seq=true')).body.update_seq, 101);
  assert.equal((await view('all_docs', '?limit=1&update_seq=false')).body.update_seq, undefined);
  assert.equal((await view('all_docs', '?limit=1')).body.update_seq, undefined);
  const reduced = await view('summate', '?update_seq=true');
  assert.equal(reduced.body.update_seq, 101);
  assert.equal(reduced.body.rows.length, 1);
  await c.post('/vc-seq', { id: '0' });
  assert.equal((await view('all_docs', '?limit=1&stale=ok&update_seq=true')).body.update_seq, 101);
  assert.equal((await view('all_docs', '?limit=1&update_seq=true')).body.update_seq, 102);
  assert.equal((await c.post('/vc-seq/_design/test/_view/all_docs?update_seq=true', { keys: ['0', '1'] })).body.update_seq, 102);
  assert.equal((await c.post('/vc-seq/_design/test/_view/summate?group=true&update_seq=true', { keys: ['0', '1'] })).body.update_seq, 102);
});

test('etags_views: per-view ETags that change only with that view, its query and its documents', async () => {
  await freshDb('vc-etags');
  await putDesign('vc-etags', 'etags', {
    views: {
      basicView: { map: 'function(doc) { if (doc.integer) emit(doc.integer, doc.string); }' },
      fooView: { map: 'function(doc) { if (doc.foo) emit("bar", 1); }' },
      withReduce: {
        map: 'function(doc) { if (doc.integer) emit(doc.integer, doc.string); }',
        reduce: 'function(keys, values, rereduce) { return rereduce ? sum(values) : values.length; }',
      },
    },
  });
  await c.post('/vc-etags/_bulk_docs', { docs: numbered(0, 10) });
  const etagOf = async (path: string, headers: Record<string, string> = {}) => {
    const r = await c.get(`/vc-etags/_design/etags/_view/${path}`, { headers });
    return { status: r.status, etag: r.headers['etag'] as string };
  };
  const basic = await etagOf('basicView');
  assert.equal(basic.status, 200);
  assert.ok(basic.etag);
  assert.equal((await etagOf('basicView', { 'if-none-match': basic.etag })).status, 304);
  // A document the view does not emit for leaves its ETag alone.
  assert.equal((await c.put('/vc-etags/doc1', { foo: 'bar' })).status, 201);
  assert.equal((await etagOf('basicView')).etag, basic.etag);
  // include_docs answers change with every update.
  const withDocs = (await etagOf('basicView?include_docs=true')).etag;
  assert.equal((await c.put('/vc-etags/doc2', { foo: 'bar' })).status, 201);
  assert.notEqual((await etagOf('basicView?include_docs=true')).etag, withDocs);
  // A purge changes the ETag of the views it removes rows from, only.
  const foo = (await etagOf('fooView')).etag;
  const doc1 = (await c.get('/vc-etags/doc1')).body;
  assert.equal((await c.post('/vc-etags/_purge', { doc1: [doc1._rev] })).status, 200);
  assert.notEqual((await etagOf('fooView')).etag, foo);
  assert.equal((await etagOf('basicView')).etag, basic.etag);
  assert.notEqual((await etagOf('fooView')).etag, (await etagOf('basicView')).etag);
  // update_seq=true answers carry the index's sequence, so their ETag follows it.
  const withSeq = (await etagOf('basicView?update_seq=true')).etag;
  assert.equal((await c.put('/vc-etags/doc4', { foo: 'bar' })).status, 201);
  assert.notEqual((await etagOf('basicView?update_seq=true')).etag, withSeq);
  // Different query parameters are different answers.
  assert.notEqual((await etagOf('basicView?limit=1')).etag, basic.etag);
  // Rows the view emits change it.
  await c.post('/vc-etags/_bulk_docs', { docs: numbered(10, 20) });
  const changed = (await etagOf('basicView')).etag;
  assert.notEqual(changed, basic.etag);
  assert.equal((await etagOf('basicView')).etag, changed);

  const reduce = await etagOf('withReduce');
  assert.equal((await etagOf('withReduce', { 'if-none-match': reduce.etag })).status, 304);
  assert.equal((await c.put('/vc-etags/doc3', { foo: 'bar' })).status, 201);
  assert.equal((await etagOf('withReduce')).etag, reduce.etag);
  const doc3 = (await c.get('/vc-etags/doc3')).body;
  assert.equal((await c.post('/vc-etags/_purge', { doc3: [doc3._rev] })).status, 200);
  assert.equal((await etagOf('withReduce')).etag, reduce.etag);
  await c.post('/vc-etags/_bulk_docs', { docs: numbered(20, 30) });
  assert.notEqual((await etagOf('withReduce')).etag, reduce.etag);

  // POSTed keys are part of the answer's identity.
  const post = async (path: string, keys: unknown[]) => (await c.post(`/vc-etags/_design/etags/_view/${path}`, { keys })).headers['etag'];
  assert.notEqual(await post('basicView', [1]), await post('basicView', [2]));
  assert.notEqual(await post('withReduce?group=true', [1]), await post('withReduce?group=true', [2]));
  assert.equal(await post('basicView', [1]), await post('basicView', [1]));
});

test('view_sandboxing: map functions cannot reach the query server or change what other views see', async () => {
  await freshDb('vc-sandbox', [{ _id: 'x', integer: 1, string: '1', array: [1, 2, 3] }]);
  // (CouchDB 1.6's SpiderMonkey also threw on writes to the sealed document; ours ignores them.)
  for (const body of ['gc(); emit(null, doc);', 'map_funs.push(1); emit(null, doc);', 'map_results.push(1); emit(null, doc);']) {
    const r = await temp('vc-sandbox', `function(doc) { ${body} }`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.total_rows, 0, body);
  }
  // One view changing its document does not change what the next view sees.
  await putDesign('vc-sandbox', 'foobar', {
    views: {
      view1: { map: 'function(doc) { if (doc.values) doc.values = [666]; if (doc.tags) doc.tags.push("qwerty"); if (doc.tokens) doc.tokens["c"] = 3; }' },
      view2: { map: 'function(doc) { if (doc.values) emit(doc._id, doc.values); if (doc.tags) emit(doc._id, doc.tags); if (doc.tokens) emit(doc._id, doc.tokens); }' },
    },
  });
  await c.post('/vc-sandbox/_bulk_docs', { docs: [{ _id: 'doc1', values: [1, 2, 3] }, { _id: 'doc2', tags: ['foo', 'bar'], tokens: { a: 1, b: 2 } }] });
  assert.equal((await c.get('/vc-sandbox/_design/foobar/_view/view1')).body.rows.length, 0);
  const rows = (await c.get('/vc-sandbox/_design/foobar/_view/view2')).body.rows;
  // doc2's two rows share key and id: CouchDB orders them by value in Erlang term order, where
  // an object (a tuple) comes before an array (a list), whatever the emit order.
  assert.deepEqual(rows.map((r: ViewRow) => [r.key, r.value]), [['doc1', [1, 2, 3]], ['doc2', { a: 1, b: 2 }], ['doc2', ['foo', 'bar']]]);
});

test('design_docs: shared indexes, _info, stale=ok before a build, deletion', async () => {
  await freshDb('vc-ddocs');
  const ddoc = {
    language: 'javascript',
    views: {
      all_docs_twice: { map: 'function(doc) { emit(doc.integer, null); emit(doc.integer, null); }' },
      no_docs: { map: 'function(doc) {}' },
      single_doc: { map: 'function(doc) { if (doc._id == "1") emit(1, null); }' },
      summate: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
      summate2: { map: 'function(doc) { emit(doc.integer, doc.integer); }', reduce: 'function(keys, values) { return sum(values); }' },
    },
  };
  const rev = await putDesign('vc-ddocs', 'test', ddoc);
  const signature = (await c.get('/vc-ddocs/_design/test/_info')).body.view_index.signature;
  await c.post('/vc-ddocs/_bulk_docs', { docs: numbered(1, 51) });
  const info = await c.get('/vc-ddocs/_design/test/_info');
  assert.equal(info.status, 200);
  assert.equal(info.body.name, 'test');
  assert.equal(info.body.view_index.signature, signature);
  assert.equal(info.body.view_index.compact_running, false);
  assert.equal(info.body.view_index.language, 'javascript');
  for (const field of ['disk_size', 'data_size', 'update_seq', 'purge_seq']) assert.equal(typeof info.body.view_index[field], 'number', field);
  for (const field of ['updater_running', 'waiting_commit']) assert.equal(typeof info.body.view_index[field], 'boolean', field);
  assert.equal(typeof info.body.view_index.waiting_clients, 'number');
  // Neither _info nor _view_cleanup builds the index.
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/all_docs_twice?stale=ok')).body.total_rows, 0);
  assert.equal((await c.post('/vc-ddocs/_view_cleanup', {})).status, 202);
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/summate?stale=ok')).body.rows.length, 0);
  const twice = (await c.get('/vc-ddocs/_design/test/_view/all_docs_twice')).body.rows;
  assert.deepEqual(keysOf(twice), Array.from({ length: 100 }, (_, i) => Math.floor(i / 2) + 1));
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/no_docs')).body.total_rows, 0);
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/single_doc')).body.total_rows, 1);
  assert.equal((await c.get('/vc-ddocs/_design/test/_info')).body.view_index.update_seq, 51);
  // Without a language, JavaScript is meant.
  await putDesign('vc-ddocs', 'test2', { views: { single_doc: ddoc.views.single_doc } });
  assert.equal((await c.get('/vc-ddocs/_design/test2/_view/single_doc')).body.total_rows, 1);
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/summate')).body.rows[0].value, 51 * 50 / 2);
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/summate?startkey=4&endkey=6')).body.rows[0].value, 15);
  assert.equal((await c.get('/vc-ddocs/_design/test/_view/summate2?startkey=4&endkey=6')).body.rows[0].value, 15);
  assert.equal((await c.del(`/vc-ddocs/_design/test?rev=${rev}`)).status, 200);
  const gone = await c.get('/vc-ddocs/_design/test/_view/no_docs');
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.body, { error: 'not_found', reason: 'deleted' });
  const never = await c.get('/vc-ddocs/_design/nothing/_view/no_docs');
  assert.deepEqual(never.body, { error: 'not_found', reason: 'missing' });
  assert.equal((await c.post('/vc-ddocs/_view_cleanup', {})).status, 202);
});

test('design_docs: huge keys and reduce results pass with reduce_limit off', async () => {
  const big = 'a'.repeat(65536);
  await freshDb('vc-huge', numbered(1, 4));
  await putDesign('vc-huge', 'test', {
    views: {
      huge_src_and_results: {
        map: `function(doc) { if (doc._id == "1") emit("${big}", null); }`,
        reduce: `function(keys, values) { return "${big}"; }`,
      },
    },
  });
  assert.equal((await c.put('/_config/query_server_config/reduce_limit', 'false')).status, 200);
  try {
    const reduced = await c.get('/vc-huge/_design/test/_view/huge_src_and_results');
    assert.equal(reduced.status, 200, reduced.text.slice(0, 200));
    assert.equal(reduced.body.rows[0].value, big);
    const rows = await c.get('/vc-huge/_design/test/_view/huge_src_and_results?reduce=false');
    assert.equal(rows.body.rows[0].key, big);
    assert.equal((await c.post('/vc-huge/_design/test/_view/huge_src_and_results?reduce=false', { keys: [big] })).body.rows.length, 1);
  } finally {
    await c.put('/_config/query_server_config/reduce_limit', 'true');
  }
});

test('design_docs: members of views without a map function are not views', async () => {
  await freshDb('vc-nomap', [{ _id: 'x' }]);
  await putDesign('vc-nomap', 'a', { views: { good: { map: 'function(doc) { emit(1, 1); }' }, nomap: { reduce: '_sum' }, str: 'hello' } });
  assert.equal((await c.get('/vc-nomap/_design/a/_view/good')).body.total_rows, 1);
  for (const name of ['nomap', 'str', 'missing']) {
    const r = await c.get(`/vc-nomap/_design/a/_view/${name}`);
    assert.equal(r.status, 404, name);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'missing_named_view' });
  }
});

test('design_options: include_design and local_seq', async () => {
  await freshDb('vc-options');
  const map = 'function(doc) { emit(null, doc._id); }';
  await putDesign('vc-options', 'fu', {
    language: 'javascript',
    options: { include_design: true, local_seq: true },
    views: { data: { map }, with_seq: { map: 'function(doc) { emit(doc._local_seq, null); }' } },
  });
  const tempWith = await temp('vc-options', map, undefined, '', { options: { include_design: true } });
  assert.deepEqual(valuesOf(tempWith.body.rows), ['_design/fu']);
  assert.equal((await temp('vc-options', map)).body.rows.length, 0);
  assert.deepEqual(valuesOf((await c.get('/vc-options/_design/fu/_view/data')).body.rows), ['_design/fu']);
  await putDesign('vc-options', 'bingo', { options: { include_design: false }, views: { data: { map } } });
  assert.equal((await c.get('/vc-options/_design/bingo/_view/data')).body.rows.length, 0);
  await putDesign('vc-options', 'bango', { views: { data: { map } } });
  assert.equal((await c.get('/vc-options/_design/bango/_view/data')).body.rows.length, 0);
  await c.post('/vc-options', {});
  assert.deepEqual(keysOf((await c.get('/vc-options/_design/fu/_view/with_seq')).body.rows), [1, 2, 3, 4]);
});

test('design_paths: design documents with %2F and in databases with slashes', async () => {
  for (const name of ['vc-paths', 'vc-paths/with_slashes']) {
    const db = encodeURIComponent(name);
    await c.del(`/${db}`);
    assert.equal((await c.put(`/${db}`)).status, 201);
    await c.post(`/${db}/_bulk_docs`, { docs: [{ _id: '_design/test', views: { testing: { map: 'function(){ emit(1, 1); }' } } }] });
    assert.equal((await c.get(`/${db}/_design/test`)).body._id, '_design/test');
    assert.equal((await c.get(`/${db}/_design%2Ftest`, { followRedirects: true })).body._id, '_design/test');
    assert.equal((await c.get(`/${db}/_design/test/_view/testing`)).body.total_rows, 0);
    assert.equal((await c.put(`/${db}/_design/test2`, { _id: '_design/test2', views: { testing: { map: 'function(){ emit(1, 1); }' } } })).status, 201);
    assert.equal((await c.get(`/${db}/_design%2Ftest2`, { followRedirects: true })).body._id, '_design/test2');
    assert.equal((await c.get(`/${db}/_design/test2/_view/testing`)).body.total_rows, 0);
  }
});

test('multiple_rows: several rows per document, ranges over compound keys', async () => {
  const names = ['Alice', 'Bob', 'Carol'];
  const docs = names.map((name, i) => ({ _id: name, cities: ['Olympia', 'Portland', 'Seattle'].slice(i) }));
  await freshDb('vc-multi', docs);
  await putDesign('vc-multi', 'test', { views: { by_city: { map: 'function(doc) { for (var i in doc.cities) emit([doc.cities[i], doc._id], null); }' } } });
  const all = (await c.get('/vc-multi/_design/test/_view/by_city')).body;
  assert.equal(all.total_rows, 6);
  assert.deepEqual(keysOf(all.rows), [['Olympia', 'Alice'], ['Portland', 'Alice'], ['Portland', 'Bob'], ['Seattle', 'Alice'], ['Seattle', 'Bob'], ['Seattle', 'Carol']]);
  const portland = (await c.get(`/vc-multi/_design/test/_view/by_city?startkey=${q(['Portland'])}&endkey=${q(['Portland', {}])}`)).body;
  assert.deepEqual(portland.rows.map((r: ViewRow) => r.id), ['Alice', 'Bob']);
  assert.equal(portland.offset, 1);
  // Changing a document replaces all its rows.
  const carol = (await c.get('/vc-multi/Carol')).body;
  await c.put('/vc-multi/Carol', { ...carol, cities: ['Olympia', 'Tacoma'] });
  const after = (await c.get('/vc-multi/_design/test/_view/by_city')).body;
  assert.equal(after.total_rows, 7);
  assert.deepEqual(keysOf(after.rows).filter((k: string[]) => k[1] === 'Carol'), [['Olympia', 'Carol'], ['Tacoma', 'Carol']]);
});

test('view_compaction: _compact/ddoc answers 202, the index keeps its rows and shrinks', async () => {
  await freshDb('vc-vcompact');
  await putDesign('vc-vcompact', 'foo', { views: { view1: { map: 'function(doc) { emit(doc._id, doc.value); }' }, view2: { map: 'function(doc) { if (typeof doc.integer === "number") emit(doc.integer, null); }', reduce: '_count' } } });
  await c.post('/vc-vcompact/_bulk_docs', { docs: Array.from({ length: 1000 }, (_, i) => ({ _id: String(i), value: 0, integer: i })) });
  assert.equal((await c.get('/vc-vcompact/_design/foo/_view/view1')).body.total_rows, 1000);
  for (let round = 1; round <= 2; round++) {
    const all = (await c.get(`/vc-vcompact/_all_docs?include_docs=true&endkey=${q('_')}`)).body.rows.map((r: { doc: Record<string, unknown> }) => ({ ...r.doc, value: round }));
    await c.post('/vc-vcompact/_bulk_docs', { docs: all });
    assert.equal((await c.get('/vc-vcompact/_design/foo/_view/view2')).body.rows[0].value, 1000);
  }
  const before = (await c.get('/vc-vcompact/_design/foo/_info')).body.view_index;
  assert.equal(before.update_seq, 3001);
  const compact = await c.post('/vc-vcompact/_compact/foo', {});
  assert.equal(compact.status, 202);
  assert.deepEqual(compact.body, { ok: true });
  let info = before;
  for (let i = 0; i < 400; i++) {
    info = (await c.get('/vc-vcompact/_design/foo/_info')).body.view_index;
    if (!info.compact_running && info.disk_size < before.disk_size) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(info.update_seq, 3001);
  assert.ok(info.disk_size < before.disk_size, `${info.disk_size} < ${before.disk_size}`);
  assert.ok(info.data_size < info.disk_size, `${info.data_size} < ${info.disk_size}`);
  const rows = (await c.get('/vc-vcompact/_design/foo/_view/view1')).body;
  assert.equal(rows.total_rows, 1000);
  assert.ok(rows.rows.every((r: ViewRow) => r.value === 2));
  const missing = await c.post('/vc-vcompact/_compact/nothing', {});
  assert.equal(missing.status, 404);
});

test('purge: purged documents leave the view; the index follows purges', async () => {
  await freshDb('vc-purge', numbered(1, 11));
  await putDesign('vc-purge', 'test', {
    views: {
      all_docs_twice: { map: 'function(doc) { emit(doc.integer, null); emit(doc.integer, null); }' },
      single_doc: { map: 'function(doc) { if (doc._id == "1") emit(1, null); }' },
    },
  });
  const view = (name: string) => c.get(`/vc-purge/_design/test/_view/${name}`);
  assert.equal((await view('all_docs_twice')).body.total_rows, 20);
  assert.equal((await view('single_doc')).body.total_rows, 1);
  const one = (await c.get('/vc-purge/1')).body;
  const two = (await c.get('/vc-purge/2')).body;
  const purged = await c.post('/vc-purge/_purge', { 1: [one._rev], 2: [two._rev] });
  assert.equal(purged.status, 200);
  assert.equal(purged.body.purge_seq, 1);
  const rows = (await view('all_docs_twice')).body;
  assert.equal(rows.total_rows, 16);
  assert.deepEqual(keysOf(rows.rows), [3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10]);
  assert.equal((await view('single_doc')).body.total_rows, 0);
  assert.equal((await c.get('/vc-purge/_design/test/_info')).body.view_index.purge_seq, 1);
  // Two purges before the next query: the index rebuilds and still answers right.
  for (const id of ['3', '4']) {
    const doc = (await c.get(`/vc-purge/${id}`)).body;
    await c.post('/vc-purge/_purge', { [id]: [doc._rev] });
  }
  assert.equal((await view('all_docs_twice')).body.total_rows, 12);
});

test('erlang_views: a design document in another language is refused when queried', async () => {
  await freshDb('vc-erlang', [{ _id: 'a', integer: 1 }]);
  await putDesign('vc-erlang', 'erlview', { language: 'erlang', views: { v: { map: 'fun({Doc}) -> Emit(null, null) end.' } } });
  const r = await c.get('/vc-erlang/_design/erlview/_view/v');
  assert.equal(r.status, 500);
  assert.equal(typeof r.body.error, 'string');
  // A temporary view in another language fails the same way (its code is never compiled as JavaScript).
  const t = await c.post('/vc-erlang/_temp_view', { language: 'erlang', map: 'fun({Doc}) -> Emit(null, null) end.' });
  assert.equal(t.status, 500, t.text);
  assert.equal(t.body.error, r.body.error);
  const js = await c.post('/vc-erlang/_temp_view', { language: 'erlang', map: 'function(doc) { emit(null, null); }' });
  assert.equal(js.status, 500, js.text);
});

test('query parameters fold in order: the last repeat wins, and key sets both bounds a later startkey or endkey resets', async () => {
  await freshDb('view_params_order', numbered(1, 7));
  await putDesign('view_params_order', 'v', { views: { n: { map: 'function (doc) { emit(doc.integer, null); }' } } });
  const rows = async (query: string) => {
    const r = await c.get(`/view_params_order/_design/v/_view/n?${query}`);
    assert.equal(r.status, 200, `${query}: ${r.text}`);
    return keysOf(r.body.rows);
  };
  assert.deepEqual(await rows('key=1&key=2'), [2]);
  assert.deepEqual(await rows('startkey=1&start_key=5'), [5, 6]);
  assert.deepEqual(await rows('limit=1&limit=3'), [1, 2, 3]);
  assert.deepEqual(await rows('key=3&startkey=1'), [1, 2, 3]);
  assert.deepEqual(await rows('startkey=1&key=3'), [3]);
  assert.deepEqual(await rows('key=2&endkey=4'), [2, 3, 4]);
  assert.deepEqual(await rows('descending=false&descending=true&limit=2'), [6, 5]);
  const inverted = await c.get('/view_params_order/_design/v/_view/n?key=3&startkey=5');
  assert.equal(inverted.status, 400);
  assert.equal(inverted.body.error, 'query_parse_error');
  const all = await c.get(`/view_params_order/_all_docs?key=${q('3')}&startkey=${q('1')}`);
  assert.deepEqual(all.body.rows.map((r: ViewRow) => r.id), ['1', '2', '3']);
});

test('grouping: the later of group and group_level says, group_level=0 is no grouping, conflicts is no reduce parameter, reduce null is a map view', async () => {
  await freshDb('view_grouping', [{ _id: 'a', k: ['x', 1] }, { _id: 'b', k: ['x', 2] }, { _id: 'c', k: ['y', 1] }]);
  await putDesign('view_grouping', 'g', { views: {
    s: { map: 'function (doc) { emit(doc.k, 1); }', reduce: '_sum' },
    m: { map: 'function (doc) { emit(doc.k, 1); }' },
    n: { map: 'function (doc) { emit(doc._id, 1); }', reduce: null },
  } });
  const view = async (name: string, query: string) => c.get(`/view_grouping/_design/g/_view/${name}?${query}`);
  assert.deepEqual((await view('s', 'group_level=1&group=true')).body.rows.length, 3);
  assert.deepEqual((await view('s', 'group=true&group_level=1')).body.rows, [{ key: ['x'], value: 2 }, { key: ['y'], value: 1 }]);
  assert.deepEqual((await view('s', 'group_level=1&group=false')).body.rows, [{ key: null, value: 3 }]);
  assert.equal((await view('m', 'group_level=0')).status, 200);
  assert.equal((await view('m', 'group_level=1')).body.reason, 'Invalid use of grouping on a map view.');
  const conflicts = await view('s', 'conflicts=true');
  assert.equal(conflicts.status, 400);
  assert.equal(conflicts.body.reason, '`conflicts` is invalid for reduce views.');
  assert.equal((await view('s', 'conflicts=true&reduce=false')).status, 200);
  const mapOnly = await view('n', '');
  assert.equal(mapOnly.status, 200, mapOnly.text);
  assert.equal(mapOnly.body.total_rows, 3);
});

test('reduce_limit measures the query server line, as CouchDB: the function source and the rows count as input', async () => {
  await freshDb('view_reduce_line', numbered(0, 3));
  const comment = `/* ${'x'.repeat(500)} */`;
  await putDesign('view_reduce_line', 'r', { views: { v: {
    map: 'function (doc) { emit(doc.integer, doc.integer); }',
    reduce: `function (keys, values, rereduce) { ${comment} return "${'y'.repeat(210)}"; }`,
  } } });
  const r = await c.get('/view_reduce_line/_design/r/_view/v');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.rows[0].value, 'y'.repeat(210));
});

test('a lone reduction is not rereduced, as in CouchDB: a small view answers what reduce gave', async () => {
  await freshDb('view_lone_reduction', numbered(0, 3));
  await putDesign('view_lone_reduction', 'r', { views: { v: {
    map: 'function (doc) { emit(doc.integer, 1); }',
    reduce: 'function (keys, values, rereduce) { return rereduce ? "rereduced" : "reduced"; }',
  } } });
  assert.deepEqual((await c.get('/view_lone_reduction/_design/r/_view/v')).body.rows, [{ key: null, value: 'reduced' }]);
  assert.deepEqual((await c.get('/view_lone_reduction/_design/r/_view/v?group=true&limit=1')).body.rows, [{ key: 0, value: 'reduced' }]);
});
