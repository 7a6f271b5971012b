/**
 * The LMDB store: reads that lend their bytes (decodeMany) give exact values, in order, per
 * snapshot; and closing a store (its database deleted, or the server restarting) refuses new
 * work at once while reads under way finish on the environment, which closes after them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../src/storage/lmdb.js';
import type { KeyValueStore } from '../../src/storage/types.js';

/** A backend in a fresh directory, closed and removed afterwards. */
async function withBackend(run: (backend: LmdbBackend, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'settee-lmdb-store-'));
  const backend = new LmdbBackend(dir);
  try {
    await run(backend, dir);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function withStore(run: (store: KeyValueStore) => Promise<void>): Promise<void> {
  await withBackend(async (backend) => run((await backend.open('lent', { create: true }))!));
}

test('decodeMany hands each value with its exact length, in key order, undefined where absent', async () => {
  await withStore(async (store) => {
    // Long values then short ones: a lent buffer that kept its previous length would show the
    // tail of the longer value after the shorter one.
    const values = ['x'.repeat(5000), 'short', 'y'.repeat(300), '', 'z'];
    await store.write(values.map((v, i) => ({ type: 'put', key: Buffer.from(`k${i}`), value: Buffer.from(v) })), { durable: false });
    const keys = [0, 1, 9, 2, 3, 4].map((i) => Buffer.from(`k${i}`));
    const got = await store.decodeMany(keys, (bytes, index) => (bytes === undefined ? `missing ${index}` : Buffer.from(bytes).toString()));
    assert.deepEqual(got, [values[0], values[1], 'missing 2', values[2], values[3], values[4]]);
    // Both lengths: views built from byteLength/byteOffset must see the value alone too.
    const lengths = await store.decodeMany(keys, (bytes) => bytes && [bytes.length, bytes.byteLength]);
    assert.deepEqual(lengths, [[5000, 5000], [5, 5], undefined, [300, 300], [0, 0], [1, 1]]);
  });
});

test('decodeMany on a snapshot reads the snapshot, not later writes', async () => {
  await withStore(async (store) => {
    await store.write([{ type: 'put', key: Buffer.from('a'), value: Buffer.from('before') }], { durable: false });
    const snapshot = await store.snapshot();
    try {
      await store.write([
        { type: 'put', key: Buffer.from('a'), value: Buffer.from('after, and longer') },
        { type: 'put', key: Buffer.from('b'), value: Buffer.from('new') },
      ], { durable: false });
      const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString() : undefined);
      assert.deepEqual(await snapshot.decodeMany([Buffer.from('a'), Buffer.from('b')], text), ['before', undefined]);
      assert.deepEqual(await store.decodeMany([Buffer.from('a'), Buffer.from('b')], text), ['after, and longer', 'new']);
    } finally {
      snapshot.release();
    }
  });
});

test('a store read or written after it is closed (its database deleted) fails with not_found; nothing is left to throw later', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    await withBackend(async (backend) => {
      const store = (await backend.open('closing', { create: true }))!;
      await store.write([{ type: 'put', key: Buffer.from('k'), value: Buffer.from('v') }], { durable: false });
      // A read right before the close leaves lmdb a pending reset of its read transaction.
      assert.equal(Buffer.from((await store.get(Buffer.from('k')))!).toString(), 'v');
      const closing = store.close({ deleted: true });
      await assert.rejects(store.get(Buffer.from('k')), (err: { status?: number; error?: string }) => err.status === 404 && err.error === 'not_found');
      await assert.rejects(store.write([{ type: 'put', key: Buffer.from('k2'), value: Buffer.from('v') }], { durable: false }), (err: { status?: number }) => err.status === 404);
      await closing;
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(uncaught, []);
    });
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});

