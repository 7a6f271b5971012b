/**
 * The `nano` CouchDB client (v11, fetch-based) against a real Settee process. Every call goes
 * through a logging proxy so a failure message shows the exact request nano sent.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import nano from 'nano';
import { serverForFile } from '../helpers/server.js';
import { startProxy, type LoggingProxy } from './proxy.js';

const { server, c: raw } = await serverForFile();
let proxy: LoggingProxy;
let couch: nano.ServerScope;

before(async () => {
  proxy = await startProxy(server.url);
  couch = nano(proxy.url);
});
after(async () => proxy.stop());

/** Awaits a nano call that must fail; returns nano's error for field checks. */
async function failure(p: Promise<unknown>): Promise<nano.RequestError & Record<string, any>> {
  try {
    await p;
  } catch (err) {
    return err as nano.RequestError & Record<string, any>;
  }
  assert.fail(`expected the call to fail; last exchanges:\n${proxy.log.slice(-2).map((e) => `${e.method} ${e.path} -> ${e.status}`).join('\n')}`);
}

/** A response body parsed as JSON, or the text when it is not JSON. */
function parsed(text: string): { json: unknown } | { text: string } {
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { text };
  }
}

/** The last exchange, to explain an assertion. */
function last(): string {
  return proxy.show().split('\n').slice(-2).join('\n');
}

test('server info and uuids', async () => {
  const info = await couch.info();
  assert.equal((info as any).couchdb, 'Welcome');
  assert.equal(typeof info.version, 'string');

  const one = await couch.uuids();
  assert.equal(one.uuids.length, 1);
  const many = await couch.uuids(7);
  assert.equal(many.uuids.length, 7);
  for (const u of many.uuids) assert.match(u, /^[0-9a-f]{32}$/);
  assert.equal(new Set(many.uuids).size, 7, 'uuids are unique');
});

test('db.create / get / list / destroy', async () => {
  const name = 'nano-dbs';
  const created = await couch.db.create(name);
  assert.deepEqual(created, { ok: true });

  const info = await couch.db.get(name);
  assert.equal(info.db_name, name);
  assert.equal(info.doc_count, 0);
  assert.equal(info.doc_del_count, 0);
  assert.equal(info.update_seq, 0);

  const names = await couch.db.list();
  assert.ok(Array.isArray(names));
  assert.ok(names.includes(name), `${name} in ${JSON.stringify(names)}`);

  // A name with a slash: nano encodes it as %2F.
  const slashed = 'nano-dbs/with/slashes';
  assert.deepEqual(await couch.db.create(slashed), { ok: true }, last());
  assert.equal((await couch.db.get(slashed)).db_name, slashed, last());
  assert.ok((await couch.db.list()).includes(slashed));
  assert.deepEqual(await couch.db.destroy(slashed), { ok: true }, last());

  // use(name).info() is the same resource.
  assert.equal((await couch.use(name).info()).db_name, name);

  assert.deepEqual(await couch.db.destroy(name), { ok: true });
  assert.ok(!(await couch.db.list()).includes(name));
});

test('database errors: 412 file_exists, 404 not_found, 400 illegal_database_name', async () => {
  const name = 'nano-db-errors';
  await couch.db.create(name);

  const exists = await failure(couch.db.create(name));
  assert.equal(exists.statusCode, 412);
  assert.equal(exists.error, 'file_exists');
  assert.equal(exists.reason, 'The database could not be created, the file already exists.');
  assert.equal(exists.message, exists.reason, 'nano copies reason into message');

  const missingDestroy = await failure(couch.db.destroy('nano-no-such-db'));
  assert.equal(missingDestroy.statusCode, 404);
  assert.equal(missingDestroy.error, 'not_found');

  const illegal = await failure(couch.db.create('Nano_Upper'));
  assert.equal(illegal.statusCode, 400);
  assert.equal(illegal.error, 'illegal_database_name');
  assert.equal(typeof illegal.reason, 'string');

  await couch.db.destroy(name);
});

