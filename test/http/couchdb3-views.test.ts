/**
 * CouchDB 3.x's Elixir integration tests for views and reductions (test/elixir/test/
 * view_collation_test.exs, view_collation_raw_test.exs, view_multi_key_design_test.exs,
 * view_offsets_test.exs, view_pagination_test.exs, view_include_docs_test.exs,
 * view_update_seq_test.exs, reduce_test.exs, reduce_builtin_test.exs, reduce_false_test.exs,
 * view_conflicts_test.exs and view_sandboxing_test.exs, the 3.x-line copies tagged
 * `kind: :single_node`), ported one test per `test` block over real HTTP.
 *
 * The helpers follow the 3.x line's Couch.DBTest: `query` puts the map in a fresh design
 * document `_design/temp_…`, reads its view (200) and drops the document without a revision,
 * ignoring the answer; `view` GETs a view, or POSTs `{"keys": …}` when given keys, and expects
 * 200 or 201. Modules that share one database (setup_all) build a fresh one with the same setup
 * in every test here. The Elixir client's `query:` options are sent as `name=value` with the
 * value URL-encoded as given (JSON text where the Elixir test wrote JSON text, a bare
 * `true`/`21`/`null` where it wrote an Elixir atom or number). Sequences are numbers on one node.
 * Where CouchDB 3 departs from CouchDB 1.6 (runtime code evaluation in map functions), the test
 * expects 1.6's answer, which Settee gives, and says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { elixirDbHelpers, makeDocs, qs } from '../helpers/couch-elixir.js';

const { c } = await serverForFile();
/** random_db_name() + create_db (`freshDb`), and the originals' delete_db, create_doc and bulk_save. */
const { mkdb: freshDb, deleteDb, createDoc, bulkSave } = elixirDbHelpers(c, 'c3-views');

type Params = Record<string, string | number | boolean | null>;

/** save: PUT /db/{_id}, 201 or 202 with ok; the document with its new _rev. */
async function save(db: string, doc: Record<string, any>): Promise<Record<string, any>> {
  const r = await c.put(`/${db}/${doc._id}`, doc);
  assert.ok(r.status === 201 || r.status === 202, `save: ${r.status} ${r.text}`);
  assert.ok(r.body.ok);
  return { ...doc, _rev: r.body.rev };
}

/** info: GET /db, 200. */
async function info(db: string): Promise<any> {
  const r = await c.get(`/${db}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** view: GET the view, or POST {"keys": …} when keys are given; 200 or 201. */
async function view(db: string, viewName: string, options?: Params | null, keys?: unknown[]) {
  const [root, name] = viewName.split('/');
  const path = `/${db}/_design/${root}/_view/${name}${qs(options)}`;
  const r = keys === undefined ? await c.get(path) : await c.post(path, { keys });
  assert.ok(r.status === 200 || r.status === 201, `view ${path}: ${r.status} ${r.text}`);
  return r;
}

let ddocCount = 0;
/**
 * query: the map (and reduce) in a fresh `_design/temp_…` (PUT 201/202), its view read (200),
 * the design document then deleted without a revision, the answer ignored. `options.options`
 * becomes the view's options; `keys` is sent as the `keys` parameter.
 */
async function query(db: string, mapFun: string, reduceFun?: string | null, options?: Record<string, any> | null, keys?: unknown[]): Promise<any> {
  const viewDef: Record<string, unknown> = { map: `${mapFun} /* avoid race cond ${Date.now()} */` };
  if (reduceFun != null) viewDef.reduce = reduceFun;
  let requestOptions: Params | null = options ?? null;
  if (options && 'options' in options) {
    viewDef.options = options.options;
    const { options: _dropped, ...rest } = options;
    requestOptions = rest;
  }
  // The original names it _design/temp_<ms>; a counter keeps names unique within one millisecond.
  const ddocName = `_design/temp_${Date.now()}_${++ddocCount}`;
  const ddoc = { _id: ddocName, language: 'javascript', views: { view: viewDef } };
  if (keys !== undefined) requestOptions = { ...(requestOptions ?? {}), keys: JSON.stringify(keys) };
  let r = await c.put(`/${db}/${ddocName}`, ddoc);
  assert.ok(r.status === 201 || r.status === 202, `query ddoc: ${r.status} ${r.text}`);
  r = await c.get(`/${db}/${ddocName}/_view/view${qs(requestOptions)}`);
  assert.equal(r.status, 200, `query view: ${r.status} ${r.text}`);
  await c.del(`/${db}/${ddocName}`);
  return r.body;
}

/** replicate: POST /_replicate {source, target}, a success status. */
async function replicate(source: string, target: string) {
  const r = await c.post('/_replicate', { source, target });
  assert.ok(r.status >= 200 && r.status < 300, `replicate: ${r.status} ${r.text}`);
  return r.body;
}

/** retry_until around assertions: retries while they fail, rethrows the last failure at the deadline. */
async function retryUntil(body: () => Promise<unknown>, timeoutMs = 30000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      const result = await body();
      if (result !== false && result !== undefined && result !== null) return;
      if (Date.now() > until) assert.fail('retry_until: timed out');
    } catch (e) {
      if (!(e instanceof assert.AssertionError) || Date.now() > until) throw e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const summate = (n: number) => ((n + 1) * n) / 2;
const keysOf = (rows: { key: unknown }[]) => rows.map((r) => r.key);

// ---------------------------------------------------------------------------------------------
// view_collation_test.exs

/** @values as the JSON text jiffy encodes them (3.0 stays "3.0"). */
const collationValues = [
  // Special values sort before all other types
  'null', 'false', 'true',
  // Then numbers
  '1', '2', '3.0', '4',
  // Then text, case sensitive
  '"a"', '"A"', '"aa"', '"b"', '"B"', '"ba"', '"bb"',
  // Then arrays, compared element by element until different.
  // Longer arrays sort after their prefixes
  '["a"]', '["b"]', '["b","c"]', '["b","c","a"]', '["b","d"]', '["b","d","e"]',
  // Then objects, compared each key value in the list until different.
  // Larger objects sort after their subset objects
  '{"a":1}', '{"a":2}', '{"b":1}', '{"b":2}',
  // Member order does matter for collation
  '{"b":2,"a":1}', '{"b":2,"c":2}',
];

/** setup_all: docs {_id: "1".., foo: value} and _design/foo with view foo. */
async function collationDb(): Promise<string> {
  const db = await freshDb('collation');
  const docs = collationValues.map((v, i) => ({ _id: String(i + 1), foo: JSON.parse(v) }));
  const r = await c.post(`/${db}/_bulk_docs`, { docs });
  for (const row of r.body) assert.ok(row.ok, JSON.stringify(row));
  const mapFun = 'function(doc) { emit(doc.foo, null); }';
  const put = await c.put(`/${db}/_design/foo`, { views: { foo: { map: mapFun } } });
  assert.ok(put.body.ok, put.text);
  return db;
}
const collationUrl = (db: string) => `/${db}/_design/foo/_view/foo`;

test('view_collation: ascending collation order', async () => {
  const db = await collationDb();
  const resp = await c.get(collationUrl(db));
  const rows = resp.body.rows as any[];
  rows.slice(0, collationValues.length).forEach((row, i) => assert.deepEqual(row.key, JSON.parse(collationValues[i]!)));
});

test('view_collation: descending collation order', async () => {
  const db = await collationDb();
  const resp = await c.get(`${collationUrl(db)}${qs({ descending: 'true' })}`);
  const reversed = [...collationValues].reverse();
  const rows = resp.body.rows as any[];
  rows.slice(0, reversed.length).forEach((row, i) => assert.deepEqual(row.key, JSON.parse(reversed[i]!)));
});

test('view_collation: key query option', async () => {
  const db = await collationDb();
  for (const value of collationValues) {
    const resp = await c.get(`${collationUrl(db)}${qs({ key: value })}`);
    assert.equal(resp.body.rows.length, 1, `key=${value}: ${resp.text}`);
    assert.deepEqual(resp.body.rows[0].key, JSON.parse(value));
  }
});

test('view_collation: inclusive_end=true', async () => {
  const db = await collationDb();
  let q: Params = { endkey: '"b"', inclusive_end: true };
  let resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'b');

  q = { ...q, descending: true };
  resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'b');
});

test('view_collation: inclusive_end=false', async () => {
  const db = await collationDb();
  let q: Params = { endkey: '"b"', inclusive_end: false };
  let resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'aa');

  q = { ...q, descending: true };
  resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'B');

  q = { endkey: '"b"', endkey_docid: 11, inclusive_end: false };
  resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'aa');

  q = { ...q, endkey_docid: 12 };
  resp = await c.get(`${collationUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'b');
});

// ---------------------------------------------------------------------------------------------
// view_collation_raw_test.exs

