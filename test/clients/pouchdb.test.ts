/**
 * PouchDB 9 against a real Settee process: its HTTP adapter as a client, and replication
 * between a local PouchDB (leveldb in a temporary directory; pouchdb-adapter-memory is not
 * installed) and Settee. Remote traffic goes through a logging proxy so a failure shows the
 * exact requests PouchDB sent.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { client } from '../helpers/http.js';
import { type LoggingProxy } from './proxy.js';
import { PouchFixture, failure } from './pouch-fixture.js';

let fx: PouchFixture;
let proxy: LoggingProxy;
let raw: ReturnType<typeof client>;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-');
  ({ proxy, raw } = fx);
});
after(async () => fx.close());




/** The exchanges with a path containing `fragment`, for assertion messages. */
const wire = (fragment: string) => proxy.show(fragment);

/** Both sides' view of one document: winning rev, body, conflicts and all leaves. */
async function docState(db: any, id: string) {
  const doc = await db.get(id, { conflicts: true, revs: true });
  const leaves = await db.get(id, { open_revs: 'all' });
  return {
    doc,
    leaves: leaves.map((l: any) => (l.ok ? l.ok._rev + (l.ok._deleted ? ' deleted' : '') : `missing ${l.missing}`)).sort(),
  };
}

/** `_all_docs` rows (id and winning rev) of a database. */
async function rows(db: any) {
  const res = await db.allDocs();
  return res.rows.map((r: any) => [r.id, r.value.rev]);
}

test('info() of a remote database', async () => {
  const db = await fx.remote('pouch-info');
  await db.put({ _id: 'x' });
  const info = await db.info();
  assert.equal(info.db_name, 'pouch-info');
  assert.equal(info.doc_count, 1);
  assert.equal(info.update_seq, 1);
  assert.equal(info.adapter, 'http');
  assert.equal(info.host, `${proxy.url}pouch-info/`);
});

test('compact() and destroy() of a remote database', async () => {
  const db = await fx.remote('pouch-compact-destroy');
  const a = await db.put({ _id: 'a', v: 1 });
  await db.put({ _id: 'a', _rev: a.rev, v: 2 });
  const compacted = await db.compact();
  assert.equal(compacted.ok, true, wire('/pouch-compact-destroy/_compact'));
  assert.equal((await db.get('a')).v, 2);
  const destroyed = await db.destroy();
  assert.equal(destroyed.ok, true);
  const gone = await raw.get('/pouch-compact-destroy');
  assert.equal(gone.status, 404);
  assert.ok(!(await raw.get('/_all_dbs')).body.includes('pouch-compact-destroy'));
});

test('put / get / remove and their errors', async () => {
  const db = await fx.remote('pouch-crud');
  const put = await db.put({ _id: 'p1', n: 1 });
  assert.equal(put.ok, true);
  assert.equal(put.id, 'p1');
  assert.match(put.rev, /^1-[0-9a-f]{32}$/);

  const doc = await db.get('p1');
  assert.deepEqual(doc, { _id: 'p1', _rev: put.rev, n: 1 });

  const put2 = await db.put({ ...doc, n: 2 });
  assert.match(put2.rev, /^2-/);

  const conflict = await failure(db.put({ _id: 'p1', _rev: put.rev, n: 3 }));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.name, 'conflict');
  assert.equal(conflict.message, 'Document update conflict.');

  const revsInfo = await db.get('p1', { revs_info: true });
  assert.deepEqual(revsInfo._revs_info.map((r: any) => r.rev), [put2.rev, put.rev]);
  const old = await db.get('p1', { rev: put.rev });
  assert.equal(old.n, 1);

  const missing = await failure(db.get('nope'));
  assert.equal(missing.status, 404);
  assert.equal(missing.name, 'not_found');
  assert.equal(missing.message, 'missing');

  const removed = await db.remove('p1', put2.rev);
  assert.equal(removed.ok, true);
  assert.match(removed.rev, /^3-/);
  const deleted = await failure(db.get('p1'));
  assert.equal(deleted.status, 404);
  assert.equal(deleted.message, 'deleted');

  // post() makes an id; ids needing encoding and design/local docs round-trip.
  const posted = await db.post({ n: 4 });
  assert.match(posted.id, /^[0-9a-f]{32}$/);
  for (const id of ['a/b c', 'é+%?#', '_design/pouch', '_local/pouch']) {
    const r = await db.put({ _id: id, n: 5 });
    assert.equal(r.id, id, wire('/pouch-crud/'));
    const back = await db.get(id);
    assert.equal(back._id, id);
    assert.equal(back.n, 5);
  }
});

