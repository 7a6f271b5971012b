/**
 * `/_stats` over real HTTP, after CouchDB 1.6's share/www/script/test/stats.js: every counter
 * grows by exactly what the requests between two flushed reads did, open_databases follows
 * creation and deletion, each stat has 1.6's shape, single stats and bad paths answer as 1.6.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile, startServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';

const { c } = await serverForFile();
const DB = 'stats_db';

before(async () => {
  assert.equal((await c.put(`/${DB}`)).status, 201);
});

/** A stat's `current` after a flush (as couch.js's requestStats does). */
async function current(section: string, key: string): Promise<number> {
  const r = await c.get(`/_stats/${section}/${key}?flush=true`);
  assert.equal(r.status, 200);
  return r.body[section][key].current ?? 0;
}

/** How much a stat grew while `run` ran. */
async function growth(section: string, key: string, run: () => Promise<unknown>): Promise<number> {
  const before = await current(section, key);
  await run();
  return (await current(section, key)) - before;
}

const FIELDS = ['current', 'description', 'max', 'mean', 'min', 'stddev', 'sum'];

test('GET /_stats has every 1.6 section and stat, each with exactly the aggregate fields', async () => {
  const r = await c.get('/_stats');
  assert.equal(r.status, 200);
  const expected: Record<string, string[]> = {
    couchdb: ['auth_cache_hits', 'auth_cache_misses', 'database_reads', 'database_writes', 'open_databases', 'open_os_files', 'request_time'],
    httpd: ['bulk_requests', 'clients_requesting_changes', 'requests', 'temporary_view_reads', 'view_reads'],
    httpd_request_methods: ['COPY', 'DELETE', 'GET', 'HEAD', 'POST', 'PUT'],
    httpd_status_codes: ['200', '201', '202', '301', '304', '400', '401', '403', '404', '405', '409', '412', '500'],
  };
  assert.deepEqual(Object.keys(r.body).sort(), Object.keys(expected).sort());
  for (const [section, keys] of Object.entries(expected)) {
    assert.deepEqual(Object.keys(r.body[section]).sort(), keys.sort(), section);
    for (const key of keys) {
      const stat = r.body[section][key];
      assert.deepEqual(Object.keys(stat).sort(), FIELDS, `${section}/${key}`);
      assert.equal(typeof stat.description, 'string');
      assert.ok(stat.description.length > 0);
    }
  }
  // Nothing was ever counted: 1.6's nulls.
  assert.deepEqual(r.body.httpd_status_codes['500'], {
    description: 'number of HTTP 500 Internal Server Error responses', current: null, sum: null, mean: null, stddev: null, min: null, max: null,
  });
});

test('a single stat answers {section: {stat: {...}}}', async () => {
  await c.get('/');
  const r = await c.get('/_stats/httpd_request_methods/GET?flush=true');
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body), ['httpd_request_methods']);
  assert.deepEqual(Object.keys(r.body.httpd_request_methods), ['GET']);
  const stat = r.body.httpd_request_methods.GET;
  assert.equal(stat.description, 'number of HTTP GET requests');
  assert.ok(stat.current >= 1);
  assert.equal(stat.current, stat.sum);
  assert.ok(stat.min <= stat.max);
});

test('requests: the stats read itself and one more request', async () => {
  assert.equal(await growth('httpd', 'requests', () => c.get('/')), 2);
});

test('request methods and status codes are counted separately', async () => {
  assert.equal(await growth('httpd_request_methods', 'GET', async () => undefined), 1);
  assert.equal(await growth('httpd_request_methods', 'GET', () => c.post('/', {})), 1);
  assert.equal(await growth('httpd_request_methods', 'POST', () => c.post('/', {})), 1);
  assert.equal(await growth('httpd_request_methods', 'HEAD', () => c.head('/')), 1);
  assert.equal(await growth('httpd_status_codes', '404', () => c.get('/nonexistent_db')), 1);
  assert.equal(await growth('httpd_status_codes', '404', () => c.get('/')), 0);
  assert.equal(await growth('httpd_status_codes', '201', () => c.put(`/${DB}/created`, { a: 1 })), 1);
});

