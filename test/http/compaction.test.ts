/** Compaction gives space back while the database keeps taking writes, and loses none of them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
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
