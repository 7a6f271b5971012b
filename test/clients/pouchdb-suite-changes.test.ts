/**
 * A port of part of PouchDB's own integration suite (pouchdb/pouchdb, tests/integration/),
 * run with PouchDB 9's HTTP adapter against Settee, through the logging proxy:
 *
 * - test.changes.js, its `http` variant: the current file, plus the tests later versions dropped
 *   that pin CouchDB 1.x semantics (numeric last_seq, descending ignoring since, the #3136
 *   style=all_docs / winning-revision cases). Where PouchDB branches on the server, the CouchDB
 *   1.x branch is taken; the `selector` tests, which PouchDB runs only against CouchDB 2+, run
 *   here too since Settee has `filter=_selector`.
 * - test.bulk_get.js (`http`: Settee has CouchDB 2's `_bulk_get`, so the server answers).
 * - test.design_docs.js (`http`).
 * - test.compaction.js, the `http` part (everything before "NO MORE HTTP TESTS").
 * - test.http.js.
 * - test.views.js (`local`-`http`): the two tests that read from the Settee database.
 * - test.ajax.node.js: "#6815 ajax uses cookies", with Settee's `/_session` standing in for
 *   PouchDB's cookie-setting mock server.
 *
 * The four "CouchDB's reason" tests turn assertions PouchDB keeps commented out into tests:
 * a missing filter or view is 404 `missing json key: <key>`, as couch_changes says.
 *
 * Left out: the "Old Style" (complete-option) duplicates of older test.changes.js versions;
 * tests that only touch the local adapter (test.views.js' temporary-view queries on the local
 * database, the "Indexing event" and purge tests of test.design_docs.js, compaction after
 * "NO MORE HTTP TESTS"); tests of PouchDB's internals or removed options (parseUri,
 * getUrl/getHeaders, the `ajax`/`request` options, the `skipSetup` spelling, the "selector
 * invalid for filter" argument check, the old create/update/delete change events); and tests
 * that need an unreachable host or a network mock (test.ajax.js' ETIMEDOUT, "4358 ... when
 * server is down", "Changes reports errors").
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import { PouchFixture, failure } from './pouch-fixture.js';

/** The map functions below run inside PouchDB's view engine, which provides `emit`. */
declare function emit(key: unknown, value?: unknown): void;

let fx: PouchFixture;
const extra: any[] = [];

before(async () => {
  fx = await PouchFixture.start('settee-pouch-suite-changes-');
});
after(async () => {
  for (const db of extra) {
    try { await db.close(); } catch { /* already closed or destroyed */ }
  }
  await fx.close();
});

const LIVE = { timeout: 30000 };
let serial = 0;

/** A fresh Settee database through the HTTP adapter; one name per test. */
async function remote(tag: string): Promise<any> {
  return fx.remote(`psc-${++serial}-${tag}`);
}

/** A database URL through the proxy that is not created here. */
function remoteName(tag: string): string {
  return `psc-${++serial}-${tag}`;
}

/** A PouchDB over HTTP with constructor options, closed at the end. */
function openWith(name: string, options: object): any {
  const db = new PouchDB(fx.proxy.url + encodeURIComponent(name), options);
  extra.push(db);
  return db;
}

const wire = (fragment: string) => fx.proxy.show(fragment);

function findById(results: any[], id: string): any {
  const found = results.filter((r) => r.id === id);
  return found.length === 1 ? found[0] : undefined;
}

/** PouchDB's testUtils.writeDocs: one put after another, answering each put's result. */
async function writeDocs(db: any, docs: any[]): Promise<any[]> {
  const out: any[] = [];
  for (const doc of docs) out.push(await db.put(doc));
  return out;
}

/**
 * PouchDB's testUtils.putTree: each branch written root first with new_edits=false, each
 * revision carrying itself and its parent in `_revisions`, skipping revisions already there.
 */
async function putTree(db: any, tree: any[][]): Promise<void> {
  for (const branch of tree) {
    for (let i = 0; i < branch.length; i++) {
      const doc = branch[i];
      try {
        await db.get(doc._id, { rev: doc._rev });
        continue;
      } catch { /* not there yet */ }
      const copy = { ...doc };
      const prev = i > 0 ? branch[i - 1]._rev : null;
      if (prev) {
        copy._revisions = { start: Number(doc._rev.split('-')[0]), ids: [doc._rev.split('-')[1], prev.split('-')[1]] };
      }
      await db.put(copy, { new_edits: false });
    }
  }
}

/** Sorts each change's revisions, as the #3136 tests do ("order of changes doesn't matter"). */
function normalize(result: any): any {
  for (const ch of result.results) ch.changes.sort((a: any, b: any) => (a.rev < b.rev ? -1 : 1));
  return result;
}

/**
 * A live feed: `onChange` sees each change with the feed (to cancel it); resolves with the
 * changes seen and the complete event's result, rejects on the error event.
 */
function liveFeed(db: any, opts: object, onChange: (change: any, seen: any[], feed: any) => void): { feed: any; done: Promise<{ seen: any[]; result: any }> } {
  const seen: any[] = [];
  const feed = db.changes({ ...opts, live: true });
  const done = new Promise<{ seen: any[]; result: any }>((resolve, reject) => {
    feed.on('change', (c: any) => {
      seen.push(c);
      onChange(c, seen, feed);
    });
    feed.on('complete', (result: any) => resolve({ seen, result }));
    feed.on('error', reject);
  });
  return { feed, done };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ints = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => ({ _id: String(from + k), integer: from + k }));


const oddFilterDdoc = { _id: '_design/foo', integer: 4, filters: { even: 'function (doc) { return doc.integer % 2 === 1; }' } };
const oddViewDdoc = { _id: '_design/foo', integer: 4, views: { even: { map: 'function (doc) { if (doc.integer % 2 === 1) { emit(doc._id, null) }; }' } } };

// ---------------------------------------------------------------------------------------------
// test.changes.js-http
// ---------------------------------------------------------------------------------------------

test('test.changes.js-http: All changes', async () => {
  const db = await remote('all');
  await db.post({ test: 'somestuff' });
  const change = await new Promise<any>((resolve, reject) => {
    const feed = db.changes();
    assert.equal(typeof feed.cancel, 'function');
    feed.on('change', resolve);
    feed.on('error', reject);
  });
  assert.equal('doc' in change, false);
  assert.ok('seq' in change);
});

test('test.changes.js-http: Changes with complete callback as param', async () => {
  const db = await remote('callback');
  await db.post({ test: 'somestuff' });
  const complete = await new Promise<any>((resolve, reject) => db.changes((err: any, res: any) => (err ? reject(err) : resolve(res))));
  assert.ok('last_seq' in complete);
  assert.ok('results' in complete);
});

test('test.changes.js-http: Promise resolved when changes cancelled', async () => {
  const db = await remote('cancel-promise');
  await db.bulkDocs({ docs: [...ints(0, 7), { _id: '8', integer: 9 }, { _id: '9', integer: 9 }, { _id: '10', integer: 10 }] });
  let count = 0;
  const feed = db.changes();
  feed.on('change', function handler() {
    count++;
    if (count === 5) {
      feed.cancel();
      feed.removeListener('change', handler);
    }
  });
  assert.equal(typeof feed.then, 'function');
  let outcome: any;
  try {
    outcome = await feed;
  } catch (err) {
    assert.ok(err);
  }
  assert.equal(count, 5);
  if (outcome !== undefined) assert.deepEqual(outcome, { status: 'cancelled' });
});

test('test.changes.js-http: Changes Since', async () => {
  const db = await remote('since');
  await db.bulkDocs({ docs: [...ints(0, 7), { _id: '8', integer: 9 }, { _id: '9', integer: 9 }, ...ints(10, 11)] });
  const { update_seq } = await db.info();
  await db.bulkDocs({ docs: ints(12, 13) });
  const res = await db.changes({ return_docs: true, since: update_seq });
  assert.ok(res.results.length >= 2);
});

test('test.changes.js-http: Changes Since and limit limit 1', async () => {
  const db = await remote('since-limit1');
  await db.bulkDocs({ docs: ints(0, 2) });
  const { update_seq } = await db.info();
  await db.bulkDocs({ docs: ints(3, 4) });
  const res = await db.changes({ return_docs: true, since: update_seq, limit: 1 });
  assert.equal(res.results.length, 1, wire('/_changes'));
});

test('test.changes.js-http: Changes Since and limit limit 0', async () => {
  const db = await remote('since-limit0');
  await db.bulkDocs({ docs: ints(0, 2) });
  const { update_seq } = await db.info();
  await db.bulkDocs({ docs: ints(3, 4) });
  const res = await db.changes({ return_docs: true, since: update_seq, limit: 0 });
  assert.equal(res.results.length, 1);
});

test('test.changes.js-http: Changes limit', async () => {
  const db = await remote('limit');
  const info = await writeDocs(db, ints(0, 3));
  const { update_seq } = await db.info();
  const two = await db.put({ _id: '2', integer: 11, _rev: info[2].rev });
  const three = await db.put({ _id: '3', integer: 12, _rev: info[3].rev });
  const res = await db.changes({ return_docs: true, limit: 2, since: update_seq, include_docs: true });
  assert.equal(res.results.length, 2);
  const first = findById(res.results, '2');
  const second = findById(res.results, '3');
  assert.equal(first.doc.integer, 11);
  assert.equal(first.doc._rev, two.rev);
  assert.equal(second.doc.integer, 12);
  assert.equal(second.doc._rev, three.rev);
});

