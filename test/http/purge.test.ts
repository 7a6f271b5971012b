/**
 * `POST /{db}/_purge` against CouchDB 1.6's couch_db_updater purge_docs and couch_key_tree's
 * remove_leafs: what a purge removes, what it answers, and what is left on disk afterwards.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serverForFile } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const { server, c } = await serverForFile();

async function freshDb(name: string): Promise<void> {
  await c.del(`/${name}`);
  assert.equal((await c.put(`/${name}`)).status, 201);
}

/** The newest data file of a database's store, as text (binary bytes kept as latin1). */
function newestDataFile(db: string): string {
  const dir = join(server.dataDir, `${db}.settee`);
  const generations = readdirSync(dir).filter((f) => /^data-\d+\.mdb$/.test(f));
  generations.sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]));
  return readFileSync(join(dir, generations[generations.length - 1]!)).toString('latin1');
}

async function compact(db: string): Promise<void> {
  assert.equal((await c.post(`/${db}/_compact`, {})).status, 202);
  await waitFor(`compaction of ${db}`, async () => (await c.get(`/${db}`)).body.compact_running === false);
}

test('a purged branch leaves no body behind: after compaction the content of its ancestors is gone too', async () => {
  await freshDb('purge-branch');
  // 1-a → 2-x → 3-y, and 1-a → 2-b: purging 3-y takes 2-x with it (couch_key_tree:remove_leafs
  // keeps only the remaining leaves' paths), so 2-x's body must go as well.
  const docs = [
    { _id: 'x', _rev: '1-aaaa', v: 1 },
    { _id: 'x', _rev: '2-xxxx', _revisions: { start: 2, ids: ['xxxx', 'aaaa'] }, secret: 'PURGEDANCESTORMARK' },
    { _id: 'x', _rev: '3-yyyy', _revisions: { start: 3, ids: ['yyyy', 'xxxx', 'aaaa'] }, secret: 'PURGEDLEAFMARK' },
    { _id: 'x', _rev: '2-bbbb', _revisions: { start: 2, ids: ['bbbb', 'aaaa'] }, kept: 'KEPTLEAFMARK' },
  ];
  assert.equal((await c.post('/purge-branch/_bulk_docs', { new_edits: false, docs })).status, 201);
  assert.equal((await c.get('/purge-branch/x?rev=2-xxxx')).body.secret, 'PURGEDANCESTORMARK');

  const r = await c.post('/purge-branch/_purge', { x: ['3-yyyy'] });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.purged, { x: ['3-yyyy'] });
  assert.equal((await c.get('/purge-branch/x?rev=2-xxxx')).status, 404);
  assert.equal((await c.get('/purge-branch/x')).body._rev, '2-bbbb');

  await compact('purge-branch');
  const data = newestDataFile('purge-branch');
  assert.ok(data.includes('KEPTLEAFMARK'), 'the remaining leaf is still stored');
  assert.ok(!data.includes('PURGEDLEAFMARK'), 'the purged leaf is gone');
  assert.ok(!data.includes('PURGEDANCESTORMARK'), 'the purged branch\'s ancestor is gone');
});

test('the purged revisions are listed in couch_key_tree:remove_leafs order, not the request\'s', async () => {
  await freshDb('purge-order');
  // One root with two branches: remove_leafs lists a root's removed leaves last first.
  const branches = [
    { _id: 'x', _rev: '1-aaaa' },
    { _id: 'x', _rev: '2-bbbb', _revisions: { start: 2, ids: ['bbbb', 'aaaa'] } },
    { _id: 'x', _rev: '2-cccc', _revisions: { start: 2, ids: ['cccc', 'aaaa'] } },
    { _id: 'x', _rev: '2-dddd', _revisions: { start: 2, ids: ['dddd', 'aaaa'] } },
  ];
  // Two roots: roots come in order.
  const roots = [{ _id: 'y', _rev: '1-aaaa' }, { _id: 'y', _rev: '1-dddd' }];
  assert.equal((await c.post('/purge-order/_bulk_docs', { new_edits: false, docs: [...branches, ...roots] })).status, 201);
  const r = await c.post('/purge-order/_purge', { x: ['2-bbbb', '2-dddd', '2-cccc'], y: ['1-dddd', '1-aaaa'] });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.purged, { x: ['2-dddd', '2-cccc', '2-bbbb'], y: ['1-aaaa', '1-dddd'] });
  // Revisions given twice, or that are not leaves, are listed once or not at all.
  assert.equal((await c.post('/purge-order/_bulk_docs', { new_edits: false, docs: branches })).status, 201);
  const again = await c.post('/purge-order/_purge', { x: ['2-cccc', '1-aaaa', '2-bbbb', '2-cccc'] });
  assert.deepEqual(again.body.purged, { x: ['2-cccc', '2-bbbb'] });
  assert.equal((await c.get('/purge-order/x')).body._rev, '2-dddd');
});