test('insert / get / head / destroy documents', async () => {
  const name = 'nano-docs';
  await couch.db.create(name);
  const db = couch.use<{ n: number; tags?: string[] }>(name);

  // POST without an id: the server makes one.
  const posted = await db.insert({ n: 1 });
  assert.equal(posted.ok, true);
  assert.match(posted.id, /^[0-9a-f]{32}$/);
  assert.match(posted.rev, /^1-[0-9a-f]{32}$/);

  // PUT with an id (nano's docName form).
  const put = await db.insert({ n: 2, tags: ['a', 'b'] }, 'doc-a');
  assert.equal(put.id, 'doc-a');
  assert.match(put.rev, /^1-/);

  const got = await db.get('doc-a');
  assert.deepEqual(got, { _id: 'doc-a', _rev: put.rev, n: 2, tags: ['a', 'b'] });

  // Update with _rev in the body.
  const updated = await db.insert({ _id: 'doc-a', _rev: put.rev, n: 3 } as any);
  assert.match(updated.rev, /^2-/);
  const got2 = await db.get('doc-a');
  assert.equal(got2.n, 3);
  assert.equal(got2._rev, updated.rev);

  // get with options: an old rev and revs_info.
  const old = await db.get('doc-a', { rev: put.rev });
  assert.equal(old.n, 2);
  const withInfo = await db.get('doc-a', { revs_info: true });
  assert.deepEqual(withInfo._revs_info, [
    { rev: updated.rev, status: 'available' },
    { rev: put.rev, status: 'available' },
  ]);
  const withRevs = await db.get('doc-a', { revs: true }) as any;
  assert.equal(withRevs._revisions.start, 2);
  assert.deepEqual(withRevs._revisions.ids, [updated.rev.slice(2), put.rev.slice(2)]);

  // head: nano resolves with the response headers.
  const headers = await db.head('doc-a') as any;
  assert.equal(headers.etag, `"${updated.rev}"`, JSON.stringify(headers));

  // destroy with the current rev.
  const destroyed = await db.destroy('doc-a', updated.rev);
  assert.equal(destroyed.ok, true);
  assert.equal(destroyed.id, 'doc-a');
  assert.match(destroyed.rev, /^3-/);

  const deleted = await failure(db.get('doc-a'));
  assert.equal(deleted.statusCode, 404);
  assert.equal(deleted.error, 'not_found');
  assert.equal(deleted.reason, 'deleted');

  // The tombstone can still be read by rev.
  const tomb = await db.get('doc-a', { rev: destroyed.rev }) as any;
  assert.deepEqual(tomb, { _id: 'doc-a', _rev: destroyed.rev, _deleted: true });

  // Recreating a deleted document without a rev succeeds and extends the tree.
  const again = await db.insert({ n: 4 }, 'doc-a');
  assert.match(again.rev, /^4-/);

  // batch=ok: 202 Accepted with no rev; the write shows up (after an _ensure_full_commit).
  const batched = await db.insert({ n: 9 }, { docName: 'batched', batch: 'ok' } as any) as any;
  assert.deepEqual(batched, { ok: true, id: 'batched' }, last());
  assert.equal(proxy.log.at(-1)!.status, 202);
  await couch.request({ db: name, method: 'POST', path: '_ensure_full_commit' });
  assert.equal((await db.get('batched')).n, 9, last());

  // Ids that need encoding.
  const odd = await db.insert({ n: 5 }, 'with space/slash+plus?q');
  assert.equal(odd.id, 'with space/slash+plus?q', last());
  assert.equal((await db.get('with space/slash+plus?q')).n, 5, last());

  // Design and local documents go through nano unencoded.
  const ddoc = await db.insert({ n: 6 } as any, '_design/nano');
  assert.equal(ddoc.id, '_design/nano');
  assert.equal((await db.get('_design/nano')).n, 6);
  const local = await db.insert({ n: 7 } as any, '_local/nano');
  assert.equal(local.id, '_local/nano');
  assert.equal((await db.get('_local/nano')).n, 7);

  const info = await db.info();
  assert.equal(info.doc_count, 5, 'posted, doc-a, batched, odd id and the design doc; _local docs do not count');
  assert.equal(info.doc_del_count, 0);
  await couch.db.destroy(name);
});