test('test.changes.js-http: Changes with filter not present in ddoc', async () => {
  const db = await remote('filter-missing');
  await writeDocs(db, [{ _id: '1', integer: 1 }, oddFilterDdoc]);
  const err = await failure(db.changes({ filter: 'foo/odd', limit: 2, include_docs: true }));
  assert.equal(err.name, 'not_found', wire('/_changes'));
  assert.equal(err.status, 404);
});

// PouchDB's suite checks this reason only in a comment ("does not work in pouchdb-server"):
// CouchDB 1.6 validates the filter with couch_util:get_nested_json_value, which throws
// {not_found, <<"missing json key: ", Key>>}.
test('test.changes.js-http: Changes with filter not present in ddoc: CouchDB\'s reason', async () => {
  const db = await remote('filter-missing-reason');
  await writeDocs(db, [{ _id: '1', integer: 1 }, oddFilterDdoc]);
  const err = await failure(db.changes({ filter: 'foo/odd' }));
  assert.equal(err.reason, 'missing json key: odd', wire('/_changes'));
});

test('test.changes.js-http: Changes with `filters` key not present in ddoc', async () => {
  const db = await remote('filters-key-missing');
  await writeDocs(db, [...ints(0, 1), oddViewDdoc]);
  const err = await failure(db.changes({ filter: 'foo/even', limit: 2, include_docs: true }));
  assert.equal(err.status, 404, wire('/_changes'));
  assert.equal(err.name, 'not_found');
});

test('test.changes.js-http: Changes with `filters` key not present in ddoc: CouchDB\'s reason', async () => {
  const db = await remote('filters-key-missing-reason');
  await writeDocs(db, [...ints(0, 1), oddViewDdoc]);
  const err = await failure(db.changes({ filter: 'foo/even' }));
  assert.equal(err.reason, 'missing json key: filters', wire('/_changes'));
});

test('test.changes.js-http: Changes limit and filter', async () => {
  const db = await remote('limit-filter');
  await db.bulkDocs({ docs: ints(0, 2) });
  const { update_seq } = await db.info();
  await writeDocs(db, [...ints(3, 5), oddFilterDdoc]);
  const res = await db.changes({ return_docs: true, filter: 'foo/even', limit: 2, since: update_seq, include_docs: true });
  assert.equal(res.results.length, 2, wire('/_changes'));
  assert.equal(findById(res.results, '3').doc.integer, 3);
  assert.equal(findById(res.results, '5').doc.integer, 5);
});

test('test.changes.js-http: Changes with shorthand function name', async () => {
  const db = await remote('shorthand');
  await db.bulkDocs({ docs: [...ints(0, 2), { _id: '_design/even', integer: 3, filters: { even: 'function (doc) { return doc.integer % 2 === 0; }' } }] });
  const res = await db.changes({ return_docs: true, filter: 'even', include_docs: true });
  assert.equal(res.results.length, 2, wire('/_changes'));
  assert.equal(findById(res.results, '0').doc.integer, 0);
  assert.equal(findById(res.results, '2').doc.integer, 2);
});

test('test.changes.js-http: Changes with filter from nonexistent ddoc', async () => {
  const db = await remote('filter-no-ddoc');
  await writeDocs(db, ints(0, 1));
  const err = await failure(db.changes({ filter: 'foobar/odd' }));
  assert.ok(err);
});

test('test.changes.js-http: Changes with view not present in ddoc', async () => {
  const db = await remote('view-missing');
  await writeDocs(db, [...ints(0, 1), oddViewDdoc]);
  const err = await failure(db.changes({ filter: '_view', view: 'foo/odd' }));
  assert.equal(err.status, 404, wire('/_changes'));
  assert.equal(err.name, 'not_found');
});

test('test.changes.js-http: Changes with view not present in ddoc: CouchDB\'s reason', async () => {
  const db = await remote('view-missing-reason');
  await writeDocs(db, [...ints(0, 1), oddViewDdoc]);
  const err = await failure(db.changes({ filter: '_view', view: 'foo/odd' }));
  assert.equal(err.reason, 'missing json key: odd', wire('/_changes'));
});

test('test.changes.js-http: Changes with `views` key not present in ddoc', async () => {
  const db = await remote('views-key-missing');
  await writeDocs(db, [{ _id: '1', integer: 1 }, oddFilterDdoc]);
  const err = await failure(db.changes({ filter: '_view', view: 'foo/even' }));
  assert.equal(err.status, 404, wire('/_changes'));
  assert.equal(err.name, 'not_found');
});

test('test.changes.js-http: Changes with `views` key not present in ddoc: CouchDB\'s reason', async () => {
  const db = await remote('views-key-missing-reason');
  await writeDocs(db, [{ _id: '1', integer: 1 }, oddFilterDdoc]);
  const err = await failure(db.changes({ filter: '_view', view: 'foo/even' }));
  assert.equal(err.reason, 'missing json key: views', wire('/_changes'));
});

test('test.changes.js-http: #4451 Changes with invalid view filter', async () => {
  const db = await remote('invalid-filter');
  await db.bulkDocs([{ _id: '1', integer: 1 }, { _id: '_design/foo', filters: { even: 'function (doc) { return doc.integer % 2 === 1; }' } }]);
  // PouchDB normalizes "a/b/c" away: the feed completes without a filter.
  const res = await db.changes({ filter: 'a/b/c' });
  assert.ok(Array.isArray(res.results));
});

test('test.changes.js-http: 3356 throw inside a filter', async () => {
  const db = await remote('throwing-filter');
  await db.put({ _id: '_design/test', filters: { test: 'function () { throw new Error(); }' } });
  await failure(db.changes({ filter: 'test/test' }));
});

test('test.changes.js-http: Changes with missing param `view` in request', async () => {
  const db = await remote('view-param-missing');
  await writeDocs(db, [...ints(0, 1), oddViewDdoc]);
  const err = await failure(db.changes({ filter: '_view' }));
  assert.equal(err.status, 400, wire('/_changes'));
  assert.equal(err.name, 'bad_request');
});

test('test.changes.js-http: Changes limit and view instead of filter', async () => {
  const db = await remote('limit-view');
  await db.bulkDocs({ docs: ints(0, 2) });
  const { update_seq } = await db.info();
  await db.bulkDocs({ docs: [...ints(3, 5), oddViewDdoc] });
  const res = await db.changes({ return_docs: true, filter: '_view', view: 'foo/even', limit: 2, since: update_seq, include_docs: true });
  assert.equal(res.results.length, 2, wire('/_changes'));
  assert.equal(findById(res.results, '3').doc.integer, 3);
  assert.equal(findById(res.results, '5').doc.integer, 5);
});

test('test.changes.js-http: #3609 view option implies filter: _view', async () => {
  const db = await remote('view-implies');
  await db.bulkDocs([...ints(0, 2), { _id: '_design/foo', integer: 3, views: { even: { map: 'function (doc) { if (doc.integer % 2 === 1) { emit(doc._id, null) }; }' } } }]);
  const res = await db.changes({ return_docs: true, view: 'foo/even' });
  // Doc 1 and the design document itself (integer 3).
  assert.equal(res.results.length, 2, wire('/_changes'));
});

test('test.changes.js-http: Immediately cancel changes', LIVE, async () => {
  const db = await remote('immediate-cancel');
  await new Promise((resolve, reject) => {
    const feed = db.changes({ live: true });
    feed.on('error', reject);
    feed.on('complete', resolve);
    feed.cancel();
  });
});

test('test.changes.js-http: Changes with invalid ddoc view name', LIVE, async () => {
  const db = await remote('bad-view-name');
  await db.post({});
  await new Promise((resolve, reject) => {
    const feed = db.changes({ live: true, filter: '_view', view: '' });
    feed.on('error', resolve);
    feed.on('change', () => reject(new Error('a change came through')));
  });
});

test('test.changes.js-http: Changes with invalid ddoc view name 2', LIVE, async () => {
  const db = await remote('bad-view-name2');
  await db.post({});
  await new Promise((resolve, reject) => {
    const feed = db.changes({ live: true, filter: '_view', view: 'a/b/c' });
    feed.on('error', resolve);
    feed.on('change', () => reject(new Error('a change came through')));
  });
});

const simpleTree = [
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-b', value: 'foo b' },
    { _id: 'foo', _rev: '3-c', value: 'foo c' }],
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-d', value: 'foo d' },
    { _id: 'foo', _rev: '3-e', value: 'foo e' },
    { _id: 'foo', _rev: '4-f', value: 'foo f' }],
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-g', value: 'foo g', _deleted: true }],
];

const revsDescending = (changes: any[]) => changes.map((c) => c.rev).sort().reverse();

test('test.changes.js-http: Changes with style = all_docs', async () => {
  const db = await remote('style-all-docs');
  await putTree(db, simpleTree);
  const main = await db.changes({ return_docs: true });
  assert.deepEqual(main.results[0].changes, [{ rev: '4-f' }], wire('/_changes'));
  const all = await db.changes({ return_docs: true, style: 'all_docs' });
  assert.deepEqual(revsDescending(all.results[0].changes), ['4-f', '3-c', '2-g']);
});

