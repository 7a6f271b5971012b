/**
 * Map rows encoded where they were mapped (src/views/map-rows.ts): what the index reads back is
 * what it would have computed itself (sort keys, row numbers, stored rows), across batches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sortKey } from '../../src/views/collation.js';
import { MapRowsReader, SORT_KEY_MAX, encodeMapRows } from '../../src/views/map-rows.js';

test('rows come back per document and view, as stored rows with their sort keys', () => {
  const results: [unknown, unknown][][][] = [
    [[['b', 1], [['a', 2], null]], [[1, { x: 'é' }]]],
    [[], []],
    [[[null, undefined]], [['raw', 'v']]],
  ];
  const batch = encodeMapRows(results, { ids: ['d1', 'd"2', 'd3'], views: [{ map: 1, raw: true }, { map: 0, raw: false }, { map: -1, raw: false }] });
  const reader = new MapRowsReader([batch]);
  const first = reader.nextDocument();
  assert.deepEqual(first.map((r) => [r.view, r.n, r.value.toString()]), [
    [0, 0, '{"id":"d1","key":1,"value":{"x":"é"}}'],
    [1, 0, '{"id":"d1","key":"b","value":1}'],
    [1, 0, '{"id":"d1","key":["a",2],"value":null}'],
  ]);
  assert.ok(first[0]!.sortKey.equals(sortKey(1, true)));
  assert.ok(first[2]!.sortKey.equals(sortKey(['a', 2])));
  assert.deepEqual(reader.nextDocument(), []);
  const third = reader.nextDocument();
  assert.deepEqual(third.map((r) => [r.view, r.value.toString()]), [[0, '{"id":"d3","key":"raw","value":"v"}'], [1, '{"id":"d3","key":null,"value":null}']]);
  assert.throws(() => reader.nextDocument());
});

test('rows of a repeated key are numbered by value; long keys carry the key itself; batches follow each other', () => {
  // (longer than 64 KiB as a sort key)
  const long = 'x'.repeat(40_000);
  const a = encodeMapRows([[[['k', 3], ['k', 1], ['k', 2], [long, 0]]]], { ids: ['d'], views: [{ map: 0, raw: false }] });
  const b = encodeMapRows([[[['only', 1]]]], { ids: ['e'], views: [{ map: 0, raw: false }] });
  const reader = new MapRowsReader([a, b]);
  const rows = reader.nextDocument();
  assert.deepEqual(rows.map((r) => r.n), [2, 0, 1, 0]);
  assert.equal(rows[3]!.key, long);
  assert.ok(rows[3]!.sortKey.length > SORT_KEY_MAX);
  assert.equal(rows[0]!.key, undefined);
  assert.deepEqual(reader.nextDocument().map((r) => r.value.toString()), ['{"id":"e","key":"only","value":1}']);
});

test('a document may emit more rows than 16 bits count', () => {
  const rows: [unknown, unknown][] = Array.from({ length: 70_000 }, (_, i) => [i, null]);
  rows.push([5, 'again']);
  const reader = new MapRowsReader([encodeMapRows([[rows]], { ids: ['d'], views: [{ map: 0, raw: false }] })]);
  const read = reader.nextDocument();
  assert.equal(read.length, 70_001);
  assert.deepEqual([read[5]!.n, read[70_000]!.n, read[69_999]!.n], [0, 1, 0]);
});
