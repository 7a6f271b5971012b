/**
 * Views through real CouchDB clients against a real Settee process: PouchDB's `query()` over its
 * HTTP adapter and nano's `db.view()`, on one design document with a map-only view, the built-in
 * reduces `_sum`, `_count` and `_stats`, and a JavaScript reduce. Every answer is compared row
 * for row. Remote traffic goes through a logging proxy so a failure shows the exact exchange.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import nano from 'nano';
import { serverForFile } from '../helpers/server.js';
import { startProxy, format, type LoggingProxy } from './proxy.js';

const DB = 'client-views';

const { server, c: raw } = await serverForFile();
let proxy: LoggingProxy;
let pouch: any;
let couch: nano.DocumentScope<any>;
/** id → rev of the corpus, for include_docs. */
const revs: Record<string, string> = {};

/**
 * The corpus: ten documents of three types. Names mix case so the map view's order is CouchDB's
 * (ICU) collation, not code-point order: apple < Banana < barley < carrot < cherry < date < Leek.
 */
const DOCS = [
  { _id: 'f1', type: 'fruit', name: 'apple', n: 5 },
  { _id: 'f2', type: 'fruit', name: 'Banana', n: 3 },
  { _id: 'f3', type: 'fruit', name: 'cherry', n: 8 },
  { _id: 'f4', type: 'fruit', name: 'date', n: 1 },
  { _id: 'v1', type: 'veg', name: 'carrot', n: 4 },
  { _id: 'v2', type: 'veg', name: 'Leek', n: 7 },
  { _id: 'v3', type: 'veg', name: 'onion', n: 2 },
  { _id: 'g1', type: 'grain', name: 'barley', n: 6 },
  { _id: 'g2', type: 'grain', name: 'oat', n: 9 },
  { _id: 'g3', type: 'grain', name: 'rice', n: 10 },
];

/** The same in by_name order: [id, name, n]. */
const BY_NAME: [string, string, number][] = [
  ['f1', 'apple', 5], ['f2', 'Banana', 3], ['g1', 'barley', 6], ['v1', 'carrot', 4], ['f3', 'cherry', 8],
  ['f4', 'date', 1], ['v2', 'Leek', 7], ['g2', 'oat', 9], ['v3', 'onion', 2], ['g3', 'rice', 10],
];
const nameRow = ([id, name, n]: [string, string, number]) => ({ id, key: name, value: n });
const nameRows = (...names: string[]) => names.map((name) => nameRow(BY_NAME.find((r) => r[1] === name)!));

/** [type, n] order: fruit < grain < veg, then n. */
const BY_TYPE_N = [...DOCS].sort((a, b) => (a.type === b.type ? a.n - b.n : a.type < b.type ? -1 : 1));

const JS_REDUCE = `function (keys, values, rereduce) {
  if (rereduce) {
    return values.reduce(function (a, v) {
      return { count: a.count + v.count, total: a.total + v.total, max: Math.max(a.max, v.max) };
    }, { count: 0, total: 0, max: -Infinity });
  }
  return { count: values.length, total: sum(values), max: Math.max.apply(null, values) };
}`;

const DDOC = {
  _id: '_design/app',
  language: 'javascript',
  views: {
    by_name: { map: 'function (doc) { if (doc.name) emit(doc.name, doc.n); }' },
    sum: { map: 'function (doc) { emit([doc.type, doc.n], doc.n); }', reduce: '_sum' },
    count: { map: 'function (doc) { emit([doc.type, doc.n], null); }', reduce: '_count' },
    stats: { map: 'function (doc) { emit([doc.type, doc.n], doc.n); }', reduce: '_stats' },
    js: { map: 'function (doc) { emit(doc.type, doc.n); }', reduce: JS_REDUCE },
  },
};

before(async () => {
  proxy = await startProxy(server.url);
  const created = await raw.put(`/${DB}`);
  assert.equal(created.status, 201, created.text);
  const bulk = await raw.post(`/${DB}/_bulk_docs`, { docs: DOCS });
  assert.equal(bulk.status, 201, bulk.text);
  for (const r of bulk.body as { id: string; rev: string }[]) revs[r.id] = r.rev;
  const ddoc = await raw.put(`/${DB}/_design/app`, DDOC);
  assert.equal(ddoc.status, 201, ddoc.text);
  pouch = new PouchDB(proxy.url + DB);
  couch = nano(proxy.url).use(DB);
});
after(async () => {
  try { await pouch.close(); } catch { /* already closed */ }
  await proxy.stop();
});

