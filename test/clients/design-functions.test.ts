/**
 * Design-document functions seen by PouchDB (HTTP adapter, through the logging proxy):
 * validate_doc_update rejecting `put` (403 forbidden) and `bulkDocs` (per-document forbidden
 * rows), a local → remote replication whose rejected documents are skipped, not fatal, and a
 * filtered remote → local replication driven by a filter function with query parameters.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PouchFixture } from './pouch-fixture.js';

let fx: PouchFixture;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-ddoc-');
});
after(async () => fx.close());

const RULE = 'function(newDoc) { if (!newDoc._deleted && typeof newDoc.title !== "string") throw({forbidden: "title required"}); }';

test('PouchDB put and bulkDocs are rejected by validate_doc_update', async () => {
  const db = await fx.remote('pouch-vdu');
  await db.put({ _id: '_design/rules', validate_doc_update: RULE });
  await assert.rejects(db.put({ _id: 'a', n: 1 }), (err: any) => {
    assert.equal(err.status, 403);
    assert.equal(err.name, 'forbidden');
    assert.equal(err.message, 'title required');
    return true;
  });
  const ok = await db.put({ _id: 'b', title: 'B' });
  assert.equal(ok.ok, true);
  const results = await db.bulkDocs([{ _id: 'c', title: 'C' }, { _id: 'd' }]);
  assert.equal(results[0].ok, true);
  // PouchDB's HTTP adapter hands CouchDB's row through: {id, error, reason}.
  assert.equal(results[1].id, 'd');
  assert.equal(results[1].error, 'forbidden');
  assert.equal(results[1].reason, 'title required');
  const all = await db.allDocs();
  assert.deepEqual(all.rows.map((r: any) => r.id), ['_design/rules', 'b', 'c']);
});

test('replication into a validated database skips the rejected documents', async () => {
  const remote = await fx.remote('pouch-vdu-repl');
  await remote.put({ _id: '_design/rules', validate_doc_update: RULE });
  const local = fx.local('vdu-local');
  await local.bulkDocs([{ _id: 'x', title: 'X' }, { _id: 'y', n: 2 }, { _id: 'z', title: 'Z' }]);
  const result = await local.replicate.to(remote);
  assert.equal(result.ok, true);
  assert.equal(result.doc_write_failures, 1);
  assert.equal(result.docs_written, 2);
  const all = await remote.allDocs();
  assert.deepEqual(all.rows.map((r: any) => r.id), ['_design/rules', 'x', 'z']);
});

test('filtered replication: PouchDB pulls through a filter function with query_params', async () => {
  const remote = await fx.remote('pouch-filtered');
  await remote.put({
    _id: '_design/app',
    filters: { by_owner: 'function(doc, req) { return doc.owner === req.query.owner; }' },
  });
  await remote.bulkDocs([
    { _id: 'a1', owner: 'ann' }, { _id: 'b1', owner: 'bob' }, { _id: 'a2', owner: 'ann' }, { _id: 'c1' },
  ]);
  const local = fx.local('filtered-local');
  const result = await local.replicate.from(remote, { filter: 'app/by_owner', query_params: { owner: 'ann' } });
  assert.equal(result.ok, true);
  const all = await local.allDocs();
  assert.deepEqual(all.rows.map((r: any) => r.id), ['a1', 'a2']);
  // later changes arrive through the same filter
  await remote.put({ _id: 'a3', owner: 'ann' });
  await remote.put({ _id: 'b2', owner: 'bob' });
  await local.replicate.from(remote, { filter: 'app/by_owner', query_params: { owner: 'ann' } });
  assert.deepEqual((await local.allDocs()).rows.map((r: any) => r.id), ['a1', 'a2', 'a3']);
});
