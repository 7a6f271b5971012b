/**
 * CouchDB 3's own Mango tests, second part, ported over real HTTP: src/mango/test/ in
 * apache/couchdb (14-json-pagination-test.py, 15-execution-stats-test.py,
 * 16-index-selectors-test.py, 17-multi-type-value-test.py, 18-json-sort.py,
 * 19-find-conflicts.py, 20-no-timeout-test.py, 21-empty-selector-tests.py,
 * 22-covering-index-test.py, 23-explain-indexes-test.py, 25-beginswith-test.py, and the
 * limit/skip/bookmark checks of 08-text-limit-test.py), taking the newest text of each from their
 * Elixir ports in test/elixir/test/mango/ (which add cases, e.g. 15's keys-examined scenarios and
 * 26_id_collation_test.exs, ported here too). Fixtures are user_docs.py / UserDocs (15 users and,
 * for the JSON classes, its 10 indexes), limit_docs.py and the tests' own documents.
 *
 * One `test` per CouchDB test, named `<file>: <test>`. Classes that CouchDB sets up once share
 * one database here; classes whose setUp recreates the database for every test (14, 16, 18, 19)
 * get a fresh one per test. The requests are the originals' `MangoDatabase.find` bodies
 * (`use_index: null`, `skip: 0`, `limit: 25`, `r: 1`, `conflicts: false` unless given) and
 * `create_index` bodies (`"type": "json"`, `"w": 3`).
 *
 * Left out: everything about text (search) indexes (the Text classes of 15, 16, 21 and 23,
 * 26-test_query.py), partitioned databases (22's and 23's Partitioned classes) and 15's
 * `quorum json index` (r=3 quorum reads). 08's tests all run against a text index in CouchDB;
 * here they run over the JSON planner with an index on `age` (so the sorted bookmark walk has an
 * index). 17 runs both Python classes (with the `name` and `age, name` indexes, and without);
 * 20-no-timeout uses the Python original (index on `value`, both queries, 100000 documents).
 *
 * Where Settee answers differently from CouchDB 3 the test is kept and skipped with the reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { USER_DOCS, USER_INDEXES } from '../helpers/mango-user-docs.js';
import { elixirDbHelpers, qs } from '../helpers/couch-elixir.js';

const { c } = await serverForFile();
const { mkdb, bulkSave } = elixirDbHelpers(c, 'c3-mango-b');

type Doc = Record<string, any>;

/** The eight documents of 14-json-pagination and 16-index-selectors. */
const LOCATION_DOCS: Doc[] = [
  { _id: '100', name: 'Jimi', location: 'AUS', user_id: 1, same: 'value' },
  { _id: '200', name: 'Eddie', location: 'BRA', user_id: 2, same: 'value' },
  { _id: '300', name: 'Harry', location: 'CAN', user_id: 3, same: 'value' },
  { _id: '400', name: 'Eddie', location: 'DEN', user_id: 4, same: 'value' },
  { _id: '500', name: 'Jones', location: 'ETH', user_id: 5, same: 'value' },
  { _id: '600', name: 'Winnifried', location: 'FRA', user_id: 6, same: 'value' },
  { _id: '700', name: 'Marilyn', location: 'GHA', user_id: 7, same: 'value' },
  { _id: '800', name: 'Sandra', location: 'ZAR', user_id: 8, same: 'value' },
];

/**
 * limit_docs.py DOCS (75): document i has `user_id: i` (or `filtered_array: [1, 2, 3]` for the
 * indexes listed) and `age` 10 + i, skipping 70.
 */
const LIMIT_IDS = [
  '54af50626de419f5109c962f', '54af50622071121b25402dc3', '54af50623809e19159a3cdd0', '54af50629f45a0f49a441d01',
  '54af50620f1755c22359a362', '54af5062dd6f6c689ad2ca23', '54af50623e89b432be1187b8', '54af5062932a00270a3b5ab0',
  '54af5062df773d69174e3345', '54af50629c1153b9e21e346d', '54af5062dabb7cc4b60e0c95', '54af5062204996970a4439a2',
  '54af50629cea39e8ea52bfac', '54af50620597c094f75db2a1', '54af50628d4048de0010723c', '54af5062f339b6f44f52faf6',
  '54af5062a893f17ea4402031', '54af5062323dbc7077deb60a', '54af506224db85bd7fcd0243', '54af506255bb551c9cc251bf',
  '54af50625a97394e07d718a1', '54af506223f51d586b4ef529', '54af50622740dede7d6117b7', '54af50624efc87684a52e8fb',
  '54af5062f40932760347799c', '54af5062d9f7361951ac645d', '54af5062f89aef302b37c3bc', '54af5062498ec905dcb351f8',
  '54af5062b1d2f2c5a85bdd7e', '54af50625061029c0dd942b5', '54af50628b0d08a1d23c030a', '54af506271b6e3119eb31d46',
  '54af5062b69f46424dfcf3e5', '54af5062ed00c7dbe4d1bdcf', '54af5062fb64e45180c9a90d', '54af5062241c72b067127b09',
  '54af50626a467d8b781a6d06', '54af50620e992d60af03bf86', '54af506254f992aa3c51532f', '54af5062e99b20f301de39b9',
  '54af50624fbade6b11505b5d', '54af506278ad79b21e807ae4', '54af5062fc7a1dcb33f31d08', '54af5062ea2c954c650009cf',
  '54af506213576c2f09858266', '54af50624a05ac34c994b1c0', '54af50625a624983edf2087e', '54af50623de488c49d064355',
  '54af5062628b5df08661a9d5', '54af50620c706fc23032ae62', '54af5062509f1e2371fe1da4', '54af50625e96b22436791653',
  '54af5062a9cb71463bb9577f', '54af50624fea77a4221a4baf', '54af5062c63df0a147d2417e', '54af50623c56d78029316c9f',
  '54af5062167f6e13aa0dd014', '54af50621558abe77797d137', '54af50624d5b36aa7cb5fa77', '54af50620d79118184ae66bd',
  '54af5062d18aafa5c4ca4935', '54af5062fd22a409649962f4', '54af5062e31045a1908e89f9', '54af50624c062fcb4c59398b',
  '54af506241ec83430a15957f', '54af506224d0f888ae411101', '54af506272a971c6cf3ab6b8', '54af506221e25b485c95355b',
  '54af5062800f7f2ca73e9623', '54af5062bc962da30740534a', '54af50625102d6e210fc2efd', '54af5062e014b9d039f02c5e',
  '54af5062fbd5e801dd217515', '54af50629971992b658fcb88', '54af5062607d53416c30bafd',
];
const LIMIT_FILTERED = new Set([8, 9, 18, 19, 20, 26, 27, 29, 31, 37, 57, 61, 70, 74]);
const LIMIT_DOCS: Doc[] = LIMIT_IDS.map((_id, i) => ({
  _id,
  ...(LIMIT_FILTERED.has(i) ? { filtered_array: [1, 2, 3] } : { user_id: i }),
  age: i < 60 ? i + 10 : i + 11,
}));