test('test.changes.js-http: Changes with style = all_docs and a callback for complete', async () => {
  const db = await remote('style-all-docs-cb');
  await putTree(db, simpleTree);
  const call = (opts: object) => new Promise<any>((resolve, reject) => db.changes(opts, (err: any, res: any) => (err ? reject(err) : resolve(res))));
  const main = await call({ return_docs: true });
  assert.deepEqual(main.results[0].changes, [{ rev: '4-f' }]);
  const all = await call({ return_docs: true, style: 'all_docs' });
  assert.deepEqual(revsDescending(all.results[0].changes), ['4-f', '3-c', '2-g']);
});

test('test.changes.js-http: Changes limit = 0', async () => {
  const db = await remote('limit-zero');
  await db.bulkDocs({ docs: ints(0, 3) });
  const res = await db.changes({ return_docs: true, limit: 0 });
  assert.equal(res.results.length, 1);
});

test('test.changes.js-http: Changes doc', async () => {
  const db = await remote('doc');
  await db.post({ test: 'somestuff' });
  const change = await new Promise<any>((resolve, reject) => {
    const feed = db.changes({ include_docs: true });
    feed.on('change', resolve);
    feed.on('error', reject);
  });
  assert.equal(change.doc._id, change.id);
  assert.equal(change.doc._rev, change.changes[change.changes.length - 1].rev);
});

test('test.changes.js-http: Descending many changes (it.skip upstream, CouchDB 1.x)', async () => {
  const db = await remote('descending-many');
  await db.bulkDocs({ docs: Array.from({ length: 100 }, (_, i) => ({ _id: `doc_${i}`, foo: `bar_${i}` })) });
  let count = 0;
  const feed = db.changes({ descending: true });
  feed.on('change', () => { count++; });
  await feed;
  assert.equal(count, 100);
});

test('test.changes.js-http: Descending changes (CouchDB 1.x: descending ignores since)', async () => {
  const db = await remote('descending');
  await db.post({ _id: '0', test: 'ing' });
  await db.post({ _id: '1', test: 'ing' });
  await db.post({ _id: '2', test: 'ing' });
  const res = await db.changes({ descending: true, since: 1 });
  assert.deepEqual(res.results.map((r: any) => r.id), ['2', '1', '0'], wire('/_changes'));
});

test('test.changes.js-http: live-changes', LIVE, async () => {
  const db = await remote('live');
  const { done } = liveFeed(db, {}, (_c, _seen, feed) => feed.cancel());
  await db.post({ test: 'adoc' });
  const { seen } = await done;
  assert.equal(seen.length, 1);
  assert.equal('doc' in seen[0], false);
});

test('test.changes.js-http: Multiple watchers', LIVE, async () => {
  const db = await remote('watchers');
  const one = liveFeed(db, {}, (_c, _seen, feed) => feed.cancel());
  const two = liveFeed(db, {}, (_c, _seen, feed) => feed.cancel());
  await db.post({ test: 'adoc' });
  const [a, b] = await Promise.all([one.done, two.done]);
  assert.equal(a.seen.length + b.seen.length, 2);
});

test('test.changes.js-http: Continuous changes doc', LIVE, async () => {
  const db = await remote('continuous-doc');
  const { done } = liveFeed(db, { include_docs: true }, (_c, _seen, feed) => feed.cancel());
  await db.post({ test: 'adoc' });
  const { seen, result } = await done;
  assert.equal(result.status, 'cancelled');
  assert.ok(seen[0].doc);
  assert.ok(seen[0].doc._rev);
});

test('test.changes.js-http: Cancel changes', LIVE, async () => {
  const db = await remote('cancel');
  let posted: Promise<unknown> | undefined;
  const { done } = liveFeed(db, {}, (_c, seen, feed) => {
    if (seen.length === 1) {
      feed.cancel();
      posted = db.post({ test: 'another doc' });
    }
  });
  await db.post({ test: 'adoc' });
  const { seen, result } = await done;
  assert.equal(result.status, 'cancelled');
  await posted;
  await sleep(300);
  assert.equal(seen.length, 1);
});

test('test.changes.js-http: #3579 changes firing 1 too many times', LIVE, async () => {
  const db = await remote('3579');
  await db.bulkDocs([{}, {}, {}]);
  const first = new Promise<any>((resolve, reject) => {
    const feed = db.changes({ since: 'now', live: true, include_docs: true });
    feed.on('error', reject);
    feed.on('change', (change: any) => {
      feed.cancel();
      resolve(change);
    });
  });
  await sleep(50);
  await db.put({ _id: 'foobar' });
  const change = await first;
  assert.equal(change.id, 'foobar');
  assert.equal(change.doc._id, 'foobar');
});

test('test.changes.js-http: Kill database while listening to live changes', LIVE, async () => {
  const db = await remote('kill');
  await new Promise<void>((resolve) => {
    const feed = db.changes({ live: true });
    feed.on('error', () => resolve());
    feed.on('complete', () => resolve());
    feed.on('change', () => { db.destroy().catch(() => resolve()); });
    db.post({ test: 'adoc' });
  });
});

test('test.changes.js-http: #3136 style=all_docs', async () => {
  const db = await remote('3136-all-docs');
  const ids = ['b', 'c', 'a', 'z', 'd', 'e'];
  for (const id of ids) await db.put({ _id: id });
  const res = await db.changes({ return_docs: true, style: 'all_docs' });
  const seen = res.results.map((r: any) => r.id);
  for (const id of ids) assert.ok(seen.includes(id), `${id} in ${seen}`);
});

test('test.changes.js-http: #4191 revs_diff causes endless loop', async () => {
  const db = await remote('4191');
  await db.bulkDocs({ new_edits: false, docs: [{ _id: '799', _rev: '1-d22' }] });
  await db.bulkDocs({ new_edits: false, docs: [{ _id: '3E1', _rev: '1-ab5' }] });
  await db.bulkDocs({ new_edits: false, docs: [{ _id: 'FB3', _rev: '1-363' }, { _id: '27C', _rev: '1-4c3' }, { _id: 'BD6', _rev: '1-de0' }, { _id: '1E9', _rev: '1-451' }] });
  const first = await db.changes({ style: 'all_docs', limit: 100 });
  const res = await db.changes({ return_docs: true, since: first.last_seq, style: 'all_docs', limit: 100 });
  assert.equal(res.results.length, 0, wire('/_changes'));
});

test('test.changes.js-http: #3136 style=all_docs & include_docs', async () => {
  const db = await remote('3136-all-docs-include');
  const ids = ['b', 'c', 'a', 'z', 'd', 'e'];
  for (const id of ids) await db.put({ _id: id });
  const res = await db.changes({ return_docs: true, style: 'all_docs', include_docs: true });
  const seen = res.results.map((r: any) => r.id);
  for (const id of ids) assert.ok(seen.includes(id), `${id} in ${seen}`);
});

