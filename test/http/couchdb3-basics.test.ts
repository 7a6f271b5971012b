/**
 * CouchDB 3's Elixir basics and view error tests (test/elixir/test/basics_test.exs and
 * view_errors_test.exs, from the 3.x line), ported to real HTTP against Settee on a single node.
 *
 * The originals run every request as the server admin `adm` (Basic auth) with
 * Content-Type: application/json, and sometimes send a raw string body such as "[]"; the client
 * below does the same. `set_config` changes a setting on every node of `_membership` without
 * persisting it and restores it when the test ends; here that is `withConfig`. Tests tagged
 * `:pending` in the originals (not run by CouchDB's own suite) are ported but skipped. Where
 * CouchDB 3 departs from CouchDB 1.6 (status of invalid `_` members, reasons of a bad `keys`,
 * reduce overflow, temporary views), the tests expect 1.6's answer, which Settee gives, and say so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { elixirAdminClient, elixirDbHelpers, withNodeConfig } from '../helpers/couch-elixir.js';
import { waitFor } from '../helpers/wait.js';

const { server, c: anonymous } = await serverForFile();
const c = await elixirAdminClient(server.url, anonymous);
/** The originals' create_db, delete_db and create_doc; `mkdb` is `@tag :with_db`, `dbName` `@tag :with_db_name`. */
const { dbName, createDb, deleteDb, mkdb, createDoc } = elixirDbHelpers(c, 'c3-basics');

const sampleDocFoo = () => ({ _id: 'foo', bar: 'baz' });

/** The originals' retry_until: polls until the condition holds (their bound is 5 s; ours is generous). */
const retryUntil = (what: string, condition: () => Promise<boolean>) => waitFor(what, condition);

/** The originals' set_config. */
const withConfig = (section: string, key: string, value: string, body: () => Promise<void>) => withNodeConfig(c, section, key, value, body);

const randomNumber = () => 1 + Math.floor(Math.random() * 16_000_000);

// ------------------------------------------------------------------ basics_test.exs

test('basics: Session contains adm context', async () => {
  const userCtx = (await c.get('/_session')).body.userCtx;
  assert.equal(userCtx.name, 'adm', 'Should have adm user context');
  assert.deepEqual(userCtx.roles, ['_admin'], 'Should have _admin role');
});

test('basics: Welcome endpoint', async () => {
  assert.equal((await c.get('/')).body.couchdb, 'Welcome', 'Should say welcome');
});

test('basics: PUT on existing DB should return 412 instead of 500', async () => {
  const db = await mkdb('exists');
  const r = await c.put(`/${db}`);
  assert.equal(r.status, 412);
  assert.ok(!r.body?.ok);
});

test('basics: Creating a new DB should return location header', async () => {
  const db = dbName('location');
  const r = await createDb(db);
  assert.ok(String(r.headers.location).endsWith(db), 'Should return Location header for new db');
  await deleteDb(db);
});

test('basics: Creating a new DB with slashes should return Location header (COUCHDB-411)', async () => {
  const db = `${dbName('slashes')}%2Fwith_slashes`;
  const r = await createDb(db);
  assert.ok(String(r.headers.location).endsWith(db), `Should return Location header for new db: ${r.headers.location}`);
  await deleteDb(db);
});

test('basics: Created database has appropriate db info name', async () => {
  const db = await mkdb('info-name');
  assert.equal((await c.get(`/${db}`)).body.db_name, db, 'Get correct database name');
});

test('basics: Database should be in _all_dbs', async () => {
  const db = await mkdb('in-all-dbs');
  assert.ok(((await c.get('/_all_dbs')).body as string[]).includes(db), 'Db name in _all_dbs');
});

