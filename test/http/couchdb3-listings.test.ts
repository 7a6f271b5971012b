/**
 * CouchDB 3.x's Elixir integration tests for the document listings (test/elixir/test/
 * all_docs_test.exs, design_docs_query_test.exs and local_docs_test.exs), ported one test per
 * `test` block over real HTTP: the same documents, requests and assertions.
 *
 * The Elixir modules share one database per module (setup_all); here every test builds its
 * own fresh database with the same setup. The Elixir client's `query:` options are sent as
 * `name=value` with the value URL-encoded as given (JSON text where the Elixir test wrote
 * JSON text, a bare `true`/`1`/`false` where it wrote an Elixir atom or number).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { elixirDbHelpers, makeDocs, qs } from '../helpers/couch-elixir.js';

const { c } = await serverForFile();
/** random_db_name() + create_db (`freshDb`), and the originals' create_doc. */
const { mkdb: freshDb, createDoc } = elixirDbHelpers(c, 'c3');

const keysOf = (rows: { key: unknown }[]) => rows.map((r) => r.key);

// ---------------------------------------------------------------------------------------------
// all_docs_test.exs

test('all_docs: All Docs tests', async () => {
  const db = await freshDb('all-docs');
  const resp1 = (await c.post(`/${db}`, { _id: '0', a: 1, b: 1 })).body;
  const resp2 = (await c.post(`/${db}`, { _id: '3', a: 4, b: 16 })).body;
  const resp3 = (await c.post(`/${db}`, { _id: '1', a: 2, b: 4 })).body;
  const resp4 = (await c.post(`/${db}`, { _id: '2', a: 3, b: 9 })).body;
  assert.ok(resp1.ok);
  assert.ok(resp2.ok);
  assert.ok(resp3.ok);
  assert.ok(resp4.ok);
  const revs = [resp1.rev, resp2.rev, resp3.rev, resp4.rev];

  // Check _all_docs
  let resp = (await c.get(`/${db}/_all_docs`)).body;
  let rows = resp.rows as any[];
  assert.equal(resp.total_rows, rows.length);
  for (const row of rows) assert.ok(row.id >= '0' && row.id <= '4', row.id);

  // Check _all_docs with descending=true
  resp = (await c.get(`/${db}/_all_docs${qs({ descending: true })}`)).body;
  rows = resp.rows;
  assert.equal(resp.total_rows, rows.length);

  // Check _all_docs offset. CouchDB 3.x's fabric sums the shards' numeric offsets: 2, within a
  // retry_until (the FoundationDB-era copy of this file on main asserts null instead).
  resp = (await c.get(`/${db}/_all_docs${qs({ startkey: '"2"' })}`)).body;
  assert.equal(resp.offset, 2);
  assert.equal(resp.rows[0].key, '2');

  // Confirm that queries may assume raw collation
  resp = (await c.get(`/${db}/_all_docs${qs({ startkey: '"org.couchdb.user:"', endkey: '"org.couchdb.user;"' })}`)).body;
  assert.deepEqual(resp.rows, []);

  // Check that all docs show up in the changes feed; order can vary
  resp = (await c.get(`/${db}/_changes`)).body;
  for (const row of resp.results) assert.ok(revs.includes(row.changes[0].rev), `doc ${row.id} should be in changes`);

  // Check that deletions also show up right
  const doc1 = (await c.get(`/${db}/1`)).body;
  assert.ok((await c.del(`/${db}/1${qs({ rev: doc1._rev })}`)).body.ok);
  let changes = (await c.get(`/${db}/_changes`)).body.results as any[];
  assert.equal(changes.length, 4);
  const deleted = changes.filter((row) => row.deleted);
  assert.equal(deleted.length, 1);
  assert.equal(deleted[0].id, '1');

  // (remember old seq)
  const origDoc = changes.find((row) => row.id === '3');
  // Perform an update
  let doc3 = (await c.get(`/${db}/3`)).body;
  doc3.updated = 'totally';
  assert.ok((await c.put(`/${db}/3`, doc3)).body.ok);

  // The update should make doc id 3 have another seq num (not nec. higher or the last though)
  changes = (await c.get(`/${db}/_changes`)).body.results;
  assert.equal(changes.length, 4);
  let updatedDoc = changes.find((row) => row.id === '3');
  assert.notDeepEqual(origDoc.seq, updatedDoc.seq, 'seq num should be different');

  // Ok, now let's see what happens with include docs
  changes = (await c.get(`/${db}/_changes${qs({ include_docs: true })}`)).body.results;
  assert.equal(changes.length, 4);
  updatedDoc = changes.find((row) => row.id === doc3._id);
  assert.equal(updatedDoc.doc.updated, 'totally');
  const deletedDoc = changes.find((row) => row.deleted);
  assert.ok(deletedDoc.doc._deleted);

  // Test _all_docs with keys
  rows = (await c.post(`/${db}/_all_docs${qs({ include_docs: true })}`, { keys: ['1'] })).body.rows;
  const row = rows[0];
  assert.equal(rows.length, 1);
  assert.equal(row.key, '1');
  assert.equal(row.id, '1');
  assert.ok(row.value.deleted);
  assert.equal(row.doc, null);

  // Add conflicts
  const conflictedDoc1 = { _id: '3', _rev: '2-aa01552213fafa022e6167113ed01087', value: 'X' };
  const conflictedDoc2 = { _id: '3', _rev: '2-ff01552213fafa022e6167113ed01087', value: 'Z' };
  assert.ok((await c.put(`/${db}/3${qs({ new_edits: false })}`, conflictedDoc1)).body.ok);
  assert.ok((await c.put(`/${db}/3${qs({ new_edits: false })}`, conflictedDoc2)).body.ok);

  const winRev = (await c.get(`/${db}/3`)).body;

  changes = (await c.get(`/${db}/_changes${qs({ include_docs: true, conflicts: true, style: 'all_docs' })}`)).body.results;
  doc3 = changes.find((r) => r.id === '3');
  assert.equal(doc3.id, '3');
  assert.equal(doc3.changes.length, 3);
  assert.equal(winRev._rev, doc3.changes[0].rev);
  assert.ok(Array.isArray(doc3.doc._conflicts));
  assert.equal(doc3.doc._conflicts.length, 2);

  rows = (await c.get(`/${db}/_all_docs${qs({ include_docs: true, conflicts: true })}`)).body.rows;
  assert.equal(rows.length, 3);
  const change = rows[2];
  assert.equal(change.key, '3');
  assert.equal(change.id, '3');
  assert.equal(change.value.rev, winRev._rev);
  assert.equal(change.doc._rev, winRev._rev);
  assert.equal(change.doc._id, '3');
  assert.ok(Array.isArray(change.doc._conflicts));
  assert.equal(change.doc._conflicts.length, 2);

  // Test that _all_docs collates sanely
  assert.ok((await c.post(`/${db}`, { _id: 'Z', foo: 'Z' })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: 'a', foo: 'a' })).body.ok);
  rows = (await c.get(`/${db}/_all_docs${qs({ startkey: '"Z"', endkey: '"Z"' })}`)).body.rows;
  assert.equal(rows.length, 1);
});

