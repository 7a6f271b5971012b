/**
 * Bulk and maintenance endpoints over real HTTP: `_bulk_docs`, `_bulk_get` (CouchDB 2 form),
 * `_revs_diff`, `_missing_revs`, `_purge`, `_revs_limit`, `_ensure_full_commit` and `_compact`.
 * Expectations follow CouchDB 1.6 (couch_httpd_db.erl, bulk_docs.js, purge.js, compact.js,
 * rev_stemming.js) and CouchDB 2's chttpd_db for `_bulk_get`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

const REV = /^\d+-[0-9a-f]{32}$/;
const CONFLICT = { error: 'conflict', reason: 'Document update conflict.' };

async function createDb(name: string): Promise<void> {
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
}

async function bulkDocs(db: string, body: unknown) {
  return c.post(`/${db}/_bulk_docs`, body);
}

/** Saves documents that must all succeed; returns id -> rev. */
async function save(db: string, docs: object[]): Promise<Record<string, string>> {
  const r = await bulkDocs(db, { docs });
  assert.equal(r.status, 201, r.text);
  const revs: Record<string, string> = {};
  for (const row of r.body) {
    assert.equal(row.ok, true, JSON.stringify(row));
    revs[row.id] = row.rev;
  }
  return revs;
}

async function info(db: string) {
  const r = await c.get(`/${db}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

const hashOf = (rev: string) => rev.slice(rev.indexOf('-') + 1);

// ------------------------------------------------------------------ _bulk_docs

test('_bulk_docs creates documents with the given ids, answering {ok, id, rev} in order', async () => {
  await createDb('bd_create');
  const docs = [{ _id: 'b', v: 2 }, { _id: 'a', v: 1 }, { _id: '_design/x', views: {} }];
  const r = await bulkDocs('bd_create', { docs });
  assert.equal(r.status, 201);
  assert.equal(r.body.length, 3);
  r.body.forEach((row: any, i: number) => {
    assert.deepEqual(Object.keys(row).sort(), ['id', 'ok', 'rev']);
    assert.equal(row.ok, true);
    assert.equal(row.id, docs[i]!._id);
    assert.match(row.rev, /^1-[0-9a-f]{32}$/);
  });
  const a = await c.get('/bd_create/a');
  assert.deepEqual(a.body, { _id: 'a', _rev: r.body[1].rev, v: 1 });
  assert.equal((await info('bd_create')).doc_count, 3);
});

test('_bulk_docs generates ids for documents without one', async () => {
  await createDb('bd_noid');
  const r = await bulkDocs('bd_noid', { docs: [{ foo: 'bar' }, { foo: 'baz' }] });
  assert.equal(r.status, 201);
  const [first, second] = r.body;
  assert.match(first.id, /^[0-9a-f]{32}$/);
  assert.match(second.id, /^[0-9a-f]{32}$/);
  assert.notEqual(first.id, second.id);
  assert.match(first.rev, REV);
  assert.equal((await c.get(`/bd_noid/${first.id}`)).body.foo, 'bar');
  assert.equal((await c.get(`/bd_noid/${second.id}`)).body.foo, 'baz');
});

test('_bulk_docs updates documents given their current _rev', async () => {
  await createDb('bd_update');
  const revs = await save('bd_update', [0, 1, 2, 3, 4].map((i) => ({ _id: String(i), string: String(i) })));
  const updated = await save('bd_update', [0, 1, 2, 3, 4].map((i) => ({ _id: String(i), _rev: revs[String(i)], string: `${i}.00` })));
  for (let i = 0; i < 5; i++) {
    assert.match(updated[String(i)]!, /^2-/);
    const doc = (await c.get(`/bd_update/${i}`)).body;
    assert.equal(doc.string, `${i}.00`);
    assert.equal(doc._rev, updated[String(i)]);
  }
  assert.equal((await info('bd_update')).update_seq, 10);
});

test('_bulk_docs (interactive) edits the revision `_rev` names, ignoring `_revisions` (couch_httpd_db reads `_rev` again)', async () => {
  await createDb('bd_revisions');
  const revs = await save('bd_revisions', [{ _id: 'a', v: 1 }]);
  const hash = (s: string) => s.repeat(32).slice(0, 32);
  const r = await bulkDocs('bd_revisions', {
    docs: [
      // `_rev` is a leaf: it is edited, whatever `_revisions` says.
      { _id: 'a', _rev: revs['a'], _revisions: { start: 5, ids: [hash('a'), hash('b')] }, v: 2 },
      // No `_rev`: a new document, `_revisions` notwithstanding.
      { _id: 'b', _revisions: { start: 5, ids: [hash('c'), hash('d')] }, v: 1 },
    ],
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body[0].ok, true, r.text);
  assert.match(r.body[0].rev, /^2-/);
  assert.equal(r.body[1].ok, true, r.text);
  assert.match(r.body[1].rev, /^1-/);
  const a = (await c.get('/bd_revisions/a?revs=true')).body;
  assert.equal(a.v, 2);
  assert.deepEqual(a._revisions.ids.slice(1), [revs['a']!.slice(2)]);
  assert.equal((await c.get('/bd_revisions/b')).body.v, 1);
});

test('_bulk_docs deletes documents marked _deleted', async () => {
  await createDb('bd_delete');
  const revs = await save('bd_delete', [{ _id: 'x' }, { _id: 'y' }, { _id: 'z' }]);
  const r = await bulkDocs('bd_delete', { docs: [{ _id: 'x', _rev: revs['x'], _deleted: true }, { _id: 'y', _rev: revs['y'], _deleted: true }] });
  assert.equal(r.status, 201);
  assert.equal(r.body[0].ok, true);
  assert.match(r.body[0].rev, /^2-/);
  const gone = await c.get('/bd_delete/x');
  assert.equal(gone.status, 404);
  assert.deepEqual(gone.body, { error: 'not_found', reason: 'deleted' });
  const tombstone = await c.get(`/bd_delete/x?rev=${r.body[0].rev}`);
  assert.equal(tombstone.status, 200);
  assert.equal(tombstone.body._deleted, true);
  const i = await info('bd_delete');
  assert.equal(i.doc_count, 1);
  assert.equal(i.doc_del_count, 2);
  const all = await c.get('/bd_delete/_all_docs');
  assert.deepEqual(all.body.rows.map((row: any) => row.id), ['z']);
});

test('_bulk_docs reports per-document conflicts in request order and applies the rest', async () => {
  await createDb('bd_conflicts');
  const revs = await save('bd_conflicts', [{ _id: '0' }, { _id: '1' }, { _id: '2' }, { _id: '3' }]);
  // Someone else updates "0" and "2" first.
  const newer = await save('bd_conflicts', [{ _id: '0', _rev: revs['0'], by: 'other' }, { _id: '2', _rev: revs['2'], by: 'other' }]);
  const r = await bulkDocs('bd_conflicts', {
    docs: [
      { _id: '0', _rev: revs['0'], _deleted: true },
      { _id: '1', _rev: revs['1'], _deleted: true },
      { _id: '2', _rev: revs['2'], v: 'stale' },
      { _id: '3', _rev: revs['3'], v: 'fresh' },
      { _id: 'new' },
      { _id: '2', v: 'no rev for an existing id' },
    ],
  });
  assert.equal(r.status, 201);
  assert.equal(r.body.length, 6);
  assert.deepEqual(r.body[0], { id: '0', ...CONFLICT });
  assert.equal(r.body[1].ok, true);
  assert.deepEqual(r.body[2], { id: '2', ...CONFLICT });
  assert.equal(r.body[3].ok, true);
  assert.equal(r.body[4].ok, true);
  assert.equal(r.body[4].id, 'new');
  assert.deepEqual(r.body[5], { id: '2', ...CONFLICT });

  assert.equal((await c.get('/bd_conflicts/0')).body._rev, newer['0'], 'conflicting edits change nothing');
  assert.equal((await c.get('/bd_conflicts/2')).body.by, 'other');
  assert.equal((await c.get('/bd_conflicts/1')).status, 404);
  assert.equal((await c.get('/bd_conflicts/3')).body.v, 'fresh');
});

test('_bulk_docs: two edits of one revision in one request, the second conflicts', async () => {
  await createDb('bd_same_doc');
  const revs = await save('bd_same_doc', [{ _id: 'foobar', body: 'baz' }]);
  const r = await bulkDocs('bd_same_doc', {
    docs: [{ _id: 'foobar', _rev: revs['foobar'], body: 'blam' }, { _id: 'foobar', _rev: revs['foobar'], _deleted: true }],
  });
  assert.equal(r.status, 201);
  assert.equal(r.body[0].ok, true);
  assert.deepEqual(r.body[1], { id: 'foobar', ...CONFLICT });
  assert.equal((await c.get('/bd_same_doc/foobar')).body.body, 'blam');
});

test('_bulk_docs all_or_nothing: true writes conflicting revisions instead of rejecting them', async () => {
  await createDb('bd_aon');
  const revs = await save('bd_aon', [{ _id: '0', v: 0 }, { _id: '1', v: 1 }]);
  const current = await save('bd_aon', [{ _id: '0', _rev: revs['0'], v: 'current' }]);
  const r = await bulkDocs('bd_aon', {
    all_or_nothing: true,
    docs: [{ _id: '0', _rev: revs['0'], shooby: 'dooby' }, { _id: '1', _rev: revs['1'], v: 'ok' }],
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.length, 2);
  for (const row of r.body) {
    assert.equal(row.ok, true, JSON.stringify(row));
    assert.match(row.rev, /^2-/);
  }
  const doc = (await c.get('/bd_aon/0?conflicts=true')).body;
  assert.equal(doc._conflicts.length, 1);
  const leaves = [doc._rev, doc._conflicts[0]].sort();
  assert.deepEqual(leaves, [current['0'], r.body[0].rev].sort());
  const other = (await c.get(`/bd_aon/0?rev=${doc._conflicts[0]}`)).body;
  assert.ok(doc.shooby === 'dooby' || other.shooby === 'dooby');
  assert.equal((await c.get('/bd_aon/1')).body.v, 'ok');
});

test('_bulk_docs all_or_nothing: a revision that exists already merges silently; a _rev of a missing document aborts all (417)', async () => {
  await createDb('bd_aon_merge');
  const first = await save('bd_aon_merge', [{ _id: 'x', a: 1 }]);
  const seq = (await info('bd_aon_merge')).update_seq;
  // "x" again as it is (the same new revision), "y" new, and "k" twice in the batch.
  const r = await bulkDocs('bd_aon_merge', { all_or_nothing: true, docs: [{ _id: 'x', a: 1 }, { _id: 'y' }, { _id: 'k', a: 1 }, { _id: 'k', a: 1 }] });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.body.map((row: { ok?: boolean }) => row.ok), [true, true, true, true]);
  assert.equal(r.body[0].rev, first['x']);
  assert.equal(r.body[2].rev, r.body[3].rev);
  assert.equal((await c.get('/bd_aon_merge/y')).status, 200);
  assert.equal((await c.get('/bd_aon_merge/k')).body._rev, r.body[2].rev);
  assert.equal((await info('bd_aon_merge')).update_seq, seq + 2);
  assert.equal((await c.get('/bd_aon_merge/x?conflicts=true')).body._conflicts, undefined);

  const missing = await bulkDocs('bd_aon_merge', { all_or_nothing: true, docs: [{ _id: 'z' }, { _id: 'nobody', _rev: `1-${'a'.repeat(32)}` }] });
  assert.equal(missing.status, 417, missing.text);
  assert.deepEqual(missing.body, [{ id: 'nobody', rev: `1-${'a'.repeat(32)}`, error: 'conflict', reason: 'Document update conflict.' }]);
  assert.equal((await c.get('/bd_aon_merge/z')).status, 404);
});

test('_bulk_docs new_edits: false stores replicated revisions with their history and answers []', async () => {
  await createDb('bd_replicated');
  const h = (ch: string) => ch.repeat(32);
  const doc = { _id: 'r', _rev: `3-${h('c')}`, _revisions: { start: 3, ids: [h('c'), h('b'), h('a')] }, v: 3 };
  const r = await bulkDocs('bd_replicated', { new_edits: false, docs: [doc] });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body, []);
  const got = (await c.get('/bd_replicated/r?revs=true')).body;
  assert.equal(got._rev, `3-${h('c')}`);
  assert.equal(got.v, 3);
  assert.deepEqual(got._revisions, { start: 3, ids: [h('c'), h('b'), h('a')] });
  const seq = (await info('bd_replicated')).update_seq;

  // The same revision again is a no-op.
  const again = await bulkDocs('bd_replicated', { new_edits: false, docs: [{ ...doc, v: 'ignored' }] });
  assert.equal(again.status, 201);
  assert.deepEqual(again.body, []);
  assert.equal((await info('bd_replicated')).update_seq, seq);
  assert.equal((await c.get('/bd_replicated/r')).body.v, 3);

  // A sibling branch becomes a conflict; a revision without _revisions is a new root.
  const branch = await bulkDocs('bd_replicated', {
    new_edits: false,
    docs: [
      { _id: 'r', _rev: `3-${h('d')}`, _revisions: { start: 3, ids: [h('d'), h('b'), h('a')] }, v: 'sibling' },
      { _id: 'other', _rev: `7-${h('e')}`, v: 'root' },
    ],
  });
  assert.deepEqual(branch.body, []);
  const conflicted = (await c.get('/bd_replicated/r?conflicts=true')).body;
  assert.equal(conflicted._rev, `3-${h('d')}`, 'the higher hash wins');
  assert.deepEqual(conflicted._conflicts, [`3-${h('c')}`]);
  const other = (await c.get('/bd_replicated/other?revs=true')).body;
  assert.equal(other._rev, `7-${h('e')}`);
  assert.deepEqual(other._revisions, { start: 7, ids: [h('e')] });

  // Replicating a newer revision on top of an existing one extends it.
  const next = await bulkDocs('bd_replicated', {
    new_edits: false,
    docs: [{ _id: 'other', _rev: `8-${h('f')}`, _revisions: { start: 8, ids: [h('f'), h('e')] }, v: 'next' }],
  });
  assert.deepEqual(next.body, []);
  const extended = (await c.get('/bd_replicated/other?conflicts=true')).body;
  assert.equal(extended._rev, `8-${h('f')}`);
  assert.equal(extended._conflicts, undefined);

  // `_revisions` names the revision when `_rev` disagrees (couch_doc takes the ancestry).
  const disagreeing = await bulkDocs('bd_replicated', {
    new_edits: false,
    docs: [
      { _id: 'pair', _rev: '2-y', _revisions: { start: 1, ids: ['y'] }, v: 'first' },
      { _id: 'pair', _rev: '2-x', _revisions: { start: 2, ids: ['x', 'y'] }, v: 'second' },
    ],
  });
  assert.deepEqual(disagreeing.body, []);
  const pair = (await c.get('/bd_replicated/pair?conflicts=true&revs=true')).body;
  assert.equal(pair._rev, '2-x');
  assert.equal(pair._conflicts, undefined);
  assert.deepEqual(pair._revisions, { start: 2, ids: ['x', 'y'] });
});

test('a `_rev` after `_revisions` goes unread in a replicated write (couch_doc:transfer_fields), but an interactive _bulk_docs parses it', async () => {
  await createDb('bd_rev_after');
  const ids = ['b'.repeat(32), 'a'.repeat(32)];
  const replicated = await bulkDocs('bd_rev_after', {
    new_edits: false,
    docs: [{ _id: 'r', _revisions: { start: 2, ids }, _rev: 'garbage', v: 1 }],
  });
  assert.equal(replicated.status, 201, replicated.text);
  assert.deepEqual(replicated.body, []);
  const r = (await c.get('/bd_rev_after/r?revs=true')).body;
  assert.equal(r._rev, `2-${ids[0]}`);
  assert.deepEqual(r._revisions, { start: 2, ids });
  // couch_httpd_db's interactive _bulk_docs reads `_rev` again with couch_doc:parse_rev.
  const interactive = await bulkDocs('bd_rev_after', { docs: [{ _id: 'i', _revisions: { start: 2, ids }, _rev: 'garbage' }] });
  assert.equal(interactive.status, 400, interactive.text);
  assert.deepEqual(interactive.body, { error: 'bad_request', reason: 'Invalid rev format' });
  // A PUT edits the revision `_revisions` names: here a document that does not exist, a conflict.
  const put = await c.put('/bd_rev_after/p', { _revisions: { start: 1, ids: ['c'.repeat(32)] }, _rev: 'garbage' });
  assert.equal(put.status, 409, put.text);
});

test('_bulk_docs rejects a body without a docs array with 400', async () => {
  await createDb('bd_invalid');
  const missing = await bulkDocs('bd_invalid', { doc: [{ foo: 'bar' }] });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { error: 'bad_request', reason: "Missing JSON list of 'docs'" });
  for (const body of [{ docs: 'x' }, { docs: { a: 1 } }, { docs: 5 }, [{ _id: 'a' }], 'docs']) {
    const r = await bulkDocs('bd_invalid', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'bad_request', JSON.stringify(body));
  }
  const notJson = await c.request('POST', '/bd_invalid/_bulk_docs', { raw: '{"docs": [', headers: { 'Content-Type': 'application/json' } });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error, 'bad_request');
  assert.equal((await info('bd_invalid')).update_seq, 0);
});

test('_bulk_docs rejects documents that are not objects, and bad ids or revs, writing nothing', async () => {
  await createDb('bd_invalid_docs');
  const bodies = [
    [{ _id: 'fine' }, 1],
    [{ _id: 'fine' }, 'string'],
    [null],
    [[{ _id: 'nested' }]],
    [{ _id: 'fine' }, { _id: '_notreserved' }],
    [{ _id: 'fine' }, { _id: 42 }],
    [{ _id: 'fine' }, { _id: 'bad-rev', _rev: 'garbage' }],
  ];
  for (const docs of bodies) {
    const r = await bulkDocs('bd_invalid_docs', { docs });
    assert.equal(r.status, 400, JSON.stringify(docs));
    assert.equal(r.body.error, 'bad_request', JSON.stringify(docs));
  }
  assert.equal((await c.get('/bd_invalid_docs/fine')).status, 404);
  assert.equal((await info('bd_invalid_docs')).update_seq, 0);
});

test('_bulk_docs needs Content-Type application/json: otherwise 415', async () => {
  await createDb('bd_ctype');
  const raw = JSON.stringify({ docs: [{ _id: 'a' }] });
  for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
    const r = await c.request('POST', '/bd_ctype/_bulk_docs', { raw, headers: { 'Content-Type': type } });
    assert.equal(r.status, 415, type);
    assert.equal(r.body.error, 'bad_content_type');
  }
  const none = await c.request('POST', '/bd_ctype/_bulk_docs', { raw });
  assert.equal(none.status, 415);
  const withCharset = await c.request('POST', '/bd_ctype/_bulk_docs', { raw, headers: { 'Content-Type': 'application/json; charset=utf-8' } });
  assert.equal(withCharset.status, 201);
  assert.equal((await c.get('/bd_ctype/a')).status, 200);
});

test('_bulk_docs writes _local documents outside the revision system', async () => {
  await createDb('bd_local');
  const r = await bulkDocs('bd_local', { docs: [{ _id: '_local/cp', seq: 1 }, { _id: 'normal' }] });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body[0], { ok: true, id: '_local/cp', rev: '0-1' });
  assert.equal((await c.get('/bd_local/_local/cp')).body.seq, 1);
  const all = await c.get('/bd_local/_all_docs');
  assert.deepEqual(all.body.rows.map((row: any) => row.id), ['normal']);
  assert.equal((await info('bd_local')).doc_count, 1);
});

// ------------------------------------------------------------------ _bulk_get

test('_bulk_get returns asked revisions and per-item errors in order', async () => {
  await createDb('bg_basic');
  const v1 = await save('bg_basic', [{ _id: 'a', v: 1 }, { _id: 'b', v: 'b' }]);
  const v2 = await save('bg_basic', [{ _id: 'a', _rev: v1['a'], v: 2 }]);
  const r = await c.post('/bg_basic/_bulk_get', {
    docs: [
      { id: 'a' },
      { id: 'a', rev: v1['a'] },
      { id: 'b', rev: v1['b'] },
      { id: 'a', rev: `9-${'0'.repeat(32)}` },
      { id: 'nope', rev: `1-${'1'.repeat(32)}` },
      { id: 'b', rev: 'garbage' },
    ],
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, {
    results: [
      { id: 'a', docs: [{ ok: { _id: 'a', _rev: v2['a'], v: 2 } }] },
      { id: 'a', docs: [{ ok: { _id: 'a', _rev: v1['a'], v: 1 } }] },
      { id: 'b', docs: [{ ok: { _id: 'b', _rev: v1['b'], v: 'b' } }] },
      { id: 'a', docs: [{ error: { id: 'a', rev: `9-${'0'.repeat(32)}`, error: 'not_found', reason: 'missing' } }] },
      { id: 'nope', docs: [{ error: { id: 'nope', rev: `1-${'1'.repeat(32)}`, error: 'not_found', reason: 'missing' } }] },
      { id: 'b', docs: [{ error: { id: 'b', rev: 'garbage', error: 'bad_request', reason: 'Invalid rev format' } }] },
    ],
  });
});

test('_bulk_get without rev returns every leaf: conflicts and deletions too', async () => {
  await createDb('bg_leaves');
  const h = (ch: string) => ch.repeat(32);
  const r0 = await bulkDocs('bg_leaves', {
    new_edits: false,
    docs: [
      { _id: 'c', _rev: `1-${h('a')}`, v: 'a' },
      { _id: 'c', _rev: `1-${h('b')}`, v: 'b' },
    ],
  });
  assert.deepEqual(r0.body, []);
  const revs = await save('bg_leaves', [{ _id: 'd', v: 1 }]);
  const del = await c.del(`/bg_leaves/d?rev=${revs['d']}`);
  const r = await c.post('/bg_leaves/_bulk_get', { docs: [{ id: 'c' }, { id: 'd' }, { id: 'missing' }] });
  assert.equal(r.status, 200);
  const [conflicted, deleted, missing] = r.body.results;
  assert.equal(conflicted.id, 'c');
  assert.deepEqual(conflicted.docs.map((d: any) => d.ok._rev).sort(), [`1-${h('a')}`, `1-${h('b')}`]);
  assert.deepEqual(deleted, { id: 'd', docs: [{ ok: { _id: 'd', _rev: del.body.rev, _deleted: true } }] });
  assert.deepEqual(missing, { id: 'missing', docs: [{ error: { id: 'missing', rev: 'undefined', error: 'not_found', reason: 'missing' } }] });
});

test('_bulk_get revs=true adds _revisions', async () => {
  await createDb('bg_revs');
  const v1 = await save('bg_revs', [{ _id: 'a' }]);
  const v2 = await save('bg_revs', [{ _id: 'a', _rev: v1['a'] }]);
  const r = await c.post('/bg_revs/_bulk_get?revs=true', { docs: [{ id: 'a' }, { id: 'a', rev: v1['a'] }] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results[0].docs[0].ok._revisions, { start: 2, ids: [hashOf(v2['a']!), hashOf(v1['a']!)] });
  assert.deepEqual(r.body.results[1].docs[0].ok._revisions, { start: 1, ids: [hashOf(v1['a']!)] });
  const plain = await c.post('/bg_revs/_bulk_get', { docs: [{ id: 'a' }] });
  assert.equal(plain.body.results[0].docs[0].ok._revisions, undefined);
});

test('_bulk_get: items without an id, or with an invalid one, are errors in place', async () => {
  await createDb('bg_ids');
  await save('bg_ids', [{ _id: 'a' }]);
  const r = await c.post('/bg_ids/_bulk_get', { docs: [{ rev: '1-abc' }, { id: '_bad' }, { id: 'a' }] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results[0], {
    id: null, docs: [{ error: { id: null, rev: null, error: 'bad_request', reason: 'document id missed' } }],
  });
  assert.equal(r.body.results[1].id, '_bad');
  assert.equal(r.body.results[1].docs[0].error.error, 'bad_request');
  assert.equal(r.body.results[2].docs[0].ok._id, 'a');
});

test('_bulk_get: items that are no object, or an empty one, are errors in place (chttpd_db bulk_get_parse_arg)', async () => {
  await createDb('bg_items');
  await save('bg_items', [{ _id: 'a' }]);
  const r = await c.post('/bg_items/_bulk_get', { docs: ['a', 1, null, [], {}, { id: 'a' }] });
  assert.equal(r.status, 200, r.text);
  const notObject = { id: null, docs: [{ error: { id: null, rev: null, error: 'bad_request', reason: 'document must be a JSON object' } }] };
  assert.deepEqual(r.body.results.slice(0, 5), [notObject, notObject, notObject, notObject, notObject]);
  assert.equal(r.body.results[5].docs[0].ok._id, 'a');
});

test('_bulk_get: an atts_since that is no list of revisions is an error in place, naming the offending value (CouchDB 2)', async () => {
  await createDb('bg_atts_since');
  const v1 = await save('bg_atts_since', [{ _id: 'a', _attachments: { 'x.txt': { content_type: 'text/plain', data: Buffer.from('x').toString('base64') } } }]);
  const rev = v1['a']!;
  const r = await c.post('/bg_atts_since/_bulk_get', {
    docs: [
      { id: 'a', atts_since: [rev, 1] },
      { id: 'a', atts_since: [null] },
      { id: 'a', atts_since: ['abc'] },
      { id: 'a', atts_since: rev },
      { id: 'a', atts_since: null },
      { id: 'a', rev: 'garbage', atts_since: [1] },
      { id: 'a', atts_since: [] },
      { id: 'a', atts_since: [rev] },
    ],
  });
  assert.equal(r.status, 200, r.text);
  const error = (bad: unknown, reason: string) => ({ id: 'a', docs: [{ error: { id: 'a', rev: bad, error: 'bad_request', reason } }] });
  // chttpd_db:parse_field: each entry is parsed as a rev; a value that is no list fails whole.
  assert.deepEqual(r.body.results.slice(0, 6), [
    error(1, 'Invalid rev format'),
    error(null, 'Invalid rev format'),
    error('abc', 'Invalid rev format'),
    error(rev, 'att_since value must be array of revs.'),
    error(null, 'att_since value must be array of revs.'),
    // The rev is read first.
    error('garbage', 'Invalid rev format'),
  ]);
  // An empty list asks for nothing; a list of revisions leaves what they hold as stubs.
  assert.equal(r.body.results[6].docs[0].ok._rev, rev);
  assert.equal(r.body.results[7].docs[0].ok._attachments['x.txt'].stub, true);
});

test('_bulk_get body errors: no docs is 400, a non-JSON content type 415', async () => {
  await createDb('bg_errors');
  const missing = await c.post('/bg_errors/_bulk_get', {});
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body, { error: 'bad_request', reason: "Missing JSON list of 'docs'." });
  const notArray = await c.post('/bg_errors/_bulk_get', { docs: 'a' });
  assert.equal(notArray.status, 400);
  const ctype = await c.request('POST', '/bg_errors/_bulk_get', { raw: '{"docs":[]}', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(ctype.status, 415);
  assert.equal(ctype.body.error, 'bad_content_type');
  const empty = await c.post('/bg_errors/_bulk_get', { docs: [] });
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, { results: [] });
});

test('_bulk_get refuses the query parameters only an item may give (chttpd_db validate_query_param)', async () => {
  await createDb('bg_query');
  for (const name of ['rev', 'open_revs', 'atts_since', 'new_edits', 'w']) {
    const r = await c.post(`/bg_query/_bulk_get?revs=true&${name}=x`, { docs: [] });
    assert.equal(r.status, 400, name);
    assert.deepEqual(r.body, { error: 'bad_request', reason: `"${name}" query parameter is not acceptable` });
  }
  // The first of them in the query is named; the body's docs are checked before the query.
  const first = await c.post('/bg_query/_bulk_get?w=1&rev=x', { docs: [] });
  assert.equal(first.body.reason, '"w" query parameter is not acceptable');
  const noDocs = await c.post('/bg_query/_bulk_get?rev=x', {});
  assert.equal(noDocs.body.reason, "Missing JSON list of 'docs'.");
});

// ------------------------------------------------------------------ _revs_diff and _missing_revs

test('_revs_diff lists missing revisions with possible ancestors; complete documents are omitted', async () => {
  await createDb('rd_basic');
  const v1 = await save('rd_basic', [{ _id: 'a' }, { _id: 'full' }]);
  const v2 = await save('rd_basic', [{ _id: 'a', _rev: v1['a'] }]);
  const newer = `3-${'f'.repeat(32)}`;
  const unrelated = `1-${'e'.repeat(32)}`;
  const r = await c.post('/rd_basic/_revs_diff', {
    a: [v1['a'], v2['a'], newer],
    full: [v1['full']],
    ghost: [unrelated, `2-${'d'.repeat(32)}`],
  });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    a: { missing: [newer], possible_ancestors: [v2['a']] },
    ghost: { missing: [unrelated, `2-${'d'.repeat(32)}`] },
  });
  // A leaf at the same or a higher position is no possible ancestor; a revision below the
  // tree's second level comes first (couch_key_tree:find_missing's order).
  const sameDepth = await c.post('/rd_basic/_revs_diff', { a: [`2-${'0'.repeat(32)}`, unrelated] });
  assert.deepEqual(sameDepth.body, { a: { missing: [unrelated, `2-${'0'.repeat(32)}`] } });
  assert.deepEqual((await c.post('/rd_basic/_revs_diff', {})).body, {});
});

test('_missing_revs answers {missing_revs: {id: [revs]}} (and the documented missed_revs)', async () => {
  await createDb('mr_basic');
  const v1 = await save('mr_basic', [{ _id: 'a' }]);
  const newer = `2-${'f'.repeat(32)}`;
  const r = await c.post('/mr_basic/_missing_revs', { a: [v1['a'], newer], b: [`1-${'b'.repeat(32)}`] });
  assert.equal(r.status, 200);
  const expected = { a: [newer], b: [`1-${'b'.repeat(32)}`] };
  assert.deepEqual(r.body, { missing_revs: expected, missed_revs: expected });
});

test('_revs_diff, _missing_revs and _purge reject bodies that are not {id: [valid revs]}', async () => {
  await createDb('rd_invalid');
  for (const path of ['_revs_diff', '_missing_revs', '_purge']) {
    for (const body of [['1-abc'], { a: '1-abc' }, { a: [1] }, { a: ['not-a-rev'] }]) {
      const r = await c.post(`/rd_invalid/${path}`, body);
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(r.body.error, 'bad_request');
    }
  }
});

// ------------------------------------------------------------------ _purge

test('_purge removes documents entirely and increments purge_seq and update_seq', async () => {
  await createDb('pg_basic');
  const revs = await save('pg_basic', [1, 2, 3, 4].map((i) => ({ _id: String(i), integer: i })));
  const before = await info('pg_basic');
  const r = await c.post('/pg_basic/_purge', { 1: [revs['1']], 2: [revs['2']] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { purge_seq: before.purge_seq + 1, purged: { 1: [revs['1']], 2: [revs['2']] } });

  const after = await info('pg_basic');
  assert.equal(after.purge_seq, before.purge_seq + 1);
  assert.equal(after.doc_count, before.doc_count - 2);
  assert.equal(after.doc_del_count, 0);
  assert.equal(after.update_seq, before.update_seq + 1, 'purging increments the update sequence (purge.js)');

  assert.equal((await c.get('/pg_basic/1')).status, 404);
  assert.equal((await c.get(`/pg_basic/1?rev=${revs['1']}`)).status, 404);
  const all = await c.get('/pg_basic/_all_docs');
  assert.deepEqual(all.body.rows.map((row: any) => row.id), ['3', '4']);
  assert.equal(all.body.total_rows, 2);
  const changes = await c.get('/pg_basic/_changes');
  assert.deepEqual(changes.body.results.map((row: any) => row.id).sort(), ['3', '4']);
  const diff = await c.post('/pg_basic/_revs_diff', { 1: [revs['1']] });
  assert.deepEqual(diff.body, { 1: { missing: [revs['1']] } }, 'a purged revision is unknown again');

  // Purging twice in a row: each request counts once.
  const third = await c.post('/pg_basic/_purge', { 3: [revs['3']] });
  const fourth = await c.post('/pg_basic/_purge', { 4: [revs['4']] });
  assert.equal(third.body.purge_seq, before.purge_seq + 2);
  assert.equal(fourth.body.purge_seq, before.purge_seq + 3);
  assert.equal((await info('pg_basic')).purge_seq, fourth.body.purge_seq);
  assert.equal((await info('pg_basic')).doc_count, 0);
});

test('_purge of one conflicting leaf keeps the document with its other branch', async () => {
  await createDb('pg_branch');
  const h = (ch: string) => ch.repeat(32);
  await bulkDocs('pg_branch', { new_edits: false, docs: [{ _id: 'c', _rev: `1-${h('a')}`, v: 'a' }, { _id: 'c', _rev: `1-${h('b')}`, v: 'b' }] });
  assert.equal((await c.get('/pg_branch/c')).body._rev, `1-${h('b')}`);
  const r = await c.post('/pg_branch/_purge', { c: [`1-${h('b')}`] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.purged, { c: [`1-${h('b')}`] });
  const doc = (await c.get('/pg_branch/c?conflicts=true')).body;
  assert.equal(doc._rev, `1-${h('a')}`);
  assert.equal(doc._conflicts, undefined);
  assert.equal((await info('pg_branch')).doc_count, 1);
  const all = await c.get('/pg_branch/_all_docs');
  assert.deepEqual(all.body.rows.map((row: any) => [row.id, row.value.rev]), [['c', `1-${h('a')}`]]);
});

test('_purge ignores unknown documents and revisions that are not leaves', async () => {
  await createDb('pg_noop');
  const v1 = await save('pg_noop', [{ _id: 'a' }]);
  const v2 = await save('pg_noop', [{ _id: 'a', _rev: v1['a'] }]);
  const r = await c.post('/pg_noop/_purge', { a: [v1['a']], nobody: [`1-${'0'.repeat(32)}`] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.purged, {});
  assert.equal((await c.get('/pg_noop/a')).body._rev, v2['a']);
  assert.equal((await info('pg_noop')).doc_count, 1);
});

test('_purge needs a JSON content type and a {id: [revs]} body', async () => {
  await createDb('pg_invalid');
  const ctype = await c.request('POST', '/pg_invalid/_purge', { raw: '{}', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(ctype.status, 415);
  assert.equal(ctype.body.error, 'bad_content_type');
  for (const body of [[], { a: 'x' }, { a: [1] }]) {
    const r = await c.post('/pg_invalid/_purge', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'bad_request');
  }
});

// ------------------------------------------------------------------ _revs_limit

test('_revs_limit: GET the default, PUT a new positive integer', async () => {
  await createDb('rl_basic');
  const initial = await c.get('/rl_basic/_revs_limit');
  assert.equal(initial.status, 200);
  assert.equal(initial.text.trim(), '1000');
  const put = await c.put('/rl_basic/_revs_limit', 5);
  assert.equal(put.status, 200);
  assert.deepEqual(put.body, { ok: true });
  assert.equal((await c.get('/rl_basic/_revs_limit')).body, 5);
});

test('_revs_limit rejects anything but a positive integer', async () => {
  await createDb('rl_invalid');
  assert.equal((await c.put('/rl_invalid/_revs_limit', 7)).status, 200);
  const bodies = ['"5"', '1.5', '1.0', '1e3', '{}', '[3]', 'null', 'true', 'abc', ''];
  for (const raw of bodies) {
    const r = await c.request('PUT', '/rl_invalid/_revs_limit', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `body ${JSON.stringify(raw)}: ${r.text}`);
    assert.equal(r.body.error, 'bad_request');
  }
  // An integer below 1 passes couch_httpd_db's check and is refused by couch_db:set_revs_limit.
  for (const raw of ['0', '-1']) {
    const r = await c.request('PUT', '/rl_invalid/_revs_limit', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 500, `body ${raw}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'unknown_error', reason: 'invalid_revs_limit' });
  }
  assert.equal((await c.get('/rl_invalid/_revs_limit')).body, 7);
});