test('allDocs with its options', async () => {
  const db = await fx.remote('pouch-alldocs');
  const res = await db.bulkDocs(['a', 'b', 'c', 'd', 'e'].map((id, i) => ({ _id: id, i })));
  const rev = Object.fromEntries(res.map((r: any) => [r.id, r.rev]));
  const eDeleted = await db.remove('e', rev.e);

  const all = await db.allDocs();
  assert.equal(all.total_rows, 4);
  assert.deepEqual(all.rows.map((r: any) => r.id), ['a', 'b', 'c', 'd']);

  const docs = await db.allDocs({ include_docs: true, limit: 2, skip: 1 });
  assert.deepEqual(docs.rows.map((r: any) => r.doc), [{ _id: 'b', _rev: rev.b, i: 1 }, { _id: 'c', _rev: rev.c, i: 2 }]);
  assert.equal(docs.offset, 1);

  const range = await db.allDocs({ startkey: 'b', endkey: 'c' });
  assert.deepEqual(range.rows.map((r: any) => r.id), ['b', 'c']);
  const exclusive = await db.allDocs({ startkey: 'b', endkey: 'd', inclusive_end: false });
  assert.deepEqual(exclusive.rows.map((r: any) => r.id), ['b', 'c']);
  const desc = await db.allDocs({ descending: true, startkey: 'c' });
  assert.deepEqual(desc.rows.map((r: any) => r.id), ['c', 'b', 'a']);
  const key = await db.allDocs({ key: 'd' });
  assert.deepEqual(key.rows.map((r: any) => r.id), ['d']);

  // keys: PouchDB POSTs them; missing and deleted keys come back as CouchDB shapes them.
  const keyed = await db.allDocs({ keys: ['d', 'zz', 'e', 'a'], include_docs: true });
  assert.equal(keyed.rows.length, 4, wire('/pouch-alldocs/_all_docs'));
  assert.equal(keyed.rows[0].id, 'd');
  assert.deepEqual(keyed.rows[1], { key: 'zz', error: 'not_found' });
  assert.deepEqual(keyed.rows[2].value, { rev: eDeleted.rev, deleted: true });
  assert.equal(keyed.rows[2].doc, null);
  assert.equal(keyed.rows[3].doc.i, 0);

  // conflicts show in included docs with conflicts: true.
  await db.bulkDocs([{ _id: 'k', _rev: '1-aaaa', v: 'a' }, { _id: 'k', _rev: '1-bbbb', v: 'b' }], { new_edits: false });
  const withConflicts = await db.allDocs({ key: 'k', include_docs: true, conflicts: true });
  assert.equal(withConflicts.rows[0].doc._rev, '1-bbbb');
  assert.deepEqual(withConflicts.rows[0].doc._conflicts, ['1-aaaa'], wire('/pouch-alldocs/_all_docs'));
});