test('test.changes.js-http: #3136 tricky changes, limit/descending (CouchDB 1.x)', async () => {
  const db = await remote('3136-tricky');
  const docs = [
    { _id: 'alpha', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
    { _id: 'beta', _rev: '1-b', _revisions: { start: 1, ids: ['b'] } },
    { _id: 'gamma', _rev: '1-b', _revisions: { start: 1, ids: ['b'] } },
    { _id: 'alpha', _rev: '2-d', _revisions: { start: 2, ids: ['d', 'a'] } },
    { _id: 'beta', _rev: '2-e', _revisions: { start: 2, ids: ['e', 'b'] } },
    { _id: 'beta', _rev: '3-f', _deleted: true, _revisions: { start: 3, ids: ['f', 'e', 'b'] } },
  ];
  const seqs: any[] = [];
  for (const doc of docs) {
    await db.bulkDocs([doc], { new_edits: false });
    const res = await db.changes({ doc_ids: [doc._id] });
    seqs.push(res.results[0].seq);
  }
  const gamma = { seq: seqs[2], id: 'gamma', changes: [{ rev: '1-b' }] };
  const alpha = { seq: seqs[3], id: 'alpha', changes: [{ rev: '2-d' }] };
  const beta = { seq: seqs[5], id: 'beta', deleted: true, changes: [{ rev: '3-f' }] };
  const check = async (opts: object, results: any[], label: string) => {
    const res = normalize(await db.changes(opts));
    delete res.last_seq;
    assert.deepEqual(res, { results }, `${label}: ${JSON.stringify(res)}\n${wire('/_changes')}`);
  };
  await check({}, [gamma, alpha, beta], '0');
  await check({ limit: 0 }, [gamma], '1');
  await check({ limit: 1 }, [gamma], '2');
  await check({ limit: 2 }, [gamma, alpha], '3');
  await check({ limit: 1, descending: true }, [beta], '4');
  await check({ limit: 2, descending: true }, [beta, alpha], '5');
  await check({ descending: true }, [beta, alpha, gamma], '6');
});

test('test.changes.js-http: #3136 winningRev has a lower seq, style=all_docs (CouchDB 1.x)', async () => {
  const db = await remote('3136-lower-seq');
  const tree = [
    [
      { _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
      { _id: 'foo', _rev: '2-e', _deleted: true, _revisions: { start: 2, ids: ['e', 'a'] } },
      { _id: 'foo', _rev: '3-g', _revisions: { start: 3, ids: ['g', 'e', 'a'] } },
    ],
    [
      { _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
      { _id: 'foo', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a'] } },
      { _id: 'foo', _rev: '3-c', _revisions: { start: 3, ids: ['c', 'b', 'a'] } },
    ],
    [
      { _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
      { _id: 'foo', _rev: '2-d', _revisions: { start: 2, ids: ['d', 'a'] } },
      { _id: 'foo', _rev: '3-h', _revisions: { start: 3, ids: ['h', 'd', 'a'] } },
      { _id: 'foo', _rev: '4-f', _revisions: { start: 4, ids: ['f', 'h', 'd', 'a'] } },
    ],
  ];
  const expected = [
    { changes: ['3-g'], winner: '3-g' },
    { changes: ['3-c', '3-g'], winner: '3-g' },
    { changes: ['3-c', '3-g', '4-f'], winner: '4-f' },
  ];
  const seqs: any[] = [0];
  for (let i = 0; i < tree.length; i++) {
    await db.bulkDocs(tree[i], { new_edits: false });
    const res = normalize(await db.changes({ style: 'all_docs', since: seqs[seqs.length - 1], include_docs: true }));
    seqs.push(res.last_seq);
    const want = {
      results: [{ seq: seqs[i + 1], id: 'foo', changes: expected[i]!.changes.map((rev) => ({ rev })), doc: { _id: 'foo', _rev: expected[i]!.winner } }],
      last_seq: seqs[i + 1],
    };
    assert.deepEqual(res, want, `${i}: ${JSON.stringify(res)}`);
  }
});

test('test.changes.js-http: #3136 winningRev has a lower seq, style=all_docs 2 (CouchDB 1.x)', async () => {
  const db = await remote('3136-lower-seq2');
  const tree = [
    [
      { _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
      { _id: 'foo', _rev: '2-e', _deleted: true, _revisions: { start: 2, ids: ['e', 'a'] } },
      { _id: 'foo', _rev: '3-g', _revisions: { start: 3, ids: ['g', 'e', 'a'] } },
    ],
    [
      { _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } },
      { _id: 'foo', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a'] } },
      { _id: 'foo', _rev: '3-c', _revisions: { start: 3, ids: ['c', 'b', 'a'] } },
    ],
    [{ _id: 'bar', _rev: '1-z', _revisions: { start: 1, ids: ['z'] } }],
  ];
  const seqs: any[] = [0];
  for (const docs of tree) {
    await db.bulkDocs(docs, { new_edits: false });
    seqs.push((await db.changes()).last_seq);
  }
  const foo = { seq: seqs[2], id: 'foo', changes: [{ rev: '3-c' }, { rev: '3-g' }] };
  const bar = { seq: seqs[3], id: 'bar', changes: [{ rev: '1-z' }] };
  const expecteds = [
    { results: [foo, bar], last_seq: seqs[3] },
    { results: [foo, bar], last_seq: seqs[3] },
    { results: [bar], last_seq: seqs[3] },
    { results: [], last_seq: seqs[3] },
  ];
  for (let i = 0; i < seqs.length; i++) {
    const res = normalize(await db.changes({ since: seqs[i], style: 'all_docs' }));
    assert.deepEqual(res, expecteds[i], `since=${seqs[i]}: ${JSON.stringify(res)}`);
  }
});

test('test.changes.js-http: #3136 winningRev has a higher seq, using limit (CouchDB 1.x)', async () => {
  const db = await remote('3136-higher-seq');
  const tree = [
    [{ _id: 'foo', _rev: '1-a', _revisions: { start: 1, ids: ['a'] } }],
    [{ _id: 'foo', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a'] } }],
    [{ _id: 'bar', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } }],
    [{ _id: 'foo', _rev: '2-c', _deleted: true, _revisions: { start: 2, ids: ['c', 'a'] } }],
  ];
  const seqs: any[] = [0];
  for (const docs of tree) {
    await db.bulkDocs(docs, { new_edits: false });
    seqs.push((await db.changes()).last_seq);
  }
  const bar = { results: [{ seq: seqs[3], id: 'bar', changes: [{ rev: '1-x' }], doc: { _id: 'bar', _rev: '1-x' } }], last_seq: seqs[3] };
  const expecteds = [
    bar, bar, bar,
    { results: [{ seq: seqs[4], id: 'foo', changes: [{ rev: '2-b' }, { rev: '2-c' }], doc: { _id: 'foo', _rev: '2-b' } }], last_seq: seqs[4] },
    { results: [], last_seq: seqs[4] },
  ];
  for (let i = 0; i < seqs.length; i++) {
    const res = normalize(await db.changes({ style: 'all_docs', since: seqs[i], limit: 1, include_docs: true }));
    assert.deepEqual(res, expecteds[i], `${i}: ${JSON.stringify(res)}`);
  }
});

test('test.changes.js-http: changes-filter with query params', LIVE, async () => {
  const db = await remote('filter-query-params');
  await db.bulkDocs({ docs: ints(0, 3) });
  const { done } = liveFeed(db, {
    filter: (doc: any, req: any) => (req.query.abc ? doc.integer % 2 === 0 : false),
    query_params: { abc: true },
  }, (_c, seen, feed) => { if (seen.length === 4) feed.cancel(); });
  await db.bulkDocs({ docs: ints(4, 7) });
  const { seen, result } = await done;
  assert.equal(result.status, 'cancelled');
  assert.deepEqual(seen.map((c) => c.id).sort(), ['0', '2', '4', '6']);
});

test('test.changes.js-http: Non-live changes filter', async () => {
  const db = await remote('nonlive-filter');
  await db.bulkDocs({ docs: ints(0, 3) });
  const all = await db.changes();
  const filtered = await db.changes({ return_docs: true, filter: (doc: any) => doc.integer % 2 === 0 });
  assert.equal(filtered.results.length, 2);
  assert.deepEqual(filtered.last_seq, all.last_seq);
});

test('test.changes.js-http: Non-live changes filter, descending', async () => {
  const db = await remote('nonlive-filter-desc');
  await db.bulkDocs({ docs: ints(0, 3) });
  const all = await db.changes({ descending: true });
  const filtered = await db.changes({ return_docs: true, descending: true, filter: (doc: any) => doc.integer > 2 });
  assert.equal(filtered.results.length, 1);
  assert.deepEqual(filtered.last_seq, all.last_seq);
});

test('test.changes.js-http: #2569 Non-live doc_ids filter', async () => {
  const db = await remote('2569-doc-ids');
  await db.bulkDocs([{ _id: '0' }, { _id: '1' }, { _id: '2' }, { _id: '3' }]);
  const res = await db.changes({ return_docs: true, doc_ids: ['1', '3'] });
  assert.deepEqual(res.results.map((r: any) => r.id).sort(), ['1', '3']);
});

/** Five documents with ids of 50 base64-encoded random numbers each (about 1300 characters). */
function hugeIdDocs(): { _id: string }[] {
  return Array.from({ length: 5 }, () => ({
    _id: Array.from({ length: 50 }, () => Buffer.from(Math.random().toString()).toString('base64')).join(''),
  }));
}

test('test.changes.js-http: #2569 Big non-live doc_ids filter', async () => {
  const db = await remote('2569-big-doc-ids');
  const docs = hugeIdDocs();
  await db.bulkDocs(docs);
  const res = await db.changes({ return_docs: true, doc_ids: [docs[1]!._id, docs[3]!._id] });
  assert.deepEqual(res.results.map((r: any) => r.id).sort(), [docs[1]!._id, docs[3]!._id].sort());
});

test('test.changes.js-http: #2569 Live doc_ids filter', LIVE, async () => {
  const db = await remote('2569-live-doc-ids');
  await db.bulkDocs([{ _id: '0' }, { _id: '1' }, { _id: '2' }, { _id: '3' }]);
  const { done } = liveFeed(db, { doc_ids: ['1', '3'] }, (_c, seen, feed) => { if (seen.length === 2) feed.cancel(); });
  const { seen } = await done;
  assert.deepEqual(seen.map((c) => c.id).sort(), ['1', '3']);
});

test('test.changes.js-http: #2569 Big live doc_ids filter', LIVE, async () => {
  const db = await remote('2569-big-live-doc-ids');
  const docs = hugeIdDocs();
  await db.bulkDocs(docs);
  const { done } = liveFeed(db, { doc_ids: [docs[1]!._id, docs[3]!._id] }, (_c, seen, feed) => { if (seen.length === 2) feed.cancel(); });
  const { seen } = await done;
  assert.deepEqual(seen.map((c) => c.id).sort(), [docs[1]!._id, docs[3]!._id].sort());
});

test('test.changes.js-http: #2569 Non-live doc_ids filter with filter=_doc_ids', async () => {
  const db = await remote('2569-filter-doc-ids');
  await db.bulkDocs([{ _id: '0' }, { _id: '1' }, { _id: '2' }, { _id: '3' }]);
  const res = await db.changes({ return_docs: true, filter: '_doc_ids', doc_ids: ['1', '3'] });
  assert.deepEqual(res.results.map((r: any) => r.id).sort(), ['1', '3']);
});

test('test.changes.js-http: #2569 Live doc_ids filter with filter=_doc_ids', async () => {
  // Upstream this one is not live either.
  const db = await remote('2569-filter-doc-ids2');
  await db.bulkDocs([{ _id: '0' }, { _id: '1' }, { _id: '2' }, { _id: '3' }]);
  const res = await db.changes({ return_docs: true, filter: '_doc_ids', doc_ids: ['1', '3'] });
  assert.deepEqual(res.results.map((r: any) => r.id).sort(), ['1', '3']);
});

test('test.changes.js-http: Changes to same doc are grouped', async () => {
  const db = await remote('grouped');
  const info = await db.bulkDocs({ docs: ints(0, 3) });
  await db.put({ _id: '2', integer: 11, _rev: info[2].rev });
  await db.put({ _id: '3', integer: 12, _rev: info[3].rev });
  const res = await db.changes({ return_docs: true, include_docs: true });
  assert.equal(res.results.length, 4);
  const second = findById(res.results, '2');
  assert.equal(second.changes.length, 1);
  assert.equal(second.doc.integer, 11);
});

test('test.changes.js-http: Changes with conflicts are handled correctly', async () => {
  const localdb = await remote('conflicts-a');
  const remotedb = await remote('conflicts-b');
  const info = await localdb.bulkDocs({ docs: ints(0, 3) });
  await localdb.put({ _id: '2', integer: 11, _rev: info[2].rev });
  const rev2 = (await localdb.put({ _id: '3', integer: 12, _rev: info[3].rev })).rev;
  await PouchDB.replicate(localdb, remotedb);
  // Update the remote once and the local twice, then pull the remote's branch back.
  const rev3 = (await localdb.put({ _id: '3', _rev: rev2, integer: 20 })).rev;
  const rev4local = (await localdb.put({ _id: '3', _rev: rev3, integer: 30 })).rev;
  const remoterev = (await remotedb.put({ _id: '3', _rev: rev2, integer: 100 })).rev;
  await PouchDB.replicate(remotedb, localdb);
  const res = await localdb.changes({ return_docs: true, include_docs: true, style: 'all_docs', conflicts: true });
  assert.equal(res.results.length, 4);
  const ch = findById(res.results, '3');
  assert.equal(ch.doc.integer, 30);
  assert.equal(ch.doc._rev, rev4local);
  assert.deepEqual(ch.changes, [{ rev: rev4local }, { rev: remoterev }], wire('/_changes'));
  assert.deepEqual(ch.doc._conflicts, [remoterev]);
});

test('test.changes.js-http: Change entry for a deleted doc', async () => {
  const db = await remote('deleted-entry');
  const info = await db.bulkDocs({ docs: ints(0, 3) });
  await db.remove({ _id: '3', _rev: info[3].rev });
  const res = await db.changes({ return_docs: true, include_docs: true });
  assert.equal(res.results.length, 4);
  const ch = findById(res.results, '3');
  assert.equal(ch.deleted, true);
  assert.equal(ch.seq, 5); // the CouchDB 1.x branch: sequences are integers
});

test('test.changes.js-http: changes large number of docs', async () => {
  const db = await remote('large');
  await db.bulkDocs({ docs: Array.from({ length: 30 }, (_, i) => ({ _id: `doc_${i}`, foo: `bar_${i}` })) });
  const res = await db.changes({ return_docs: true });
  assert.equal(res.results.length, 30);
});

test("test.changes.js-http: Calling db.changes({since: 'now'})", async () => {
  const db = await remote('since-now');
  await db.bulkDocs({ docs: [{ foo: 'bar' }] });
  const info = await db.info();
  const feed = db.changes({ since: 'now' });
  assert.equal(typeof feed.cancel, 'function');
  const res = await feed;
  assert.equal(res.last_seq, info.update_seq); // the CouchDB 1.x branch
});

test("test.changes.js-http: Calling db.changes({since: 'latest'})", async () => {
  const db = await remote('since-latest');
  await db.bulkDocs({ docs: [{ foo: 'bar' }] });
  const info = await db.info();
  const res = await db.changes({ since: 'latest' });
  assert.equal(res.last_seq, info.update_seq);
});

test('test.changes.js-http: Closing db does not cause a crash if changes cancelled', LIVE, async () => {
  const db = fx.open(remoteName('close-cancelled'));
  await db.bulkDocs({ docs: [{ foo: 'bar' }] });
  const feed = db.changes({ live: true });
  const completed = new Promise<any>((resolve) => feed.on('complete', resolve));
  feed.cancel();
  await db.close();
  assert.equal((await completed).status, 'cancelled');
});

test('test.changes.js-http: fire-complete-on-cancel', LIVE, async () => {
  const db = await remote('complete-on-cancel');
  let cancelled = false;
  const { feed, done } = liveFeed(db, {}, () => {});
  setTimeout(() => { cancelled = true; feed.cancel(); }, 100);
  const { result } = await done;
  assert.equal(cancelled, true);
  assert.equal(result.status, 'cancelled');
});

test('test.changes.js-http: changes are not duplicated', LIVE, async () => {
  const db = await remote('not-duplicated');
  const { done } = liveFeed(db, {}, (_c, seen, feed) => {
    if (seen.length === 1) setTimeout(() => feed.cancel(), 1000);
  });
  await db.post({ key: 'value' });
  const { seen } = await done;
  assert.equal(seen.length, 1);
});

test('test.changes.js-http: supports return_docs=false', async () => {
  const db = await remote('return-docs-false');
  await db.bulkDocs({ docs: Array.from({ length: 10 }, (_, i) => ({ _id: `doc_${i}` })) });
  let count = 0;
  const feed = db.changes({ descending: true, return_docs: false });
  feed.on('change', () => { count++; });
  const res = await feed;
  assert.equal(res.results.length, 0);
  assert.equal(count, 10);
});

test('test.changes.js-http: should respects limit', async () => {
  const db = await remote('respects-limit');
  await db.bulkDocs({ docs: [{ _id: '_local/foo' }, { _id: 'a', integer: 0 }, { _id: 'b', integer: 1 }, { _id: 'c', integer: 2 }, { _id: 'd', integer: 3 }] });
  let called = 0;
  const feed = db.changes({ limit: 1 });
  feed.on('change', () => { called++; });
  await feed;
  await sleep(50);
  assert.equal(called, 1);
});

test("test.changes.js-http: doesn't throw if opts.complete is undefined", async () => {
  const db = await remote('no-complete');
  await db.put({ _id: 'foo' });
  await new Promise((resolve, reject) => {
    const feed = db.changes();
    feed.on('change', resolve);
    feed.on('error', reject);
  });
});

test('test.changes.js-http: handle individual changes in live replication', LIVE, async () => {
  const db = await remote('individual');
  const len = 80;
  const { done } = liveFeed(db, {}, (_c, seen, feed) => { if (seen.length === len) feed.cancel(); });
  await Promise.all(Array.from({ length: len }, () => db.post({})));
  const { seen } = await done;
  assert.equal(seen.length, len);
});

test('test.changes.js-http: changes-filter without filter', LIVE, async () => {
  const db = await remote('no-filter');
  await db.bulkDocs({ docs: ints(0, 3) });
  const { done } = liveFeed(db, {}, (_c, seen, feed) => { if (seen.length === 8) feed.cancel(); });
  await db.bulkDocs({ docs: ints(4, 7) });
  const { seen, result } = await done;
  assert.equal(result.status, 'cancelled');
  assert.equal(seen.length, 8);
});

test('test.changes.js-http: #3539 - Exception in changes is fine', LIVE, async () => {
  const db = await remote('3539');
  let count = 0;
  const feed = db.changes({ live: true });
  feed.on('change', () => {
    ++count;
    if (count === 1) throw new Error('deliberate error in changes');
    if (count === 3) feed.cancel();
  });
  const completed = new Promise((resolve) => feed.on('complete', resolve));
  await db.post({ test: 'some stuff' });
  await db.post({ test: 'more stuff' });
  await db.post({ test: 'and more stuff' });
  await completed;
  assert.equal(count, 3);
});

const users = [{ _id: '0', user: 'foo' }, { _id: '1', user: 'bar' }, { _id: '2', user: 'foo' }];

test('test.changes.js-http: Changes with selector (CouchDB 2 filter=_selector)', async () => {
  const db = await remote('selector');
  await db.bulkDocs({ docs: users });
  const res = await db.changes({ return_docs: true, selector: { user: 'foo' }, include_docs: true });
  assert.equal(res.results.length, 2, wire('/_changes'));
  assert.equal(findById(res.results, '0').doc.user, 'foo');
  assert.equal(findById(res.results, '2').doc.user, 'foo');
});

test('test.changes.js-http: Changes with selector, explicit filter (CouchDB 2 filter=_selector)', async () => {
  const db = await remote('selector-explicit');
  await db.bulkDocs({ docs: users });
  const res = await db.changes({ return_docs: true, selector: { user: 'foo' }, filter: '_selector', include_docs: true });
  assert.equal(res.results.length, 2, wire('/_changes'));
  assert.equal(findById(res.results, '0').doc.user, 'foo');
  assert.equal(findById(res.results, '2').doc.user, 'foo');
});

test('test.changes.js-http: Changes with limit and selector (CouchDB 2 filter=_selector)', async () => {
  const db = await remote('selector-limit');
  await db.bulkDocs({ docs: users });
  const one = await db.changes({ return_docs: true, limit: 1, selector: { user: 'foo' }, include_docs: true });
  assert.equal(one.results.length, 1, wire('/_changes'));
  const two = await db.changes({ return_docs: true, limit: 1, selector: { user: 'foo' }, include_docs: true, since: one.last_seq });
  assert.equal(two.results.length, 1, wire('/_changes'));
  assert.notEqual(one.results[0].doc._id, two.results[0].doc._id);
  assert.equal(one.results[0].doc.user, 'foo');
  assert.equal(two.results[0].doc.user, 'foo');
});

test('test.changes.js-http: Changes last_seq (CouchDB 1.x)', async () => {
  const db = await remote('last-seq');
  assert.equal((await db.changes()).last_seq, 0);
  await db.bulkDocs({ docs: [...ints(0, 3), { _id: '_design/foo', integer: 4, filters: { even: 'function (doc) { return doc.integer % 2 === 1; }' } }] });
  assert.equal((await db.changes()).last_seq, 5);
  const filtered = await db.changes({ filter: 'foo/even' });
  assert.equal(filtered.last_seq, 5, wire('/_changes'));
  assert.equal(filtered.results.length, 2);
});

test('test.changes.js-http: Changes last_seq with view instead of filter (CouchDB 1.x)', async () => {
  const db = await remote('last-seq-view');
  assert.equal((await db.changes()).last_seq, 0);
  await db.bulkDocs({ docs: [...ints(0, 3), { _id: '_design/foo', integer: 4, views: { even: { map: 'function (doc) { if (doc.integer % 2 === 1) { emit(doc._id, null) }; }' } } }] });
  assert.equal((await db.changes()).last_seq, 5);
  const filtered = await db.changes({ filter: '_view', view: 'foo/even' });
  assert.equal(filtered.last_seq, 5, wire('/_changes'));
  assert.equal(filtered.results.length, 2);
});

// ---------------------------------------------------------------------------------------------
// test.bulk_get.js-http
// ---------------------------------------------------------------------------------------------

const attachmentDoc = { _id: 'foo', _attachments: { 'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' } } };

/** A well-formed revision of the same generation that the document does not have. */
function otherRev(rev: string): string {
  const [gen, hash] = rev.split('-');
  const last = hash!.slice(-1) === '0' ? '1' : '0';
  return `${gen}-${hash!.slice(0, -1)}${last}`;
}

test('test.bulk_get.js-http: test bulk get with rev specified', async () => {
  const db = await remote('bg-rev');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev }] });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].ok._rev, rev);
});

