/**
 * The users database over real HTTP: sign-up, password hashing on every write, own-document
 * reads and writes only, public_fields, admin-only listings, the unchangeable `_design/_auth`,
 * and no way for a user to raise their own roles (own document, _bulk_docs, COPY, replication).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';
import type { Response } from '../helpers/http.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');
const BOB = basic('bob', 'bobpw');
const ALICE = basic('alice', 'alicepw');
const SECRET_FIELDS = ['password', 'derived_key', 'salt', 'password_sha'];

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
});

test('anyone may sign up; the password is replaced by pbkdf2 material', async () => {
  const r = await c.put('/_users/org.couchdb.user:bob', { name: 'bob', password: 'bobpw', roles: [], type: 'user' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.id, 'org.couchdb.user:bob');
  const doc = (await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body;
  assert.equal(doc.password, undefined);
  assert.equal(doc.password_scheme, 'pbkdf2');
  assert.equal(doc.iterations, 10);
  assert.match(doc.derived_key, /^[0-9a-f]{40}$/);
  assert.match(doc.salt, /^[0-9a-f]{32}$/);
  const session = await c.get('/_session', { headers: BOB });
  assert.deepEqual(session.body.userCtx, { name: 'bob', roles: [] });
  await createUser(server.url, ROOT, 'alice', 'alicepw');
});

test('malformed user documents are refused with 403 forbidden', async () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['org.couchdb.user:carol', { name: 'carol', password: 'x', roles: ['boss'], type: 'user' }, /Only _admin may set roles/],
    ['org.couchdb.user:carol', { name: 'dave', password: 'x', roles: [], type: 'user' }, /Doc ID must be of the form org.couchdb.user:name/],
    ['org.couchdb.user:carol', { name: 'carol', password: 'x', roles: [], type: 'person' }, /doc.type must be user/],
    ['org.couchdb.user:carol', { name: 'carol', password: 'x', type: 'user' }, /doc.roles must exist/],
    ['org.couchdb.user:carol', { name: 'carol', password: 'x', roles: 'none', type: 'user' }, /doc.roles must be an array/],
    ['carol', { name: 'carol', password: 'x', roles: [], type: 'user' }, /Doc ID must be of the form/],
    ['org.couchdb.user:_carol', { name: '_carol', password: 'x', roles: [], type: 'user' }, /underscore/],
  ];
  for (const [id, doc, reason] of cases) {
    const r = await c.put(`/_users/${encodeURIComponent(id)}`, doc);
    assert.equal(r.status, 403, `${id} ${JSON.stringify(doc)}: ${r.text}`);
    assert.equal(r.body.error, 'forbidden');
    assert.match(r.body.reason, reason);
  }
  // Not even admins may give system roles.
  const system = await c.put('/_users/org.couchdb.user:carol', { name: 'carol', password: 'x', roles: ['_admin'], type: 'user' }, { headers: ROOT });
  assert.equal(system.status, 403);
  assert.match(system.body.reason, /No system roles/);
});

test('users read only their own document; others are 404 missing whether or not they exist', async () => {
  const own = await c.get('/_users/org.couchdb.user:bob', { headers: BOB });
  assert.equal(own.status, 200);
  assert.equal(own.body.name, 'bob');
  for (const headers of [ALICE, {}]) {
    for (const id of ['org.couchdb.user:bob', 'org.couchdb.user:nobody']) {
      const r = await c.get(`/_users/${id}`, { headers });
      assert.equal(r.status, 404, `${id}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'not_found', reason: 'missing' });
    }
  }
  assert.equal((await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).status, 200);
});

test('with users_db_public, a delete of another user\'s document is 404, with or without a rev', async () => {
  assert.equal((await c.put('/_config/couch_httpd_auth/users_db_public', 'true', { headers: { ...ROOT, 'X-Couch-Persist': 'false' } })).status, 200);
  try {
    const bob = await c.get('/_users/org.couchdb.user:bob', { headers: ROOT });
    assert.equal(bob.status, 200, bob.text);
    for (const query of ['', `?rev=${bob.body._rev}`]) {
      const r = await c.del(`/_users/org.couchdb.user:bob${query}`, { headers: ALICE });
      assert.equal(r.status, 404, `${query}: ${r.text}`);
      assert.equal(r.body.error, 'not_found');
    }
    // Their own, or an admin's, without a rev: the usual conflict.
    assert.equal((await c.del('/_users/org.couchdb.user:bob', { headers: ROOT })).status, 409);
  } finally {
    await c.del('/_config/couch_httpd_auth/users_db_public', { headers: { ...ROOT, 'X-Couch-Persist': 'false' } });
  }
});

test('public_fields are shown to other users and anonymous readers (CouchDB 1.6\'s after_doc_read), never password material', async () => {
  await c.put('/_config/couch_httpd_auth/public_fields', 'name, city, salt', { headers: ROOT });
  try {
    const doc = (await c.get('/_users/org.couchdb.user:bob', { headers: BOB })).body;
    const put = await c.put('/_users/org.couchdb.user:bob', { ...doc, city: 'Lyon', phone: '555' }, { headers: BOB });
    assert.equal(put.status, 201, put.text);
    const seen = await c.get('/_users/org.couchdb.user:bob', { headers: ALICE });
    assert.equal(seen.status, 200);
    assert.deepEqual(Object.keys(seen.body).sort(), ['_id', '_rev', 'city', 'name']);
    assert.equal(seen.body.city, 'Lyon');
    const anonymous = await c.get('/_users/org.couchdb.user:bob');
    assert.equal(anonymous.status, 200);
    assert.deepEqual(Object.keys(anonymous.body).sort(), ['_id', '_rev', 'city', 'name']);
    // Public fields that a document does not have leave nothing to show: it reads as missing.
    await c.put('/_config/couch_httpd_auth/public_fields', 'nonexistent', { headers: ROOT });
    assert.equal((await c.get('/_users/org.couchdb.user:bob', { headers: ALICE })).status, 404);
  } finally {
    await c.del('/_config/couch_httpd_auth/public_fields', { headers: ROOT });
  }
});

test('users_db_public opens _all_docs once public_fields is set, never _changes', async () => {
  const set = (key: string, value: string) => c.put(`/_config/couch_httpd_auth/${key}`, value, { headers: { ...ROOT, 'X-Couch-Persist': 'false' } });
  const unset = (key: string) => c.del(`/_config/couch_httpd_auth/${key}`, { headers: { ...ROOT, 'X-Couch-Persist': 'false' } });
  assert.equal((await set('users_db_public', 'true')).status, 200);
  try {
    assert.equal((await c.get('/_users/_all_docs', { headers: ALICE })).status, 403);
    assert.equal((await set('public_fields', 'name')).status, 200);
    const listed = await c.get('/_users/_all_docs?include_docs=true', { headers: ALICE });
    assert.equal(listed.status, 200, listed.text);
    const bob = listed.body.rows.find((r: { id: string }) => r.id === 'org.couchdb.user:bob');
    assert.deepEqual(bob.doc, { name: 'bob' });
    // However the parameters come (repeated, in a POST body, as queries), documents stay cut.
    const forms = [
      await c.get('/_users/_all_docs?include_docs=true&include_docs=true', { headers: ALICE }),
      await c.post('/_users/_all_docs', { include_docs: true }, { headers: ALICE }),
    ];
    const queries = await c.post('/_users/_all_docs/queries', { queries: [{ include_docs: true }] }, { headers: ALICE });
    for (const rows of [...forms.map((r) => r.body.rows), queries.body.results[0].rows]) {
      const doc = rows.find((r: { id: string }) => r.id === 'org.couchdb.user:bob').doc;
      assert.deepEqual(doc, { name: 'bob' });
    }
    assert.equal((await c.get('/_users/_changes', { headers: ALICE })).status, 401);
  } finally {
    await unset('public_fields');
    await unset('users_db_public');
  }
});

test('listings, changes, bulk reads and views of the users database are admin-only', async () => {
  // couch_mrview_http:all_docs_req forbids _all_docs of system databases to every non-admin alike.
  for (const path of ['/_users/_all_docs', '/_users/_all_docs?include_docs=true']) {
    assert.equal((await c.get(path, { headers: BOB })).status, 403, path);
    assert.equal((await c.get(path)).status, 403, path);
  }
  // As CouchDB 1.6 answers: _changes wants an admin (401 for anyone else); design documents and
  // what reads them are forbidden (403) to non-admins, signed in or not.
  for (const path of ['/_users/_changes', '/_users/_changes?include_docs=true']) {
    for (const headers of [BOB, {}]) {
      const r = await c.get(path, { headers });
      assert.equal(r.status, 401, path);
      assert.equal(r.body.error, 'unauthorized', path);
    }
  }
  const refusals: [string, string][] = [
    ['/_users/_design/_auth/_view/x', 'Only admins can access design document actions for system databases.'],
    ['/_users/_design/_auth', 'Only administrators can view design docs in the users database.'],
  ];
  for (const [path, reason] of refusals) {
    for (const headers of [BOB, {}]) {
      const r = await c.get(path, { headers });
      assert.equal(r.status, 403, path);
      assert.equal(r.body.reason, reason, path);
    }
  }
  assert.equal((await c.get('/_users/_design/_auth', { headers: ROOT })).status, 200);
  const bulkGet = await c.post('/_users/_bulk_get', { docs: [{ id: 'org.couchdb.user:alice' }] }, { headers: BOB });
  assert.equal(bulkGet.status, 403);
  // _revs_diff answers for one's own document only: others' revisions all read as missing,
  // so it tells nothing about who exists.
  const aliceRev = (await c.get('/_users/org.couchdb.user:alice', { headers: ROOT })).body._rev;
  const bobRev = (await c.get('/_users/org.couchdb.user:bob', { headers: BOB })).body._rev;
  const revsDiff = await c.post('/_users/_revs_diff', {
    'org.couchdb.user:alice': [aliceRev], 'org.couchdb.user:bob': [bobRev, '9-abc'],
  }, { headers: BOB });
  assert.equal(revsDiff.status, 200);
  assert.deepEqual(revsDiff.body, {
    'org.couchdb.user:alice': { missing: [aliceRev] },
    'org.couchdb.user:bob': { missing: ['9-abc'], possible_ancestors: [bobRev] },
  });
  const all = await c.get('/_users/_all_docs?include_docs=true', { headers: ROOT });
  assert.equal(all.status, 200);
  assert.ok(all.body.rows.some((row: { id: string }) => row.id === 'org.couchdb.user:alice'));
});

test('no response to a non-admin carries another user\'s password material', async () => {
  const texts: string[] = [];
  for (const path of ['/_users/org.couchdb.user:alice', '/_users/_all_docs?include_docs=true', '/_users/_changes?include_docs=true',
    '/_users/org.couchdb.user:alice?open_revs=all', '/_users/org.couchdb.user:alice?revs_info=true']) {
    texts.push((await c.get(path, { headers: BOB })).text);
  }
  const alice = (await c.get('/_users/org.couchdb.user:alice', { headers: ROOT })).body;
  for (const text of texts) {
    assert.ok(!text.includes(alice.derived_key));
    assert.ok(!text.includes(alice.salt));
    for (const field of SECRET_FIELDS) assert.ok(!text.includes(`"${field}"`), text);
  }
});

test('a password change is a write of the document with a new password', async () => {
  const doc = (await c.get('/_users/org.couchdb.user:bob', { headers: BOB })).body;
  const r = await c.put('/_users/org.couchdb.user:bob', { ...doc, password: 'newpw' }, { headers: BOB });
  assert.equal(r.status, 201, r.text);
  assert.equal((await c.get('/_session', { headers: BOB })).status, 401);
  const session = await c.get('/_session', { headers: basic('bob', 'newpw') });
  assert.deepEqual(session.body.userCtx, { name: 'bob', roles: [] });
  const stored = (await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body;
  assert.notEqual(stored.salt, doc.salt);
  assert.equal(stored.password, undefined);
});

test('users change only their own document', async () => {
  const NEWBOB = basic('bob', 'newpw');
  const alice = (await c.get('/_users/org.couchdb.user:alice', { headers: ROOT })).body;
  // As in CouchDB 1.6, another user's document is not there for a signed-in user who is not an admin.
  const r = await c.put('/_users/org.couchdb.user:alice', { ...alice, password: 'hijacked' }, { headers: NEWBOB });
  assert.equal(r.status, 404);
  assert.equal(r.body.error, 'not_found');
  const del = await c.del(`/_users/org.couchdb.user:alice?rev=${alice._rev}`, { headers: NEWBOB });
  assert.equal(del.status, 404);
  // couch_users_db:before_doc_update runs before the design-document check: a design document is
  // not there for them either, and it fails a _bulk_docs request whole. Anonymous writers get
  // the design-document check itself, per document.
  const ddoc = await c.put('/_users/_design/mine', { views: {} }, { headers: NEWBOB });
  assert.equal(ddoc.status, 404, ddoc.text);
  assert.deepEqual(ddoc.body, { error: 'not_found', reason: 'missing' });
  const bulk = await c.post('/_users/_bulk_docs', { docs: [{ _id: '_design/mine' }] }, { headers: NEWBOB });
  assert.equal(bulk.status, 404, bulk.text);
  const anonymous = await c.post('/_users/_bulk_docs', { docs: [{ _id: '_design/mine' }] });
  assert.equal(anonymous.status, 201, anonymous.text);
  assert.deepEqual(anonymous.body, [{ id: '_design/mine', error: 'unauthorized', reason: 'You are not a db or server admin.' }]);
  assert.equal((await c.get('/_users/_design/mine', { headers: ROOT })).status, 404, 'nothing was written');
  // Anonymous callers may sign up, but recreating an existing user without its revision is a conflict.
  const again = await c.put('/_users/org.couchdb.user:alice', { _id: 'org.couchdb.user:alice', type: 'user', name: 'alice', roles: [], password: 'x' });
  assert.equal(again.status, 409);
  assert.equal(again.body.error, 'conflict');
  assert.equal((await c.get('/_session', { headers: ALICE })).body.userCtx.name, 'alice');
});

test('a user cannot raise their own roles: own document, _bulk_docs, COPY, replication', async () => {
  const NEWBOB = basic('bob', 'newpw');
  const doc = (await c.get('/_users/org.couchdb.user:bob', { headers: NEWBOB })).body;

  const own = await c.put('/_users/org.couchdb.user:bob', { ...doc, roles: ['boss'] }, { headers: NEWBOB });
  assert.equal(own.status, 403);
  assert.match(own.body.reason, /Only _admin may edit roles/);

  const bulk = await c.post('/_users/_bulk_docs', { docs: [{ ...doc, roles: ['boss'] }] }, { headers: NEWBOB });
  assert.equal(bulk.status, 201);
  assert.equal(bulk.body[0].error, 'forbidden');

  // Replication-style writes (new_edits=false) of a revision with more roles.
  const replicated = await c.post('/_users/_bulk_docs', {
    new_edits: false,
    docs: [{ ...doc, _rev: '9-feedface', _revisions: { start: 9, ids: ['feedface'] }, roles: ['boss'] }],
  }, { headers: NEWBOB });
  assert.equal(replicated.status, 201);
  assert.equal(replicated.body[0].error, 'forbidden');

  // COPY of a document with roles onto one's own: the source cannot even be read.
  await createUser(server.url, ROOT, 'carol', 'carolpw', ['boss']);
  const copy = await c.copy('/_users/org.couchdb.user:carol', { headers: { ...NEWBOB, Destination: `org.couchdb.user:bob?rev=${doc._rev}` } });
  assert.equal(copy.status, 404);
  // COPY of one's own document onto another user's is refused too (that one is not there for bob).
  const copyOut = await c.copy('/_users/org.couchdb.user:bob', { headers: { ...NEWBOB, Destination: 'org.couchdb.user:eve' } });
  assert.equal(copyOut.status, 404);

  const session = await c.get('/_session', { headers: NEWBOB });
  assert.deepEqual(session.body.userCtx.roles, []);
  assert.deepEqual((await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body.roles, []);
});

test('admins set roles; the roles count at once', async () => {
  await c.put('/staff', undefined, { headers: ROOT });
  await c.put('/staff/_security', { admins: { names: [], roles: [] }, members: { names: [], roles: ['staff'] } }, { headers: ROOT });
  const ALICE_ = ALICE;
  assert.equal((await c.get('/staff', { headers: ALICE_ })).status, 401);
  const alice = (await c.get('/_users/org.couchdb.user:alice', { headers: ROOT })).body;
  assert.equal((await c.put('/_users/org.couchdb.user:alice', { ...alice, roles: ['staff'] }, { headers: ROOT })).status, 201);
  assert.equal((await c.get('/staff', { headers: ALICE_ })).status, 200);
  assert.deepEqual((await c.get('/_session', { headers: ALICE_ })).body.userCtx.roles, ['staff']);
});

test('_design/_auth exists with a validation function and nobody can change it', async () => {
  const ddoc = await c.get('/_users/_design/_auth', { headers: ROOT });
  assert.equal(ddoc.status, 200);
  assert.equal(typeof ddoc.body.validate_doc_update, 'string');
  assert.match(ddoc.body.validate_doc_update, /^function/);
  const put = await c.put('/_users/_design/_auth', { ...ddoc.body, validate_doc_update: 'function(){}' }, { headers: ROOT });
  assert.equal(put.status, 403);
  const del = await c.del(`/_users/_design/_auth?rev=${ddoc.body._rev}`, { headers: ROOT });
  assert.equal(del.status, 403);
  assert.equal((await c.get('/_users/_design/_auth', { headers: ROOT })).body._rev, ddoc.body._rev);
});

test('an all_or_nothing write beside a user document is checked as a new one and its password hashed', async () => {
  await createUser(server.url, ROOT, 'dora', 'dorapw');
  const user = { _id: 'org.couchdb.user:dora', name: 'dora', type: 'user' };
  // Without a _rev the write makes a conflict, which CouchDB validates with no oldDoc.
  // (Refused before the updater as one error, or by a validator in the list of an aborted update.)
  const reasonOf = (r: Response) => (r.status === 417 ? r.body[0].reason : r.body.reason) as string;
  const raise = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...user, roles: ['boss'], password: 'x' }] }, { headers: basic('dora', 'dorapw') });
  assert.ok(raise.status === 403 || raise.status === 417, raise.text);
  assert.equal(reasonOf(raise), 'Only _admin may set roles');
  const system = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...user, roles: ['_admin'] }] }, { headers: ROOT });
  assert.ok(system.status === 403 || system.status === 417, system.text);
  assert.equal(reasonOf(system), 'No system roles (starting with underscore) in users db.');
  const written = await c.post('/_users/_bulk_docs', { all_or_nothing: true, docs: [{ ...user, roles: [], password: 'in the clear' }] }, { headers: ROOT });
  assert.equal(written.status, 201, written.text);
  const leaves = await c.get(`/_users/${user._id}?open_revs=all`, { headers: { ...ROOT, Accept: 'application/json' } });
  assert.equal(leaves.body.length, 2, leaves.text);
  for (const leaf of leaves.body as { ok: Record<string, unknown> }[]) {
    assert.equal(leaf.ok['password'], undefined, JSON.stringify(leaf.ok));
    assert.match(String(leaf.ok['derived_key']), /^[0-9a-f]{40}$/);
  }
});

test('re-creating a deleted user document on its tombstone is refused, as _design/_auth sees the tombstone as oldDoc', async () => {
  await createUser(server.url, ROOT, 'gone', 'gonepw');
  const doc = (await c.get('/_users/org.couchdb.user:gone', { headers: ROOT })).body;
  const del = await c.del(`/_users/org.couchdb.user:gone?rev=${doc._rev}`, { headers: ROOT });
  assert.equal(del.status, 200, del.text);
  const again = { name: 'gone', type: 'user', roles: [], password: 'again' };
  const onTombstone = await c.put(`/_users/org.couchdb.user:gone?rev=${del.body.rev}`, again, { headers: ROOT });
  assert.equal(onTombstone.status, 403, onTombstone.text);
  assert.equal(onTombstone.body.reason, 'doc.type must be user');
  assert.equal((await c.put('/_users/org.couchdb.user:gone', again, { headers: ROOT })).status, 201);
});

test('_design/_auth runs as any validator where its rules are not the server\'s own: another text, or outside the users database', async () => {
  const serverText = (await c.get('/_users/_design/_auth', { headers: ROOT })).body.validate_doc_update as string;
  // The server's text in an ordinary database: nothing enforces it natively there.
  assert.equal((await c.put('/not-users', undefined, { headers: ROOT })).status, 201);
  assert.equal((await c.put('/not-users/_design/_auth', { validate_doc_update: serverText }, { headers: ROOT })).status, 201);
  const plain = await c.put('/not-users/plain', { a: 1 }, { headers: ROOT });
  assert.equal(plain.status, 403, plain.text);
  assert.equal(plain.body.reason, 'doc.type must be user');

  // A users database whose _design/_auth holds other rules: they run besides the native ones.
  assert.equal((await c.put('/foreign-users', undefined, { headers: ROOT })).status, 201);
  const foreign = 'function (newDoc) { if (newDoc.flagged) throw ({ forbidden: "foreign rules" }); }';
  assert.equal((await c.put('/foreign-users/_design/_auth', { validate_doc_update: foreign }, { headers: ROOT })).status, 201);
  // A write to _users first, so its validators are loaded while it is the users database.
  await createUser(server.url, ROOT, 'hal', 'halpw');
  const setAuthDb = (name: string) =>
    c.put('/_config/couch_httpd_auth/authentication_db', name, { headers: { ...ROOT, 'X-Couch-Persist': 'false' } });
  assert.equal((await setAuthDb('foreign-users')).status, 200);
  try {
    const flagged = await c.put('/foreign-users/org.couchdb.user:ivy', { name: 'ivy', type: 'user', roles: [], password: 'ivypw', flagged: true });
    assert.equal(flagged.status, 403, flagged.text);
    assert.equal(flagged.body.reason, 'foreign rules');
    assert.equal((await c.put('/foreign-users/org.couchdb.user:ivy', { name: 'ivy', type: 'user', roles: [], password: 'ivypw' })).status, 201);
    // _users is an ordinary database now: its _design/_auth runs in the sandbox.
    const notAUser = await c.put('/_users/plain', { a: 1 }, { headers: ROOT });
    assert.equal(notAUser.status, 403, notAUser.text);
    assert.equal(notAUser.body.reason, 'doc.type must be user');
  } finally {
    assert.equal((await setAuthDb('_users')).status, 200);
  }
});

test('a user may delete their own document, and then cannot log in', async () => {
  await createUser(server.url, ROOT, 'temp', 'temppw');
  const doc = (await c.get('/_users/org.couchdb.user:temp', { headers: basic('temp', 'temppw') })).body;
  const del = await c.del(`/_users/org.couchdb.user:temp?rev=${doc._rev}`, { headers: basic('temp', 'temppw') });
  assert.equal(del.status, 200, del.text);
  assert.equal((await c.get('/_session', { headers: basic('temp', 'temppw') })).status, 401);
});

test('1000 wrong passwords do not stop another user from working', async () => {
  const wrong = Array.from({ length: 1000 }, (_, i) => c.get('/_session', { headers: basic('alice', `guess${i}`) }));
  const right = Array.from({ length: 20 }, () => c.get('/_session', { headers: basic('bob', 'newpw') }));
  const [wrongResults, rightResults] = await Promise.all([Promise.all(wrong), Promise.all(right)]);
  assert.ok(wrongResults.every((r) => r.status === 401));
  assert.ok(rightResults.every((r) => r.status === 200 && r.body.userCtx.name === 'bob'));
});

test('naming another authentication_db creates it with _design/_auth; its users log in', async () => {
  const r = await c.put('/_config/couch_httpd_auth/authentication_db', 'people', { headers: ROOT });
  assert.equal(r.status, 200);
  try {
    let ddoc = await c.get('/people/_design/_auth', { headers: ROOT });
    // Created in the background: allow a loaded machine some seconds.
    for (let i = 0; i < 250 && ddoc.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ddoc = await c.get('/people/_design/_auth', { headers: ROOT });
    }
    assert.equal(ddoc.status, 200);
    assert.equal((await c.put('/people/org.couchdb.user:zoe', { name: 'zoe', password: 'zoepw', roles: [], type: 'user' })).status, 201);
    const session = await c.get('/_session', { headers: basic('zoe', 'zoepw') });
    assert.equal(session.body.userCtx.name, 'zoe');
    assert.equal(session.body.info.authentication_db, 'people');
    assert.equal((await c.get('/_session', { headers: basic('bob', 'newpw') })).status, 401);
  } finally {
    await c.put('/_config/couch_httpd_auth/authentication_db', '_users', { headers: ROOT });
  }
  assert.equal((await c.get('/_session', { headers: basic('bob', 'newpw') })).body.userCtx.name, 'bob');
});