/** The last view exchange (method, path, body and the start of the answer), for assertion messages. */
function lastView(): string {
  const views = proxy.log.filter((e) => e.path.includes('/_view/'));
  return views.length ? format(views[views.length - 1]!) : '(no view request went out)';
}

/** Awaits a client call that must fail and returns its error. */
async function failure(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail(`expected the call to fail; last exchange:\n${lastView()}`);
}

// ---- PouchDB query() ----

test('PouchDB query: map-only view, whole and by key', async () => {
  const all = await pouch.query('app/by_name');
  assert.deepEqual(all, { total_rows: 10, offset: 0, rows: BY_NAME.map(nameRow) }, lastView());

  const one = await pouch.query('app/by_name', { key: 'cherry' });
  assert.deepEqual(one, { total_rows: 10, offset: 4, rows: nameRows('cherry') }, lastView());

  // No match: an empty page, the offset where the key would be.
  const none = await pouch.query('app/by_name', { key: 'banana split' });
  assert.deepEqual(none, { total_rows: 10, offset: 2, rows: [] }, lastView());
});

test('PouchDB query: startkey/endkey, inclusive_end, descending', async () => {
  const range = await pouch.query('app/by_name', { startkey: 'b', endkey: 'd' });
  assert.deepEqual(range, { total_rows: 10, offset: 1, rows: nameRows('Banana', 'barley', 'carrot', 'cherry') }, lastView());

  const inclusive = await pouch.query('app/by_name', { startkey: 'barley', endkey: 'date' });
  assert.deepEqual(inclusive.rows, nameRows('barley', 'carrot', 'cherry', 'date'), lastView());
  const exclusive = await pouch.query('app/by_name', { startkey: 'barley', endkey: 'date', inclusive_end: false });
  assert.deepEqual(exclusive.rows, nameRows('barley', 'carrot', 'cherry'), lastView());

  const desc = await pouch.query('app/by_name', { descending: true, limit: 3 });
  assert.deepEqual(desc, { total_rows: 10, offset: 0, rows: nameRows('rice', 'onion', 'oat') }, lastView());

  // Descending swaps the roles: startkey is the high end. One row (rice) comes before onion.
  const descRange = await pouch.query('app/by_name', { descending: true, startkey: 'onion', endkey: 'carrot' });
  assert.deepEqual(descRange, { total_rows: 10, offset: 1, rows: nameRows('onion', 'oat', 'Leek', 'date', 'cherry', 'carrot') }, lastView());

  // A reversed range is CouchDB's query_parse_error (PouchDB checks it only for local databases).
  const reversed = await failure(pouch.query('app/by_name', { startkey: 'd', endkey: 'b' }));
  assert.equal(reversed.status, 400, lastView());
  assert.equal(reversed.name, 'query_parse_error');
});

test('PouchDB query: limit and skip', async () => {
  const page = await pouch.query('app/by_name', { skip: 2, limit: 3 });
  assert.deepEqual(page, { total_rows: 10, offset: 2, rows: nameRows('barley', 'carrot', 'cherry') }, lastView());

  const pastEnd = await pouch.query('app/by_name', { skip: 8, limit: 5 });
  assert.deepEqual(pastEnd, { total_rows: 10, offset: 8, rows: nameRows('onion', 'rice') }, lastView());

  const descSkip = await pouch.query('app/by_name', { descending: true, skip: 1, limit: 2 });
  assert.deepEqual(descSkip, { total_rows: 10, offset: 1, rows: nameRows('onion', 'oat') }, lastView());

  const zero = await pouch.query('app/by_name', { limit: 0 });
  assert.deepEqual(zero, { total_rows: 10, offset: 0, rows: [] }, lastView());
});

test('PouchDB query: include_docs', async () => {
  const res = await pouch.query('app/by_name', { startkey: 'oat', endkey: 'onion', include_docs: true });
  const doc = (id: string) => ({ ...DOCS.find((d) => d._id === id)!, _rev: revs[id] });
  assert.deepEqual(res, {
    total_rows: 10,
    offset: 7,
    rows: [
      { id: 'g2', key: 'oat', value: 9, doc: doc('g2') },
      { id: 'v3', key: 'onion', value: 2, doc: doc('v3') },
    ],
  }, lastView());
});