// ------------------------------------------------------------------ the originals' client

interface FindOpts {
  limit?: number;
  skip?: number;
  sort?: unknown;
  fields?: unknown;
  use_index?: unknown;
  bookmark?: string;
  conflicts?: boolean;
  r?: number;
  execution_stats?: boolean;
}

/** MangoDatabase.find's body: the defaults always sent, the rest only when given. */
function findBody(selector: unknown, o: FindOpts): Doc {
  const body: Doc = {
    selector,
    use_index: o.use_index ?? null,
    skip: o.skip ?? 0,
    limit: o.limit ?? 25,
    r: o.r ?? 1,
    conflicts: o.conflicts ?? false,
  };
  for (const key of ['sort', 'fields', 'execution_stats', 'bookmark'] as const) {
    if (o[key] !== undefined) body[key] = o[key];
  }
  return body;
}

/** find(..., return_raw: true): POST _find, 200, the whole answer. */
async function findRaw(db: string, selector: unknown, o: FindOpts = {}): Promise<Doc> {
  const r = await c.post(`/${db}/_find`, findBody(selector, o));
  assert.equal(r.status, 200, `_find ${JSON.stringify(findBody(selector, o))}: ${r.status} ${r.text}`);
  return r.body;
}

/** find(...): the docs. */
async function find(db: string, selector: unknown, o: FindOpts = {}): Promise<Doc[]> {
  return (await findRaw(db, selector, o)).docs;
}

/** find(..., explain: true): POST _explain, 200. */
async function explain(db: string, selector: unknown, o: FindOpts = {}): Promise<Doc> {
  const r = await c.post(`/${db}/_explain`, findBody(selector, o));
  assert.equal(r.status, 200, `_explain ${JSON.stringify(findBody(selector, o))}: ${r.status} ${r.text}`);
  return r.body;
}

/** A find the original expects to fail: the response. */
async function findFails(db: string, selector: unknown, o: FindOpts = {}, path = '_find') {
  const r = await c.post(`/${db}/${path}`, findBody(selector, o));
  assert.notEqual(r.status, 200, `expected an error: ${r.text}`);
  return r;
}

interface IndexOpts { name?: string; ddoc?: string; partial_filter_selector?: unknown; selector?: unknown }

function indexBody(fields: unknown[], o: IndexOpts): Doc {
  const index: Doc = { fields };
  if (o.selector !== undefined) index['selector'] = o.selector;
  if (o.partial_filter_selector !== undefined) index['partial_filter_selector'] = o.partial_filter_selector;
  const body: Doc = { index, type: 'json', w: 3 };
  if (o.name !== undefined) body['name'] = o.name;
  if (o.ddoc !== undefined) body['ddoc'] = o.ddoc;
  return body;
}

/** create_index: POST _index, 200; whether it was created. */
async function createIndex(db: string, fields: unknown[], o: IndexOpts = {}): Promise<boolean> {
  const r = await c.post(`/${db}/_index`, indexBody(fields, o));
  assert.equal(r.status, 200, `_index ${JSON.stringify(indexBody(fields, o))}: ${r.status} ${r.text}`);
  assert.ok(r.body.id && r.body.name, r.text);
  return r.body.result === 'created';
}

async function listIndexes(db: string): Promise<Doc[]> {
  const r = await c.get(`/${db}/_index`);
  assert.equal(r.status, 200, r.text);
  return r.body.indexes;
}

/** A fresh database holding `docs`. */
async function dbWith(label: string, docs: Doc[]): Promise<string> {
  const db = await mkdb(label);
  if (docs.length > 0) await bulkSave(db, structuredClone(docs));
  return db;
}

/** UserDocs.setup: the users, then (index type "view") the ten indexes. */
async function userDocsDb(label: string, withIndexes: boolean): Promise<string> {
  const db = await dbWith(label, USER_DOCS);
  if (withIndexes) {
    for (const [fields, name] of USER_INDEXES) assert.equal(await createIndex(db, fields, { name, ddoc: name }), true);
  }
  return db;
}

/** A class's database, set up once by its first test. */
function once<T>(setup: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= setup());
}

const ids = (docs: Doc[]): string[] => docs.map((d) => d['_id']);
const sorted = (xs: string[]): string[] => [...xs].sort();

// ------------------------------------------------------------------ 08-text-limit (limit, skip, bookmarks)

const limitDb = once(async () => {
  const db = await dbWith('limit', LIMIT_DOCS);
  await createIndex(db, ['age']);
  return db;
});

const LIMIT_OR = (bound: number) => ({ $or: [{ user_id: { $lt: bound } }, { 'filtered_array.[]': 1 }] });

test('08-text-limit: test_limit_field', async () => {
  const docs = await find(await limitDb(), LIMIT_OR(10), { limit: 10 });
  assert.equal(docs.length, 8);
  for (const d of docs) assert.ok(d['user_id'] < 10);
});

test('08-text-limit: test_limit_field2', async () => {
  const docs = await find(await limitDb(), LIMIT_OR(20), { limit: 10 });
  assert.equal(docs.length, 10);
  for (const d of docs) assert.ok(d['user_id'] < 20);
});

test('08-text-limit: test_limit_field3', async () => {
  const docs = await find(await limitDb(), LIMIT_OR(100), { limit: 1 });
  assert.equal(docs.length, 1);
  for (const d of docs) assert.ok(d['user_id'] < 100);
});

test('08-text-limit: test_limit_field4', async () => {
  assert.equal((await find(await limitDb(), LIMIT_OR(0), { limit: 35 })).length, 0);
});

test('08-text-limit: test_limit_field5', async () => {
  const docs = await find(await limitDb(), { age: { $exists: true } }, { limit: 250 });
  assert.equal(docs.length, 75);
  for (const d of docs) assert.ok(d['age'] < 100);
});

