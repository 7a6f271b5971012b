/**
 * Writes that may add a revision without naming the current one (`_bulk_docs` with
 * all_or_nothing, `_bulk_docs` and `PUT` with new_edits=false) over real HTTP: the users
 * database's rules hold for them (no one but an admin adds a revision beside a user's own), the
 * replicator database's too (validate_doc_update's oldDoc for them: validate.test.ts).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');
const ALICE = basic('alice', 'alicepw');
const BOB = basic('bob', 'bobpw');
const ALICE_ID = 'org.couchdb.user:alice';
const FAR_HASH = 'f'.repeat(32);

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'alice', 'alicepw');
  await createUser(server.url, ROOT, 'bob', 'bobpw');
});

/** Alice's document as stored: it must have one leaf, and alice must still sign in with her password. */
async function assertAliceIntact(rev: string): Promise<void> {
  const leaves = await c.get(`/_users/${ALICE_ID}?open_revs=all`, { headers: ROOT });
  assert.equal(leaves.status, 200, leaves.text);
  assert.deepEqual((leaves.body as { ok: { _rev: string } }[]).map((leaf) => leaf.ok._rev), [rev]);
  const session = await c.get('/_session', { headers: ALICE });
  assert.equal(session.status, 200, session.text);
  assert.equal(session.body.userCtx.name, 'alice');
  assert.equal((await c.get('/_session', { headers: basic('alice', 'hijacked') })).status, 401);
}

test('no one but an admin adds a revision beside another user\'s document: all_or_nothing', async () => {
  const alice = (await c.get(`/_users/${ALICE_ID}`, { headers: ROOT })).body;
  const takeover = { _id: ALICE_ID, name: 'alice', type: 'user', roles: [], password: 'hijacked' };
  // Anonymous: CouchDB 1.6 validates such a branch with no oldDoc and stores it; here it is the
  // conflict CouchDB answers a sign-up under a taken name, in the aborted update's list.
  const anonymous = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [takeover] });
  assert.equal(anonymous.status, 417, anonymous.text);
  assert.deepEqual(anonymous.body, [{ id: ALICE_ID, rev: '0-', error: 'conflict', reason: 'Document update conflict.' }]);
  // A `_rev` that is no leaf (here far ahead, so the branch would win) starts a branch too.
  const ahead = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...takeover, _rev: `99-${FAR_HASH}` }] });
  assert.equal(ahead.status, 417, ahead.text);
  assert.deepEqual(ahead.body, [{ id: ALICE_ID, rev: `99-${FAR_HASH}`, error: 'conflict', reason: 'Document update conflict.' }]);
  // Another signed-in user: the document is not there for them, for the whole request (before_doc_update).
  const other = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [takeover] }, { headers: BOB });
  assert.equal(other.status, 404, other.text);
  assert.deepEqual(other.body, { error: 'not_found', reason: 'missing' });
  // Not even alice herself: a conflict would lock her out.
  const own = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...takeover, password: 'second' }] }, { headers: ALICE });
  assert.equal(own.status, 417, own.text);
  assert.equal(own.body[0].error, 'conflict');
  await assertAliceIntact(alice._rev);
});

test('no one but an admin adds a revision beside another user\'s document: new_edits=false', async () => {
  const alice = (await c.get(`/_users/${ALICE_ID}`, { headers: ROOT })).body;
  const [, aliceHash] = (alice._rev as string).split('-');
  const takeover = { _id: ALICE_ID, name: 'alice', type: 'user', roles: [], password: 'hijacked' };
  // A branch of its own (no stored ancestor: CouchDB validates it with no oldDoc), far ahead.
  const branch = { ...takeover, _rev: `50-${FAR_HASH}`, _revisions: { start: 50, ids: [FAR_HASH, 'e'.repeat(32)] } };
  const anonymous = await c.post('/_users/_bulk_docs', { new_edits: false, docs: [branch] });
  assert.equal(anonymous.status, 201, anonymous.text);
  assert.deepEqual(anonymous.body, [{ id: ALICE_ID, rev: branch._rev, error: 'conflict', reason: 'Document update conflict.' }]);
  const put = await c.put(`/_users/${encodeURIComponent(ALICE_ID)}?new_edits=false`, branch);
  assert.equal(put.status, 409, put.text);
  assert.equal(put.body.error, 'conflict');
  // A child of alice's revision is judged against it: only alice changes her document.
  const child = { ...takeover, _rev: `2-${FAR_HASH}`, _revisions: { start: 2, ids: [FAR_HASH, aliceHash] } };
  const edit = await c.post('/_users/_bulk_docs', { new_edits: false, docs: [child] });
  assert.equal(edit.status, 201, edit.text);
  assert.deepEqual(edit.body, [{ id: ALICE_ID, rev: child._rev, error: 'forbidden', reason: 'You may only update your own user document.' }]);
  // Another signed-in user: not found, for the whole request.
  for (const docs of [[branch], [child]]) {
    const other = await c.post('/_users/_bulk_docs', { new_edits: false, docs }, { headers: BOB });
    assert.equal(other.status, 404, other.text);
    assert.equal(other.body.error, 'not_found');
  }
  const otherPut = await c.put(`/_users/${encodeURIComponent(ALICE_ID)}?new_edits=false`, branch, { headers: BOB });
  assert.equal(otherPut.status, 404, otherPut.text);
  await assertAliceIntact(alice._rev);
});

