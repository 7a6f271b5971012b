/**
 * CouchDB 1.6's answers where a review of the spec against its sources found Settee answering
 * otherwise (couch_httpd_db, couch_mrview_http, couch_httpd_auth, couch_users_db, render.js,
 * couch_index_updater): unknown `_` document ids, malformed bodies, query flags, the
 * `_design%2F` redirect, session logins without a form, user passwords, show errors, and
 * indexer tasks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile, startServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { basic, defineAdmin } from '../helpers/auth.js';
import { waitFor } from '../helpers/wait.js';

const { server, c } = await serverForFile();

async function freshDb(name: string): Promise<void> {
  await c.del(`/${name}`);
  assert.equal((await c.put(`/${name}`)).status, 201);
}

test('an unknown `_` name under a database is a document id: reading it finds nothing, writing it is refused', async () => {
  await freshDb('a16-underscore');
  for (const r of [await c.get('/a16-underscore/_nonexistent'), await c.copy('/a16-underscore/_nonexistent', { headers: { Destination: 'x' } }), await c.get('/a16-underscore/_nonexistent/att')]) {
    assert.equal(r.status, 404, r.text);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'missing' });
  }
  assert.equal((await c.head('/a16-underscore/_nonexistent')).status, 404);
  const put = await c.put('/a16-underscore/_nonexistent', {});
  assert.equal(put.status, 400);
  assert.deepEqual(put.body, { error: 'bad_request', reason: 'Only reserved document ids may start with underscore.' });
  // The handlers CouchDB has under those names still answer.
  assert.equal((await c.get('/a16-underscore/_all_docs')).status, 200);
});

test('a body that is not JSON is 400 bad_request, reason invalid_json', async () => {
  await freshDb('a16-json');
  for (const [method, path] of [['PUT', '/a16-json/d'], ['POST', '/a16-json'], ['POST', '/a16-json/_bulk_docs'], ['PUT', '/a16-json/_revs_limit']]) {
    const r = await c.request(method!, path!, { raw: '{bad', headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' }, `${method} ${path}`);
  }
});

test('document and _changes flags: only `true` sets one, other values are ignored', async () => {
  await freshDb('a16-flags');
  const rev = (await c.put('/a16-flags/d', { a: 1 })).body.rev as string;
  await c.post('/a16-flags/_bulk_docs', { docs: [{ _id: 'd', _rev: '1-0123456789abcdef0123456789abcdef', b: 2 }], new_edits: false });
  const on = await c.get('/a16-flags/d?conflicts=true');
  assert.ok(Array.isArray(on.body._conflicts), on.text);
  for (const value of ['1', 'yes', 'TRUE']) {
    const r = await c.get(`/a16-flags/d?conflicts=${value}&revs=${value}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body._conflicts, undefined, value);
    assert.equal(r.body._revisions, undefined, value);
  }
  // new_edits=maybe keeps new edits on: a write without the current revision conflicts.
  assert.equal((await c.put('/a16-flags/d?new_edits=maybe', { c: 3 })).status, 409);
  assert.equal((await c.put('/a16-flags/d?new_edits=maybe', { _rev: rev, c: 3 })).status, 201);
  const changes = await c.get('/a16-flags/_changes?descending=yes&include_docs=1');
  assert.equal(changes.status, 200, changes.text);
  assert.equal(changes.body.results[0].doc, undefined);
});

test('view and _all_docs booleans take any case; a bad one is named by its value', async () => {
  await freshDb('a16-bool');
  await c.post('/a16-bool/_bulk_docs', { docs: [{ _id: 'a' }, { _id: 'b' }] });
  const upper = await c.get('/a16-bool/_all_docs?descending=TRUE&include_docs=True');
  assert.deepEqual(upper.body.rows.map((r: { id: string }) => r.id), ['b', 'a']);
  assert.equal(upper.body.rows[0].doc._id, 'b');
  const bad = await c.get('/a16-bool/_all_docs?descending=maybe');
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, { error: 'query_parse_error', reason: 'Invalid boolean parameter: "maybe"' });
});

test('a GET through `_design%2F` is redirected to the plain path, query string kept', async () => {
  await freshDb('a16-design');
  await c.put('/a16-design/_design/x', { views: { v: { map: 'function (doc) { emit(doc._id, null); }' } } });
  const doc = await c.get('/a16-design/_design%2Fx?revs=true');
  assert.equal(doc.status, 301);
  assert.equal(doc.headers['location'], `${server.url}a16-design/_design/x?revs=true`);
  const view = await c.get('/a16-design/_design%2fx/_view/v');
  assert.equal(view.status, 301);
  assert.equal(view.headers['location'], `${server.url}a16-design/_design/x/_view/v`);
  // Other methods reach the document as before.
  assert.equal((await c.head('/a16-design/_design%2Fx')).status, 200);
});

test('database info reports CouchDB 1.6\'s disk_format_version', async () => {
  await freshDb('a16-info');
  assert.equal((await c.get('/a16-info')).body.disk_format_version, 6);
});

test('a login whose body is neither a form nor JSON carries no credentials: 401', async () => {
  const r = await c.post('/_session', undefined, { raw: 'name=a&password=b', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(r.status, 401, r.text);
  assert.deepEqual(r.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
});

test('a JSON login is decoded whatever it holds: an empty body is invalid_json, a value that is not a string an invalid body', async () => {
  for (const raw of ['', '  ']) {
    const r = await c.post('/_session', undefined, { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${JSON.stringify(raw)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' });
  }
  // couch_httpd_auth:handle_session_req turns every value into a list with binary_to_list (1.6
  // crashes, 500 badarg, on any other): a 400 here.
  for (const body of [{ name: 1, password: 'x' }, { name: 'a', password: null }, { name: 'a', password: 'b', remember: true }]) {
    const r = await c.post('/_session', body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'Login fields must be strings' });
  }
  const form = await c.post('/_session', undefined, { raw: '', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 401, form.text);
});

test('a login redirects only to a `next` in its query string: one in the body is just a field', async () => {
  const admin = await c.put('/_users/org.couchdb.user:nexter', { _id: 'org.couchdb.user:nexter', name: 'nexter', type: 'user', roles: [], password: 'pw' });
  assert.equal(admin.status, 201, admin.text);
  const form = await c.post('/_session', undefined, { raw: 'name=nexter&password=pw&next=%2F_all_dbs', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 200, form.text);
  assert.equal(form.headers['location'], undefined);
  const body = await c.post('/_session', { name: 'nexter', password: 'pw', next: '/_all_dbs' });
  assert.equal(body.status, 200, body.text);
  const query = await c.post('/_session?next=%2F_all_dbs', { name: 'nexter', password: 'pw' });
  assert.equal(query.status, 302, query.text);
  assert.match(String(query.headers['location']), /\/_all_dbs$/);
});

test('user documents: a password that is not a string is never stored; password_sha needs a salt, in CouchDB\'s words', async () => {
  const number = await c.put('/_users/org.couchdb.user:numeric', { _id: 'org.couchdb.user:numeric', name: 'numeric', type: 'user', roles: [], password: 123 });
  assert.equal(number.status, 400, number.text);
  assert.equal((await c.get('/_users/org.couchdb.user:numeric')).status, 404);
  const sha = await c.put('/_users/org.couchdb.user:sha', { _id: 'org.couchdb.user:sha', name: 'sha', type: 'user', roles: [], password_sha: 'abc' });
  assert.equal(sha.status, 403, sha.text);
  assert.deepEqual(sha.body, { error: 'forbidden', reason: 'Users with password_sha must have a salt.See /_utils/script/couch.js for example code.' });
});

test('a show, list or update function that throws something other than an error is a render_error', async () => {
  await freshDb('a16-render');
  await c.put('/a16-render/d', { a: 1 });
  await c.put('/a16-render/_design/r', {
    shows: { str: 'function (doc, req) { throw "no"; }', obj: 'function (doc, req) { throw { gone: true }; }', named: 'function (doc, req) { throw { error: "teapot", reason: "short" }; }' },
    updates: { str: 'function (doc, req) { throw "no"; }' },
    lists: { str: 'function (head, req) { throw "no"; }' },
    views: { v: { map: 'function (doc) { emit(doc._id, null); }' } },
  });
  for (const path of ['/a16-render/_design/r/_show/str/d', '/a16-render/_design/r/_show/obj/d', '/a16-render/_design/r/_list/str/v']) {
    const r = await c.get(path);
    assert.equal(r.status, 500, `${path}: ${r.text}`);
    assert.equal(r.body.error, 'render_error', path);
    assert.match(r.body.reason, /^function raised error: /, path);
  }
  const update = await c.post('/a16-render/_design/r/_update/str/d', {});
  assert.equal(update.status, 500);
  assert.equal(update.body.error, 'render_error');
  // An error that names itself keeps its name.
  const named = await c.get('/a16-render/_design/r/_show/named/d');
  assert.deepEqual([named.status, named.body.error, named.body.reason], [500, 'teapot', 'short']);
});

test('a view build is an indexer task in _active_tasks, and a query waiting for it a waiting client', async () => {
  await freshDb('a16-indexer');
  const docs = Array.from({ length: 300 }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, n: i }));
  assert.equal((await c.post('/a16-indexer/_bulk_docs', { docs })).status, 201);
  // A map slow enough (about 5 ms a document) that the build is seen under way.
  await c.put('/a16-indexer/_design/slow', {
    views: { v: { map: 'function (doc) { var end = Date.now() + 5; while (Date.now() < end) {} emit(doc.n, null); }' } },
  });
  const query = c.get('/a16-indexer/_design/slow/_view/v?limit=1');
  let finished = false;
  void query.then(() => { finished = true; });
  const seen = await waitFor('the indexer task', async () => {
    if (finished) return { task: undefined, info: undefined };
    const tasks = (await c.get('/_active_tasks')).body as Record<string, unknown>[];
    const task = tasks.find((t) => t['type'] === 'indexer' && t['database'] === 'a16-indexer');
    if (!task) return undefined;
    const info = (await c.get('/a16-indexer/_design/slow/_info')).body.view_index as Record<string, unknown>;
    return { task, info };
  });
  assert.ok(seen.task, 'the build ended before an indexer task was seen');
  assert.equal(seen.task['design_document'], '_design/slow');
  for (const field of ['pid', 'progress', 'changes_done', 'total_changes', 'started_on', 'updated_on']) assert.ok(field in seen.task, field);
  assert.equal(seen.task['total_changes'], 301);
  assert.equal(seen.info!['updater_running'], true);
  assert.equal(seen.info!['waiting_clients'], 1);
  assert.equal((await query).status, 200);
  const after = (await c.get('/_active_tasks')).body as Record<string, unknown>[];
  assert.equal(after.filter((t) => t['type'] === 'indexer').length, 0);
  assert.equal((await c.get('/a16-indexer/_design/slow/_info')).body.view_index.waiting_clients, 0);

  // An update counts documents changed, not sequences passed (couch_db:count_changes_since):
  // 100 documents edited three times each are 100 changes.
  let current = (await c.get('/a16-indexer/_all_docs?startkey=%22d%22&limit=100')).body.rows.map((r: { id: string; value: { rev: string } }) => ({ _id: r.id, _rev: r.value.rev }));
  for (let round = 0; round < 3; round++) {
    const saved = await c.post('/a16-indexer/_bulk_docs', { docs: current.map((d: { _id: string; _rev: string }) => ({ ...d, n: round })) });
    current = saved.body.map((r: { id: string; rev: string }) => ({ _id: r.id, _rev: r.rev }));
  }
  const update = c.get('/a16-indexer/_design/slow/_view/v?limit=1');
  let updated = false;
  void update.then(() => { updated = true; });
  const task = await waitFor('the update\'s indexer task', async () => {
    if (updated) return { total: undefined };
    const tasks = (await c.get('/_active_tasks')).body as Record<string, unknown>[];
    const t = tasks.find((x) => x['type'] === 'indexer' && x['database'] === 'a16-indexer');
    return t ? { total: t['total_changes'] } : undefined;
  });
  assert.equal(task.total, 100, 'the update ended before its task was seen');
  assert.equal((await update).status, 200);
});

test('view and _all_docs parameters are refused with couch_mrview\'s reasons', async () => {
  await freshDb('a16-reasons');
  await c.put('/a16-reasons/_design/d', {
    views: { map: { map: 'function (doc) { emit(doc._id, 1); }' }, red: { map: 'function (doc) { emit(doc._id, 1); }', reduce: '_sum' } },
  });
  const reason = async (path: string) => {
    const r = await c.get(path);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.equal(r.body.error, 'query_parse_error', path);
    return r.body.reason as string;
  };
  const view = '/a16-reasons/_design/d/_view';
  assert.equal(await reason(`${view}/map?reduce=true`), 'Reduce is invalid for map-only views.');
  assert.equal(await reason(`${view}/red?include_docs=true`), '`include_docs` is invalid for reduce');
  assert.equal(await reason(`${view}/map?keys=1`), '`keys` must be an array of strings.');
  assert.equal(await reason(`${view}/map?stale=bad`), 'Invalid value for `stale`.');
  assert.equal(await reason('/a16-reasons/_all_docs?limit=x'), 'Invalid value for integer: "x"');
  assert.equal(await reason('/a16-reasons/_all_docs?limit=-1'), 'Invalid value for positive integer: "-1"');
  assert.equal(await reason('/a16-reasons/_all_docs?skip=-1'), 'Invalid value for positive integer: "-1"');
});

test('view and _all_docs query strings are read first, in order, as couch_mrview_http:parse_qs reads them', async () => {
  await freshDb('a16-parse-order');
  await c.put('/a16-parse-order/_design/d', { views: { map: { map: 'function (doc) { emit(doc._id, 1); }' } } });
  const answer = async (path: string, headers?: Record<string, string>) => {
    const r = await c.get(path, headers ? { headers } : undefined);
    return [r.status, r.body?.error, r.body?.reason];
  };
  const view = '/a16-parse-order/_design/d/_view';
  // A parameter that does not parse is answered before a view that does not exist.
  assert.deepEqual(await answer(`${view}/nope?limit=abc`), [400, 'query_parse_error', 'Invalid value for integer: "abc"']);
  assert.deepEqual(await answer(`${view}/nope?limit=1`), [404, 'not_found', 'missing_named_view']);
  // The first parameter given is the first read, and every repeat of one is read.
  assert.deepEqual(await answer(`${view}/map?skip=-1&limit=abc`), [400, 'query_parse_error', 'Invalid value for positive integer: "-1"']);
  assert.deepEqual(await answer(`${view}/map?limit=abc&limit=5`), [400, 'query_parse_error', 'Invalid value for integer: "abc"']);
  assert.deepEqual(await answer('/a16-parse-order/_all_docs?descending=maybe&descending=true'), [400, 'query_parse_error', 'Invalid boolean parameter: "maybe"']);
  // Reading comes before validate_args' checks.
  assert.deepEqual(await answer(`${view}/map?keys=1&limit=x`), [400, 'query_parse_error', 'Invalid value for integer: "x"']);
  // _all_docs checks its parameters before its ETag: a bad query is never a 304.
  const etag = (await c.get('/a16-parse-order/_all_docs')).headers.etag as string;
  assert.equal((await c.get('/a16-parse-order/_all_docs', { headers: { 'If-None-Match': etag } })).status, 304);
  assert.deepEqual(await answer('/a16-parse-order/_all_docs?limit=x', { 'If-None-Match': etag }), [400, 'query_parse_error', 'Invalid value for integer: "x"']);
  assert.deepEqual(await answer('/a16-parse-order/_all_docs?reduce=true', { 'If-None-Match': etag }), [400, 'query_parse_error', 'Reduce is invalid for map-only views.']);
});

test('integer parameters are a sign and digits only, as Erlang\'s list_to_integer reads them', async () => {
  await freshDb('a16-integers');
  await c.post('/a16-integers/_bulk_docs', { docs: [{ _id: 'a' }, { _id: 'b' }] });
  await c.put('/a16-integers/_design/d', { views: { map: { map: 'function (doc) { emit(doc._id, 1); }' } } });
  for (const [query, value] of [['limit=%201', ' 1'], ['limit=1%20', '1 '], ['skip=%091', '\t1'], ['limit=1.0', '1.0']]) {
    for (const path of [`/a16-integers/_all_docs?${query}`, `/a16-integers/_design/d/_view/map?${query}`]) {
      const r = await c.get(path);
      assert.equal(r.status, 400, path);
      assert.deepEqual(r.body, { error: 'query_parse_error', reason: `Invalid value for integer: ${JSON.stringify(value)}` }, path);
    }
  }
  assert.equal((await c.get('/a16-integers/_all_docs?limit=%2B1')).body.rows.length, 1);
  assert.equal((await c.get('/a16-integers/_design/d/_view/map?skip=-0')).body.rows.length, 2);
});

test('an empty `keys` goes with key, startkey and endkey on a view: nothing is selected, but the range is still checked', async () => {
  await freshDb('a16-empty-keys');
  await c.post('/a16-empty-keys/_bulk_docs', { docs: [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }] });
  await c.put('/a16-empty-keys/_design/d', { views: { map: { map: 'function (doc) { emit(doc.n, 1); }' }, red: { map: 'function (doc) { emit(doc.n, 1); }', reduce: '_sum' } } });
  const view = '/a16-empty-keys/_design/d/_view';
  for (const query of ['keys=%5B%5D&startkey=1', 'keys=%5B%5D&key=1', 'keys=%5B%5D&startkey=1&endkey=2']) {
    const r = await c.get(`${view}/map?${query}`);
    assert.equal(r.status, 200, `${query}: ${r.text}`);
    assert.deepEqual(r.body, { total_rows: 2, offset: 0, rows: [] }, query);
  }
  const posted = await c.post(`${view}/map?endkey=1`, { keys: [] });
  assert.deepEqual(posted.body, { total_rows: 2, offset: 0, rows: [] });
  assert.deepEqual((await c.get(`${view}/red?keys=%5B%5D&key=1&group=true`)).body, { rows: [] });
  const reversed = await c.get(`${view}/map?keys=%5B%5D&startkey=2&endkey=1`);
  assert.equal(reversed.status, 400);
  assert.deepEqual(reversed.body, { error: 'query_parse_error', reason: 'No rows can match your key range, reverse your start_key and end_key or set descending=true' });
  const notEmpty = await c.get(`${view}/map?keys=%5B1%5D&startkey=1`);
  assert.deepEqual(notEmpty.body, { error: 'query_parse_error', reason: '`keys` is incompatible with `key`, `start_key` and `end_key`' });
});

test('of several refused parameters, the first that couch_mrview_util:validate_args checks is named', async () => {
  await freshDb('a16-check-order');
  await c.put('/a16-check-order/_design/d', { views: { map: { map: 'function (doc) { emit(doc._id, 1); }' }, red: { map: 'function (doc) { emit(doc._id, 1); }', reduce: '_sum' } } });
  const reason = async (path: string) => {
    const r = await c.get(path);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    return r.body.reason as string;
  };
  const view = '/a16-check-order/_design/d/_view';
  assert.equal(await reason(`${view}/map?keys=1&reduce=true`), 'Reduce is invalid for map-only views.');
  assert.equal(await reason(`${view}/red?keys=%5B1%5D&include_docs=true`), 'Multi-key fetchs for reduce views must use `group=true`');
  assert.equal(await reason(`${view}/red?keys=%5B1%5D&startkey=1`), 'Multi-key fetchs for reduce views must use `group=true`');
  assert.equal(await reason(`${view}/red?include_docs=true&conflicts=true`), '`include_docs` is invalid for reduce');
  assert.equal(await reason('/a16-check-order/_all_docs?keys=1&reduce=true'), 'Reduce is invalid for map-only views.');
  assert.equal(await reason('/a16-check-order/_all_docs?keys=%5B%22a%22%5D&startkey=%22a%22&group=true'), '`keys` is incompatible with `key`, `start_key` and `end_key`');
});

test('a query string\'s `keys` replaces the keys of a POST body', async () => {
  await freshDb('a16-keys-both');
  await c.post('/a16-keys-both/_bulk_docs', { docs: [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }] });
  await c.put('/a16-keys-both/_design/d', { views: { map: { map: 'function (doc) { emit(doc.n, 1); }' } } });
  const viewRows = (await c.post('/a16-keys-both/_design/d/_view/map?keys=%5B2%5D', { keys: [1] })).body.rows as { id: string }[];
  assert.deepEqual(viewRows.map((r) => r.id), ['b']);
  const docRows = (await c.post('/a16-keys-both/_all_docs?keys=%5B%22b%22%5D', { keys: ['a'] })).body.rows as { id: string }[];
  assert.deepEqual(docRows.map((r) => r.id), ['b']);
  const notArray = await c.post('/a16-keys-both/_design/d/_view/map?keys=2', { keys: [1] });
  assert.deepEqual(notArray.body, { error: 'query_parse_error', reason: '`keys` must be an array of strings.' });
});

test('a temporary view without a map function has no view to query: 404 missing_named_view, after its keys and query string are read', async () => {
  await freshDb('a16-temp-nomap');
  const missing = await c.post('/a16-temp-nomap/_temp_view', { language: 'javascript' });
  assert.equal(missing.status, 404, missing.text);
  assert.deepEqual(missing.body, { error: 'not_found', reason: 'missing_named_view' });
  const badKeys = await c.post('/a16-temp-nomap/_temp_view', { keys: 1 });
  assert.deepEqual([badKeys.status, badKeys.body], [400, { error: 'bad_request', reason: '`keys` member must be a array.' }]);
  const badLimit = await c.post('/a16-temp-nomap/_temp_view?limit=x', { reduce: '_count' });
  assert.deepEqual([badLimit.status, badLimit.body.reason], [400, 'Invalid value for integer: "x"']);
});

test('`count`, the old name of `limit`, is refused by views and _all_docs', async () => {
  await freshDb('a16-count');
  await c.put('/a16-count/_design/d', { views: { map: { map: 'function (doc) { emit(doc._id, 1); }' } } });
  for (const path of ['/a16-count/_design/d/_view/map?count=1', '/a16-count/_all_docs?count=1']) {
    const r = await c.get(path);
    assert.equal(r.status, 400, path);
    assert.deepEqual(r.body, { error: 'query_parse_error', reason: 'QS param `count` is not `limit`' }, path);
  }
});

test('a POST to _changes must say its body is JSON', async () => {
  await freshDb('a16-changes-post');
  const form = await c.post('/a16-changes-post/_changes?filter=_doc_ids', undefined, { raw: '{"doc_ids":["a"]}', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415, form.text);
  assert.equal(form.body.error, 'bad_content_type');
  assert.equal((await c.post('/a16-changes-post/_changes?filter=_doc_ids', { doc_ids: ['a'] })).status, 200);
});

test('_changes?filter=_view hands deletions to the map too: a tombstone the map emits for passes', async () => {
  await freshDb('a16-view-filter');
  await c.put('/a16-view-filter/_design/f', {
    views: { all: { map: 'function (doc) { emit(doc._id, null); }' }, typed: { map: 'function (doc) { if (doc.type) emit(doc._id, null); }' } },
  });
  const rev = (await c.put('/a16-view-filter/a', { type: 'x' })).body.rev as string;
  await c.put('/a16-view-filter/b', { type: 'x' });
  assert.equal((await c.del(`/a16-view-filter/a?rev=${rev}`)).status, 200);
  const all = (await c.get('/a16-view-filter/_changes?filter=_view&view=f/all')).body.results as { id: string; deleted?: boolean }[];
  assert.deepEqual(all.filter((r) => !r.id.startsWith('_design/')).map((r) => [r.id, r.deleted ?? false]), [['b', false], ['a', true]]);
  const typed = (await c.get('/a16-view-filter/_changes?filter=_view&view=f/typed')).body.results as { id: string }[];
  assert.deepEqual(typed.map((r) => r.id), ['b']);
});

test('a live feed asked for descending order starts at the current sequence and waits for what comes next', async () => {
  await freshDb('a16-live-desc');
  await c.put('/a16-live-desc/old', {});
  const quiet = await c.get('/a16-live-desc/_changes?feed=longpoll&descending=true&timeout=200');
  assert.deepEqual(quiet.body, { results: [], last_seq: 1 });
  const waiting = c.get('/a16-live-desc/_changes?feed=longpoll&descending=true&timeout=30000');
  // The feed is open once the server counts it; then a write ends it with that one change.
  await waitFor('the open feed', async () => (await c.get('/_stats/httpd/clients_requesting_changes')).body.httpd.clients_requesting_changes.current >= 1);
  await c.put('/a16-live-desc/new', {});
  const woken = await waiting;
  assert.deepEqual(woken.body.results.map((r: { id: string }) => r.id), ['new']);
});

test('_revs_diff and _missing_revs list an unknown document even when asked for no revisions', async () => {
  await freshDb('a16-revsdiff');
  const rev = (await c.put('/a16-revsdiff/known', {})).body.rev as string;
  await c.put('/a16-revsdiff/whole', {});
  // couch_db:find_missing answers a document it cannot find with the revisions asked, none or
  // more; a known document only when some revision is missing.
  const diff = await c.post('/a16-revsdiff/_revs_diff', { ghost: [], known: [], whole: [] });
  assert.equal(diff.status, 200, diff.text);
  assert.deepEqual(diff.body, { ghost: { missing: [] } });
  const missing = await c.post('/a16-revsdiff/_missing_revs', { ghost: [], known: [rev] });
  assert.equal(missing.status, 200, missing.text);
  assert.deepEqual(missing.body.missing_revs, { ghost: [] });
});

test('_revs_diff, _missing_revs and _purge: a revision that is not a string is an invalid rev format', async () => {
  await freshDb('a16-revsmap');
  for (const path of ['_revs_diff', '_missing_revs', '_purge']) {
    for (const revs of [[1], ['1-abc', null], [{}]]) {
      const r = await c.post(`/a16-revsmap/${path}`, { d: revs });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(revs)}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'bad_request', reason: 'Invalid rev format' }, `${path} ${JSON.stringify(revs)}`);
    }
  }
});

test('_changes?filter= naming nothing (empty, or slashes only) filters nothing', async () => {
  await freshDb('a16-nofilter');
  await c.put('/a16-nofilter/a', {});
  await c.put('/a16-nofilter/b', {});
  for (const filter of ['', '/', '//']) {
    const r = await c.get(`/a16-nofilter/_changes?filter=${filter}`);
    assert.equal(r.status, 200, `${JSON.stringify(filter)}: ${r.text}`);
    assert.deepEqual(r.body.results.map((row: { id: string }) => row.id), ['a', 'b'], JSON.stringify(filter));
  }
  // One part, or three, is still no design document's filter.
  for (const filter of ['x', 'a/b/c']) {
    const r = await c.get(`/a16-nofilter/_changes?filter=${filter}`);
    assert.equal(r.status, 400, filter);
    assert.equal(r.body.reason, 'filter parameter must be of the form `designname/filtername`');
  }
});

test('_changes with a feed of another name is a normal feed, without the ETag only `normal` carries', async () => {
  await freshDb('a16-feedname');
  await c.put('/a16-feedname/a', {});
  const named = await c.get('/a16-feedname/_changes?feed=normal');
  assert.ok(named.headers['etag'], 'feed=normal carries the ETag');
  for (const feed of ['foo', '', 'Continuous']) {
    const r = await c.get(`/a16-feedname/_changes?feed=${feed}`);
    assert.equal(r.status, 200, `${JSON.stringify(feed)}: ${r.text}`);
    assert.deepEqual(r.body, named.body, JSON.stringify(feed));
    assert.equal(r.headers['etag'], undefined, JSON.stringify(feed));
  }
  // The ETag of a normal feed is no reason to answer another one with 304.
  const again = await c.get('/a16-feedname/_changes?feed=foo', { headers: { 'If-None-Match': named.headers['etag'] as string } });
  assert.equal(again.status, 200);
});

test("_security: names and roles that are not lists of strings are refused in CouchDB's words; readers count only without members", async () => {
  await freshDb('a16-security');
  const cases: [unknown, string][] = [
    [{ admins: { names: 'bob' } }, 'names must be a JSON list of strings'],
    [{ admins: { names: ['bob'], roles: [1] } }, 'roles must be a JSON list of strings'],
    [{ members: { names: null } }, 'names must be a JSON list of strings'],
    [{ readers: { roles: 'r' } }, 'roles must be a JSON list of strings'],
  ];
  for (const [body, reason] of cases) {
    const r = await c.put('/a16-security/_security', body);
    assert.equal(r.status, 500, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'unknown_error', reason }, JSON.stringify(body));
  }
  // With members given, the old name readers is not looked at (couch_db:get_members).
  const kept = { members: { names: ['mia'] }, readers: 'anything' };
  assert.equal((await c.put('/a16-security/_security', kept)).status, 200);
  assert.deepEqual((await c.get('/a16-security/_security')).body, kept);
});

test('_revs_limit: a float is no integer, an integer below 1 is couch_db\'s invalid_revs_limit', async () => {
  await freshDb('a16-revslimit');
  for (const raw of ['1.0', '1e3', '2E1']) {
    const r = await c.request('PUT', '/a16-revslimit/_revs_limit', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${raw}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'Rev limit has to be an integer' }, raw);
  }
  for (const raw of ['0', '-3']) {
    const r = await c.request('PUT', '/a16-revslimit/_revs_limit', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 500, `${raw}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'unknown_error', reason: 'invalid_revs_limit' }, raw);
  }
  assert.equal((await c.request('PUT', '/a16-revslimit/_revs_limit', { raw: ' 12\n', headers: { 'Content-Type': 'application/json' } })).status, 200);
  assert.equal((await c.get('/a16-revslimit/_revs_limit')).body, 12);
});

test('a body declared JSON is `application/json` exactly, with at most one parameter (couch_httpd:validate_ctype)', async () => {
  await freshDb('a16-ctype');
  const raw = JSON.stringify({ docs: [{}] });
  const post = (type: string) => c.request('POST', '/a16-ctype/_bulk_docs', { raw, headers: { 'Content-Type': type } });
  for (const type of ['application/json', 'application/json;charset=utf-8', 'application/json; charset=utf-8', 'application/json;']) {
    assert.equal((await post(type)).status, 201, type);
  }
  for (const type of ['Application/JSON', 'application/json;charset=utf-8;x=y', 'application/json ;charset=utf-8', 'application/jsonp']) {
    const r = await post(type);
    assert.equal(r.status, 415, `${type}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_content_type', reason: 'Content-Type must be application/json' });
  }
});

test('creating or deleting a database asks for a server admin before the name or a ?rev= is refused, as couch_httpd_db does', async () => {
  // Defining an admin ends admin party, so this test has a server of its own.
  const own = await startServer();
  try {
    await defineAdmin(own.url, 'boss', 'secret');
    const anyone = client(own.url);
    const bossly = client(own.url);
    const headers = basic('boss', 'secret');
    const admin = {
      put: (path: string) => bossly.put(path, undefined, { headers }),
      del: (path: string) => bossly.del(path, { headers }),
      request: (method: string, path: string) => bossly.request(method, path, { headers }),
    };
    for (const method of ['PUT', 'DELETE']) {
      const refused = await anyone.request(method, '/_unknown');
      assert.equal(refused.status, 401, `${method}: ${refused.text}`);
      assert.deepEqual(refused.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
      const illegal = await admin.request(method, '/_unknown');
      assert.equal(illegal.status, 400, `${method}: ${illegal.text}`);
      assert.equal(illegal.body.error, 'illegal_database_name');
    }
    // Reading such a name is refused by name, whoever asks.
    assert.equal((await anyone.get('/_unknown')).body.error, 'illegal_database_name');
    // A ?rev= on a database DELETE is a mistake CouchDB names before it checks the caller.
    assert.equal((await admin.put('/a16-rev-mistake')).status, 201);
    const mistake = await anyone.del('/a16-rev-mistake?rev=1-abc');
    assert.equal(mistake.status, 400, mistake.text);
    assert.equal(mistake.body.error, 'bad_request');
    assert.equal((await anyone.del('/a16-rev-mistake')).status, 401);
    assert.equal((await admin.del('/a16-rev-mistake')).status, 200);
  } finally {
    await own.stop();
  }
});

test('/_config answers a path or method it has no clause for with 405, whoever asks; then the caller must be a server admin', async () => {
  const own = await startServer();
  try {
    await defineAdmin(own.url, 'boss', 'secret');
    const anyone = client(own.url);
    const headers = basic('boss', 'secret');
    for (const [method, path] of [['PUT', '/_config'], ['PUT', '/_config/log'], ['DELETE', '/_config/log'], ['GET', '/_config/log/level/extra'], ['POST', '/_config/log']]) {
      const r = await anyone.request(method!, path!, method === 'PUT' || method === 'POST' ? { raw: '"x"' } : {});
      assert.equal(r.status, 405, `${method} ${path}: ${r.text}`);
      assert.equal(r.headers['allow'], 'GET,PUT,DELETE', `${method} ${path}`);
    }
    for (const [method, path] of [['GET', '/_config'], ['GET', '/_config/log'], ['GET', '/_config/log/level'], ['PUT', '/_config/log/level'], ['DELETE', '/_config/x/y']]) {
      const r = await anyone.request(method!, path!, method === 'PUT' ? { raw: '"info"' } : {});
      assert.equal(r.status, 401, `${method} ${path}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'unauthorized', reason: 'You are not a server admin.' });
    }
    assert.equal((await anyone.get('/_config/log/level', { headers })).status, 200);
    assert.equal((await anyone.put('/_config/a16/key', 'v', { headers })).status, 200);
    assert.equal((await anyone.del('/_config/a16/key', { headers })).status, 200);
  } finally {
    await own.stop();
  }
});

test('a POST that X-HTTP-Method-Override turns into a HEAD is answered as a GET, body and all (mochiweb strips bodies of real HEADs only)', async () => {
  const r = await c.post('/', undefined, { headers: { 'X-HTTP-Method-Override': 'HEAD' } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.couchdb, 'Welcome');
  const head = await c.head('/');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

test('an empty body where a JSON object is read is invalid_json, as couch_httpd:json_body_obj decodes before it looks at the shape', async () => {
  await freshDb('a16-empty');
  for (const [method, path] of [['POST', '/a16-empty/_bulk_docs'], ['POST', '/a16-empty/_revs_diff'], ['POST', '/a16-empty/_all_docs'], ['PUT', '/a16-empty/_security'], ['POST', '/_replicate'], ['POST', '/_log']]) {
    const r = await c.request(method!, path!, { raw: '', headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${method} ${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' }, `${method} ${path}`);
  }
  const array = await c.post('/a16-empty/_bulk_docs', []);
  assert.deepEqual(array.body, { error: 'bad_request', reason: 'Request body must be a JSON object' });
});

test("req.headers names headers as Erlang's HTTP parser does, joins repeated ones and lists them by name (json_req_obj over mochiweb's header table)", async () => {
  await freshDb('a16-req-headers');
  await c.put('/a16-req-headers/_design/h', {
    shows: { names: 'function (doc, req) { return { json: { names: Object.keys(req.headers), dup: req.headers["X-Dup"], accept: req.headers["Accept"] } }; }' },
    updates: { names: 'function (doc, req) { return [null, { json: { type: req.headers["Content-Type"], form: req.form } }]; }' },
  });
  const repeated = ['a', 'b'] as unknown as string; // node:http sends one header line per value
  const r = await c.get('/a16-req-headers/_design/h/_show/names', {
    headers: { accept: 'application/json', 'x-dup': repeated, 'X-CUSTOM-thing': '1', 'user-agent': 'ua' },
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    names: ['Accept', 'Connection', 'Host', 'User-Agent', 'X-Custom-Thing', 'X-Dup'],
    dup: 'a, b',
    accept: 'application/json',
  });
  const form = await c.post('/a16-req-headers/_design/h/_update/names', undefined, {
    raw: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.deepEqual(form.body, { type: 'application/x-www-form-urlencoded', form: { x: '1' } });
});

test("a show or update function's `json` answer is sent by couch_httpd:send_json: a newline after it, JSONP when allowed, with its own Content-Type (not 1.x's doubled one)", async () => {
  await freshDb('a16-json-answer');
  await c.put('/a16-json-answer/_design/j', {
    shows: {
      plain: 'function (doc, req) { return { json: { a: 1 } }; }',
      typed: 'function (doc, req) { return { json: [1], headers: { "Content-Type": "application/x-thing" } }; }',
      text: 'function (doc, req) { return { body: "{}" }; }',
    },
    updates: { made: 'function (doc, req) { return [{ _id: "made" }, { json: { status: "ok" } }]; }' },
  });
  const show = '/a16-json-answer/_design/j/_show';
  const plain = await c.get(`${show}/plain`, { headers: { Accept: '*/*' } });
  assert.equal(plain.text, '{"a":1}\n');
  assert.equal(plain.headers['content-type'], 'application/json');
  const asked = await c.get(`${show}/plain`);
  assert.equal(asked.headers['content-type'], 'application/json');
  const typed = await c.get(`${show}/typed`, { headers: { Accept: '*/*' } });
  assert.equal(typed.headers['content-type'], 'application/x-thing');
  assert.equal(typed.text, '[1]\n');
  // A body answer is sent as it is.
  const text = await c.get(`${show}/text`);
  assert.equal(text.text, '{}');
  assert.equal(text.headers['content-type'], 'text/html; charset=utf-8');
  const made = await c.post('/a16-json-answer/_design/j/_update/made', undefined, { headers: { Accept: '*/*' } });
  assert.equal(made.status, 201);
  assert.equal(made.text, '{"status":"ok"}\n');
  assert.equal(made.headers['content-type'], 'application/json');
  assert.equal(made.headers['x-couch-id'], 'made');
  assert.equal((await c.put('/_config/httpd/allow_jsonp', 'true')).status, 200);
  try {
    const jsonp = await c.get(`${show}/plain?callback=cb`);
    assert.equal(jsonp.text, '/* CouchDB */cb({"a":1});\n');
    assert.equal(jsonp.headers['content-type'], 'application/json');
  } finally {
    await c.put('/_config/httpd/allow_jsonp', 'false');
  }
});

