/**
 * Virtual hosts over real HTTP: CouchDB 1.6's test/etap/160-vhosts.t ported (its rules, its
 * database and design document, its ten checks), plus global handlers, X-Forwarded-Host, live
 * configuration changes and what design functions see of the vhost path.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

const DB = 'etap-test-db';
const as = (host: string) => ({ headers: { Host: host } });

test('setup: the etap database, its design document and rules', async () => {
  assert.equal((await c.put(`/${DB}`)).status, 201);
  assert.equal((await c.put(`/${DB}/doc1`, { value: 666 })).status, 201);
  const ddoc = {
    shows: {
      test: "function(doc, req) { return { json: { requested_path: '/' + req.requested_path.join('/'), path: '/' + req.path.join('/') } }; }",
    },
    rewrites: [{ from: '/', to: '_show/test' }],
  };
  assert.equal((await c.put(`/${DB}/_design/doc1`, ddoc)).status, 201);
  const rules: Record<string, string> = {
    'example.com': `/${DB}`,
    '*.example.com': `/${DB}/_design/doc1/_rewrite`,
    'example1.com': `/${DB}/_design/doc1/_rewrite/`,
    ':appname.:dbname.example1.com': '/:dbname/_design/:appname/_rewrite/',
    ':dbname.example1.com': '/:dbname',
    '*.example2.com': '/*',
  };
  for (const [host, path] of Object.entries(rules)) {
    const r = await c.put(`/_config/vhosts/${encodeURIComponent(host)}`, path, { headers: { 'X-Couch-Persist': 'false' } });
    assert.equal(r.status, 200, r.text);
  }
});

test('a regular request is not routed', async () => {
  const r = await c.get('/');
  assert.equal(r.body.couchdb, 'Welcome');
});

test('example.com is the database', async () => {
  const r = await c.get('/', as('example.com'));
  assert.equal(r.status, 200);
  assert.equal(r.body.db_name, DB);
});

test('the query string follows the vhost', async () => {
  const r = await c.get('/doc1?revs_info=true', as('example.com'));
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body._revs_info));
});

test('/_utils is served even inside vhosts', async () => {
  const r = await c.get('/_utils/index.html', as('example.com'));
  assert.equal(r.status, 200);
  assert.match(r.text, /^<!DOCTYPE/i);
});

test('requested_path is the path under the vhost; path the one served', async () => {
  const r = await c.get('/', as('example1.com'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.requested_path, '/');
  assert.equal(r.body.path, `/${DB}/_design/doc1/_show/test`);
});

test('a wildcard host routes through the rewrite', async () => {
  const r = await c.get('/', as('test.example.com'));
  assert.equal(r.body.path, `/${DB}/_design/doc1/_show/test`);
});

test('a bound label names the database', async () => {
  const r = await c.get('/', as(`${DB}.example1.com`));
  assert.equal(r.body.db_name, DB);
});

test('two bound labels name the database and the application', async () => {
  const r = await c.get('/', as(`doc1.${DB}.example1.com`));
  assert.equal(r.body.path, `/${DB}/_design/doc1/_show/test`);
});

test('a wildcard in the target is replaced by the labels it matched', async () => {
  const r = await c.get('/', as(`${DB}.example2.com`));
  assert.equal(r.body.db_name, DB);
});

test('the rewritten request carries x-couchdb-vhost-path', async () => {
  const ddoc = (await c.get(`/${DB}/_design/doc1`)).body;
  ddoc.shows.headers = "function(doc, req) { return { json: { vhost: req.headers['x-couchdb-vhost-path'] || null, requested: req.requested_path } }; }";
  assert.equal((await c.put(`/${DB}/_design/doc1`, ddoc)).status, 201);
  const r = await c.get('/_design/doc1/_show/headers?x=1', as('example.com'));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.vhost, '/_design/doc1/_show/headers?x=1');
  assert.deepEqual(r.body.requested, ['_design', 'doc1', '_show', 'headers']);
  const direct = await c.get(`/${DB}/_design/doc1/_show/headers`);
  assert.equal(direct.body.vhost, null);
});

test('X-Forwarded-Host (or [httpd] x_forwarded_host) chooses the vhost before Host', async () => {
  const r = await c.get('/', { headers: { Host: 'nowhere.org', 'X-Forwarded-Host': 'example.com' } });
  assert.equal(r.body.db_name, DB);
  assert.equal((await c.put('/_config/httpd/x_forwarded_host', 'X-Real-Host', { headers: { 'X-Couch-Persist': 'false' } })).status, 200);
  try {
    const other = await c.get('/', { headers: { Host: 'nowhere.org', 'X-Real-Host': 'example.com' } });
    assert.equal(other.body.db_name, DB);
  } finally {
    await c.put('/_config/httpd/x_forwarded_host', 'X-Forwarded-Host', { headers: { 'X-Couch-Persist': 'false' } });
  }
});

test('vhost rules and global handlers follow configuration changes', async () => {
  assert.equal((await c.get('/_all_dbs', as('example.com'))).status, 404, 'not a global handler: under the database, a document id');
  assert.equal((await c.put('/_config/httpd/vhost_global_handlers', '_utils, _all_dbs', { headers: { 'X-Couch-Persist': 'false' } })).status, 200);
  const all = await c.get('/_all_dbs', as('example.com'));
  assert.ok(Array.isArray(all.body), all.text);
  assert.equal((await c.del(`/_config/vhosts/${encodeURIComponent('example.com')}`, { headers: { 'X-Couch-Persist': 'false' } })).status, 200);
  const root = await c.get('/', as('example.com'));
  assert.equal(root.body.couchdb, 'Welcome');
});
