/**
 * `_all_docs` over real HTTP: GET and POST {keys}, every query parameter, total_rows/offset,
 * raw (byte-wise) id ordering, which documents are listed, parameter errors, and a large scan.
 * Expectations follow CouchDB 1.6 (couch_mrview all_docs_fold and its JS test all_docs.js).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

/** `?name=<json>&...`: every value is JSON-encoded, as _all_docs parameters are. */
function qs(params: Record<string, unknown>): string {
  const parts = Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(JSON.stringify(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

async function createDb(name: string): Promise<void> {
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
}

/** Writes documents through _bulk_docs and returns id -> rev. */
async function save(db: string, docs: object[], extra: object = {}): Promise<Record<string, string>> {
  const r = await c.post(`/${db}/_bulk_docs`, { docs, ...extra });
  assert.equal(r.status, 201, r.text);
  const revs: Record<string, string> = {};
  for (const row of r.body as { id: string; rev?: string; error?: string }[]) {
    assert.equal(row.error, undefined, JSON.stringify(row));
    if (row.rev) revs[row.id] = row.rev;
  }
  return revs;
}

async function allDocs(db: string, params: Record<string, unknown> = {}) {
  const r = await c.get(`/${db}/_all_docs${qs(params)}`);
  assert.equal(r.status, 200, r.text);
  return r.body as { total_rows: number; offset?: number; update_seq?: number; rows: any[] };
}

const ids = (rows: { id?: string }[]) => rows.map((r) => r.id);

/** The four documents of CouchDB's all_docs.js, saved out of id order. */
async function fourDocs(db: string): Promise<Record<string, string>> {
  await createDb(db);
  return save(db, [{ _id: '0', a: 1 }, { _id: '3', a: 4 }, { _id: '1', a: 2 }, { _id: '2', a: 3 }]);
}

test('lists every document in id order with total_rows, offset and {id, key, value: {rev}} rows', async () => {
  const revs = await fourDocs('ad_basic');
  const body = await allDocs('ad_basic');
  assert.equal(body.total_rows, 4);
  assert.equal(body.offset, 0);
  assert.equal(body.update_seq, undefined);
  assert.deepEqual(body.rows, ['0', '1', '2', '3'].map((id) => ({ id, key: id, value: { rev: revs[id] } })));
});

test('startkey and start_key begin the range; offset counts the rows before it', async () => {
  await fourDocs('ad_start');
  for (const name of ['startkey', 'start_key']) {
    const body = await allDocs('ad_start', { [name]: '2' });
    assert.deepEqual(ids(body.rows), ['2', '3'], name);
    assert.equal(body.offset, 2, name);
    assert.equal(body.total_rows, 4, name);
  }
  // A start key between ids starts at the next id.
  const between = await allDocs('ad_start', { startkey: '10' });
  assert.deepEqual(ids(between.rows), ['2', '3']);
  assert.equal(between.offset, 2);
});

test('endkey and end_key end the range, inclusive unless inclusive_end=false', async () => {
  await fourDocs('ad_end');
  for (const name of ['endkey', 'end_key']) {
    assert.deepEqual(ids((await allDocs('ad_end', { [name]: '2' })).rows), ['0', '1', '2'], name);
    assert.deepEqual(ids((await allDocs('ad_end', { [name]: '2', inclusive_end: false })).rows), ['0', '1'], name);
  }
  assert.deepEqual(ids((await allDocs('ad_end', { startkey: '1', endkey: '2' })).rows), ['1', '2']);
  const single = await allDocs('ad_end', { startkey: '1', endkey: '1' });
  assert.deepEqual(ids(single.rows), ['1']);
  assert.equal(single.offset, 1);
  // inclusive_end=true is the default and may be given explicitly.
  assert.deepEqual(ids((await allDocs('ad_end', { endkey: '1', inclusive_end: true })).rows), ['0', '1']);
  // `key` is startkey = endkey, as in a view: excluding the end leaves nothing.
  assert.deepEqual(ids((await allDocs('ad_end', { key: '1' })).rows), ['1']);
  assert.deepEqual(ids((await allDocs('ad_end', { key: '1', inclusive_end: false })).rows), []);
});

test('descending=true reverses the order and the meaning of the bounds', async () => {
  await fourDocs('ad_desc');
  const all = await allDocs('ad_desc', { descending: true });
  assert.deepEqual(ids(all.rows), ['3', '2', '1', '0']);
  assert.equal(all.total_rows, 4);
  assert.equal(all.offset, 0);

  const fromTwo = await allDocs('ad_desc', { descending: true, startkey: '2' });
  assert.deepEqual(ids(fromTwo.rows), ['2', '1', '0']);
  assert.equal(fromTwo.offset, 1, 'one row ("3") comes before "2" in descending order');

  assert.deepEqual(ids((await allDocs('ad_desc', { descending: true, endkey: '1' })).rows), ['3', '2', '1']);
  assert.deepEqual(ids((await allDocs('ad_desc', { descending: true, endkey: '1', inclusive_end: false })).rows), ['3', '2']);
  assert.deepEqual(ids((await allDocs('ad_desc', { descending: true, startkey: '2', endkey: '1' })).rows), ['2', '1']);
  const skipped = await allDocs('ad_desc', { descending: true, skip: 1, limit: 2 });
  assert.deepEqual(ids(skipped.rows), ['2', '1']);
  assert.equal(skipped.offset, 1);
});

test('an inverted range matches nothing but is not an error', async () => {
  await fourDocs('ad_inverted');
  const fwd = await allDocs('ad_inverted', { startkey: '3', endkey: '1' });
  assert.deepEqual(fwd.rows, []);
  assert.equal(fwd.total_rows, 4);
  assert.equal(fwd.offset, 3, 'the scan stops at "3", after three rows');
  assert.deepEqual((await allDocs('ad_inverted', { descending: true, startkey: '1', endkey: '3' })).rows, []);
});

test('key selects exactly one id', async () => {
  const revs = await fourDocs('ad_key');
  const body = await allDocs('ad_key', { key: '1' });
  assert.deepEqual(body.rows, [{ id: '1', key: '1', value: { rev: revs['1'] } }]);
  assert.equal(body.offset, 1);
  assert.deepEqual((await allDocs('ad_key', { key: 'nope' })).rows, []);
  assert.deepEqual(ids((await allDocs('ad_key', { key: '3', descending: true })).rows), ['3']);
});

test('limit and skip page through the rows; offset includes skipped rows', async () => {
  await fourDocs('ad_page');
  assert.deepEqual(ids((await allDocs('ad_page', { limit: 2 })).rows), ['0', '1']);
  const page = await allDocs('ad_page', { skip: 1, limit: 2 });
  assert.deepEqual(ids(page.rows), ['1', '2']);
  assert.equal(page.offset, 1);
  const fromOne = await allDocs('ad_page', { startkey: '1', skip: 1 });
  assert.deepEqual(ids(fromOne.rows), ['2', '3']);
  assert.equal(fromOne.offset, 2);
  assert.deepEqual(ids((await allDocs('ad_page', { limit: 10 })).rows), ['0', '1', '2', '3']);
  const none = await allDocs('ad_page', { limit: 0 });
  assert.deepEqual(none.rows, []);
  assert.equal(none.offset, 0);
  assert.equal(none.total_rows, 4);
  assert.equal((await allDocs('ad_page', { startkey: '2', limit: 0 })).offset, 2);
});

test('offset never goes past where the scan ended', async () => {
  await fourDocs('ad_offset_end');
  const pastAll = await allDocs('ad_offset_end', { skip: 100 });
  assert.deepEqual(pastAll.rows, []);
  assert.equal(pastAll.offset, 4);
  const pastRange = await allDocs('ad_offset_end', { startkey: '0', endkey: '1', skip: 5 });
  assert.deepEqual(pastRange.rows, []);
  assert.equal(pastRange.offset, 2);
  const pastExclusive = await allDocs('ad_offset_end', { endkey: '1', inclusive_end: false, skip: 5 });
  assert.equal(pastExclusive.offset, 1);
  const pastDescending = await allDocs('ad_offset_end', { descending: true, endkey: '2', skip: 9 });
  assert.equal(pastDescending.offset, 2);
  const startPastEnd = await allDocs('ad_offset_end', { startkey: 'zzz' });
  assert.deepEqual(startPastEnd.rows, []);
  assert.equal(startPastEnd.offset, 4);
});

test('offsets stay exact while paging a larger database, with writes and deletions between pages', async () => {
  // More documents than one rank sample step, so offsets come from samples once the database
  // holds still, and from plain counts right after each change.
  const db = 'ad_ranks';
  await createDb(db);
  const live = new Map<string, string>();
  const put = async (ns: number[]) => {
    const revs = await save(db, ns.map((n) => ({ _id: `d${String(n).padStart(5, '0')}` })));
    for (const [id, rev] of Object.entries(revs)) live.set(id, rev);
  };
  await put(Array.from({ length: 3000 }, (_, i) => i * 2));
  let seed = 11;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const check = async (rounds: number) => {
    const sorted = [...live.keys()].sort();
    for (let i = 0; i < rounds; i++) {
      const start = `d${String(Math.floor(random() * 6100)).padStart(5, '0')}`;
      const before = sorted.filter((id) => id < start).length;
      const after = sorted.filter((id) => id > start).length;
      const page = await allDocs(db, { startkey: start, limit: 3, skip: 1 });
      assert.equal(page.offset, Math.min(before + 1, sorted.length), `ascending from ${start}`);
      assert.deepEqual(ids(page.rows), sorted.filter((id) => id >= start).slice(1, 4));
      const back = await allDocs(db, { startkey: start, descending: true, limit: 2 });
      assert.equal(back.offset, after, `descending from ${start}`);
      assert.equal(page.total_rows, sorted.length);
    }
  };
  await check(25);
  await put(Array.from({ length: 400 }, (_, i) => i * 14 + 1));
  await check(25);
  const gone = [...live.keys()].filter((_, i) => i % 3 === 0);
  await save(db, gone.map((id) => ({ _id: id, _rev: live.get(id), _deleted: true })));
  for (const id of gone) live.delete(id);
  await check(25);
});

test('include_docs=true adds each document body', async () => {
  const revs = await fourDocs('ad_include');
  const body = await allDocs('ad_include', { include_docs: true, limit: 2 });
  assert.deepEqual(body.rows, [
    { id: '0', key: '0', value: { rev: revs['0'] }, doc: { _id: '0', _rev: revs['0'], a: 1 } },
    { id: '1', key: '1', value: { rev: revs['1'] }, doc: { _id: '1', _rev: revs['1'], a: 2 } },
  ]);
  assert.equal((await allDocs('ad_include', { include_docs: false })).rows[0].doc, undefined);
});

test('conflicts=true with include_docs lists _conflicts in the documents; alone it changes nothing', async () => {
  await createDb('ad_conflicts');
  const revs = await save('ad_conflicts', [{ _id: 'c', v: 0 }, { _id: 'plain', v: 1 }]);
  await save('ad_conflicts', [
    { _id: 'c', _rev: '2-aa01552213fafa022e6167113ed01087', v: 'X', _revisions: { start: 2, ids: ['aa01552213fafa022e6167113ed01087', revs['c']!.slice(2)] } },
    { _id: 'c', _rev: '2-ff01552213fafa022e6167113ed01087', v: 'Z', _revisions: { start: 2, ids: ['ff01552213fafa022e6167113ed01087', revs['c']!.slice(2)] } },
  ], { new_edits: false });
  const winner = (await c.get('/ad_conflicts/c')).body;
  assert.equal(winner._rev, '2-ff01552213fafa022e6167113ed01087');

  const body = await allDocs('ad_conflicts', { include_docs: true, conflicts: true });
  assert.equal(body.rows.length, 2);
  const row = body.rows[0];
  assert.equal(row.id, 'c');
  assert.equal(row.value.rev, winner._rev);
  assert.equal(row.doc._rev, winner._rev);
  assert.deepEqual(row.doc._conflicts, ['2-aa01552213fafa022e6167113ed01087']);
  assert.equal(body.rows[1].doc._conflicts, undefined, 'no _conflicts member without conflicts');

  const withoutFlag = await allDocs('ad_conflicts', { include_docs: true });
  assert.equal(withoutFlag.rows[0].doc._conflicts, undefined);
  const withoutDocs = await allDocs('ad_conflicts', { conflicts: true });
  assert.equal(withoutDocs.rows[0].doc, undefined);

  const keyed = await c.post('/ad_conflicts/_all_docs?include_docs=true&conflicts=true', { keys: ['c'] });
  assert.deepEqual(keyed.body.rows[0].doc._conflicts, ['2-aa01552213fafa022e6167113ed01087']);
});

test('update_seq=true reports the database update sequence', async () => {
  await fourDocs('ad_seq');
  const info = (await c.get('/ad_seq')).body;
  const body = await allDocs('ad_seq', { update_seq: true });
  assert.equal(body.update_seq, info.update_seq);
  assert.equal(body.update_seq, 4);
  assert.deepEqual(Object.keys(body), ['total_rows', 'offset', 'update_seq', 'rows']);
  const keyed = await c.post('/ad_seq/_all_docs?update_seq=true', { keys: ['1'] });
  assert.equal(keyed.body.update_seq, 4);
});

test('deleted and local documents are absent, design documents present, total_rows matches doc_count', async () => {
  await createDb('ad_kinds');
  const revs = await save('ad_kinds', [{ _id: 'keep' }, { _id: 'gone' }, { _id: '_design/app', views: {} }, { _id: 'zz' }]);
  const del = await c.del(`/ad_kinds/gone?rev=${revs['gone']}`);
  assert.equal(del.status, 200);
  assert.equal((await c.put('/ad_kinds/_local/secret', { x: 1 })).status, 201);

  const body = await allDocs('ad_kinds');
  assert.deepEqual(ids(body.rows), ['_design/app', 'keep', 'zz']);
  assert.equal(body.total_rows, 3);
  const info = (await c.get('/ad_kinds')).body;
  assert.equal(info.doc_count, 3);
  assert.equal(info.doc_del_count, 1);
  assert.deepEqual((await allDocs('ad_kinds', { startkey: '_local', endkey: '_localz' })).rows, []);

  // Recreating a deleted document lists it again.
  await save('ad_kinds', [{ _id: 'gone', back: true }]);
  assert.deepEqual(ids((await allDocs('ad_kinds')).rows), ['_design/app', 'gone', 'keep', 'zz']);
});

test('ids sort by their raw UTF-8 bytes, not by collation or UTF-16 units', async () => {
  await createDb('ad_order');
  const names = ['a', 'B', 'Z', '~', '0', '_design/d', 'aa', 'A', 'é', 'e', '€', '\uff21', '\u{1d11e}', 'org.couchdb.user:joe'];
  await save('ad_order', names.map((_id) => ({ _id })));
  const expected = [...names].sort((x, y) => Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8')));
  // Uppercase before lowercase, and U+1D11E (4 UTF-8 bytes) after U+FF21 although UTF-16 sorts it first.
  assert.ok(expected.indexOf('Z') < expected.indexOf('a'));
  assert.ok(expected.indexOf('\uff21') < expected.indexOf('\u{1d11e}'));
  const body = await allDocs('ad_order');
  assert.deepEqual(ids(body.rows), expected);
  assert.deepEqual(ids((await allDocs('ad_order', { descending: true })).rows), [...expected].reverse());

  assert.deepEqual(ids((await allDocs('ad_order', { startkey: 'Z', endkey: 'Z' })).rows), ['Z']);
  assert.deepEqual(ids((await allDocs('ad_order', { startkey: 'B', endkey: 'Z' })).rows), ['B', 'Z']);
  const beyondAscii = await allDocs('ad_order', { startkey: '\u00e9' });
  assert.deepEqual(ids(beyondAscii.rows), ['é', '€', '\uff21', '\u{1d11e}']);
  assert.equal(beyondAscii.offset, names.length - 4);
  // Raw collation: ':' sorts before ';', so this range holds exactly the user id.
  const raw = await allDocs('ad_order', { startkey: 'org.couchdb.user:', endkey: 'org.couchdb.user;' });
  assert.deepEqual(ids(raw.rows), ['org.couchdb.user:joe']);
  assert.deepEqual((await allDocs('ad_order', { startkey: 'org.couchdb.user;', endkey: 'org.couchdb.user<' })).rows, []);
});

test('POST {keys} returns one row per key in the given order, with errors and deletions', async () => {
  await createDb('ad_keys');
  const revs = await save('ad_keys', [{ _id: 'a', n: 1 }, { _id: 'b', n: 2 }, { _id: 'c', n: 3 }, { _id: 'd', n: 4 }]);
  const del = await c.del(`/ad_keys/d?rev=${revs['d']}`);
  const deletedRev = del.body.rev as string;

  const r = await c.post('/ad_keys/_all_docs', { keys: ['c', 'missing', 'a', 'd', 'a'] });
  assert.equal(r.status, 200);
  assert.equal(r.body.total_rows, 3);
  assert.equal(r.body.offset, 0);
  assert.deepEqual(r.body.rows, [
    { id: 'c', key: 'c', value: { rev: revs['c'] } },
    { key: 'missing', error: 'not_found' },
    { id: 'a', key: 'a', value: { rev: revs['a'] } },
    { id: 'd', key: 'd', value: { rev: deletedRev, deleted: true } },
    { id: 'a', key: 'a', value: { rev: revs['a'] } },
  ]);

  const docs = await c.post('/ad_keys/_all_docs?include_docs=true', { keys: ['d', 'b', 'nope'] });
  assert.deepEqual(docs.body.rows, [
    { id: 'd', key: 'd', value: { rev: deletedRev, deleted: true }, doc: null },
    { id: 'b', key: 'b', value: { rev: revs['b'] }, doc: { _id: 'b', _rev: revs['b'], n: 2 } },
    { key: 'nope', error: 'not_found' },
  ]);
});

test('keys with descending, skip and limit: the keys list is reversed, then paged', async () => {
  await createDb('ad_keys_page');
  await save('ad_keys_page', [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }]);
  const keys = ['b', 'x', 'a', 'c'];
  const post = (query: string) => c.post(`/ad_keys_page/_all_docs${query}`, { keys });
  assert.deepEqual((await post('?descending=true')).body.rows.map((r: any) => r.key), ['c', 'a', 'x', 'b']);
  assert.deepEqual((await post('?limit=2')).body.rows.map((r: any) => r.key), ['b', 'x']);
  assert.deepEqual((await post('?skip=1&limit=2')).body.rows.map((r: any) => r.key), ['x', 'a']);
  assert.deepEqual((await post('?skip=1&descending=true')).body.rows.map((r: any) => r.key), ['a', 'x', 'b']);
  const limited = await post('?limit=0');
  assert.deepEqual(limited.body.rows, []);
  assert.equal(limited.body.offset, 0);
});

test('keys without rows: an empty list, or everything skipped, gives no rows and no offset', async () => {
  await createDb('ad_keys_empty');
  await save('ad_keys_empty', [{ _id: 'a' }]);
  const empty = await c.post('/ad_keys_empty/_all_docs', { keys: [] });
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.rows, []);
  assert.equal(empty.body.total_rows, 1);
  assert.equal('offset' in empty.body, false);
  const skipped = await c.post('/ad_keys_empty/_all_docs?skip=2', { keys: ['a', 'b'] });
  assert.deepEqual(skipped.body.rows, []);
  assert.equal('offset' in skipped.body, false);
});

test('GET with a keys parameter works like POST {keys}', async () => {
  await createDb('ad_keys_get');
  const revs = await save('ad_keys_get', [{ _id: 'a' }, { _id: 'b' }]);
  const body = await allDocs('ad_keys_get', { keys: ['b', 'zz'] });
  assert.deepEqual(body.rows, [{ id: 'b', key: 'b', value: { rev: revs['b'] } }, { key: 'zz', error: 'not_found' }]);
});

test('POST without keys lists everything; query parameters still apply', async () => {
  await fourDocs('ad_post_all');
  const r = await c.post('/ad_post_all/_all_docs?startkey=%221%22&limit=2', {});
  assert.equal(r.status, 200);
  assert.deepEqual(ids(r.body.rows), ['1', '2']);
  assert.equal(r.body.offset, 1);
});

test('keys cannot be combined with key, startkey or endkey', async () => {
  await fourDocs('ad_keys_mix');
  for (const query of ['?key=%221%22', '?startkey=%221%22', '?endkey=%222%22', '?start_key=%221%22']) {
    const r = await c.post(`/ad_keys_mix/_all_docs${query}`, { keys: ['1'] });
    assert.equal(r.status, 400, query);
    assert.equal(r.body.error, 'query_parse_error', query);
  }
});

test('bad keys bodies are 400 bad_request', async () => {
  await fourDocs('ad_keys_bad');
  for (const keys of ['1', { a: 1 }, 3]) {
    const r = await c.post('/ad_keys_bad/_all_docs', { keys });
    assert.equal(r.status, 400, JSON.stringify(keys));
    assert.equal(r.body.error, 'bad_request');
  }
  const notJson = await c.request('POST', '/ad_keys_bad/_all_docs', { raw: '{"keys": [', headers: { 'Content-Type': 'application/json' } });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error, 'bad_request');
});

test('bad parameters are 400 query_parse_error; keys that are not JSON are 400 bad_request, as for views', async () => {
  await fourDocs('ad_bad_params');
  const cases = [
    'limit=-1', 'limit=abc', 'limit=1.5', 'skip=-1', 'skip=x', 'skip=1.5', 'keys=%22notarray%22',
    'descending=yes', 'include_docs=1', 'inclusive_end=maybe', 'update_seq=nah',
  ];
  for (const query of cases) {
    const r = await c.get(`/ad_bad_params/_all_docs?${query}`);
    assert.equal(r.status, 400, query);
    assert.equal(r.body.error, 'query_parse_error', `${query}: ${r.text}`);
    assert.equal(typeof r.body.reason, 'string');
  }
  for (const query of ['startkey=%7Bbad', 'endkey=not-json', 'start_key=%22unterminated', 'key=%5B1', 'keys=%5B']) {
    const r = await c.get(`/ad_bad_params/_all_docs?${query}`);
    assert.equal(r.status, 400, query);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' }, query);
  }
});

test('reduce, grouping and stale are checked as for a map view (couch_mrview_util:validate_args)', async () => {
  await fourDocs('ad_map_only');
  const reasons: Record<string, string> = {
    'stale=bad': 'Invalid value for `stale`.',
    'reduce=true': 'Reduce is invalid for map-only views.',
    'group=true': 'Invalid use of grouping on a map view.',
    'group_level=1': 'Invalid use of grouping on a map view.',
    'group=false&group_level=2': 'Invalid use of grouping on a map view.',
    'group_level=0&group=true': 'Invalid use of grouping on a map view.',
    'reduce=maybe': 'Invalid boolean parameter: "maybe"',
  };
  for (const [query, reason] of Object.entries(reasons)) {
    const r = await c.get(`/ad_map_only/_all_docs?${query}`);
    assert.equal(r.status, 400, query);
    assert.deepEqual(r.body, { error: 'query_parse_error', reason }, query);
  }
  // group_level=0 is no grouping; of `group` and `group_level`, the later one decides.
  for (const query of ['stale=ok', 'stale=update_after', 'reduce=false', 'group=false', 'group_level=0', 'group=true&group_level=0', 'group_level=3&group=false']) {
    const r = await c.get(`/ad_map_only/_all_docs?${query}`);
    assert.equal(r.status, 200, query);
    assert.equal(r.body.rows.length, 4, query);
  }
});

test('a POST needs a JSON Content-Type (415 otherwise)', async () => {
  await fourDocs('ad_ctype');
  const form = await c.post('/ad_ctype/_all_docs', undefined, { raw: '{"keys":["a"]}', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.status, 415, form.text);
  assert.equal(form.body.error, 'bad_content_type');
  const json = await c.post('/ad_ctype/_all_docs', undefined, { raw: '{"keys":["a"]}', headers: { 'Content-Type': 'application/json; charset=utf-8' } });
  assert.equal(json.status, 200, json.text);
});

test('non-string bounds are ignored in favour of startkey_docid / endkey_docid', async () => {
  await fourDocs('ad_docid');
  const get = async (query: string) => {
    const r = await c.get(`/ad_docid/_all_docs?${query}`);
    assert.equal(r.status, 200, `${query}: ${r.text}`);
    return ids(r.body.rows);
  };
  assert.deepEqual(await get('startkey=1'), ['0', '1', '2', '3']);
  // The *_docid parameters are plain strings, not JSON.
  assert.deepEqual(await get('startkey_docid=2'), ['2', '3']);
  assert.deepEqual(await get('startkey=null&endkey_docid=1'), ['0', '1']);
  assert.deepEqual(await get('start_key_doc_id=1&end_key_doc_id=2'), ['1', '2']);
  // A string startkey wins over startkey_docid.
  assert.deepEqual(await get('startkey=%223%22&startkey_docid=1'), ['3']);
});

test('a 20,000-document scan streams every row, in order', async () => {
  await createDb('ad_large');
  const total = 20000;
  const batch = 5000;
  for (let start = 0; start < total; start += batch) {
    const docs = Array.from({ length: batch }, (_, i) => ({ _id: `doc-${String(start + i).padStart(6, '0')}`, n: start + i, pad: 'x'.repeat(40) }));
    const r = await c.post('/ad_large/_bulk_docs', { docs });
    assert.equal(r.status, 201);
    assert.equal(r.body.length, batch);
  }
  const r = await c.get('/ad_large/_all_docs');
  assert.equal(r.status, 200);
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  assert.equal(r.body.total_rows, total);
  assert.equal(r.body.offset, 0);
  assert.equal(r.body.rows.length, total);
  for (let i = 0; i < total; i++) {
    const id = `doc-${String(i).padStart(6, '0')}`;
    if (r.body.rows[i].id !== id) assert.fail(`row ${i} is ${r.body.rows[i].id}, expected ${id}`);
  }
  assert.ok(r.text.endsWith(']}\n') || r.text.trimEnd().endsWith(']}'), 'the JSON envelope is closed');

  const docs = await allDocs('ad_large', { include_docs: true, descending: true });
  assert.equal(docs.rows.length, total);
  assert.equal(docs.rows[0].doc.n, total - 1);
  assert.equal(docs.rows[total - 1].doc.n, 0);

  const tail = await allDocs('ad_large', { skip: total - 10 });
  assert.equal(tail.rows.length, 10);
  assert.equal(tail.offset, total - 10);
  assert.equal(tail.rows[0].id, `doc-${String(total - 10).padStart(6, '0')}`);
});

test('a missing database is 404 not_found', async () => {
  const r = await c.get('/ad_no_such_db/_all_docs');
  assert.equal(r.status, 404);
  assert.deepEqual(r.body, { error: 'not_found', reason: 'no_db_file' });
  const p = await c.post('/ad_no_such_db/_all_docs', { keys: ['a'] });
  assert.equal(p.status, 404);
});