test('PouchDB query: keys, short (GET ?keys=) and long (POST)', async () => {
  const short = await pouch.query('app/by_name', { keys: ['oat', 'nope', 'apple', 'oat'] });
  assert.match(lastView(), /^GET .*keys=/);
  // Rows in the order of the keys, a key repeated gives its rows again, a missing key none.
  assert.deepEqual(short.rows, nameRows('oat', 'apple', 'oat'), lastView());
  assert.equal(short.total_rows, 10);

  // Keys too long for a URL: PouchDB POSTs them.
  const filler = Array.from({ length: 120 }, (_, i) => `no such name ${String(i).padStart(4, '0')}`);
  const long = await pouch.query('app/by_name', { keys: [...filler.slice(0, 60), 'rice', ...filler.slice(60), 'Banana'], include_docs: true });
  assert.match(lastView(), /^POST .*\/_view\/by_name/);
  assert.deepEqual(long.rows.map((r: any) => [r.id, r.key, r.value, r.doc._rev]), [
    ['g3', 'rice', 10, revs['g3']],
    ['f2', 'Banana', 3, revs['f2']],
  ], lastView());
});

test('PouchDB query: _sum with reduce, group and group_level', async () => {
  const whole = await pouch.query('app/sum');
  assert.deepEqual(whole, { rows: [{ key: null, value: 55 }] }, lastView());

  const exact = await pouch.query('app/sum', { group: true });
  assert.deepEqual(exact.rows, BY_TYPE_N.map((d) => ({ key: [d.type, d.n], value: d.n })), lastView());

  const level1 = await pouch.query('app/sum', { group_level: 1 });
  assert.deepEqual(level1, { rows: [{ key: ['fruit'], value: 17 }, { key: ['grain'], value: 25 }, { key: ['veg'], value: 13 }] }, lastView());

  const level1Desc = await pouch.query('app/sum', { group_level: 1, descending: true });
  assert.deepEqual(level1Desc.rows, [{ key: ['veg'], value: 13 }, { key: ['grain'], value: 25 }, { key: ['fruit'], value: 17 }], lastView());

  // A range cuts inside a group: only its rows count.
  const ranged = await pouch.query('app/sum', { group_level: 1, startkey: ['fruit', 4], endkey: ['grain', 9] });
  assert.deepEqual(ranged.rows, [{ key: ['fruit'], value: 13 }, { key: ['grain'], value: 15 }], lastView());

  const limited = await pouch.query('app/sum', { group_level: 1, skip: 1, limit: 1 });
  assert.deepEqual(limited.rows, [{ key: ['grain'], value: 25 }], lastView());

  // group_level beyond the key's length is exact grouping.
  const deep = await pouch.query('app/sum', { group_level: 5, startkey: ['veg'], endkey: ['veg', {}] });
  assert.deepEqual(deep.rows, [{ key: ['veg', 2], value: 2 }, { key: ['veg', 4], value: 4 }, { key: ['veg', 7], value: 7 }], lastView());

  const mapOnly = await pouch.query('app/sum', { reduce: false, startkey: ['grain'], endkey: ['grain', {}] });
  assert.deepEqual(mapOnly, {
    total_rows: 10,
    offset: 4,
    rows: [
      { id: 'g1', key: ['grain', 6], value: 6 },
      { id: 'g2', key: ['grain', 9], value: 9 },
      { id: 'g3', key: ['grain', 10], value: 10 },
    ],
  }, lastView());

  // keys with group: one reduced row per key that has rows.
  const keyed = await pouch.query('app/sum', { keys: [['veg', 7], ['fruit', 5], ['fruit', 6]], group: true });
  assert.deepEqual(keyed.rows, [{ key: ['veg', 7], value: 7 }, { key: ['fruit', 5], value: 5 }], lastView());
});

test('PouchDB query: _count and _stats', async () => {
  assert.deepEqual((await pouch.query('app/count')).rows, [{ key: null, value: 10 }], lastView());
  const counts = await pouch.query('app/count', { group_level: 1 });
  assert.deepEqual(counts.rows, [{ key: ['fruit'], value: 4 }, { key: ['grain'], value: 3 }, { key: ['veg'], value: 3 }], lastView());

  const whole = await pouch.query('app/stats');
  assert.deepEqual(whole.rows, [{ key: null, value: { sum: 55, count: 10, min: 1, max: 10, sumsqr: 385 } }], lastView());
  const grouped = await pouch.query('app/stats', { group_level: 1 });
  assert.deepEqual(grouped.rows, [
    { key: ['fruit'], value: { sum: 17, count: 4, min: 1, max: 8, sumsqr: 99 } },
    { key: ['grain'], value: { sum: 25, count: 3, min: 6, max: 10, sumsqr: 217 } },
    { key: ['veg'], value: { sum: 13, count: 3, min: 2, max: 7, sumsqr: 69 } },
  ], lastView());
  const one = await pouch.query('app/stats', { key: ['veg', 7] });
  assert.deepEqual(one.rows, [{ key: null, value: { sum: 7, count: 1, min: 7, max: 7, sumsqr: 49 } }], lastView());
});

