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

test('_sum of a non-number is CouchDB 1.6\'s invalid_value', () => {
  const sumError = (e: unknown) => e instanceof CouchError && e.status === 500 && e.error === 'invalid_value'
    && e.reason === 'builtin _sum function requires map values to be numbers or lists of numbers';
  assert.throws(() => reduceBuiltin('_sum', [], [1, 'x']), sumError);
  assert.throws(() => reduceBuiltin('_sum', [], [[1, 'x']]), sumError);
  assert.throws(() => reduceBuiltin('_sum', [], [null]), sumError);
});

test('_sum of arrays starts from [0]: an empty array sums to [0]', () => {
  assert.deepEqual(reduceBuiltin('_sum', [], [[]]), [0]);
  assert.deepEqual(rereduceBuiltin('_sum', [[]]), [0]);
  assert.deepEqual(reduceBuiltin('_sum', [], [2, []]), [2]);
});

test('_stats computes sum, count, min, max, sumsqr and merges partials', () => {
  const a = reduceBuiltin('_stats', [], [2, 4]);
  assert.deepEqual(a, { sum: 6, count: 2, min: 2, max: 4, sumsqr: 20 });
  const b = reduceBuiltin('_stats', [], [-1]);
  assert.deepEqual(rereduceBuiltin('_stats', [a, b]), { sum: 5, count: 3, min: -1, max: 4, sumsqr: 21 });
  assert.throws(() => reduceBuiltin('_stats', [], ['no']), (e) => e instanceof CouchError && e.error === 'invalid_value' && e.reason === 'builtin _stats function requires map values to be numbers');
});

test('_approx_count_distinct counts distinct keys', () => {
  assert.equal(reduceBuiltin('_approx_count_distinct', [['a', 'd1'], ['a', 'd2'], ['b', 'd3']], [1, 1, 1]), 2);
});

test('isBuiltin knows the four names', () => {
  for (const n of ['_sum', '_count', '_stats', '_approx_count_distinct']) assert.ok(isBuiltin(n));
  assert.ok(!isBuiltin('function(k, v) { return sum(v); }'));
  assert.ok(!isBuiltin('_max'));
});
