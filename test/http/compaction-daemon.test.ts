/**
 * The compaction daemon over real HTTP: a `[compactions]` rule makes the server compact a
 * fragmented database and its view indexes by itself; a rule whose window is closed, or whose
 * threshold is not reached, leaves them alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const { c } = await serverForFile();
const memoryOnly = { headers: { 'X-Couch-Persist': 'false' } };

/** A database whose file is mostly old revisions. */
async function fragmented(name: string, withView = false): Promise<void> {
  assert.equal((await c.put(`/${name}`)).status, 201);
  if (withView) assert.equal((await c.put(`/${name}/_design/v`, { views: { all: { map: 'function(doc) { emit(doc.n, doc.filler); }' } } })).status, 201);
  const filler = 'x'.repeat(2000);
  let docs: { _id: string; _rev?: string; n: number; filler: string }[] = Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, n: 0, filler }));
  for (let round = 0; round < 8; round++) {
    const r = await c.post(`/${name}/_bulk_docs`, { docs });
    assert.equal(r.status, 201);
    docs = docs.map((d, i) => ({ ...d, _rev: r.body[i].rev, n: round + 1 }));
    if (withView) assert.equal((await c.get(`/${name}/_design/v/_view/all?limit=1`)).status, 200);
  }
}

const diskSize = async (name: string): Promise<number> => (await c.get(`/${name}`)).body.disk_size as number;
const indexSize = async (name: string): Promise<number> => (await c.get(`/${name}/_design/v/_info`)).body.view_index.disk_size as number;

test('setup: check every second, files of any size', async () => {
  assert.equal((await c.put('/_config/compaction_daemon/check_interval', '1', memoryOnly)).status, 200);
  assert.equal((await c.put('/_config/compaction_daemon/min_file_size', '0', memoryOnly)).status, 200);
});

test('a database over its rule\'s fragmentation is compacted, then its indexes', async () => {
  await fragmented('auto', true);
  const before = await diskSize('auto');
  const indexBefore = await indexSize('auto');
  const info = (await c.get('/auto')).body;
  assert.ok(info.data_size < info.disk_size / 2, `fragmented: ${JSON.stringify(info)}`);
  assert.equal((await c.put('/_config/compactions/auto', '[{db_fragmentation, "30%"}, {view_fragmentation, "10%"}]', memoryOnly)).status, 200);
  await waitFor('the database to be compacted', async () => (await diskSize('auto')) < before);
  await waitFor('its index to be compacted', async () => (await indexSize('auto')) < indexBefore);
  // The documents are all there, at their latest revisions.
  const all = await c.get('/auto/_all_docs?include_docs=true');
  assert.equal(all.body.rows.length, 51);
  assert.ok(all.body.rows.filter((r: { id: string }) => !r.id.startsWith('_design/')).every((r: { doc: { n: number } }) => r.doc.n === 7));
  assert.equal((await c.get('/auto/_design/v/_view/all')).body.rows.length, 50);
});

test('no compaction outside the rule\'s window, nor below its threshold; _default covers the rest', async () => {
  await fragmented('closed');
  await fragmented('calm');
  const now = new Date();
  const hm = (d: Date) => `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  // A one-minute window that started two hours ago.
  const from = new Date(now.getTime() - 2 * 3600_000);
  const to = new Date(from.getTime() + 60_000);
  assert.equal((await c.put('/_config/compactions/closed', `[{from, "${hm(from)}"}, {to, "${hm(to)}"}]`, memoryOnly)).status, 200);
  assert.equal((await c.put('/_config/compactions/calm', '[{db_fragmentation, "99%"}]', memoryOnly)).status, 200);
  const closedBefore = await diskSize('closed');
  const calmBefore = await diskSize('calm');
  // A database compacted by the _default rule shows the daemon made passes meanwhile.
  await fragmented('other');
  const otherBefore = await diskSize('other');
  assert.equal((await c.put('/_config/compactions/_default', '[{db_fragmentation, "30%"}]', memoryOnly)).status, 200);
  await waitFor('the _default rule to compact other', async () => (await diskSize('other')) < otherBefore);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(await diskSize('closed'), closedBefore);
  assert.equal(await diskSize('calm'), calmBefore);
});