const rawValues = [
  // Then numbers
  '1', '2', '3', '4', 'false', 'null', 'true',
  // Then objects, compared each key value in the list until different.
  // Larger objects sort after their subset objects
  '{"a":1}', '{"a":2}', '{"b":1}', '{"b":2}',
  // Member order does matter for collation
  '{"b":2,"a":1}', '{"b":2,"c":2}',
  // Then arrays, compared element by element until different.
  // Longer arrays sort after their prefixes
  '["a"]', '["b"]', '["b","c"]', '["b","c","a"]', '["b","d"]', '["b","d","e"]',
  // Then text, case sensitive
  '"A"', '"B"', '"a"', '"aa"', '"b"', '"ba"', '"bb"',
];

async function rawCollationDb(): Promise<string> {
  const db = await freshDb('collation-raw');
  const docs = rawValues.map((v, i) => ({ _id: String(i + 1), foo: JSON.parse(v) }));
  const r = await c.post(`/${db}/_bulk_docs`, { docs });
  for (const row of r.body) assert.ok(row.ok, JSON.stringify(row));
  const mapFun = 'function(doc) { emit(doc.foo, null); }';
  const mapDoc = { language: 'javascript', views: { test: { map: mapFun, options: { collation: 'raw' } } } };
  const put = await c.put(`/${db}/_design/test`, mapDoc);
  assert.ok(put.body.ok, put.text);
  return db;
}
const rawUrl = (db: string) => `/${db}/_design/test/_view/test`;

test('view_collation_raw: ascending collation order', async () => {
  const db = await rawCollationDb();
  await retryUntil(async () => {
    const resp = await c.get(rawUrl(db));
    const rows = resp.body.rows as any[];
    rows.slice(0, rawValues.length).forEach((row, i) => assert.deepEqual(row.key, JSON.parse(rawValues[i]!)));
    return true;
  });
});

test('view_collation_raw: raw semantics in key ranges', async () => {
  const db = await rawCollationDb();
  await retryUntil(async () => {
    const resp = await c.get(`${rawUrl(db)}${qs({ startkey: '"Z"', endkey: '"a"' })}`);
    assert.equal(resp.body.rows.length, 1, resp.text);
    assert.equal(resp.body.rows[0].key, 'a');
    return true;
  });
});

test('view_collation_raw: descending collation order', async () => {
  const db = await rawCollationDb();
  const reversed = [...rawValues].reverse();
  await retryUntil(async () => {
    const resp = await c.get(`${rawUrl(db)}${qs({ descending: 'true' })}`);
    const rows = resp.body.rows as any[];
    rows.slice(0, reversed.length).forEach((row, i) => assert.deepEqual(row.key, JSON.parse(reversed[i]!)));
    return true;
  });
});

test('view_collation_raw: key query option', async () => {
  const db = await rawCollationDb();
  for (const value of rawValues) {
    await retryUntil(async () => {
      const resp = await c.get(`${rawUrl(db)}${qs({ key: value })}`);
      assert.equal(resp.body.rows.length, 1, `key=${value}: ${resp.text}`);
      assert.deepEqual(resp.body.rows[0].key, JSON.parse(value));
      return true;
    });
  }
});

test('view_collation_raw: inclusive_end=true', async () => {
  const db = await rawCollationDb();
  let q: Params = { endkey: '"b"', inclusive_end: true };
  let resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'b');

  q = { ...q, descending: true };
  resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'b');
});

test('view_collation_raw: inclusive_end=false', async () => {
  const db = await rawCollationDb();
  let q: Params = { endkey: '"b"', inclusive_end: false };
  let resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'aa');

  q = { ...q, descending: true };
  resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'ba');

  q = { endkey: '"b"', endkey_docid: 10, inclusive_end: false };
  resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'aa');

  q = { ...q, endkey_docid: 11 };
  resp = await c.get(`${rawUrl(db)}${qs(q)}`);
  assert.equal(resp.body.rows.at(-1).key, 'aa');
});

// ---------------------------------------------------------------------------------------------
// view_multi_key_design_test.exs

const multiKeys = [10, 15, 30, 37, 50];
const multiKeyDdoc = () => ({
  _id: '_design/test',
  language: 'javascript',
  views: {
    all_docs: { map: 'function(doc) { emit(doc.integer, doc.string) }' },
    multi_emit: { map: 'function(doc) {for(var i = 0 ; i < 3 ; i++) { emit(i, doc.integer) ; } }' },
    summate: {
      map: 'function (doc) {emit(doc.integer, doc.integer)};',
      reduce: 'function (keys, values) { return sum(values); };',
    },
  },
});

async function multiKeyDb(): Promise<string> {
  const db = await freshDb('multi-key');
  await bulkSave(db, makeDocs(0, 99));
  await createDoc(db, multiKeyDdoc());
  return db;
}

test('view_multi_key_design: that missing keys work too', async () => {
  const db = await multiKeyDb();
  const keys = [101, 30, 15, 37, 50];
  const resp = await view(db, 'test/summate', { group: true }, keys);
  const rows = resp.body.rows as any[];
  assert.equal(rows.length, keys.length - 1);
  assert.ok(rows.every((r) => keys.includes(r.key)));
  assert.ok(rows.every((r) => r.key === r.value));
});

test('view_multi_key_design: keys in POST body', async () => {
  const db = await multiKeyDb();
  const resp = await view(db, 'test/all_docs', null, multiKeys);
  const rows = resp.body.rows as any[];
  assert.equal(rows.length, multiKeys.length);
  assert.ok(rows.every((r) => multiKeys.includes(r.key)));
  assert.ok(rows.every((r) => r.key === parseInt(r.value, 10)));
});

test('view_multi_key_design: keys in GET parameters', async () => {
  const db = await multiKeyDb();
  const resp = await view(db, 'test/all_docs', { keys: JSON.stringify(multiKeys) });
  const rows = resp.body.rows as any[];
  assert.equal(rows.length, multiKeys.length);
  assert.ok(rows.every((r) => multiKeys.includes(r.key)));
  assert.ok(rows.every((r) => r.key === parseInt(r.value, 10)));
});

test('view_multi_key_design: empty keys', async () => {
  const db = await multiKeyDb();
  const resp = await view(db, 'test/all_docs', { keys: JSON.stringify([]) });
  assert.equal(resp.status, 200);
  assert.deepEqual(resp.body.rows, []);
});

test('view_multi_key_design: keys in POST body (group)', async () => {
  const db = await multiKeyDb();
  const resp = await view(db, 'test/summate', { group: true }, multiKeys);
  const rows = resp.body.rows as any[];
  assert.equal(rows.length, multiKeys.length);
  assert.ok(rows.every((r) => multiKeys.includes(r.key)));
  assert.ok(rows.every((r) => r.key === r.value));
});

test('view_multi_key_design: keys in GET body (group)', async () => {
  const db = await multiKeyDb();
  const resp = await view(db, 'test/summate', { group: true, keys: JSON.stringify(multiKeys) });
  const rows = resp.body.rows as any[];
  assert.equal(rows.length, multiKeys.length);
  assert.ok(rows.every((r) => multiKeys.includes(r.key)));
  assert.ok(rows.every((r) => r.key === r.value));
});

test('view_multi_key_design: POST - invalid parameter combinations get rejected ', async () => {
  const db = await multiKeyDb();
  const badargs: Params[] = [{ startkey: 0 }, { endkey: 0 }, { key: 0 }, { group_level: 2 }];
  for (const args of badargs) {
    const resp = await c.post(`/${db}/_design/test/_view/all_docs${qs(args)}`, { keys: multiKeys });
    assert.equal(resp.status, 400, `${JSON.stringify(args)}: ${resp.text}`);
    assert.equal(resp.body.error, 'query_parse_error');
  }

  const resp = await c.post(`/${db}/_design/test/_view/summate`, { keys: multiKeys });
  assert.equal(resp.status, 400, resp.text);
  assert.equal(resp.body.error, 'query_parse_error');
});

test('view_multi_key_design: GET - invalid parameter combinations get rejected ', async () => {
  const db = await multiKeyDb();
  const keys = JSON.stringify(multiKeys);
  const badargs: Params[] = [{ startkey: 0, keys }, { endkey: 0, keys }, { key: 0, keys }, { group_level: 2, keys }];
  for (const args of badargs) {
    const resp = await c.get(`/${db}/_design/test/_view/all_docs${qs(args)}`);
    assert.equal(resp.status, 400, `${JSON.stringify(args)}: ${resp.text}`);
    assert.equal(resp.body.error, 'query_parse_error');
  }

  // The original sends a body with this GET too (Node's client leaves a GET body's length out, so it is set here).
  const body = JSON.stringify({ keys: multiKeys });
  const resp = await c.request('GET', `/${db}/_design/test/_view/summate${qs({ keys })}`, {
    raw: body, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
  });
  assert.equal(resp.status, 400, resp.text);
  assert.equal(resp.body.error, 'query_parse_error');
});

test('view_multi_key_design: that a map & reduce containing func support keys when reduce=false', async () => {
  const db = await multiKeyDb();
  let resp = await view(db, 'test/summate', { reduce: false }, multiKeys);
  assert.equal(resp.body.rows.length, 5);

  resp = await view(db, 'test/summate', { reduce: false, keys: JSON.stringify(multiKeys) });
  assert.equal(resp.body.rows.length, 5);
});

