/**
 * The partial-reduction skip list against brute force, on the real LMDB backend: random rows,
 * random ranges, incremental updates compared with a full rebuild.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbBackend } from '../../src/storage/lmdb.js';
import type { KeyValueStore, WriteOp } from '../../src/storage/types.js';
import { ViewReductions, levelOf, rowValue as storedRowValue, type ChangedRow } from '../../src/views/reductions.js';
import { reducerFor } from '../../src/views/reducer.js';
import type { ViewProgram } from '../../src/js/query-server.js';

const VIEW = 3;
const noProgram = (): Promise<ViewProgram> => Promise.reject(new Error('builtins only'));
const sum = reducerFor('_sum', 'v', noProgram, true);
const stats = reducerFor('_stats', 'v', noProgram, true);

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function suffixOf(n: number): Buffer {
  // Fixed-width so byte order is numeric order.
  return Buffer.from(String(n).padStart(8, '0'), 'latin1');
}

function rowKey(view: number, suffix: Buffer): Buffer {
  return Buffer.concat([Buffer.of(0x6b, view), suffix]);
}

function rowValue(n: number, value: number): Buffer {
  return Buffer.from(JSON.stringify({ id: `doc${n}`, key: n, value }));
}

async function withStore(fn: (store: KeyValueStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'settee-reductions-'));
  const backend = new LmdbBackend(dir);
  try {
    const store = (await backend.open('index', { create: true }))!;
    await fn(store);
  } finally {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

let generation = 0;

async function expectRange(store: KeyValueStore, tree: ViewReductions, rows: Map<number, number>, lo: number, hi: number | undefined): Promise<void> {
  const snapshot = await store.snapshot();
  try {
    const at = tree.at(snapshot, generation, rows.size);
    const agg = await at.aggregate(suffixOf(lo), hi === undefined ? undefined : suffixOf(hi), true);
    assert.ok(agg, 'segments agree with rows');
    // rank: rows below a suffix, whether or not a row has that suffix (a trailing byte makes one no row has).
    const below = (n: number, inside: boolean) => [...rows.keys()].filter((k) => k < n || (inside && k === n)).length;
    assert.equal(await at.rank(suffixOf(lo)), below(lo, false), `rank of ${lo}`);
    assert.equal(await at.rank(Buffer.concat([suffixOf(lo), Buffer.of(0x35)])), below(lo, true), `rank just after ${lo}`);
    assert.equal(await at.rank(Buffer.alloc(0)), 0, 'rank of the start');
    let count = 0;
    let total = 0;
    for (const [n, v] of rows) {
      if (n >= lo && (hi === undefined || n < hi)) {
        count++;
        total += v;
      }
    }
    assert.equal(agg.count, count, `count of [${lo}, ${hi})`);
    const pieces = [...agg.partials, ...(await sum.reduce([agg.rows]))];
    const value = (await sum.rereduce([pieces]))[0];
    assert.equal(value, total, `sum of [${lo}, ${hi})`);
  } finally {
    snapshot.release();
  }
}

test('levels are spread as 1/16 per level and depend only on the key', () => {
  const counts = [0, 0, 0, 0];
  for (let n = 0; n < 100_000; n++) {
    const level = levelOf(suffixOf(n));
    if (level >= 1) counts[1]!++;
    if (level >= 2) counts[2]!++;
    assert.equal(level, levelOf(suffixOf(n)));
  }
  assert.ok(counts[1]! > 5000 && counts[1]! < 7500, `level ≥1: ${counts[1]}`);
  assert.ok(counts[2]! > 250 && counts[2]! < 550, `level ≥2: ${counts[2]}`);
});

test('aggregates over random ranges equal brute force, after rebuilds and incremental updates', async () => {
  await withStore(async (store) => {
    const next = random(42);
    const rows = new Map<number, number>();
    const ops: WriteOp[] = [];
    for (let i = 0; i < 6000; i++) {
      const n = Math.floor(next() * 50_000);
      const v = Math.floor(next() * 100);
      rows.set(n, v);
      ops.push({ type: 'put', key: rowKey(VIEW, suffixOf(n)), value: rowValue(n, v) });
    }
    // Rows of neighbouring views must not leak in.
    ops.push({ type: 'put', key: rowKey(VIEW - 1, suffixOf(5)), value: rowValue(5, 1000) });
    ops.push({ type: 'put', key: rowKey(VIEW + 1, suffixOf(5)), value: rowValue(5, 1000) });
    await store.write(ops, { durable: false });
    const tree = new ViewReductions(store, VIEW, true);
    await tree.rebuild(sum);

    const check = async () => {
      await expectRange(store, tree, rows, 0, undefined);
      for (let i = 0; i < 150; i++) {
        const a = Math.floor(next() * 52_000);
        const b = Math.floor(next() * 52_000);
        await expectRange(store, tree, rows, Math.min(a, b), next() < 0.1 ? undefined : Math.max(a, b));
      }
    };
    await check();

    // Incremental: inserts, deletes and value changes, several rounds.
    for (let round = 0; round < 4; round++) {
      const changed: ChangedRow[] = [];
      const batch: WriteOp[] = [];
      for (let i = 0; i < 300; i++) {
        const n = Math.floor(next() * 50_000);
        if (rows.has(n) && next() < 0.5) {
          rows.delete(n);
          batch.push({ type: 'del', key: rowKey(VIEW, suffixOf(n)) });
          changed.push({ suffix: suffixOf(n), present: false });
        } else {
          const v = Math.floor(next() * 100);
          rows.set(n, v);
          batch.push({ type: 'put', key: rowKey(VIEW, suffixOf(n)), value: rowValue(n, v) });
          changed.push({ suffix: suffixOf(n), present: true });
        }
      }
      // A row changed twice in one batch: only its final state counts.
      const last = new Map(changed.map((c) => [c.suffix.toString('latin1'), c]));
      await store.write(batch, { durable: false });
      await tree.update([...last.values()], sum);
      generation++;
      await check();
    }

    // The incrementally maintained segments are exactly those a rebuild writes.
    const dump = async () => {
      const out: string[] = [];
      for await (const { key, value } of store.range({ gte: Buffer.of(0x31), lt: Buffer.of(0x40) })) {
        out.push(`${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);
      }
      return out;
    };
    const maintained = await dump();
    await tree.rebuild(sum);
    assert.deepEqual(maintained, await dump());
  });
});

test('deleting every row leaves only empty heads; counts-only views store no values', async () => {
  await withStore(async (store) => {
    const ops: WriteOp[] = [];
    const changed: ChangedRow[] = [];
    for (let n = 0; n < 2000; n++) ops.push({ type: 'put', key: rowKey(0, suffixOf(n)), value: rowValue(n, n) });
    await store.write(ops, { durable: false });
    const counts = new ViewReductions(store, 0, false);
    await counts.rebuild(stats);
    const snapshot = await store.snapshot();
    const all = await counts.at(snapshot, 0, 2000).aggregate(Buffer.alloc(0), undefined, true);
    snapshot.release();
    assert.equal(all?.count, 2000);
    assert.deepEqual(all?.partials.filter((p) => p !== undefined), []);
    await store.write(ops.map((op) => ({ type: 'del', key: op.key })), { durable: false });
    for (let n = 0; n < 2000; n++) changed.push({ suffix: suffixOf(n), present: false });
    await counts.update(changed, undefined);
    const left: string[] = [];
    for await (const { key, value } of store.range({ gte: Buffer.of(0x31), lt: Buffer.of(0x40) })) left.push(`${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);
    // One head per level, each counting nothing.
    assert.deepEqual(left, [1, 2, 3, 4, 5, 6].map((l) => `${(0x30 + l).toString(16)}00=000000000000`));
  });
});

test('a stored row gives back its value, read from its last bytes when it is a number', () => {
  const values: unknown[] = [0, -1, 42, 3.5, -0.25, 1e21, 2.5e-7, -1.5E+300, 'x', '7', 'a"value":1', null, true,
    [1, 2], { value: 3 }, { a: { value: 4 } }, [{ value: 5 }], ''];
  for (const value of values) {
    for (const key of [null, 'k', ['value', 7], { value: 8 }]) {
      const row = Buffer.from(`{"id":"d\\"value\\":9","key":${JSON.stringify(key)},"value":${JSON.stringify(value)}}`);
      assert.deepEqual(storedRowValue(row), value, row.toString());
    }
  }
  // A row with no value member (a JSON null was stored) reads as null.
  assert.equal(storedRowValue(Buffer.from('{"id":"d","key":1,"value":null}')), null);
});