test('basics: Limit and skip should work in _all_dbs', async () => {
  const db = await mkdb('all-dbs-paging');
  const dbCount = ((await c.get('/_all_dbs')).body as string[]).length;
  assert.ok(dbCount > 0);
  assert.deepEqual((await c.get('/_all_dbs?limit=0')).body, []);
  assert.ok((await c.get('/_all_dbs?limit=1')).body.length >= 1);
  assert.equal((await c.get('/_all_dbs?skip=1')).body.length, dbCount - 1);
  assert.deepEqual((await c.get(`/_all_dbs?start_key="${db}"&limit=1`)).body, [db]);
});

test("basics: Database name with '+' should encode to '+'", async () => {
  await withConfig('chttpd', 'decode_plus_to_space', 'false', async () => {
    const db = `random+test+db+${randomNumber()}`;
    let r = await c.put(`/${db}`);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.ok, true);

    r = await c.get(`/${db}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.db_name, db);
  });
});

test("basics: Database name with '%2B' should encode to '+'", async () => {
  await withConfig('chttpd', 'decode_plus_to_space', 'true', async () => {
    const n = randomNumber();
    const db = `random%2Btest%2Bdb2%2B${n}`;
    let r = await c.put(`/${db}`);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.ok, true);

    r = await c.get(`/${db}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.db_name, `random+test+db2+${n}`);
  });
});

test("basics: '+' in document name should encode to '+'", async () => {
  await withConfig('chttpd', 'decode_plus_to_space', 'false', async () => {
    const db = await mkdb('plus-doc');
    const r = await c.put(`/${db}/test+doc`, {});
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.id, 'test+doc');
  });
});

test("basics: '+' in document name should encode to space", async () => {
  await withConfig('chttpd', 'decode_plus_to_space', 'true', async () => {
    const db = await mkdb('plus-space-doc');
    const r = await c.put(`/${db}/test+doc+2`, {});
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.id, 'test doc 2');
  });
});

test('basics: Empty database should have zero docs', async () => {
  const db = await mkdb('empty');
  assert.equal((await c.get(`/${db}`)).body.doc_count, 0, 'Empty doc count in empty db');
});

test('basics: Create a document and save it to the database', async () => {
  const db = await mkdb('create-doc');
  const r = await c.post(`/${db}`, { _id: '0', a: 1, b: 1 });
  assert.ok([201, 202].includes(r.status), 'Should be 201 created');
  assert.ok(r.body.id, 'Id should be present');
  assert.ok(r.body.rev, 'Rev should be present');

  const r2 = await c.get(`/${db}/${r.body.id}`);
  assert.equal(r2.body._id, r.body.id, 'Ids should match');
  assert.equal(r2.body._rev, r.body.rev, 'Revs should match');
});

test('basics: Revs info status is good', async () => {
  const db = await mkdb('revs-info');
  await createDoc(db, sampleDocFoo());
  const r = await c.get(`/${db}/foo?revs_info=true`);
  assert.equal(r.body._revs_info[0].status, 'available', 'Revs info is available');
});

test('basics: A document read with etag works', async () => {
  const db = await mkdb('etag');
  const created = await createDoc(db, sampleDocFoo());
  const etag = `"${created.body.rev}"`;
  const r = await c.get(`/${db}/foo`, { headers: { 'If-None-Match': etag } });
  assert.equal(r.status, 304, 'Should be 304 Not Modified');
  assert.equal(r.headers['content-length'], '0', 'Should have zero content length');
  assert.equal(r.text, '', 'Should have an empty body');
});

test('basics: Make sure you can do a seq=true option', async () => {
  const db = await mkdb('local-seq');
  await createDoc(db, sampleDocFoo());
  const r = await c.get(`/${db}/foo?local_seq=true`);
  assert.equal(r.body._local_seq, 1, 'Local seq value == 1');
});

test('basics: Can create several documents', async () => {
  const db = await mkdb('several');
  assert.ok((await c.post(`/${db}`, { _id: '1', a: 2, b: 4 })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: '2', a: 3, b: 9 })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: '3', a: 4, b: 16 })).body.ok);

  await retryUntil('doc_count 3', async () => (await c.get(`/${db}`)).body.doc_count === 3);
});