test('database_reads: document reads (open_revs too), not database info', async () => {
  await c.put(`/${DB}/read_me`, { a: 1 });
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/read_me`)), 1);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}`)), 0);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/read_me?open_revs=all`)), 1);
});

test('database_writes: create, POST, update, delete, COPY, attachments', async () => {
  assert.equal(await growth('couchdb', 'database_writes', () => c.put(`/${DB}/w1`, { a: 1 })), 1);
  assert.equal(await growth('couchdb', 'database_writes', () => c.post(`/${DB}`, { a: 1 })), 1);
  const rev = (await c.get(`/${DB}/w1`)).body._rev as string;
  assert.equal(await growth('couchdb', 'database_writes', () => c.put(`/${DB}/w1`, { _rev: rev, a: 2 })), 1);
  const rev2 = (await c.get(`/${DB}/w1`)).body._rev as string;
  assert.equal(await growth('couchdb', 'database_writes', () => c.copy(`/${DB}/w1`, { headers: { Destination: 'w1_copy' } })), 1);
  assert.equal(await growth('couchdb', 'database_writes', () => c.del(`/${DB}/w1?rev=${rev2}`)), 1);
  assert.equal(await growth('couchdb', 'database_writes', () =>
    c.request('PUT', `/${DB}/bin_doc/foo.txt`, { raw: 'some text', headers: { 'Content-Type': 'text/plain' } })), 1);
});

test('bulk_requests counts _bulk_docs requests; database_writes counts one write per request, as couch_db:update_docs', async () => {
  const docs = [1, 2, 3, 4, 5].map((i) => ({ _id: `bulk${i}` }));
  assert.equal(await growth('httpd', 'bulk_requests', () => c.post(`/${DB}/_bulk_docs`, { docs })), 1);
  const more = [6, 7, 8].map((i) => ({ _id: `bulk${i}` }));
  assert.equal(await growth('couchdb', 'database_writes', () => c.post(`/${DB}/_bulk_docs`, { docs: more })), 1);
});

test('view_reads and temporary_view_reads count their own kind only', async () => {
  await c.put(`/${DB}/_design/test`, { views: { all: { map: 'function(doc) { emit(doc._id, null); }' } } });
  const view = () => c.get(`/${DB}/_design/test/_view/all`);
  const temp = () => c.post(`/${DB}/_temp_view`, { map: 'function(doc) { emit(doc._id, null); }' });
  assert.equal(await growth('httpd', 'view_reads', view), 1);
  assert.equal(await growth('httpd', 'temporary_view_reads', view), 0);
  assert.equal(await growth('httpd', 'temporary_view_reads', temp), 1);
  assert.equal(await growth('httpd', 'view_reads', temp), 0);
  assert.equal(await growth('httpd', 'view_reads', () => c.get(`/${DB}/read_me`)), 0);
});

test('open_databases follows creation and deletion', async () => {
  assert.equal(await growth('couchdb', 'open_databases', () => c.put('/stats_other')), 1);
  assert.equal(await growth('couchdb', 'open_databases', () => c.del('/stats_other')), -1);
});

test('clients_requesting_changes counts a live feed while it is open', async () => {
  const feed = c.get(`/${DB}/_changes?feed=longpoll&since=now&timeout=60000`);
  // The feed is open once the counter says so; then a write ends it.
  let open = 0;
  for (let i = 0; i < 200 && open === 0; i++) open = await current('httpd', 'clients_requesting_changes');
  assert.equal(open, 1);
  await c.put(`/${DB}/wake_feed`, {});
  assert.equal((await feed).status, 200);
  let after = 1;
  for (let i = 0; i < 200 && after !== 0; i++) after = await current('httpd', 'clients_requesting_changes');
  assert.equal(after, 0);
});

test('range: configured windows answer, others an empty answer (as 1.6)', async () => {
  const windowed = await c.get('/_stats/httpd/requests?range=60&flush=true');
  assert.equal(windowed.status, 200);
  assert.ok(windowed.body.httpd.requests.sum >= 1);
  assert.deepEqual((await c.get('/_stats?range=7')).body, {});
  assert.equal((await c.get('/_stats/httpd/requests?range=7')).body.httpd.requests.current, null);
  // couch_httpd_stats_handlers reads range with list_to_integer: a bad one is an invalid
  // parameter (400; 1.6 crashes with a 500 badarg); a path of the wrong length is refused before
  // the range is read.
  for (const path of ['/_stats?range=soon', '/_stats/httpd/requests?range=', '/_stats?range=1.5']) {
    const bad = await c.get(path);
    assert.equal(bad.status, 400, path);
    assert.deepEqual(bad.body, { error: 'bad_request', reason: 'range must be an integer' }, path);
  }
  assert.equal((await c.get('/_stats/httpd?range=soon')).status, 400);
  assert.equal((await c.get('/_stats?range=%2B60')).status, 200);
});

test('unknown stats and malformed paths', async () => {
  const unknown = await c.get('/_stats/nope/nothing');
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body, { nope: { nothing: { description: '', current: null, sum: null, mean: null, stddev: null, min: null, max: null } } });
  assert.equal((await c.get('/_stats/httpd')).status, 400);
  assert.equal((await c.get('/_stats/httpd/requests/extra')).status, 400);
  assert.equal((await c.post('/_stats', {})).status, 405);
});

test('database_reads: DELETE and COPY open their document, design-document requests their design document (couch_httpd_db)', async () => {
  await c.put(`/${DB}/opened`, { a: 1 });
  assert.equal(await growth('couchdb', 'database_reads', () => c.copy(`/${DB}/opened`, { headers: { Destination: 'opened_copy' } })), 1);
  const rev = (await c.get(`/${DB}/opened_copy`)).body._rev as string;
  assert.equal(await growth('couchdb', 'database_reads', () => c.del(`/${DB}/opened_copy?rev=${rev}`)), 1);
  assert.equal((await c.put(`/${DB}/_design/reads`, {
    views: { all: { map: 'function(doc) { emit(doc._id, null); }' } },
    shows: { s: 'function(doc) { return "shown"; }' },
  })).status, 201);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/_design/reads/_view/all`)), 1);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/_design/reads/_info`)), 1);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/_design/reads/_show/s`)), 1);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/_design/reads/_nothing`)), 1);
  // A show of a document opens the design document and the document.
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/_design/reads/_show/s/opened`)), 2);
});

