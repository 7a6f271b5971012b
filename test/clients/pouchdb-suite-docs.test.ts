/**
 * PouchDB's own integration tests for documents, ported to run against Settee through PouchDB 9's
 * HTTP adapter (every remote request goes through the logging proxy of pouch-fixture.ts).
 *
 * Ported from pouchdb/pouchdb tests/integration/ (their latest versions; two tests come from
 * earlier versions, marked where they are): test.basics.js, test.get.js, test.bulk_docs.js,
 * test.all_docs.js, test.local_docs.js, test.reserved.js, test.slash_id.js, test.revs_diff.js
 * and test.conflicts.js: their `http` variants, and for the replication pairs of test.reserved.js
 * and test.slash_id.js the `local-http`, `http-http` and `http-local` ones (`local` is a leveldb
 * PouchDB in a temporary directory). One `test` per PouchDB test, named as PouchDB names it,
 * grouped by PouchDB's `describe`; PouchDB's callback/promise twins (e.g. "Add a doc", "Add a doc
 * with a promise") are one test here, named after both, as with promises they are the same test.
 * Where PouchDB branches on the server, the CouchDB 1.x branch is taken.
 *
 * Left out: test.uuids.js (PouchDB's own uuid generator, no server involved); test.basics.js's
 * 96 "illegal rev value" tests (PouchDB rejects those revs itself before any request); tests of
 * the client object or of local adapters only: the constructor (without `new`, without a name,
 * `name`), calls after close(), plugins and `PouchDB.destroy` overrides, `this` binding,
 * replication to an invalid URL (a network error), databases named without a URL (`__proto__`,
 * `constructor`: local), unicode and `\u0000` ids, `_access`, blob support, revs_limit (local
 * only), purge (the http adapter has none), test.bulk_docs.js's local-only _local deletions;
 * test.get.js's tests PouchDB itself skips (`it.skip`: some open_revs, open_revs on a missing
 * doc, the COUCHDB-3239/3240 latest=true cases).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import { PouchFixture, failure } from './pouch-fixture.js';

let fx: PouchFixture;

before(async () => {
  fx = await PouchFixture.start('settee-pouch-suite-docs-');
});
after(async () => fx.close());

/** The exchanges with a path containing `fragment`, for assertion messages. */
const wire = (fragment: string) => fx.proxy.show(fragment);

// PouchDB's error constants (pouchdb-errors), as the suite compares against them.
const MISSING_DOC = { status: 404, name: 'not_found', message: 'missing' };
const RESERVED_ID = { status: 400, name: 'bad_request', message: 'Only reserved document ids may start with underscore.' };
const MISSING_ID = { status: 412, name: 'missing_id', message: '_id is required for puts' };
const DOC_VALIDATION = { name: 'doc_validation', message: 'Bad special document member' };
const MISSING_BULK_DOCS = { status: 400, name: 'bad_request', message: "Missing JSON list of 'docs'" };
const NOT_AN_OBJECT = { status: 400, name: 'bad_request', message: 'Document must be a JSON object' };

/** A database of one side of a replication pair: `http` is Settee, `local` is leveldb. */
function side(kind: string, name: string): Promise<any> {
  return kind === 'http' ? fx.remote(name) : Promise.resolve(fx.local(name));
}

// testUtils.putAfter / putBranch / putTree / writeDocs, as PouchDB's suite defines them.
async function putAfter(db: any, doc: any, prevRev: string | null): Promise<unknown> {
  const newDoc = { ...doc };
  if (prevRev) {
    newDoc._revisions = { start: Number(newDoc._rev.split('-')[0]), ids: [newDoc._rev.split('-')[1], prevRev.split('-')[1]] };
  }
  return db.put(newDoc, { new_edits: false });
}

async function putBranch(db: any, docs: any[]): Promise<void> {
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i];
    const prev = i > 0 ? docs[i - 1]._rev : null;
    try {
      await db.get(doc._id, { rev: doc._rev });
    } catch {
      await putAfter(db, doc, prev).catch(() => undefined);
    }
  }
}

async function putTree(db: any, tree: any[][]): Promise<void> {
  for (const branch of tree) await putBranch(db, branch);
}

async function writeDocs(db: any, docs: any[]): Promise<any[]> {
  const res = [];
  for (const doc of docs) res.push(await db.put(doc));
  return res;
}

const byRev = (a: any, b: any) => (a._rev === b._rev ? 0 : a._rev < b._rev ? -1 : 1);
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const origDocs = [
  { _id: '0', a: 1, b: 1 },
  { _id: '3', a: 4, b: 16 },
  { _id: '1', a: 2, b: 4 },
  { _id: '2', a: 3, b: 9 },
];

/** The conflicts test.get.js adds to document '3' (written from origDocs) with new_edits=false. */
function getConflicts(parentHash: string) {
  return [
    { _id: '3', _rev: '2-aaa', value: 'x', _revisions: { start: 2, ids: ['aaa', parentHash] } },
    { _id: '3', _rev: '3-bbb', value: 'y', _deleted: true, _revisions: { start: 3, ids: ['bbb', 'some', parentHash] } },
    { _id: '3', _rev: '4-ccc', value: 'z', _revisions: { start: 4, ids: ['ccc', 'even', 'more', parentHash] } },
  ];
}

/** The six-revision tree of test.get.js's 5857 tests: 4-d1 wins, 3-c2 is a losing leaf. */
function latestTree() {
  const rev = (r: string, value: string, ids: string[]) => ({ _id: 'mydoc', _rev: r, value, _revisions: { start: Number(r.split('-')[0]), ids } });
  return [
    rev('1-a', 'first', ['a']),
    rev('2-b1', 'x-winning', ['b1', 'a']),
    rev('3-c1', 'y-winning', ['c1', 'b1', 'a']),
    rev('2-b2', 'x-losing', ['b2', 'a']),
    rev('3-c2', 'y-losing', ['c2', 'b2', 'a']),
    rev('4-d1', 'z-winning', ['d1', 'c1', 'b1', 'a']),
  ];
}

// ---------------------------------------------------------------------------------------------

