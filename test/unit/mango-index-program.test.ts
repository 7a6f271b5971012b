/**
 * The native map of Mango JSON indexes (mango_native_proc's get_index_entries): which documents
 * a `query` design document's views index, under which keys, and the rows as the view index
 * stores them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mangoIndexProgram } from '../../src/mango/index-program.js';
import { newIndex, withIndex } from '../../src/mango/indexes.js';
import { PackedJsonWriter } from '../../src/core/packed-json.js';
import { MapRowsReader } from '../../src/views/map-rows.js';
import type { DesignDoc } from '../../src/views/view-index.js';

type IndexGiven = { name: string; def: Parameters<typeof newIndex>[0]['def'] };

function designDoc(...indexes: IndexGiven[]): DesignDoc {
  let body: ReturnType<typeof withIndex>;
  for (const given of indexes) body = withIndex(body, newIndex({ ...given, type: 'json', ddoc: 'q', w: 2 }))!;
  return body as unknown as DesignDoc;
}

const ddoc = designDoc(
  { name: 'by_age', def: { fields: ['age'] } },
  { name: 'by_name_age', def: { fields: [{ 'name.last': 'asc' }, 'age'] } },
  { name: 'adults', def: { fields: ['age'], partial_filter_selector: { age: { $gte: 18 } } } },
);

test('a row per document with every indexed field, keyed by their values in index order, value null', async () => {
  const program = mangoIndexProgram(ddoc);
  assert.deepEqual(program.names, ['adults', 'by_age', 'by_name_age']);
  const docs = [
    { _id: 'a', age: 30, name: { last: 'Lee' } },
    { _id: 'b', age: 12 },
    { _id: 'c', name: { last: 'Ray' } },
    { _id: 'd', age: null, name: { last: null } },
  ];
  const rows = await program.map(docs);
  assert.deepEqual(rows[0], [[[[30], null]], [[[30], null]], [[['Lee', 30], null]]]);
  // Missing a field: not in that index; under the partial filter's age: not in `adults`.
  assert.deepEqual(rows[1], [[], [[[12], null]], []]);
  assert.deepEqual(rows[2], [[], [], []]);
  // null is a value: indexed (and not >= 18).
  assert.deepEqual(rows[3], [[], [[[null], null]], [[[null, null], null]]]);
});

test('a view that is not an index definition emits nothing; unparsable text maps to nothing', async () => {
  const odd = { ...ddoc, views: { ...ddoc.views, js: { map: 'function (doc) { emit(doc._id, 1); }' } } } as DesignDoc;
  const program = mangoIndexProgram(odd);
  assert.deepEqual(program.names, ['adults', 'by_age', 'by_name_age', 'js']);
  assert.deepEqual((await program.mapJson(['{"_id":"a","age":40}', '{not json']))[0]![3], []);
  assert.deepEqual((await program.mapJson(['{not json']))[0], [[], [], [], []]);
});

test('encoded rows come back as the view index reads them', async () => {
  const program = mangoIndexProgram(ddoc);
  const packed = new PackedJsonWriter();
  for (const text of ['{"_id":"a","age":30}', '{"_id":"é","age":7,"name":{"last":"Zed"}}']) {
    packed.text(text);
    packed.endText();
  }
  const texts = packed.finish();
  const encoded = await program.mapEncoded(texts, ['by_name_age', 'by_age'], (maps, start, end) => ({
    ids: ['a', 'é'].slice(start, end),
    views: maps.map((map) => ({ map, raw: false })),
  }));
  const reader = new MapRowsReader(encoded);
  const first = reader.nextDocument();
  assert.deepEqual(first.map((r) => [r.view, JSON.parse(r.value.toString('utf8'))]), [[1, { id: 'a', key: [30], value: null }]]);
  const second = reader.nextDocument();
  assert.deepEqual(second.map((r) => [r.view, JSON.parse(r.value.toString('utf8'))]), [
    [0, { id: 'é', key: ['Zed', 7], value: null }],
    [1, { id: 'é', key: [7], value: null }],
  ]);
});