test('bulkDocs: creates, updates, deletes, per-document conflicts, new_edits=false', async () => {
  const db = await fx.remote('pouch-bulk');
  const first = await db.bulkDocs([{ _id: 'x', v: 1 }, { _id: 'y', v: 1 }, { v: 'auto' }]);
  assert.equal(first.length, 3);
  assert.ok(first.every((r: any) => r.ok === true));

  const second = await db.bulkDocs([
    { _id: 'x', _rev: first[0].rev, v: 2 },
    { _id: 'y', _rev: first[1].rev, _deleted: true },
    { _id: 'x', v: 'no rev' },
    { _id: 'x', _rev: first[0].rev, v: 'stale' },
  ]);
  assert.equal(second[0].ok, true);
  assert.equal(second[1].ok, true);
  // PouchDB turns CouchDB's {id, error: "conflict", reason} entries into error objects.
  for (const r of [second[2], second[3]]) {
    assert.equal(r.id, 'x');
    assert.equal(r.error, 'conflict');
    assert.equal(r.status, 409);
    assert.equal(r.name, 'conflict');
  }
  assert.equal((await db.get('x')).v, 2);
  assert.equal((await failure(db.get('y'))).status, 404);

  // Replication-style writes: a tree with two branches, a conflict.
  const nw = await db.bulkDocs([
    { _id: 'z', _rev: '2-bbb', v: 'left', _revisions: { start: 2, ids: ['bbb', 'aaa'] } },
    { _id: 'z', _rev: '2-ccc', v: 'right', _revisions: { start: 2, ids: ['ccc', 'aaa'] } },
  ], { new_edits: false });
  assert.deepEqual(nw, []);
  const z = await docState(db, 'z');
  assert.equal(z.doc._rev, '2-ccc');
  assert.deepEqual(z.doc._conflicts, ['2-bbb']);
  assert.deepEqual(z.doc._revisions, { start: 2, ids: ['ccc', 'aaa'] });
  assert.deepEqual(z.leaves, ['2-bbb', '2-ccc'], wire('/pouch-bulk/z'));

  // open_revs with a list, including a revision that does not exist.
  const some = await db.get('z', { open_revs: ['2-bbb', '3-nope'] });
  assert.equal(some.length, 2, wire('/pouch-bulk/z'));
  assert.deepEqual(some[0], { ok: { _id: 'z', _rev: '2-bbb', v: 'left' } });
  assert.equal(some[1].missing, '3-nope'); // PouchDB wraps it in an error object

  // bulkGet, PouchDB's direct use of _bulk_get.
  const bg = await db.bulkGet({ docs: [{ id: 'x' }, { id: 'z', rev: '2-bbb' }, { id: 'nope' }], revs: true });
  assert.equal(bg.results.length, 3, wire('_bulk_get'));
  assert.equal(bg.results[0].id, 'x');
  assert.equal(bg.results[0].docs[0].ok.v, 2);
  assert.match(bg.results[0].docs[0].ok._rev, /^2-/);
  assert.equal(bg.results[0].docs[0].ok._revisions.start, 2);
  assert.deepEqual(bg.results[1].docs, [{ ok: { _id: 'z', _rev: '2-bbb', v: 'left', _revisions: { start: 2, ids: ['bbb', 'aaa'] } } }]);
  assert.equal(bg.results[2].id, 'nope');
  assert.equal(bg.results[2].docs[0].error.error, 'not_found', JSON.stringify(bg.results[2]));
  assert.equal(bg.results[2].docs[0].error.id, 'nope');

  // Resolving the conflict by deleting the loser.
  await db.remove('z', '2-ccc');
  const after = await db.get('z', { conflicts: true });
  assert.equal(after._rev, '2-bbb');
  assert.equal(after._conflicts, undefined);
});

test('changes: since, include_docs, limit, doc_ids, style all_docs', async () => {
  const db = await fx.remote('pouch-changes');
  const a = await db.put({ _id: 'a', v: 1 });
  await db.put({ _id: 'b', v: 1 });
  await db.put({ _id: 'a', _rev: a.rev, v: 2 });
  const c = await db.put({ _id: 'c' });
  await db.remove('c', c.rev);

  const all = await db.changes();
  assert.deepEqual(all.results.map((r: any) => [r.seq, r.id]), [[2, 'b'], [3, 'a'], [5, 'c']]);
  assert.equal(all.last_seq, 5);
  assert.equal(all.results[2].deleted, true);

  const since = await db.changes({ since: 2, include_docs: true });
  assert.deepEqual(since.results.map((r: any) => r.id), ['a', 'c']);
  assert.equal(since.results[0].doc.v, 2);
  assert.equal(since.results[1].doc._deleted, true);

  const limited = await db.changes({ limit: 2 });
  assert.deepEqual(limited.results.map((r: any) => r.id), ['b', 'a']);

  const ids = await db.changes({ doc_ids: ['c', 'b'] });
  assert.deepEqual(ids.results.map((r: any) => r.id), ['b', 'c'], wire('/pouch-changes/_changes'));

  await db.bulkDocs([{ _id: 'k', _rev: '1-aaaa' }, { _id: 'k', _rev: '1-bbbb' }], { new_edits: false });
  const styled = await db.changes({ style: 'all_docs', since: 5 });
  assert.equal(styled.results.length, 1);
  assert.deepEqual(styled.results[0].changes.map((c: any) => c.rev).sort(), ['1-aaaa', '1-bbbb']);
  const main = await db.changes({ since: 5 });
  assert.deepEqual(main.results[0].changes, [{ rev: '1-bbbb' }]);
});

