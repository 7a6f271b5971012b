/**
 * Thousands of databases stay cheap: with `max_dbs_open` far below the number of databases in
 * use, every database still opens, keeps its documents, and takes writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

test('more databases than max_dbs_open all keep working', async () => {
  const old = await c.put('/_config/couchdb/max_dbs_open', '3');
  assert.equal(old.status, 200);
  try {
    const names = Array.from({ length: 40 }, (_, i) => `lru-${i}`);
    for (const name of names) {
      assert.equal((await c.put(`/${name}`)).status, 201);
      assert.equal((await c.put(`/${name}/doc`, { name })).status, 201);
    }
    // Touch them all again, in parallel, forcing opens past the limit.
    const reads = await Promise.all(names.map((name) => c.get(`/${name}/doc`)));
    reads.forEach((r, i) => {
      assert.equal(r.status, 200);
      assert.equal(r.body.name, names[i]);
    });
    const infos = await Promise.all(names.map((name) => c.get(`/${name}`)));
    for (const info of infos) {
      assert.equal(info.status, 200);
      assert.equal(info.body.doc_count, 1);
    }
    // Once the burst is over, databases beyond the limit are closed: their files let go.
    const openFiles = () => readdirSync(`/proc/${server.process.pid}/fd`).length;
    const peak = openFiles();
    const deadline = Date.now() + 15000;
    // 40 open databases hold two files each; three may stay open.
    while (openFiles() > peak / 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.ok(openFiles() <= peak / 2, `open files ${openFiles()} after a peak of ${peak}`);
    // Closed databases reopen on demand with their data.
    const again = await Promise.all(names.map((name) => c.get(`/${name}/doc`)));
    again.forEach((r, i) => assert.equal(r.body.name, names[i]));
    const all = await c.get('/_all_dbs');
    for (const name of names) assert.ok(all.body.includes(name), name);
    // Deleting one of many closes and removes it for good.
    assert.equal((await c.del('/lru-7')).status, 200);
    assert.equal((await c.get('/lru-7/doc')).status, 404);
    assert.equal((await c.get('/lru-8/doc')).status, 200);
  } finally {
    await c.put('/_config/couchdb/max_dbs_open', old.body);
  }
});