test('basics: Regression test for COUCHDB-954', { skip: 'tagged :pending in the original' }, async () => {
  const db = await mkdb('couchdb-954');
  const doc: Record<string, unknown> = { _id: 'COUCHDB-954', a: 1 };

  const r1 = await c.post(`/${db}`, doc);
  assert.ok(r1.body.ok);
  const oldRev = r1.body.rev;

  doc._rev = oldRev;
  const r2 = await c.post(`/${db}`, doc);
  assert.ok(r2.body.ok);
  // The original's open_revs checks are commented out there ("TODO: enable chunked encoding").
});

test('basics: Simple map functions', async () => {
  const db = await mkdb('simple-map');
  const mapFun = 'function(doc) { if (doc.a==4) { emit(null, doc.b); } }';
  const redFun = 'function(keys, values) { return sum(values); }';
  const mapDoc = { views: { baz: { map: mapFun } } };
  const redDoc = { views: { baz: { map: mapFun, reduce: redFun } } };

  // Bootstrap database and ddoc
  assert.ok((await c.post(`/${db}`, { _id: '0', a: 1, b: 1 })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: '1', a: 2, b: 4 })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: '2', a: 3, b: 9 })).body.ok);
  assert.ok((await c.post(`/${db}`, { _id: '3', a: 4, b: 16 })).body.ok);
  assert.ok((await c.put(`/${db}/_design/foo`, mapDoc)).body.ok);
  // `w=3` is a cluster write quorum; a single node takes it as given.
  assert.ok((await c.put(`/${db}/_design/bar?w=3`, redDoc)).body.ok);
  assert.equal((await c.get(`/${db}`)).body.doc_count, 6);

  // Initial view query test
  let r = await c.get(`/${db}/_design/foo/_view/baz`);
  assert.equal(r.body.total_rows, 1);
  assert.equal(r.body.rows[0].value, 16);

  // Modified doc and test for updated view results
  let doc0 = (await c.get(`/${db}/0`)).body;
  doc0 = { ...doc0, a: 4 };
  assert.ok((await c.put(`/${db}/0`, doc0)).body.ok);

  await retryUntil('2 rows', async () => (await c.get(`/${db}/_design/foo/_view/baz`)).body.total_rows === 2);

  // Write 2 more docs and test for updated view results
  assert.ok((await c.post(`/${db}`, { a: 3, b: 9 })).body.ok);
  assert.ok((await c.post(`/${db}`, { a: 4, b: 16 })).body.ok);

  await retryUntil('3 rows', async () => (await c.get(`/${db}/_design/foo/_view/baz`)).body.total_rows === 3);

  assert.equal((await c.get(`/${db}`)).body.doc_count, 8);

  // Test reduce function
  r = await c.get(`/${db}/_design/bar/_view/baz`);
  assert.equal(r.body.rows[0].value, 33);

  // Delete doc and test for updated view results
  doc0 = (await c.get(`/${db}/0`)).body;
  assert.ok((await c.del(`/${db}/0?rev=${doc0._rev}`)).body.ok);

  await retryUntil('2 rows again', async () => (await c.get(`/${db}/_design/foo/_view/baz`)).body.total_rows === 2);

  assert.equal((await c.get(`/${db}`)).body.doc_count, 7);
  assert.equal((await c.get(`/${db}/0`)).status, 404);
  assert.notEqual((await c.get(`/${db}/0?rev=${doc0._rev}`)).status, 404);
});

test('basics: POST doc response has a Location header', async () => {
  const db = await mkdb('post-location');
  const r = await c.post(`/${db}`, { foo: 'bar' });
  assert.ok(r.body.ok);
  const loc = r.headers.location as string | undefined;
  assert.ok(loc, 'should have a Location header');
  const locs = loc.split('/').reverse();
  assert.equal(locs[0], r.body.id);
  assert.equal(locs[1], db);
});