test('live changes: a write made with raw HTTP reaches a live PouchDB listener', { timeout: 30000 }, async () => {
  const db = await fx.remote('pouch-live');
  await db.put({ _id: 'before' });
  // Start after the current sequence (not since=now, which would race with the write below).
  const since = (await db.info()).update_seq;
  const seen: string[] = [];
  let feed: any;
  const arrived = new Promise<any>((resolve, reject) => {
    feed = db.changes({ live: true, since, include_docs: true });
    feed.on('change', (c: any) => {
      seen.push(c.id);
      if (c.id === 'raw-write') resolve(c);
    });
    feed.on('error', reject);
  });
  // Once PouchDB is in its longpoll loop, write behind its back.
  await waitFor(() => proxy.log.some((e) => e.path.startsWith('/pouch-live/_changes') && e.path.includes('feed=longpoll')));
  const w = await raw.put('/pouch-live/raw-write', { via: 'http' });
  assert.equal(w.status, 201);
  const change = await arrived;
  assert.equal(change.doc.via, 'http');
  assert.deepEqual(change.changes, [{ rev: w.body.rev }]);
  assert.deepEqual(seen, ['raw-write'], 'changes up to `since` are skipped');
  const completed = new Promise((r) => feed.on('complete', r));
  feed.cancel();
  await completed;
});

test('revsDiff', async () => {
  const db = await fx.remote('pouch-revsdiff');
  const a = await db.put({ _id: 'a' });
  const diff = await db.revsDiff({ a: [a.rev, '2-ffff'], zz: ['1-abcd'] });
  assert.deepEqual(diff, {
    a: { missing: ['2-ffff'], possible_ancestors: [a.rev] },
    zz: { missing: ['1-abcd'] },
  });
  assert.deepEqual(await db.revsDiff({ a: [a.rev] }), {});
});