test('document errors: 404 missing, 409 conflict, HEAD 404', async () => {
  const name = 'nano-doc-errors';
  await couch.db.create(name);
  const db = couch.use<{ v: number }>(name);

  const missing = await failure(db.get('nope'));
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.error, 'not_found');
  assert.equal(missing.reason, 'missing');
  assert.equal(missing.scope, 'couch');
  assert.equal(missing.message, 'missing');

  const headMissing = await failure(db.head('nope'));
  assert.equal(headMissing.statusCode, 404);

  const first = await db.insert({ v: 1 }, 'c');
  const noRev = await failure(db.insert({ v: 2 }, 'c'));
  assert.equal(noRev.statusCode, 409);
  assert.equal(noRev.error, 'conflict');
  assert.equal(noRev.reason, 'Document update conflict.');

  await db.insert({ _id: 'c', _rev: first.rev, v: 2 } as any);
  const stale = await failure(db.insert({ _id: 'c', _rev: first.rev, v: 3 } as any));
  assert.equal(stale.statusCode, 409);
  assert.equal(stale.error, 'conflict');

  const staleDelete = await failure(db.destroy('c', first.rev));
  assert.equal(staleDelete.statusCode, 409);
  assert.equal(staleDelete.error, 'conflict');

  // CouchDB 1.6 opens the document before deleting it (couch_httpd_db db_doc_req DELETE:
  // "check for the existence of the doc to handle the 404 case"): 404 missing, not 409.
  const deleteMissing = await failure(db.destroy('never', '1-00000000000000000000000000000000'));
  assert.equal(deleteMissing.statusCode, 404, last());
  assert.equal(deleteMissing.error, 'not_found');
  assert.equal(deleteMissing.reason, 'missing');
  const tomb = await db.insert({ v: 1 }, 'gone');
  const gone = await db.destroy('gone', tomb.rev);
  const deleteDeleted = await failure(db.destroy('gone', gone.rev));
  assert.equal(deleteDeleted.statusCode, 404, last());
  assert.equal(deleteDeleted.error, 'not_found');
  assert.equal(deleteDeleted.reason, 'deleted');

  const badRev = await failure(db.get('c', { rev: '1-00000000000000000000000000000000' }));
  assert.equal(badRev.statusCode, 404);
  assert.equal(badRev.error, 'not_found');

  // A malformed rev is a 400 bad_request in CouchDB 1.6.
  const malformed = await failure(db.insert({ _id: 'c', _rev: 'garbage', v: 9 } as any));
  assert.equal(malformed.statusCode, 400, last());
  assert.equal(malformed.error, 'bad_request');
  await couch.db.destroy(name);
});

test('bulk: create, update, delete, conflicts reported per document', async () => {
  const name = 'nano-bulk';
  await couch.db.create(name);
  const db = couch.use<{ v: number }>(name);

  const created = await db.bulk({ docs: [{ _id: 'b1', v: 1 }, { _id: 'b2', v: 2 }, { v: 3 }] as any });
  assert.equal(created.length, 3);
  assert.deepEqual(created.map((r: any) => [r.id.length > 0, r.ok]), [[true, true], [true, true], [true, true]]);
  assert.equal(created[0]!.id, 'b1');
  assert.equal(created[1]!.id, 'b2');
  assert.match(created[2]!.id, /^[0-9a-f]{32}$/);

  const rev1 = created[0]!.rev!;
  const rev2 = created[1]!.rev!;
  const second = await db.bulk({
    docs: [
      { _id: 'b1', _rev: rev1, v: 10 },         // update
      { _id: 'b2', _rev: rev2, _deleted: true }, // delete
      { _id: 'b1', v: 11 },                      // conflict: no rev
      { _id: 'b3', v: 3 },                       // create
    ] as any,
  });
  assert.equal(second.length, 4);
  assert.equal((second[0] as any).ok, true);
  assert.match(second[0]!.rev!, /^2-/);
  assert.equal((second[1] as any).ok, true);
  assert.match(second[1]!.rev!, /^2-/);
  assert.deepEqual(second[2], { id: 'b1', error: 'conflict', reason: 'Document update conflict.' });
  assert.equal(second[3]!.id, 'b3');
  assert.equal((second[3] as any).ok, true);

  assert.equal((await db.get('b1')).v, 10);
  assert.equal((await failure(db.get('b2'))).reason, 'deleted');

  // new_edits=false stores the given revision as is (nano passes extra params as the query).
  const replicated = await db.bulk({ docs: [{ _id: 'b4', _rev: '3-abcdef', v: 4 }] as any, new_edits: false } as any);
  assert.deepEqual(replicated, []);
  assert.equal((await db.get('b4'))._rev, '3-abcdef');

  const info = await db.info();
  assert.equal(info.doc_count, 4); // b1, generated, b3, b4
  assert.equal(info.doc_del_count, 1);
  await couch.db.destroy(name);
});

