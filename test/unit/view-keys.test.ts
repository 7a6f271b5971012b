/** The view number in index keys: order-preserving, prefix-free, one byte below 255. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_VIEWS, ROW, suffixStart, viewEnd, viewOf, viewPrefix } from '../../src/views/view-keys.js';

const views = [0, 1, 100, 253, 254, 255, 256, 300, 511, 0x10000, MAX_VIEWS - 2, MAX_VIEWS - 1];

test('views below 255 keep one byte; from 255 on, 0xFF and two more', () => {
  assert.deepEqual([...viewPrefix(ROW, 0)], [ROW, 0]);
  assert.deepEqual([...viewPrefix(ROW, 254)], [ROW, 254]);
  assert.deepEqual([...viewPrefix(ROW, 255)], [ROW, 0xff, 0, 0]);
  assert.deepEqual([...viewPrefix(ROW, 300)], [ROW, 0xff, 0, 45]);
  assert.deepEqual([...viewPrefix(ROW, MAX_VIEWS - 1)], [ROW, 0xff, 0xff, 0xfe]);
  assert.deepEqual([...viewEnd(ROW, MAX_VIEWS - 1)], [ROW, 0xff, 0xff, 0xff]);
});

test('every key of a view lies between its prefix and its end, whatever follows the prefix', () => {
  const suffixes = [Buffer.alloc(0), Buffer.of(0), Buffer.of(0xff, 0xff, 0xff, 0xff), Buffer.from('some key')];
  for (const view of views) {
    const start = viewPrefix(ROW, view);
    const end = viewEnd(ROW, view);
    assert.ok(Buffer.compare(start, end) < 0, `view ${view}`);
    for (const suffix of suffixes) {
      const key = Buffer.concat([start, suffix]);
      assert.ok(Buffer.compare(start, key) <= 0 && Buffer.compare(key, end) < 0, `view ${view}, suffix ${suffix.toString('hex')}`);
      assert.equal(viewOf(key), view);
      assert.equal(suffixStart(key), start.length);
      assert.deepEqual(key.subarray(suffixStart(key)), suffix);
    }
  }
});

test('prefixes sort as their view numbers, and none is a prefix of another', () => {
  const all = Array.from({ length: 1000 }, (_, v) => v).concat(views);
  for (let i = 1; i < all.length; i++) {
    const [a, b] = [all[i - 1]!, all[i]!];
    if (a === b) continue;
    const [pa, pb] = [viewPrefix(ROW, a), viewPrefix(ROW, b)];
    assert.equal(Math.sign(Buffer.compare(pa, pb)), Math.sign(a - b), `${a} and ${b}`);
    const shorter = pa.length <= pb.length ? pa : pb;
    const longer = shorter === pa ? pb : pa;
    assert.notDeepEqual(longer.subarray(0, shorter.length), shorter, `${a} and ${b}`);
  }
});
