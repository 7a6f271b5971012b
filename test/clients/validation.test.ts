/**
 * validate_doc_update seen by PouchDB (HTTP adapter, through the logging proxy): `put` rejected
 * with 403 forbidden, `bulkDocs` with per-document forbidden errors, and a local → remote
 * replication whose rejected documents are skipped, not fatal.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PouchFixture } from './pouch-fixture.js';

let fx: PouchFixture;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-vdu-');
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
