/**
 * Deleting a database while work on it is under way: slow streamed reads paused between chunks,
 * a continuous changes feed, a view build, a compaction copying the file, attachment uploads and
 * bulk writes. The deletion must cut that work short cleanly: the server stays up, no request
 * gets a 500, nothing of the database is left on disk, and a database created later under the
 * same name starts empty (no documents, no view rows from its predecessor's index).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, Agent } from 'node:http';
import { readdirSync } from 'node:fs';
import { serverForFile } from '../helpers/server.js';
import { seededRandom } from '../helpers/random.js';

const { server, c } = await serverForFile();

const DB = 'deletion_race';
const DDOC = { views: { v: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.n, doc.pad.length); }' } } };
const agent = new Agent({ keepAlive: true, maxSockets: 32 });

interface Outcome {
  what: string;
  /** HTTP status, or undefined when the connection failed before a status arrived. */
  status: number | undefined;
  /** True when the body was cut short after the status (a stream its deletion ended). */
  cut: boolean;
  text: string;
}

/**
 * Sends one request. A `slow` reader pauses after every chunk it receives, so the server's
 * stream is held between chunks with its read of the database unfinished.
 */
function send(what: string, method: string, path: string, body?: Buffer | string, contentType = 'application/json', slow = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const r = httpRequest(new URL(path.slice(1), server.url), { method, agent, headers: { 'Content-Type': contentType } }, (res) => {
      const chunks: Buffer[] = [];
      let cut = false;
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (slow) {
          res.pause();
          setTimeout(() => res.resume(), 3);
        }
      });
      res.on('aborted', () => { cut = true; });
      res.on('error', () => { cut = true; });
      res.on('close', () => resolve({ what, status: res.statusCode, cut: cut || !res.complete, text: Buffer.concat(chunks).toString().slice(0, 300) }));
    });
    r.on('error', (err) => resolve({ what, status: undefined, cut: false, text: String(err) }));
    r.end(body);
  });
}

async function fill(): Promise<void> {
  assert.equal((await c.put(`/${DB}`)).status, 201);
  const pad = 'x'.repeat(1000);
  const docs = Array.from({ length: 2000 }, (_, n) => ({ _id: `d${String(n).padStart(5, '0')}`, n, pad }));
  assert.equal((await c.post(`/${DB}/_bulk_docs`, { docs })).status, 201);
  assert.equal((await c.put(`/${DB}/_design/d`, DDOC)).status, 201);
  // Old revisions give the compaction something to drop.
  const edits = docs.slice(0, 500).map((d, i) => ({ ...d, _rev: undefined as string | undefined, pad: `${pad}${i}` }));
  const revs = (await c.post(`/${DB}/_all_docs`, { keys: edits.map((d) => d._id) })).body.rows as { value: { rev: string } }[];
  edits.forEach((d, i) => { d._rev = revs[i]!.value.rev; });
  assert.equal((await c.post(`/${DB}/_bulk_docs`, { docs: edits })).status, 201);
}

test('a deletion cuts short slow streams, a view build, a compaction and uploads: no crash, no 500, nothing left behind', async () => {
  const random = seededRandom(20261122);
  const outcomes: Outcome[] = [];
  for (let round = 0; round < 12; round++) {
    await fill();
    const work: Promise<Outcome>[] = [];
    for (let i = 0; i < 3; i++) work.push(send('all_docs', 'GET', `/${DB}/_all_docs?include_docs=true`, undefined, undefined, true));
    work.push(send('changes', 'GET', `/${DB}/_changes?include_docs=true`, undefined, undefined, true));
    work.push(send('continuous changes', 'GET', `/${DB}/_changes?feed=continuous&include_docs=true&timeout=1000`, undefined, undefined, true));
    work.push(send('view', 'GET', `/${DB}/_design/d/_view/v`, undefined, undefined, true));
    work.push(send('compact', 'POST', `/${DB}/_compact`));
    for (let i = 0; i < 3; i++) work.push(send('upload', 'PUT', `/${DB}/att${i}/a.bin`, Buffer.alloc(300_000, i), 'application/octet-stream'));
    work.push(send('bulk', 'POST', `/${DB}/_bulk_docs`, JSON.stringify({ docs: [{ _id: 'late1' }, { _id: 'late2' }] })));
    work.push(send('find', 'POST', `/${DB}/_find`, JSON.stringify({ selector: { n: { $gt: 10 } } })));
    // The deletion lands at a different point of that work each round.
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 40)));
    const deletion = await send('delete', 'DELETE', `/${DB}`);
    assert.equal(deletion.status, 200, deletion.text);
    outcomes.push(...(await Promise.all(work)));
    assert.equal((await c.get(`/${DB}`)).status, 404, `round ${round}: the database stays deleted`);
  }
  assert.equal((await c.get('/')).status, 200, 'the server is still up');
  for (const o of outcomes) {
    assert.ok(o.status !== undefined, `${o.what}: no answer (${o.text})`);
    assert.ok(o.status < 500, `${o.what}: ${o.status} ${o.text}`);
    // Only a stream already under way may be cut short (its headers went before the deletion).
    if (o.cut) assert.ok(['all_docs', 'changes', 'continuous changes', 'view'].includes(o.what), `${o.what} cut short`);
  }
  const left = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => [
    ...(e.name.startsWith(DB) ? [e.name] : []),
    ...(e.isDirectory() && !e.name.startsWith(DB) ? left(`${dir}/${e.name}`) : []),
  ]);
  // Give removals that wait on the last reader a moment to run.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(left(server.dataDir), []);
});

test('a database created under a deleted one\'s name starts empty, view index included', async () => {
  const random = seededRandom(7);
  for (let round = 0; round < 5; round++) {
    await fill();
    // The first query of the view, which creates its index and builds it, races the deletion.
    const query = send('view', 'GET', `/${DB}/_design/d/_view/v`, undefined, undefined, true);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 30)));
    assert.equal((await c.del(`/${DB}`)).status, 200);
    assert.ok(((await query).status ?? 0) < 500);
    assert.equal((await c.put(`/${DB}`)).status, 201);
    assert.equal((await c.put(`/${DB}/_design/d`, DDOC)).status, 201);
    assert.equal((await c.put(`/${DB}/one`, { n: 1, pad: 'ab' })).status, 201);
    const view = await c.get(`/${DB}/_design/d/_view/v`);
    assert.equal(view.status, 200);
    assert.deepEqual(view.body.rows, [{ id: 'one', key: 1, value: 2 }], `round ${round}`);
    assert.equal((await c.get(`/${DB}/_all_docs`)).body.total_rows, 2);
    assert.equal((await c.del(`/${DB}`)).status, 200);
  }
});