test('a show or update function answering an array gives no response: render_error (render.js typeOf)', async () => {
  await freshDb('a16-array-answer');
  await c.put('/a16-array-answer/d', {});
  await c.put('/a16-array-answer/_design/a', {
    shows: { arr: 'function (doc, req) { return ["x"]; }' },
    updates: { arr: 'function (doc, req) { return [null, ["x"]]; }' },
  });
  for (const r of [await c.get('/a16-array-answer/_design/a/_show/arr'), await c.get('/a16-array-answer/_design/a/_show/arr/d'), await c.post('/a16-array-answer/_design/a/_update/arr')]) {
    assert.equal(r.status, 500, r.text);
    assert.equal(r.body.error, 'render_error');
  }
  // Of a missing document, as any failure of a show there, it is the document not being found.
  const missing = await c.get('/a16-array-answer/_design/a/_show/arr/nothing');
  assert.deepEqual([missing.status, missing.body], [404, { error: 'not_found', reason: 'document not found' }]);
});

test('GET on an update function is refused by the query server once the function is found: 500 method_not_allowed, no Allow header', async () => {
  await freshDb('a16-update-get');
  await c.put('/a16-update-get/_design/u', { updates: { u: 'function (doc, req) { return [null, "ran"]; }' } });
  const get = await c.get('/a16-update-get/_design/u/_update/u/some-doc');
  assert.equal(get.status, 500, get.text);
  assert.deepEqual(get.body, { error: 'method_not_allowed', reason: 'Update functions do not allow GET' });
  assert.equal(get.headers['allow'], undefined);
  assert.equal((await c.head('/a16-update-get/_design/u/_update/u')).status, 500);
  // A missing function is not found first.
  const missing = await c.get('/a16-update-get/_design/u/_update/none');
  assert.deepEqual([missing.status, missing.body.error], [404, 'not_found']);
  assert.equal((await c.request('DELETE', '/a16-update-get/_design/u/_update/u')).text, 'ran');
});