test('list: _all_docs with include_docs, ranges, limit/skip, descending', async () => {
  const name = 'nano-list';
  await couch.db.create(name);
  const db = couch.use<{ i: number }>(name);
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const res = await db.bulk({ docs: ids.map((id, i) => ({ _id: id, i })) as any });
  const revs = new Map(res.map((r) => [r.id, r.rev!]));
  // A deleted document never shows in _all_docs.
  await db.destroy('e', revs.get('e')!);

  const all = await db.list();
  assert.equal(all.total_rows, 4);
  assert.equal(all.offset, 0);
  assert.deepEqual(all.rows.map((r) => r.id), ['a', 'b', 'c', 'd']);
  assert.deepEqual(all.rows[0], { id: 'a', key: 'a', value: { rev: revs.get('a') } });

  const withDocs = await db.list({ include_docs: true });
  assert.deepEqual(withDocs.rows[1]!.doc, { _id: 'b', _rev: revs.get('b'), i: 1 });

  const range = await db.list({ startkey: 'b', endkey: 'c' });
  assert.deepEqual(range.rows.map((r) => r.id), ['b', 'c']);
  assert.equal(range.offset, 1);
  assert.equal(range.total_rows, 4);

  const exclusive = await db.list({ startkey: 'b', endkey: 'd', inclusive_end: false });
  assert.deepEqual(exclusive.rows.map((r) => r.id), ['b', 'c']);

  const page = await db.list({ limit: 2, skip: 1 });
  assert.deepEqual(page.rows.map((r) => r.id), ['b', 'c']);
  assert.equal(page.offset, 1);

  const desc = await db.list({ descending: true, limit: 3 });
  assert.deepEqual(desc.rows.map((r) => r.id), ['d', 'c', 'b']);
  assert.equal(desc.offset, 0);

  const key = await db.list({ key: 'c', include_docs: true });
  assert.deepEqual(key.rows.map((r) => r.id), ['c']);
  assert.equal((key.rows[0]!.doc as any).i, 2);

  // nano JSON-encodes `keys` in the query string: GET _all_docs?keys=[...]
  const keys = await db.list({ keys: ['d', 'a'] } as any);
  assert.deepEqual(keys.rows.map((r: any) => r.id), ['d', 'a'], last());

  const withSeq = await db.list({ update_seq: true, limit: 0 } as any) as any;
  assert.equal(withSeq.update_seq, 6, last());
  assert.deepEqual(withSeq.rows, []);
  await couch.db.destroy(name);
});

test('fetch and fetchRevs: POST _all_docs with keys, missing and deleted keys', async () => {
  const name = 'nano-fetch';
  await couch.db.create(name);
  const db = couch.use<{ x: string }>(name);
  const a = await db.insert({ x: 'A' }, 'a');
  const b = await db.insert({ x: 'B' }, 'b');
  const del = await db.destroy('b', b.rev);

  const fetched = await db.fetch({ keys: ['a', 'zz', 'b'] });
  assert.equal(fetched.total_rows, 1);
  assert.equal(fetched.rows.length, 3);
  assert.deepEqual(fetched.rows[0], { id: 'a', key: 'a', value: { rev: a.rev }, doc: { _id: 'a', _rev: a.rev, x: 'A' } });
  assert.deepEqual(fetched.rows[1], { key: 'zz', error: 'not_found' });
  assert.deepEqual(fetched.rows[2], { id: 'b', key: 'b', value: { rev: del.rev, deleted: true }, doc: null });

  const revsOnly = await db.fetchRevs({ keys: ['b', 'a'] });
  assert.deepEqual(revsOnly.rows, [
    { id: 'b', key: 'b', value: { rev: del.rev, deleted: true } },
    { id: 'a', key: 'a', value: { rev: a.rev } },
  ]);
  await couch.db.destroy(name);
});

