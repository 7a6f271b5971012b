/**
 * Mango over real HTTP: `_find`, `_explain` and `_index` as CouchDB 3 answers them. Many cases
 * are ports of CouchDB's own mango tests (src/mango/test/*.py: 01-index-crud, 02-basic-find,
 * 03-operator, 05-index-selection, 12-use-correct-index, 14-json-pagination), with their
 * documents (user_docs.py) and expectations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { USER_DOCS } from '../helpers/mango-user-docs.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();

const NO_INDEX = 'No matching index found, create an index to optimize query time.';

async function freshDb(name: string, docs: object[] = []): Promise<void> {
  await c.del(`/${name}`);
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
  if (docs.length > 0) {
    const b = await c.post(`/${name}/_bulk_docs`, { docs });
    assert.equal(b.status, 201, b.text);
  }
}

async function createIndex(db: string, fields: unknown[], extra: Record<string, unknown> = {}) {
  const { partial_filter_selector: pfs, ...rest } = extra;
  const r = await c.post(`/${db}/_index`, { index: { fields, ...(pfs ? { partial_filter_selector: pfs } : {}) }, ...rest });
  assert.equal(r.status, 200, r.text);
  return r.body as { result: string; id: string; name: string };
}

async function find(db: string, body: Record<string, unknown>) {
  const r = await c.post(`/${db}/_find`, body);
  assert.equal(r.status, 200, r.text);
  return r.body as { docs: any[]; bookmark: string; warning?: string; execution_stats?: any };
}

async function explain(db: string, body: Record<string, unknown>) {
  const r = await c.post(`/${db}/_explain`, body);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const userIds = (docs: any[]) => docs.map((d) => d.user_id);
const sortedIds = (docs: any[]) => userIds(docs).sort((a, b) => a - b);

async function expectError(db: string, path: string, body: unknown, status: number, error: string, reason?: string | RegExp) {
  const r = await c.post(`/${db}/${path}`, body);
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.error, error, r.text);
  if (typeof reason === 'string') assert.equal(r.body.reason, reason);
  else if (reason) assert.match(r.body.reason, reason);
}

// The users database of CouchDB's tests, with its index on age (user_docs.py's setup).
await freshDb('users', USER_DOCS);
await createIndex('users', ['age'], { name: 'age', ddoc: 'age' });

// ------------------------------------------------------------------ 02-basic-find

test('02 basic find: bad selectors, limits, skips, sorts, fields and r are refused with CouchDB\'s errors', async () => {
  for (const bad of [null, true, 1, 'foobarbaz', [1]]) await expectError('users', '_find', { selector: bad }, 400, 'invalid_selector_json');
  await expectError('users', '_find', { selector: 'foo' }, 400, 'invalid_selector_json', 'Selector must be a JSON object, not: <<102,111,111>>');
  await expectError('users', '_find', {}, 400, 'missing_required_key', 'Missing required key: selector');
  for (const bad of [null, true, -1, 'foo', 1.2]) await expectError('users', '_find', { selector: { int: 1 }, limit: bad }, 400, 'invalid_non_neg_integer');
  await expectError('users', '_find', { selector: { int: 1 }, skip: -1 }, 400, 'invalid_non_neg_integer', '-1 is not an integer greater than or equal to zero');
  for (const bad of [true, 'foo', { foo: 'bar' }, [{ foo: 'bar', baz: 'bam' }], [{ foo: 'up' }]]) {
    await expectError('users', '_find', { selector: { int: 1 }, sort: bad }, 400, Array.isArray(bad) ? 'invalid_sort_field' : 'invalid_sort_json');
  }
  await expectError('users', '_find', { selector: { int: 1 }, sort: ['a', { b: 'desc' }] }, 400, 'unsupported_mixed_sort');
  for (const bad of [true, 'foo', { foo: 'bar' }]) await expectError('users', '_find', { selector: { int: 1 }, fields: bad }, 400, 'invalid_fields');
  await expectError('users', '_find', { selector: { int: 1 }, fields: [1] }, 400, 'invalid_field', 'Invalid JSON for field spec: 1');
  for (const bad of [null, true, -1, 'foo', 0]) await expectError('users', '_find', { selector: { int: 1 }, r: bad }, 400, 'invalid_pos_integer');
  await expectError('users', '_find', { selector: { int: 1 }, conflicts: 'yes' }, 400, 'invalid_boolean', 'Invalid boolean value: <<121,101,115>>');
  await expectError('users', '_find', { selector: { int: 1 }, foo: 1 }, 400, 'invalid_key', 'Invalid key foo for this request.');
  await expectError('users', '_find', { selector: { int: { $foo: 1 } } }, 400, 'invalid_operator', 'Invalid operator: $foo');
  await expectError('users', '_find', { selector: { int: { $in: 1 } } }, 400, 'bad_arg', 'Bad argument for operator $in: 1');
  await expectError('users', '_find', { selector: { $gt: 1 } }, 400, 'invalid_selector', 'One or more conditions is missing a field name.');
});

test('02 basic find: the body must be JSON', async () => {
  const r = await c.request('POST', '/users/_find', { raw: '{"selector":{}}', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(r.status, 415);
  assert.equal(r.body.error, 'bad_content_type');
  const bad = await c.request('POST', '/users/_find', { raw: '{"selector":', headers: { 'Content-Type': 'application/json' } });
  assert.equal(bad.status, 400);
  const get = await c.get('/users/_find');
  assert.equal(get.status, 405);
});

test('02 basic find: simple, multi-condition and $or selectors', async () => {
  const simple = await find('users', { selector: { age: { $lt: 35 } } });
  assert.deepEqual(userIds(simple.docs), [9, 1, 7], 'in the age index\'s order');
  assert.equal(simple.warning, undefined);
  assert.deepEqual(userIds((await find('users', { selector: { manager: true, 'location.city': 'Longbranch' } })).docs), [7]);
  const or = await find('users', { selector: { $and: [{ age: { $gte: 75 } }, { $or: [{ 'name.first': 'Mathis' }, { 'name.first': 'Whitley' }] }] } });
  assert.deepEqual(userIds(or.docs), [11, 13]);
  const multi = await find('users', { selector: { 'location.state': { $and: [{ $gt: 'Hawaii' }, { $lt: 'Maine' }] }, 'location.city': { $lt: 'Longbranch' } } });
  assert.deepEqual(userIds(multi.docs), [6]);
});

test('02 basic find: missing and null values, empty selectors and sub-selectors', async () => {
  assert.deepEqual(userIds((await find('users', { selector: { 'favorites.3': 'C' } })).docs), [6]);
  assert.equal((await find('users', { selector: { 'favorites.3': null } })).docs.length, 0);
  assert.deepEqual(userIds((await find('users', { selector: { twitter: { $gt: null } } })).docs), [1, 0, 4, 13]);
  const all = await find('users', { selector: {} });
  assert.equal(all.docs.length, 15);
  assert.equal(all.warning, NO_INDEX);
  assert.equal((await find('users', { selector: { _id: { $gt: null }, location: {} } })).docs.length, 0);
  assert.equal((await find('users', { selector: { $and: [{ age: { $gt: 0 } }, { age: { $lt: 0 } }] } })).docs.length, 0);
  assert.equal((await find('users', { selector: { $or: [] } })).docs.length, 0, 'a lone empty $or selects nothing');
  assert.equal((await find('users', { selector: { age: 22, $or: [] } })).docs.length, 1, 'beside others it does not restrict');
  assert.deepEqual(userIds((await find('users', { selector: { 'name\\.first': 'name dot first' } })).docs), [4]);
  assert.deepEqual(userIds((await find('users', { selector: { '11111': 'number_field' } })).docs), [3]);
  assert.deepEqual(userIds((await find('users', { selector: { '22222.33333': 'nested_number_field' } })).docs), [3]);
});

test('02 basic find: limit, skip, fields and r', async () => {
  for (const limit of [0, 1, 2, 3, 14, 15, 16]) {
    assert.equal((await find('users', { selector: { age: { $gt: 0 } }, limit })).docs.length, Math.min(limit, 15));
  }
  assert.equal((await find('users', { selector: { age: { $gt: 0 } } })).docs.length, 15);
  for (const skip of [0, 1, 5, 14, 15, 16]) {
    assert.equal((await find('users', { selector: { age: { $gt: 0 } }, skip })).docs.length, Math.max(0, 15 - skip));
  }
  const skipped = await find('users', { selector: { age: { $gt: 0 } }, skip: 2, limit: 2 });
  assert.deepEqual(skipped.docs.map((d) => d.age), [33, 42]);
  const fields = await find('users', { selector: { age: { $gt: 0 } }, fields: ['user_id', 'location.address'] });
  for (const d of fields.docs) {
    assert.deepEqual(Object.keys(d).sort(), ['location', 'user_id']);
    assert.deepEqual(Object.keys(d.location), ['address']);
  }
  for (const r of [1, 2, 3]) assert.equal((await find('users', { selector: { age: { $gt: 0 } }, r })).docs.length, 15);
});

test('02 basic find: sort by _id asc and desc over _all_docs, and no_usable_index for a sort no index serves', async () => {
  const ids = USER_DOCS.map((u) => u._id).sort();
  assert.deepEqual((await find('users', { selector: { _id: { $gt: null } }, sort: ['_id'], fields: ['_id'] })).docs.map((d) => d._id), ids);
  assert.deepEqual((await find('users', { selector: { _id: { $gt: null } }, sort: [{ _id: 'desc' }], fields: ['_id'] })).docs.map((d) => d._id), [...ids].reverse());
  await expectError('users', '_find', { selector: { manager: true }, sort: ['location.state'] }, 400, 'no_usable_index',
    'No index exists for this sort, try indexing by the sort fields.');
  const byAge = await find('users', { selector: { age: { $gt: 0 } }, sort: [{ age: 'desc' }], limit: 3 });
  assert.deepEqual(byAge.docs.map((d) => d.age), [79, 78, 75]);
});

test('02 basic find: _explain shows the plan and its view arguments', async () => {
  const ex = await explain('users', { selector: { age: { $gt: 0 } }, fields: ['manager'] });
  assert.equal(ex.dbname, 'users');
  assert.deepEqual(ex.index, { ddoc: '_design/age', name: 'age', type: 'json', partitioned: false, def: { fields: [{ age: 'asc' }] } });
  assert.deepEqual(ex.selector, { age: { $gt: 0 } });
  assert.deepEqual(ex.fields, ['manager']);
  assert.equal(ex.limit, 25);
  assert.equal(ex.skip, 0);
  assert.deepEqual(ex.mrargs, {
    include_docs: true, view_type: 'map', reduce: false, partition: null, start_key: [0], end_key: ['<MAX>'],
    direction: 'fwd', stable: false, update: true, conflicts: 'undefined',
  });
  assert.deepEqual(ex.opts, {
    use_index: [], bookmark: 'nil', limit: 25, skip: 0, sort: {}, fields: ['manager'], partition: '', r: 1,
    conflicts: false, stale: false, update: true, stable: false, execution_stats: false, allow_fallback: true,
  });
  const special = await explain('users', { selector: { _id: { $gt: 0 }, age: { $gt: 0 } }, sort: ['_id'] });
  assert.equal(special.index.type, 'special');
  const desc = await explain('users', { selector: { age: { $gt: 5, $lt: 10 } }, sort: [{ age: 'desc' }], stable: true, update: false });
  assert.deepEqual([desc.mrargs.start_key, desc.mrargs.end_key, desc.mrargs.direction, desc.mrargs.stable, desc.mrargs.update], [[10, '<MAX>'], [5], 'rev', true, false]);
  const scan = await explain('users', { selector: { name: 'x' } });
  assert.deepEqual([scan.index.name, scan.mrargs.start_key, scan.mrargs.end_key], ['_all_docs', null, '<MAX>']);
});

test('execution_stats and the warning for a scan', async () => {
  const r = await find('users', { selector: { age: { $gt: 70 } }, execution_stats: true });
  assert.equal(r.execution_stats.results_returned, r.docs.length);
  // The index on age is read from 70 on: only the rows of that key range are examined.
  assert.equal(r.docs.length, 5);
  assert.equal(r.execution_stats.total_keys_examined, 5);
  assert.equal(r.execution_stats.total_docs_examined, 5);
  assert.equal(r.execution_stats.total_quorum_docs_examined, 0);
  assert.equal(typeof r.execution_stats.execution_time_ms, 'number');
  const scan = await find('users', { selector: { company: 'Globoil' }, execution_stats: true });
  assert.deepEqual(userIds(scan.docs), [8]);
  assert.equal(scan.warning, `${NO_INDEX}\nThe number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this.`);
  const raw = await c.post('/users/_find', { selector: { user_id: 8 }, fields: ['user_id'] });
  assert.equal(raw.text, `{"docs":[\r\n{"user_id":8}\r\n],\r\n"bookmark": ${JSON.stringify(raw.body.bookmark)},\r\n"warning": ${JSON.stringify(raw.body.warning)}}\r\n`);
});

test('an _all_docs scan with a limit examines up to the next match, as an index scan does', async () => {
  await freshDb('scanlimit', [
    { _id: 'a' }, { _id: 'b', x: 1 }, { _id: 'c' }, { _id: 'd', x: 1 }, { _id: 'e', x: 1 }, { _id: '_design/v', views: {} },
  ]);
  const r = await find('scanlimit', { selector: { x: 1 }, limit: 1, execution_stats: true });
  assert.deepEqual(r.docs.map((d) => d._id), ['b']);
  // a, b, c and d (the match after the limit), and the design document before them.
  assert.equal(r.execution_stats.total_docs_examined, 5);
  assert.equal(r.execution_stats.total_keys_examined, 5);
  assert.equal(r.execution_stats.results_returned, 1);
  const all = await find('scanlimit', { selector: { x: 1 }, limit: 3, execution_stats: true });
  assert.deepEqual(all.docs.map((d) => d._id), ['b', 'd', 'e']);
  assert.equal(all.execution_stats.total_docs_examined, 6);
});

// ------------------------------------------------------------------ 03-operator

test('03 operators: $all, $in, $nin, $regex, $exists, $keyMapMatch, $beginsWith', async () => {
  assert.deepEqual(userIds((await find('users', { selector: { manager: true, favorites: { $all: ['Lisp', 'Python'] } } })).docs), [2, 12, 9]);
  assert.equal((await find('users', { selector: { manager: true, location: { $all: ['Ohio'] } } })).docs.length, 0);
  assert.deepEqual(sortedIds((await find('users', { selector: { manager: true, favorites: { $in: ['Ruby', 'Python'] } } })).docs), [2, 6, 7, 9, 11, 12]);
  assert.deepEqual(sortedIds((await find('users', { selector: { manager: true, favorites: { $nin: ['Erlang', 'Python'] } } })).docs), [5, 6, 8, 11]);
  assert.deepEqual(sortedIds((await find('users', { selector: { age: { $gt: 40 }, 'location.state': { $regex: '(?i)new.*' } } })).docs), [2, 10]);
  assert.deepEqual(sortedIds((await find('users', { selector: { age: { $gt: 0 }, twitter: { $exists: false } } })).docs), [2, 3, 5, 6, 7, 8, 10, 11, 12, 14]);
  assert.deepEqual(sortedIds((await find('users', { selector: { 'location.state': { $beginsWith: 'New' } } })).docs), [2, 10]);
  await freshDb('keymap', [{ foo: { aa: 'bar', bb: 'bang' } }, { foo: { cc: 'bar', bb: 'bang' } }]);
  assert.equal((await find('keymap', { selector: { foo: { $keyMapMatch: { $eq: 'aa' } } } })).docs.length, 1);
});

test('03 operators: null and missing fields with $eq, $ne, $lt, $lte, $gte', async () => {
  assert.deepEqual(sortedIds((await find('users', { selector: { age: { $gt: 0 }, twitter: null } })).docs), [9]);
  assert.deepEqual(sortedIds((await find('users', { selector: { twitter: { $ne: 'notamatch' } } })).docs), [0, 1, 4, 9, 13]);
  assert.deepEqual(sortedIds((await find('users', { selector: { twitter: { $lt: 1 } } })).docs), [9]);
  assert.deepEqual(sortedIds((await find('users', { selector: { twitter: { $lte: null } } })).docs), [9]);
  assert.deepEqual(sortedIds((await find('users', { selector: { twitter: { $and: [{ $lte: '@z' }, { $ne: null }] } } })).docs), [0, 1, 4, 13]);
  assert.deepEqual(sortedIds((await find('users', { selector: { twitter: { $gte: null } } })).docs), [0, 1, 4, 9, 13]);
});

test('03 operators: $elemMatch, $allMatch, $size, $mod, $type, $not, $nor over documents of their own', async () => {
  await freshDb('ops', [
    { _id: 'a', n: 7, list: [1, 5, 9], people: [{ name: 'x', age: 3 }, { name: 'y', age: 30 }], t: 'str' },
    { _id: 'b', n: 8, list: [10, 20], people: [{ name: 'z', age: 40 }], t: 1 },
    { _id: 'c', n: 9.5, list: [], t: null },
  ]);
  const ids = async (selector: object) => (await find('ops', { selector })).docs.map((d) => d._id);
  assert.deepEqual(await ids({ list: { $elemMatch: { $gt: 8, $lt: 15 } } }), ['a', 'b']);
  assert.deepEqual(await ids({ people: { $elemMatch: { name: 'y', age: { $gt: 20 } } } }), ['a']);
  assert.deepEqual(await ids({ list: { $allMatch: { $gte: 10 } } }), ['b']);
  assert.deepEqual(await ids({ list: { $size: 0 } }), ['c']);
  assert.deepEqual(await ids({ n: { $mod: [2, 1] } }), ['a']);
  assert.deepEqual(await ids({ t: { $type: 'string' } }), ['a']);
  assert.deepEqual(await ids({ t: { $type: 'null' } }), ['c']);
  assert.deepEqual(await ids({ n: { $not: { $eq: 7 } } }), ['b', 'c']);
  assert.deepEqual(await ids({ $nor: [{ n: 7 }, { n: 8 }] }), ['c']);
  assert.deepEqual(await ids({ $or: [{ n: 7 }, { t: 1 }] }), ['a', 'b']);
  assert.deepEqual(await ids({ _id: { $in: ['a', 'c'] } }), ['a', 'c']);
  assert.deepEqual(await ids({ n: { $gte: 8, $lte: 9.5 } }), ['b', 'c']);
});

// ------------------------------------------------------------------ 01-index-crud

test('01 index CRUD: create, exists, list, delete, and bad definitions', async () => {
  await freshDb('crud');
  const made = await createIndex('crud', ['foo', 'bar'], { name: 'idx_01', ddoc: 'ddoc_01' });
  assert.deepEqual(made, { result: 'created', id: '_design/ddoc_01', name: 'idx_01' });
  assert.equal((await createIndex('crud', ['foo', 'bar'], { name: 'idx_01', ddoc: 'ddoc_01' })).result, 'exists');
  const ddoc = (await c.get('/crud/_design/ddoc_01')).body;
  assert.equal(ddoc.language, 'query');
  assert.deepEqual(ddoc.views.idx_01, {
    map: { fields: { foo: 'asc', bar: 'asc' }, partial_filter_selector: {} },
    reduce: '_count',
    options: { def: { fields: ['foo', 'bar'] } },
  });
  const auto = await createIndex('crud', [{ baz: 'desc' }]);
  assert.match(auto.name, /^[0-9a-f]{40}$/);
  assert.equal(auto.id, `_design/${auto.name}`);
  assert.equal((await createIndex('crud', [{ baz: 'desc' }])).result, 'exists');
  const list = await c.get('/crud/_index');
  assert.equal(list.status, 200);
  assert.equal(list.body.total_rows, 3);
  assert.deepEqual(list.body.indexes[0], { ddoc: null, name: '_all_docs', type: 'special', def: { fields: [{ _id: 'asc' }] } });
  assert.deepEqual(list.body.indexes.map((i: any) => i.name).slice(1).sort(), [auto.name, 'idx_01'].sort());
  const idx01 = list.body.indexes.find((i: any) => i.name === 'idx_01');
  assert.deepEqual(idx01, { ddoc: '_design/ddoc_01', name: 'idx_01', type: 'json', partitioned: false, def: { fields: [{ foo: 'asc' }, { bar: 'asc' }] } });
  assert.equal((await c.get('/crud/_index?limit=1&skip=1')).body.indexes.length, 1);
  assert.equal((await c.get('/crud/_index?limit=0')).status, 500);

  for (const fields of ['hello', [{ foo: 'bar' }], [true], [{ foo: 'asc', bar: 'desc' }]]) {
    const r = await c.post('/crud/_index', { index: { fields } });
    assert.equal(r.status, 400, JSON.stringify(fields));
  }
  await expectError('crud', '_index', { index: { fields: ['a'] }, type: 'geo' }, 400, 'invalid_index', 'Invalid type for index: geo');
  await expectError('crud', '_index', { index: 'foo' }, 400, 'invalid_index', 'JSON indexes must be an object, not: <<102,111,111>>');
  await expectError('crud', '_index', { fields: ['a'] }, 400, 'missing_required_key', 'Missing required key: index');
  await expectError('crud', '_index', { index: { fields: ['a'], bad: 1 } }, 400, 'invalid_key', 'Invalid key bad for this request.');
  await expectError('crud', '_index', { index: { fields: ['a'] }, name: 1 }, 400, 'invalid_string', 'Invalid string: 1');
  await c.put('/crud/_design/js', { views: { v: { map: 'function(doc){}' } } });
  // mango_util:check_lang reports the language member lists:keyfind found, printed by ~w, or false.
  await expectError('crud', '_index', { index: { fields: ['a'] }, ddoc: 'js' }, 400, 'invalid_ddoc_lang',
    'Existing design doc has an invalid language: false');
  await c.put('/crud/_design/js2', { language: 'javascript', views: {} });
  await expectError('crud', '_index', { index: { fields: ['a'] }, ddoc: 'js2' }, 400, 'invalid_ddoc_lang',
    'Existing design doc has an invalid language: {<<108,97,110,103,117,97,103,101>>,<<106,97,118,97,115,99,114,105,112,116>>}');

  // Two indexes in one design document; deleting one keeps the other, deleting both the document.
  await createIndex('crud', ['x'], { name: 'second', ddoc: 'ddoc_01' });
  let del = await c.del('/crud/_index/_design/ddoc_01/json/idx_01');
  assert.deepEqual([del.status, del.body], [200, { ok: true }]);
  assert.deepEqual(Object.keys((await c.get('/crud/_design/ddoc_01')).body.views), ['second']);
  del = await c.del('/crud/_index/ddoc_01/json/second');
  assert.equal(del.status, 200);
  assert.equal((await c.get('/crud/_design/ddoc_01')).status, 404);
  del = await c.del('/crud/_index/ddoc_01/json/second');
  assert.deepEqual([del.status, del.body], [404, { error: 'not_found', reason: 'missing' }]);
  const bulk = await c.post('/crud/_index/_bulk_delete', { docids: [auto.id, '_design/nothing'] });
  assert.deepEqual(bulk.body, { success: [{ id: auto.id, ok: true }], fail: [{ id: '_design/nothing', error: 'not_found' }] });
  assert.equal((await c.get('/crud/_index')).body.total_rows, 1);
});

test('_index/_bulk_delete checks its body as mango_opts:validate_bulk_delete does', async () => {
  await freshDb('bulkdel');
  const made = await createIndex('bulkdel', ['a'], { ddoc: 'one', name: 'a' });
  await expectError('bulkdel', '_index/_bulk_delete', {}, 400, 'missing_required_key', 'Missing required key: docids');
  await expectError('bulkdel', '_index/_bulk_delete', { docids: 'one' }, 400, 'invalid_bulk_docs',
    'Bulk Delete requires an array of non-null docids. Docids: <<111,110,101>>');
  // Each docid is checked as a use_index value.
  await expectError('bulkdel', '_index/_bulk_delete', { docids: ['one', 1] }, 400, 'invalid_index_name', 'Invalid index name: 1');
  await expectError('bulkdel', '_index/_bulk_delete', { docids: ['one'], w: 0 }, 400, 'invalid_pos_integer', '0 is not an integer greater than zero');
  await expectError('bulkdel', '_index/_bulk_delete', { docids: ['one'], extra: true }, 400, 'invalid_key', 'Invalid key extra for this request.');
  assert.equal((await c.get('/bulkdel/_index')).body.total_rows, 2, 'a refused request deletes nothing');
  const r = await c.post('/bulkdel/_index/_bulk_delete', { docids: ['one'], w: 3 });
  assert.deepEqual([r.status, r.body], [200, { success: [{ id: made.id, ok: true }], fail: [] }]);
});

// ------------------------------------------------------------------ 05-index-selection, 12-use-correct-index

const CHOOSE = [
  { _id: '_design/my-design-doc' },
  { _id: '54af50626de419f5109c962f', user_id: 0, age: 10, name: 'Jimi', location: 'UK', number: 4 },
  { _id: '54af50622071121b25402dc3', user_id: 1, age: 12, name: 'Eddie', location: 'ZAR', number: 2 },
  { _id: '54af50622071121b25402dc6', user_id: 1, age: 6, name: 'Harry', location: 'US', number: 8 },
  { _id: '54af50622071121b25402dc9', name: 'Eddie', occupation: 'engineer', number: 7 },
];

async function chosenDdoc(db: string, selector: object): Promise<string | null> {
  return (await explain(db, { selector })).index.ddoc;
}

test('12 use the correct index: fewest unused ranges, then fewest columns, then by design document', async () => {
  await freshDb('choose', CHOOSE);
  await createIndex('choose', ['name', 'age', 'user_id'], { ddoc: 'aaa' });
  await createIndex('choose', ['name'], { ddoc: 'zzz' });
  assert.equal(await chosenDdoc('choose', { name: 'Eddie' }), '_design/zzz');
  await createIndex('choose', ['name', 'age'], { ddoc: 'bbb' });
  assert.equal(await chosenDdoc('choose', { name: 'Eddie', age: { $gte: 12 } }), '_design/bbb');
  assert.equal(await chosenDdoc('choose', { name: 'Eddie', number: { $lte: 12 } }), '_design/zzz');

  await freshDb('choose2', CHOOSE);
  for (const ddoc of ['aaa', 'bbb', 'zzz']) await createIndex('choose2', ['name'], { ddoc });
  assert.equal(await chosenDdoc('choose2', { name: 'Eddie', age: { $gte: 12 } }), '_design/aaa');

  await freshDb('choose3', [{ a: 1, b: 1, c: 1 }, { a: 1000, d: 1000, e: 1000 }]);
  await createIndex('choose3', ['a', 'b', 'c']);
  await createIndex('choose3', ['a', 'd', 'e']);
  const ex = await explain('choose3', { selector: { a: { $gt: 0 }, b: { $gt: 0 }, c: { $gt: 0 } } });
  assert.deepEqual(ex.index.def.fields, [{ a: 'asc' }, { b: 'asc' }, { c: 'asc' }]);

  await freshDb('choose4', CHOOSE);
  await createIndex('choose4', ['age', 'name'], { ddoc: 'bbb' });
  const selector = { age: 10, name: { $gte: 0 } };
  assert.equal((await find('choose4', { selector })).docs.length, 1);
  const range = await explain('choose4', { selector });
  assert.equal(range.index.ddoc, '_design/bbb');
  assert.deepEqual(range.mrargs.end_key, [10, '<MAX>']);

  await freshDb('choose5', CHOOSE);
  await createIndex('choose5', ['name', '_id'], { ddoc: 'aaa' });
  assert.equal(await chosenDdoc('choose5', { name: 'Eddie' }), '_design/aaa');
  const scan = await explain('choose5', { selector: { not_indexed: 'foo' } });
  assert.equal(scan.index.type, 'special');
  assert.equal((await find('choose5', { selector: { not_indexed: 'foo' } })).warning?.split('\n')[0], NO_INDEX);
});

test('05 index selection: use_index, and its warning when the index cannot answer', async () => {
  await freshDb('sel', CHOOSE);
  await createIndex('sel', ['name'], { ddoc: 'names', name: 'by_name' });
  await createIndex('sel', ['number'], { ddoc: 'numbers', name: 'by_number' });
  const used = await find('sel', { selector: { name: 'Eddie', number: { $gt: 0 } }, use_index: 'numbers' });
  assert.equal(used.warning, undefined);
  assert.equal((await explain('sel', { selector: { name: 'Eddie', number: { $gt: 0 } }, use_index: ['numbers', 'by_number'] })).index.name, 'by_number');
  assert.equal((await explain('sel', { selector: { name: 'Eddie', number: { $gt: 0 } }, use_index: '_design/names/by_name' })).index.name, 'by_name');
  const wrong = await find('sel', { selector: { name: 'Eddie' }, use_index: 'numbers' });
  assert.equal(wrong.warning, '_design/numbers was not used because it does not contain a valid index for this query.');
  assert.equal(wrong.docs.length, 2);
  const missing = await find('sel', { selector: { name: 'Eddie' }, use_index: ['names', 'nope'] });
  assert.equal(missing.warning, '_design/names, nope was not used because it is not a valid index for this query.');
  await expectError('sel', '_find', { selector: { name: 'Eddie' }, use_index: 1 }, 400, 'invalid_index_name', 'Invalid index name: 1');
  // Sorting by an indexed field uses that index and its order; documents without the field are not in it.
  const sorted = await find('sel', { selector: { number: { $gt: 0 } }, sort: [{ number: 'desc' }] });
  assert.deepEqual(sorted.docs.map((d) => d.number), [8, 7, 4, 2]);
  const byName = await find('sel', { selector: { name: { $gt: null } }, sort: ['name'] });
  assert.deepEqual(byName.docs.map((d) => d.name), ['Eddie', 'Eddie', 'Harry', 'Jimi']);
});

test('an index answers only documents that have every indexed field, and partial indexes only what they filter', async () => {
  await freshDb('partial', [
    { _id: 'a', status: 'open', year: 2010 }, { _id: 'b', status: 'closed', year: 2011 },
    { _id: 'c', status: 'open', year: 2012 }, { _id: 'd', status: 'open' },
  ]);
  const idx = await createIndex('partial', ['year'], { ddoc: 'p', name: 'open_years', partial_filter_selector: { status: { $ne: 'closed' } } });
  assert.equal(idx.result, 'created');
  const stored = (await c.get('/partial/_design/p')).body.views.open_years;
  assert.deepEqual(stored.map.partial_filter_selector, { status: { $ne: 'closed' } });
  const listed = (await c.get('/partial/_index')).body.indexes[1];
  assert.deepEqual(listed.def, { fields: [{ year: 'asc' }], partial_filter_selector: { status: { $ne: 'closed' } } });
  // Not chosen unless named: a partial index is never picked on its own.
  assert.equal((await explain('partial', { selector: { year: { $gt: 2000 } } })).index.type, 'special');
  assert.deepEqual((await find('partial', { selector: { year: { $gt: 2000 } } })).docs.map((d) => d._id), ['a', 'b', 'c']);
  const viaPartial = await find('partial', { selector: { year: { $gt: 2000 } }, use_index: 'p' });
  assert.deepEqual(viaPartial.docs.map((d) => d._id), ['a', 'c']);
  assert.equal(viaPartial.warning, undefined);
  // A sort on year needs an index; the partial one is only used when named.
  await expectError('partial', '_find', { selector: { year: { $gt: 2000 } }, sort: ['year'] }, 400, 'no_usable_index');
  assert.deepEqual((await find('partial', { selector: { year: { $gt: 2000 } }, sort: [{ year: 'desc' }], use_index: 'p' })).docs.map((d) => d._id), ['c', 'a']);
});

// ------------------------------------------------------------------ 14-json-pagination

async function pages(db: string, body: Record<string, unknown>): Promise<string[][]> {
  const out: string[][] = [];
  let bookmark: string | undefined;
  for (let i = 0; i < 20; i++) {
    const r = await find(db, { ...body, ...(bookmark ? { bookmark } : {}) });
    out.push(r.docs.map((d) => d._id));
    if (r.docs.length === 0) break;
    bookmark = r.bookmark;
  }
  return out;
}

test('14 pagination: bookmarks continue where the page ended, over _all_docs and over an index, both ways', async () => {
  const docs = Array.from({ length: 10 }, (_, i) => ({ _id: `d${i}`, n: 10 - i, same: 1 }));
  await freshDb('pages', docs);
  assert.deepEqual(await pages('pages', { selector: {}, limit: 4 }), [['d0', 'd1', 'd2', 'd3'], ['d4', 'd5', 'd6', 'd7'], ['d8', 'd9'], []]);
  assert.deepEqual(await pages('pages', { selector: { _id: { $gt: null } }, sort: [{ _id: 'desc' }], limit: 6 }),
    [['d9', 'd8', 'd7', 'd6', 'd5', 'd4'], ['d3', 'd2', 'd1', 'd0'], []]);
  await createIndex('pages', ['n']);
  assert.deepEqual(await pages('pages', { selector: { n: { $gt: 0 } }, limit: 4 }), [['d9', 'd8', 'd7', 'd6'], ['d5', 'd4', 'd3', 'd2'], ['d1', 'd0'], []]);
  assert.deepEqual(await pages('pages', { selector: { n: { $gt: 0 } }, sort: [{ n: 'desc' }], limit: 5 }), [['d0', 'd1', 'd2', 'd3', 'd4'], ['d5', 'd6', 'd7', 'd8', 'd9'], []]);
  // Equal keys page by document id.
  await createIndex('pages', ['same']);
  assert.deepEqual(await pages('pages', { selector: { same: 1 }, use_index: [(await c.get('/pages/_index')).body.indexes.find((i: any) => i.def.fields[0].same).ddoc], limit: 3 }),
    [['d0', 'd1', 'd2'], ['d3', 'd4', 'd5'], ['d6', 'd7', 'd8'], ['d9'], []]);
  // Skip applies again after a bookmark, as in CouchDB.
  const first = await find('pages', { selector: {}, limit: 2 });
  assert.deepEqual((await find('pages', { selector: {}, limit: 2, skip: 1, bookmark: first.bookmark })).docs.map((d) => d._id), ['d3', 'd4']);
  // An empty page gives back the bookmark it was given; none at all is "nil".
  assert.equal((await find('pages', { selector: { n: 99 } })).bookmark, 'nil');
  const last = await find('pages', { selector: {}, limit: 20 });
  assert.equal((await find('pages', { selector: {}, bookmark: last.bookmark })).bookmark, last.bookmark);
  await expectError('pages', '_find', { selector: {}, bookmark: 'garbage!' }, 400, 'invalid_bookmark', 'Invalid bookmark value: "garbage!"');
});

test('conflicts: true shows a document\'s conflicting revisions', async () => {
  await freshDb('conf');
  await c.post('/conf/_bulk_docs', { new_edits: false, docs: [{ _id: 'x', _rev: '1-a', v: 1 }, { _id: 'x', _rev: '1-b', v: 2 }] });
  const r = await find('conf', { selector: { _id: 'x' }, conflicts: true });
  assert.deepEqual(r.docs[0]._conflicts, ['1-a']);
  assert.equal((await find('conf', { selector: { _id: 'x' } })).docs[0]._conflicts, undefined);
});

test('design documents are never answers; query-language design documents leave the rest of Settee working', async () => {
  await freshDb('mixed', [{ _id: 'a', v: 1 }, { _id: '_design/js', views: { all: { map: 'function(doc){ emit(doc._id, 1); }' } } }]);
  assert.deepEqual((await find('mixed', { selector: {} })).docs.map((d) => d._id), ['a']);
  const idx = await createIndex('mixed', ['v'], { ddoc: 'q', name: 'by_v' });
  assert.equal(idx.result, 'created');
  assert.deepEqual((await c.get('/mixed/_design/js/_view/all')).body.rows.map((r: any) => r.id), ['a']);
  const info = await c.get('/mixed/_design/q/_info');
  assert.equal(info.status, 200);
  assert.equal(info.body.view_index.language, 'query');
  // An index is a view of its design document (CouchDB runs its map natively): keys are the
  // indexed fields' values, values null, and the reduce is _count.
  assert.deepEqual((await c.get('/mixed/_design/q/_view/by_v?reduce=false')).body.rows, [{ id: 'a', key: [1], value: null }]);
  assert.deepEqual((await c.get('/mixed/_design/q/_view/by_v')).body.rows, [{ key: null, value: 1 }]);
  assert.equal((await c.post('/mixed/_view_cleanup', {})).status, 202);
  assert.equal((await c.post('/mixed/_compact/q', {})).status, 202);
  const rep = await c.post('/_replicate', { source: 'mixed', target: 'mixed_copy', create_target: true });
  assert.equal(rep.status, 200, rep.text);
  const copied = await c.get('/mixed_copy/_index');
  assert.deepEqual(copied.body.indexes.map((i: any) => i.name), ['_all_docs', 'by_v']);
  assert.deepEqual((await find('mixed_copy', { selector: { v: 1 } })).docs.map((d) => d._id), ['a']);
});

// ------------------------------------------------------------------ access

test('access: members read (_find, _explain, GET _index); changing indexes needs a database admin', async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  const admin = basic('root', 'rootpw');
  await createUser(server.url, admin, 'member', 'mpw');
  await createUser(server.url, admin, 'outsider', 'opw');
  const member = basic('member', 'mpw');
  assert.equal((await c.put('/guarded', undefined, { headers: admin })).status, 201);
  await c.put('/guarded/_security', { admins: { names: [], roles: [] }, members: { names: ['member'], roles: [] } }, { headers: admin });
  await c.put('/guarded/doc', { v: 1 }, { headers: admin });

  const found = await c.post('/guarded/_find', { selector: { v: 1 } }, { headers: member });
  assert.equal(found.status, 200);
  assert.equal(found.body.docs.length, 1);
  assert.equal((await c.post('/guarded/_explain', { selector: {} }, { headers: member })).status, 200);
  assert.equal((await c.get('/guarded/_index', { headers: member })).status, 200);
  const anon = await c.post('/guarded/_find', { selector: {} });
  assert.equal(anon.status, 401);
  const outsider = await c.post('/guarded/_find', { selector: {} }, { headers: basic('outsider', 'opw') });
  assert.equal(outsider.status, 401);

  const create = await c.post('/guarded/_index', { index: { fields: ['v'] }, ddoc: 'v' }, { headers: member });
  assert.deepEqual([create.status, create.body.error], [401, 'unauthorized']);
  assert.equal((await c.post('/guarded/_index', { index: { fields: ['v'] }, ddoc: 'v' }, { headers: admin })).status, 200);
  const del = await c.del('/guarded/_index/v/json/' + (await c.get('/guarded/_index', { headers: admin })).body.indexes[1].name, { headers: member });
  assert.equal(del.status, 401);
  const users = await c.post('/_users/_find', { selector: {} }, { headers: member });
  assert.equal(users.status, 403, 'the users database is not listed to its users');
});