test('all_docs: GET with one key', async () => {
  const db = await freshDb('all-docs');
  await createDoc(db, { _id: 'foo', bar: 'baz' });
  await createDoc(db, { _id: 'foo2', bar: 'baz2' });
  const resp = await c.get(`/${db}/_all_docs${qs({ key: '"foo"' })}`);
  assert.equal(resp.status, 200);
  assert.equal(resp.body.rows.length, 1);
});

test('all_docs: POST with empty body', async () => {
  const db = await freshDb('all-docs');
  let resp = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(0, 2) });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs`, {});
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 3);
});

test('all_docs: POST with missing keys', async () => {
  const db = await freshDb('all-docs');
  let resp = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(0, 3) });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs`, { keys: [1] });
  assert.equal(resp.status, 200, resp.text);
  const rows = resp.body.rows;
  assert.equal(rows.length, 1);
  assert.deepEqual(rows[0], { error: 'not_found', key: 1 });
});

test('all_docs: POST with keys and limit', async () => {
  const db = await freshDb('all-docs');
  let resp = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(0, 3) });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs`, { keys: ['1', '2'], limit: 1, include_docs: true });
  assert.equal(resp.status, 200, resp.text);
  const rows = resp.body.rows;
  assert.equal(rows.length, 1);
  assert.equal(rows[0].doc.string, '1');
});

test('all_docs: _local_docs POST with keys and limit', async () => {
  // CouchDB 3 opens `_local` documents named in `_all_docs` keys; CouchDB 1.6, which Settee
  // follows, does not list them in `_all_docs` at all, so their keys are not_found.
  const expected = [
    { key: '_local/one', error: 'not_found' },
    { key: '_local/two', error: 'not_found' },
    {
      doc: { _id: 'three', _rev: '1-878d3724976748bc881841046a276ceb', value: 'three' },
      id: 'three',
      key: 'three',
      value: { rev: '1-878d3724976748bc881841046a276ceb' },
    },
    { error: 'not_found', key: 'missing' },
    { error: 'not_found', key: '_local/missing' },
  ];
  const db = await freshDb('all-docs');
  const docs = [{ _id: '_local/one', value: 'one' }, { _id: '_local/two', value: 'two' }, { _id: 'three', value: 'three' }];
  let resp = await c.post(`/${db}/_bulk_docs`, { docs });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs`, { keys: ['_local/one', '_local/two', 'three', 'missing', '_local/missing'], include_docs: true });
  assert.equal(resp.status, 200, resp.text);
  const rows = resp.body.rows;
  assert.equal(rows.length, 5);
  assert.deepEqual(rows, expected);
});