test("an error a function raises by name has the status couch_httpd:error_info gives {Id, Reason}: conflict is a 500, query_parse_error a 400", async () => {
  await freshDb('a16-raised');
  await c.put('/a16-raised/_design/r', {
    shows: {
      conflict: 'function (doc, req) { throw { error: "conflict", reason: "not now" }; }',
      parse: 'function (doc, req) { throw ["error", "query_parse_error", "bad q"]; }',
      forbidden: 'function (doc, req) { throw { error: "forbidden", reason: "no" }; }',
    },
  });
  const status = async (name: string) => {
    const r = await c.get(`/a16-raised/_design/r/_show/${name}`);
    return [r.status, r.body.error, r.body.reason];
  };
  assert.deepEqual(await status('conflict'), [500, 'conflict', 'not now']);
  assert.deepEqual(await status('parse'), [400, 'query_parse_error', 'bad q']);
  assert.deepEqual(await status('forbidden'), [403, 'forbidden', 'no']);
});

test("a design function whose source is empty is missing, as the query server's ddoc command finds it falsy: 404 missing <group> function", async () => {
  await freshDb('a16-empty-fun');
  await c.put('/a16-empty-fun/_design/e', {
    views: { v: { map: 'function (doc) { emit(doc._id, null); }' } },
    shows: { s: '' },
    lists: { l: '' },
    updates: { u: '' },
    filters: { f: '' },
  });
  await c.put('/a16-empty-fun/d', {});
  const answers = [
    ['shows', 's', await c.get('/a16-empty-fun/_design/e/_show/s/d')],
    ['lists', 'l', await c.get('/a16-empty-fun/_design/e/_list/l/v')],
    ['updates', 'u', await c.post('/a16-empty-fun/_design/e/_update/u/d', {})],
    ['filters', 'f', await c.get('/a16-empty-fun/_changes?filter=e/f')],
  ] as const;
  for (const [group, name, r] of answers) {
    assert.equal(r.status, 404, `${group}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'not_found', reason: `missing ${group} function ${name} on design doc _design/e` });
  }
});

test('a view whose map or reduce source is empty is 404 not_found "missing function", as util.js Couch.compileFunction answers an empty source', async () => {
  await freshDb('a16-empty-view');
  await c.put('/a16-empty-view/_design/e', {
    views: { m: { map: '' }, r: { map: 'function (doc) { emit(1, 1); }', reduce: '' } },
  });
  await c.put('/a16-empty-view/d', {});
  for (const view of ['m', 'r']) {
    const r = await c.get(`/a16-empty-view/_design/e/_view/${view}`);
    assert.equal(r.status, 404, `${view}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'missing function' });
  }
});

test('send(null) or send(undefined) in a show is a 500 render_error, as render.js send calls chunk.toString()', async () => {
  await freshDb('a16-send-null');
  await c.put('/a16-send-null/_design/s', {
    shows: {
      nul: 'function (doc, req) { send(null); return "x"; }',
      undef: 'function (doc, req) { send(undefined); return "x"; }',
      num: 'function (doc, req) { send(5); return "x"; }',
    },
  });
  for (const name of ['nul', 'undef']) {
    const r = await c.get(`/a16-send-null/_design/s/_show/${name}`);
    assert.equal(r.status, 500, `${name}: ${r.text}`);
    assert.equal(r.body.error, 'render_error');
  }
  assert.equal((await c.get('/a16-send-null/_design/s/_show/num')).text, '5x');
});