test('view_multi_key_design: that limiting by startkey_docid and endkey_docid get applied', async () => {
  const db = await multiKeyDb();
  const expKey = [0, 0, 0, 2, 2, 2];
  const expVal = [21, 22, 23, 21, 22, 23];

  let resp = await view(db, 'test/multi_emit', { startkey_docid: 21, endkey_docid: 23 }, [0, 2]);
  let rows = resp.body.rows as any[];
  assert.deepEqual(keysOf(rows), expKey);
  assert.deepEqual(rows.map((r) => r.value), expVal);

  resp = await view(db, 'test/multi_emit', { startkey_docid: 21, endkey_docid: 23, keys: JSON.stringify([0, 2]) });
  rows = resp.body.rows;
  assert.deepEqual(keysOf(rows), expKey);
  assert.deepEqual(rows.map((r) => r.value), expVal);
});

test('view_multi_key_design: limit works', async () => {
  const db = await multiKeyDb();
  let resp = await view(db, 'test/all_docs', { limit: 1 }, multiKeys);
  let rows = resp.body.rows as any[];
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key, 10);

  resp = await view(db, 'test/all_docs', { limit: 1, keys: JSON.stringify(multiKeys) });
  rows = resp.body.rows;
  assert.equal(rows.length, 1);
  assert.equal(rows[0].key, 10);
});

test('view_multi_key_design: offset works', async () => {
  const db = await multiKeyDb();
  let resp = await view(db, 'test/multi_emit', { skip: 1 }, [0]);
  assert.equal(resp.body.rows.length, 99);

  resp = await view(db, 'test/multi_emit', { skip: 1, keys: JSON.stringify([0]) });
  assert.equal(resp.body.rows.length, 99);
});

test('view_multi_key_design: dir works', async () => {
  const db = await multiKeyDb();
  let resp = await view(db, 'test/multi_emit', { descending: true }, [1]);
  assert.equal(resp.body.rows.length, 100);

  resp = await view(db, 'test/multi_emit', { descending: true, keys: JSON.stringify([1]) });
  assert.equal(resp.body.rows.length, 100);
});

test('view_multi_key_design: argument combinations', async () => {
  const db = await multiKeyDb();
  let resp = await view(db, 'test/multi_emit', { descending: true, skip: 3, limit: 2 }, [2]);
  assert.equal(resp.body.rows.length, 2);

  resp = await view(db, 'test/multi_emit', { descending: true, skip: 3, limit: 2, keys: JSON.stringify([2]) });
  assert.equal(resp.body.rows.length, 2);

  resp = await view(db, 'test/multi_emit', { skip: 0, limit: 1, startkey_docid: '13' }, [0]);
  assert.equal(resp.body.rows.length, 1);
  assert.equal(resp.body.rows[0].value, 13);

  resp = await view(db, 'test/multi_emit', { skip: 2, limit: 3, startkey_docid: '13' }, [0]);
  assert.equal(resp.body.rows.length, 3);

  resp = await view(db, 'test/multi_emit', { skip: 2, limit: 3, startkey_docid: '13', keys: JSON.stringify([0]) });
  assert.equal(resp.body.rows.length, 3);

  resp = await view(db, 'test/multi_emit', { skip: 1, limit: 5, startkey_docid: '25', endkey_docid: '27' }, [1]);
  assert.equal(resp.body.rows.length, 2);
  assert.ok([26, 27].includes(resp.body.rows[0].value), resp.text);

  resp = await view(db, 'test/multi_emit', { skip: 1, limit: 5, startkey_docid: '25', endkey_docid: '27', keys: JSON.stringify([1]) });
  assert.equal(resp.body.rows.length, 2);
  assert.ok([26, 27].includes(resp.body.rows[0].value), resp.text);

  resp = await view(db, 'test/multi_emit', { skip: 1, limit: 5, startkey_docid: '28', endkey_docid: '26', descending: true }, [1]);
  assert.equal(resp.body.rows.length, 2);
  assert.ok([26, 27].includes(resp.body.rows[0].value), resp.text);

  resp = await view(db, 'test/multi_emit', {
    skip: 1, limit: 5, startkey_docid: '28', endkey_docid: '26', descending: true, keys: JSON.stringify([1]),
  });
  assert.equal(resp.body.rows.length, 2);
});

// ---------------------------------------------------------------------------------------------
// view_offsets_test.exs

const offsetDocs = () => [
  { _id: 'a1', letter: 'a', number: 1, foo: 'bar' },
  { _id: 'a2', letter: 'a', number: 2, foo: 'bar' },
  { _id: 'a3', letter: 'a', number: 3, foo: 'bar' },
  { _id: 'b1', letter: 'b', number: 1, foo: 'bar' },
  { _id: 'b2', letter: 'b', number: 2, foo: 'bar' },
  { _id: 'b3', letter: 'b', number: 3, foo: 'bar' },
  { _id: 'b4', letter: 'b', number: 4, foo: 'bar' },
  { _id: 'b5', letter: 'b', number: 5, foo: 'bar' },
  { _id: 'c1', letter: 'c', number: 1, foo: 'bar' },
  { _id: 'c2', letter: 'c', number: 2, foo: 'bar' },
];
const offsetDesignDoc = () => ({
  _id: '_design/test',
  views: { offset: { map: 'function(doc) { emit([doc.letter, doc.number], doc); }' } },
});

test('view_offsets: basic view offsets', async () => {
  const db = await freshDb('offsets');
  await save(db, offsetDesignDoc());
  await bulkSave(db, offsetDocs());

  const cases: [unknown, number][] = [
    [['c', 2], 0], [['c', 1], 1], [['b', 5], 2], [['b', 4], 3], [['b', 3], 4],
    [['b', 2], 5], [['b', 1], 6], [['a', 3], 7], [['a', 2], 8], [['a', 1], 9],
  ];
  for (const [startKey, offset] of cases) {
    const result = await view(db, 'test/offset', { startkey: JSON.stringify(startKey), descending: true });
    assert.equal(result.body.offset, offset, `startkey=${JSON.stringify(startKey)}`);
  }
});

test('view_offsets: repeated view offsets', async () => {
  for (let n = 0; n <= 14; n++) {
    const db = await freshDb('offsets-repeated');
    await save(db, offsetDesignDoc());
    await bulkSave(db, offsetDocs());

    const first = await view(db, 'test/offset', {
      startkey: JSON.stringify(['b', 4]), startkey_docid: 'b4', endkey: JSON.stringify(['b']), descending: true, limit: 2, skip: 1,
    });
    const second = await view(db, 'test/offset', { startkey: JSON.stringify(['c', 3]) });
    const third = await view(db, 'test/offset', { startkey: JSON.stringify(['b', 6]), endkey: JSON.stringify(['b', 7]) });

    assert.equal(first.body.offset, 4);
    assert.equal(second.body.offset, offsetDocs().length);
    assert.equal(third.body.offset, 8);

    await deleteDb(db);
  }
});

// ---------------------------------------------------------------------------------------------
// view_pagination_test.exs

const pageFun = 'function(doc) { emit(doc.integer, null); }';
const tens = Array.from({ length: 10 }, (_, k) => k * 10);

test('view_pagination: basic view pagination', async () => {
  const db = await freshDb('pagination');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  for (const i of tens) {
    const result = await query(db, pageFun, null, { startkey: i, startkey_docid: i, limit: 10 });
    assert.equal(result.total_rows, docs.length);
    assert.equal(result.rows.length, 10);
    assert.equal(result.offset, i);
    for (let k = 0; k <= 9; k++) assert.equal(result.rows[k].key, k + i);
  }
});

test('view_pagination: aliases start_key and start_key_doc_id should work', async () => {
  const db = await freshDb('pagination-aliases');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  for (const i of tens) {
    const result = await query(db, pageFun, null, { start_key: i, start_key_docid: i, limit: 10 });
    assert.equal(result.total_rows, docs.length);
    assert.equal(result.rows.length, 10);
    assert.equal(result.offset, i);
    for (let k = 0; k <= 9; k++) assert.equal(result.rows[k].key, k + i);
  }
});

test('view_pagination: descending view pagination', async () => {
  const db = await freshDb('pagination-desc');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  // 100..0 filtered to multiples of 10, minus 1, positive: 99, 89, ..., 9
  const starts = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0].map((n) => n - 1).filter((n) => n > 0);
  for (const i of starts) {
    const result = await query(db, pageFun, null, { startkey: i, startkey_docid: i, limit: 10, descending: true });
    assert.equal(result.total_rows, docs.length);
    assert.equal(result.rows.length, 10);
    assert.equal(result.offset, docs.length - i - 1);
    for (let k = 0; k <= 9; k++) assert.equal(result.rows[k].key, i - k);
  }
});