test("basics: POST doc with an _id field isn't overwritten by uuid", async () => {
  const db = await mkdb('post-id');
  const r = await c.post(`/${db}`, { _id: 'oppossum', yar: 'matey' });
  assert.ok(r.body.ok);
  assert.equal(r.body.id, 'oppossum');
  assert.equal((await c.get(`/${db}/oppossum`)).body.yar, 'matey');
});

test('basics: PUT doc has a Location header', { skip: 'tagged :pending in the original' }, async () => {
  const db = await mkdb('put-location');
  const r = await c.put(`/${db}/newdoc`, { a: 1 });
  assert.ok(String(r.headers.location).endsWith(`/${db}/newdoc`));
  assert.ok(String(r.headers.location).startsWith('http'));
});

test("basics: DELETE'ing a non-existent doc should 404", async () => {
  const db = await mkdb('delete-missing');
  assert.equal((await c.del(`/${db}/doc-does-not-exist`)).status, 404);
});

test('basics: Check for invalid document members', async () => {
  const db = await mkdb('invalid-members');
  const badDocs: [string, Record<string, unknown>][] = [
    ['goldfish', { _zing: 4 }],
    ['zebrafish', { _zoom: 'hello' }],
    ['mudfish', { zane: 'goldfish', _fan: 'something smells delicious' }],
    ['tastyfish', { _bing: { 'wha?': 'soda can' } }],
  ];
  // CouchDB 3 answers 400; CouchDB 1.6, which Settee follows, 500 (the same doc_validation error).
  for (const [id, doc] of badDocs) {
    let r = await c.put(`/${db}/${id}`, doc);
    assert.equal(r.status, 500, `PUT ${id}: ${r.text}`);
    assert.equal(r.body.error, 'doc_validation');

    r = await c.post(`/${db}`, doc);
    assert.equal(r.status, 500, `POST ${id}: ${r.text}`);
    assert.equal(r.body.error, 'doc_validation');
  }
});

test('basics: PUT error when body not an object', async () => {
  const db = await mkdb('put-array');
  const r = await c.raw('PUT', `/${db}/bar`, '[]');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, 'Document must be a JSON object');
});

test('basics: _bulk_docs POST error when body not an object', async () => {
  const db = await mkdb('bulk-array');
  const r = await c.raw('POST', `/${db}/_bulk_docs`, '[]');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, 'Request body must be a JSON object');
});

test("basics: _all_docs POST error when multi-get is not a {'key': [...]} structure", async () => {
  const db = await mkdb('all-docs-post');
  let r = await c.raw('POST', `/${db}/_all_docs`, '[]');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, 'Request body must be a JSON object');

  // CouchDB 3's reason is "`keys` body member must be an array."; Settee keeps CouchDB 1.6's.
  r = await c.post(`/${db}/_all_docs`, { keys: 1 });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, '`keys` member must be a array.');
});

test('basics: oops, the doc id got lost in code nirwana', async () => {
  const db = await mkdb('nirwana');
  const r = await c.del(`/${db}/?rev=foobarbaz`);
  assert.equal(r.status, 400, `should return a bad request: ${r.text}`);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, 'You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?');
});

test('basics: On restart, a request for creating an already existing db can not override', { skip: 'tagged :pending in the original (an empty TODO there)' }, async () => {
  assert.ok(true);
});

test('basics: Default headers are returned for doc with open_revs=all', async () => {
  const db = await mkdb('open-revs-head');
  const post = await c.post(`/${db}`, { foo: 'bar' });
  const id = post.body.id as string;
  const head = await c.head(`/${db}/${id}?open_revs=all`);
  assert.ok(head.headers['x-couch-request-id'], `X-Couch-Request-ID: ${JSON.stringify(head.headers)}`);
  assert.ok(head.headers['x-couchdb-body-time'], `X-CouchDB-Body-Time: ${JSON.stringify(head.headers)}`);
});

test('basics: request ID can be specified at the client', async () => {
  const uuid = 'E7498DE1-B661-42FA-943D-17F890143068';
  const r = await c.get('/', { headers: { 'X-Couch-Request-ID': uuid } });
  assert.equal(r.headers['x-couch-request-id'], uuid);
});

