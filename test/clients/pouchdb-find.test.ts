/**
 * PouchDB's Mango plugin (pouchdb-find) against a real Settee process through its HTTP adapter:
 * createIndex, getIndexes, find (selectors, sort, fields, limit, skip, bookmarks), explain and
 * deleteIndex, as an application would use them. Traffic goes through the logging proxy.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import pouchdbFind from 'pouchdb-find';
import { PouchFixture, failure } from './pouch-fixture.js';

PouchDB.plugin(pouchdbFind);

let fx: PouchFixture;
before(async () => {
  fx = await PouchFixture.start('settee-pouch-find-');
});
after(async () => fx.close());

const ALBUMS = [
  { _id: 'blue', artist: 'Joni Mitchell', year: 1971, genre: 'folk', rating: 5 },
  { _id: 'court', artist: 'Joni Mitchell', year: 1974, genre: 'folk', rating: 4 },
  { _id: 'hejira', artist: 'Joni Mitchell', year: 1976, genre: 'folk', rating: 5 },
  { _id: 'kind-of-blue', artist: 'Miles Davis', year: 1959, genre: 'jazz', rating: 5 },
  { _id: 'bitches-brew', artist: 'Miles Davis', year: 1970, genre: 'jazz' },
  { _id: 'revolver', artist: 'The Beatles', year: 1966, genre: 'rock', rating: 5 },
];

test('createIndex, getIndexes, find with sort, fields and limit, explain and deleteIndex', async () => {
  const db = await fx.remote('pouch-find');
  await db.bulkDocs(ALBUMS);
  const created = await db.createIndex({ index: { fields: ['year'] }, ddoc: 'by-year', name: 'year' });
  assert.deepEqual(created, { result: 'created', id: '_design/by-year', name: 'year' }, fx.proxy.show('/_index'));
  assert.equal((await db.createIndex({ index: { fields: ['year'] }, ddoc: 'by-year', name: 'year' })).result, 'exists');

  const { indexes } = await db.getIndexes();
  assert.deepEqual(indexes.map((i: any) => [i.ddoc, i.name, i.type]), [[null, '_all_docs', 'special'], ['_design/by-year', 'year', 'json']]);

  const seventies = await db.find({ selector: { year: { $gte: 1970, $lt: 1980 } }, sort: ['year'], fields: ['_id', 'year'] });
  assert.deepEqual(seventies.docs, [
    { _id: 'bitches-brew', year: 1970 }, { _id: 'blue', year: 1971 }, { _id: 'court', year: 1974 }, { _id: 'hejira', year: 1976 },
  ]);
  assert.equal(seventies.warning, undefined);

  const newest = await db.find({ selector: { year: { $gt: 0 } }, sort: [{ year: 'desc' }], limit: 2, skip: 1 });
  assert.deepEqual(newest.docs.map((d: any) => d._id), ['court', 'blue']);

  const joni = await db.find({ selector: { artist: 'Joni Mitchell', rating: 5 } });
  assert.deepEqual(joni.docs.map((d: any) => d._id), ['blue', 'hejira']);
  assert.match(joni.warning, /^No matching index found/);

  const ors = await db.find({ selector: { $or: [{ genre: 'jazz' }, { rating: { $exists: false } }] }, fields: ['_id'] });
  assert.deepEqual(ors.docs, [{ _id: 'bitches-brew' }, { _id: 'kind-of-blue' }]);

  const plan = await db.explain({ selector: { year: { $gt: 1960 } } });
  assert.equal(plan.index.ddoc, '_design/by-year');
  assert.deepEqual(plan.mrargs.start_key, [1960]);

  const err = await failure(db.find({ selector: { year: { $gt: 0 } }, sort: ['artist'] }));
  assert.equal(err.status, 400);
  assert.equal(err.error, 'no_usable_index');

  const index = indexes[1];
  assert.deepEqual(await db.deleteIndex(index), { ok: true });
  assert.equal((await db.getIndexes()).indexes.length, 1);
});

test('paging with bookmarks', async () => {
  const db = await fx.remote('pouch-find-pages');
  await db.bulkDocs(ALBUMS);
  await db.createIndex({ index: { fields: ['genre', 'year'] } });
  const seen: string[] = [];
  let bookmark: string | undefined;
  for (let i = 0; i < 5; i++) {
    const page = await db.find({ selector: { genre: { $gt: null }, year: { $gt: 0 } }, limit: 2, ...(bookmark ? { bookmark } : {}) });
    if (page.docs.length === 0) break;
    seen.push(...page.docs.map((d: any) => d._id));
    bookmark = page.bookmark;
  }
  assert.deepEqual(seen, ['blue', 'court', 'hejira', 'kind-of-blue', 'bitches-brew', 'revolver'].sort((a, b) => {
    const da = ALBUMS.find((x) => x._id === a)!;
    const dbb = ALBUMS.find((x) => x._id === b)!;
    return da.genre.localeCompare(dbb.genre) || da.year - dbb.year;
  }));
});