test('view_pagination: descending=false parameter should just be ignored', async () => {
  const db = await freshDb('pagination-desc-false');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  for (const i of tens) {
    const result = await query(db, pageFun, null, { start_key: i, start_key_docid: i, limit: 10, descending: false });
    assert.equal(result.total_rows, docs.length);
    assert.equal(result.rows.length, 10);
    assert.equal(result.offset, i);
    for (let k = 0; k <= 9; k++) assert.equal(result.rows[k].key, k + i);
  }
});

/** test_end_key_doc_id: rows "1", "10".."19", "2", "20".."29", "3", "30".."39", "4", "40". */
function checkEndKeyDocId(result: any, docs: unknown[]) {
  assert.equal(result.rows.length, 35);
  assert.equal(result.total_rows, docs.length);
  assert.equal(result.offset, 1);
  const expected = ['1', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '2', '20', '21', '22', '23', '24', '25',
    '26', '27', '28', '29', '3', '30', '31', '32', '33', '34', '35', '36', '37', '38', '39', '4', '40'];
  expected.forEach((id, k) => assert.equal(result.rows[k]?.id, id, `row ${k}`));
}

test('view_pagination: endkey document id', async () => {
  const db = await freshDb('pagination-endkey-docid');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  const result = await query(db, 'function(doc) { emit(null, null); }', null, {
    startkey: null, startkey_docid: 1, endkey: null, endkey_docid: 40,
  });
  checkEndKeyDocId(result, docs);
});

test('view_pagination: endkey document id, but with end_key_doc_id alias', async () => {
  const db = await freshDb('pagination-end-key-doc-id');
  const docs = makeDocs(0, 99);
  await bulkSave(db, docs);
  const result = await query(db, 'function(doc) { emit(null, null); }', null, {
    start_key: null, start_key_doc_id: 1, end_key: null, end_key_doc_id: 40,
  });
  checkEndKeyDocId(result, docs);
});

// ---------------------------------------------------------------------------------------------
// view_include_docs_test.exs

const includeDocsDdoc = () => ({
  _id: '_design/test',
  language: 'javascript',
  views: {
    all_docs: { map: 'function(doc) { emit(doc.integer, doc.string) }' },
    with_prev: {
      map: "function(doc){if(doc.prev) emit(doc._id,{'_rev':doc.prev}); else emit(doc._id,{'_rev':doc._rev});}",
    },
    with_id: {
      map: "function(doc) {if(doc.link_id) { var value = {'_id':doc.link_id}; if (doc.link_rev) {value._rev = doc.link_rev}; emit(doc._id, value);}};",
    },
    summate: {
      map: "function (doc) { if (typeof doc.integer === 'number') {emit(doc.integer, doc.integer)};}",
      reduce: 'function (keys, values) { return sum(values); };',
    },
  },
});

/** setup_all: make_docs(0..99) and the design document. */
async function includeDocsDb(): Promise<string> {
  const db = await freshDb('include-docs');
  await bulkSave(db, makeDocs(0, 99));
  await createDoc(db, includeDocsDdoc());
  return db;
}

test('view_include_docs: include docs in view', async () => {
  const db = await includeDocsDb();
  let resp = await view(db, 'test/all_docs', { include_docs: true, limit: 2 });
  assert.equal(resp.body.rows.length, 2);
  let [row0, row1] = resp.body.rows;
  assert.equal(row0.id, '0');
  assert.equal(row0.doc._id, '0');
  assert.equal(row1.id, '1');
  assert.equal(row1.doc._id, '1');

  resp = await view(db, 'test/all_docs', { include_docs: true }, [29, 74]);
  assert.equal(resp.body.rows.length, 2);
  [row0, row1] = resp.body.rows;
  assert.equal(row0.doc._id, '29');
  assert.equal(row1.doc.integer, 74);
});

test('view_include_docs: include docs in all_docs', async () => {
  const db = await includeDocsDb();
  let resp = await c.get(`/${db}/_all_docs${qs({ limit: 2, skip: 1, include_docs: true })}`);
  assert.equal(resp.body.rows.length, 2);
  let [row0, row1] = resp.body.rows;
  assert.equal(row0.doc.integer, 1);
  assert.equal(row1.doc.integer, 10);

  resp = await c.post(`/${db}/_all_docs${qs({ include_docs: true })}`, { keys: ['not_a_doc'] });
  assert.equal(resp.body.rows.length, 1);
  row0 = resp.body.rows[0];
  assert.ok(!('doc' in row0), JSON.stringify(row0));

  resp = await c.post(`/${db}/_all_docs${qs({ include_docs: true })}`, { keys: ['1', 'foo'] });
  assert.equal(resp.body.rows.length, 2);
  [row0, row1] = resp.body.rows;
  assert.equal(row0.doc.integer, 1);
  assert.ok(!('doc' in row1), JSON.stringify(row1));

  resp = await c.get(`/${db}/_all_docs${qs({ limit: 0, include_docs: true })}`);
  assert.deepEqual(resp.body.rows, []);
});

test('view_include_docs: no reduce support', async () => {
  const db = await includeDocsDb();
  const resp = await c.get(`/${db}/_design/test/_view/summate${qs({ include_docs: true })}`);
  assert.equal(resp.status, 400, resp.text);
  assert.equal(resp.body.error, 'query_parse_error');
});

test('view_include_docs: Reduce support when reduce=false', async () => {
  const db = await includeDocsDb();
  const resp = await c.get(`/${db}/_design/test/_view/summate${qs({ reduce: false, include_docs: true })}`);
  assert.equal(resp.body.rows.length, 100);
});

test('view_include_docs: Not an error with include_docs=false&reduce=true', async () => {
  const db = await includeDocsDb();
  const resp = await c.get(`/${db}/_design/test/_view/summate${qs({ reduce: true, include_docs: false })}`);
  assert.equal(resp.body.rows.length, 1);
  assert.equal(resp.body.rows[0].value, 4950);
});

test('view_include_docs: link to another doc from a value', async () => {
  const db = await freshDb('include-docs-link');
  await bulkSave(db, makeDocs(0, 99));
  await createDoc(db, includeDocsDdoc());

  await createDoc(db, { _id: 'link-to-10', link_id: '10' });
  let resp = await view(db, 'test/with_id', { key: '"link-to-10"' });
  assert.equal(resp.body.rows.length, 1);
  let row0 = resp.body.rows[0];
  assert.equal(row0.key, 'link-to-10');
  assert.equal(row0.value._id, '10');

  resp = await view(db, 'test/with_id', { key: '"link-to-10"', include_docs: true });
  assert.equal(resp.body.rows.length, 1);
  row0 = resp.body.rows[0];
  assert.equal(row0.value._id, '10');
  assert.equal(row0.doc._id, '10');
});

test('view_include_docs: emitted _rev controls things', async () => {
  const db = await freshDb('include-docs-rev');
  await bulkSave(db, makeDocs(0, 99));
  await createDoc(db, includeDocsDdoc());

  let resp = await c.post(`/${db}/_all_docs${qs({ include_docs: true })}`, { keys: ['0'] });
  const docBefore = resp.body.rows[0].doc;

  resp = await c.get(`/${db}/0`);
  assert.equal(resp.status, 200);
  const prev = resp.body._rev;
  const savedDoc = await save(db, { ...resp.body, integer: 100, prev });

  resp = await c.get(`/${db}/0`);
  assert.equal(resp.status, 200);
  const docAfter = resp.body;
  assert.equal(docAfter._rev, savedDoc._rev);
  assert.notEqual(docAfter._rev, docAfter.prev);
  assert.equal(docAfter.integer, 100);

  resp = await view(db, 'test/with_prev', { include_docs: true }, ['0']);
  const row0 = resp.body.rows[0].doc;
  assert.equal(row0._id, '0');
  assert.equal(row0._rev, docBefore._rev);
  assert.ok(!('prev' in row0), JSON.stringify(row0));
  assert.equal(row0.integer, 0);
});

test('view_include_docs: COUCHDB-549 - include_docs=true with conflicts=true', async () => {
  const dbA = await freshDb('include-docs-549-a');
  const dbB = await freshDb('include-docs-549-b');
  try {
    const ddoc = {
      _id: '_design/mydesign',
      language: 'javascript',
      views: { myview: { map: ' function(doc) {\n  emit(doc.value, 1);\n}\n' } },
    };
    await createDoc(dbA, ddoc);
    await createDoc(dbA, { _id: 'foo', value: 1, str: '1' });
    await createDoc(dbB, { _id: 'foo', value: 1, str: '666' });
    await createDoc(dbA, { _id: 'bar', value: 2, str: '2' });

    await replicate(dbA, dbB);

    let resp = await c.get(`/${dbB}/foo${qs({ conflicts: true })}`);
    assert.equal(resp.status, 200);
    const doc1b = resp.body;
    assert.ok('_conflicts' in doc1b, resp.text);
    assert.equal(doc1b._conflicts.length, 1);
    const conflictRev = doc1b._conflicts[0];

    resp = await c.get(`/${dbB}/bar${qs({ conflicts: true })}`);
    assert.equal(resp.status, 200);
    assert.ok(!('_conflicts' in resp.body), resp.text);

    resp = await view(dbB, 'mydesign/myview', { include_docs: true, conflicts: true });
    assert.equal(resp.body.rows.length, 2);
    const row0 = resp.body.rows[0].doc;
    assert.equal(row0._conflicts.length, 1);
    assert.equal(row0._conflicts[0], conflictRev);
    const row1 = resp.body.rows[1].doc;
    assert.ok(!('_conflicts' in row1), JSON.stringify(row1));
  } finally {
    await deleteDb(dbA);
    await deleteDb(dbB);
  }
});