test('one-shot replication both ways: docs, updates, deletions and conflicts end identical', { timeout: 60000 }, async () => {
  const rdb = await fx.remote('pouch-repl');
  const ldb = fx.local('repl-local');

  // Documents on both sides.
  // 230 on Settee: more than PouchDB's batch of 100, so _changes is read in pages.
  await rdb.bulkDocs(Array.from({ length: 230 }, (_, i) => ({ _id: `r${String(i).padStart(3, '0')}`, side: 'remote', i })));
  await ldb.bulkDocs(Array.from({ length: 30 }, (_, i) => ({ _id: `l${String(i).padStart(2, '0')}`, side: 'local', i })));
  await rdb.put({ _id: 'shared', v: 0 });
  await rdb.put({ _id: 'doomed', v: 0 });

  const s1 = await ldb.sync(rdb);
  assert.equal(s1.push.ok, true);
  assert.equal(s1.pull.ok, true);
  assert.equal(s1.push.docs_written, 30);
  assert.equal(s1.pull.docs_written, 232);
  assert.deepEqual(await rows(ldb), await rows(rdb));
  assert.equal((await rows(rdb)).length, 262);
  // PouchDB used _bulk_get (no per-document open_revs fallback).
  assert.ok(proxy.log.some((e) => e.path.startsWith('/pouch-repl/_bulk_get') && e.status === 200), wire('/pouch-repl/_bulk_get'));
  assert.ok(!proxy.log.some((e) => e.path.startsWith('/pouch-repl/') && e.path.includes('open_revs=')), wire('open_revs='));

  // Updates and deletions on each side.
  // r005 gets a longer history on Settee.
  for (let k = 0; k < 12; k++) {
    const cur = await rdb.get('r005');
    await rdb.put({ ...cur, updated: 'remote', k });
  }
  const l07 = await ldb.get('l07');
  await ldb.put({ ...l07, updated: 'local' });
  await ldb.remove(await ldb.get('r010'));
  await rdb.remove(await rdb.get('l11'));

  // A conflict created on both sides: the same document edited differently.
  const sharedL = await ldb.get('shared');
  const sharedR = await rdb.get('shared');
  assert.equal(sharedL._rev, sharedR._rev);
  const lEdit = await ldb.put({ ...sharedL, v: 'local' });
  const rEdit = await rdb.put({ ...sharedR, v: 'remote' });
  assert.notEqual(lEdit.rev, rEdit.rev);
  // An edit/delete conflict: deleted on one side, edited on the other.
  await ldb.remove(await ldb.get('doomed'));
  const doomedEdit = await rdb.put({ ...(await rdb.get('doomed')), v: 'edited' });

  const checkpointsBefore = proxy.log.filter((e) => e.path.startsWith('/pouch-repl/_local/')).length;
  const s2 = await ldb.sync(rdb);
  assert.equal(s2.push.ok, true);
  assert.equal(s2.pull.ok, true);
  assert.equal(s2.push.doc_write_failures, 0);
  assert.equal(s2.pull.doc_write_failures, 0);
  // The second run resumed from the checkpoints it stored in _local documents.
  const changesReads = proxy.log.filter((e) => e.path.startsWith('/pouch-repl/_changes'));
  assert.ok(changesReads.at(-1)!.path.includes('since=') && !changesReads.at(-1)!.path.includes('since=0&'), wire('/pouch-repl/_changes'));
  assert.ok(proxy.log.filter((e) => e.path.startsWith('/pouch-repl/_local/')).length > checkpointsBefore);

  // Same documents and winning revisions on both sides.
  assert.deepEqual(await rows(ldb), await rows(rdb));
  assert.equal((await ldb.get('r005')).updated, 'remote');
  assert.deepEqual((await ldb.get('r005', { revs: true }))._revisions, (await rdb.get('r005', { revs: true }))._revisions);
  assert.equal((await ldb.get('r005', { revs: true }))._revisions.ids.length, 13);
  assert.equal((await rdb.get('l07')).updated, 'local');
  assert.equal((await failure(rdb.get('r010'))).status, 404);
  assert.equal((await failure(ldb.get('l11'))).status, 404);

  // The conflict: identical winner, body and _conflicts everywhere.
  const shared = { local: await docState(ldb, 'shared'), remote: await docState(rdb, 'shared') };
  assert.deepEqual(shared.remote, shared.local, wire('/pouch-repl/shared'));
  const expectedWinner = [lEdit.rev, rEdit.rev].sort().at(-1);
  assert.equal(shared.remote.doc._rev, expectedWinner);
  assert.deepEqual(shared.remote.doc._conflicts, [lEdit.rev, rEdit.rev].filter((r) => r !== expectedWinner));
  const rawShared = await raw.get('/pouch-repl/shared?conflicts=true');
  assert.equal(rawShared.body._rev, expectedWinner);
  assert.deepEqual(rawShared.body._conflicts, shared.local.doc._conflicts);

  // The edit beats the deletion on both sides; the deleted branch is a deleted conflict.
  const doomed = { local: await docState(ldb, 'doomed'), remote: await docState(rdb, 'doomed') };
  assert.deepEqual(doomed.remote, doomed.local);
  assert.equal(doomed.remote.doc._rev, doomedEdit.rev);
  assert.equal(doomed.remote.doc.v, 'edited');
  const deletedLeaves = doomed.remote.leaves.filter((l: string) => l.endsWith(' deleted'));
  assert.equal(deletedLeaves.length, 1, JSON.stringify(doomed.remote.leaves));
  // PouchDB's HTTP adapter does not pass deleted_conflicts on; ask Settee directly.
  const rawDoomed = await raw.get('/pouch-repl/doomed?deleted_conflicts=true');
  assert.deepEqual(rawDoomed.body._deleted_conflicts, [deletedLeaves[0].split(' ')[0]]);

  // Resolve the conflict on Settee, replicate back: the resolution wins everywhere.
  const loser = shared.remote.doc._conflicts[0];
  await rdb.remove('shared', loser);
  await ldb.replicate.from(rdb);
  const resolved = await ldb.get('shared', { conflicts: true });
  assert.equal(resolved._rev, expectedWinner);
  assert.equal(resolved._conflicts, undefined);

  const [li, ri] = [await ldb.info(), await rdb.info()];
  assert.equal(li.doc_count, ri.doc_count);
  assert.equal(ri.doc_count, 260); // 230 + 30 + shared + doomed, minus r010 and l11
});