// ------------------------------------------------------------------ view_errors_test.exs

const document = () => ({ integer: 1, string: '1', array: [1, 2, 3] });

let ddocCounter = 0;
/** The originals' query: the map in a fresh design document, its view read (200), the ddoc then dropped. */
async function query(db: string, mapFun: string): Promise<any> {
  const ddocName = `_design/temp_${Date.now()}_${++ddocCounter}`;
  const ddoc = { _id: ddocName, language: 'javascript', views: { view: { map: `${mapFun} /* avoid race cond ${Date.now()} */` } } };
  let r = await c.put(`/${db}/${ddocName}`, ddoc);
  assert.equal(r.status, 201, r.text);
  r = await c.get(`/${db}/${ddocName}/_view/view`);
  assert.equal(r.status, 200, r.text);
  // The original deletes without a revision and ignores the answer.
  await c.del(`/${db}/${ddocName}`);
  return r.body;
}

/** The originals' create_view: a design document `_design/temp_N` with the map as view `view`. */
async function createView(db: string, mapFun: string): Promise<string> {
  const ddocName = `_design/temp_${++ddocCounter}`;
  await createDoc(db, { _id: ddocName, language: 'javascript', views: { view: { map: mapFun } } });
  return ddocName;
}

test('view_errors: emit undefined key results as null', async () => {
  const db = await mkdb('ve-undef-key');
  await createDoc(db, document());
  const mapFun = 'function(doc) {\n  emit(doc.undef, null);\n}\n';
  // emitting a key value that is undefined should result in that row
  // being included in the view results as null
  const results = await query(db, mapFun);
  assert.equal(results.total_rows, 1);
  assert.equal(results.rows[0].key, null);
});

test('view_errors: exception in map function', async () => {
  const db = await mkdb('ve-map-throws');
  await createDoc(db, document());
  const mapFun = 'function(doc) {\n  doc.undef(); // throws an error\n}\n';
  // if a view function throws an exception, its results are not included in
  // the view index, but the view does not itself raise an error
  const results = await query(db, mapFun);
  assert.equal(results.total_rows, 0);
});

test('view_errors: emit undefined value results as null', async () => {
  const db = await mkdb('ve-undef-value');
  await createDoc(db, document());
  const mapFun = 'function(doc) {\n  emit([doc._id, doc.undef], null);\n}\n';
  // if a view function includes an undefined value in the emitted key or
  // value, it is treated as null
  const results = await query(db, mapFun);
  assert.equal(results.total_rows, 1);
  assert.equal(results.rows[0].key[1], null);
});