describe('test.basics.js-http', () => {
  test('4314 Create a pouch with + in name', async () => {
    const db = new PouchDB(`${fx.proxy.url}sd-basics-plus+suffix`);
    await db.info();
    const all = await fx.raw.get('/_all_dbs');
    assert.ok(all.body.includes('sd-basics-plus+suffix'), `${all.text}\n${wire('plus')}`);
    await db.destroy();
  });

  test('4314 Create a pouch with urlencoded name', async () => {
    const db = new PouchDB(`${fx.proxy.url}sd-basics-some%2Ftest`);
    await db.info();
    const all = await fx.raw.get('/_all_dbs');
    assert.ok(all.body.includes('sd-basics-some/test'), `${all.text}\n${wire('some')}`);
    await db.destroy();
  });

  test('4219 destroy a pouch', async () => {
    const res = await fx.open('sd-basics-4219').destroy({});
    assert.equal(res.ok, true, wire('sd-basics-4219'));
  });

  test('4339 throw useful error if method called on stale instance', async () => {
    const db = await fx.remote('sd-basics-4339');
    await db.put({ _id: 'cleanTest' });
    await db.destroy();
    const err = await failure(db.get('cleanTest'));
    assert.ok(err instanceof Error);
  });

  test('Add a doc (and: with a promise, with opts object)', async () => {
    const db = await fx.remote('sd-basics-add');
    assert.equal((await db.post({ test: 'somestuff' })).ok, true);
    assert.equal((await db.post({ test: 'somestuff' }, {})).ok, true);
  });

  test('Get invalid id', async () => {
    const db = await fx.remote('sd-basics-invalid-id');
    assert.ok(await failure(db.get(1234)));
  });

  test('Missing doc should contain ID in error object', async () => {
    const db = await fx.remote('sd-basics-missing-docid');
    const err = await failure(db.get('abc-123'));
    assert.equal(err.docId, 'abc-123');
  });

  test('PUTed Conflicted doc should contain ID in error object', async () => {
    const db = await fx.remote('sd-basics-put-conflict-id');
    const info = await db.post({});
    const err = await failure(db.put({ _id: info.id }));
    assert.equal(err.status, 409);
    assert.equal(err.docId, info.id);
  });

  test('POSTed Conflicted doc should contain ID in error object', async () => {
    const db = await fx.remote('sd-basics-post-conflict-id');
    const info = await db.post({});
    const err = await failure(db.post({ _id: info.id }));
    assert.equal(err.status, 409, wire('sd-basics-post-conflict-id'));
    assert.equal(err.docId, info.id);
  });

  test('Modify a doc (and: with a promise)', async () => {
    const db = await fx.remote('sd-basics-modify');
    const info = await db.post({ test: 'somestuff' });
    const info2 = await db.put({ _id: info.id, _rev: info.rev, another: 'test' });
    assert.notEqual(info.rev, info2.rev);
  });

  test('Modifying a doc that has rewritten content', async () => {
    const db = await fx.remote('sd-basics-rewritten-content');
    const doc: any = { _id: 'foo', 'something.that': null, 'needs-to-be': false, 'rewritten!': true };
    doc._rev = (await db.put(doc)).rev;
    doc.foo = 'bar';
    doc._rev = (await db.put(doc)).rev;
    assert.deepEqual(await db.get('foo'), doc);
  });

  test('Read db id (and: with promise)', async () => {
    const db = await fx.remote('sd-basics-id');
    const id = await db.id();
    assert.equal(typeof id, 'string');
    // CouchDB's welcome has a `uuid`: PouchDB's id is it plus the database name, not the URL.
    assert.ok(!id.startsWith('http'), `${id}\n${wire('')}`);
  });

  test('Close db (and: with a promise)', async () => {
    const db = await fx.remote('sd-basics-close');
    await db.info();
    await db.close();
  });

  test('Read db id after closing Close', async () => {
    const db = await fx.remote('sd-basics-id-after-close');
    await db.close();
    const again = fx.open('sd-basics-id-after-close');
    assert.equal(typeof (await again.id()), 'string');
  });

  test('Modify a doc with incorrect rev', async () => {
    const db = await fx.remote('sd-basics-incorrect-rev');
    const info = await db.post({ test: 'somestuff' });
    const err = await failure(db.put({ _id: info.id, _rev: `${info.rev}broken`, another: 'test' }));
    assert.ok(err);
  });

  test('Remove doc (and: with a promise)', async () => {
    const db = await fx.remote('sd-basics-remove');
    const info = await db.post({ test: 'somestuff' });
    await db.remove({ test: 'somestuff', _id: info.id, _rev: info.rev });
    const err = await failure(db.get(info.id));
    assert.ok(err.error);
  });

  test('Remove doc with new syntax (and: and a promise)', async () => {
    const db = await fx.remote('sd-basics-remove-new-syntax');
    const info = await db.post({ test: 'somestuff' });
    await db.remove(info.id, info.rev);
    const err = await failure(db.get(info.id));
    assert.ok(err.error);
  });

  test('Doc removal leaves only stub', async () => {
    const db = await fx.remote('sd-basics-removal-stub');
    await db.put({ _id: 'foo', value: 'test' });
    const doc = await db.get('foo');
    const res = await db.remove(doc);
    const stub = await db.get('foo', { rev: res.rev });
    assert.deepEqual(stub, { _id: res.id, _rev: res.rev, _deleted: true }, wire('sd-basics-removal-stub/foo?rev'));
  });

  test('Remove doc twice with specified id', async () => {
    const db = await fx.remote('sd-basics-remove-twice');
    await db.put({ _id: 'specifiedId', test: 'somestuff' });
    await db.remove(await db.get('specifiedId'));
    await db.put({ _id: 'specifiedId', test: 'somestuff2' });
    await db.remove(await db.get('specifiedId'));
  });

  test('Remove doc, no callback', { timeout: 30000 }, async () => {
    const db = await fx.remote('sd-basics-remove-live');
    const completed = new Promise<any>((resolve, reject) => {
      const changes = db.changes({ live: true, include_docs: true })
        .on('change', (change: any) => {
          if (change.doc._deleted) changes.cancel();
        })
        .on('complete', resolve)
        .on('error', reject);
    });
    const res = await db.post({ _id: 'somestuff' });
    await db.remove({ _id: res.id, _rev: res.rev });
    const result = await completed;
    assert.equal(result.status, 'cancelled');
  });

  test('Delete document without id', async () => {
    const db = await fx.remote('sd-basics-delete-no-id');
    assert.ok(await failure(db.remove({ test: 'ing' })));
  });

  test('Delete document with many args (and: callback style)', async () => {
    const db = await fx.remote('sd-basics-delete-many-args');
    const doc = { _id: 'foo' };
    const info = await db.put(doc);
    assert.equal((await db.remove(doc._id, info.rev, {})).ok, true);
  });

  test('Delete doc with id + rev + no opts (and: callback style)', async () => {
    const db = await fx.remote('sd-basics-delete-id-rev');
    const info = await db.put({ _id: 'foo' });
    assert.equal((await db.remove('foo', info.rev)).ok, true);
  });

  test('Delete doc with doc + opts (and: callback style)', async () => {
    const db = await fx.remote('sd-basics-delete-doc-opts');
    const doc: any = { _id: 'foo' };
    doc._rev = (await db.put(doc)).rev;
    assert.equal((await db.remove(doc, {})).ok, true);
  });

  test('Delete doc with rev in opts', async () => {
    const db = await fx.remote('sd-basics-delete-rev-opts');
    const doc = { _id: 'foo' };
    const info = await db.put(doc);
    assert.equal((await db.remove(doc, { rev: info.rev })).ok, true, wire('sd-basics-delete-rev-opts'));
  });

  test('Bulk docs (and: with a promise)', async () => {
    const db = await fx.remote('sd-basics-bulk');
    const infos = await db.bulkDocs({ docs: [{ test: 'somestuff' }, { test: 'another' }] });
    assert.equal(infos.length, 2);
    assert.equal(infos[0].ok, true);
    assert.equal(infos[1].ok, true);
  });

  test('Basic checks', async () => {
    const db = await fx.remote('sd-basics-basic-checks');
    let info = await db.info();
    const updateSeq = info.update_seq;
    assert.equal(info.doc_count, 0);
    const res = await db.put({ _id: '0', a: 1, b: 1 });
    assert.equal(res.ok, true);
    assert.ok('id' in res && 'rev' in res);
    info = await db.info();
    assert.equal(info.doc_count, 1);
    assert.notEqual(info.update_seq, updateSeq);
    const doc = await db.get('0');
    assert.equal(doc._id, res.id);
    assert.equal(doc._rev, res.rev);
    const withInfo = await db.get('0', { revs_info: true });
    assert.equal(withInfo._revs_info[0].status, 'available');
  });

  test('update with invalid rev', async () => {
    const db = await fx.remote('sd-basics-invalid-rev');
    const info = await db.post({ test: 'somestuff' });
    const err = await failure(db.put({ _id: info.id, _rev: 'undefined', another: 'test' }));
    assert.equal(err.name, 'bad_request');
  });

  test('Doc validation', async () => {
    const db = await fx.remote('sd-basics-doc-validation');
    const badDocs = [
      { _zing: 4 },
      { _zoom: 'hello' },
      { zane: 'goldfish', _fan: 'something smells delicious' },
      { _bing: { 'wha?': 'soda can' } },
    ];
    const err = await failure(db.bulkDocs({ docs: badDocs }));
    assert.equal(err.name, DOC_VALIDATION.name, wire('sd-basics-doc-validation/_bulk_docs'));
    assert.equal(err.message, `${DOC_VALIDATION.message}: _zing`);
  });

  test('Replication fields (#2442)', async () => {
    const db = await fx.remote('sd-basics-replication-fields');
    const resp = await db.post({
      _replication_id: 'test',
      _replication_state: 'triggered',
      _replication_state_time: 1,
      _replication_stats: {},
    });
    const doc = await db.get(resp.id);
    assert.equal(doc._replication_id, 'test');
    assert.equal(doc._replication_state, 'triggered');
    assert.equal(doc._replication_state_time, 1);
    assert.deepEqual(doc._replication_stats, {});
  });

  test('Testing issue #48', async () => {
    const db = await fx.remote('sd-basics-issue48');
    const docs = ['0', '1', '2', '3', '4', '5'].map((_id) => ({ _id }));
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < 5; i++) {
      sends.push(db.bulkDocs({ docs: clone(docs) }));
      await sleep(10);
    }
    await Promise.all(sends);
  });

  test('Testing valid id', async () => {
    const db = await fx.remote('sd-basics-valid-id');
    const err = await failure(db.post({ _id: 123, test: 'somestuff' }));
    assert.ok(['bad_request', 'illegal_docid'].includes(err.name), err.name);
  });

  test('Put doc without _id should fail', async () => {
    const db = await fx.remote('sd-basics-put-no-id');
    const err = await failure(db.put({ test: 'somestuff' }));
    assert.equal(err.message, MISSING_ID.message);
  });

  test('Put doc with bad reserved id should fail', async () => {
    const db = await fx.remote('sd-basics-reserved-id');
    const err = await failure(db.put({ _id: '_i_test', test: 'somestuff' }));
    assert.equal(err.status, RESERVED_ID.status);
    assert.equal(err.message, RESERVED_ID.message);
  });

  test('update_seq persists', async () => {
    const db = await fx.remote('sd-basics-update-seq-persists');
    await db.post({ test: 'somestuff' });
    await db.close();
    const info = await fx.open('sd-basics-update-seq-persists').info();
    assert.notEqual(info.update_seq, 0);
    assert.equal(info.doc_count, 1);
  });

  test('deletions persists', async () => {
    const db = await fx.remote('sd-basics-deletions-persist');
    const doc = { _id: 'staticId', contents: 'stuff' };
    for (let i = 0; i < 2; i++) {
      const info = await db.put(doc);
      await db.remove({ _id: info.id, _rev: info.rev });
    }
    await db.put(doc);
    const details = await db.get(doc._id, { conflicts: true });
    assert.ok(!('_conflicts' in details), JSON.stringify(details));
  });

  test('#4126 should not store raw Dates', async () => {
    const db = await fx.remote('sd-basics-dates');
    const date = new Date();
    const date2 = new Date();
    const date3 = new Date();
    const docs: any[] = [
      { _id: '1', mydate: date },
      { _id: '2', array: [date2] },
      { _id: '3', deep: { deeper: { deeperstill: date3 } } },
    ];
    await db.bulkDocs(docs);
    const res = await db.allDocs({ include_docs: true });
    const stored = res.rows.map((row: any) => {
      delete row.doc._rev;
      return row.doc;
    });
    assert.deepEqual(stored, [
      { _id: '1', mydate: date.toJSON() },
      { _id: '2', array: [date2.toJSON()] },
      { _id: '3', deep: { deeper: { deeperstill: date3.toJSON() } } },
    ]);
    assert.ok(docs[0].mydate instanceof Date);
    assert.ok(docs[1].array[0] instanceof Date);
    assert.ok(docs[2].deep.deeper.deeperstill instanceof Date);
  });

  // PouchDB's `Should error when document is not an object #i` describe blocks.
  const notObjects: unknown[] = [undefined, null, [], [{ _id: 'foo' }, { _id: 'bar' }], 'this is not an object', String('this is not an object')];
  notObjects.forEach((badDoc, idx) => {
    describe(`Should error when document is not an object #${idx}`, () => {
      const expectNotAnObject = async (call: (db: any) => Promise<unknown>, what: string) => {
        const db = await fx.remote(`sd-basics-not-object-${idx}-${what}`);
        const err = await failure(call(db));
        assert.equal(err.message, NOT_AN_OBJECT.message, wire(`sd-basics-not-object-${idx}-${what}`));
      };
      test('should error for .post()', () => expectNotAnObject((db) => db.post(badDoc), 'post'));
      test('should error for .put()', () => expectNotAnObject((db) => db.put(badDoc), 'put'));
      test('should error for .bulkDocs()', () => expectNotAnObject((db) => db.bulkDocs({ docs: [badDoc] }), 'bulk'));
    });
  });

  test('Test instance update_seq updates correctly', async () => {
    const db1 = await fx.remote('sd-basics-two-instances');
    const db2 = fx.open('sd-basics-two-instances');
    await db1.post({ a: 'doc' });
    assert.notEqual((await db1.info()).update_seq, 0);
    assert.notEqual((await db2.info()).update_seq, 0);
  });

  /** The body of both 'Fail to fetch a doc after db was deleted' tests. */
  async function fetchAfterDelete(name: string) {
    const db = await fx.remote(name);
    const db2 = fx.open(name);
    await db.put({ _id: 'foodoc' });
    await db2.put({ _id: 'foodoc2' });
    assert.equal((await db.allDocs()).total_rows, 2);
    await db.destroy();
    return failure(fx.open(name).get('foodoc'));
  }

  test('Fail to fetch a doc after db was deleted', async () => {
    const err = await fetchAfterDelete('sd-basics-fetch-after-delete');
    assert.equal(err.name, 'not_found');
    assert.equal(err.status, 404);
  });

  test('Fail to fetch a doc after db was deleted (re-test)', async () => {
    const err = await fetchAfterDelete('sd-basics-fetch-after-delete-2');
    assert.equal(err.status, 404);
  });

  test('Cant add docs with empty ids', async () => {
    const db = await fx.remote('sd-basics-empty-ids');
    const docs: any[] = [{}, { _id: null }, { _id: undefined }, { _id: '' }, { _id: {} }, { _id: '_underscored_id' }];
    for (const doc of docs) assert.ok(await failure(db.put(doc)), JSON.stringify(doc));
  });

  test('Test doc with percent in ID', async () => {
    const db = await fx.remote('sd-basics-percent-id');
    const doc = { foo: 'bar', _id: 'foo%bar' };
    const res = await db.put(doc);
    assert.equal(res.id, 'foo%bar');
    assert.equal(doc.foo, 'bar');
    assert.equal((await db.get('foo%bar'))._id, 'foo%bar');
    const all = await db.allDocs({ include_docs: true });
    const x = all.rows[0];
    assert.equal(x.id, 'foo%bar');
    assert.equal(x.doc._id, 'foo%bar');
    assert.equal(x.key, 'foo%bar');
    assert.ok(x.doc._rev);
  });

  test('db.info should give auto_compaction = false (#2744)', async () => {
    await fx.raw.put('/sd-basics-autocompaction-false');
    const db = new PouchDB(`${fx.proxy.url}sd-basics-autocompaction-false`, { auto_compaction: false });
    assert.equal((await db.info()).auto_compaction, false);
    await db.close();
  });

  test('db.info should give auto_compaction = true (#2744)', async () => {
    await fx.raw.put('/sd-basics-autocompaction-true');
    const db = new PouchDB(`${fx.proxy.url}sd-basics-autocompaction-true`, { auto_compaction: true });
    // the http adapter doesn't support auto compaction
    assert.equal((await db.info()).auto_compaction, false);
    await db.close();
  });

  test('db.info should give adapter name (#3567)', async () => {
    const db = await fx.remote('sd-basics-adapter-name');
    assert.equal((await db.info()).adapter, db.adapter);
  });

  test('db.info should give correct doc_count', async () => {
    const db = await fx.remote('sd-basics-doc-count');
    assert.equal((await db.info()).doc_count, 0);
    await db.bulkDocs({ docs: [{ _id: '1' }, { _id: '2' }, { _id: '3' }] });
    assert.equal((await db.info()).doc_count, 3);
    await db.remove(await db.get('1'));
    assert.equal((await db.info()).doc_count, 2);
  });

  test('putting returns {ok: true}', async () => {
    const db = await fx.remote('sd-basics-put-ok');
    assert.equal((await db.put({ _id: '_local/foo' })).ok, true, 'putting local returns ok=true');
    assert.equal((await db.put({ _id: 'quux' })).ok, true, 'putting returns ok=true');
    const bulk = await db.bulkDocs([{ _id: '_local/bar' }, { _id: 'baz' }]);
    assert.equal(bulk.length, 2);
    assert.equal(bulk[0].ok, true, `bulk docs says ok=true #1\n${wire('sd-basics-put-ok/_bulk_docs')}`);
    assert.equal(bulk[1].ok, true, 'bulk docs says ok=true #2');
    assert.equal((await db.post({})).ok, true, 'posting returns ok=true');
  });

  test('issue 2779, deleted docs, old revs COUCHDB-292', async () => {
    const db = await fx.remote('sd-basics-2779');
    const { rev } = await db.put({ _id: 'foo' });
    await db.remove('foo', rev);
    await failure(db.get('foo'));
    assert.ok(await failure(db.put({ _id: 'foo', _rev: rev })), wire('sd-basics-2779'));
  });

  test('issue 2888, successive deletes and writes', async () => {
    const db = await fx.remote('sd-basics-2888');
    const checkNumRevisions = async (num: number) => {
      const fullDocs = await db.get('foo', { open_revs: 'all', revs: true });
      assert.equal(fullDocs[0].ok._revisions.ids.length, num, wire('sd-basics-2888/foo?'));
    };
    let { rev } = await db.put({ _id: 'foo' });
    await checkNumRevisions(1);
    await db.remove('foo', rev);
    await checkNumRevisions(2);
    ({ rev } = await db.put({ _id: 'foo' }));
    await checkNumRevisions(3);
    await db.remove('foo', rev);
    await checkNumRevisions(4);
  });

  test('2 invalid puts', async () => {
    const db = await fx.remote('sd-basics-two-invalid-puts');
    const errs = await Promise.all([
      failure(db.put({ _id: 'foo', _zing: 'zing' })),
      failure(db.put({ _id: 'bar', _zing: 'zing' })),
    ]);
    for (const err of errs) assert.equal(err.name, 'doc_validation');
  });

  test('Docs save "null" value', async () => {
    const db = await fx.remote('sd-basics-null-value');
    await db.put({ _id: 'doc', foo: null });
    const doc = await db.get('doc');
    assert.equal(doc.foo, null);
    assert.deepEqual(Object.keys(doc).sort(), ['_id', '_rev', 'foo']);
  });

  test('3968, keeps all object fields', async () => {
    const db = await fx.remote('sd-basics-object-fields');
    const doc = {
      _id: 'x', type: 'testdoc', watch: 1, unwatch: 1, constructor: 1, toString: 1, toSource: 1,
      toLocaleString: 1, propertyIsEnumerable: 1, isPrototypeOf: 1, hasOwnProperty: 1,
    };
    await db.put(doc);
    const saved = await db.get('x');
    assert.ok(!('_rev' in doc));
    delete saved._rev;
    assert.deepEqual(saved, doc);
  });

  // PouchDB skips this for a CouchDB 1.x server ("CouchDB 1.X has a bug which allows this insertion
  // via bulk_docs"); PouchDB 9's http adapter writes one document with PUT, where CouchDB 1.6's
  // couch_db:prep_and_validate_updates answers a conflict for revs given for a missing document.
  test('4712 invalid rev for new doc generates conflict', async () => {
    const db = await fx.remote('sd-basics-4712');
    const err = await failure(db.put({ _id: 'foobar', _rev: '1-123' }));
    assert.equal(err.name, 'conflict', wire('sd-basics-4712'));
    assert.equal(err.status, 409);
  });

  test('#9094 should update total_rows when doc is put with an attachment', async () => {
    const db = await fx.remote('sd-basics-9094-put');
    await db.put({ _id: 'foo', _attachments: { 'simple.txt': { content_type: 'text/plain', data: 'helo' } } });
    const { rows, total_rows } = await db.allDocs();
    assert.equal(rows.length, 1);
    assert.equal(total_rows, 1);
  });

  test('#9094 should update total_rows when doc is posted with an attachment', async () => {
    const db = await fx.remote('sd-basics-9094-post');
    await db.post({ _attachments: { 'simple.txt': { content_type: 'text/plain', data: 'helo' } } });
    const { rows, total_rows } = await db.allDocs();
    assert.equal(rows.length, 1);
    assert.equal(total_rows, 1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('test.get.js-http', () => {
  test('Get doc', async () => {
    const db = await fx.remote('sd-get-doc');
    const info = await db.post({ test: 'somestuff' });
    assert.ok('test' in (await db.get(info.id)));
    const err = await failure(db.get(`${info.id}asdf`));
    assert.equal(err.status, MISSING_DOC.status);
    assert.equal(err.name, MISSING_DOC.name);
    assert.equal(err.message, MISSING_DOC.message);
  });

  test('Get design doc', async () => {
    const db = await fx.remote('sd-get-design');
    const info = await db.put({ _id: '_design/someid', test: 'somestuff' });
    await db.get(info.id);
    const err = await failure(db.get(`${info.id}asdf`));
    assert.equal(err.status, MISSING_DOC.status);
    assert.equal(err.name, MISSING_DOC.name);
    assert.equal(err.message, MISSING_DOC.message);
  });

  test('Check error of deleted document', async () => {
    const db = await fx.remote('sd-get-deleted-error');
    const info = await db.post({ test: 'somestuff' });
    await db.remove({ _id: info.id, _rev: info.rev });
    const err = await failure(db.get(info.id));
    assert.equal(err.status, MISSING_DOC.status);
    assert.equal(err.name, MISSING_DOC.name);
  });

  test('Get revisions of removed doc', async () => {
    const db = await fx.remote('sd-get-removed-revs');
    const info = await db.post({ test: 'somestuff' });
    await db.remove({ test: 'somestuff', _id: info.id, _rev: info.rev });
    await db.get(info.id, { rev: info.rev });
  });

  test('Testing get with rev', async () => {
    const db = await fx.remote('sd-get-with-rev');
    await writeDocs(db, clone(origDocs));
    const parent = await db.get('3');
    const conflicts = getConflicts(parent._rev.split('-')[1]);
    for (const c of conflicts) await db.put(c, { new_edits: false });
    for (const [rev, value] of [['2-aaa', 'x'], ['3-bbb', 'y'], ['4-ccc', 'z']] as const) {
      const doc = await db.get('3', { rev });
      assert.equal(doc._rev, rev);
      assert.equal(doc.value, value);
    }
  });

  test('Testing rev format', async () => {
    const db = await fx.remote('sd-get-rev-format');
    const revs: string[] = [];
    const info = await db.post({ test: 'somestuff' });
    revs.unshift(info.rev.split('-')[1]);
    const info2 = await db.put({ _id: info.id, _rev: info.rev, another: 'test1' });
    revs.unshift(info2.rev.split('-')[1]);
    const info3 = await db.put({ _id: info.id, _rev: info2.rev, last: 'test2' });
    revs.unshift(info3.rev.split('-')[1]);
    const doc = await db.get(info.id, { revs: true });
    assert.equal(doc._revisions.start, 3);
    assert.deepEqual(doc._revisions.ids, revs);
  });

  test('Test opts.revs=true with rev other than winning', async () => {
    const db = await fx.remote('sd-get-revs-non-winning');
    await putBranch(db, [
      { _id: 'foo', _rev: '1-a', value: 'foo a' },
      { _id: 'foo', _rev: '2-b', value: 'foo b' },
      { _id: 'foo', _rev: '3-c', value: 'foo c' },
      { _id: 'foo', _rev: '4-d', value: 'foo d' },
    ]);
    const doc = await db.get('foo', { rev: '3-c', revs: true });
    assert.equal(doc._revisions.start, 3);
    assert.deepEqual(doc._revisions.ids, ['c', 'b', 'a']);
  });

  test('Test opts.revs=true return only winning branch', async () => {
    const db = await fx.remote('sd-get-revs-winning-branch');
    await putTree(db, [
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-b', value: 'foo b' }, { _id: 'foo', _rev: '3-c', value: 'foo c' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-d', value: 'foo d' }, { _id: 'foo', _rev: '3-e', value: 'foo e' },
        { _id: 'foo', _rev: '4-f', value: 'foo f' }],
    ]);
    const doc = await db.get('foo', { revs: true });
    assert.equal(doc._revisions.start, 4);
    assert.deepEqual(doc._revisions.ids, ['f', 'e', 'd', 'a']);
  });

  test('Test get with simple revs_info', async () => {
    const db = await fx.remote('sd-get-simple-revs-info');
    let info = await db.post({ test: 'somestuff' });
    info = await db.put({ _id: info.id, _rev: info.rev, another: 'test' });
    await db.put({ _id: info.id, _rev: info.rev, a: 'change' });
    const doc = await db.get(info.id, { revs_info: true });
    assert.equal(doc._revs_info.length, 3);
  });

  test('Test get with revs_info on tree', async () => {
    const db = await fx.remote('sd-get-revs-info-tree');
    await putTree(db, [
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-b', value: 'foo b' }, { _id: 'foo', _rev: '3-c', value: 'foo c' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-d', value: 'foo d' }, { _id: 'foo', _rev: '3-e', _deleted: true }],
    ]);
    const doc = await db.get('foo', { revs_info: true });
    assert.deepEqual(doc._revs_info.map((r: any) => r.rev), ['3-c', '2-b', '1-a']);
  });

  // From an earlier version of test.get.js, where it runs for CouchDB 1.x (2.x does not expose
  // _compact on the clustered port).
  test('Test get with revs_info on compacted tree', async () => {
    const db = await fx.remote('sd-get-revs-info-compacted');
    await putTree(db, [
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-b', value: 'foo d' }, { _id: 'foo', _rev: '3-c', value: 'foo c' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-d', value: 'foo d' }, { _id: 'foo', _rev: '3-e', _deleted: true }],
    ]);
    await db.compact();
    const doc = await db.get('foo', { revs_info: true });
    assert.deepEqual(doc._revs_info, [
      { rev: '3-c', status: 'available' },
      { rev: '2-b', status: 'missing' },
      { rev: '1-a', status: 'missing' },
    ], wire('sd-get-revs-info-compacted/'));
  });

  async function parallelGets(db: any, prefix: string) {
    const tasks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = prefix + Math.random().toString();
      for (let j = 0; j < 3; j++) tasks.push(key);
    }
    const getDocWithDefault = async (id: string) => {
      try {
        return await db.get(id);
      } catch (err: any) {
        if (err.status !== 404) throw err;
        try {
          await db.put({ foo: 'bar', _id: id });
        } catch (err2: any) {
          if (err2.status !== 409) throw err2;
        }
        return db.get(id);
      }
    };
    await Promise.all(tasks.map(getDocWithDefault));
  }

  test('#2951 Parallelized gets with 409s/404s', async () => {
    await parallelGets(await fx.remote('sd-get-parallel'), '');
  });

  test('#2951 Parallelized _local gets with 409s/404s', async () => {
    await parallelGets(await fx.remote('sd-get-parallel-local'), '_local/');
  });

  test('Test get with conflicts', async () => {
    const db = await fx.remote('sd-get-conflicts');
    await putTree(db, [
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-b', value: 'foo b' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-c', value: 'foo c' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-d', value: 'foo d', _deleted: true }],
    ]);
    const doc = await db.get('foo', { conflicts: true });
    assert.equal(doc._rev, '2-c');
    assert.deepEqual(doc._conflicts, ['2-b']);
  });

  test('Retrieve old revision', async () => {
    const db = await fx.remote('sd-get-old-revision');
    const info = await db.post({ version: 'first' });
    await db.put({ _id: info.id, _rev: info.rev, version: 'second' });
    const oldRev = await db.get(info.id, { rev: info.rev });
    assert.equal(oldRev.version, 'first');
    assert.ok(await failure(db.get(info.id, { rev: '1-nonexistentRev' })));
  });

  test('Testing get open_revs="all"', async () => {
    const db = await fx.remote('sd-get-open-revs-all');
    await writeDocs(db, clone(origDocs));
    const parent = await db.get('3');
    const conflicts = getConflicts(parent._rev.split('-')[1]);
    for (const c of conflicts) await db.put(c, { new_edits: false });
    const res = (await db.get('3', { open_revs: 'all' })).map((row: any) => row.ok).sort(byRev);
    assert.deepEqual(res.map((d: any) => d._rev), conflicts.map((c) => c._rev));
  });

  test('Testing get with open_revs and revs', async () => {
    const db = await fx.remote('sd-get-open-revs-revs');
    await putTree(db, [
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-b', value: 'foo b' }],
      [{ _id: 'foo', _rev: '1-a', value: 'foo a' }, { _id: 'foo', _rev: '2-c', value: 'foo c' }],
    ]);
    const res = await db.get('foo', { open_revs: ['2-b'], revs: true });
    const doc = res[0].ok;
    assert.equal(doc._revisions.ids.length, 2);
    assert.equal(doc._revisions.ids[0], 'b');
  });

  test('Testing get with open_revs with wrong params', async () => {
    const db = await fx.remote('sd-get-open-revs-wrong');
    await db.put({ _id: 'foo' });
    const err = await failure(db.get('foo', { open_revs: { whatever: 'which is', 'not an array': 'or all string' } }));
    assert.ok(['unknown_error', 'bad_request'].includes(err.name), `${err.name}\n${wire('sd-get-open-revs-wrong/foo?')}`);
    const err2 = await failure(db.get('foo', { open_revs: ['1-almost', '2-correct', 'keys'] }));
    assert.equal(err2.name, 'bad_request', wire('sd-get-open-revs-wrong/foo?'));
  });

  test('#5883 Testing with duplicate rev hash', async () => {
    const db = await fx.remote('sd-get-5883');
    await db.bulkDocs([
      { _id: 'foo', _rev: '3-deleted', _deleted: true, _revisions: { start: 3, ids: ['deleted', '0a21b4bd4399b51e144a06b126031edc', 'created'] } },
      { _id: 'foo', _rev: '3-0a21b4bd4399b51e144a06b126031edc', _revisions: { start: 3, ids: ['0a21b4bd4399b51e144a06b126031edc', 'updated', 'created'] } },
    ], { new_edits: false });
    const doc = await db.get('foo', { revs: true });
    assert.equal(doc._revisions.start, 3);
    assert.deepEqual(doc._revisions.ids, ['0a21b4bd4399b51e144a06b126031edc', 'updated', 'created']);
  });

  test('5857 - open_revs with latest=true', async () => {
    const db = await fx.remote('sd-get-5857-open-revs-latest');
    const info = await db.post({ version: 'first' });
    await db.put({ _id: info.id, _rev: info.rev, version: 'second' });
    const result = await db.get(info.id, { open_revs: [info.rev], latest: true });
    assert.equal(result[0].ok?.version, 'second', wire('sd-get-5857-open-revs-latest/'));
  });

  test('5857 - multiple open_revs for the same branch with latest=true returns one result', async () => {
    const db = await fx.remote('sd-get-5857-same-branch');
    const info = await db.post({ version: 'first' });
    const info2 = await db.put({ _id: info.id, _rev: info.rev, version: 'second' });
    const result = await db.get(info.id, { open_revs: [info.rev, info2.rev], latest: true });
    assert.equal(result.length, 1, wire('sd-get-5857-same-branch/'));
    assert.equal(result[0].ok.version, 'second');
  });

  test('5857 - GET old revision with latest=true', async () => {
    const db = await fx.remote('sd-get-5857-old-rev');
    const info = await db.post({ version: 'first' });
    await db.put({ _id: info.id, _rev: info.rev, version: 'second' });
    const result = await db.get(info.id, { rev: info.rev, latest: true });
    assert.equal(result.version, 'second', wire('sd-get-5857-old-rev/'));
  });

  test('5857 - GET old revision with latest=true, deleted leaf', async () => {
    const db = await fx.remote('sd-get-5857-deleted-leaf');
    const info = await db.post({ version: 'first' });
    await db.put({ _id: info.id, _rev: info.rev, _deleted: true, version: 'second' });
    const result = await db.get(info.id, { rev: info.rev, latest: true });
    assert.equal(result._deleted, true, wire('sd-get-5857-deleted-leaf/'));
    assert.equal(result.version, 'second');
  });

  test('5857 - GET losing, old revision with latest=true', async () => {
    const db = await fx.remote('sd-get-5857-losing');
    await db.bulkDocs(latestTree(), { new_edits: false });
    const result = await db.get('mydoc', { rev: '2-b2', latest: true });
    assert.equal(result._rev, '3-c2', wire('sd-get-5857-losing/mydoc'));
  });

  test('5857 - GET open_revs losing, old revision with latest=true', async () => {
    const db = await fx.remote('sd-get-5857-open-revs-losing');
    await db.bulkDocs(latestTree(), { new_edits: false });
    const result = await db.get('mydoc', { open_revs: ['2-b2', '3-c2'], latest: true });
    assert.equal(result.length, 1, wire('sd-get-5857-open-revs-losing/mydoc'));
    assert.equal(result[0].ok._rev, '3-c2');
  });

  test('5857 - GET open_revs losing and winning branches with latest=true', async () => {
    const db = await fx.remote('sd-get-5857-both-branches');
    await db.bulkDocs(latestTree(), { new_edits: false });
    const result = await db.get('mydoc', { open_revs: ['2-b1', '2-b2'], latest: true });
    assert.equal(result.length, 2, wire('sd-get-5857-both-branches/mydoc'));
    const revs = result.map((r: any) => r.ok?._rev);
    assert.ok(revs.includes('4-d1') && revs.includes('3-c2'), JSON.stringify(revs));
  });
});