// ---------------------------------------------------------------------------------------------
// view_update_seq_test.exs

const updateSeqDdoc = () => ({
  _id: '_design/test',
  language: 'javascript',
  autoupdate: false,
  views: {
    all_docs: { map: 'function(doc) { emit(doc.integer, doc.string) }' },
    summate: {
      map: "function (doc) { if (typeof doc.integer === 'number') { emit(doc.integer, doc.integer)}; }",
      reduce: 'function (keys, values) { return sum(values); };',
    },
  },
});

/** seq_int: the number before the first "-" of a clustered sequence; one node's sequences are numbers already. */
function seqInt(seq: unknown): number {
  if (typeof seq === 'number') return seq;
  assert.equal(typeof seq, 'string', `update_seq: ${JSON.stringify(seq)}`);
  return parseInt((seq as string).split('-')[0]!, 10);
}

test('view_update_seq: db info update seq', async () => {
  const db = await freshDb('update-seq-info');
  let i = await info(db);
  assert.equal(seqInt(i.update_seq), 0);

  await createDoc(db, updateSeqDdoc());

  i = await info(db);
  assert.equal(seqInt(i.update_seq), 1);
});

test('view_update_seq: _all_docs update seq', async () => {
  const db = await freshDb('update-seq-all-docs');
  let resp = await c.get(`/${db}/_all_docs${qs({ update_seq: true })}`);
  assert.equal(seqInt(resp.body.update_seq), 0);

  await createDoc(db, updateSeqDdoc());

  resp = await c.get(`/${db}/_all_docs${qs({ update_seq: true })}`);
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 1);

  await bulkSave(db, makeDocs(0, 99));

  resp = await c.get(`/${db}/_all_docs${qs({ limit: 1 })}`);
  assert.equal(resp.body.rows.length, 1);
  assert.equal('update_seq' in resp.body, false);

  resp = await c.get(`/${db}/_all_docs${qs({ limit: 1, update_seq: true })}`);
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 101);
});

test('view_update_seq: view update seq', async () => {
  const db = await freshDb('update-seq-view');
  await createDoc(db, updateSeqDdoc());
  await bulkSave(db, makeDocs(0, 99));

  let resp = await view(db, 'test/all_docs', { limit: 1, update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 101);

  resp = await view(db, 'test/all_docs', { limit: 1, update_seq: false });
  assert.equal(resp.body.rows.length, 1);
  assert.equal('update_seq' in resp.body, false);

  resp = await view(db, 'test/summate', { update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 101);

  await save(db, { _id: 'A', integer: 1 });

  resp = await view(db, 'test/all_docs', { limit: 1, stale: 'ok', update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 101);

  await save(db, { _id: 'AA', integer: 2 });

  resp = await view(db, 'test/all_docs', { limit: 1, stale: 'update_after', update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 101);

  await retryUntil(async () => {
    const r = await view(db, 'test/all_docs', { limit: 1, stale: 'ok', update_seq: true });
    assert.equal(r.body.rows.length, 1);
    return seqInt(r.body.update_seq) === 103;
  });

  resp = await view(db, 'test/all_docs', { limit: 1, stale: 'ok', update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 103);

  resp = await view(db, 'test/all_docs', { limit: 1, update_seq: true });
  assert.equal(resp.body.rows.length, 1);
  assert.equal(seqInt(resp.body.update_seq), 103);

  resp = await view(db, 'test/all_docs', { update_seq: true }, ['0', '1']);
  assert.equal(seqInt(resp.body.update_seq), 103);

  resp = await view(db, 'test/all_docs', { update_seq: true }, ['0', '1']);
  assert.equal(seqInt(resp.body.update_seq), 103);

  resp = await view(db, 'test/summate', { group: true, update_seq: true }, [0, 1]);
  assert.equal(seqInt(resp.body.update_seq), 103);
});

// ---------------------------------------------------------------------------------------------
// reduce_test.exs

const arrayKeyDocs = () => [
  { keys: ['a'] }, { keys: ['a'] }, { keys: ['a', 'b'] }, { keys: ['a', 'b'] }, { keys: ['a', 'b', 'c'] },
  { keys: ['a', 'b', 'd'] }, { keys: ['a', 'c', 'd'] }, { keys: ['d'] }, { keys: ['d', 'a'] }, { keys: ['d', 'b'] },
  { keys: ['d', 'c'] },
];

test('reduce: Basic reduce functions', async () => {
  const db = await freshDb('reduce-basic');
  const viewUrl = `/${db}/_design/foo/_view/bar`;
  const numDocs = 500;
  const map = 'function (doc) {\n  emit(doc.integer, doc.integer);\n  emit(doc.integer, doc.integer);\n};\n';
  const reduce = 'function (keys, values) { return sum(values); };';
  assert.ok((await c.put(`/${db}/_design/foo`, { views: { bar: { map, reduce } } })).body.ok);
  // `w=3` is a clustered write quorum; the original sends it, and so does this port.
  await bulkSave(db, makeDocs(1, numDocs), { w: 3 });

  let rows = (await c.get(viewUrl)).body.rows;
  assert.equal(rows[0].value, 2 * summate(numDocs));

  rows = (await c.get(`${viewUrl}${qs({ startkey: 4, endkey: 4 })}`)).body.rows;
  assert.equal(rows[0].value, 8);

  rows = (await c.get(`${viewUrl}${qs({ startkey: 4, endkey: 5 })}`)).body.rows;
  assert.equal(rows[0].value, 18);

  rows = (await c.get(`${viewUrl}${qs({ startkey: 4, endkey: 6 })}`)).body.rows;
  assert.equal(rows[0].value, 30);

  rows = (await c.get(`${viewUrl}${qs({ group: true, limit: 3 })}`)).body.rows;
  assert.equal(rows[0].value, 2);
  assert.equal(rows[1].value, 4);
  assert.equal(rows[2].value, 6);

  const halfNumDocs = Math.floor(numDocs / 2);
  const max = Math.floor(numDocs / 30) + 1;
  for (let n = 1; n <= max; n++) {
    if (!(n * 30 + 1 < halfNumDocs)) continue;
    const i = n * 30 + 1;
    rows = (await c.get(`${viewUrl}${qs({ startkey: i, endkey: numDocs - i })}`)).body.rows;
    assert.equal(rows[0].value, 2 * (summate(numDocs - i) - summate(i - 1)), `startkey=${i}`);
  }
});

test('reduce: More complex array key view row testing', async () => {
  const db = await freshDb('reduce-array-keys');
  const viewUrl = `/${db}/_design/foo/_view/bar`;
  const map = 'function (doc) { emit(doc.keys, 1); };';
  const reduce = 'function (keys, values) { return sum(values); };';
  assert.ok((await c.put(`/${db}/_design/foo`, { views: { bar: { map, reduce } } })).body.ok);

  for (let i = 1; i <= 5; i++) {
    for (let j = 0; j <= 9; j++) {
      await bulkSave(db, arrayKeyDocs(), { w: 3 });
      const totalDocs = 1 + (i - 1) * 10 * 11 + (j + 1) * 11;
      assert.equal((await c.get(`/${db}`)).body.doc_count, totalDocs);
    }

    // test group by exact key match
    let rows = (await c.get(`${viewUrl}${qs({ group: true })}`)).body.rows;
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: 20 * i });
    assert.deepEqual(rows[2], { key: ['a', 'b', 'c'], value: 10 * i });
    assert.deepEqual(rows[3], { key: ['a', 'b', 'd'], value: 10 * i });

    // test group reduce and limit params provide valid json
    rows = (await c.get(`${viewUrl}${qs({ group: true, limit: 2 })}`)).body.rows;
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.equal(rows.length, 2);

    // test group by the first element in the key array
    rows = (await c.get(`${viewUrl}${qs({ group_level: 2 })}`)).body.rows;
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: 40 * i });
    assert.deepEqual(rows[2], { key: ['a', 'c'], value: 10 * i });
    assert.deepEqual(rows[3], { key: ['d'], value: 10 * i });
    assert.deepEqual(rows[4], { key: ['d', 'a'], value: 10 * i });
    assert.deepEqual(rows[5], { key: ['d', 'b'], value: 10 * i });
    assert.deepEqual(rows[6], { key: ['d', 'c'], value: 10 * i });

    // test endkey with inclusive_end=true
    rows = (await c.get(`${viewUrl}${qs({ group_level: 2, endkey: '["d"]', inclusive_end: true })}`)).body.rows;
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: 40 * i });
    assert.deepEqual(rows[2], { key: ['a', 'c'], value: 10 * i });
    assert.deepEqual(rows[3], { key: ['d'], value: 10 * i });
    assert.equal(rows.length, 4);

    // test endkey with inclusive_end=false
    rows = (await c.get(`${viewUrl}${qs({ group_level: 2, endkey: '["d"]', inclusive_end: false })}`)).body.rows;
    assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: 40 * i });
    assert.deepEqual(rows[2], { key: ['a', 'c'], value: 10 * i });
    assert.equal(rows.length, 3);
  }
});