test('/_stats is public when the server has admins', async () => {
  assert.equal((await c.put('/_config/admins/boss', 'secret')).status, 200);
  assert.equal((await c.get('/_active_tasks')).status, 401);
  const r = await c.get('/_stats');
  assert.equal(r.status, 200);
  assert.ok(r.body.couchdb.auth_cache_hits);
});

test('a request counts its method as it arrives: the first request to a fresh server sees its own GET', async () => {
  const fresh = await startServer();
  try {
    const r = await client(fresh.url).get('/_stats/httpd_request_methods/GET?flush=true');
    assert.equal(r.status, 200);
    assert.equal(r.body.httpd_request_methods.GET.current, 1);
    // Requests and status codes are counted once answered, as in CouchDB.
    assert.equal((await client(fresh.url).get('/_stats/httpd/requests?flush=true')).body.httpd.requests.current, 1);
    // 1.6's reasons for stat paths of the wrong length, its typo kept.
    assert.equal((await client(fresh.url).get('/_stats/couchdb')).body.reason, 'Stat names must have exactly to parts.');
    assert.equal((await client(fresh.url).get('/_stats/couchdb/a/b')).body.reason, 'Stat names must have exactly two parts.');
  } finally {
    await fresh.stop();
  }
});

test('reads and writes in the users and replicator databases are not counted, as couch_db:increment_stat skips sys_db', async () => {
  await c.put('/_replicator');
  const user = { _id: 'org.couchdb.user:stats_sys', name: 'stats_sys', password: 'pw', roles: [], type: 'user' };
  assert.equal(await growth('couchdb', 'database_writes', () => c.put('/_users/org.couchdb.user:stats_sys', user)), 0);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get('/_users/org.couchdb.user:stats_sys')), 0);
  assert.equal(await growth('couchdb', 'database_writes', () => c.put('/_replicator/stats_sys', { source: 'a', target: 'b' })), 0);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get('/_replicator/stats_sys')), 0);
  // An ordinary database still counts both.
  assert.equal(await growth('couchdb', 'database_writes', () => c.put(`/${DB}/not_sys`, {})), 1);
  assert.equal(await growth('couchdb', 'database_reads', () => c.get(`/${DB}/not_sys`)), 1);
});

test('database_reads: an attachment PUT or DELETE with a rev opens that revision (couch_httpd_db:db_attachment_req, open_doc_revs)', async () => {
  const made = await c.put(`/${DB}/att_reads`, { n: 1 });
  assert.equal(made.status, 201);
  let rev = made.body.rev as string;
  let put: { status: number; body: { rev: string } } | undefined;
  assert.equal(await growth('couchdb', 'database_reads', async () => {
    put = await c.request('PUT', `/${DB}/att_reads/a.txt?rev=${rev}`, { raw: 'hi', headers: { 'Content-Type': 'text/plain' } });
  }), 1);
  assert.equal(put?.status, 201);
  rev = put!.body.rev;
  assert.equal(await growth('couchdb', 'database_reads', () => c.del(`/${DB}/att_reads/a.txt?rev=${rev}`)), 1);
  // Without a rev, a new document's attachment opens no revision.
  assert.equal(await growth('couchdb', 'database_reads', () => c.request('PUT', `/${DB}/att_new/a.txt`, { raw: 'hi', headers: { 'Content-Type': 'text/plain' } })), 0);
});