// ---------------------------------------------------------------------------------------------

function makeDocs(count: number) {
  return Array.from({ length: count }, (_, i) => ({ _id: String(i), integer: i, string: String(i) })) as any[];
}

const authors = [
  { name: 'Dale Harvey', commits: 253 },
  { name: 'Mikeal Rogers', commits: 42 },
  { name: 'Johannes J. Schmidt', commits: 13 },
  { name: 'Randall Leeds', commits: 9 },
];

/** The body of 'Testing bulk docs' and 'bulk docs input by array'. */
async function bulkDocsRoundTrip(db: any, wrap: (docs: any[]) => any) {
  const docs = makeDocs(5);
  let results = await db.bulkDocs(wrap(docs));
  assert.equal(results.length, 5);
  for (let i = 0; i < 5; i++) {
    assert.equal(results[i].id, docs[i]._id);
    assert.ok(results[i].rev);
    docs[i]._rev = results[i].rev;
    docs[i].string = `${docs[i].string}.00`;
  }
  results = await db.bulkDocs(wrap(docs));
  assert.equal(results.length, 5);
  for (let i = 0; i < 5; i++) {
    assert.equal(results[i].id, String(i));
    docs[i]._rev = results[i].rev;
    docs[i]._deleted = true;
  }
  await db.put(docs[0]);
  results = await db.bulkDocs(wrap(docs));
  assert.equal(results[0].name, 'conflict', JSON.stringify(results[0]));
  assert.equal(results[0].rev, undefined);
  assert.equal(results[0].id, '0');
  for (let i = 1; i < 5; i++) {
    assert.equal(results[i].id, String(i));
    assert.ok(results[i].rev);
  }
}