test('reduce: More complex reductions that need to use the combine option', async () => {
  const db = await freshDb('reduce-combine');
  const viewUrl = `/${db}/_design/foo/_view/bar`;
  const map = 'function (doc) { emit(doc.val, doc.val); };';
  const reduce = `function (keys, values, rereduce) {
  // This computes the standard deviation of the mapped results
  var stdDeviation=0.0;
  var count=0;
  var total=0.0;
  var sqrTotal=0.0;

  if (!rereduce) {
    // This is the reduce phase, we are reducing over emitted values from
    // the map functions.
    for(var i in values) {
      total = total + values[i];
      sqrTotal = sqrTotal + (values[i] * values[i]);
    }
    count = values.length;
  } else {
    // This is the rereduce phase, we are re-reducing previosuly
    // reduced values.
    for(var i in values) {
      count = count + values[i].count;
      total = total + values[i].total;
      sqrTotal = sqrTotal + values[i].sqrTotal;
    }
  }

  var variance =  (sqrTotal - ((total * total)/count)) / count;
  stdDeviation = Math.sqrt(variance);

  // the reduce result. It contains enough information to be rereduced
  // with other reduce results.
  return {"stdDeviation":stdDeviation,"count":count,
    "total":total,"sqrTotal":sqrTotal};
}
`;
  assert.ok((await c.put(`/${db}/_design/foo`, { views: { bar: { map, reduce } } })).body.ok);

  for (let n = 0; n < 10; n++) {
    const docs = Array.from({ length: 10 }, (_, k) => ({ val: (k + 1) * 10 }));
    await bulkSave(db, docs, { w: 3 });
  }

  const rows = (await c.get(viewUrl)).body.rows;
  const std = rows[0].value.stdDeviation;
  assert.ok(Math.abs(std - 28.722813232690143) <= 0.0000000001, `stdDeviation ${std}`);
});

test('reduce: Reduce pagination', async () => {
  const db = await freshDb('reduce-pagination');
  const viewUrl = `/${db}/_design/foo/_view/bar`;
  const ddoc = {
    _id: '_design/foo',
    language: 'javascript',
    views: {
      bar: {
        reduce: '_count',
        map: '  function(doc) {\n     emit(doc.int, doc._id);\n     emit(doc.int + 1, doc._id);\n     emit(doc.int + 2, doc._id);\n  }\n',
      },
    },
  };
  assert.ok((await c.put(`/${db}/_design/foo`, ddoc)).body.ok);
  const docs = Array.from({ length: 1123 }, (_, i) => ({ _id: String(i), int: i }));
  await bulkSave(db, docs, { w: 3 });

  const randVal = () => 1 + Math.floor(Math.random() * 100_000_000);
  const get = async (q: Params) => (await c.get(`${viewUrl}${qs({ ...q, foobar: randVal() })}`)).body.rows as any[];
  const first = async (q: Params, expected: number) => {
    const rows = await get(q);
    assert.equal(rows[0]?.value, expected, `${JSON.stringify(q)}: ${JSON.stringify(rows)}`);
  };
  const grouped = async (q: Params, expected: [number, number][]) => {
    const rows = await get({ group: true, ...q });
    const where = `${JSON.stringify(q)}: ${JSON.stringify(rows)}`;
    assert.equal(rows.length, expected.length, where);
    expected.forEach(([key, value], k) => {
      assert.equal(rows[k]?.key, key, where);
      assert.equal(rows[k]?.value, value, where);
    });
  };

  // ?group=false tests
  await first({ startkey: 400, endkey: 402 }, 9);
  await first({ startkey: 402, endkey: 400, descending: true }, 9);
  await first({ startkey: 400, endkey: 402, inclusive_end: false }, 6);
  await first({ startkey: 402, endkey: 400, inclusive_end: false, descending: true }, 6);
  await first({ startkey: 400, endkey: 402, endkey_docid: '400' }, 7);
  await first({ startkey: 400, endkey: 402, endkey_docid: '400', inclusive_end: false }, 6);
  await first({ startkey: 400, endkey: 402, endkey_docid: '401' }, 8);
  await first({ startkey: 400, endkey: 402, endkey_docid: '401', inclusive_end: false }, 7);
  await first({ startkey: 400, endkey: 402, endkey_docid: '402' }, 9);
  await first({ startkey: 400, endkey: 402, endkey_docid: '402', inclusive_end: false }, 8);
  await first({ startkey: 402, endkey: 400, endkey_docid: '398', descending: true }, 9);
  await first({ startkey: 402, endkey: 400, endkey_docid: '398', descending: true, inclusive_end: false }, 8);
  await first({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true }, 8);
  await first({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true, inclusive_end: false }, 7);
  await first({ startkey: 402, endkey: 400, endkey_docid: '400', descending: true }, 7);
  await first({ startkey: 402, endkey: 400, endkey_docid: '400', descending: true, inclusive_end: false }, 6);
  await first({ startkey: 402, endkey: 400, startkey_docid: '400', descending: true }, 7);
  await first({ startkey: 402, endkey: 400, startkey_docid: '401', descending: true, inclusive_end: false }, 5);

  // ?group=true tests
  await grouped({ startkey: 400, endkey: 402 }, [[400, 3], [401, 3], [402, 3]]);
  await grouped({ startkey: 402, endkey: 400, descending: true }, [[402, 3], [401, 3], [400, 3]]);
  await grouped({ startkey: 400, endkey: 402, inclusive_end: false }, [[400, 3], [401, 3]]);
  await grouped({ startkey: 402, endkey: 400, inclusive_end: false, descending: true }, [[402, 3], [401, 3]]);
  await grouped({ startkey: 400, endkey: 402, endkey_docid: '401' }, [[400, 3], [401, 3], [402, 2]]);
  await grouped({ startkey: 400, endkey: 402, endkey_docid: '400' }, [[400, 3], [401, 3], [402, 1]]);
  await grouped({ startkey: 402, endkey: 400, startkey_docid: '401', descending: true }, [[402, 2], [401, 3], [400, 3]]);
  await grouped({ startkey: 402, endkey: 400, startkey_docid: '400', descending: true }, [[402, 1], [401, 3], [400, 3]]);
  await grouped({ startkey: 402, endkey: 400, startkey_docid: '401', descending: true, inclusive_end: false }, [[402, 2], [401, 3]]);
  await grouped({ startkey: 402, endkey: 400, startkey_docid: '400', descending: true, inclusive_end: false }, [[402, 1], [401, 3]]);
  await grouped({ startkey: 402, endkey: 400, endkey_docid: '398', descending: true, inclusive_end: true }, [[402, 3], [401, 3], [400, 3]]);
  await grouped({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true, inclusive_end: true }, [[402, 3], [401, 3], [400, 2]]);
  await grouped({ startkey: 402, endkey: 400, endkey_docid: '399', descending: true, inclusive_end: false }, [[402, 3], [401, 3], [400, 1]]);
  await grouped({ startkey: 402, endkey: 400, endkey_docid: '400', descending: true, inclusive_end: false }, [[402, 3], [401, 3]]);
});

// ---------------------------------------------------------------------------------------------
// reduce_builtin_test.exs

let ddocStamp = 0;
/** random_ddoc: /db/_design/<monotonic time>. */
const randomDdoc = (db: string) => `/${db}/_design/${Date.now()}${++ddocStamp}`;
const sumsqr = (n: number) => { let s = 0; for (let i = 1; i <= n; i++) s += i * i; return s; };
/** check_approx_distinct: within HyperLogLog's standard error for 2^11 registers. */
function checkApproxDistinct(expected: number, estimated: number): boolean {
  const err = 1.04 / Math.sqrt(Math.pow(2, 11 - 1));
  return Math.abs(expected - estimated) < expected * err;
}
async function queryRows(ddocUrl: string, builtinFun: string, q?: Params): Promise<any[]> {
  const r = await c.get(`${ddocUrl}/_view/builtin${builtinFun}${qs(q)}`);
  return r.body?.rows ?? assert.fail(`${ddocUrl}/_view/builtin${builtinFun}${qs(q)}: ${r.status} ${r.text}`);
}
async function queryValue(ddocUrl: string, builtinFun: string, q?: Params): Promise<any> {
  return (await queryRows(ddocUrl, builtinFun, q))[0]?.value;
}
const doubleEmitMap = 'function (doc) {\n  emit(doc.integer, doc.integer);\n  emit(doc.integer, doc.integer);\n};\n';