test('a store closed for a restart refuses reads and writes with 503, for the client to retry', async () => {
  await withStore(async (store) => {
    await store.close();
    await assert.rejects(store.get(Buffer.from('k')), (err: { status?: number; error?: string }) => err.status === 503 && err.error === 'service_unavailable');
    await assert.rejects(store.write([{ type: 'put', key: Buffer.from('k'), value: Buffer.from('v') }], { durable: false }), (err: { status?: number }) => err.status === 503);
    await assert.rejects(store.blobs.write('0'.repeat(32), (async function* () { yield Buffer.from('x'); })()), (err: { status?: number }) => err.status === 503);
  });
});

test('a range scan paused when its store closes, and a snapshot taken before, read to the end', async () => {
  await withStore(async (store) => {
    const keys = Array.from({ length: 1000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    await store.write(keys.map((k) => ({ type: 'put', key: Buffer.from(k), value: Buffer.from(`value of ${k}`) })), { durable: false });
    const snapshot = await store.snapshot();
    const scan = store.rangeChunks({}, 100)[Symbol.asyncIterator]();
    const seen: string[] = [];
    const first = await scan.next();
    for (const { key } of first.value as { key: Uint8Array }[]) seen.push(Buffer.from(key).toString());
    // The scan is paused between chunks, holding lmdb's cursor, when the store closes.
    await store.close({ deleted: true });
    await assert.rejects(store.get(Buffer.from('k0001')), (err: { status?: number }) => err.status === 404);
    for (let next = await scan.next(); !next.done; next = await scan.next()) {
      for (const { key, value } of next.value) {
        assert.equal(Buffer.from(value).toString(), `value of ${Buffer.from(key).toString()}`);
        seen.push(Buffer.from(key).toString());
      }
    }
    assert.deepEqual(seen, keys);
    const fromSnapshot = await snapshot.decodeMany([Buffer.from('k0999')], (bytes) => bytes && Buffer.from(bytes).toString());
    assert.deepEqual(fromSnapshot, ['value of k0999']);
    snapshot.release();
  });
});

test('a compaction its store\'s closing cuts short leaves the old generation alone and no copy behind', async () => {
  await withBackend(async (backend, dir) => {
    for (let round = 0; round < 10; round++) {
      const store = (await backend.open(`c${round}`, { create: true }))!;
      const ops = Array.from({ length: 3000 }, (_, i) => ({ type: 'put' as const, key: Buffer.from(`k${i}`), value: Buffer.alloc(500, i % 251) }));
      await store.write(ops, { durable: false });
      const compaction = store.compact();
      // The close lands at a different point of the copy and replay each round.
      for (let wait = 0; wait < round; wait++) await new Promise((resolve) => setImmediate(resolve));
      await store.close();
      await compaction;
      const files = readdirSync(join(dir, readdirSync(dir).find((f) => f.startsWith(`c${round}.`))!));
      assert.ok(!files.some((f) => f.includes('compacting')), files.join(' '));
      // One generation survives: the old one, or the new one when the swap came first.
      assert.equal(files.filter((f) => /^data-\d+\.mdb$/.test(f)).length, 1, files.join(' '));
      const reopened = (await backend.open(`c${round}`, { create: false }))!;
      assert.equal(Buffer.from((await reopened.get(Buffer.from('k2999')))!).toString(), Buffer.alloc(500, 2999 % 251).toString());
      await reopened.close();
    }
  });
});

test('the blob list names blobs still being written, so a collector can tell them apart', async () => {
  await withStore(async (store) => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => { finish = resolve; });
    const id = 'a'.repeat(32);
    const writing = store.blobs.write(id, (async function* () {
      yield Buffer.from('first half ');
      await gate;
      yield Buffer.from('second half');
    })());
    await new Promise((resolve) => setTimeout(resolve, 50));
    const listed: string[] = [];
    for await (const blob of store.blobs.list()) listed.push(blob);
    assert.deepEqual(listed, [id]);
    finish();
    assert.equal(await writing, 22);
    const read: Buffer[] = [];
    for await (const chunk of store.blobs.read(id)) read.push(chunk);
    assert.equal(Buffer.concat(read).toString(), 'first half second half');
  });
});
