/** The LMDB store's reads that lend their bytes (decodeMany): exact values, in order, per snapshot. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../src/storage/lmdb.js';
import type { KeyValueStore } from '../../src/storage/types.js';

async function withStore(run: (store: KeyValueStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'settee-lmdb-store-'));
  const backend = new LmdbBackend(dir);
  try {
    await run((await backend.open('lent', { create: true }))!);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
  const dir = mkdtempSync(join(tmpdir(), 'settee-lmdb-closed-'));
  const backend = new LmdbBackend(dir);
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    const store = (await backend.open('closing', { create: true }))!;
    await store.write([{ type: 'put', key: Buffer.from('k'), value: Buffer.from('v') }], { durable: false });
    // A read right before the close leaves lmdb a pending reset of its read transaction.
    assert.equal(Buffer.from((await store.get(Buffer.from('k')))!).toString(), 'v');
    const closing = store.close();
    await assert.rejects(store.get(Buffer.from('k')), (err: { status?: number; error?: string }) => err.status === 404 && err.error === 'not_found');
    await assert.rejects(store.write([{ type: 'put', key: Buffer.from('k2'), value: Buffer.from('v') }], { durable: false }), (err: { status?: number }) => err.status === 404);
    await closing;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(uncaught, []);
  } finally {
    process.off('uncaughtException', onUncaught);
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
