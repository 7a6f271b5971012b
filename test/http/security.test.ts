/**
 * Per-database security over real HTTP: the five access rules of the security object applied
 * to every endpoint of a database, 401 for callers who are not members (anonymous or signed in), database admins' extra rights, and design documents needing a database admin.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';
import { waitFor } from '../helpers/wait.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');
const MEMBER = basic('mia', 'miapw'); // member by name
const ROLE_MEMBER = basic('rita', 'ritapw'); // member by role
const DBADMIN = basic('dan', 'danpw'); // database admin by name
const ROLE_ADMIN = basic('ada', 'adapw'); // database admin by role
const OUTSIDER = basic('otto', 'ottopw');

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'mia', 'miapw');
  await createUser(server.url, ROOT, 'rita', 'ritapw', ['crew']);
  await createUser(server.url, ROOT, 'dan', 'danpw');
  await createUser(server.url, ROOT, 'ada', 'adapw', ['chiefs']);
  await createUser(server.url, ROOT, 'otto', 'ottopw');
  for (const db of ['open', 'closed']) {
    assert.equal((await c.put(`/${db}`, undefined, { headers: ROOT })).status, 201);
    await c.put(`/${db}/doc`, { a: 1 }, { headers: ROOT });
    await c.put(`/${db}/_design/app`, { views: { all: { map: 'function(doc){ emit(doc._id, 1); }' } } }, { headers: ROOT });
  }
  const security = {
    admins: { names: ['dan'], roles: ['chiefs'] },
    members: { names: ['mia'], roles: ['crew'] },
    custom: 'extra fields are kept',
  };
  assert.equal((await c.put('/closed/_security', security, { headers: ROOT })).status, 200);
});

test('a never-set security object reads as empty; a set one reads back with its extra fields', async () => {
  assert.deepEqual((await c.get('/open/_security')).body, {});
  const sec = (await c.get('/closed/_security', { headers: MEMBER })).body;
  assert.deepEqual(sec.members, { names: ['mia'], roles: ['crew'] });
  assert.equal(sec.custom, 'extra fields are kept');
});

test('rule 1: with no members, anyone (anonymous too) reads and writes ordinary documents', async () => {
  for (const headers of [{}, OUTSIDER]) {
    assert.equal((await c.get('/open', { headers })).status, 200);
    assert.equal((await c.get('/open/doc', { headers })).status, 200);
    const r = await c.post('/open', { by: headers === OUTSIDER ? 'otto' : 'anon' }, { headers });
    assert.equal(r.status, 201);
  }
});

test('rule 1: with members, others are refused everywhere: 401, anonymous or signed in', async () => {
  const endpoints: [string, string, unknown?][] = [
    ['GET', '/closed'],
    ['HEAD', '/closed'],
    ['POST', '/closed', { x: 1 }],
    ['GET', '/closed/doc'],
    ['PUT', '/closed/newdoc', { x: 1 }],
    ['DELETE', '/closed/doc?rev=1-x'],
    ['GET', '/closed/_all_docs'],
    ['POST', '/closed/_all_docs', { keys: ['doc'] }],
    ['GET', '/closed/_changes'],
    ['POST', '/closed/_bulk_docs', { docs: [{ x: 1 }] }],
    ['POST', '/closed/_bulk_get', { docs: [{ id: 'doc' }] }],
    ['POST', '/closed/_revs_diff', { doc: ['1-a'] }],
    ['POST', '/closed/_missing_revs', { doc: ['1-a'] }],
    ['GET', '/closed/_local/cp'],
    ['PUT', '/closed/_local/cp', { x: 1 }],
    ['GET', '/closed/doc/att.txt'],
    ['PUT', '/closed/doc/att.txt?rev=1-x', 'text'],
    ['GET', '/closed/_design/app/_view/all'],
    ['GET', '/closed/_design/app/_info'],
    ['GET', '/closed/_security'],
    ['GET', '/closed/_revs_limit'],
    ['POST', '/closed/_ensure_full_commit', {}],
  ];
  for (const [method, path, body] of endpoints) {
    const anon = await c.request(method, path, { body });
    assert.equal(anon.status, 401, `anonymous ${method} ${path}: ${anon.text}`);
    if (method !== 'HEAD') assert.equal(anon.body.error, 'unauthorized');
    // Signed in but not a member: 401 too, as CouchDB 1.6 answers.
    const outsider = await c.request(method, path, { body, headers: OUTSIDER });
    assert.equal(outsider.status, 401, `outsider ${method} ${path}: ${outsider.text}`);
    if (method !== 'HEAD') assert.deepEqual(outsider.body, { error: 'unauthorized', reason: 'You are not authorized to access this db.' });
  }
});

test('rule 2: members by name or role read everything and write all but design documents', async () => {
  for (const [i, headers] of [MEMBER, ROLE_MEMBER].entries()) {
    assert.equal((await c.get('/closed', { headers })).status, 200);
    assert.equal((await c.get('/closed/doc', { headers })).status, 200);
    assert.equal((await c.get('/closed/_all_docs', { headers })).status, 200);
    assert.equal((await c.get('/closed/_changes', { headers })).status, 200);
    assert.equal((await c.get('/closed/_design/app/_view/all', { headers })).status, 200);
    const put = await c.post('/closed', { by: 'member' }, { headers });
    assert.equal(put.status, 201);
    const att = await c.request('PUT', `/closed/${put.body.id}/note.txt?rev=${put.body.rev}`, { raw: 'hello', headers: { ...headers, 'Content-Type': 'text/plain' } });
    assert.equal(att.status, 201);
    assert.equal((await c.put(`/closed/_local/cp${i}`, { seq: 1 }, { headers })).status, 201);
    const ddoc = await c.put('/closed/_design/mine', { views: {} }, { headers });
    assert.equal(ddoc.status, 401);
    assert.deepEqual(ddoc.body, { error: 'unauthorized', reason: 'You are not a db or server admin.' });
  }
});

test('design-document writes need a database admin on every path', async () => {
  const existing = (await c.get('/closed/_design/app', { headers: MEMBER })).body;
  const attempts = [
    () => c.put('/closed/_design/app', { ...existing, views: {} }, { headers: MEMBER }),
    () => c.del(`/closed/_design/app?rev=${existing._rev}`, { headers: MEMBER }),
    () => c.request('PUT', `/closed/_design/app/f.txt?rev=${existing._rev}`, { raw: 'x', headers: { ...MEMBER, 'Content-Type': 'text/plain' } }),
    () => c.copy('/closed/doc', { headers: { ...MEMBER, Destination: '_design/copied' } }),
    () => c.post('/closed', { _id: '_design/posted' }, { headers: MEMBER }),
  ];
  for (const attempt of attempts) {
    const r = await attempt();
    assert.equal(r.status, 401, r.text);
  }
  const bulk = await c.post('/closed/_bulk_docs', { docs: [{ _id: '_design/bulk' }, { _id: 'plain-from-bulk' }] }, { headers: MEMBER });
  assert.equal(bulk.status, 201);
  assert.equal(bulk.body[0].error, 'unauthorized');
  assert.equal(bulk.body[1].ok, true);
  assert.equal((await c.get('/closed/_design/bulk', { headers: ROOT })).status, 404);
  assert.equal((await c.get('/closed/_design/app', { headers: ROOT })).body._rev, existing._rev);
});

test('rule 3: database admins (by name or role) write design documents, security, revs limit; run admin tasks', async () => {
  for (const [i, headers] of [DBADMIN, ROLE_ADMIN].entries()) {
    assert.equal((await c.put(`/closed/_design/admin${i}`, { views: {} }, { headers })).status, 201);
    assert.equal((await c.put('/closed/_revs_limit', 500, { headers })).status, 200);
    assert.equal((await c.post('/closed/_compact', {}, { headers })).status, 202);
    assert.equal((await c.post('/closed/_view_cleanup', {}, { headers })).status, 202);
    const temp = await c.post('/closed/_temp_view', { map: 'function(doc){ emit(null, 1); }' }, { headers });
    assert.equal(temp.status, 200, temp.text);
    const sec = (await c.get('/closed/_security', { headers })).body;
    assert.equal((await c.put('/closed/_security', sec, { headers })).status, 200);
    // They cannot create or delete databases.
    assert.equal((await c.put(`/made-by-dbadmin${i}`, undefined, { headers })).status, 401);
    assert.equal((await c.del('/closed', { headers })).status, 401);
  }
});

test('a design document\'s compaction: its existence first, then a database admin, then a JSON body (CouchDB 1.6)', async () => {
  await c.put('/open/_design/gone', { views: {} }, { headers: ROOT });
  const gone = (await c.get('/open/_design/gone', { headers: ROOT })).body._rev;
  assert.equal((await c.del(`/open/_design/gone?rev=${gone}`, { headers: ROOT })).status, 200);
  const text = { 'Content-Type': 'text/plain' };
  for (const path of ['/open/_compact/nothing', '/open/_design/nothing/_compact']) {
    // Missing for anyone, whatever the body says.
    for (const headers of [{}, OUTSIDER, { ...OUTSIDER, ...text }, { ...ROOT, ...text }]) {
      const r = await c.request('POST', path, { raw: '{}', headers });
      assert.equal(r.status, 404, `${path} ${JSON.stringify(headers)}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'not_found', reason: 'missing' });
    }
  }
  const deleted = await c.request('POST', '/open/_compact/gone', { raw: '{}', headers: OUTSIDER });
  assert.deepEqual([deleted.status, deleted.body], [404, { error: 'not_found', reason: 'deleted' }]);
  for (const path of ['/open/_compact/app', '/open/_design/app/_compact']) {
    // An existing one: the caller's rights before the content type.
    const refused = await c.request('POST', path, { raw: '{}', headers: { ...OUTSIDER, ...text } });
    assert.deepEqual([refused.status, refused.body], [401, { error: 'unauthorized', reason: 'You are not a db or server admin.' }]);
    const plain = await c.request('POST', path, { raw: '{}', headers: { ...ROOT, ...text } });
    assert.equal(plain.status, 415, plain.text);
    assert.equal(plain.body.error, 'bad_content_type');
    assert.equal((await c.post(path, {}, { headers: ROOT })).status, 202);
  }
  // The database's own compaction: rights before the content type too.
  const db = await c.request('POST', '/open/_compact', { raw: '{}', headers: { ...OUTSIDER, ...text } });
  assert.equal(db.status, 401, db.text);
});

test('members cannot do database-admin things', async () => {
  const attempts: [string, string, unknown][] = [
    ['PUT', '/closed/_security', { members: { names: [], roles: [] } }],
    ['PUT', '/closed/_revs_limit', 10],
    ['POST', '/closed/_compact', {}],
    ['POST', '/closed/_view_cleanup', {}],
    ['POST', '/closed/_temp_view', { map: 'function(doc){ emit(null, 1); }' }],
    ['POST', '/closed/_purge', { doc: ['1-x'] }],
  ];
  for (const [method, path, body] of attempts) {
    const r = await c.request(method, path, { body, headers: MEMBER });
    assert.equal(r.status, 401, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.error, 'unauthorized');
  }
  assert.deepEqual((await c.get('/closed/_security', { headers: MEMBER })).body.members.names, ['mia']);
});

test('rule 4: with no database admins only server admins make admin-level changes', async () => {
  assert.equal((await c.put('/open/_design/x', { views: {} }, { headers: OUTSIDER })).status, 401);
  assert.equal((await c.put('/open/_security', { members: { names: ['otto'], roles: [] } }, { headers: OUTSIDER })).status, 401);
  assert.equal((await c.put('/open/_design/x', { views: {} }, { headers: ROOT })).status, 201);
});

test('rule 5: server admins count as database admins everywhere', async () => {
  assert.equal((await c.get('/closed/doc', { headers: ROOT })).status, 200);
  assert.equal((await c.put('/closed/_design/root', { views: {} }, { headers: ROOT })).status, 201);
  const sec = (await c.get('/closed/_security', { headers: ROOT })).body;
  assert.equal((await c.put('/closed/_security', sec, { headers: ROOT })).status, 200);
});

test('validation of _security bodies', async () => {
  // couch_db:validate_names_and_roles throws a bare message: CouchDB's 500 unknown_error.
  const r = await c.put('/open/_security', { members: { names: 'mia' } }, { headers: ROOT });
  assert.equal(r.status, 500);
  assert.deepEqual(r.body, { error: 'unknown_error', reason: 'names must be a JSON list of strings' });
});

test('validate_doc_update sees the authenticated user and the security object', async () => {
  assert.equal((await c.put('/closed/_design/guard', {
    validate_doc_update: `function(newDoc, oldDoc, userCtx, secObj) {
      if (newDoc.author !== userCtx.name) throw({forbidden: 'author must be ' + userCtx.name + ' in ' + userCtx.db});
      if (secObj.custom !== 'extra fields are kept') throw({forbidden: 'no security object'});
      if (newDoc.crewOnly && userCtx.roles.indexOf('crew') === -1) throw({unauthorized: 'crew only'});
    }`,
  }, { headers: ROOT })).status, 201);
  assert.equal((await c.put('/closed/by-mia', { author: 'mia' }, { headers: MEMBER })).status, 201);
  const wrong = await c.put('/closed/by-rita', { author: 'mia' }, { headers: ROLE_MEMBER });
  assert.equal(wrong.status, 403);
  assert.deepEqual(wrong.body, { error: 'forbidden', reason: 'author must be rita in closed' });
  assert.equal((await c.put('/closed/crew-1', { author: 'rita', crewOnly: true }, { headers: ROLE_MEMBER })).status, 201);
  const notCrew = await c.put('/closed/crew-2', { author: 'mia', crewOnly: true }, { headers: MEMBER });
  assert.equal(notCrew.status, 401);
  assert.equal(notCrew.body.reason, 'crew only');
  assert.equal((await c.del('/closed/_design/guard?rev=' + (await c.get('/closed/_design/guard', { headers: ROOT })).body._rev, { headers: ROOT })).status, 200);
});

test('_replicator: documents get their writer as owner; others read them without credentials and cannot change them', async () => {
  const source = 'http://mia:miapw@127.0.0.1:9/nowhere';
  const put = await c.put('/_replicator/mias-job', { source, target: 'no-such-target', user_ctx: { name: 'mia' } }, { headers: MEMBER });
  assert.equal(put.status, 201, put.text);
  const own = await c.get('/_replicator/mias-job', { headers: MEMBER });
  assert.equal(own.body.owner, 'mia');
  assert.equal(own.body.source, source);
  const other = await c.get('/_replicator/mias-job', { headers: OUTSIDER });
  assert.equal(other.status, 200);
  assert.equal(other.body.source, 'http://127.0.0.1:9/nowhere');
  assert.doesNotMatch(other.text, /miapw/);
  assert.equal((await c.get('/_replicator/mias-job?revs_info=true', { headers: OUTSIDER })).status, 403);
  assert.equal((await c.get('/_replicator/_all_docs?include_docs=true', { headers: OUTSIDER })).status, 403);
  // _changes with documents: others' documents without their credentials, as CouchDB 1.6 shows them.
  const changes = await c.get('/_replicator/_changes?include_docs=true', { headers: OUTSIDER });
  assert.equal(changes.status, 200, changes.text);
  const seen = (changes.body.results as { id: string; doc: { source?: unknown } }[]).find((r) => r.id === 'mias-job');
  assert.equal(seen?.doc.source, 'http://127.0.0.1:9/nowhere');
  assert.doesNotMatch(changes.text, /miapw/);
  const mine = await c.get('/_replicator/_changes?include_docs=true', { headers: MEMBER });
  assert.equal((mine.body.results as { id: string; doc: { source?: unknown } }[]).find((r) => r.id === 'mias-job')?.doc.source, source);
  // As for every system database, _all_docs and design-document actions are for admins.
  const listing = await c.get('/_replicator/_all_docs', { headers: OUTSIDER });
  assert.equal(listing.status, 403);
  assert.equal(listing.body.reason, 'Only admins can access _all_docs of system databases.');
  assert.equal((await c.get('/_replicator/_design/x/_view/y', { headers: OUTSIDER })).body.reason, 'Only admins can access design document actions for system databases.');
  const admin = await c.get('/_replicator/mias-job', { headers: ROOT });
  assert.equal(admin.body.source, source);
  const hijack = await c.put('/_replicator/mias-job', { ...other.body, owner: 'otto' }, { headers: OUTSIDER });
  assert.equal(hijack.status, 403);
  assert.equal(hijack.body.reason, "Can't update replication documents from other users.");
  const forged = await c.put('/_replicator/ottos-job', { source: 'a', target: 'b', owner: 'mia' }, { headers: OUTSIDER });
  assert.equal(forged.status, 403);
});

test('_replicator: a job runs as its document\'s user_ctx, with those rights only', async () => {
  for (const db of ['mia-copy', 'otto-copy']) assert.equal((await c.put(`/${db}`, undefined, { headers: ROOT })).status, 201);
  await c.put('/mia-copy/_security', { admins: { names: [], roles: [] }, members: { names: ['mia'], roles: [] } }, { headers: ROOT });
  assert.equal((await c.put('/_replicator/mia-reads-closed', { source: 'closed', target: 'mia-copy', user_ctx: { name: 'mia' } }, { headers: MEMBER })).status, 201);
  assert.equal((await c.put('/_replicator/otto-reads-closed', { source: 'closed', target: 'otto-copy', user_ctx: { name: 'otto' } }, { headers: OUTSIDER })).status, 201);
  const until = Date.now() + 30000;
  let mia: { _replication_state?: string } = {};
  let otto: { _replication_state?: string } = {};
  while (Date.now() < until) {
    mia = (await c.get('/_replicator/mia-reads-closed', { headers: ROOT })).body;
    otto = (await c.get('/_replicator/otto-reads-closed', { headers: ROOT })).body;
    if (mia._replication_state === 'completed' && otto._replication_state === 'error') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(mia._replication_state, 'completed', JSON.stringify(mia));
  assert.equal(otto._replication_state, 'error', JSON.stringify(otto));
  assert.equal((await c.get('/mia-copy/doc', { headers: MEMBER })).status, 200);
  assert.equal((await c.get('/otto-copy/doc', { headers: ROOT })).status, 404);
  // The signed identity of the server's own requests cannot be forged by a client.
  const forged = await c.get('/closed/doc', { headers: { 'X-Settee-Internal-Identity': `${Buffer.from('["root",["_admin"]]').toString('base64url')}.00` } });
  assert.equal(forged.status, 401);
});

test('_replicator: fields are checked as CouchDB\'s _design/_replicator checks them', async () => {
  const put = (id: string, body: Record<string, unknown>, headers: Record<string, string>) => c.put(`/_replicator/${id}`, body, { headers });
  const refused = async (id: string, body: Record<string, unknown>, headers: Record<string, string>, reason: RegExp) => {
    const r = await put(id, body, headers);
    assert.equal(r.status, 403, `${id}: ${r.text}`);
    assert.match(r.body.reason, reason, id);
  };
  await refused('no-ctx', { source: 'a', target: 'b' }, MEMBER, /user_ctx' property is missing/);
  await refused('other-name', { source: 'a', target: 'b', user_ctx: { name: 'otto' } }, MEMBER, /user_ctx.name' is not valid/);
  await refused('stolen-role', { source: 'a', target: 'b', user_ctx: { name: 'mia', roles: ['god'] } }, MEMBER, /Invalid role/);
  await refused('no-target', { source: 'a', user_ctx: { name: 'mia' } }, MEMBER, /`target' property must exist/);
  await refused('bad-source', { source: 123, target: 'b' }, ROOT, /`source' property must exist/);
  await refused('bad-url', { source: { url: '' }, target: 'b' }, ROOT, /url property must exist/);
  await refused('bad-continuous', { source: 'a', target: 'b', continuous: 'yes' }, ROOT, /`continuous' field must be a boolean/);
  await refused('bad-filter', { source: 'a', target: 'b', filter: '' }, ROOT, /`filter' field must be a non-empty string/);
  // Admins may leave user_ctx out, or name anyone.
  assert.equal((await put('admin-any', { source: 'a', target: 'b', user_ctx: { name: 'otto', roles: ['god'] } }, ROOT)).status, 201);
});

test('_replicator: an admin\'s document naming a user_ctx runs with that user\'s rights, and a triggered one is only deleted', async () => {
  assert.equal((await c.put('/as-otto-copy', undefined, { headers: ROOT })).status, 201);
  assert.equal((await c.put('/_replicator/as-otto', { source: 'closed', target: 'as-otto-copy', user_ctx: { name: 'otto', roles: [] } }, { headers: ROOT })).status, 201);
  const until = Date.now() + 30000;
  let job: { _replication_state?: string } = {};
  while (Date.now() < until && job._replication_state !== 'error') {
    job = (await c.get('/_replicator/as-otto', { headers: ROOT })).body;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(job._replication_state, 'error', JSON.stringify(job));

  // Without a user_ctx a job runs with no user and no roles (CouchDB 1.6): this one needs an admin's.
  assert.equal((await c.put('/_replicator/live', { source: 'closed', target: 'as-otto-copy', continuous: true, user_ctx: { roles: ['_admin'] } }, { headers: ROOT })).status, 201);
  let live: { _replication_state?: string; _rev?: string } = {};
  while (Date.now() < until + 30000 && live._replication_state !== 'triggered') {
    live = (await c.get('/_replicator/live', { headers: ROOT })).body;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(live._replication_state, 'triggered');
  const edit = await c.put('/_replicator/live', { ...live, continuous: false }, { headers: ROOT });
  assert.equal(edit.status, 403);
  assert.match(edit.body.reason, /triggered state/);
  assert.equal((await c.del(`/_replicator/live?rev=${live._rev}`, { headers: ROOT })).status, 200);
});

test('_replicator: a user_ctx JavaScript counts false is absent, and the _replicator role edits others\' and triggered documents', async () => {
  const zero = await c.put('/_replicator/zero-ctx', { source: 'a', target: 'b', user_ctx: 0 }, { headers: MEMBER });
  assert.equal(zero.status, 403, zero.text);
  assert.equal(zero.body.reason, "The `user_ctx' property is missing (it is optional for admins only).");
  const empty = await c.put('/_replicator/empty-ctx', { source: 'closed', target: 'no-such-copy', user_ctx: '' }, { headers: ROOT });
  assert.equal(empty.status, 201, empty.text);
  const noRoles = await c.put('/_replicator/false-roles', { source: 'closed', target: 'no-such-copy', user_ctx: { name: 'mia', roles: false } }, { headers: MEMBER });
  assert.equal(noRoles.status, 201, noRoles.text);

  // A proxy-authenticated writer with the _replicator role, as CouchDB's replicator writes.
  const handlers = (await c.get('/_config/httpd/authentication_handlers', { headers: ROOT })).body as string;
  const setHandlers = (value: string) =>
    c.put('/_config/httpd/authentication_handlers', value, { headers: { ...ROOT, 'X-Couch-Persist': 'false' } });
  assert.equal((await setHandlers(`{couch_httpd_auth, proxy_authentification_handler}, ${handlers}`)).status, 200);
  try {
    const REPLICATOR = { 'X-Auth-CouchDB-UserName': 'repl', 'X-Auth-CouchDB-Roles': '_replicator' };
    assert.equal((await c.put('/role-copy', undefined, { headers: ROOT })).status, 201);
    assert.equal((await c.put('/_replicator/held', { source: 'closed', target: 'role-copy', continuous: true, user_ctx: { roles: ['_admin'] } }, { headers: ROOT })).status, 201);
    const held = await waitFor('held triggered', async () => {
      const doc = (await c.get('/_replicator/held', { headers: ROOT })).body;
      return doc._replication_state === 'triggered' ? doc : undefined;
    });
    assert.equal(held.owner, 'root');
    // Not its owner, and the document triggered: the role passes both, and the owner stays.
    const edit = await c.put('/_replicator/held', { ...held, note: 'by the replicator', user_ctx: { name: 'repl' } }, { headers: REPLICATOR });
    assert.equal(edit.status, 201, edit.text);
    const edited = (await c.get('/_replicator/held', { headers: ROOT })).body;
    assert.equal(edited.note, 'by the replicator');
    assert.equal(edited.owner, 'root');
    // Its other fields are checked as anyone's.
    const bad = await c.put('/_replicator/held', { ...edited, continuous: 'yes' }, { headers: REPLICATOR });
    assert.equal(bad.status, 403, bad.text);
    assert.match(bad.body.reason, /`continuous' field must be a boolean/);
    // Without the role the owner rule stands.
    const other = await c.put('/_replicator/held', { ...edited, user_ctx: { name: 'repl' } }, { headers: { 'X-Auth-CouchDB-UserName': 'repl' } });
    assert.equal(other.status, 403, other.text);
    assert.equal(other.body.reason, "Can't update replication documents from other users.");
    // The new user_ctx restarts the job, which records its state meanwhile: delete the latest revision.
    await waitFor('held deleted', async () => {
      const latest = (await c.get('/_replicator/held', { headers: ROOT })).body;
      return (await c.del(`/_replicator/held?rev=${latest._rev}`, { headers: ROOT })).status === 200;
    });
  } finally {
    assert.equal((await setHandlers(handlers)).status, 200);
  }
});

test('_replicator holds _design/_replicator as CouchDB 1.6 writes it: readable, listed, rewritten when gone', async () => {
  const ddoc = await c.get('/_replicator/_design/_replicator', { headers: OUTSIDER });
  assert.equal(ddoc.status, 200, ddoc.text);
  assert.equal(ddoc.body.language, 'javascript');
  assert.match(ddoc.body.validate_doc_update, /^function/);
  const listing = await c.get('/_replicator/_all_docs', { headers: ROOT });
  assert.ok(listing.body.rows.some((row: { id: string }) => row.id === '_design/_replicator'), listing.text);

  // The server's own function states the native checks; one an admin edits runs as any validator.
  const edited = await c.put('/_replicator/_design/_replicator', {
    _rev: ddoc.body._rev, language: 'javascript',
    validate_doc_update: 'function (newDoc) { if (newDoc.flagged) throw ({ forbidden: "edited rules" }); }',
  }, { headers: ROOT });
  assert.equal(edited.status, 201, edited.text);
  const refused = await c.put('/_replicator/flagged', { source: 'a', target: 'b', flagged: true }, { headers: ROOT });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.reason, 'edited rules');

  // Deleted, it comes back with the next state the replicator records.
  assert.equal((await c.del(`/_replicator/_design/_replicator?rev=${edited.body.rev}`, { headers: ROOT })).status, 200);
  assert.equal((await c.put('/_replicator/missing-source', { source: 'no-such-db', target: 'b' }, { headers: ROOT })).status, 201);
  const back = await waitFor('_design/_replicator again', async () => {
    const r = await c.get('/_replicator/_design/_replicator', { headers: ROOT });
    return r.status === 200 ? r.body : undefined;
  });
  assert.equal(back.validate_doc_update, ddoc.body.validate_doc_update);

  // A replicator database created again gets it too.
  assert.equal((await c.del('/_replicator', { headers: ROOT })).status, 200);
  assert.equal((await c.put('/_replicator', undefined, { headers: ROOT })).status, 201);
  await waitFor('_design/_replicator in the new database', async () => (await c.get('/_replicator/_design/_replicator', { headers: ROOT })).status === 200);
});

test('an admin-only endpoint of a members-only database tells a non-member first that it is no member', async () => {
  const compact = (headers: Record<string, string>) =>
    c.request('POST', '/closed/_compact', { raw: '{}', headers: { 'Content-Type': 'application/json', ...headers } });
  for (const headers of [OUTSIDER, {}]) {
    const r = await compact(headers);
    assert.equal(r.status, 401);
    assert.equal(r.body.reason, 'You are not authorized to access this db.');
  }
  assert.equal((await compact(MEMBER)).body.reason, 'You are not a db or server admin.');
});

test('_temp_view opens the database as a member before it looks at the content type (CouchDB 1.6)', async () => {
  const temp = (path: string, headers: Record<string, string>) =>
    c.request('POST', path, { raw: '{"map":"function(doc){ emit(null, 1); }"}', headers: { 'Content-Type': 'text/plain', ...headers } });
  // couch_httpd_db:do_db_req opens the database as the caller (couch_db:open checks membership)
  // before couch_mrview_http:handle_temp_view_req validates the content type.
  for (const headers of [OUTSIDER, {}]) {
    const r = await temp('/closed/_temp_view', headers);
    assert.deepEqual([r.status, r.body], [401, { error: 'unauthorized', reason: 'You are not authorized to access this db.' }]);
  }
  for (const headers of [OUTSIDER, ROOT]) {
    const r = await temp('/no-such-db/_temp_view', headers);
    assert.deepEqual([r.status, r.body], [404, { error: 'not_found', reason: 'no_db_file' }]);
  }
  // A member, a database admin and a server admin: the content type, then the rights.
  for (const headers of [MEMBER, DBADMIN, ROOT]) {
    assert.equal((await temp('/closed/_temp_view', headers)).status, 415);
  }
  const json = { 'Content-Type': 'application/json' };
  assert.equal((await temp('/closed/_temp_view', { ...MEMBER, ...json })).body.reason, 'You are not a db or server admin.');
  assert.equal((await temp('/closed/_temp_view', { ...DBADMIN, ...json })).status, 200);
});

test('PUT _security and _revs_limit read the body before they ask a member for a database admin (CouchDB 1.6)', async () => {
  const put = (path: string, raw: string, headers: Record<string, string>) =>
    c.request('PUT', path, { raw, headers: { 'Content-Type': 'application/json', ...headers } });
  // couch_httpd_db:db_req parses the body; couch_db:set_security takes only an object
  // (bad_request) and then calls check_is_admin, before validate_security_object.
  for (const headers of [MEMBER, ROLE_MEMBER]) {
    assert.equal((await put('/closed/_security', '{"admins":', headers)).status, 400);
    const array = await put('/closed/_security', '[]', headers);
    assert.deepEqual([array.status, array.body.error], [400, 'bad_request']);
    const invalid = await put('/closed/_security', '{"members":{"names":"mia"}}', headers);
    assert.deepEqual([invalid.status, invalid.body], [401, { error: 'unauthorized', reason: 'You are not a db or server admin.' }]);
    // _revs_limit: an integer (400), then above 0 (couch_db:set_revs_limit's 500), then the admin.
    assert.equal((await put('/closed/_revs_limit', 'abc', headers)).status, 400);
    const notInteger = await put('/closed/_revs_limit', '"10"', headers);
    assert.deepEqual([notInteger.status, notInteger.body], [400, { error: 'bad_request', reason: 'Rev limit has to be an integer' }]);
    const zero = await put('/closed/_revs_limit', '0', headers);
    assert.deepEqual([zero.status, zero.body], [500, { error: 'unknown_error', reason: 'invalid_revs_limit' }]);
    const valid = await put('/closed/_revs_limit', '10', headers);
    assert.deepEqual([valid.status, valid.body], [401, { error: 'unauthorized', reason: 'You are not a db or server admin.' }]);
  }
  // A non-member is refused as the database opens, whatever the body.
  for (const headers of [OUTSIDER, {}]) {
    for (const [path, raw] of [['/closed/_security', '[]'], ['/closed/_revs_limit', 'abc']] as const) {
      const r = await put(path, raw, headers);
      assert.deepEqual([r.status, r.body.reason], [401, 'You are not authorized to access this db.'], `${path} ${r.text}`);
    }
  }
  assert.equal((await c.get('/closed/_revs_limit', { headers: ROOT })).body, 500);
  assert.deepEqual((await c.get('/closed/_security', { headers: MEMBER })).body.members.names, ['mia']);
  assert.equal((await put('/closed/_revs_limit', '700', DBADMIN)).status, 200);
  assert.equal((await put('/closed/_revs_limit', '500', ROLE_ADMIN)).status, 200);
});