test('08-text-limit: test_limit_skip_field1', async () => {
  const docs = await find(await limitDb(), LIMIT_OR(100), { limit: 10, skip: 20 });
  assert.equal(docs.length, 10);
  for (const d of docs) assert.ok(d['user_id'] > 20);
});

test('08-text-limit: test_limit_skip_field2', async () => {
  assert.equal((await find(await limitDb(), LIMIT_OR(100), { limit: 100, skip: 100 })).length, 0);
});

test('08-text-limit: test_limit_skip_field3', async () => {
  assert.equal((await find(await limitDb(), LIMIT_OR(20), { limit: 1, skip: 30 })).length, 0);
});

test('08-text-limit: test_limit_skip_field4', async () => {
  assert.equal((await find(await limitDb(), LIMIT_OR(100), { limit: 0, skip: 0 })).length, 0);
});

test('08-text-limit: test_limit_skip_field5', async () => {
  assert.equal((await findFails(await limitDb(), LIMIT_OR(100), { limit: -1 })).status, 400);
});

test('08-text-limit: test_limit_skip_field6', async () => {
  assert.equal((await findFails(await limitDb(), LIMIT_OR(100), { skip: -1 })).status, 400);
});

test('08-text-limit: test_limit_bookmark', async () => {
  const db = await limitDb();
  for (const withSort of [false, true]) {
    for (let size = 1; size < LIMIT_DOCS.length; size += 5) {
      const seen = new Set<string>();
      let bookmark: string | undefined;
      let age = 0;
      for (;;) {
        const page = await findRaw(db, { age: { $gt: 0 } }, { limit: size, bookmark, ...(withSort ? { sort: ['age'] } : {}) });
        for (const d of page.docs) {
          assert.ok(!seen.has(d._id), `size ${size}: ${d._id} seen twice`);
          if (withSort) {
            assert.ok(d.age >= age, `size ${size}: age ${d.age} after ${age}`);
            age = d.age;
          }
          seen.add(d._id);
        }
        if (page.docs.length === 0) break;
        assert.notEqual(page.bookmark, bookmark);
        bookmark = page.bookmark;
      }
      assert.equal(seen.size, LIMIT_DOCS.length, `size ${size}${withSort ? ', sorted' : ''}`);
    }
  }
});

// ------------------------------------------------------------------ 14-json-pagination (PaginateJsonDocs)

const paginateDb = () => dbWith('paginate', LOCATION_DOCS);
const ANY_ID = { _id: { $gt: 0 } };

test('14-json-pagination: test_all_docs_paginate_to_end', async () => {
  const db = await paginateDb();
  let resp = await findRaw(db, ANY_ID, { fields: ['_id'], limit: 5 });
  assert.equal(resp.docs[0]._id, '100');
  assert.equal(resp.docs.length, 5);
  resp = await findRaw(db, ANY_ID, { fields: ['_id'], bookmark: resp.bookmark, limit: 5 });
  assert.equal(resp.docs[0]._id, '600');
  assert.equal(resp.docs.length, 3);
  resp = await findRaw(db, ANY_ID, { bookmark: resp.bookmark, limit: 5 });
  assert.equal(resp.docs.length, 0);
});

test('14-json-pagination: test_return_previous_bookmark_for_empty', async () => {
  const db = await paginateDb();
  const first = await findRaw(db, ANY_ID, { fields: ['_id'] });
  assert.equal(first.docs.length, 8);
  const second = await findRaw(db, ANY_ID, { fields: ['_id'], bookmark: first.bookmark });
  assert.equal(second.docs.length, 0);
  const third = await findRaw(db, ANY_ID, { fields: ['_id'], bookmark: second.bookmark });
  assert.equal(third.bookmark, second.bookmark);
  assert.equal(third.docs.length, 0);
});

test('14-json-pagination: test_all_docs_with_skip', async () => {
  const db = await paginateDb();
  let resp = await findRaw(db, ANY_ID, { fields: ['_id'], skip: 2, limit: 5 });
  assert.equal(resp.docs[0]._id, '300');
  assert.equal(resp.docs.length, 5);
  resp = await findRaw(db, ANY_ID, { fields: ['_id'], bookmark: resp.bookmark, limit: 5 });
  assert.equal(resp.docs[0]._id, '800');
  assert.equal(resp.docs.length, 1);
  resp = await findRaw(db, ANY_ID, { bookmark: resp.bookmark, limit: 5 });
  assert.equal(resp.docs.length, 0);
});

test('14-json-pagination: test_all_docs_reverse', async () => {
  const db = await paginateDb();
  const sort = [{ _id: 'desc' }];
  let resp = await findRaw(db, ANY_ID, { fields: ['_id'], sort, limit: 5 });
  assert.equal(resp.docs.length, 5);
  assert.equal(resp.docs[0]._id, '800');
  resp = await findRaw(db, ANY_ID, { fields: ['_id'], sort, limit: 5, bookmark: resp.bookmark });
  assert.equal(resp.docs.length, 3);
  assert.equal(resp.docs[0]._id, '300');
  resp = await findRaw(db, ANY_ID, { fields: ['_id'], sort, limit: 5, bookmark: resp.bookmark });
  assert.equal(resp.docs.length, 0);
});