test('test.bulk_get.js-http: test bulk get with latest=true', async () => {
  const db = await remote('bg-latest');
  const first = await db.post({ version: 'first' });
  await db.put({ _id: first.id, _rev: first.rev, version: 'second' });
  const res = await db.bulkGet({ docs: [{ id: first.id, rev: first.rev }], latest: true });
  assert.equal(res.results[0].docs[0].ok?.version, 'second', `${JSON.stringify(res)}\n${wire('_bulk_get')}`);
});

test('test.bulk_get.js-http: test bulk get with no rev specified', async () => {
  const db = await remote('bg-no-rev');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo' }] });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].ok._rev, rev);
});

test('test.bulk_get.js-http: test bulk get with bad revision specified', async () => {
  const db = await remote('bg-bad-rev');
  await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev: 'BAD_REV' }] });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].error?.error, 'bad_request', `${JSON.stringify(res)}\n${wire('_bulk_get')}`);
});

test('test.bulk_get.js-http: test bulk get with bad revision specified with latest=true', async () => {
  const db = await remote('bg-bad-rev-latest');
  await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev: 'BAD_REV' }], latest: true });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].error?.error, 'bad_request', `${JSON.stringify(res)}\n${wire('_bulk_get')}`);
});

test('test.bulk_get.js-http: test bulk get with non-existing revision specified', async () => {
  const db = await remote('bg-missing-rev');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev: otherRev(rev) }] });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].error?.error, 'not_found', `${JSON.stringify(res)}\n${wire('_bulk_get')}`);
});