test('changes: since, include_docs, deletions, limit, descending, _doc_ids', async () => {
  const name = 'nano-changes';
  await couch.db.create(name);
  const db = couch.use<{ v: number }>(name);
  const a = await db.insert({ v: 1 }, 'a');           // seq 1
  await db.insert({ v: 2 }, 'b');                      // seq 2
  const a2 = await db.insert({ _id: 'a', _rev: a.rev, v: 3 } as any); // seq 3 (a moves)
  const c = await db.insert({ v: 4 }, 'c');            // seq 4
  const cDel = await db.destroy('c', c.rev);           // seq 5

  const all = await couch.db.changes(name);
  assert.equal(all.last_seq, 5);
  assert.deepEqual(all.results.map((r) => [r.seq, r.id]), [[2, 'b'], [3, 'a'], [5, 'c']]);
  assert.deepEqual(all.results[1]!.changes, [{ rev: a2.rev }]);
  assert.equal((all.results[2] as any).deleted, true);
  assert.equal((all.results[0] as any).deleted, undefined);

  const since = await db.changes({ since: 3 });
  assert.deepEqual(since.results.map((r) => r.id), ['c']);
  assert.equal(since.last_seq, 5);

  const docs = await db.changes({ include_docs: true });
  assert.deepEqual((docs.results[1] as any).doc, { _id: 'a', _rev: a2.rev, v: 3 });
  assert.deepEqual((docs.results[2] as any).doc, { _id: 'c', _rev: cDel.rev, _deleted: true });

  const limited = await db.changes({ limit: 1 });
  assert.deepEqual(limited.results.map((r) => r.id), ['b']);
  assert.equal(limited.last_seq, 2);

  const desc = await db.changes({ descending: true, limit: 2 });
  assert.deepEqual(desc.results.map((r) => r.id), ['c', 'a']);

  const filtered = await db.changes({ filter: '_doc_ids', doc_ids: JSON.stringify(['b']) } as any);
  assert.deepEqual(filtered.results.map((r) => r.id), ['b'], last());

  const now = await db.changes({ since: 'now' } as any);
  assert.deepEqual(now.results, []);
  assert.equal(now.last_seq, 5);
  await couch.db.destroy(name);
});

test('changesReader.get: batched POST longpoll reads the whole feed and stops', async () => {
  const name = 'nano-changes-reader';
  await couch.db.create(name);
  const db = couch.use(name);
  await db.bulk({ docs: Array.from({ length: 5 }, (_, i) => ({ _id: `r${i}` })) });

  const seen: string[] = [];
  const end = new Promise<unknown>((resolve, reject) => {
    const ee = db.changesReader.get({ since: '0', batchSize: 2, timeout: 200 } as any);
    ee.on('change', (c: any) => seen.push(c.id));
    ee.on('error', reject);
    ee.on('end', resolve);
  });
  const lastSeq = await end;
  assert.deepEqual(seen, ['r0', 'r1', 'r2', 'r3', 'r4'], proxy.show(`/${name}/_changes`));
  assert.equal(lastSeq, 5);
  await couch.db.destroy(name);
});

test('changesReader.spool: one streamed POST _changes', async () => {
  const name = 'nano-changes-spool';
  await couch.db.create(name);
  const db = couch.use(name);
  await db.bulk({ docs: Array.from({ length: 4 }, (_, i) => ({ _id: `s${i}` })) });

  const seen: string[] = [];
  const lastSeq = await new Promise<unknown>((resolve, reject) => {
    const ee = db.changesReader.spool({ since: 0, batchSize: 3 } as any);
    ee.on('batch', (b: any[]) => seen.push(...b.map((c) => c.id)));
    ee.on('error', reject);
    ee.on('end', resolve);
  });
  assert.deepEqual(seen, ['s0', 's1', 's2', 's3'], proxy.show(`/${name}/_changes`));
  assert.equal(lastSeq, 4);
  await couch.db.destroy(name);
});