test('reduce_builtin: Builtin reduce functions', async () => {
  const db = await freshDb('reduce-builtin');
  const numDocs = 500;
  await bulkSave(db, makeDocs(1, numDocs), { w: 3 });
  const ddocUrl = randomDdoc(db);
  const map = doubleEmitMap;
  const designDoc = {
    views: {
      builtin_sum: { map, reduce: '_sum' },
      builtin_count: { map, reduce: '_count' },
      builtin_stats: { map, reduce: '_stats' },
      builtin_approx_count_distinct: { map, reduce: '_approx_count_distinct' },
    },
  };
  assert.ok((await c.put(ddocUrl, designDoc)).body.ok);

  let value = await queryValue(ddocUrl, '_sum');
  assert.equal(value, 2 * summate(numDocs));
  value = await queryValue(ddocUrl, '_count');
  assert.equal(value, 1000);
  value = await queryValue(ddocUrl, '_stats');
  assert.equal(value.sum, 2 * summate(numDocs));
  assert.equal(value.count, 1000);
  assert.equal(value.min, 1);
  assert.equal(value.max, 500);
  assert.equal(value.sumsqr, 2 * sumsqr(numDocs));
  value = await queryValue(ddocUrl, '_approx_count_distinct');
  assert.ok(checkApproxDistinct(numDocs, value), `approx_count_distinct ${value}`);

  value = await queryValue(ddocUrl, '_sum', { startkey: 4, endkey: 4 });
  assert.equal(value, 8);
  value = await queryValue(ddocUrl, '_count', { startkey: 4, endkey: 4 });
  assert.equal(value, 2);
  value = await queryValue(ddocUrl, '_approx_count_distinct', { startkey: 4, endkey: 4 });
  assert.ok(checkApproxDistinct(1, value), `approx_count_distinct ${value}`);

  value = await queryValue(ddocUrl, '_sum', { startkey: 4, endkey: 5 });
  assert.equal(value, 18);
  value = await queryValue(ddocUrl, '_count', { startkey: 4, endkey: 5 });
  assert.equal(value, 4);
  value = await queryValue(ddocUrl, '_approx_count_distinct', { startkey: 4, endkey: 5 });
  assert.ok(checkApproxDistinct(2, value), `approx_count_distinct ${value}`);

  value = await queryValue(ddocUrl, '_sum', { startkey: 4, endkey: 6 });
  assert.equal(value, 30);
  value = await queryValue(ddocUrl, '_count', { startkey: 4, endkey: 6 });
  assert.equal(value, 6);
  value = await queryValue(ddocUrl, '_approx_count_distinct', { startkey: 4, endkey: 6 });
  assert.ok(checkApproxDistinct(3, value), `approx_count_distinct ${value}`);

  let rows = await queryRows(ddocUrl, '_sum', { group: true, limit: 3 });
  assert.equal(rows.length, 3);
  assert.equal(rows[0].value, 2);
  assert.equal(rows[1].value, 4);
  assert.equal(rows[2].value, 6);

  rows = await queryRows(ddocUrl, '_approx_count_distinct', { group: true, limit: 3 });
  assert.equal(rows.length, 3);
  assert.ok(checkApproxDistinct(1, rows[0].value), JSON.stringify(rows));
  assert.ok(checkApproxDistinct(1, rows[1].value), JSON.stringify(rows));
  assert.ok(checkApproxDistinct(1, rows[2].value), JSON.stringify(rows));

  for (let i = 1; i <= 250; i += 30) {
    value = await queryValue(ddocUrl, '_sum', { startkey: i, endkey: numDocs - i });
    assert.equal(value, 2 * (summate(numDocs - i) - summate(i - 1)), `startkey=${i}`);
  }
});

test('reduce_builtin: Builtin reduce functions with trailings', async () => {
  const db = await freshDb('reduce-builtin-trailings');
  const numDocs = 500;
  await bulkSave(db, makeDocs(1, numDocs), { w: 3 });

  // test for trailing characters after builtin functions, desired behaviour
  // is to disregard any trailing characters
  // I think the behavior should be a prefix test, so that even "_statsorama"
  // or "_stats\nare\awesome" should work just as "_stats" does. - JChris
  for (const trailing of ['\n', 'orama', '\nare\nawesome', ' ', '     \n  ']) {
    const ddocUrl = randomDdoc(db);
    const map = doubleEmitMap;
    const designDoc = {
      views: {
        builtin_sum: { map, reduce: `_sum${trailing}` },
        builtin_count: { map, reduce: `_count${trailing}` },
        builtin_stats: { map, reduce: `_stats${trailing}` },
        builtin_approx_count_distinct: { map, reduce: `_approx_count_distinct${trailing}` },
      },
    };
    const put = await c.put(ddocUrl, designDoc);
    assert.ok(put.body?.ok, `trailing ${JSON.stringify(trailing)}: ${put.status} ${put.text}`);

    let value = await queryValue(ddocUrl, '_sum');
    assert.equal(value, 2 * summate(numDocs), `trailing ${JSON.stringify(trailing)}`);
    value = await queryValue(ddocUrl, '_count');
    assert.equal(value, 1000, `trailing ${JSON.stringify(trailing)}`);
    value = await queryValue(ddocUrl, '_stats');
    assert.equal(value?.sum, 2 * summate(numDocs), `trailing ${JSON.stringify(trailing)}`);
    assert.equal(value.count, 1000);
    assert.equal(value.min, 1);
    assert.equal(value.max, 500);
    assert.equal(value.sumsqr, 2 * sumsqr(numDocs));
  }
});

test('reduce_builtin: Builtin count and sum reduce for key as array', async () => {
  const db = await freshDb('reduce-builtin-array-keys');
  const ddocUrl = randomDdoc(db);
  const mapOne = 'function (doc) {\n  emit(doc.keys, 1);\n};\n';
  const mapOnesArray = 'function (doc) {\n  emit(doc.keys, [1, 1]);\n};\n';
  const designDoc = {
    views: {
      builtin_one_sum: { map: mapOne, reduce: '_sum' },
      builtin_one_count: { map: mapOne, reduce: '_count' },
      builtin_ones_array_sum: { map: mapOnesArray, reduce: '_sum' },
    },
  };
  assert.ok((await c.put(ddocUrl, designDoc)).body.ok);

  for (let i = 1; i <= 5; i++) {
    for (let j = 0; j <= 9; j++) {
      await bulkSave(db, arrayKeyDocs(), { w: 3 });
      const totalDocs = 1 + (i - 1) * 10 * 11 + (j + 1) * 11;
      assert.equal((await c.get(`/${db}`)).body.doc_count, totalDocs);
    }

    for (const b of ['_sum', '_count']) {
      const builtin = `_one${b}`;

      // group by exact key match
      let rows = await queryRows(ddocUrl, builtin, { group: true });
      assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
      assert.deepEqual(rows[1], { key: ['a', 'b'], value: 20 * i });
      assert.deepEqual(rows[2], { key: ['a', 'b', 'c'], value: 10 * i });
      assert.deepEqual(rows[3], { key: ['a', 'b', 'd'], value: 10 * i });

      // make sure group reduce and limit params provide valid json
      rows = await queryRows(ddocUrl, builtin, { group: true, limit: 2 });
      assert.equal(rows.length, 2);
      assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });

      // group by the first element in the key array
      rows = await queryRows(ddocUrl, builtin, { group_level: 1 });
      assert.deepEqual(rows[0], { key: ['a'], value: 70 * i });
      assert.deepEqual(rows[1], { key: ['d'], value: 40 * i });

      // group by the first 2 elements in the key array
      rows = await queryRows(ddocUrl, builtin, { group_level: 2 });
      assert.deepEqual(rows[0], { key: ['a'], value: 20 * i });
      assert.deepEqual(rows[1], { key: ['a', 'b'], value: 40 * i });
      assert.deepEqual(rows[2], { key: ['a', 'c'], value: 10 * i });
      assert.deepEqual(rows[3], { key: ['d'], value: 10 * i });
      assert.deepEqual(rows[4], { key: ['d', 'a'], value: 10 * i });
      assert.deepEqual(rows[5], { key: ['d', 'b'], value: 10 * i });
      assert.deepEqual(rows[6], { key: ['d', 'c'], value: 10 * i });
    }

    let rows = await queryRows(ddocUrl, '_ones_array_sum', { group: true });
    assert.deepEqual(rows[0], { key: ['a'], value: [20 * i, 20 * i] });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: [20 * i, 20 * i] });
    assert.deepEqual(rows[2], { key: ['a', 'b', 'c'], value: [10 * i, 10 * i] });
    assert.deepEqual(rows[3], { key: ['a', 'b', 'd'], value: [10 * i, 10 * i] });

    rows = await queryRows(ddocUrl, '_ones_array_sum', { group: true, limit: 2 });
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0], { key: ['a'], value: [20 * i, 20 * i] });

    rows = await queryRows(ddocUrl, '_ones_array_sum', { group_level: 1 });
    assert.deepEqual(rows[0], { key: ['a'], value: [70 * i, 70 * i] });
    assert.deepEqual(rows[1], { key: ['d'], value: [40 * i, 40 * i] });

    rows = await queryRows(ddocUrl, '_ones_array_sum', { group_level: 2 });
    assert.deepEqual(rows[0], { key: ['a'], value: [20 * i, 20 * i] });
    assert.deepEqual(rows[1], { key: ['a', 'b'], value: [40 * i, 40 * i] });
    assert.deepEqual(rows[2], { key: ['a', 'c'], value: [10 * i, 10 * i] });
    assert.deepEqual(rows[3], { key: ['d'], value: [10 * i, 10 * i] });
    assert.deepEqual(rows[4], { key: ['d', 'a'], value: [10 * i, 10 * i] });
    assert.deepEqual(rows[5], { key: ['d', 'b'], value: [10 * i, 10 * i] });
    assert.deepEqual(rows[6], { key: ['d', 'c'], value: [10 * i, 10 * i] });
  }
});