test('test.bulk_get.js-http: #7756 test bulk get with non-existing revision specified with latest=true', async () => {
  const db = await remote('bg-missing-rev-latest');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev: otherRev(rev) }], latest: true });
  assert.equal(res.results[0].id, 'foo');
  assert.equal(res.results[0].docs[0].error?.error, 'not_found', `${JSON.stringify(res)}\n${wire('_bulk_get')}`);
});

test('test.bulk_get.js-http: _revisions is not returned by default', async () => {
  const db = await remote('bg-no-revisions');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev }] });
  assert.equal(res.results[0].docs[0].ok._revisions, undefined);
});

test('test.bulk_get.js-http: #5886 bulkGet with reserved id', async () => {
  const db = await remote('bg-reserved');
  const { rev } = await db.put({ _id: 'constructor', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'constructor', rev }] });
  assert.equal(res.results[0].docs[0].ok._id, 'constructor');
  assert.equal(res.results[0].docs[0].ok._revisions, undefined);
});

test('test.bulk_get.js-http: _revisions is returned when specified', async () => {
  const db = await remote('bg-revisions');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev }], revs: true });
  assert.equal(res.results[0].docs[0].ok._revisions.ids[0], rev.substring(2));
});

test('test.bulk_get.js-http: _revisions is returned when specified, using implicit rev', async () => {
  const db = await remote('bg-revisions-implicit');
  const { rev } = await db.put({ _id: 'foo', val: 1 });
  const res = await db.bulkGet({ docs: [{ id: 'foo' }], revs: true });
  assert.equal(res.results[0].docs[0].ok._revisions.ids[0], rev.substring(2));
});

test('test.bulk_get.js-http: attachments are not included by default', async () => {
  const db = await remote('bg-att-stub');
  const { rev } = await db.put(attachmentDoc);
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev }] });
  assert.equal(res.results[0].docs[0].ok._attachments['foo.txt'].stub, true);
});

test('test.bulk_get.js-http: attachments are included when specified', async () => {
  const db = await remote('bg-att');
  const { rev } = await db.put(attachmentDoc);
  const res = await db.bulkGet({ docs: [{ id: 'foo', rev }], attachments: true });
  assert.equal(res.results[0].docs[0].ok._attachments['foo.txt'].data, 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=');
});

test('test.bulk_get.js-http: attachments are included when specified, using implicit rev', async () => {
  const db = await remote('bg-att-implicit');
  await db.put(attachmentDoc);
  const res = await db.bulkGet({ docs: [{ id: 'foo' }], attachments: true });
  assert.equal(res.results[0].docs[0].ok._attachments['foo.txt'].data, 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=');
});

// ---------------------------------------------------------------------------------------------
// test.design_docs.js-http
// ---------------------------------------------------------------------------------------------

const scoresDdoc = {
  _id: '_design/foo',
  views: {
    scores: {
      map: 'function (doc) { if (doc.score) { emit(null, doc.score); } }',
      reduce: 'function (keys, values, rereduce) { return sum(values); }',
    },
  },
  filters: { even: 'function (doc) { return doc.integer % 2 === 0; }' },
};

test('test.design_docs.js-http: Test writing design doc', async () => {
  const db = await remote('dd-write');
  await db.post(scoresDdoc);
  await db.get('_design/foo');
});

test('test.design_docs.js-http: Changes filter', LIVE, async () => {
  const db = await remote('dd-changes-filter');
  await db.bulkDocs({ docs: [scoresDdoc, ...ints(0, 3)] });
  const { done } = liveFeed(db, { filter: 'foo/even' }, (_c, seen, feed) => { if (seen.length === 4) feed.cancel(); });
  await db.bulkDocs({ docs: ints(4, 7) }, {});
  const { seen, result } = await done;
  assert.equal(result.status, 'cancelled');
  assert.deepEqual(seen.map((c) => c.id).sort(), ['0', '2', '4', '6']);
});

test('test.design_docs.js-http: Basic views', async () => {
  const db = await remote('dd-views');
  await db.bulkDocs({ docs: [scoresDdoc, { _id: 'dale', score: 3 }, { _id: 'mikeal', score: 5 }, { _id: 'max', score: 4 }, { _id: 'nuno', score: 3 }] });
  const rows = await db.query('foo/scores', { reduce: false });
  assert.equal(rows.rows.length, 4);
  const reduced = await db.query('foo/scores');
  assert.equal(reduced.rows[0].value, 15);
});

test('test.design_docs.js-http: Concurrent queries', async () => {
  const db = await remote('dd-concurrent');
  await db.bulkDocs({ docs: [scoresDdoc, { _id: 'dale', score: 3 }] });
  const [a, b] = await Promise.all([db.query('foo/scores', { reduce: false }), db.query('foo/scores', { reduce: false })]);
  assert.equal(a.rows.length, 1);
  assert.equal(b.rows.length, 1);
});

// ---------------------------------------------------------------------------------------------
// test.compaction.js-http (the part before "NO MORE HTTP TESTS")
// ---------------------------------------------------------------------------------------------

test('test.compaction.js-http: #3350 compact should return {ok: true}', async () => {
  const db = await remote('cp-3350');
  const result = await new Promise<any>((resolve, reject) => db.compact((err: any, res: any) => (err ? reject(err) : resolve(res))));
  assert.deepEqual(result, { ok: true });
});

test('test.compaction.js-http: compact with options object', async () => {
  const db = await remote('cp-options');
  assert.deepEqual(await db.compact({}), { ok: true });
});

test('test.compaction.js-http: #2913 massively parallel compaction', { timeout: 90000 }, async () => {
  const db = await remote('cp-2913');
  await Promise.all(Array.from({ length: 30 }, async (_, i) => {
    await db.put({ _id: `doc_${i}` });
    await db.compact();
    const doc = await db.get(`doc_${i}`);
    await db.put(doc);
    await db.compact();
  }));
});

test('test.compaction.js-http: Compaction document with no revisions to remove', async () => {
  const db = await remote('cp-no-revs');
  await db.put({ _id: 'foo', value: 'bar' });
  await db.compact();
  await db.get('foo');
});

test('test.compaction.js-http: Compation on empty db', async () => {
  const db = await remote('cp-empty');
  await db.compact();
});

test('test.compaction.js-http: Compation on empty db with interval option', async () => {
  const db = await remote('cp-empty-interval');
  await db.compact({ interval: 199 });
});

test('test.compaction.js-http: Simple compation test', async () => {
  const db = await remote('cp-simple');
  const rev1 = (await db.post({ _id: 'foo', value: 'bar' })).rev;
  const rev2 = (await db.post({ _id: 'foo', _rev: rev1, value: 'baz' })).rev;
  await db.compact();
  const err = await failure(db.get('foo', { rev: rev1 }));
  assert.equal(err.status, 404, wire('/foo?rev='));
  assert.equal(err.name, 'not_found');
  await db.get('foo', { rev: rev2 });
});

/** Every revision of a branch but its leaf is gone after compaction; the leaf is readable. */
async function checkTree(db: any, tree: any[][]): Promise<void> {
  for (const branch of tree) {
    for (let i = 0; i < branch.length; i++) {
      const { _id, _rev } = branch[i];
      if (i < branch.length - 1) {
        const err = await failure(db.get(_id, { rev: _rev }));
        assert.equal(err.status, 404, `should be compacted: ${_rev}`);
      } else {
        await db.get(_id, { rev: _rev });
      }
    }
  }
}

const exampleTree = [
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-b', value: 'foo b' },
    { _id: 'foo', _rev: '3-c', value: 'foo c' }],
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-d', value: 'foo d' },
    { _id: 'foo', _rev: '3-e', value: 'foo e' },
    { _id: 'foo', _rev: '4-f', value: 'foo f' }],
  [{ _id: 'foo', _rev: '1-a', value: 'foo a' },
    { _id: 'foo', _rev: '2-g', value: 'foo g' },
    { _id: 'foo', _rev: '3-h', value: 'foo h' },
    { _id: 'foo', _rev: '4-i', value: 'foo i' },
    { _id: 'foo', _rev: '5-j', _deleted: true, value: 'foo j' }],
];