test('PouchDB query: JavaScript reduce, whole and grouped', async () => {
  const whole = await pouch.query('app/js');
  assert.deepEqual(whole, { rows: [{ key: null, value: { count: 10, total: 55, max: 10 } }] }, lastView());

  const grouped = await pouch.query('app/js', { group: true });
  assert.deepEqual(grouped.rows, [
    { key: 'fruit', value: { count: 4, total: 17, max: 8 } },
    { key: 'grain', value: { count: 3, total: 25, max: 10 } },
    { key: 'veg', value: { count: 3, total: 13, max: 7 } },
  ], lastView());

  const range = await pouch.query('app/js', { startkey: 'grain', endkey: 'veg', inclusive_end: false });
  assert.deepEqual(range.rows, [{ key: null, value: { count: 3, total: 25, max: 10 } }], lastView());

  const mapOnly = await pouch.query('app/js', { reduce: false, key: 'veg' });
  assert.deepEqual(mapOnly, {
    total_rows: 10,
    offset: 7,
    rows: [{ id: 'v1', key: 'veg', value: 4 }, { id: 'v2', key: 'veg', value: 7 }, { id: 'v3', key: 'veg', value: 2 }],
  }, lastView());
});

test('PouchDB query: errors of CouchDB shape', async () => {
  const missingView = await failure(pouch.query('app/nope'));
  assert.equal(missingView.status, 404, lastView());
  assert.equal(missingView.name, 'not_found');

  const missingDdoc = await failure(pouch.query('nope/by_name'));
  assert.equal(missingDdoc.status, 404, lastView());

  const groupOnMap = await failure(pouch.query('app/by_name', { group: true }));
  assert.equal(groupOnMap.status, 400, lastView());
  assert.equal(groupOnMap.name, 'query_parse_error');
});

// ---- nano db.view() ----

test('nano view: params (key, startkey/endkey, descending, limit, skip, include_docs)', async () => {
  const all = await couch.view('app', 'by_name');
  assert.deepEqual(all, { total_rows: 10, offset: 0, rows: BY_NAME.map(nameRow) }, lastView());

  const range = await couch.view('app', 'by_name', { startkey: 'b', endkey: 'd', skip: 1, limit: 2 });
  assert.deepEqual(range, { total_rows: 10, offset: 2, rows: nameRows('barley', 'carrot') }, lastView());

  const desc = await couch.view('app', 'by_name', { descending: true, startkey: 'd', limit: 2 });
  assert.deepEqual(desc, { total_rows: 10, offset: 5, rows: nameRows('cherry', 'carrot') }, lastView());

  const withDoc = await couch.view('app', 'by_name', { key: 'Leek', include_docs: true });
  assert.deepEqual(withDoc.rows, [{ id: 'v2', key: 'Leek', value: 7, doc: { ...DOCS[5], _rev: revs['v2'] } }], lastView());

  // Array keys in the query string: nano JSON-encodes them.
  const arrays = await couch.view('app', 'sum', { reduce: false, startkey: ['veg', 3], endkey: ['veg', 7], inclusive_end: false });
  assert.deepEqual(arrays.rows, [{ id: 'v1', key: ['veg', 4], value: 4 }], lastView());
});

test('nano view: keys go in a POST body', async () => {
  const res = await couch.view('app', 'by_name', { keys: ['rice', 'missing', 'carrot'] });
  assert.match(lastView(), /^POST .*\/_view\/by_name/);
  assert.deepEqual(res.rows, nameRows('rice', 'carrot'), lastView());
  assert.equal(res.total_rows, 10);

  // keys with other params: they stay in the query string.
  const docs = await couch.view('app', 'by_name', { keys: ['oat', 'apple'], include_docs: true, limit: 1 });
  assert.match(lastView(), /^POST .*include_docs=true/);
  assert.deepEqual(docs.rows, [{ id: 'g2', key: 'oat', value: 9, doc: { ...DOCS[8], _rev: revs['g2'] } }], lastView());

  const grouped = await couch.view('app', 'sum', { keys: [['grain', 9], ['fruit', 1], ['grain', 1]], group: true });
  assert.deepEqual(grouped.rows, [{ key: ['grain', 9], value: 9 }, { key: ['fruit', 1], value: 1 }], lastView());

  // A reduce view with several keys and no grouping is a query_parse_error.
  const err = await failure(couch.view('app', 'sum', { keys: [['grain', 9], ['fruit', 1]] }));
  assert.equal(err.statusCode, 400, lastView());
  assert.equal(err.error, 'query_parse_error');
});

