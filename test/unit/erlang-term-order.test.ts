/** Erlang's term order over JSON values, and the emit numbers it gives rows of one key. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareErlangTerms, compareUtf8 } from '../../src/views/erlang-term-order.js';
import { rowNumbers } from '../../src/views/row-numbers.js';

const sign = (n: number) => Math.sign(n);
/** Each value strictly before the next, both ways round, and equal to itself. */
function assertAscending(values: unknown[]): void {
  for (let i = 0; i < values.length; i++) {
    assert.equal(compareErlangTerms(values[i], values[i]), 0, JSON.stringify(values[i]));
    for (let j = i + 1; j < values.length; j++) {
      const what = `${JSON.stringify(values[i])} before ${JSON.stringify(values[j])}`;
      assert.equal(sign(compareErlangTerms(values[i], values[j])), -1, what);
      assert.equal(sign(compareErlangTerms(values[j], values[i])), 1, what);
    }
  }
}

test('types: number < atom < tuple (object) < list (array) < binary (string)', () => {
  assertAscending([1e300, false, { z: 'z' }, [], 'a']);
  assertAscending([-5, null, {}, [[]], '']);
  // The empty list (nil) is after every tuple and before every binary and non-empty list.
  assertAscending([{ a: [] }, [], [0], '']);
});

test('atoms compare by name: false < null < true; undefined is null', () => {
  assertAscending([false, null, true]);
  assert.equal(compareErlangTerms(undefined, null), 0);
});

test('numbers compare by value; an integer and an equal float are equal', () => {
  assertAscending([-Infinity, -1e10, -1.5, -1, 0, 0.25, 1, 1.5, 2, 10, 1e21]);
  assert.equal(compareErlangTerms(1, 1.0), 0);
  assert.equal(compareErlangTerms(-0, 0), 0);
});

test('objects compare member by member in the order written, key first, a prefix first', () => {
  assertAscending([{}, { a: 1 }, { a: 1, b: 0 }, { a: 2 }, { b: 0 }]);
  // Members in the order written, not sorted: {b, a} is after {a, ...} whatever a holds.
  assertAscending([{ a: 9, b: 9 }, { b: 1, a: 1 }, { b: 1, a: 2 }]);
  // Nested values in Erlang's order: a number before an atom before an object.
  assertAscending([{ a: 1 }, { a: null }, { a: { x: [] } }, { a: { x: 'y' } }, { a: [] }, { a: 's' }]);
  // Keys are binaries: compared by UTF-8 bytes, "B" (0x42) before "a" (0x61).
  assertAscending([{ B: 1 }, { a: 0 }, { aa: 0 }]);
});

test('arrays compare element by element, a prefix first', () => {
  assertAscending([[], [1], [1, 2], [1, 2, 'x'], [1, 3], [2], [null], [{}], [[]], ['a']]);
});

test('strings compare by UTF-8 bytes, a prefix first', () => {
  assertAscending(['', 'A', 'B', 'Z', 'a', 'aa', 'ab', 'b', 'é', 'ｅ', '😀']);
  // U+FF61 is before U+1F600 in UTF-8 (EF.. < F0..) but after it in UTF-16 units (FF61 > D83D).
  const high = '｡';
  const astral = '😀';
  assert.ok(high.charCodeAt(0) > astral.charCodeAt(0), 'UTF-16 order is the other way round');
  assert.equal(sign(compareUtf8(high, astral)), -1);
  assert.equal(sign(compareErlangTerms(['x', high], ['x', astral])), -1);
  // Both ways agree with the bytes for a spread of code points.
  const samples = ['\u0000', '~', '\u007f', '\u0080', 'ÿ', 'Ā', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{10ffff}', 'a\u{1f600}', 'a\uffff'];
  for (const a of samples) {
    for (const b of samples) {
      assert.equal(sign(compareUtf8(a, b)), sign(Buffer.compare(Buffer.from(a), Buffer.from(b))), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  }
});

test('rowNumbers: all 0 unless a sort key repeats', () => {
  const k = (s: string) => Buffer.from(s);
  assert.equal(rowNumbers([], []), undefined);
  assert.equal(rowNumbers([k('a')], [['a', [1]]]), undefined);
  assert.equal(rowNumbers([k('a'), k('b')], [['a', 'z'], ['b', 1]]), undefined);
  assert.equal(rowNumbers([k('a'), k('b'), k('c')], [['a', 'z'], ['b', 1], ['c', 0]]), undefined);
  // Two rows of one key: the object (tuple) before the array (list), as CouchDB's view_sandboxing expects.
  assert.deepEqual(rowNumbers([k('d'), k('d')], [['d', ['foo', 'bar']], ['d', { a: 1, b: 2 }]]), [1, 0]);
  assert.deepEqual(rowNumbers([k('d'), k('d')], [['d', { a: 1 }], ['d', ['foo']]]), [0, 1]);
});

test('rowNumbers: the rows of each repeated key are ranked by value, stably', () => {
  const k = (s: string) => Buffer.from(s);
  const keys = [k('x'), k('y'), k('x'), k('z'), k('x'), k('y')];
  const rows: [unknown, unknown][] = [['x', 'c'], ['y', 2], ['x', 1], ['z', null], ['x', true], ['y', 1]];
  // x: 1, true, "c" (rows 2, 4, 0); y: 1, 2 (rows 5, 1); z alone.
  assert.deepEqual(rowNumbers(keys, rows), [2, 1, 0, 0, 1, 0]);
  // Equal values (an integer and an equal float) keep emit order.
  assert.deepEqual(rowNumbers([k('n'), k('n'), k('n')], [['n', 1.0], ['n', 1], ['n', 0]]), [1, 2, 0]);
});