const exampleTree2 = [
  [{ _id: 'bar', _rev: '1-m', value: 'bar m' },
    { _id: 'bar', _rev: '2-n', value: 'bar n' },
    { _id: 'bar', _rev: '3-o', _deleted: true, value: 'foo o' }],
  [{ _id: 'bar', _rev: '2-n', value: 'bar n' },
    { _id: 'bar', _rev: '3-p', value: 'bar p' },
    { _id: 'bar', _rev: '4-r', value: 'bar r' },
    { _id: 'bar', _rev: '5-s', value: 'bar s' }],
  [{ _id: 'bar', _rev: '3-p', value: 'bar p' },
    { _id: 'bar', _rev: '4-t', value: 'bar t' },
    { _id: 'bar', _rev: '5-u', value: 'bar u' }],
];

test('test.compaction.js-http: Compact more complicated tree', async () => {
  const db = await remote('cp-tree');
  await putTree(db, exampleTree);
  await db.compact();
  await checkTree(db, exampleTree);
});

test('test.compaction.js-http: Compact two times more complicated tree', async () => {
  const db = await remote('cp-tree-twice');
  await putTree(db, exampleTree);
  await db.compact();
  await db.compact();
  await checkTree(db, exampleTree);
});

test('test.compaction.js-http: Compact database with at least two documents', async () => {
  const db = await remote('cp-two-docs');
  await putTree(db, exampleTree);
  await putTree(db, exampleTree2);
  await db.compact();
  await checkTree(db, exampleTree);
  await checkTree(db, exampleTree2);
});

test('test.compaction.js-http: Compact deleted document', async () => {
  const db = await remote('cp-deleted');
  const firstRev = (await db.put({ _id: 'foo' })).rev;
  await db.remove({ _id: 'foo', _rev: firstRev });
  await db.compact();
  const err = await failure(db.get('foo', { rev: firstRev }));
  assert.equal(err.status, 404);
  assert.equal(err.message, 'missing', wire('/foo?rev='));
});

test('test.compaction.js-http: Compact db with sql-injecty doc id', async () => {
  const db = await remote('cp-sql-injecty');
  const id = '\'sql_injection_here';
  const firstRev = (await db.put({ _id: id })).rev;
  await db.remove({ _id: id, _rev: firstRev });
  await db.compact();
  const err = await failure(db.get(id, { rev: firstRev }));
  assert.equal(err.status, 404);
  assert.equal(err.message, 'missing');
});

/** Every revision on every leaf's path, with its body when the server still has it. */
async function getRevisions(db: any, id: string): Promise<{ rev: string; doc?: any }[]> {
  const leaves = await db.get(id, { revs: true, open_revs: 'all' });
  const out: { rev: string; doc?: any }[] = [];
  for (const leaf of leaves) {
    const { start, ids } = leaf.ok._revisions;
    for (let i = 0; i < ids.length; i++) {
      const rev = `${start - i}-${ids[i]}`;
      try {
        out.push({ rev, doc: await db.get(id, { rev }) });
      } catch (err: any) {
        if (err.status !== 404) throw err;
        out.push({ rev });
      }
    }
  }
  return out;
}

test('test.compaction.js-http: Compaction removes non-leaf revs (#2807)', async () => {
  const db = await remote('cp-2807');
  const doc: any = { _id: 'foo' };
  doc._rev = (await db.put(doc)).rev;
  assert.equal((await getRevisions(db, 'foo')).length, 1);
  doc._rev = (await db.put(doc)).rev;
  const before = await getRevisions(db, 'foo');
  assert.equal(before.length, 2);
  assert.ok(before[0]!.doc && before[1]!.doc);
  await db.compact();
  const after = await getRevisions(db, 'foo');
  assert.equal(after.length, 2);
  assert.ok(after[0]!.doc);
  assert.equal(after[1]!.doc, undefined);
});

test('test.compaction.js-http: Compaction removes non-leaf revs pt 2 (#2807)', async () => {
  const db = await remote('cp-2807-2');
  const doc: any = { _id: 'foo' };
  doc._rev = (await db.put(doc)).rev;
  doc._rev = (await db.put(doc)).rev;
  await db.put(doc);
  await db.compact();
  const revs = await getRevisions(db, 'foo');
  assert.equal(revs.length, 3);
  assert.ok(revs[0]!.doc);
  assert.equal(revs[1]!.doc, undefined);
  assert.equal(revs[2]!.doc, undefined);
});

test('test.compaction.js-http: Compaction removes non-leaf revs pt 3 (#2807)', async () => {
  const db = await remote('cp-2807-3');
  await db.bulkDocs([
    { _id: 'foo', _rev: '1-a1', _revisions: { start: 1, ids: ['a1'] } },
    { _id: 'foo', _rev: '2-a2', _revisions: { start: 2, ids: ['a2', 'a1'] } },
    { _id: 'foo', _deleted: true, _rev: '3-a3', _revisions: { start: 3, ids: ['a3', 'a2', 'a1'] } },
    { _id: 'foo', _rev: '1-b1', _revisions: { start: 1, ids: ['b1'] } },
  ], { new_edits: false });
  const before = await getRevisions(db, 'foo');
  assert.equal(before.length, 4);
  assert.ok(before.every((r) => r.doc), JSON.stringify(before));
  await db.compact();
  const after = Object.fromEntries((await getRevisions(db, 'foo')).map((r) => [r.rev, r.doc]));
  assert.equal(Object.keys(after).length, 4);
  assert.equal(after['1-a1'], undefined);
  assert.equal(after['2-a2'], undefined);
  assert.ok(after['3-a3']);
  assert.ok(after['1-b1']);
});

test('test.compaction.js-http: Compaction removes non-leaf revs pt 4 (#2807) (it.skip in the http-era file)', async () => {
  const db = await remote('cp-2807-4');
  const doc: any = { _id: 'foo' };
  doc._rev = (await db.put(doc)).rev;
  doc._deleted = true;
  doc._rev = (await db.put(doc)).rev;
  delete doc._deleted;
  await db.put(doc);
  await db.compact();
  const revs = await getRevisions(db, 'foo');
  assert.equal(revs.length, 3);
  assert.ok(revs[0]!.doc);
  assert.equal(revs[1]!.doc, undefined);
  assert.equal(revs[2]!.doc, undefined);
});