test('nano.request: _config read and write, raw paths', async () => {
  const previous = await couch.request({ method: 'PUT', path: '_config/settee_clients_test/color', body: 'blue' });
  assert.equal(previous, '', last());
  // nano falls back to '' when a JSON response does not parse, so check the wire too:
  // CouchDB answers the old value as a JSON string, `""`.
  const putWire = proxy.log.at(-1)!;
  assert.equal(putWire.requestBody, '"blue"');
  assert.deepEqual(parsed(putWire.responseBody), { json: '' }, last());
  const value = await couch.request({ path: '_config/settee_clients_test/color' });
  assert.equal(value, 'blue', last());
  const section = await couch.request({ path: '_config/settee_clients_test' });
  assert.deepEqual(section, { color: 'blue' });
  const old = await couch.request({ method: 'PUT', path: '_config/settee_clients_test/color', body: 'green' });
  assert.equal(old, 'blue');
  const deleted = await couch.request({ method: 'DELETE', path: '_config/settee_clients_test/color' });
  assert.equal(deleted, 'green');
  const gone = await failure(couch.request({ path: '_config/settee_clients_test/color' }));
  assert.equal(gone.statusCode, 404);
  assert.equal(gone.error, 'not_found');

  // The same resources as raw HTTP sees them.
  const uuidsConfig = await couch.request({ path: '_config/uuids/algorithm' });
  assert.equal(typeof uuidsConfig, 'string');

  // db-scoped request with a doc path and a query.
  const name = 'nano-request';
  await couch.db.create(name);
  await couch.request({ db: name, method: 'PUT', doc: 'r1', body: { z: 1 } });
  const doc = await couch.request({ db: name, doc: 'r1', qs: { revs: true } });
  assert.equal(doc.z, 1);
  assert.equal(doc._revisions.start, 1);
  const r = await raw.get(`/${name}/r1`);
  assert.equal(r.body.z, 1);
  await couch.db.destroy(name);
});

test('nano sends gzip/deflate Accept-Encoding and lowercase methods: responses still parse', async () => {
  const name = 'nano-wire';
  await couch.db.create(name);
  const db = couch.use<{ big: string }>(name);
  // A large body, so a server that compresses would compress it.
  const big = 'x'.repeat(100_000);
  await db.insert({ big }, 'big');
  const got = await db.get('big');
  assert.equal(got.big.length, 100_000);
  const sent = proxy.log.filter((e) => e.path === `/${name}/big` && e.method === 'GET').at(-1)!;
  assert.equal(sent.requestHeaders['accept-encoding'], 'deflate, gzip');
  assert.equal(sent.status, 200);
  await couch.db.destroy(name);
});

test('db.compact and _db_updates (longpoll) through nano', { timeout: 30000 }, async () => {
  const name = 'nano-compact';
  await couch.db.create(name);
  await couch.use<any>(name).insert({ a: 1 }, 'c1');
  assert.deepEqual(await couch.db.compact(name), { ok: true }, last());
  assert.equal(proxy.log.at(-1)!.status, 202);
  assert.equal((await couch.use<any>(name).get('c1')).a, 1);
  // The compaction ends with a `compacted` event: let it pass before listening.
  while ((await couch.db.get(name)).compact_running) await new Promise((r) => setTimeout(r, 20));

  // A longpoll _db_updates request answers with the next database event. Databases are created
  // until it answers, so it does not matter when the request reaches the server.
  let answered = false;
  const pending = (couch.updates({ feed: 'longpoll', timeout: 20000 } as any) as Promise<any>).finally(() => { answered = true; });
  const created: string[] = [];
  while (!answered) {
    const dbName = `nano-db-updates-${created.length}`;
    created.push(dbName);
    assert.equal((await raw.put(`/${dbName}`)).status, 201);
    await Promise.race([pending, new Promise((r) => setTimeout(r, 100))]);
  }
  const update = await pending;
  assert.ok(created.includes(update.db_name), `${JSON.stringify(update)} names one of ${created}\n${proxy.show('/_db_updates')}`);
  assert.equal(update.type, 'created');
  assert.equal(update.ok, true);
  for (const dbName of created) await couch.db.destroy(dbName);
  await couch.db.destroy(name);
});

// Last, because a request for a database that does not exist can take the server down.
test('missing database: 404 not_found no_db_file, and the server stays up', async () => {
  const missing = await failure(couch.db.get('nano-no-such-db'));
  assert.equal(missing.statusCode, 404, last());
  assert.equal(missing.error, 'not_found');
  assert.equal(missing.reason, 'no_db_file');

  // Documents of a missing database.
  const docInMissing = await failure(couch.use('nano-no-such-db').get('x'));
  assert.equal(docInMissing.statusCode, 404, last());
  assert.equal(docInMissing.error, 'not_found');
  assert.equal(docInMissing.reason, 'no_db_file');

  const still = await raw.get('/');
  assert.equal(still.status, 200, 'the server answers after 404s for a missing database');
});