test('_revs_limit stems the revision history of later edits', async () => {
  await createDb('rl_stem');
  assert.equal((await c.put('/rl_stem/_revs_limit', 3)).status, 200);
  let rev = (await save('rl_stem', [{ _id: 'd', n: 0 }]))['d']!;
  for (let n = 1; n < 6; n++) rev = (await save('rl_stem', [{ _id: 'd', _rev: rev, n }]))['d']!;
  const doc = (await c.get('/rl_stem/d?revs=true')).body;
  assert.equal(doc._rev, rev);
  assert.equal(doc._revisions.start, 6);
  assert.equal(doc._revisions.ids.length, 3);
});

// ------------------------------------------------------------------ _ensure_full_commit

test('_ensure_full_commit answers 201 with the instance start time', async () => {
  await createDb('efc_basic');
  await save('efc_basic', [{ _id: 'a' }]);
  const r = await c.post('/efc_basic/_ensure_full_commit', {});
  assert.equal(r.status, 201);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.instance_start_time, (await info('efc_basic')).instance_start_time);
  assert.match(r.body.instance_start_time, /^\d+$/);
  const noBody = await c.request('POST', '/efc_basic/_ensure_full_commit', { headers: { 'Content-Type': 'application/json' } });
  assert.equal(noBody.status, 201);
});