test('nano view: reduces with group and group_level', async () => {
  assert.deepEqual((await couch.view('app', 'sum')).rows, [{ key: null, value: 55 }], lastView());
  assert.deepEqual((await couch.view('app', 'sum', { group_level: 1 })).rows, [
    { key: ['fruit'], value: 17 }, { key: ['grain'], value: 25 }, { key: ['veg'], value: 13 },
  ], lastView());
  assert.deepEqual((await couch.view('app', 'count', { group: true, startkey: ['veg'], endkey: ['veg', {}] })).rows, [
    { key: ['veg', 2], value: 1 }, { key: ['veg', 4], value: 1 }, { key: ['veg', 7], value: 1 },
  ], lastView());
  assert.deepEqual((await couch.view('app', 'stats', { group_level: 1, startkey: ['grain'] })).rows, [
    { key: ['grain'], value: { sum: 25, count: 3, min: 6, max: 10, sumsqr: 217 } },
    { key: ['veg'], value: { sum: 13, count: 3, min: 2, max: 7, sumsqr: 69 } },
  ], lastView());
  assert.deepEqual((await couch.view('app', 'js', { group: true, keys: ['veg', 'fruit'] })).rows, [
    { key: 'veg', value: { count: 3, total: 13, max: 7 } },
    { key: 'fruit', value: { count: 4, total: 17, max: 8 } },
  ], lastView());
});

test('the index follows edits and deletions made through the clients', async () => {
  const name = 'client-views-live';
  const created = await raw.put(`/${name}`);
  assert.equal(created.status, 201, created.text);
  const db = new PouchDB(proxy.url + name);
  const nanoDb = nano(proxy.url).use<any>(name);
  try {
    await db.bulkDocs([{ _id: 'a', tag: 'x', n: 1 }, { _id: 'b', tag: 'y', n: 2 }, { _id: 'c', tag: 'x', n: 3 }]);
    await db.put({ _id: '_design/t', views: { by_tag: { map: 'function (doc) { if (doc.tag) emit(doc.tag, doc.n); }', reduce: '_sum' } } });
    assert.deepEqual((await db.query('t/by_tag', { group: true })).rows, [{ key: 'x', value: 4 }, { key: 'y', value: 2 }], lastView());

    // An edit moves a row to another key; a new document adds one; a deletion removes one.
    const a = await db.get('a');
    await db.put({ ...a, tag: 'y', n: 10 });
    await nanoDb.insert({ _id: 'd', tag: 'z', n: 5 });
    const c = await nanoDb.get('c');
    await nanoDb.destroy('c', c._rev);
    assert.deepEqual((await db.query('t/by_tag', { group: true })).rows, [{ key: 'y', value: 12 }, { key: 'z', value: 5 }], lastView());
    const map = await nanoDb.view('t', 'by_tag', { reduce: false });
    assert.deepEqual(map, {
      total_rows: 3,
      offset: 0,
      rows: [{ id: 'a', key: 'y', value: 10 }, { id: 'b', key: 'y', value: 2 }, { id: 'd', key: 'z', value: 5 }],
    }, lastView());

    // Changing the design document's map gives a new index.
    const ddoc = await db.get('_design/t');
    await db.put({ ...ddoc, views: { by_tag: { map: 'function (doc) { if (doc.tag) emit(doc.n, null); }', reduce: '_count' } } });
    assert.deepEqual(await db.query('t/by_tag', { reduce: false }), {
      total_rows: 3,
      offset: 0,
      rows: [{ id: 'b', key: 2, value: null }, { id: 'd', key: 5, value: null }, { id: 'a', key: 10, value: null }],
    }, lastView());
    assert.deepEqual((await nanoDb.view('t', 'by_tag')).rows, [{ key: null, value: 3 }], lastView());
  } finally {
    await db.close();
  }
});