test('replicate.to / replicate.from one-shot, idempotent second run', async () => {
  const rdb = await fx.remote('pouch-repl-oneway');
  const ldb = fx.local('oneway-local');
  await ldb.bulkDocs([{ _id: 'a', v: 1 }, { _id: 'b', v: 2 }]);
  const push = await ldb.replicate.to(rdb);
  assert.equal(push.docs_written, 2);
  const again = await ldb.replicate.to(rdb);
  assert.equal(again.docs_written, 0);
  assert.deepEqual(await rows(rdb), await rows(ldb));

  const fresh = fx.local('oneway-fresh');
  const pull = await fresh.replicate.from(rdb);
  assert.equal(pull.docs_written, 2);
  assert.deepEqual(await rows(fresh), await rows(rdb));
  // Revision histories came across intact.
  assert.deepEqual((await fresh.get('a', { revs: true }))._revisions, (await rdb.get('a', { revs: true }))._revisions);
});

test('filtered replication with doc_ids', async () => {
  const rdb = await fx.remote('pouch-repl-docids');
  await rdb.bulkDocs([{ _id: 'keep1' }, { _id: 'skip' }, { _id: 'keep2' }]);
  const ldb = fx.local('docids-local');
  const res = await ldb.replicate.from(rdb, { doc_ids: ['keep2', 'keep1', 'absent'] });
  assert.equal(res.docs_written, 2, wire('/pouch-repl-docids/_changes'));
  assert.deepEqual((await rows(ldb)).map((r: any) => r[0]), ['keep1', 'keep2']);
  assert.ok(proxy.log.some((e) => e.method === 'POST' && e.path.startsWith('/pouch-repl-docids/_changes') && e.path.includes('filter=_doc_ids')));
});

test('live sync sees later changes in both directions, then cancels', { timeout: 60000 }, async () => {
  const rdb = await fx.remote('pouch-live-sync');
  const ldb = fx.local('live-sync-local');
  await rdb.put({ _id: 'seed' });

  const pulled = new Set<string>();
  const pushed = new Set<string>();
  const sync = ldb.sync(rdb, { live: true, retry: false });
  const listeners: Array<() => void> = [];
  const notify = () => listeners.forEach((f) => f());
  sync.on('change', (info: any) => {
    for (const d of info.change.docs) (info.direction === 'pull' ? pulled : pushed).add(d._id);
    notify();
  });
  let failed: unknown;
  sync.on('error', (err: unknown) => { failed = err; notify(); });
  const until = (cond: () => boolean) => new Promise<void>((resolve, reject) => {
    const check = () => {
      if (failed) reject(failed);
      else if (cond()) resolve();
    };
    listeners.push(check);
    check();
  });

  await until(() => pulled.has('seed'));
  // A later change on Settee, made with raw HTTP, is pulled.
  const w = await raw.put('/pouch-live-sync/later-remote', { n: 1 });
  assert.equal(w.status, 201);
  await until(() => pulled.has('later-remote'));
  assert.equal((await ldb.get('later-remote'))._rev, w.body.rev);

  // A later local change is pushed.
  const lw = await ldb.put({ _id: 'later-local', n: 2 });
  await until(() => pushed.has('later-local'));
  const onServer = await raw.get('/pouch-live-sync/later-local');
  assert.equal(onServer.status, 200);
  assert.equal(onServer.body._rev, lw.rev);

  const complete = new Promise((r) => sync.on('complete', r));
  sync.cancel();
  await complete;
  assert.equal(failed, undefined);
  assert.deepEqual(await rows(ldb), await rows(rdb));
});

// Last, because it is the request that can take the server down: PouchDB's own setup of a
// database that does not exist yet (GET /db/ -> 404, then PUT /db/).
test('PouchDB creates a missing remote database itself', async () => {
  const db = fx.open('pouch-autocreate');
  const info = await db.info();
  assert.equal(info.db_name, 'pouch-autocreate', wire('/pouch-autocreate'));
  const probe = proxy.log.find((e) => e.path === '/pouch-autocreate/' && e.method === 'GET')!;
  assert.equal(probe.status, 404);
  assert.deepEqual(JSON.parse(probe.responseBody), { error: 'not_found', reason: 'no_db_file' });
  const put = await db.put({ _id: 'after-create' });
  assert.equal(put.ok, true);
  const server2 = await raw.get('/pouch-autocreate/after-create');
  assert.equal(server2.status, 200, 'the server is still up after a 404 on a missing database');
});

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}