/** PouchDB's testUtils.rev(): 32 random hex digits. */
const randomRev = () => Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join('');

describe('test.bulk_docs.js-http', () => {
  test('Testing bulk docs', async () => {
    await bulkDocsRoundTrip(await fx.remote('sd-bulk-docs'), (docs) => ({ docs }));
  });

  test('#6039 test id in bulk docs for conflict', async () => {
    const db = await fx.remote('sd-bulk-6039');
    const docs = makeDocs(5);
    const res1 = await db.bulkDocs(docs);
    docs.forEach((doc, i) => { doc._rev = res1[i].rev; });
    docs[2]._rev = '3-totally_fake_rev';
    delete docs[4]._rev;
    const res = await db.bulkDocs(docs);
    const shaped = res.map((x: any) => JSON.parse(JSON.stringify({
      id: x.id, error: x.error && true, name: x.name, status: x.status, rev: x.rev && 'rev_placeholder',
    })));
    assert.deepEqual(shaped, [
      { id: '0', rev: 'rev_placeholder' },
      { id: '1', rev: 'rev_placeholder' },
      { id: '2', error: true, name: 'conflict', status: 409 },
      { id: '3', rev: 'rev_placeholder' },
      { id: '4', error: true, name: 'conflict', status: 409 },
    ], wire('sd-bulk-6039/_bulk_docs'));
  });

  test('No id in bulk docs', async () => {
    const db = await fx.remote('sd-bulk-no-id');
    const newdoc: any = { _id: 'foobar', body: 'baz' };
    const doc = await db.put(newdoc);
    assert.ok(doc.ok);
    const results = await db.bulkDocs({
      docs: [
        { _id: newdoc._id, _rev: newdoc._rev, body: 'blam' },
        { _id: newdoc._id, _rev: newdoc._rev, _deleted: true },
      ],
    });
    assert.equal(results[0].name, 'conflict');
    assert.equal(results[1].name, 'conflict');
  });

  // PouchDB accepts either outcome here: an error, or a result.
  test('No _rev and new_edits=false', async () => {
    const db = await fx.remote('sd-bulk-no-rev-new-edits');
    await db.bulkDocs({ docs: [{ _id: 'foo', integer: 1 }] }, { new_edits: false }).catch((err: unknown) => assert.ok(err));
  });

  test('7829 bare rev 1- with new_edits=false', async () => {
    const db = await fx.remote('sd-bulk-7829');
    await db.bulkDocs({ docs: [{ _id: 'foo', _rev: '1-', integer: 1 }] }, { new_edits: false });
    // couch_doc:parse_rev takes the empty revision id: the document is stored at `1-`.
    const doc = await db.get('foo');
    assert.equal(doc._rev, '1-');
    assert.equal(doc.integer, 1);
  });

  test('Test empty bulkDocs', async () => {
    const db = await fx.remote('sd-bulk-empty');
    await db.bulkDocs([]);
  });

  test('Test many bulkDocs', async () => {
    const db = await fx.remote('sd-bulk-many');
    await db.bulkDocs(Array.from({ length: 201 }, (_, i) => ({ _id: String(i) })));
  });

  test('Test errors on invalid doc id', async () => {
    const db = await fx.remote('sd-bulk-invalid-id');
    const err = await failure(db.bulkDocs({ docs: [{ _id: '_invalid', foo: 'bar' }] }));
    assert.equal(err.status, RESERVED_ID.status, wire('sd-bulk-invalid-id/_bulk_docs'));
  });

  test('Test two errors on invalid doc id', async () => {
    const db = await fx.remote('sd-bulk-two-invalid-ids');
    const err = await failure(db.bulkDocs({ docs: [{ _id: '_invalid', foo: 'bar' }, { _id: 123, foo: 'bar' }] }));
    assert.equal(err.status, RESERVED_ID.status, wire('sd-bulk-two-invalid-ids/_bulk_docs'));
  });

  test('No docs', async () => {
    const db = await fx.remote('sd-bulk-no-docs');
    const err = await failure(db.bulkDocs({ doc: [{ foo: 'bar' }] }));
    assert.equal(err.status, MISSING_BULK_DOCS.status);
    assert.equal(err.message, MISSING_BULK_DOCS.message);
  });

  test('Jira 911', async () => {
    const db = await fx.remote('sd-bulk-jira911');
    const results = await db.bulkDocs({
      docs: [{ _id: '0', a: 0 }, { _id: '1', a: 1 }, { _id: '1', a: 1 }, { _id: '3', a: 3 }],
    });
    assert.equal(results[1].id, '1');
    assert.equal(results[1].name, undefined);
    assert.equal(results[2].name, 'conflict', JSON.stringify(results));
    assert.equal(results.length, 4);
  });

  test('Test multiple bulkdocs', async () => {
    const db = await fx.remote('sd-bulk-multiple');
    await db.bulkDocs({ docs: clone(authors) });
    await db.bulkDocs({ docs: clone(authors) });
    assert.equal((await db.allDocs()).total_rows, 8);
  });

  const ee35e4 = { _id: 'EE35E', _rev: '4-70b26', _deleted: true, _revisions: { start: 4, ids: ['70b26', '9f454', '914bf', '7fdf8'] } };
  const ee35e3 = { _id: 'EE35E', _rev: '3-f6d28', _revisions: { start: 3, ids: ['f6d28', '914bf', '7fdf8'] } };

  test('#2935 new_edits=false correct number', async () => {
    const db = await fx.remote('sd-bulk-2935-a');
    assert.deepEqual(await db.bulkDocs({ docs: [ee35e4, ee35e3], new_edits: false }), []);
    assert.equal((await db.allDocs()).total_rows, 1);
    assert.equal((await db.info()).doc_count, 1);
  });

  test('#2935 new_edits=false correct number 2', async () => {
    const db = await fx.remote('sd-bulk-2935-b');
    assert.deepEqual(await db.bulkDocs({ docs: [ee35e3, ee35e4], new_edits: false }), []);
    assert.equal((await db.allDocs()).total_rows, 1);
    assert.equal((await db.info()).doc_count, 1);
  });

  test('bulk docs update then delete then conflict', async () => {
    const db = await fx.remote('sd-bulk-update-delete-conflict');
    const docs: any[] = [{ _id: '1' }];
    const res1 = await db.bulkDocs(docs);
    assert.ok(!res1[0].error);
    docs[0]._rev = res1[0].rev;
    const res2 = await db.bulkDocs(docs);
    assert.ok(!res2[0].error);
    docs[0]._rev = res2[0].rev;
    docs[0]._deleted = true;
    const res3 = await db.bulkDocs(docs);
    assert.ok(!res3[0].error);
    const res4 = await db.bulkDocs(docs);
    assert.ok(res4[0].error, JSON.stringify(res4));
    assert.equal(res4[0].name, 'conflict');
  });

  test('bulk_docs delete then undelete', async () => {
    const db = await fx.remote('sd-bulk-delete-undelete');
    const doc: any = { _id: '1' };
    const res1 = await db.bulkDocs([doc]);
    assert.ok(!res1[0].error);
    doc._rev = res1[0].rev;
    doc._deleted = true;
    const res2 = await db.bulkDocs([doc]);
    assert.ok(!res2[0].error);
    delete doc._rev;
    doc._deleted = false;
    await db.bulkDocs([doc]);
  });

  test('#2935 new_edits=false with single unauthorized', async () => {
    const db = await fx.remote('sd-bulk-2935-unauthorized');
    await db.put({
      _id: '_design/validate',
      validate_doc_update: `function (newDoc) {
        if (newDoc.foo === undefined) {
          throw {unauthorized: 'Document must have a foo.'};
        }
      }`,
    });
    const res = await db.bulkDocs({
      docs: [
        { _id: 'doc0', _rev: '1-x', foo: 'bar', _revisions: { start: 1, ids: ['x'] } },
        { _id: 'doc1', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } },
        { _id: 'doc2', _rev: '1-x', foo: 'bar', _revisions: { start: 1, ids: ['x'] } },
      ],
    }, { new_edits: false });
    assert.equal(res.length, 1, `${JSON.stringify(res)}\n${wire('sd-bulk-2935-unauthorized/_bulk_docs')}`);
    assert.ok(res[0].error);
    assert.equal(res[0].id, 'doc1');
  });

  test('Deleting _local docs with bulkDocs', async () => {
    const db = await fx.remote('sd-bulk-delete-local');
    const rev1 = (await db.put({ _id: '_local/godzilla' })).rev;
    const rev2 = (await db.put({ _id: 'mothra' })).rev;
    const rev3 = (await db.put({ _id: 'rodan' })).rev;
    await db.bulkDocs([
      { _id: 'mothra', _rev: rev2, _deleted: true },
      { _id: '_local/godzilla', _rev: rev1, _deleted: true },
      { _id: 'rodan', _rev: rev3, _deleted: true },
    ]);
    assert.equal((await db.allDocs()).rows.length, 0);
    assert.ok(await failure(db.get('_local/godzilla')), wire('sd-bulk-delete-local/'));
  });

  const xy = () => [
    { _id: 'foo', _rev: '2-x', _revisions: { start: 2, ids: ['x', 'a'] } },
    { _id: 'foo', _rev: '2-y', _revisions: { start: 2, ids: ['y', 'a'] } },
  ];

  test('Bulk with new_edits=false', async () => {
    const db = await fx.remote('sd-bulk-new-edits-false');
    await db.bulkDocs({ docs: xy() }, { new_edits: false });
    const res = (await db.get('foo', { open_revs: 'all' })).map((r: any) => r.ok).sort(byRev);
    assert.deepEqual(res.map((d: any) => d._rev), ['2-x', '2-y']);
  });

  test('Testing successive new_edits to the same doc', async () => {
    const db = await fx.remote('sd-bulk-successive-same');
    const docs = [{ _id: 'foobar123', _rev: '1-x', bar: 'huzzah', _revisions: { start: 1, ids: ['x'] } }];
    await db.bulkDocs({ docs, new_edits: false });
    await db.bulkDocs({ docs, new_edits: false });
    assert.equal((await db.get('foobar123'))._rev, '1-x');
  });

  test('#3062 bulkDocs with staggered seqs', async () => {
    const db = await fx.remote('sd-bulk-3062');
    const docs: any[] = [];
    for (let i = 10; i <= 20; i++) docs.push({ _id: `doc-${i}` });
    const infos = await db.bulkDocs({ docs });
    docs.forEach((doc, i) => { doc._rev = infos[i].rev; });
    const toUpdate = docs.filter((_, i) => i % 2 === 1).reverse();
    const infos2 = await db.bulkDocs({ docs: toUpdate });
    assert.deepEqual(infos2.map((x: any) => ({ id: x.id, error: !!x.error, rev: typeof x.rev })), [
      { error: false, id: 'doc-19', rev: 'string' },
      { error: false, id: 'doc-17', rev: 'string' },
      { error: false, id: 'doc-15', rev: 'string' },
      { error: false, id: 'doc-13', rev: 'string' },
      { error: false, id: 'doc-11', rev: 'string' },
    ]);
  });

  test('Testing successive new_edits to the same doc, different content', async () => {
    const db = await fx.remote('sd-bulk-successive-content');
    const docsA = [
      { _id: 'foo321', _rev: '1-x', bar: 'baz', _revisions: { start: 1, ids: ['x'] } },
      { _id: 'fee321', bar: 'quux', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } },
    ];
    const docsB = [
      { _id: 'foo321', _rev: '1-x', bar: 'zam', _revisions: { start: 1, ids: ['x'] } }, // this update should be rejected
      { _id: 'faa321', _rev: '1-x', bar: 'zul', _revisions: { start: 1, ids: ['x'] } },
    ];
    await db.bulkDocs({ docs: docsA, new_edits: false });
    const first = await db.changes({ return_docs: true });
    const ids1 = first.results.map((r: any) => r.id);
    assert.ok(ids1.includes('foo321') && ids1.includes('fee321') && !ids1.includes('faa321'), JSON.stringify(ids1));
    await db.bulkDocs({ docs: docsB, new_edits: false });
    const second = await db.changes({ return_docs: true, since: first.last_seq });
    const ids2 = second.results.map((r: any) => r.id);
    assert.ok(!ids2.includes('foo321') && !ids2.includes('fee321') && ids2.includes('faa321'),
      `${JSON.stringify(ids2)}\n${wire('sd-bulk-successive-content/_changes')}`);
    const foo = await db.get('foo321');
    assert.equal(foo._rev, '1-x');
    assert.equal(foo.bar, 'baz');
    assert.equal((await db.info()).doc_count, 3);
  });

  test('Testing successive new_edits to two doc', async () => {
    const db = await fx.remote('sd-bulk-successive-two');
    const doc1 = { _id: 'foo', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } };
    const doc2 = { _id: 'bar', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } };
    await db.put(doc1, { new_edits: false });
    await db.put(doc2, { new_edits: false });
    await db.put(doc1, { new_edits: false });
    await db.get('foo');
    await db.get('bar');
  });

  test('Deletion with new_edits=false', async () => {
    const db = await fx.remote('sd-bulk-deletion-new-edits');
    await db.put({ _id: 'foo', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } }, { new_edits: false });
    await db.put({ _deleted: true, _id: 'foo', _rev: '2-y', _revisions: { start: 2, ids: ['y', 'x'] } }, { new_edits: false });
    const res = await db.allDocs({ keys: ['foo'] });
    assert.equal(res.rows[0].value.rev, '2-y');
    assert.equal(res.rows[0].value.deleted, true);
  });

  test('Deletion with new_edits=false, no history', async () => {
    const db = await fx.remote('sd-bulk-deletion-no-history');
    await db.put({ _id: 'foo', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } }, { new_edits: false });
    await db.put({ _deleted: true, _id: 'foo', _rev: '2-y' }, { new_edits: false });
    const res = await db.allDocs({ keys: ['foo'] });
    assert.equal(res.rows[0].value.rev, '1-x', JSON.stringify(res.rows));
    assert.equal(!!res.rows[0].value.deleted, false);
  });

  test('Modification with new_edits=false, no history', async () => {
    const db = await fx.remote('sd-bulk-modification-no-history');
    await db.put({ _id: 'foo', _rev: '1-x', _revisions: { start: 1, ids: ['x'] } }, { new_edits: false });
    await db.put({ _id: 'foo', _rev: '2-y' }, { new_edits: false });
    const res = await db.allDocs({ keys: ['foo'] });
    assert.equal(res.rows[0].value.rev, '2-y');
  });

  test('Deletion with new_edits=false, no history, no revisions', async () => {
    const db = await fx.remote('sd-bulk-deletion-no-revisions');
    await db.put({ _deleted: true, _id: 'foo', _rev: '2-y' }, { new_edits: false });
    const res = await db.allDocs({ keys: ['foo'] });
    assert.equal(res.rows[0].value.rev, '2-y');
    assert.equal(res.rows[0].value.deleted, true);
  });

  test('Testing new_edits=false in req body', async () => {
    const db = await fx.remote('sd-bulk-new-edits-body');
    await db.bulkDocs({ docs: xy(), new_edits: false });
    const res = (await db.get('foo', { open_revs: 'all' })).map((r: any) => r.ok).sort(byRev);
    assert.deepEqual(res.map((d: any) => d._rev), ['2-x', '2-y']);
  });

  test('656 regression in handling deleted docs', async () => {
    const db = await fx.remote('sd-bulk-656');
    await db.bulkDocs({ docs: [{ _id: 'foo', _rev: '1-a', _deleted: true }] }, { new_edits: false });
    const err = await failure(db.get('foo'));
    assert.equal(err.name, 'not_found');
    assert.equal(err.status, MISSING_DOC.status);
  });

  test('Test quotes in doc ids', async () => {
    const db = await fx.remote('sd-bulk-quotes');
    await db.bulkDocs({ docs: [{ _id: "'your_sql_injection_script_here'" }] });
    assert.ok(await failure(db.get('foo')));
  });

  test('Bulk docs empty list', async () => {
    const db = await fx.remote('sd-bulk-empty-list');
    await db.bulkDocs({ docs: [] });
  });

  test('handles simultaneous writes', async () => {
    await fx.raw.put('/sd-bulk-simultaneous');
    const db1 = fx.open('sd-bulk-simultaneous');
    const db2 = fx.open('sd-bulk-simultaneous');
    const id = 'fooId';
    const results = await Promise.all([db1.bulkDocs({ docs: [{ _id: id }] }), db2.bulkDocs({ docs: [{ _id: id }] })]);
    const errorNames = results.filter((r: any) => r[0].error).map((r: any) => r[0].name);
    const ids = results.filter((r: any) => !r[0].error).map((r: any) => r[0].id);
    assert.deepEqual(errorNames, ['conflict'], JSON.stringify(results));
    assert.deepEqual(ids, [id]);
  });

  // From an earlier version of test.bulk_docs.js (run there for CouchDB 1.x, skipped for 2.x).
  test('handles simultaneous _local writes', async () => {
    await fx.raw.put('/sd-bulk-simultaneous-local');
    const db1 = fx.open('sd-bulk-simultaneous-local');
    const db2 = fx.open('sd-bulk-simultaneous-local');
    const id = '_local/fooId';
    const results = await Promise.all([db1.bulkDocs({ docs: [{ _id: id }] }), db2.bulkDocs({ docs: [{ _id: id }] })]);
    const errorNames = results.filter((r: any) => r[0].error).map((r: any) => r[0].name);
    const oks = results.filter((r: any) => !r[0].error).map((r: any) => r[0].ok);
    assert.deepEqual(errorNames, ['conflict'], `${JSON.stringify(results)}\n${wire('sd-bulk-simultaneous-local/_bulk_docs')}`);
    assert.deepEqual(oks, [true]);
  });

  test('bulk docs input by array', async () => {
    await bulkDocsRoundTrip(await fx.remote('sd-bulk-array'), (docs) => docs);
  });

  test('Bulk empty list', async () => {
    const db = await fx.remote('sd-bulk-empty-array');
    await db.bulkDocs([]);
  });

  test('Bulk docs not an array', async () => {
    const db = await fx.remote('sd-bulk-not-array');
    const err = await failure(db.bulkDocs({ docs: 'foo' }));
    assert.equal(err.status, MISSING_BULK_DOCS.status);
    assert.equal(err.message, MISSING_BULK_DOCS.message);
  });

  test('Bulk docs not an object', async () => {
    const db = await fx.remote('sd-bulk-not-object');
    for (const docs of [['foo'], [[]]]) {
      const err = await failure(db.bulkDocs({ docs }));
      assert.equal(err.status, NOT_AN_OBJECT.status, wire('sd-bulk-not-object/_bulk_docs'));
      assert.equal(err.message, NOT_AN_OBJECT.message);
    }
  });

  test('Bulk docs two different revisions to same document id', async () => {
    const db = await fx.remote('sd-bulk-two-revisions');
    const history = [randomRev(), randomRev()];
    const a = randomRev();
    const b = randomRev();
    const aDoc = { _id: 'mydoc', _rev: `3-${a}`, _revisions: { start: 3, ids: [a, ...history] } };
    const bDoc = { _id: 'mydoc', _rev: `3-${b}`, _revisions: { start: 3, ids: [b, ...history] } };
    await db.bulkDocs([aDoc, bDoc], { new_edits: false });
    const resp = await db.get('mydoc', { open_revs: 'all' });
    assert.equal(resp.length, 2);
    assert.equal(resp[0].ok._id, 'mydoc');
    assert.equal(resp[1].ok._id, 'mydoc');
    assert.deepEqual(resp.map((r: any) => r.ok._rev).sort(), [aDoc._rev, bDoc._rev].sort());
  });

  test('4204 respect revs_limit', async () => {
    const db = await fx.remote('sd-bulk-4204');
    const uuids = Array.from({ length: 4999 }, randomRev);
    const conflict1 = `a${randomRev()}`;
    await db.bulkDocs([{ _id: 'doc', _rev: `5000-${conflict1}`, _revisions: { start: 5000, ids: [conflict1, ...uuids] } }], { new_edits: false });
    const doc = await db.get('doc', { revs: true });
    assert.equal(doc._revisions.ids.length, 1000);
  });

  // PouchDB skips this for a CouchDB 1.x server ("CouchDB 1.X has a bug which allows this insertion
  // via bulk_docs"). CouchDB's couch_db:prep_and_validate_updates (1.x as 2.x) answers a conflict
  // for revs given for a document that does not exist ("old revs specified but none exist"), which
  // is what is checked here.
  test('4712 invalid rev for new doc generates conflict', async () => {
    const db = await fx.remote('sd-bulk-4712');
    const results = await db.bulkDocs({ docs: [{ _id: 'foobar', _rev: '1-123' }] });
    assert.equal(results[0].status, 409, `${JSON.stringify(results)}\n${wire('sd-bulk-4712/_bulk_docs')}`);
  });

  test('5793 bulk docs accepts _conflicts when new_edits=false', async () => {
    const db = await fx.remote('sd-bulk-5793');
    await db.bulkDocs({ docs: [{ _id: 'foobar', _rev: '1-123', _conflicts: [] }] }, { new_edits: false });
    assert.equal((await db.allDocs()).rows.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('test.all_docs.js-http', () => {
  test('Testing all docs', async () => {
    const db = await fx.remote('sd-alldocs-all');
    await writeDocs(db, clone(origDocs));
    const result = await db.allDocs();
    assert.equal(result.total_rows, 4);
    for (const row of result.rows) assert.ok(row.id >= '0' && row.id <= '4');
    const all = await db.allDocs({ startkey: '2', include_docs: true });
    assert.equal(all.rows.length, 2);
    assert.equal(all.rows[0].id, '2');
    const raw = await db.allDocs({ startkey: 'org.couchdb.user:', endkey: 'org.couchdb.user;' });
    assert.equal(raw.rows.length, 0, 'raw collation');
    const ids = ['0', '3', '1', '2'];
    const changes = await db.changes();
    for (const row of changes.results) assert.ok(ids.includes(row.id));
    const desc = await db.changes({ descending: true });
    for (const row of desc.results) assert.ok(ids.includes(row.id));
    assert.equal(desc.results.length, 4);
  });

  test('Testing allDocs opts.keys', async () => {
    const db = await fx.remote('sd-alldocs-keys');
    const keyOf = (row: any) => row.key;
    await db.bulkDocs(clone(origDocs));
    let keys = ['3', '1'];
    let result = await db.allDocs({ keys });
    assert.deepEqual(result.rows.map(keyOf), keys);
    keys = ['2', '0', '1000'];
    result = await db.allDocs({ keys });
    assert.deepEqual(result.rows.map(keyOf), keys);
    assert.equal(result.rows[2].error, 'not_found');
    result = await db.allDocs({ keys, descending: true });
    assert.deepEqual(result.rows.map(keyOf), ['1000', '0', '2'], wire('sd-alldocs-keys/_all_docs'));
    assert.equal(result.rows[0].error, 'not_found');
    assert.ok(await failure(db.allDocs({ keys, startkey: 'a' })));
    assert.ok(await failure(db.allDocs({ keys, endkey: 'a' })));
    result = await db.allDocs({ keys: [] });
    assert.equal(result.rows.length, 0);
    await db.remove(await db.get('2'));
    result = await db.allDocs({ keys, include_docs: true });
    assert.deepEqual(result.rows.map(keyOf), keys);
    assert.equal(result.rows[keys.indexOf('2')].value.deleted, true);
    assert.equal(result.rows[keys.indexOf('2')].doc, null);
  });

  test('Testing allDocs opts.keys with skip', async () => {
    const db = await fx.remote('sd-alldocs-keys-skip');
    await db.bulkDocs(clone(origDocs));
    const res = await db.allDocs({ keys: ['3', '1'], skip: 1 });
    assert.equal(res.total_rows, 4);
    assert.equal(res.rows.length, 1, wire('sd-alldocs-keys-skip/_all_docs'));
    assert.equal(res.rows[0].id, '1');
  });

  test('Testing allDocs opts.keys with limit', async () => {
    const db = await fx.remote('sd-alldocs-keys-limit');
    await db.bulkDocs(clone(origDocs));
    let res = await db.allDocs({ keys: ['3', '1'], limit: 1 });
    assert.equal(res.total_rows, 4);
    assert.equal(res.rows.length, 1, wire('sd-alldocs-keys-limit/_all_docs'));
    assert.equal(res.rows[0].id, '3');
    res = await db.allDocs({ keys: ['0', '2'], limit: 3 });
    assert.deepEqual(res.rows.map((r: any) => r.id), ['0', '2']);
  });

  test('Testing allDocs invalid opts.keys', async () => {
    const db = await fx.remote('sd-alldocs-invalid-keys');
    assert.ok(await failure(db.allDocs({ keys: 1234 })));
  });

  test('Testing deleting in changes', async () => {
    const db = await fx.remote('sd-alldocs-deleting-changes');
    const updateSeq = (await db.info()).update_seq;
    await writeDocs(db, clone(origDocs));
    const deleted = await db.remove(await db.get('1'));
    assert.ok(deleted.ok);
    const changes = await db.changes({ since: updateSeq });
    assert.ok(changes.results.filter((c: any) => c.deleted).map((c: any) => c.id).includes('1'));
  });

  test('Testing updating in changes', async () => {
    const db = await fx.remote('sd-alldocs-updating-changes');
    const updateSeq = (await db.info()).update_seq;
    await writeDocs(db, clone(origDocs));
    const doc = await db.get('3');
    doc.updated = 'totally';
    await db.put(doc);
    const changes = await db.changes({ since: updateSeq });
    assert.ok(changes.results.map((c: any) => c.id).includes('3'));
  });

  test('Testing include docs', async () => {
    const db = await fx.remote('sd-alldocs-include-docs');
    await writeDocs(db, clone(origDocs));
    const changes = await db.changes({ include_docs: true });
    const zero = changes.results.find((r: any) => r.id === '0');
    assert.equal(zero.doc.a, 1);
  });

  test('Testing conflicts', async () => {
    const db = await fx.remote('sd-alldocs-conflicts');
    await writeDocs(db, clone(origDocs));
    const conflictDoc1 = { _id: '3', _rev: '2-aa01552213fafa022e6167113ed01087', value: 'X' };
    const conflictDoc2 = { _id: '3', _rev: '2-ff01552213fafa022e6167113ed01087', value: 'Z' };
    await db.put(conflictDoc1, { new_edits: false });
    await db.put(conflictDoc2, { new_edits: false });
    const winRev = await db.get('3');
    assert.equal(winRev._rev, conflictDoc2._rev);
    const changes = await db.changes({ include_docs: true, conflicts: true, style: 'all_docs' });
    assert.deepEqual(changes.results.map((x: any) => x.id).sort(), ['0', '1', '2', '3']);
    const result = changes.results.find((r: any) => r.id === '3');
    assert.equal(result.changes.length, 3);
    assert.equal(result.doc._rev, conflictDoc2._rev);
    assert.equal(result.doc._id, '3');
    assert.ok(Array.isArray(result.doc._conflicts), wire('sd-alldocs-conflicts/_changes'));
    assert.equal(result.doc._conflicts.length, 2);
    assert.equal(result.doc._conflicts[0], conflictDoc1._rev);
    const res = await db.allDocs({ include_docs: true, conflicts: true });
    const row = res.rows[3];
    assert.equal(res.rows.length, 4);
    assert.equal(row.key, '3');
    assert.equal(row.id, '3');
    assert.equal(row.value.rev, winRev._rev);
    assert.equal(row.doc._rev, winRev._rev);
    assert.equal(row.doc._id, '3');
    assert.ok(Array.isArray(row.doc._conflicts), wire('sd-alldocs-conflicts/_all_docs'));
    assert.equal(row.doc._conflicts.length, 2);
    assert.equal(row.doc._conflicts[0], conflictDoc1._rev);
  });

  test('test basic collation', async () => {
    const db = await fx.remote('sd-alldocs-collation');
    await db.bulkDocs({ docs: [{ _id: 'z', foo: 'z' }, { _id: 'a', foo: 'a' }] });
    const result = await db.allDocs({ startkey: 'z', endkey: 'z' });
    assert.equal(result.rows.length, 1);
  });

  test('3883 start_key end_key aliases', async () => {
    const db = await fx.remote('sd-alldocs-aliases');
    await db.bulkDocs([{ _id: 'a', foo: 'a' }, { _id: 'z', foo: 'z' }]);
    const result = await db.allDocs({ start_key: 'z', end_key: 'z' });
    assert.equal(result.rows.length, 1, wire('sd-alldocs-aliases/_all_docs'));
  });

  test('test total_rows with a variety of criteria', async () => {
    const db = await fx.remote('sd-alldocs-total-rows');
    const docs: any[] = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].map((_id) => ({ _id }));
    const res = await db.bulkDocs({ docs });
    docs[3]._deleted = true;
    docs[7]._deleted = true;
    docs[3]._rev = res[3].rev;
    docs[7]._rev = res[7].rev;
    await db.remove(docs[3]);
    await db.remove(docs[7]);
    const cases: [any, number][] = [
      [{}, 8],
      [{ startkey: '5' }, 4],
      [{ startkey: '5', skip: 2, limit: 10 }, 2],
      [{ startkey: '5', limit: 0 }, 0],
      [{ keys: ['5'], limit: 0 }, 0],
      [{ limit: 0 }, 0],
      [{ startkey: '5', descending: true, skip: 1 }, 4],
      [{ startkey: '5', endkey: 'z' }, 4],
      [{ startkey: '5', endkey: '5' }, 1],
      [{ startkey: '5', endkey: '4' }, 0],
      [{ startkey: '5', endkey: '4', descending: true }, 2],
      [{ startkey: '3', endkey: '7', descending: false }, 3],
      [{ startkey: '7', endkey: '3', descending: true }, 3],
      [{ startkey: '', endkey: '0' }, 1],
      [{ keys: ['0', '1', '3'] }, 3],
      [{ keys: ['0', '1', '0', '2', '1', '1'] }, 6],
      [{ keys: [] }, 0],
      [{ keys: ['7'] }, 1],
      [{ key: '3' }, 0],
      [{ key: '2' }, 1],
      [{ key: 'z' }, 0],
    ];
    for (const [opts, rows] of cases) {
      const r = await db.allDocs(opts);
      assert.equal(r.rows.length, rows, `rows for ${JSON.stringify(opts)}\n${wire('sd-alldocs-total-rows/_all_docs')}`);
      assert.equal(r.total_rows, 8, `total_rows for ${JSON.stringify(opts)}`);
      if (opts.keys?.length === 6) assert.deepEqual(r.rows.map((row: any) => row.key), ['0', '1', '0', '2', '1', '1']);
    }
  });

  test('test total_rows with a variety of criteria * 100', async () => {
    const db = await fx.remote('sd-alldocs-total-rows-100');
    const docs: any[] = Array.from({ length: 1000 }, (_, i) => ({ _id: String(i).padStart(5, '0') }));
    const bulkRes = await db.bulkDocs({ docs });
    const deletes: any[] = [];
    for (const [from, to] of [[300, 400], [700, 800]] as const) {
      for (let i = from; i < to; i++) {
        docs[i]._deleted = true;
        docs[i]._rev = bulkRes[i].rev;
        deletes.push(docs[i]);
      }
    }
    const deleted = await Promise.all(deletes.map((doc) => db.remove(doc)));
    assert.equal(deleted.length, 200);
    const cases: [any, number][] = [
      [{}, 800],
      [{ startkey: '00500' }, 400],
      [{ startkey: '00500', skip: 200, limit: 1000 }, 200],
      [{ startkey: '00500', limit: 0 }, 0],
      [{ keys: ['00500'], limit: 0 }, 0],
      [{ limit: 0 }, 0],
      [{ startkey: '00500', descending: true, skip: 1 }, 400],
      [{ startkey: '00500', endkey: 'z' }, 400],
      [{ startkey: '00500', endkey: '00500' }, 1],
      [{ startkey: '00500', endkey: '00400' }, 0],
      [{ startkey: '00599', endkey: '00400', descending: true }, 200],
      [{ startkey: '00599', endkey: '00400', descending: true, inclusive_end: false }, 199],
      [{ startkey: '00300', endkey: '00799', descending: false }, 300],
      [{ startkey: '00300', endkey: '00799', descending: false, inclusive_end: false }, 300],
      [{ startkey: '00799', endkey: '00300', descending: true }, 300],
      [{ startkey: '', endkey: '00000' }, 1],
      [{ keys: ['00000', '00100', '00300'] }, 3],
      [{ keys: ['00000', '00100', '00000', '00200', '00100', '00100'] }, 6],
      [{ keys: [] }, 0],
      [{ keys: ['00700'] }, 1],
      [{ key: '00300' }, 0],
      [{ key: '00200' }, 1],
      [{ key: 'z' }, 0],
    ];
    for (const [opts, rows] of cases) {
      const r = await db.allDocs(opts);
      assert.equal(r.rows.length, rows, `rows for ${JSON.stringify(opts)}`);
      assert.equal(r.total_rows, 800, `total_rows for ${JSON.stringify(opts)}`);
      if (opts.keys?.length === 6) {
        assert.deepEqual(r.rows.map((row: any) => row.key), ['00000', '00100', '00000', '00200', '00100', '00100']);
      }
    }
  });

  test('test total_rows with both skip and limit', async () => {
    const db = await fx.remote('sd-alldocs-skip-limit');
    await db.bulkDocs({ docs: ['w', 'x', 'y', 'z'].map((id) => ({ _id: id, foo: id })) });
    let res = await db.allDocs({ startkey: 'x', limit: 1, skip: 1 });
    assert.equal(res.total_rows, 4);
    assert.equal(res.rows.length, 1);
    assert.equal(res.rows[0].id, 'y');
    await db.remove(await db.get('x'));
    res = await db.allDocs({ startkey: 'w', limit: 2, skip: 1 });
    assert.equal(res.total_rows, 3);
    assert.equal(res.rows.length, 2);
    assert.equal(res.rows[0].id, 'y');
  });

  test('test limit option and total_rows', async () => {
    const db = await fx.remote('sd-alldocs-limit');
    await db.bulkDocs({ docs: [{ _id: 'z', foo: 'z' }, { _id: 'a', foo: 'a' }] });
    const res = await db.allDocs({ startkey: 'a', limit: 1 });
    assert.equal(res.total_rows, 2);
    assert.equal(res.rows.length, 1);
  });

  test('test escaped startkey/endkey', async () => {
    const db = await fx.remote('sd-alldocs-escaped');
    const id1 = '"weird id!" a';
    const id2 = '"weird id!" z';
    await db.bulkDocs({ docs: [{ _id: id1, foo: 'a' }, { _id: id2, foo: 'z' }] });
    const res = await db.allDocs({ startkey: id1, endkey: id2 });
    assert.equal(res.total_rows, 2);
    assert.equal(res.rows.length, 2);
  });

  test('test "key" option', async () => {
    const db = await fx.remote('sd-alldocs-key');
    await db.bulkDocs({ docs: [{ _id: '0' }, { _id: '1' }, { _id: '2' }] });
    assert.equal((await db.allDocs({ key: '1' })).rows.length, 1);
    assert.ok(await failure(db.allDocs({ key: '1', keys: ['1', '2'] })));
    await db.allDocs({ key: '1', startkey: '1' });
    await db.allDocs({ key: '1', endkey: '1' });
  });

  test('test inclusive_end=false', async () => {
    const db = await fx.remote('sd-alldocs-inclusive-end');
    await db.bulkDocs({ docs: [{ _id: '1' }, { _id: '2' }, { _id: '3' }, { _id: '4' }] });
    const cases: [any, number][] = [
      [{ inclusive_end: false, endkey: '2' }, 1],
      [{ inclusive_end: false, endkey: '1' }, 0],
      [{ inclusive_end: false, endkey: '1', startkey: '0' }, 0],
      [{ inclusive_end: false, endkey: '5' }, 4],
      [{ inclusive_end: false, endkey: '4' }, 3],
      [{ inclusive_end: false, endkey: '4', startkey: '3' }, 1],
      [{ inclusive_end: false, endkey: '1', descending: true }, 3],
      [{ inclusive_end: true, endkey: '4' }, 4],
      [{ descending: true, startkey: '3', endkey: '2', inclusive_end: false }, 1],
    ];
    for (const [opts, rows] of cases) {
      assert.equal((await db.allDocs(opts)).rows.length, rows, JSON.stringify(opts));
    }
  });

  test('test descending with startkey/endkey', async () => {
    const db = await fx.remote('sd-alldocs-descending');
    await db.bulkDocs(['a', 'b', 'c', 'd', 'e'].map((_id) => ({ _id })));
    const ids = async (opts: any) => (await db.allDocs(opts)).rows.map((x: any) => x.id);
    assert.deepEqual(await ids({ descending: true, startkey: 'd', endkey: 'b' }), ['d', 'c', 'b']);
    assert.deepEqual(await ids({ descending: true, startkey: 'd', endkey: 'b', inclusive_end: false }), ['d', 'c']);
    assert.deepEqual(await ids({ descending: true, startkey: 'd', endkey: 'a', skip: 1, limit: 2 }), ['c', 'b']);
    assert.deepEqual(await ids({ descending: true, startkey: 'd', endkey: 'a', skip: 1 }), ['c', 'b', 'a']);
  });

  test('#3082 test wrong num results returned', async () => {
    const db = await fx.remote('sd-alldocs-3082');
    await db.bulkDocs(Array.from({ length: 1000 }, () => ({})));
    let lastkey: string | undefined;
    const allkeys: string[] = [];
    for (;;) {
      const opts: any = { include_doc: true, limit: 100 };
      if (lastkey) {
        opts.startkey = lastkey;
        opts.skip = 1;
      }
      const res = await db.allDocs(opts);
      if (!res.rows.length) break;
      if (lastkey) assert.ok(res.rows[0].key > lastkey);
      assert.equal(res.rows.length, 100);
      lastkey = res.rows.pop().key;
      allkeys.push(lastkey!);
    }
    await Promise.all(allkeys.map(async (key) => {
      const res = await db.allDocs({ limit: 100, include_docs: true, startkey: key, skip: 1 });
      if (!res.rows.length) return;
      assert.ok(res.rows[0].key > key);
      assert.equal(res.rows.length, 100);
    }));
  });

  test('test empty db', async () => {
    const db = await fx.remote('sd-alldocs-empty');
    const res = await db.allDocs();
    assert.equal(res.rows.length, 0);
    assert.equal(res.total_rows, 0);
  });

  test('5793 _conflicts should not exist if no conflicts', async () => {
    const db = await fx.remote('sd-alldocs-5793');
    await db.put({ _id: '0', a: 1 });
    const result = await db.allDocs({ include_docs: true, conflicts: true });
    assert.ok(!('_conflicts' in result.rows[0].doc), JSON.stringify(result.rows[0].doc));
  });

  test('#6230 Test allDocs opts update_seq: false', async () => {
    const db = await fx.remote('sd-alldocs-update-seq-false');
    await db.bulkDocs(clone(origDocs));
    const result = await db.allDocs({ update_seq: false });
    assert.equal(result.rows.length, 4);
    assert.equal(result.update_seq, undefined);
  });

  test('#6230 Test allDocs opts update_seq: true', async () => {
    const db = await fx.remote('sd-alldocs-update-seq-true');
    await db.bulkDocs(clone(origDocs));
    const result = await db.allDocs({ update_seq: true });
    assert.equal(result.rows.length, 4);
    assert.ok(['number', 'string'].includes(typeof result.update_seq), wire('sd-alldocs-update-seq-true/_all_docs'));
    const seq = result.update_seq;
    const norm = typeof seq === 'string' && seq.indexOf('-') > 0 ? parseInt(seq.substring(0, seq.indexOf('-')), 10) : seq;
    assert.equal(typeof norm, 'number');
  });

  test('#6230 Test allDocs opts with update_seq missing', async () => {
    const db = await fx.remote('sd-alldocs-update-seq-missing');
    await db.bulkDocs(clone(origDocs));
    const result = await db.allDocs();
    assert.equal(result.rows.length, 4);
    assert.equal(result.update_seq, undefined);
  });
});

// ---------------------------------------------------------------------------------------------

describe('test.local_docs.js-http', () => {
  test('local docs - put then get', async () => {
    const db = await fx.remote('sd-local-put-get');
    const res = await db.put({ _id: '_local/foo' });
    assert.equal(res.id, '_local/foo');
    assert.equal(typeof res.rev, 'string');
    assert.equal(res.ok, true);
    await db.get('_local/foo');
  });

  test('local docs - put then get w/ revisions', async () => {
    const db = await fx.remote('sd-local-revisions');
    const res = await db.put({ _id: '_local/foo' });
    assert.equal(res.id, '_local/foo');
    assert.equal(typeof res.rev, 'string');
    assert.equal(res.ok, true);
    const doc = await db.get('_local/foo');
    assert.equal(doc._revisions, undefined);
    doc._revisions = { start: 0, ids: ['1'] };
    assert.equal((await db.put(doc)).rev, '0-2');
    const again = await db.get('_local/foo');
    assert.equal(again._revisions, undefined, JSON.stringify(again));
  });

  test('local docs - put then remove then get', async () => {
    const db = await fx.remote('sd-local-remove-get');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    const res = await db.remove(doc);
    assert.equal(res.id, '_local/foo');
    assert.equal(res.rev, '0-0', wire('sd-local-remove-get/_local'));
    assert.equal(res.ok, true);
    const err = await failure(db.get('_local/foo'));
    assert.equal(err.name, 'not_found');
  });

  test('local docs - put after remove', async () => {
    const db = await fx.remote('sd-local-put-after-remove');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    const res = await db.remove(doc);
    assert.equal(res.id, '_local/foo');
    assert.equal(res.rev, '0-0');
    assert.equal(res.ok, true);
    delete doc._rev;
    await db.put(doc);
  });

  test('local docs - put after remove, check return vals', async () => {
    const db = await fx.remote('sd-local-return-vals');
    const doc: any = { _id: '_local/quux' };
    for (const expected of ['0-1', '0-2', '0-3']) {
      const res = await db.put(doc);
      assert.equal(res.rev, expected);
      assert.equal(res.ok, true);
      doc._rev = res.rev;
    }
  });

  test('local docs - remove missing', async () => {
    const db = await fx.remote('sd-local-remove-missing');
    const err = await failure(db.remove({ _id: '_local/foo', _rev: '1-fake' }));
    assert.equal(err.error, 'not_found', `${JSON.stringify(err)}\n${wire('sd-local-remove-missing/')}`);
    assert.equal(err.status, 404);
  });

  test('local docs - put after put w/ deleted:true', async () => {
    const db = await fx.remote('sd-local-deleted-true');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    doc._deleted = true;
    const res = await db.put(doc);
    assert.equal(res.id, '_local/foo');
    assert.equal(res.rev, '0-0', wire('sd-local-deleted-true/_local'));
    assert.equal(res.ok, true);
    delete doc._deleted;
    delete doc._rev;
    await db.put(doc);
  });

  test('local docs - put after remove with a rev', async () => {
    const db = await fx.remote('sd-local-remove-with-rev');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    const res = await db.remove(doc);
    assert.equal(res.id, '_local/foo');
    assert.equal(res.ok, true);
    assert.equal(res.rev, '0-0');
    delete doc._rev;
    await db.put(doc);
  });

  test('local docs - multiple removes', async () => {
    const db = await fx.remote('sd-local-multiple-removes');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    doc._rev = (await db.put(doc)).rev;
    let res = await db.remove(doc);
    assert.equal(res.rev, '0-0');
    delete doc._rev;
    doc._rev = (await db.put(doc)).rev;
    res = await db.remove(doc);
    assert.equal(res.rev, '0-0');
  });

  test('local docs - get unknown', async () => {
    const db = await fx.remote('sd-local-get-unknown');
    const err = await failure(db.get('_local/foo'));
    assert.equal(err.name, 'not_found');
    assert.equal(err.status, 404);
  });

  test('local docs - put unknown', async () => {
    const db = await fx.remote('sd-local-put-unknown');
    const err = await failure(db.put({ _id: '_local/foo', _rev: '1-fake' }));
    assert.equal(typeof err.error, 'string', `${JSON.stringify(err)}\n${wire('sd-local-put-unknown/')}`);
    assert.ok(err.status);
  });

  test('local docs - put new and conflicting', async () => {
    const db = await fx.remote('sd-local-new-conflicting');
    const doc = { _id: '_local/foo' };
    await db.put(doc);
    const err = await failure(db.put(doc));
    assert.equal(err.error, 'conflict');
    assert.equal(err.status, 409);
  });

  test('local docs - put modified and conflicting', async () => {
    const db = await fx.remote('sd-local-modified-conflicting');
    const doc: any = { _id: '_local/foo' };
    doc._rev = (await db.put(doc)).rev;
    await db.put(doc);
    const err = await failure(db.put(doc));
    assert.equal(err.error, 'conflict');
    assert.equal(err.status, 409);
  });
});

// ---------------------------------------------------------------------------------------------

const replicationPairs = [['local', 'http'], ['http', 'http'], ['http', 'local']] as const;

for (const [first, second] of replicationPairs) {
  describe(`test.reserved.js-${first}-${second}`, () => {
    test('test docs with reserved javascript ids', async () => {
      const db = await side(first, `sd-reserved-${first}-${second}`);
      const remote = await side(second, `sd-reserved-${first}-${second}-remote`);
      await db.bulkDocs([
        { _id: 'constructor' },
        { _id: 'toString' },
        { _id: 'valueOf' },
        { _id: '_design/all', views: { all: { map: 'function (doc) {\n  emit(doc._id);\n}' } } },
      ]);
      assert.equal((await db.allDocs({ key: 'constructor' })).rows.length, 1, 'allDocs with key');
      assert.equal((await db.allDocs({ keys: ['constructor'] })).rows.length, 1, 'allDocs with keys');
      assert.equal((await db.allDocs()).rows.length, 4, 'allDocs empty opts');
      assert.equal((await db.query('all/all', { key: 'constructor' })).rows.length, 1, 'query with key');
      assert.equal((await db.query('all/all', { keys: ['constructor'] })).rows.length, 1, 'query with keys');
      await new Promise((resolve, reject) => {
        db.replicate.to(remote).on('complete', resolve).on('error', reject);
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------

describe('test.slash_ids.js-http', () => {
  test('Insert a doc, putAttachment and allDocs', async () => {
    const db = await fx.remote('sd-slash-put-attachment');
    const docId = 'doc/with/slashes';
    const attachmentId = 'attachment/with/slashes';
    const blobData = 'attachment content';
    const info = await db.put({ _id: docId, test: true });
    assert.equal(info.id, 'doc/with/slashes');
    await db.putAttachment(docId, attachmentId, info.rev, Buffer.from(blobData), 'text/plain');
    const att = await db.getAttachment(docId, attachmentId);
    assert.equal(att.toString('utf8'), blobData, wire('sd-slash-put-attachment/'));
    const res = await db.get(docId);
    assert.equal(res._id, docId);
    assert.ok(attachmentId in res._attachments);
  });

  test('BulkDocs and changes', async () => {
    const db = await fx.remote('sd-slash-bulk-changes');
    const docs = [
      { _id: 'part/doc1', int: 1 },
      { _id: 'part/doc2', int: 2, _attachments: { 'attachment/with/slash': { content_type: 'text/plain', data: 'c29tZSBkYXRh' } } },
      { _id: 'part/doc3', int: 3 },
    ];
    const res = await db.bulkDocs({ docs: clone(docs) });
    for (let i = 0; i < 3; i++) assert.equal(res[i].ok, true, `correctly inserted ${docs[i]!._id}`);
    const all = await db.allDocs({ include_docs: true, attachments: true });
    all.rows.sort((a: any, b: any) => a.doc.int - b.doc.int);
    for (let i = 0; i < 3; i++) assert.equal(all.rows[i].doc._id, docs[i]!._id);
    assert.ok('attachment/with/slash' in all.rows[1].doc._attachments);
    const changes = await db.changes({ return_docs: true });
    changes.results.sort((a: any, b: any) => a.id.localeCompare(b.id));
    for (let i = 0; i < 3; i++) assert.equal(changes.results[i].id, docs[i]!._id);
  });
});

for (const [first, second] of replicationPairs) {
  describe(`test.slash_ids.js-${first}-${second}`, () => {
    test('Attachments replicate', async () => {
      const binAttDoc = {
        _id: 'bin_doc/with/slash',
        _attachments: { 'foo/with/slash.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' } },
      };
      const docs1 = [binAttDoc, { _id: '0', integer: 0 }, { _id: '1', integer: 1 }, { _id: '2', integer: 2 }, { _id: '3', integer: 3 }];
      const db = await side(first, `sd-slash-repl-${first}-${second}`);
      const remote = await side(second, `sd-slash-repl-${first}-${second}-remote`);
      await remote.bulkDocs({ docs: clone(docs1) });
      await db.replicate.from(remote);
      const doc = await db.get('bin_doc/with/slash', { attachments: true });
      assert.equal(doc._attachments['foo/with/slash.txt'].data, binAttDoc._attachments['foo/with/slash.txt'].data);
    });
  });
}

// ---------------------------------------------------------------------------------------------

describe('test.revs_diff.js-http', () => {
  test('Test revs diff', async () => {
    const db = await fx.remote('sd-revsdiff-basic');
    const revs: string[] = [];
    const info = await db.post({ test: 'somestuff', _id: 'somestuff' });
    revs.push(info.rev);
    const info2 = await db.put({ _id: info.id, _rev: info.rev, another: 'test' });
    revs.push(info2.rev);
    let results = await db.revsDiff({ somestuff: revs });
    assert.ok(!('somestuff' in results), JSON.stringify(results));
    revs.push('2-randomid');
    results = await db.revsDiff({ somestuff: revs });
    assert.ok('somestuff' in results);
    assert.equal(results.somestuff.missing.length, 1);
  });

  test('Test revs diff with opts object', async () => {
    const db = await fx.remote('sd-revsdiff-opts');
    const revs: string[] = [];
    const info = await db.post({ test: 'somestuff', _id: 'somestuff' });
    revs.push(info.rev);
    const info2 = await db.put({ _id: info.id, _rev: info.rev, another: 'test' });
    revs.push(info2.rev);
    let results = await db.revsDiff({ somestuff: revs }, {});
    assert.ok(!('somestuff' in results), JSON.stringify(results));
    revs.push('2-randomid');
    results = await db.revsDiff({ somestuff: revs });
    assert.ok('somestuff' in results);
    assert.equal(results.somestuff.missing.length, 1);
  });

  test('Missing docs should be returned with all revisions', async () => {
    const db = await fx.remote('sd-revsdiff-missing');
    const revs = ['1-a', '2-a', '2-b'];
    const results = await db.revsDiff({ foo: revs });
    assert.deepEqual(results.foo.missing, revs);
  });

  test('Conflicting revisions that are available', async () => {
    const db = await fx.remote('sd-revsdiff-conflicting');
    await db.put({ _id: '939', _rev: '1-a' }, { new_edits: false });
    await putAfter(db, { _id: '939', _rev: '2-a' }, '1-a');
    await putAfter(db, { _id: '939', _rev: '2-b' }, '1-a');
    const results = await db.revsDiff({ 939: ['1-a', '2-a', '2-b'] });
    assert.ok(!('939' in results), JSON.stringify(results));
  });

  // PouchDB's test checks that '939' is absent (a leftover of the previous test); the document
  // it writes is '935', which is what is checked here.
  test('Deleted revisions that are available', async () => {
    const db = await fx.remote('sd-revsdiff-deleted');
    await db.put({ _id: '935', _rev: '1-a' }, { new_edits: false });
    await putAfter(db, { _id: '935', _rev: '2-a', _deleted: true }, '1-a');
    const results = await db.revsDiff({ 935: ['1-a', '2-a'] });
    assert.ok(!('935' in results), JSON.stringify(results));
  });

  test('Revs diff with empty revs', async () => {
    const db = await fx.remote('sd-revsdiff-empty');
    assert.ok(await db.revsDiff({}));
  });

  test('Test revs diff with reserved ID', async () => {
    const db = await fx.remote('sd-revsdiff-reserved');
    const revs: string[] = [];
    const info = await db.post({ test: 'constructor', _id: 'constructor' });
    revs.push(info.rev);
    const info2 = await db.put({ _id: info.id, _rev: info.rev, another: 'test' });
    revs.push(info2.rev);
    let results = await db.revsDiff({ constructor: revs });
    assert.ok(!Object.prototype.hasOwnProperty.call(results, 'constructor'), JSON.stringify(results));
    revs.push('2-randomid');
    results = await db.revsDiff({ constructor: revs });
    assert.ok(Object.prototype.hasOwnProperty.call(results, 'constructor'));
    assert.equal(results.constructor.missing.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('test.conflicts.js-http', () => {
  test('Testing conflicts', async () => {
    const db = await fx.remote('sd-conflicts-basic');
    const doc: any = { _id: 'foo', a: 1, b: 1 };
    const res = await db.put(doc);
    doc._rev = res.rev;
    assert.ok(res.ok);
    const doc2 = await db.get('foo');
    assert.equal(doc._id, doc2._id);
    assert.ok(doc._rev && doc2._rev);
    doc.a = 2;
    doc2.a = 3;
    assert.ok((await db.put(doc)).ok);
    const err = await failure(db.put(doc2));
    assert.equal(err.name, 'conflict');
    const changes = await db.changes({ return_docs: true });
    assert.equal(changes.results.length, 1);
    doc2._rev = undefined;
    const err2 = await failure(db.put(doc2));
    assert.equal(err2.name, 'conflict');
  });

  test('Testing conflicts (2: rewriting a deleted doc without a rev)', async () => {
    const db = await fx.remote('sd-conflicts-rewrite-deleted');
    const doc: any = { _id: 'fubar', a: 1, b: 1 };
    doc._rev = (await db.put(doc)).rev;
    await db.remove(doc);
    delete doc._rev;
    assert.ok((await db.put(doc)).ok, 'written previously deleted doc without rev');
  });

  test('force put ok on 1st level', async () => {
    const db = await fx.remote('sd-conflicts-force-1');
    const docId = 'docId';
    const rev1 = (await db.put({ _id: docId, update: 1 })).rev;
    const rev2 = (await db.put({ _id: docId, update: 2.1, _rev: rev1 })).rev;
    const rev3 = (await db.put({ _id: docId, update: 3, _rev: rev2 })).rev;
    const result = await db.put({ _id: docId, update: 2.2, _rev: rev1 }, { force: true });
    const rev2b = result.rev;
    assert.notEqual(rev2b, rev3);
    assert.equal(rev2b.substring(0, 2), '2-');
    assert.ok(result.ok);
    const doc = await db.get(docId, { conflicts: true, revs: true });
    assert.equal(doc._rev, rev3);
    assert.deepEqual(doc._conflicts, [rev2b]);
    await db.get(docId, { conflicts: true, revs: true, rev: rev2b });
  });

  test('force put ok on 2nd level', async () => {
    const db = await fx.remote('sd-conflicts-force-2');
    const docId = 'docId';
    const first = await db.put({ _id: docId, update: 1 });
    const rev2 = (await db.put({ _id: docId, update: 2, _rev: first.rev })).rev;
    const rev3 = (await db.put({ _id: docId, update: 3.1, _rev: rev2 })).rev;
    const rev4 = (await db.put({ _id: docId, update: 4, _rev: rev3 })).rev;
    const result = await db.put({ _id: docId, update: 3.2, _rev: rev2 }, { force: true });
    const rev3b = result.rev;
    assert.notEqual(rev3b, rev4);
    assert.equal(rev3b.substring(0, 2), '3-');
    assert.ok(result.ok);
    const doc = await db.get(docId, { conflicts: true, revs: true });
    assert.equal(doc._rev, rev4);
    assert.deepEqual(doc._conflicts, [rev3b]);
    await db.get(docId, { conflicts: true, revs: true, rev: rev3b });
  });

  const r = (rev: string, ids: string[], deleted = false) => ({
    _id: 'fubar', _rev: rev, ...(deleted ? { _deleted: true } : {}), _revisions: { start: Number(rev.split('-')[0]), ids },
  });

  test('Conflict resolution 1', async () => {
    const db = await fx.remote('sd-conflicts-resolution-1');
    await db.bulkDocs({ docs: [r('1-a', ['a']), r('1-b', ['b']), r('1-1', ['1'])], new_edits: false });
    assert.equal((await db.get('fubar'))._rev, '1-b');
    await db.bulkDocs({ new_edits: false, docs: [r('2-2', ['2', '1'])] });
    assert.equal((await db.get('fubar'))._rev, '2-2');
  });

  /** Writes `docs` with new_edits=false and checks the winner and the document count. */
  async function resolution(name: string, docs: any[], winner: string) {
    const db = await fx.remote(name);
    await db.bulkDocs({ docs, new_edits: false });
    assert.equal((await db.get('fubar'))._rev, winner, wire(`${name}/fubar`));
    assert.equal((await db.info()).doc_count, 1);
  }

  const a1 = r('1-a1', ['a1']);
  const a2 = r('2-a2', ['a2', 'a1']);
  const a3deleted = r('3-a3', ['a3', 'a2', 'a1'], true);
  const b1 = r('1-b1', ['b1']);

  test('Conflict resolution 2', () => resolution('sd-conflicts-resolution-2', [r('2-a', ['a']), r('1-b', ['b'])], '2-a'));
  test('Conflict resolution 3', () => resolution('sd-conflicts-resolution-3', [r('10-a', ['a']), r('2-b', ['b'])], '10-a'));
  test('Conflict resolution 4-a', () => resolution('sd-conflicts-resolution-4a', [a1, a2, a3deleted, b1], '1-b1'));
  test('Conflict resolution 4-b', () => resolution('sd-conflicts-resolution-4b', [a3deleted, a2, a1, b1], '1-b1'));
  test('Conflict resolution 4-c', () => resolution('sd-conflicts-resolution-4c', [a1, b1, a2, a3deleted], '1-b1'));
  test('Conflict resolution 4-d', () => resolution('sd-conflicts-resolution-4d', [a1, b1, a2, a3deleted], '1-b1'));
  test('Conflict resolution 4-e', () => resolution('sd-conflicts-resolution-4e', [a3deleted, a2, b1, a1], '1-b1'));

  const b1deleted = r('1-b1', ['b1'], true);
  const c1deleted = r('1-c1', ['c1'], true);
  test('Conflict resolution 5-a', () => resolution('sd-conflicts-resolution-5a', [a2, b1deleted, c1deleted], '2-a2'));
  test('Conflict resolution 5-b', () => resolution('sd-conflicts-resolution-5b', [b1deleted, a2, c1deleted], '2-a2'));
  test('Conflict resolution 5-c', () => resolution('sd-conflicts-resolution-5c', [b1deleted, c1deleted, a2], '2-a2'));

  test('#2543 excessive recursion with merging', async () => {
    const db = await fx.remote('sd-conflicts-2543');
    await db.bulkDocs([{ _id: 'foo', _rev: '1-a' }], { new_edits: false });
    for (let batch = 0; batch < 10; batch++) {
      const docs = [];
      for (let i = 0; i < 50; i++) {
        const hash = `${batch}a${i}`;
        docs.push({ _id: 'foo', _rev: `2-${hash}`, _revisions: { start: 2, ids: [hash, 'a'] } });
      }
      await db.bulkDocs(docs, { new_edits: false });
    }
  });

  test('5832 - update losing leaf returns correct rev', async () => {
    const db = await fx.remote('sd-conflicts-5832');
    await db.bulkDocs({ docs: [a1, a2, r('2-b2', ['b2', 'a1'])], new_edits: false });
    const doc = await db.get('fubar', { conflicts: true });
    const result = await db.remove(doc);
    assert.equal(result.rev[0], '3');
  });
});