test('view_errors: query view with invalid params', async () => {
  const db = await mkdb('ve-invalid-params');
  await createDoc(db, document());
  const body = { language: 'javascript', map: 'function(doc){emit(doc.integer)}' };

  // querying a view with invalid params should give a resonable error message
  let r = await c.post(`/${db}/_all_docs?startkey=foo`, body, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.body?.error, 'bad_request', `${r.status} ${r.text}`);

  r = await c.post(`/${db}/_all_docs`, body, { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(r.status, 415, r.text);
});

test('view_errors: query parse error', async () => {
  const db = await mkdb('ve-parse');
  let mapFun = 'function(doc) {\n  emit(doc.integer, doc.integer);\n}\n';
  let ddocName = await createView(db, mapFun);

  let r = await c.get(`/${db}/${ddocName}/_view/view?group=true`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');

  mapFun = 'function() {emit(null, null)}';
  ddocName = await createView(db, mapFun);

  r = await c.get(`/${db}/${ddocName}/_view/view?startkey=2&endkey=1`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');
  assert.ok(String(r.body.reason).includes('No rows can match'), r.text);

  const designDoc = {
    _id: '_design/test',
    language: 'javascript',
    views: {
      no_reduce: { map: 'function(doc) {emit(doc._id, null);}' },
      with_reduce: {
        map: 'function (doc) {emit(doc.integer, doc.integer)};',
        reduce: 'function (keys, values) { return sum(values); };',
      },
    },
  };
  await createDoc(db, designDoc);

  r = await c.get(`/${db}/_design/test/_view/no_reduce?group=true`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');

  r = await c.get(`/${db}/_design/test/_view/no_reduce?group_level=1`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');

  r = await c.get(`/${db}/_design/test/_view/no_reduce?reduce=true`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');

  r = await c.get(`/${db}/_design/test/_view/no_reduce?reduce=false`);
  assert.equal(r.status, 200, r.text);

  r = await c.get(`/${db}/_design/test/_view/with_reduce?group=true&reduce=false`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');

  r = await c.get(`/${db}/_design/test/_view/with_reduce?group_level=1&reduce=false`);
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'query_parse_error');
});

test('view_errors: infinite loop', async () => {
  const db = await mkdb('ve-infinite');
  await createDoc(db, document());
  const designDoc3 = {
    _id: '_design/infinite',
    language: 'javascript',
    views: { infinite_loop: { map: 'function(doc) {while(true){emit(doc,doc);}};' } },
  };
  await createDoc(db, designDoc3);

  const r = await c.get(`/${db}/_design/infinite/_view/infinite_loop`);
  assert.equal(r.status, 500, r.text.slice(0, 300));
  // The original accepts any of three names: which limit (memory or one of two timeouts) fires first is a race.
  const errName = r.body?.error;
  assert.ok(['os_process_error', 'timeout', 'InternalError'].includes(errName), r.text.slice(0, 300));
});

test('view_errors: error responses for invalid multi-get bodies', async () => {
  const db = await mkdb('ve-multi-get');
  const designDoc = {
    _id: '_design/test',
    language: 'javascript',
    views: {
      no_reduce: { map: 'function(doc) {emit(doc._id, null);}' },
      with_reduce: {
        map: 'function (doc) {emit(doc.integer, doc.integer)};',
        reduce: 'function (keys, values) { return sum(values); };',
      },
    },
  };
  await createDoc(db, designDoc);

  let r = await c.raw('POST', `/${db}/_design/test/_view/no_reduce`, '[]');
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, 'Request body must be a JSON object');

  // CouchDB 3's reason is "`keys` member must be an array."; Settee keeps CouchDB 1.6's.
  r = await c.post(`/${db}/_design/test/_view/no_reduce`, { keys: 1 });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error, 'bad_request');
  assert.equal(r.body.reason, '`keys` member must be a array.');
});

test('view_errors: reduce overflow error', async () => {
  const db = await mkdb('ve-overflow');
  await createDoc(db, document());
  const designDoc2 = {
    _id: '_design/testbig',
    language: 'javascript',
    views: {
      reduce_too_big: {
        map: 'function (doc) {emit(doc.integer, doc.integer)};',
        reduce: "function (keys, values) { var chars = []; for (var i=0; i < 1000; i++) {chars.push('wazzap');};return chars; };",
      },
    },
  };
  await createDoc(db, designDoc2);

  // if the reduce grows to fast, throw an overflow error. CouchDB 3 puts it in a row of a 200;
  // CouchDB 1.6, which Settee follows, answers it as a 500.
  const r = await c.get(`/${db}/_design/testbig/_view/reduce_too_big`);
  assert.equal(r.status, 500, r.text.slice(0, 300));
  assert.equal(r.body.error, 'reduce_overflow_error');
});

test('view_errors: temporary view should give error message', async () => {
  // CouchDB 3 has no temporary views (410 gone); CouchDB 1.6, which Settee follows, runs them.
  const db = await mkdb('ve-temp-view');
  await createDoc(db, document());
  const r = await c.post(`/${db}/_temp_view`, { language: 'javascript', map: 'function(doc){emit(doc.integer)}' }, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual(r.body.rows.map((row: { key: number }) => row.key), [1]);
});
