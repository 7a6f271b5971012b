/** `_update` over real HTTP: saving what the function returns, headers, form bodies, validation. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/upd')).status, 201);
  const ddoc = await c.put('/upd/_design/u', {
    updates: {
      bump: 'function(doc, req) { if (!doc) return [null, {code: 404, body: "no such doc"}]; doc.n = (doc.n || 0) + 1; return [doc, "bumped to " + doc.n]; }',
      create: 'function(doc, req) { return [{_id: req.id || req.uuid, made: true, form: req.form}, {json: {ok: true}}]; }',
      answer: 'function(doc, req) { return [null, {code: 202, headers: {"X-Thing": "yes"}, body: "just answering " + req.method}]; }',
      bad: 'function(doc, req) { return [{_id: "v", bad: true}, "saved?"]; }',
      nothing: 'function() { return null; }',
      throws: 'function() { throw(["error", "conflict", "not today"]); }',
      stamped: 'function(doc, req) { var stamp = require("lib/stamp").stamp; return [stamp({_id: "stamped"}, req), "ok"]; }',
      conflicts: 'function(doc) { return [null, {json: {conflicts: doc._conflicts || null}}]; }',
      notadoc: 'function() { return ["just a string", "nothing saved"]; }',
    },
    validate_doc_update: 'function(n) { if (n.bad) throw({forbidden: "bad docs are rejected"}); }',
    lib: { stamp: 'exports.stamp = function(doc, req) { doc.by = req.userCtx.roles; doc.method = req.method; return doc; };' },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
});

test('an update function edits an existing document', async () => {
  const put = await c.put('/upd/counter', { n: 1 });
  const r = await c.request('PUT', '/upd/_design/u/_update/bump/counter');
  assert.equal(r.status, 201, r.text);
  assert.equal(r.text, 'bumped to 2');
  assert.equal(r.headers['x-couch-id'], 'counter');
  const newRev = r.headers['x-couch-update-newrev'] as string;
  assert.match(newRev, /^2-/);
  const doc = await c.get('/upd/counter');
  assert.equal(doc.body.n, 2);
  assert.equal(doc.body._rev, newRev);
  assert.notEqual(doc.body._rev, put.body.rev);
  const missing = await c.post('/upd/_design/u/_update/bump/nope');
  assert.equal(missing.status, 404);
  assert.equal(missing.text, 'no such doc');
});

test('creating documents; form-encoded bodies reach req.form', async () => {
  const r = await c.post('/upd/_design/u/_update/create/fresh', undefined, { raw: 'a=1&b=x+y', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.body, { ok: true });
  assert.equal(r.headers['x-couch-id'], 'fresh');
  const doc = await c.get('/upd/fresh');
  assert.deepEqual(doc.body.form, { a: '1', b: 'x y' });
  const anon = await c.post('/upd/_design/u/_update/create');
  assert.equal(anon.status, 201);
  const id = anon.headers['x-couch-id'] as string;
  assert.equal((await c.get(`/upd/${id}`)).body.made, true);
});

test('an update of a _local document stores it as a local document', async () => {
  const r = await c.put('/upd/_design/u/_update/create/_local/settings');
  assert.equal(r.status, 201, r.text);
  assert.equal(r.headers['x-couch-id'], '_local/settings');
  assert.equal((await c.get('/upd/_local/settings')).body.made, true);
  const all = await c.get('/upd/_all_docs?key=%22_local/settings%22');
  assert.deepEqual(all.body.rows, []);
});

test('update functions require() from the design document', async () => {
  const r = await c.post('/upd/_design/u/_update/stamped');
  assert.equal(r.status, 201, r.text);
  const doc = await c.get('/upd/stamped');
  assert.deepEqual(doc.body.by, ['_admin']);
  assert.equal(doc.body.method, 'POST');
});

test('a response without a document saves nothing', async () => {
  const r = await c.post('/upd/_design/u/_update/answer');
  assert.equal(r.status, 202);
  assert.equal(r.headers['x-thing'], 'yes');
  assert.equal(r.headers['x-couch-id'], undefined);
  assert.equal(r.text, 'just answering POST');
});

test('saving goes through validate_doc_update', async () => {
  const r = await c.post('/upd/_design/u/_update/bad');
  assert.equal(r.status, 403);
  assert.deepEqual(r.body, { error: 'forbidden', reason: 'bad docs are rejected' });
  assert.equal((await c.get('/upd/v')).status, 404);
});

test('errors: bad results and thrown errors; GET is not allowed', async () => {
  const nothing = await c.post('/upd/_design/u/_update/nothing');
  assert.equal(nothing.status, 500);
  assert.equal(nothing.body.error, 'render_error');
  const thrown = await c.post('/upd/_design/u/_update/throws');
  // couch_httpd:error_info has a status for the bare `conflict` only: a raised one is a 500.
  assert.equal(thrown.status, 500);
  assert.deepEqual(thrown.body, { error: 'conflict', reason: 'not today' });
  const get = await c.get('/upd/_design/u/_update/bump/counter');
  assert.equal(get.status, 500);
  const noFn = await c.post('/upd/_design/u/_update/none');
  assert.equal(noFn.status, 404);
});

test('the document comes with its _conflicts', async () => {
  assert.equal((await c.put('/upd/torn', { side: 'a' })).status, 201);
  // all_or_nothing writes the edit beside the existing revision: a conflict
  const bulk = await c.post('/upd/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'torn', side: 'b' }] });
  assert.equal(bulk.status, 201, bulk.text);
  const r = await c.post('/upd/_design/u/_update/conflicts/torn');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.conflicts.length, 1);
});

test('an update path without a function name is update_error', async () => {
  const r = await c.post('/upd/_design/u/_update/');
  assert.equal(r.status, 404);
  assert.deepEqual(r.body, { error: 'update_error', reason: 'Invalid path.' });
});

test('a result whose document is no object saves nothing and answers 200, as couch_mrview_show', async () => {
  const before = (await c.get('/upd')).body.update_seq;
  const r = await c.post('/upd/_design/u/_update/notadoc');
  assert.equal(r.status, 200);
  assert.equal(r.text, 'nothing saved');
  assert.equal((await c.get('/upd')).body.update_seq, before);
});
