/** Compaction gives space back while the database keeps taking writes, and loses none of them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { serverForFile } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const { server, c } = await serverForFile();

const json = { 'Content-Type': 'application/json' };

test('writes made during compaction all survive it, and disk_size falls', async () => {
  assert.equal((await c.put('/compact-live')).status, 201);
  const filler = 'x'.repeat(1000);
  // History to compact away: every document rewritten three times.
  let revs = new Map<string, string>();
  for (let round = 0; round < 4; round++) {
    const docs = Array.from({ length: 2000 }, (_, i) => {
      const id = `d${i}`;
      return revs.has(id) ? { _id: id, _rev: revs.get(id), filler, round } : { _id: id, filler, round };
    });
    const r = await c.post('/compact-live/_bulk_docs', { docs });
    assert.equal(r.status, 201);
    revs = new Map((r.body as { id: string; rev: string }[]).map((x) => [x.id, x.rev]));
  }
  const before = (await c.get('/compact-live')).body;

  assert.equal((await c.post('/compact-live/_compact', undefined, { headers: json })).status, 202);
  // Write while the compaction runs, until it is over.
  const written: string[] = [];
  let running = true;
  let n = 0;
  while (running) {
    const id = `during-${n++}`;
    const w = await c.put(`/compact-live/${id}`, { n });
    assert.equal(w.status, 201);
    written.push(id);
    running = (await c.get('/compact-live')).body.compact_running;
  }
  assert.ok(written.length > 0);

  const after = (await c.get('/compact-live')).body;
  assert.ok(after.disk_size < before.disk_size, `disk_size ${after.disk_size} < ${before.disk_size}`);
  assert.equal(after.doc_count, 2000 + written.length);
  for (const id of written) {
    const r = await c.get(`/compact-live/${id}`);
    assert.equal(r.status, 200, id);
  }
  const sample = await c.get('/compact-live/d1999');
  assert.equal(sample.body.round, 3);
  // Writes after compaction land in the new file and survive a restart.
  assert.equal((await c.put('/compact-live/after', { ok: 1 })).status, 201);
  await server.restart();
  assert.equal((await c.get('/compact-live/after')).status, 200);
  assert.equal((await c.get(`/compact-live/${written[written.length - 1]}`)).status, 200);
  assert.equal((await c.get('/compact-live')).body.doc_count, 2001 + written.length);
});

test('an attachment still streaming in while compaction collects unused content is kept whole', async () => {
  assert.equal((await c.put('/compact-upload')).status, 201);
  // Something for the compaction to collect: content the next revision no longer uses.
  const first = await c.request('PUT', '/compact-upload/old/a.bin', { raw: Buffer.alloc(1000, 1), headers: { 'Content-Type': 'application/octet-stream' } });
  assert.equal((await c.del(`/compact-upload/old?rev=${first.body.rev}`)).status, 200);

  // The upload sends its first half, then waits for the compaction to finish before the rest.
  const half = Buffer.alloc(200_000, 7);
  const upload = httpRequest(new URL('compact-upload/doc/big.bin', server.url), {
    method: 'PUT', headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(half.length * 2) },
  });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    upload.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    upload.on('error', reject);
  });
  upload.write(half);
  // Give the server time to start writing the content to disk.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal((await c.post('/compact-upload/_compact', undefined, { headers: json })).status, 202);
  await waitFor('compaction over', async () => !(await c.get('/compact-upload')).body.compact_running);
  upload.end(half);
  const { status, text } = await answer;
  assert.equal(status, 201, text);
  const stored = await c.get('/compact-upload/doc/big.bin');
  assert.equal(stored.status, 200);
  assert.equal(stored.text.length, half.length * 2);
});

test('streams a client abandons, and HEAD requests, leave nothing holding an old data file after compaction', async () => {
  assert.equal((await c.put('/compact-held')).status, 201);
  const docs = Array.from({ length: 3000 }, (_, n) => ({ _id: `d${n}`, n, pad: 'p'.repeat(200) }));
  assert.equal((await c.post('/compact-held/_bulk_docs', { docs })).status, 201);
  assert.equal((await c.put('/compact-held/_design/d', { views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } })).status, 201);
  assert.equal((await c.get('/compact-held/_design/d/_view/v?limit=1')).status, 200);
  const streams = ['_all_docs?include_docs=true', '_changes?include_docs=true', '_design/d/_view/v', '_design/d/_view/v?include_docs=true'];
  for (const path of streams) assert.equal((await c.head(`/compact-held/${path}`)).status, 200);
  // Each stream read until its first chunk, then the client goes away.
  await Promise.all(streams.map((path) => new Promise<void>((resolve) => {
    const r = httpRequest(new URL(`compact-held/${path}`, server.url), (res) => {
      res.once('data', () => { r.destroy(); resolve(); });
    });
    r.on('error', () => resolve());
    r.end();
  })));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal((await c.post('/compact-held/_compact', undefined, { headers: json })).status, 202);
  assert.equal((await c.post('/compact-held/_compact/d', undefined, { headers: json })).status, 202);
  const generations = (dir: string) => readdirSync(dir).filter((f) => /^data-\d+\.mdb$/.test(f));
  const viewDir = join(server.dataDir, '.views');
  const indexDir = () => join(viewDir, readdirSync(viewDir).find((f) => f.startsWith('compact-held$'))!);
  // One generation each, the new one, once the compactions are over and the old files released.
  await waitFor('old data files released', async () => {
    const db = generations(join(server.dataDir, 'compact-held.settee'));
    const index = generations(indexDir());
    return db.length === 1 && db[0] !== 'data-1.mdb' && index.length === 1 && index[0] !== 'data-1.mdb';
  }, 10_000);
});
