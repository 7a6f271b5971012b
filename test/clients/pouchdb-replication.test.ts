/**
 * PouchDB 9 replicating with Settee beyond the basics in pouchdb.test.ts: a replication cut
 * short resumes from its checkpoint, a pull with a Mango `selector` gets only what it matches,
 * `live: true, retry: true` survives Settee being killed and restarted, and documents PouchDB
 * pushed (conflicts, deletions, attachments) pass through Settee's own replicator and come back
 * to PouchDB identical.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import { PouchFixture } from './pouch-fixture.js';
import { startServer, type TestServer } from '../helpers/server.js';

let fx: PouchFixture;
let restarted: TestServer | undefined;
/** Puts the test runner's unhandled-rejection listeners back (see whileConnectionsDrop). */
let restoreRejections: (() => void) | undefined;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-repl-');
});
after(async () => {
  await restarted?.stop();
  await fx.close();
  restoreRejections?.();
});

async function until(what: string, cond: () => boolean | Promise<boolean>, deadlineMs = 60000, failed?: () => unknown): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await cond())) {
    if (failed?.()) throw failed();
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a PouchDB pull cut short resumes from its checkpoint on Settee', { timeout: 60000 }, async () => {
  const rdb = await fx.remote('pouch-resume');
  await rdb.bulkDocs(Array.from({ length: 300 }, (_, i) => ({ _id: `d${String(i).padStart(3, '0')}`, i })));
  const ldb = fx.local('resume-local');
  const first = ldb.replicate.from(rdb, { batch_size: 50, batches_limit: 1 });
  let changes = 0;
  first.on('change', () => {
    if (++changes === 2) first.cancel();
  });
  await new Promise((resolve) => first.on('complete', resolve));
  const copied = (await ldb.info()).doc_count;
  assert.ok(copied >= 100 && copied < 300, `the first run stopped part-way (${copied} docs)`);

  // PouchDB's checkpoint is a _local document on Settee too.
  const checkpoints = fx.proxy.log.filter((e) => e.method === 'PUT' && e.path.startsWith('/pouch-resume/_local/'));
  assert.ok(checkpoints.length > 0, fx.proxy.show('/pouch-resume/_local/'));
  const logPath = checkpoints[0]!.path;
  const stored = await fx.raw.get(logPath);
  assert.equal(stored.status, 200);
  const checkpointed = Number(stored.body.last_seq);
  assert.ok(checkpointed >= 50, stored.text);

  const second = await ldb.replicate.from(rdb, { batch_size: 50 });
  assert.ok(second.docs_read <= 300 - checkpointed, `the second run read ${second.docs_read} docs, not all 300 again`);
  assert.equal((await ldb.info()).doc_count, 300);
});

test('a PouchDB pull with a selector asks Settee for filter=_selector and gets only the matching documents', { timeout: 60000 }, async () => {
  const rdb = await fx.remote('pouch-selector');
  await rdb.bulkDocs(Array.from({ length: 40 }, (_, i) => ({ _id: `s${String(i).padStart(2, '0')}`, kind: i % 4 === 0 ? 'keep' : 'skip', i })));
  const ldb = fx.local('selector-local');
  const result = await ldb.replicate.from(rdb, { selector: { kind: 'keep', i: { $lt: 30 } } });
  assert.equal(result.ok, true);
  const local = await ldb.allDocs({ include_docs: true });
  assert.deepEqual(local.rows.map((r: { id: string }) => r.id), ['s00', 's04', 's08', 's12', 's16', 's20', 's24', 's28']);
  assert.ok(fx.proxy.log.some((e) => e.method === 'POST' && e.path.startsWith('/pouch-selector/_changes') && e.path.includes('filter=_selector')), fx.proxy.show('/pouch-selector/_changes'));
});