test('test.compaction.js-http: Compaction removes non-leaf revs pt 5 (#2807)', async () => {
  const db = await remote('cp-2807-5');
  const doc: any = { _id: 'foo' };
  doc._rev = (await db.put(doc)).rev;
  doc._rev = (await db.put(doc)).rev;
  doc._deleted = true;
  await db.put(doc);
  await db.compact();
  const revs = await getRevisions(db, 'foo');
  assert.equal(revs.length, 3);
  assert.ok(revs[0]!.doc);
  assert.equal(revs[1]!.doc, undefined);
  assert.equal(revs[2]!.doc, undefined);
});

/** 50 attachment writes one after another, each followed by five concurrent compactions. */
async function attachmentsWhileCompacting(db: any, chained: boolean): Promise<void> {
  await db.put({ _id: 'doc' });
  const compactions: Promise<unknown>[] = [];
  let chain: Promise<unknown> = Promise.resolve();
  const five = () => Promise.all([db.compact(), db.compact(), db.compact(), db.compact(), db.compact()]);
  for (let i = 0; i < 50; i++) {
    const doc = await db.get('doc');
    const data = Buffer.from(Buffer.from(Math.random().toString()).toString('base64'));
    await db.putAttachment(doc._id, 'att.txt', doc._rev, data, 'text/plain');
    if (chained) chain = chain.then(five);
    else compactions.push(five());
  }
  await Promise.all(compactions);
  await chain;
}

test('test.compaction.js-http: #2931 - synchronous putAttachment + compact', { timeout: 90000 }, async () => {
  const db = await remote('cp-2931');
  await attachmentsWhileCompacting(db, false);
});

test('test.compaction.js-http: #2931 - synchronous putAttachment + compact 2', { timeout: 90000 }, async () => {
  const db = await remote('cp-2931-2');
  await attachmentsWhileCompacting(db, true);
});

// ---------------------------------------------------------------------------------------------
// test.http.js
// ---------------------------------------------------------------------------------------------

test('test.http.js: Create a pouch without DB setup (skip_setup)', async () => {
  const name = remoteName('skip-setup');
  const db = fx.open(name);
  await db.info();
  await db.destroy();
  const instant = openWith(name, { skip_setup: true });
  const err = await failure(instant.post({ test: 'abc' }));
  assert.equal(err.name, 'not_found', wire(`/${name}`));
});

test('test.http.js: Issue 1269 redundant _changes requests', async () => {
  const name = remoteName('1269');
  const db = fx.open(name);
  await db.bulkDocs({ docs: Array.from({ length: 100 }, (_, i) => ({ _id: `doc_${i}`, foo: `bar_${i}` })) });
  const { update_seq } = await db.info();
  const before = fx.proxy.log.length;
  await db.changes({ since: update_seq });
  const calls = fx.proxy.log.slice(before).filter((e) => e.path.startsWith(`/${name}/_changes`));
  assert.equal(calls.length, 1, wire(`/${name}/_changes`));
});

test('test.http.js: handle ddocs with slashes', async () => {
  const db = await remote('ddoc-slashes');
  await db.bulkDocs({ docs: [{ _id: '_design/foo/bar' }] });
  const doc = await db.get('_design/foo/bar');
  assert.equal(doc._id, '_design/foo/bar', wire('_design'));
});

test('test.http.js: Properly escape url params #4008', async () => {
  const name = remoteName('4008');
  const urls: string[] = [];
  const db = openWith(name, { fetch: (url: string, opts: any) => { urls.push(url); return PouchDB.fetch(url, opts); } });
  await db.changes({ doc_ids: ['1'] });
  assert.ok(urls.length > 0);
  for (const url of urls) assert.ok(!url.includes('['), url);
});

test('test.http.js: Test custom header', async () => {
  const name = remoteName('custom-header');
  const db = openWith(name, { headers: { 'X-Custom': 'some-custom-header' } });
  await db.info();
  const sent = fx.proxy.log.filter((e) => e.path.startsWith(`/${name}`));
  assert.ok(sent.length > 0 && sent.every((e) => e.requestHeaders['x-custom'] === 'some-custom-header'));
});

test('test.http.js: test url too long error for allDocs()', async () => {
  const db = await remote('url-too-long');
  const docs = Array.from({ length: 75 }, (_, i) => ({ _id: `fairly_long_doc_name_${i}` }));
  await db.bulkDocs(docs);
  const res = await db.allDocs({ keys: docs.map((d) => d._id) });
  assert.equal(res.rows.length, 75);
});

test('test.http.js: changes respects seq_interval', async () => {
  const db = await remote('seq-interval');
  await db.bulkDocs([{ _id: '0', integer: 0, string: '0' }, { _id: '1', integer: 1, string: '1' }, { _id: '2', integer: 2, string: '2' }]);
  let count = 0;
  const feed = db.changes({ seq_interval: 4, return_docs: true });
  feed.on('change', () => { count++; });
  const info = await feed;
  assert.equal(count, 3);
  // CouchDB 1.x has no seq_interval: every change carries its seq.
  assert.ok(info.results.every((r: any) => r.seq !== null), JSON.stringify(info));
  assert.notEqual(info.last_seq, null);
});

test('test.http.js: 5814 Ensure prefix has trailing /', async () => {
  const prefix = fx.proxy.url.replace(/\/$/, '');
  const db = new PouchDB(remoteName('prefix-5814'), { prefix });
  extra.push(db);
  await db.info();
  await db.destroy();
});

test('test.http.js: 5574 Create a pouch with / in name and prefix url (CouchDB 1.x allows /)', async () => {
  const name = `${remoteName('prefix-5574')}/suffix`;
  const db = new PouchDB(name, { prefix: fx.proxy.url });
  extra.push(db);
  await db.info();
  assert.ok(fx.proxy.log.some((e) => e.path.startsWith(`/${encodeURIComponent(name)}`)), wire('prefix-5574'));
  assert.equal((await fx.raw.get(`/${encodeURIComponent(name)}`)).status, 200);
  await db.destroy();
  assert.equal((await fx.raw.get(`/${encodeURIComponent(name)}`)).status, 404);
});

// ---------------------------------------------------------------------------------------------
// test.views.js-local-http: the tests that read from the Settee database
// ---------------------------------------------------------------------------------------------

test('test.views.js-local-http: Views should include _conflicts', async () => {
  const db = fx.local('views-conflicts-local');
  const rdb = await remote('views-conflicts');
  await db.post({ _id: '1', foo: 'bar' });
  await rdb.post({ _id: '1', foo: 'baz' });
  await db.replicate.from(rdb);
  const doc = await db.get('1', { conflicts: true });
  assert.ok(doc._conflicts);
  const res = await db.query((d: any) => { emit(d._id, !!d._conflicts); });
  assert.equal(res.rows[0].value, true);
});

test('test.views.js-local-http: Map only documents with _conflicts (#1000)', async () => {
  const db = fx.local('views-conflicts-1000-local');
  const rdb = await remote('views-conflicts-1000');
  const res = await db.bulkDocs({ docs: [{ _id: '1', foo: 'bar' }, { _id: '2', name: 'two' }] });
  const revId1 = res[0].rev;
  const revId2 = (await rdb.post({ _id: '1', foo: 'baz' })).rev;
  await db.replicate.from(rdb);
  const doc = await db.get('1', { conflicts: true });
  const loser = doc._rev === revId1 ? revId2 : revId1;
  assert.ok(doc._conflicts);
  const rows = await db.query((d: any) => { if (d._conflicts) emit(d._id, d._conflicts); });
  assert.equal(rows.rows.length, 1);
  assert.equal(rows.rows[0].key, '1');
  assert.deepEqual(rows.rows[0].value, [loser]);
});

// ---------------------------------------------------------------------------------------------
// test.ajax.node.js: PouchDB's fetch keeps cookies. Last in the file: it signs in and out.
// ---------------------------------------------------------------------------------------------

test('test.ajax.node.js: #6815 ajax uses cookies (a Settee session cookie)', async () => {
  const user = await fx.raw.put('/_users/org.couchdb.user:cookie-user', { name: 'cookie-user', password: 'cookie-pw', roles: [], type: 'user' });
  assert.equal(user.status, 201, user.text);
  const db = await remote('cookies');
  try {
    const login = await PouchDB.fetch(`${fx.proxy.url}_session`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'cookie-user', password: 'cookie-pw' }),
    });
    assert.equal(login.status, 200);
    const session = await (await PouchDB.fetch(`${fx.proxy.url}_session`)).json();
    assert.equal(session.userCtx.name, 'cookie-user', JSON.stringify(session));
    // The HTTP adapter's requests carry the cookie too.
    const before = fx.proxy.log.length;
    await db.info();
    const sent = fx.proxy.log.slice(before);
    assert.ok(sent.length > 0 && sent.every((e) => String(e.requestHeaders.cookie ?? '').includes('AuthSession=')), wire('/psc-'));
  } finally {
    const logout = await PouchDB.fetch(`${fx.proxy.url}_session`, { method: 'DELETE' });
    assert.equal(logout.status, 200);
  }
  const after = await (await PouchDB.fetch(`${fx.proxy.url}_session`)).json();
  assert.equal(after.userCtx.name, null, JSON.stringify(after));
});
