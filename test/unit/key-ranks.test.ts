/** KeyRanks against a real LMDB store: counts by sample equal plain counts, before and after writes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../src/storage/lmdb.js';
import type { KeyValueStore, WriteOp } from '../../src/storage/types.js';
import { KeyRanks } from '../../src/core/key-ranks.js';

const key = (n: number): Buffer => Buffer.from(`L${String(n).padStart(6, '0')}`);
const bounds = { gte: Buffer.from('L'), lt: Buffer.from('M') };

test('counts from the sample equal plain counts, and a write makes it stale', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'settee-key-ranks-'));
  const backend = new LmdbBackend(dir);
  try {
    const store: KeyValueStore = (await backend.open('ranks', { create: true }))!;
    const present = new Set<number>();
    const write = async (put: number[], del: number[]) => {
      const ops: WriteOp[] = [
        ...put.map((n): WriteOp => ({ type: 'put', key: key(n), value: Buffer.of(1) })),
        ...del.map((n): WriteOp => ({ type: 'del', key: key(n) })),
        // Neighbours outside the bounds must never be counted.
        { type: 'put', key: Buffer.from('K~'), value: Buffer.of(0) },
        { type: 'put', key: Buffer.from('M0'), value: Buffer.of(0) },
      ];
      await store.write(ops, { durable: false });
      for (const n of put) present.add(n);
      for (const n of del) present.delete(n);
    };
    const expected = (lo: number, hi: number) => [...present].filter((n) => n >= lo && n < hi).length;
    const ranks = new KeyRanks(bounds);
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

    await write(Array.from({ length: 5000 }, (_, i) => i * 2), []);
    const check = async (seq: number, rounds: number) => {
      const snapshot = await store.snapshot();
      try {
        for (let i = 0; i < rounds; i++) {
          const a = Math.floor(random() * 10_500) - 100;
          const b = a + Math.floor(random() * 4000);
          const lo = a < 0 ? bounds.gte : key(a);
          assert.equal(await ranks.count(snapshot, seq, lo, key(b)), expected(Math.max(a, 0), b), `[${a}, ${b}) at ${seq}`);
          assert.equal(await ranks.count(snapshot, seq, key(b), bounds.lt), expected(b, Infinity), `[${b}, end) at ${seq}`);
        }
        assert.equal(await ranks.count(snapshot, seq, key(9), key(3)), 0, 'an empty range');
      } finally {
        snapshot.release();
      }
    };
    // The first count at a sequence is a plain one; the next ones use the sample taken then.
    await check(1, 200);
    await write(Array.from({ length: 700 }, (_, i) => i * 14 + 1), Array.from({ length: 900 }, (_, i) => i * 6));
    await check(2, 200);
    await write([], [...present].filter((n) => n > 300));
    await check(3, 50);
    await write([], [...present]);
    await check(4, 20);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