test('Settee\'s replicator in the middle: PouchDB → Settee → Settee → PouchDB keeps conflicts, deletions and attachments', { timeout: 60000 }, async () => {
  const a = fx.local('chain-a');
  const b = fx.local('chain-b');
  await a.put({ _id: 'c', side: 'a' });
  await b.put({ _id: 'c', side: 'b' });
  const gone = await a.put({ _id: 'gone' });
  await a.remove('gone', gone.rev);
  await a.put({ _id: 'att', _attachments: { 'x.bin': { content_type: 'application/octet-stream', data: Buffer.from([0, 1, 2, 255]).toString('base64') } } });
  const first = await fx.remote('pouch-chain-1');
  await a.replicate.to(first);
  await b.replicate.to(first);

  const r = await fx.raw.post('/_replicate', { source: 'pouch-chain-1', target: 'pouch-chain-2', create_target: true });
  assert.equal(r.status, 200, r.text);
  const end = fx.local('chain-end');
  await end.replicate.from(fx.open('pouch-chain-2'));

  const state = async (db: any) => {
    const doc = await db.get('c', { conflicts: true });
    return { winner: doc._rev, side: doc.side, conflicts: doc._conflicts };
  };
  const there = await state(fx.open('pouch-chain-1'));
  assert.equal(there.conflicts.length, 1);
  assert.deepEqual(await state(end), there, 'the same winner and conflict everywhere');
  await assert.rejects(end.get('gone'), (err: any) => err.status === 404 && err.reason === 'deleted');
  const att = await end.getAttachment('att', 'x.bin');
  assert.deepEqual([...att], [0, 1, 2, 255]);
});

/**
 * Runs `fn` while PouchDB's lost connections are expected: its HTTP adapter lets a request cut
 * by the server's death reject with nobody listening (it retries regardless), which the test
 * runner would count against the test. Connection errors are dropped from then until the file's
 * tests are over (such a request may reject after `fn` is done); anything else still reaches the
 * runner.
 */
async function whileConnectionsDrop<T>(fn: () => Promise<T>): Promise<T> {
  const runner = process.listeners('unhandledRejection');
  const filter = (reason: unknown, promise: Promise<unknown>) => {
    const text = String((reason as { message?: unknown } | null)?.message ?? reason);
    if (/ECONNRESET|ECONNREFUSED|socket hang up|EPIPE/.test(text)) return;
    for (const handler of runner) handler(reason, promise);
  };
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', filter);
  restoreRejections = () => {
    process.removeListener('unhandledRejection', filter);
    for (const handler of runner) process.on('unhandledRejection', handler);
  };
  return await fn();
}

test('live: true, retry: true sync survives Settee being killed and restarted', { timeout: 90000 }, () => whileConnectionsDrop(async () => {
  // Straight to Settee, not through the logging proxy: a refused connection is what PouchDB
  // retries (the proxy would answer an empty 502, which PouchDB treats as a fatal bad response).
  assert.equal((await fx.raw.put('/pouch-retry')).status, 201);
  const rdb = new PouchDB(`${fx.server.url}pouch-retry`);
  const ldb = fx.local('retry-local');
  await rdb.put({ _id: 'seed' });
  const sync = ldb.sync(rdb, { live: true, retry: true });
  const seen = new Set<string>();
  let failed: unknown;
  sync.on('error', (err: unknown) => { failed = err; });
  sync.on('change', (info: any) => { for (const d of info.change.docs) seen.add(`${info.direction}:${d._id}`); });
  try {
    await until('seed pulled', () => seen.has('pull:seed'), 60000, () => failed);
    await fx.server.kill();
    await ldb.put({ _id: 'while-down' });
    restarted = await startServer({ dataDir: fx.server.dataDir, port: fx.server.port });
    await until('the local write pushed after the restart', () => seen.has('push:while-down'), 60000, () => failed);
    const w = await fx.raw.put('/pouch-retry/after-restart', { n: 1 });
    assert.equal(w.status, 201);
    await until('a later Settee write pulled', () => seen.has('pull:after-restart'), 60000, () => failed);
    assert.equal((await ldb.get('after-restart'))._rev, w.body.rev);
  } finally {
    const done = new Promise((r) => sync.on('complete', r));
    sync.cancel();
    await Promise.race([done, new Promise((r) => setTimeout(r, 5000))]);
    await rdb.close();
  }
}));