test('all_docs: POST with query parameter and JSON body', async () => {
  const db = await freshDb('all-docs');
  let resp = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(0, 3) });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs${qs({ limit: 1 })}`, { keys: [1, 2] });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('all_docs: POST edge case with colliding parameters - query takes precedence', async () => {
  const db = await freshDb('all-docs');
  let resp = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(0, 3) });
  assert.ok(resp.status === 201 || resp.status === 202, resp.text);
  resp = await c.post(`/${db}/_all_docs${qs({ limit: 1 })}`, { keys: [1, 2], limit: 2 });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('all_docs: all_docs ordering', async () => {
  const db = await freshDb('all-docs');
  const docs = [{ _id: 'a' }, { _id: 'm' }, { _id: 'z' }];
  const saved = await c.post(`/${db}/_bulk_docs`, { docs });
  for (const r of saved.body) assert.ok(r.ok, JSON.stringify(r));

  const ids = (body: { rows: { id: string }[] }) => body.rows.map((r) => r.id);

  let resp = await c.get(`/${db}/_all_docs${qs({ startkey: false })}`);
  assert.equal(resp.body?.rows?.length, 3, resp.text);
  assert.deepEqual(ids(resp.body), ['a', 'm', 'z']);

  resp = await c.get(`/${db}/_all_docs${qs({ startkey: 0 })}`);
  assert.equal(resp.body?.rows?.length, 3, resp.text);
  assert.deepEqual(ids(resp.body), ['a', 'm', 'z']);

  resp = await c.get(`/${db}/_all_docs${qs({ startkey: '[1,2]' })}`);
  assert.equal(resp.body?.rows?.length, 3, resp.text);
  assert.deepEqual(ids(resp.body), ['a', 'm', 'z']);

  // This copy of the test expects no rows here (a number sorts before every id). CouchDB 1.6's
  // couch_mrview, which Settee follows, takes a bound that is not a string as absent (it falls
  // back to end_key_docid), so every row is in range.
  resp = await c.get(`/${db}/_all_docs${qs({ end_key: 0 })}`);
  assert.deepEqual(ids(resp.body), ['a', 'm', 'z']);
});

// ---------------------------------------------------------------------------------------------
// design_docs_query_test.exs

/** The module's setup_all: documents 1..5 and design documents _design/ddoc01..05. */
async function designDocsDb(): Promise<string> {
  const db = await freshDb('design-docs');
  const bulk = await c.post(`/${db}/_bulk_docs`, { docs: makeDocs(1, 5) });
  assert.equal(bulk.status, 201, bulk.text);
  for (let idx = 1; idx <= 5; idx++) {
    await createDoc(db, { _id: `_design/ddoc0${idx}`, views: { testing: { map: 'function(){emit(1,1)}' } } });
  }
  return db;
}

test('design_docs_query: query _design_docs (GET with no parameters)', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.total_rows, 5, 'total_rows mismatch');
  assert.equal(resp.body.rows.length, 5, 'amount of rows mismatch');
});

test('design_docs_query: query _design_docs with single key', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?key="_design/ddoc03"`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 1, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs with multiple key', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ keys: '["_design/ddoc02", "_design/ddoc03"]' })}`);
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 2);
});

test('design_docs_query: POST with empty body', async () => {
  const db = await designDocsDb();
  const resp = await c.post(`/${db}/_design_docs`, {});
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 5);
});

