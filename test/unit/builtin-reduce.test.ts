import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reduceBuiltin, rereduceBuiltin, isBuiltin } from '../../src/views/builtin-reduce.js';
import { CouchError } from '../../src/errors.js';

test('_count counts rows and rereduce adds counts', () => {
  assert.equal(reduceBuiltin('_count', [1, 2, 3], ['a', null, 3]), 3);
  assert.equal(rereduceBuiltin('_count', [3, 4, 0]), 7);
});

test('_sum adds numbers, and arrays element by element (shorter arrays padded)', () => {
  assert.equal(reduceBuiltin('_sum', [], [1, 2, 3.5]), 6.5);
  assert.deepEqual(reduceBuiltin('_sum', [], [[1, 2], [3, 4, 5]]), [4, 6, 5]);
  assert.deepEqual(rereduceBuiltin('_sum', [[1, 1], [2]]), [3, 1]);
  assert.equal(reduceBuiltin('_sum', [], []), 0);
});

test('_sum of a non-number is a builtin_reduce_error', () => {
  assert.throws(() => reduceBuiltin('_sum', [], [1, 'x']), (e) => e instanceof CouchError && e.error === 'builtin_reduce_error');
  assert.throws(() => reduceBuiltin('_sum', [], [[1, 'x']]), (e) => e instanceof CouchError);
});

test('_stats computes sum, count, min, max, sumsqr and merges partials', () => {
  const a = reduceBuiltin('_stats', [], [2, 4]);
  assert.deepEqual(a, { sum: 6, count: 2, min: 2, max: 4, sumsqr: 20 });
  const b = reduceBuiltin('_stats', [], [-1]);
  assert.deepEqual(rereduceBuiltin('_stats', [a, b]), { sum: 5, count: 3, min: -1, max: 4, sumsqr: 21 });
  assert.throws(() => reduceBuiltin('_stats', [], ['no']), (e) => e instanceof CouchError);
});

test('_approx_count_distinct counts distinct keys', () => {
  assert.equal(reduceBuiltin('_approx_count_distinct', [['a', 'd1'], ['a', 'd2'], ['b', 'd3']], [1, 1, 1]), 2);
});

test('isBuiltin knows the four names', () => {
  for (const n of ['_sum', '_count', '_stats', '_approx_count_distinct']) assert.ok(isBuiltin(n));
  assert.ok(!isBuiltin('function(k, v) { return sum(v); }'));
  assert.ok(!isBuiltin('_max'));
});