test('_ensure_full_commit needs a JSON content type (415 otherwise)', async () => {
  await createDb('efc_ctype');
  const r = await c.request('POST', '/efc_ctype/_ensure_full_commit', { raw: '', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(r.status, 415);
  assert.equal(r.body.error, 'bad_content_type');
});

test('_ensure_full_commit?seq beyond update_seq is 400', async () => {
  await createDb('efc_seq');
  await save('efc_seq', [{ _id: 'a' }]);
  const ok = await c.post('/efc_seq/_ensure_full_commit?seq=1', {});
  assert.equal(ok.status, 201);
  const ahead = await c.post('/efc_seq/_ensure_full_commit?seq=99', {});
  assert.equal(ahead.status, 400);
  assert.equal(ahead.body.error, 'bad_request');
});

// ------------------------------------------------------------------ _compact

async function waitForCompaction(db: string) {
  for (let i = 0; i < 500; i++) {
    const i2 = await info(db);
    if (!i2.compact_running) return i2;
    await sleep(20);
  }
  assert.fail('compaction did not finish');
}

test('_compact needs a JSON content type: 415 otherwise', async () => {
  await createDb('cp_ctype');
  for (const headers of [{ 'Content-Type': 'text/plain' }, {} as Record<string, string>]) {
    const r = await c.request('POST', '/cp_ctype/_compact', { headers });
    assert.equal(r.status, 415, JSON.stringify(headers));
    assert.equal(r.body.error, 'bad_content_type');
  }
});

test('_compact drops old revision bodies and keeps current data readable', async () => {
  await createDb('cp_basic');
  const docs = Array.from({ length: 20 }, (_, i) => ({ _id: `d${i}`, n: i, blob: 'x'.repeat(2000) }));
  const v1 = await save('cp_basic', docs);
  const v2 = await save('cp_basic', docs.map((d) => ({ ...d, _rev: v1[d._id], blob: 'y'.repeat(2000), v: 2 })));
  const v3 = await save('cp_basic', docs.map((d) => ({ ...d, _rev: v2[d._id], blob: 'z'.repeat(2000), v: 3 })));
  const gone = await save('cp_basic', [{ _id: 'gone' }]);
  const del = await c.del(`/cp_basic/gone?rev=${gone['gone']}`);
  assert.equal(del.status, 200);
  assert.equal((await c.get(`/cp_basic/d0?rev=${v1['d0']}`)).status, 200, 'old revision readable before compaction');
  const ensure = await c.post('/cp_basic/_ensure_full_commit', {});
  assert.equal(ensure.status, 201);
  const beforeInfo = await info('cp_basic');

  const r = await c.post('/cp_basic/_compact', {});
  assert.equal(r.status, 202);
  assert.deepEqual(r.body, { ok: true });
  const afterInfo = await waitForCompaction('cp_basic');

  assert.equal(typeof afterInfo.disk_size, 'number');
  assert.ok(afterInfo.disk_size > 0);
  assert.equal(typeof afterInfo.data_size, 'number');
  assert.equal(afterInfo.doc_count, 20);
  assert.equal(afterInfo.doc_del_count, 1);
  assert.equal(afterInfo.update_seq, beforeInfo.update_seq);

  for (const old of [v1['d0'], v2['d0']]) {
    const r2 = await c.get(`/cp_basic/d0?rev=${old}`);
    assert.equal(r2.status, 404, `revision ${old} is gone`);
    assert.equal(r2.body.error, 'not_found');
  }
  const current = await c.get('/cp_basic/d0?revs_info=true');
  assert.equal(current.status, 200);
  assert.equal(current.body._rev, v3['d0']);
  assert.equal(current.body.blob, 'z'.repeat(2000));
  assert.deepEqual(current.body._revs_info, [
    { rev: v3['d0'], status: 'available' },
    { rev: v2['d0'], status: 'missing' },
    { rev: v1['d0'], status: 'missing' },
  ]);
  const byRev = await c.get(`/cp_basic/d19?rev=${v3['d19']}`);
  assert.equal(byRev.body.v, 3);
  assert.equal((await c.get(`/cp_basic/gone?rev=${del.body.rev}`)).body._deleted, true, 'a tombstone is a leaf and stays');

  const all = await c.get('/cp_basic/_all_docs?include_docs=true');
  assert.equal(all.body.total_rows, 20);
  assert.ok(all.body.rows.every((row: any) => row.doc.v === 3));

  // The database keeps working: updates after compaction get the next revision.
  const v4 = await save('cp_basic', [{ _id: 'd0', _rev: v3['d0'], v: 4 }]);
  assert.match(v4['d0']!, /^4-/);
});

test('every endpoint answers 404 not_found for a missing database', async () => {
  const requests: [string, string, unknown][] = [
    ['POST', '/nodb_bulk/_bulk_docs', { docs: [{ _id: 'a' }] }],
    ['POST', '/nodb_bulk/_bulk_get', { docs: [] }],
    ['POST', '/nodb_bulk/_revs_diff', {}],
    ['POST', '/nodb_bulk/_missing_revs', {}],
    ['POST', '/nodb_bulk/_purge', {}],
    ['GET', '/nodb_bulk/_revs_limit', undefined],
    ['PUT', '/nodb_bulk/_revs_limit', 5],
    ['POST', '/nodb_bulk/_ensure_full_commit', {}],
    ['POST', '/nodb_bulk/_compact', {}],
  ];
  for (const [method, path, body] of requests) {
    const r = await c.request(method, path, body === undefined ? {} : { body });
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'no_db_file' }, `${method} ${path}`);
  }
});