test('design_docs_query: POST with keys and limit', async () => {
  const db = await designDocsDb();
  const resp = await c.post(`/${db}/_design_docs`, { keys: ['_design/ddoc02', '_design/ddoc03'], limit: 1 });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('design_docs_query: POST with query parameter and JSON body', async () => {
  const db = await designDocsDb();
  const resp = await c.post(`/${db}/_design_docs${qs({ limit: 1 })}`, { keys: ['_design/ddoc02', '_design/ddoc03'] });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('design_docs_query: POST edge case with colliding parameters - query takes precedence', async () => {
  const db = await designDocsDb();
  const resp = await c.post(`/${db}/_design_docs${qs({ limit: 0 })}`, { keys: ['_design/ddoc02', '_design/ddoc03'], limit: 2 });
  assert.equal(resp.status, 200, resp.text);
  assert.deepEqual(resp.body.rows, []);
});

test('design_docs_query: query _design_docs descending=true', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?descending=true`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 5, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc05');
});

test('design_docs_query: query _design_docs descending=false', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?descending=false`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 5, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc01');
});

test('design_docs_query: query _design_docs end_key', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?end_key="_design/ddoc03"`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[2].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs endkey', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?endkey="_design/ddoc03"`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[2].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs start_key', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?start_key="_design/ddoc03"`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs startkey', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs?startkey="_design/ddoc03"`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs end_key inclusive_end=true', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc03"', inclusive_end: true })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[2].key, '_design/ddoc03');
});

test('design_docs_query: query _design_docs end_key inclusive_end=false', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc03"', inclusive_end: false })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 2, 'amount of rows mismatch');
  assert.equal(resp.body.rows[1].key, '_design/ddoc02');
});

test('design_docs_query: query _design_docs end_key inclusive_end=false descending', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc03"', inclusive_end: false, descending: true })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 2, 'amount of rows mismatch');
  assert.equal(resp.body.rows[1].key, '_design/ddoc04');
});

test('design_docs_query: query _design_docs end_key limit', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc05"', limit: 2 })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 2, 'amount of rows mismatch');
  assert.equal(resp.body.rows[1].key, '_design/ddoc02');
});

test('design_docs_query: query _design_docs end_key skip', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc05"', skip: 2 })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 3, 'amount of rows mismatch');
  assert.equal(resp.body.rows[0].key, '_design/ddoc03');
  assert.equal(resp.body.rows[2].key, '_design/ddoc05');
});

test('design_docs_query: query _design_docs update_seq', async () => {
  const db = await designDocsDb();
  const resp = await c.get(`/${db}/_design_docs${qs({ end_key: '"_design/ddoc05"', update_seq: true })}`);
  assert.equal(resp.status, 200, 'standard get should be 200');
  // Only the member's presence is asserted; Settee's sequence is a number, CouchDB 3's a string.
  assert.ok(Object.hasOwn(resp.body, 'update_seq'), resp.text);
});

test('design_docs_query: query _design_docs post with keys', async () => {
  const db = await designDocsDb();
  const resp = await c.post(`/${db}/_design_docs`, { keys: ['_design/ddoc02', '_design/ddoc03'] }, { headers: { 'Content-Type': 'application/json' } });
  const keys = keysOf(resp.body.rows);
  assert.equal(resp.status, 200, 'standard get should be 200');
  assert.equal(resp.body.rows.length, 2, 'amount of rows mismatch');
  assert.ok(keys.includes('_design/ddoc03'));
  assert.ok(keys.includes('_design/ddoc02'));
});

// ---------------------------------------------------------------------------------------------
// local_docs_test.exs

/** The module's setup_all: _local/foo and _local/foo2 (their bodies both say _id "foo"). */
async function localDocsDb(): Promise<string> {
  const db = await freshDb('local-docs');
  const resp1 = await c.put(`/${db}/_local/foo`, { _id: 'foo', bar: 'baz' });
  assert.equal(resp1.status, 201, resp1.text);
  const resp2 = await c.put(`/${db}/_local/foo2`, { _id: 'foo', bar: 'baz2' });
  assert.equal(resp2.status, 201, resp2.text);
  return db;
}

test('local_docs: GET with no parameters', async () => {
  const db = await localDocsDb();
  const resp = await c.get(`/${db}/_local_docs`);
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 2);
});

test('local_docs: GET with multiple keys', async () => {
  const db = await localDocsDb();
  const resp = await c.get(`/${db}/_local_docs${qs({ keys: '["_local/foo", "_local/foo2"]' })}`);
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 2);
});

test('local_docs: POST with empty body', async () => {
  const db = await localDocsDb();
  const resp = await c.post(`/${db}/_local_docs`, {});
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 2);
});

test('local_docs: POST with keys and limit', async () => {
  const db = await localDocsDb();
  const resp = await c.post(`/${db}/_local_docs`, { keys: ['_local/foo', '_local/foo2'], limit: 1 });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('local_docs: POST with query parameter and JSON body', async () => {
  const db = await localDocsDb();
  const resp = await c.post(`/${db}/_local_docs${qs({ limit: 1 })}`, { keys: ['_local/foo', '_local/foo2'] });
  assert.equal(resp.status, 200, resp.text);
  assert.equal(resp.body.rows.length, 1);
});

test('local_docs: POST edge case with colliding parameters - query takes precedence', async () => {
  const db = await localDocsDb();
  const resp = await c.post(`/${db}/_local_docs${qs({ limit: 0 })}`, { keys: ['_local/foo', '_local/foo2'], limit: 2 });
  assert.equal(resp.status, 200, resp.text);
  assert.deepEqual(resp.body.rows, []);
});