test('admins still replicate user documents, conflicts included, and sign-ups still work', async () => {
  await createUser(server.url, ROOT, 'carol', 'carolpw');
  const carol = (await c.get('/_users/org.couchdb.user:carol', { headers: ROOT })).body;
  const [, carolHash] = (carol._rev as string).split('-');
  const next = { ...carol, _rev: `2-${FAR_HASH}`, _revisions: { start: 2, ids: [FAR_HASH, carolHash] }, roles: ['staff'] };
  const branch = { ...carol, _rev: `1-${'e'.repeat(32)}`, _revisions: undefined, roles: ['other'] };
  const replicated = await c.post('/_users/_bulk_docs', { new_edits: false, docs: [next, branch] }, { headers: ROOT });
  assert.equal(replicated.status, 201, replicated.text);
  assert.deepEqual(replicated.body, []);
  const leaves = await c.get('/_users/org.couchdb.user:carol?open_revs=all', { headers: ROOT });
  assert.equal(leaves.body.length, 2, leaves.text);
  const aon = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'org.couchdb.user:carol', name: 'carol', type: 'user', roles: [] }] }, { headers: ROOT });
  assert.equal(aon.status, 201, aon.text);
  // Sign-ups, own edits and replicated own edits of a user who is not an admin go on.
  const dave = await c.put('/_users/org.couchdb.user:dave', { name: 'dave', type: 'user', roles: [], password: 'davepw' });
  assert.equal(dave.status, 201, dave.text);
  const daveDoc = (await c.get('/_users/org.couchdb.user:dave', { headers: basic('dave', 'davepw') })).body;
  const [, daveHash] = (daveDoc._rev as string).split('-');
  const ownNext = { ...daveDoc, _rev: `2-${FAR_HASH}`, _revisions: { start: 2, ids: [FAR_HASH, daveHash] }, note: 'replicated' };
  const own = await c.post('/_users/_bulk_docs', { new_edits: false, docs: [ownNext] }, { headers: basic('dave', 'davepw') });
  assert.deepEqual(own.body, []);
  const edited = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...ownNext, _revisions: undefined, note: 'edited' }] }, { headers: basic('dave', 'davepw') });
  assert.equal(edited.status, 201, edited.text);
  assert.equal((await c.get('/_session', { headers: basic('dave', 'davepw') })).body.userCtx.name, 'dave');
});

test('all_or_nothing: a refusal by the users database\'s validation is a 417 list, and nothing is written', async () => {
  const raise = { _id: 'org.couchdb.user:erin', name: 'erin', type: 'user', roles: ['boss'], password: 'x' };
  const fine = { _id: 'org.couchdb.user:frank', name: 'frank', type: 'user', roles: [], password: 'y' };
  const ddoc = { _id: '_design/mine', views: {} };
  const r = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [raise, fine, ddoc] });
  assert.equal(r.status, 417, r.text);
  assert.deepEqual(r.body, [
    { id: 'org.couchdb.user:erin', rev: '0-', error: 'forbidden', reason: 'Only _admin may set roles' },
    { id: '_design/mine', rev: '0-', error: 'unauthorized', reason: 'You are not a db or server admin.' },
  ]);
  assert.equal((await c.get('/_users/org.couchdb.user:frank', { headers: ROOT })).status, 404);
});

test('_replicator: a write is held to the rules of the revision it replaces, not only the winner\'s', async () => {
  // Two branches (an admin's replication): alice's loses to bob's.
  const job = { source: 'no-such-source', target: 'no-such-target', _replication_state: 'completed' };
  const aliceLeaf = { _id: 'shared', _rev: `1-${'a'.repeat(32)}`, ...job, owner: 'alice', user_ctx: { name: 'alice' } };
  const bobLeaf = { _id: 'shared', _rev: `2-${'b'.repeat(32)}`, ...job, owner: 'bob', user_ctx: { name: 'bob' } };
  const replicated = await c.post('/_replicator/_bulk_docs', { new_edits: false, docs: [aliceLeaf, bobLeaf] }, { headers: ROOT });
  assert.deepEqual(replicated.body, []);
  assert.equal((await c.get('/_replicator/shared', { headers: ROOT })).body.owner, 'bob');
  // Bob may not delete or take over alice's branch, though the winner is his.
  const del = await c.del(`/_replicator/shared?rev=${aliceLeaf._rev}`, { headers: BOB });
  assert.equal(del.status, 403, del.text);
  const edit = await c.put('/_replicator/shared', { ...job, _rev: aliceLeaf._rev, owner: 'bob', user_ctx: { name: 'bob' } }, { headers: BOB });
  assert.equal(edit.status, 403, edit.text);
  const leaves = await c.get('/_replicator/shared?open_revs=all', { headers: ROOT });
  assert.deepEqual((leaves.body as { ok: { _rev: string } }[]).map((leaf) => leaf.ok._rev).sort(), [aliceLeaf._rev, bobLeaf._rev]);
  // Another user's document refused by the owner rule (before_doc_update) fails the whole request.
  const bulk = await c.post('/_replicator/_bulk_docs', { docs: [{ _id: 'bobs-own', ...job, user_ctx: { name: 'bob' } }, { ...aliceLeaf, _rev: undefined, owner: 'bob' }] }, { headers: ALICE });
  assert.equal(bulk.status, 403, bulk.text);
  assert.equal(bulk.body.reason, "Can't update replication documents from other users.");
  assert.equal((await c.get('/_replicator/bobs-own', { headers: ROOT })).status, 404);
});