test('14-json-pagination: test_bad_bookmark', async () => {
  const r = await findFails(await paginateDb(), ANY_ID, { bookmark: 'bad-bookmark' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_bookmark');
  assert.equal(r.body.reason, 'Invalid bookmark value: "bad-bookmark"');
});

test('14-json-pagination: test_throws_error_on_text_bookmark', async () => {
  const bookmark = 'g2wAAAABaANkABFub2RlMUBjb3VjaGRiLm5ldGwAAAACYQBiP____2poAkY_8AAAAAAAAGEHag';
  const r = await findFails(await paginateDb(), ANY_ID, { bookmark });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_bookmark');
});

/** Three pages of five over `selector`: 5 docs starting at `first`, 3 starting at `second`, none. */
async function threePages(db: string, selector: unknown, first: string, second: string, sort?: unknown): Promise<void> {
  let resp = await findRaw(db, selector, { fields: ['_id'], limit: 5, sort });
  assert.equal(resp.docs.length, 5);
  assert.equal(resp.docs[0]._id, first);
  resp = await findRaw(db, selector, { fields: ['_id'], limit: 5, sort, bookmark: resp.bookmark });
  assert.equal(resp.docs.length, 3);
  assert.equal(resp.docs[0]._id, second);
  resp = await findRaw(db, selector, { fields: ['_id'], limit: 5, sort, bookmark: resp.bookmark });
  assert.equal(resp.docs.length, 0);
}

test('14-json-pagination: test_index_pagination', async () => {
  const db = await paginateDb();
  await createIndex(db, ['location']);
  await threePages(db, { location: { $gt: 'A' } }, '100', '600');
});

test('14-json-pagination: test_index_pagination_two_keys', async () => {
  const db = await paginateDb();
  await createIndex(db, ['location', 'user_id']);
  await threePages(db, { location: { $gt: 'A' }, user_id: { $gte: 1 } }, '100', '600');
});

test('14-json-pagination: test_index_pagination_reverse', async () => {
  const db = await paginateDb();
  await createIndex(db, ['location', 'user_id']);
  await threePages(db, { location: { $gt: 'A' }, user_id: { $gte: 1 } }, '800', '300', [{ location: 'desc' }, { user_id: 'desc' }]);
});

test('14-json-pagination: test_index_pagination_same_emitted_key', async () => {
  const db = await paginateDb();
  await createIndex(db, ['same']);
  await threePages(db, { same: { $gt: '' } }, '100', '600');
});

// ------------------------------------------------------------------ 15-execution-stats (ExecutionStatsTests)

const statsDb = once(() => userDocsDb('exec-stats', true));
const UNDER_35 = { age: { $lt: 35 } };

test('15-execution-stats: test_simple_json_index', async () => {
  const resp = await findRaw(await statsDb(), UNDER_35, { execution_stats: true });
  assert.equal(resp.docs.length, 3);
  assert.equal(resp.execution_stats.total_keys_examined, 3);
  assert.equal(resp.execution_stats.total_docs_examined, 3);
  assert.equal(resp.execution_stats.total_quorum_docs_examined, 0);
  assert.equal(resp.execution_stats.results_returned, 3);
  assert.ok(resp.execution_stats.execution_time_ms > 0);
});

test('15-execution-stats: test_no_execution_stats', async () => {
  const resp = await findRaw(await statsDb(), UNDER_35, { execution_stats: false });
  assert.equal('execution_stats' in resp, false);
});

test('15-execution-stats: test_results_returned_limit', async () => {
  const resp = await findRaw(await statsDb(), UNDER_35, { limit: 2, execution_stats: true });
  assert.equal(resp.execution_stats.results_returned, resp.docs.length);
});

test('15-execution-stats: test_no_matches_index_scan', async () => {
  const resp = await findRaw(await statsDb(), { age: { $lt: 35 }, nomatch: 'me' }, { execution_stats: true });
  assert.equal(resp.execution_stats.total_docs_examined, 3);
  assert.equal(resp.execution_stats.results_returned, 0);
});

test('15-execution-stats: test_covering_json_index (Elixir)', async () => {
  const resp = await findRaw(await statsDb(), UNDER_35, { fields: ['_id', 'age'], execution_stats: true });
  assert.equal(resp.docs.length, 3);
  assert.equal(resp.execution_stats.total_keys_examined, 3);
  assert.equal(resp.execution_stats.total_docs_examined, 0);
  assert.equal(resp.execution_stats.total_quorum_docs_examined, 0);
  assert.equal(resp.execution_stats.results_returned, 3);
});

const STATS_SCENARIOS: { title: string; selector: Doc; fields: string[]; limit: number; keys: number; docs: number; returned: number; skip?: string }[] = [
  { title: 'with limit', selector: { age: { $lte: 42 } }, fields: ['name', 'email', 'age'], limit: 3, keys: 4, docs: 4, returned: 3 },
  { title: 'partial matches', selector: { favorites: { $elemMatch: { $eq: 'Erlang' } } }, fields: ['name', 'email', 'twitter'], limit: 200, keys: 15, docs: 15, returned: 6 },
  { title: 'no matches, using _all_docs', selector: { foo: 'bar' }, fields: [], limit: 200, keys: 25, docs: 25, returned: 0 },
  { title: 'no matches, indexed column (no keys examined)', selector: { 'name.first': 'Lee', 'name.last': 'Jackson' }, fields: ['email', 'twitter'], limit: 200, keys: 0, docs: 0, returned: 0 },
  { title: 'no matches, indexed column', selector: { favorites: { $elemMatch: { $eq: 'Haskell' } } }, fields: ['name', 'email', 'twitter'], limit: 200, keys: 15, docs: 15, returned: 0 },
];

for (const s of STATS_SCENARIOS) {
  test(`15-execution-stats: scenario ${s.title} (Elixir)`, s.skip ? { skip: s.skip } : {}, async () => {
    const resp = await findRaw(await statsDb(), s.selector, { fields: s.fields, limit: s.limit, execution_stats: true });
    const stats = resp.execution_stats;
    assert.deepEqual(
      [stats.total_keys_examined, stats.total_docs_examined, stats.results_returned],
      [s.keys, s.docs, s.returned],
      JSON.stringify(stats),
    );
  });
}

// ------------------------------------------------------------------ 16-index-selectors (IndexSelectorJson)

const selectorsDb = () => dbWith('index-selectors', LOCATION_DOCS);
const FROM_FRA = { location: { $gte: 'FRA' } };

test('16-index-selectors: test_saves_partial_filter_selector_in_index', async () => {
  const db = await selectorsDb();
  await createIndex(db, ['location'], { partial_filter_selector: FROM_FRA });
  assert.deepEqual((await listIndexes(db))[1]!['def'].partial_filter_selector, FROM_FRA);
});

test('16-index-selectors: test_partial_filter_only_in_return_if_not_default', async () => {
  const db = await selectorsDb();
  await createIndex(db, ['location']);
  assert.equal('partial_filter_selector' in (await listIndexes(db))[1]!['def'], false);
});

test('16-index-selectors: test_saves_selector_in_index_throws', async () => {
  const db = await selectorsDb();
  const r = await c.post(`/${db}/_index`, indexBody(['location'], { selector: FROM_FRA }));
  assert.equal(r.status, 400, r.text);
});

async function selectedIndex(db: string): Promise<void> {
  await createIndex(db, ['location'], { partial_filter_selector: FROM_FRA, ddoc: 'Selected', name: 'Selected' });
}

test('16-index-selectors: test_uses_partial_index_for_query_selector', async () => {
  const db = await selectorsDb();
  await selectedIndex(db);
  assert.equal((await explain(db, FROM_FRA, { use_index: 'Selected' })).index.name, 'Selected');
  assert.equal((await find(db, FROM_FRA, { use_index: 'Selected' })).length, 3);
});

test('16-index-selectors: test_uses_partial_index_with_different_selector', async () => {
  const db = await selectorsDb();
  await selectedIndex(db);
  const fromA = { location: { $gte: 'A' } };
  assert.equal((await explain(db, fromA, { use_index: 'Selected' })).index.name, 'Selected');
  assert.equal((await find(db, fromA, { use_index: 'Selected' })).length, 3);
});

test('16-index-selectors: test_doesnot_use_selector_when_not_specified', async () => {
  const db = await selectorsDb();
  await selectedIndex(db);
  assert.equal((await explain(db, FROM_FRA)).index.name, '_all_docs');
});

test('16-index-selectors: test_doesnot_use_selector_when_not_specified_with_index', async () => {
  const db = await selectorsDb();
  await selectedIndex(db);
  await createIndex(db, ['location'], { name: 'NotSelected' });
  assert.equal((await explain(db, FROM_FRA)).index.name, 'NotSelected');
});

test('16-index-selectors: test_old_selector_with_no_selector_still_supported', async () => {
  const db = await selectorsDb();
  await bulkSave(db, [{
    _id: '_design/oldschoolnoselector',
    language: 'query',
    views: { oldschoolnoselector: { map: { fields: { location: 'asc' } }, reduce: '_count', options: { def: { fields: ['location'] } } } },
  }]);
  assert.equal((await explain(db, FROM_FRA, { use_index: 'oldschoolnoselector' })).index.name, 'oldschoolnoselector');
  assert.equal((await find(db, FROM_FRA, { use_index: 'oldschoolnoselector' })).length, 3);
});

test('16-index-selectors: test_old_selector_still_supported', async () => {
  const db = await selectorsDb();
  await bulkSave(db, [{
    _id: '_design/oldschool',
    language: 'query',
    views: { oldschool: { map: { fields: { location: 'asc' }, selector: FROM_FRA }, reduce: '_count', options: { def: { fields: ['location'] } } } },
  }]);
  assert.equal((await explain(db, FROM_FRA, { use_index: 'oldschool' })).index.name, 'oldschool');
  assert.equal((await find(db, FROM_FRA, { use_index: 'oldschool' })).length, 3);
});

test('16-index-selectors: test_uses_partial_index_with_non_indexable_selector (Elixir)', async () => {
  const db = await selectorsDb();
  await selectedIndex(db);
  const exists = { location: { $exists: true } };
  assert.equal((await explain(db, exists, { use_index: 'Selected' })).index.name, 'Selected');
  assert.equal((await find(db, exists, { use_index: 'Selected' })).length, 3);
});

// ------------------------------------------------------------------ 17-multi-type-value

const MULTI_DOCS: Doc[] = [
  { _id: '1', name: 'Jimi', age: 10 },
  { _id: '2', name: { forename: 'Eddie' }, age: 20 },
  { _id: '3', name: null, age: 30 },
  { _id: '4', name: 1, age: 40 },
  { _id: '5', forename: 'Sam', age: 50 },
];
const MULTI_NAMES = [1, 'Jimi', { forename: 'Eddie' }];

const multiClasses: [string, () => Promise<string>][] = [
  ['MultiValueFieldJSONTests', once(async () => {
    const db = await mkdb('multi-json');
    await createIndex(db, ['name']);
    await createIndex(db, ['age', 'name']);
    await bulkSave(db, structuredClone(MULTI_DOCS));
    return db;
  })],
  ['MultiValueFieldAllDocsTests', once(() => dbWith('multi-alldocs', MULTI_DOCS))],
];

for (const [klass, multiDb] of multiClasses) {
  test(`17-multi-type-value: ${klass}.test_can_query_with_name`, async () => {
    const docs = await find(await multiDb(), { name: { $exists: true } });
    assert.equal(docs.length, 4);
    for (const d of docs) assert.ok('name' in d);
  });

  test(`17-multi-type-value: ${klass}.test_can_query_with_name_subfield`, async () => {
    const docs = await find(await multiDb(), { 'name.forename': { $exists: true } });
    assert.equal(docs.length, 1);
    assert.equal(docs[0]!['_id'], '2');
  });

  test(`17-multi-type-value: ${klass}.test_can_query_with_name_range`, async () => {
    const docs = await find(await multiDb(), { name: { $gte: 0 } });
    assert.equal(docs.length, 3);
    for (const d of docs) assert.ok(MULTI_NAMES.some((n) => JSON.stringify(n) === JSON.stringify(d['name'])), JSON.stringify(d));
  });

  test(`17-multi-type-value: ${klass}.test_can_query_with_age_and_name_range`, async () => {
    const docs = await find(await multiDb(), { age: { $gte: 0, $lt: 40 }, name: { $gte: 0 } });
    assert.equal(docs.length, 2);
    for (const d of docs) assert.ok(MULTI_NAMES.some((n) => JSON.stringify(n) === JSON.stringify(d['name'])), JSON.stringify(d));
  });
}

// ------------------------------------------------------------------ 18-json-sort (JSONIndexSortOptimisations)

const SORT_DOCS: Doc[] = [
  { _id: '1', name: 'Jimi', age: 10, cars: 1 },
  { _id: '2', name: 'Eddie', age: 20, cars: 1 },
  { _id: '3', name: 'Jane', age: 30, cars: 2 },
  { _id: '4', name: 'Mary', age: 40, cars: 2 },
  { _id: '5', name: 'Sam', age: 50, cars: 3 },
];

/** A fresh database of SORT_DOCS with the index `cars-age` or `cars-age-name`. */
async function sortDb(three: boolean): Promise<string> {
  const db = await dbWith('json-sort', SORT_DOCS);
  if (three) await createIndex(db, ['cars', 'age', 'name'], { name: 'cars-age-name' });
  else await createIndex(db, ['cars', 'age'], { name: 'cars-age' });
  return db;
}

async function expectNoUsableIndex(db: string, selector: unknown, sort: unknown): Promise<void> {
  const r = await findFails(db, selector, { sort });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'no_usable_index');
}

test('18-json-sort: test_works_for_basic_case', async () => {
  const ex = await explain(await sortDb(false), { cars: '2', age: { $gt: 10 } }, { sort: ['age'] });
  assert.equal(ex.index.name, 'cars-age');
  assert.equal(ex.mrargs.direction, 'fwd');
});

test('18-json-sort: test_works_for_all_fields_specified', async () => {
  const ex = await explain(await sortDb(false), { cars: '2', age: { $gt: 10 } }, { sort: ['cars', 'age'] });
  assert.equal(ex.index.name, 'cars-age');
});

test('18-json-sort: test_works_for_no_sort_fields_specified', async () => {
  const ex = await explain(await sortDb(false), { cars: { $gt: 10 }, age: { $gt: 10 } });
  assert.equal(ex.index.name, 'cars-age');
});

test('18-json-sort: test_works_for_opp_dir_sort', async () => {
  const ex = await explain(await sortDb(false), { cars: '2', age: { $gt: 10 } }, { sort: [{ age: 'desc' }] });
  assert.equal(ex.index.name, 'cars-age');
  assert.equal(ex.mrargs.direction, 'rev');
});

test('18-json-sort: test_not_work_for_non_constant_field', async () => {
  await expectNoUsableIndex(await sortDb(false), { cars: { $gt: 10 }, age: { $gt: 10 } }, ['age']);
});

test('18-json-sort: test_three_index_one', async () => {
  const ex = await explain(await sortDb(true), { cars: '2', age: 10, name: { $gt: 'AA' } }, { sort: ['name'] });
  assert.equal(ex.index.name, 'cars-age-name');
});

test('18-json-sort: test_three_index_two', async () => {
  const ex = await explain(await sortDb(true), { cars: '2', name: 'Eddie', age: { $gt: 10 } }, { sort: ['age'] });
  assert.equal(ex.index.name, 'cars-age-name');
});

test('18-json-sort: test_three_index_fails', async () => {
  await expectNoUsableIndex(await sortDb(true), { name: 'Eddie', age: { $gt: 1 }, cars: { $gt: '1' } }, ['name']);
});

test('18-json-sort: test_empty_sort', async () => {
  const ex = await explain(await sortDb(true), { name: { $gt: 'Eddie' }, age: 10, cars: { $gt: '1' } });
  assert.equal(ex.index.name, 'cars-age-name');
});

test('18-json-sort: test_in_between', async () => {
  const db = await sortDb(true);
  const selector = { name: 'Eddie', age: 10, cars: { $gt: '1' } };
  assert.equal((await explain(db, selector)).index.name, 'cars-age-name');
  await expectNoUsableIndex(db, selector, ['cars', 'name']);
});

test('18-json-sort: test_ignore_after_set_sort_value', async () => {
  const ex = await explain(await sortDb(true), { age: { $gt: 10 }, cars: 2, name: { $gt: 'A' } }, { sort: ['age'] });
  assert.equal(ex.index.name, 'cars-age-name');
});

test('18-json-sort: test_not_use_index_if_other_fields_in_sort', async () => {
  await expectNoUsableIndex(await sortDb(false), { age: 10, cars: { $gt: '1' } }, ['cars', 'name']);
});

// ------------------------------------------------------------------ 19-find-conflicts

test('19-find-conflicts: test_retrieve_conflicts', async () => {
  const db = await dbWith('find-conflicts', [{ _id: 'doc', a: 2 }]);
  const conflicted = await c.post(`/${db}/_bulk_docs`, { docs: [{ _id: 'doc', _rev: '1-23202479633c2b380f79507a776743d5', a: 1 }], new_edits: false });
  assert.equal(conflicted.status, 201, conflicted.text);
  await createIndex(db, ['_conflicts']);
  const result = await find(db, { _conflicts: { $exists: true } }, { conflicts: true });
  assert.deepEqual(result[0]!['_conflicts'], ['1-23202479633c2b380f79507a776743d5']);
  assert.equal(result[0]!['_rev'], '1-3975759ccff3842adf690a5c10caee42');
});

// ------------------------------------------------------------------ 20-no-timeout (LongRunningMangoTest)

test('20-no-timeout: test_query_does_not_time_out', async () => {
  const db = await mkdb('no-timeout');
  await createIndex(db, ['value']);
  const total = 100000;
  for (let start = 0; start < total; start += 10000) {
    const docs = Array.from({ length: 10000 }, (_, i) => ({ _id: String(start + i), another: 'field', value: start + i }));
    await bulkSave(db, docs);
  }
  // over _all_docs
  assert.equal((await find(db, { _id: { $gt: 0 }, another: 'wrong' })).length, 0);
  // over the index
  assert.equal((await find(db, { value: { $gt: 0 }, another: 'wrong' })).length, 0);
});

// ------------------------------------------------------------------ 21-empty-selector

const emptySelectorClasses: [string, 'special' | 'json', () => Promise<string>][] = [
  ['EmptySelectorNoIndexTests', 'special', once(() => userDocsDb('empty-selector-noindex', false))],
  ['EmptySelectorUserDocTests', 'json', once(() => userDocsDb('empty-selector', true))],
];

for (const [klass, indexType, emptyDb] of emptySelectorClasses) {
  const name = (t: string) => `21-empty-selector: ${klass}.${t}`;
  /** The plan's index type, then the number of answers. */
  const check = async (selector: Doc, count: number) => {
    const db = await emptyDb();
    assert.equal((await explain(db, selector)).index.type, indexType);
    assert.equal((await find(db, selector)).length, count);
  };

  test(name('test_empty'), async () => {
    assert.equal((await explain(await emptyDb(), {})).index.type, 'special');
  });
  test(name('test_empty_array_or'), () => check({ $or: [] }, 0));
  test(name('test_empty_array_or_with_age'), () => check({ age: 22, $or: [] }, 1));
  test(name('test_empty_array_in_with_age'), () => check({ age: 22, company: { $in: [] } }, 0));
  test(name('test_empty_array_and_with_age'), () => check({ age: 22, $and: [] }, 1));
  test(name('test_empty_array_all_age'), () => check({ age: 22, company: { $all: [] } }, 0));
  test(name('test_empty_array_nested_all_with_age'), () => check({ age: 22, $and: [{ company: { $all: [] } }] }, 0));
  test(name('test_empty_arrays_complex'), () => check({ $or: [], a: { $in: [] } }, 0));
  test(name('test_empty_nin'), () => check({ favorites: { $nin: [] } }, USER_DOCS.length));
}

// ------------------------------------------------------------------ 22-covering-index (RegularCoveringIndexTests)

const coveringDb = once(() => userDocsDb('regular-covering-index', true));

async function isCovered(selector: Doc, fields: string[], index: string, useIndex?: string): Promise<void> {
  const ex = await explain(await coveringDb(), selector, { fields, use_index: useIndex });
  assert.equal(ex.index.type, 'json');
  assert.equal(ex.index.name, index);
  assert.equal(ex.mrargs.include_docs, false);
  assert.equal(ex.covering, true);
}

async function isNotCovered(selector: Doc, fields: string[], useIndex?: string): Promise<void> {
  const ex = await explain(await coveringDb(), selector, { fields, use_index: useIndex });
  assert.equal(ex.mrargs.include_docs, true);
  assert.equal(ex.covering, false);
}

test('22-covering-index: test_index_covers_query_1field_index_id', () => isCovered({ age: { $gte: 32 } }, ['_id'], 'age'));

test('22-covering-index: test_index_covers_query_2field_index_id', () =>
  isCovered({ company: 'Lyria', manager: true }, ['_id'], 'company_and_manager'));

test('22-covering-index: test_index_covers_query_2field_index_extract_field', () =>
  isCovered({ company: { $exists: true }, manager: true }, ['company'], 'company_and_manager'));

test('22-covering-index: test_index_covers_query_2field_index_extract_field_force_index', () =>
  isCovered({ company: { $exists: true }, manager: true }, ['company'], 'company_and_manager', 'company_and_manager'));

test('22-covering-index: test_index_covers_query_elemMatch', () =>
  isCovered({ favorites: { $elemMatch: { $eq: 'Erlang' } } }, ['favorites'], 'favorites'));

test('22-covering-index: test_index_covers_query_composite_field_id', () =>
  isCovered({ name: { first: 'Stephanie', last: 'Kirkland' } }, ['_id'], 'name'));

test('22-covering-index: test_index_does_not_cover_query_empty_selector', () => isNotCovered({}, ['_id']));

test('22-covering-index: test_index_does_not_cover_query_field_not_in_index', () => isNotCovered({ age: { $gte: 32 } }, ['name']));

test('22-covering-index: test_index_does_not_cover_query_all_fields', () => isNotCovered({ age: { $gte: 32 } }, []));

test('22-covering-index: test_index_does_not_cover_query_partial_selector_id', () => isNotCovered({ 'location.state': 'Nevada' }, ['_id']));

test('22-covering-index: test_index_does_not_cover_query_partial_selector', () => isNotCovered({ 'name.last': 'Hernandez' }, ['name.first']));

test('22-covering-index: test_index_does_not_cover_selector_with_more_fields', () =>
  isNotCovered({
    $and: [
      { age: { $ne: 23 } },
      { twitter: { $not: { $regex: '^@.*[0-9]+$' } } },
      { 'location.address.number': { $gt: 4288 } },
      { 'location.city': { $ne: 'Pico Rivera' } },
    ],
  }, ['twitter'], 'twitter'));

test('22-covering-index: test_covering_index_provides_correct_answer_2field_index', async () => {
  const docs = await find(await coveringDb(), { company: { $exists: true }, manager: true }, {
    sort: [{ company: 'asc' }], fields: ['company'], use_index: 'company_and_manager',
  });
  assert.deepEqual(docs, ['Affluex', 'Globoil', 'Lyria', 'Manglo', 'Myopium', 'Niquent', 'Oulu', 'Prosely', 'Tasmania', 'Zialactic'].map((company) => ({ company })));
});

test('22-covering-index: test_covering_index_provides_correct_answer_id', async () => {
  const docs = await find(await coveringDb(), { age: { $gte: 32 } }, { fields: ['_id'] });
  assert.deepEqual(docs, [
    '659d0430-b1f4-413a-a6b7-9ea1ef071325', '48ca0455-8bd0-473f-9ae2-459e42e3edd1', 'e900001d-bc48-48a6-9b1a-ac9a1f5d1a03',
    'b31dad3f-ae8b-4f86-8327-dfe8770beb27', '71562648-6acb-42bc-a182-df6b1f005b09', 'c78c529f-0b07-4947-90a6-d6b7ca81da62',
    '8e1c90c0-ac18-4832-8081-40d14325bde0', '6c0afcf1-e57e-421d-a03d-0c0717ebf843', '5b61abc1-a3d3-4092-b9d7-ced90e675536',
    'a33d5457-741a-4dce-a217-3eab28b24e3e', 'b06aadcf-cd0f-4ca6-9f7e-2c993e48d4c4', 'b1e70402-8add-4068-af8f-b4f3d0feb049',
    '0461444c-e60a-457d-a4bb-b8d811853f21',
  ].map((_id) => ({ _id })));
});

// ------------------------------------------------------------------ 23-explain-indexes

const explainJsonDb = once(() => userDocsDb('explain-indexes', true));
const explainNoIndexDb = once(() => userDocsDb('explain-indexes-noindex', false));

/** A JSON index of the user docs as an index candidate that does not cover the fields. */
function mismatched(name: string): Doc {
  const fields = USER_INDEXES.find(([, n]) => n === name)![0];
  return {
    index: { ddoc: `_design/${name}`, name, type: 'json', partitioned: false, def: { fields: fields.map((f) => ({ [f]: 'asc' })) } },
    analysis: { usable: false, reasons: [{ name: 'field_mismatch' }], ranking: 2, covering: false },
  };
}

const ALL_DOCS_CANDIDATE = (usable: boolean, reason: string): Doc => ({
  index: { ddoc: null, name: '_all_docs', type: 'special', def: { fields: [{ _id: 'asc' }] } },
  analysis: { usable, reasons: [{ name: reason }], ranking: 1, covering: null },
});

test('23-explain-indexes: ExplainIndexJSONTests.test_basic (index_candidates)', async () => {
  const ex = await explain(await explainJsonDb(), { age: 23 });
  assert.deepEqual(ex.index_candidates, [
    ...['user_id', 'twitter', 'ordered', 'name', 'manager', 'location', 'favorites_3', 'favorites', 'company_and_manager'].map(mismatched),
    ALL_DOCS_CANDIDATE(true, 'unfavored_type'),
  ]);
});

test('23-explain-indexes: ExplainIndexJSONTests.test_basic (selector_hints)', async () => {
  const ex = await explain(await explainJsonDb(), { age: 23 });
  assert.deepEqual(ex.selector_hints?.[0], { type: 'json', indexable_fields: ['age'], unindexable_fields: [] });
});

test('23-explain-indexes: ExplainIndexTestsNoIndexes.test_basic', async () => {
  const ex = await explain(await explainNoIndexDb(), { age: 23 });
  assert.deepEqual(ex.index_candidates, []);
  assert.notEqual(ex.index, null);
  assert.equal(ex.partitioned, false);
});

test('23-explain-indexes: ExplainIndexTestsNoIndexes.test_no_usable_index', async () => {
  const ex = await explain(await explainNoIndexDb(), { age: 23 }, { sort: ['company'] });
  assert.deepEqual(ex.index_candidates, [ALL_DOCS_CANDIDATE(false, 'field_mismatch')]);
  assert.equal(ex.index, null);
  assert.equal(ex.partitioned, false);
});

// ------------------------------------------------------------------ 25-beginswith (BeginsWithOperator)

const beginsWithDb = once(async () => {
  const db = await dbWith('begins-with', [
    { _id: 'aaa', name: 'Jimi', location: 'AUS', age: 27 },
    { _id: 'abc', name: 'Eddie', location: 'AND', age: 65 },
    { _id: 'bbb', name: 'Harry', location: 'CAN', age: 21 },
    { _id: 'ccc', name: 'Eddie', location: 'DEN', age: 37 },
    { _id: 'ddd', name: 'Jones', location: 'ETH', age: 49 },
  ]);
  await createIndex(db, ['location']);
  await createIndex(db, ['name', 'location']);
  return db;
});

const mrargs = async (selector: Doc, sort?: unknown): Promise<Doc> => (await explain(await beginsWithDb(), selector, { sort })).mrargs;
const MAX_CHAR = '\uffff';

test('25-beginswith: test_basic', async () => {
  assert.deepEqual(sorted(ids(await find(await beginsWithDb(), { location: { $beginsWith: 'A' } }))), ['aaa', 'abc']);
});

test('25-beginswith: test_json_range', async () => {
  const args = await mrargs({ location: { $beginsWith: 'A' } });
  assert.deepEqual(args.start_key, ['A']);
  assert.deepEqual(args.end_key, [`A${MAX_CHAR}`, '<MAX>']);
});

test('25-beginswith: test_compound_key', async () => {
  const selector = { name: 'Eddie', location: { $beginsWith: 'A' } };
  const args = await mrargs(selector);
  assert.deepEqual(args.start_key, ['Eddie', 'A']);
  assert.deepEqual(args.end_key, ['Eddie', `A${MAX_CHAR}`, '<MAX>']);
  assert.deepEqual(ids(await find(await beginsWithDb(), selector)), ['abc']);
});

test('25-beginswith: test_sort', async () => {
  const selector = { location: { $beginsWith: 'A' } };
  const cases = [
    { sort: ['location'], start: ['A'], end: [`A${MAX_CHAR}`, '<MAX>'], direction: 'fwd' },
    { sort: [{ location: 'desc' }], start: [`A${MAX_CHAR}`, '<MAX>'], end: ['A'], direction: 'rev' },
  ];
  for (const k of cases) {
    const args = await mrargs(selector, k.sort);
    assert.deepEqual([args.start_key, args.end_key, args.direction], [k.start, k.end, k.direction], JSON.stringify(k.sort));
  }
});

test('25-beginswith: test_all_docs_range', async () => {
  const args = await mrargs({ _id: { $beginsWith: 'a' } });
  assert.equal(args.start_key, 'a');
  assert.equal(args.end_key, `a${MAX_CHAR}`);
});

test('25-beginswith: test_no_index', async () => {
  const ex = await explain(await beginsWithDb(), { foo: { $beginsWith: 'a' } });
  assert.equal(ex.index.type, 'special');
  assert.equal(ex.mrargs.start_key, null);
  assert.equal(ex.mrargs.end_key, '<MAX>');
});

test('25-beginswith: test_invalid_operand', async () => {
  const r = await findFails(await beginsWithDb(), { _id: { $beginsWith: true } });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_operator');
});

test('25-beginswith: test_does_not_match_non_string_value', async () => {
  assert.equal((await find(await beginsWithDb(), { age: { $beginsWith: 'a' } })).length, 0);
});

test('25-beginswith: test_no_matches', async () => {
  assert.equal((await find(await beginsWithDb(), { name: { $beginsWith: 'Z' } })).length, 0);
});

test('25-beginswith: test_case_sensitivity', async () => {
  assert.equal((await find(await beginsWithDb(), { name: { $beginsWith: 'j' } })).length, 0);
  assert.equal((await find(await beginsWithDb(), { name: { $beginsWith: 'J' } })).length, 2);
});

// ------------------------------------------------------------------ 26-id-collation (IdCollationTest, Elixir only)

/** Byte order; ICU collation would give a1, B0, b9, m5, Z1, zed. */
const COLLATION_IDS = ['B0', 'Z1', 'a1', 'b9', 'm5', 'zed'];
const collationDb = once(() => dbWith('id-collation', COLLATION_IDS.map((_id) => ({ _id, a: { _id } }))));

const findIds = async (selector: Doc): Promise<string[]> => ids(await find(await collationDb(), selector, { fields: ['_id'] }));

async function allDocsIds(params: Record<string, string | number | boolean>): Promise<string[]> {
  const r = await c.get(`/${await collationDb()}/_all_docs${qs(params)}`);
  assert.equal(r.status, 200, r.text);
  return r.body.rows.map((row: Doc) => row['id']);
}

test('26-id-collation: _id range find is the same as _all_docs', async () => {
  assert.equal((await explain(await collationDb(), { _id: { $gte: 'Z' } })).index.name, '_all_docs');
  const gteZ = await findIds({ _id: { $gte: 'Z' } });
  assert.deepEqual(gteZ, await allDocsIds({ startkey: '"Z"' }));
  assert.deepEqual(gteZ, ['Z1', 'a1', 'b9', 'm5', 'zed']);
  const ltA = await findIds({ _id: { $lt: 'a' } });
  assert.deepEqual(ltA, await allDocsIds({ endkey: '"a"', inclusive_end: false }));
  assert.deepEqual(ltA, ['B0', 'Z1']);
  assert.deepEqual(await findIds({ _id: { $gt: 'B0', $lte: 'b9' } }), ['Z1', 'a1', 'b9']);
});

test('26-id-collation: _id range in _changes selector', async () => {
  const r = await c.post(`/${await collationDb()}/_changes?filter=_selector`, { selector: { _id: { $gte: 'Z' } } });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(sorted(r.body.results.map((row: Doc) => row['id'])), ['Z1', 'a1', 'b9', 'm5', 'zed']);
});

test('26-id-collation: icu collation for nested _id fields', async () => {
  assert.deepEqual(await findIds({ 'a._id': { $gte: 'Z' } }), ['Z1', 'zed']);
});
