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

test('a JSON login is decoded whatever it holds: an empty body is invalid_json, a value that is not a string Erlang\'s badarg', async () => {
  for (const raw of ['', '  ']) {
    const r = await c.post('/_session', undefined, { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${JSON.stringify(raw)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' });
  }
  // couch_httpd_auth:handle_session_req turns every value into a list with binary_to_list.
  for (const body of [{ name: 1, password: 'x' }, { name: 'a', password: null }, { name: 'a', password: 'b', remember: true }]) {
    const r = await c.post('/_session', body);
    assert.equal(r.status, 500, `${JSON.stringify(body)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'unknown_error', reason: 'badarg' });
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