// ---------------------------------------------------------------------------------------------
// reduce_false_test.exs

test('reduce_false: Basic reduce functions', async () => {
  const db = await freshDb('reduce-false');
  const viewUrl = `/${db}/_design/foo/_view/summate`;
  const numDocs = 5;
  const map = 'function (doc) {\n  emit(doc.integer, doc.integer);\n};\n';
  const reduce = 'function (keys, values) { return sum(values); };';
  assert.ok((await c.put(`/${db}/_design/foo`, { views: { summate: { map, reduce } } })).body.ok);
  await bulkSave(db, makeDocs(1, numDocs), { w: 3 });

  // Test that the reduce works
  let rows = (await c.get(viewUrl)).body.rows;
  assert.equal(rows.length, 1);
  assert.equal(rows[0].value, summate(numDocs));

  // Test that we got our docs back
  rows = (await c.get(`${viewUrl}${qs({ reduce: false })}`)).body.rows;
  assert.equal(rows.length, 5);
  rows.forEach((row: any, k: number) => assert.equal(row.value, k + 1));
});

// ---------------------------------------------------------------------------------------------
// view_conflicts_test.exs

test('view_conflicts: view conflict', async () => {
  const dbA = await freshDb('conflicts-a');
  const dbB = await freshDb('conflicts-b');
  try {
    await createDoc(dbA, { _id: 'foo', bar: 42 });
    await replicate(dbA, dbB);

    let resp = await c.get(`/${dbB}/foo`);
    const docb = await save(dbB, { ...resp.body, bar: 43 });

    resp = await c.get(`/${dbA}/foo`);
    const doca = await save(dbA, { ...resp.body, bar: 41 });

    await replicate(dbA, dbB);

    resp = await c.get(`/${dbB}/foo${qs({ conflicts: true })}`);
    const doc = resp.body;
    assert.equal(doc._conflicts?.length, 1, resp.text);
    const conflictRev = doc._conflicts[0];

    switch (doc.bar) {
      case 41: assert.equal(conflictRev, docb._rev); break;
      case 43: assert.equal(conflictRev, doca._rev); break;
      default: assert.fail(`bar is ${doc.bar}`);
    }

    const mapFun = 'function(doc) {\n  if (doc._conflicts) {\n    emit(doc._id, doc._conflicts);\n  }\n}\n';
    const results = await query(dbB, mapFun);
    const rev = results.rows[0].value[0];
    assert.equal(conflictRev, rev);
  } finally {
    await deleteDb(dbA);
    await deleteDb(dbB);
  }
});

// ---------------------------------------------------------------------------------------------
// view_sandboxing_test.exs

const sandboxDocument = () => ({ integer: 1, string: '1', array: [1, 2, 3] });

test('view_sandboxing: attempting to change the document has no effect', async () => {
  const db = await freshDb('sandbox-change-doc');
  await createDoc(db, sandboxDocument());

  let mapFun = 'function(doc) {\n  doc.integer = 2;\n  emit(null, doc);\n}\n';
  let resp = await query(db, mapFun, null, { include_docs: true });
  let rows = resp.rows;
  // either we have an error or our doc is unchanged
  assert.ok(resp.total_rows === 0 || rows[0].doc.integer === 1, JSON.stringify(resp));

  mapFun = 'function(doc) {\n  doc.array[0] = 0;\n  emit(null, doc);\n}\n';
  resp = await query(db, mapFun, null, { include_docs: true });
  rows = resp.rows;
  // either we have an error or our doc is unchanged
  assert.ok(resp.total_rows === 0 || rows[0].doc.array[0] === 1, JSON.stringify(resp));
});

test('view_sandboxing: view cannot invoke interpreter internals', async () => {
  const db = await freshDb('sandbox-gc');
  await createDoc(db, sandboxDocument());
  const mapFun = 'function(doc) {\n  gc();\n  emit(null, doc);\n}\n';
  // make sure that a view cannot invoke interpreter internals such as the
  // garbage collector
  const resp = await query(db, mapFun);
  assert.equal(resp.total_rows, 0, JSON.stringify(resp));
});

test('view_sandboxing: view cannot access the map_funs and map_results array', async () => {
  const db = await freshDb('sandbox-map-funs');
  await createDoc(db, sandboxDocument());

  let mapFun = 'function(doc) {\n  map_funs.push(1);\n  emit(null, doc);\n}\n';
  let resp = await query(db, mapFun);
  assert.equal(resp.total_rows, 0, JSON.stringify(resp));

  mapFun = 'function(doc) {\n  map_results.push(1);\n  emit(null, doc);\n}\n';
  resp = await query(db, mapFun);
  assert.equal(resp.total_rows, 0, JSON.stringify(resp));
});

test("view_sandboxing: COUCHDB-925 - altering 'doc' variable in map function affects other map functions", async () => {
  const db = await freshDb('sandbox-925');
  const ddoc = {
    _id: '_design/foobar',
    language: 'javascript',
    views: {
      view1: {
        map: '   function(doc) {\n    if (doc.values) {\n      doc.values = [666];\n    }\n    if (doc.tags) {\n      doc.tags.push("qwerty");\n    }\n    if (doc.tokens) {\n      doc.tokens["c"] = 3;\n    }\n  }\n',
      },
      view2: {
        map: 'function(doc) {\n  if (doc.values) {\n    emit(doc._id, doc.values);\n  }\n  if (doc.tags) {\n    emit(doc._id, doc.tags);\n  }\n  if (doc.tokens) {\n    emit(doc._id, doc.tokens);\n  }\n}\n',
      },
    },
  };
  const doc1 = { _id: 'doc1', values: [1, 2, 3] };
  const doc2 = { _id: 'doc2', tags: ['foo', 'bar'], tokens: { a: 1, b: 2 } };
  await createDoc(db, ddoc);
  await createDoc(db, doc1);
  await createDoc(db, doc2);

  const resp1 = await view(db, 'foobar/view1');
  const resp2 = await view(db, 'foobar/view2');

  assert.deepEqual(resp1.body.rows, []);
  assert.equal(resp2.body.rows.length, 3);

  assert.equal(doc1._id, resp2.body.rows[0].key);
  assert.equal(doc2._id, resp2.body.rows[1].key);
  assert.equal(doc2._id, resp2.body.rows[2].key);

  assert.equal(resp2.body.rows[0].value.length, 3);
  const row0Values = resp2.body.rows[0].value;
  assert.equal(row0Values[0], 1);
  assert.equal(row0Values[1], 2);
  assert.equal(row0Values[2], 3);

  const row1Values = resp2.body.rows[1].value;
  const row2Values = resp2.body.rows[2].value;
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

  // we can't be 100% sure about the order for the same key
  assert.ok((isMap(row1Values) && row1Values.a === 1) || (Array.isArray(row1Values) && row1Values[0] === 'foo'));
  assert.ok((isMap(row1Values) && row1Values.b === 2) || (Array.isArray(row1Values) && row1Values[1] === 'bar'));
  assert.ok((isMap(row2Values) && row2Values.a === 1) || (Array.isArray(row2Values) && row2Values[0] === 'foo'));
  assert.ok((isMap(row2Values) && row2Values.b === 2) || (Array.isArray(row2Values) && row2Values[1] === 'bar'));
  assert.ok(Array.isArray(row1Values) || !('c' in row1Values), JSON.stringify(row1Values));
  assert.ok(Array.isArray(row2Values) || !('c' in row2Values), JSON.stringify(row2Values));
});

test('view_sandboxing: runtime code evaluation can be prevented', async () => {
  const db = await freshDb('sandbox-eval');
  await createDoc(db, sandboxDocument());
  const mapFun = "function(doc) {\n  var glob = emit.constructor('return this')();\n  emit(doc._id, null);\n}\n";
  const resp = await query(db, mapFun);
  // CouchDB 2+'s couchjs refuses runtime code evaluation unless run with --eval (0 rows); CouchDB 1.6, which Settee follows, allows it.
  assert.equal(resp.total_rows, 1, JSON.stringify(resp));
});
