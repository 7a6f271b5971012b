/**
 * Authentication details as CouchDB 1.6 has them (its couch_httpd_auth, couch_auth_cache and
 * _config handler): Basic `_:_` means no credentials, a server admin keeps the roles of a user
 * document of the same name, a user whose document is in conflict cannot log in, and an
 * `[admins]` value written without `?raw=true` is always a password to hash.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'secret');

before(async () => defineAdmin(server.url, 'root', 'secret'));

test('Basic _:_ is no credentials: the caller is anonymous, not refused', async () => {
  const r = await c.get('/_session', { headers: basic('_', '_') });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.userCtx, { name: null, roles: [] });
  // Any other unknown name is still a 401.
  assert.equal((await c.get('/_session', { headers: basic('_', 'x') })).status, 401);
});

test('a Basic value base64 cannot read is 400; only the scheme spelled `Basic ` carries credentials', async () => {
  await createUser(server.url, ROOT, 'basil', 'pw:with:colons');
  const encoded = Buffer.from('basil:pw:with:colons').toString('base64');
  // couch_httpd_auth:basic_name_pw splits at the first colon only.
  assert.equal((await c.get('/_session', { headers: { Authorization: `Basic ${encoded}` } })).body.userCtx.name, 'basil');
  // Whitespace inside the value is skipped, as base64:decode skips it.
  const spaced = `Basic ${encoded.slice(0, 8)} ${encoded.slice(8)}`;
  assert.equal((await c.get('/_session', { headers: { Authorization: spaced } })).body.userCtx.name, 'basil');
  // Not base64 (a character outside the alphabet, a broken group, padding inside): CouchDB 3's
  // 400, where 1.6 crashed with a 500 function_clause.
  for (const value of ['!!!!', encoded.slice(0, -2), `${encoded}==`, 'YW=jZA==']) {
    const r = await c.get('/', { headers: { Authorization: `Basic ${value}` } });
    assert.equal(r.status, 400, value);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'Authorization header has invalid base64 value' });
  }
  // Another spelling of the scheme is no Basic credentials at all: the caller is anonymous.
  for (const scheme of ['basic', 'BASIC']) {
    const r = await c.get('/_session', { headers: { Authorization: `${scheme} ${encoded}` } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.userCtx, { name: null, roles: [] });
  }
  // Nothing to decode, or no colon in it: no credentials either.
  for (const value of ['Basic ', `Basic ${Buffer.from('basil').toString('base64')}`]) {
    assert.deepEqual((await c.get('/_session', { headers: { Authorization: value } })).body.userCtx, { name: null, roles: [] });
  }
});

test('a pbkdf2 user document without iterations is read with 10000, as couch_httpd_auth:authenticate reads it', async () => {
  const salt = 'b0d1e5a1';
  const derivedKey = pbkdf2Sync('old password', salt, 10000, 20, 'sha1').toString('hex');
  const doc = { name: 'olga', roles: ['staff'], type: 'user', password_scheme: 'pbkdf2', derived_key: derivedKey, salt };
  assert.equal((await c.put('/_users/org.couchdb.user:olga', doc, { headers: ROOT })).status, 201);
  assert.deepEqual((await c.get('/_session', { headers: basic('olga', 'old password') })).body.userCtx, { name: 'olga', roles: ['staff'] });
  const login = await c.post('/_session', { name: 'olga', password: 'old password' });
  assert.equal(login.status, 200);
  assert.equal((await c.get('/_session', { headers: basic('olga', 'another') })).status, 401);
});

test('a server admin also has the roles of the user document of the same name', async () => {
  await createUser(server.url, ROOT, 'jan', 'apple', ['foo', 'bar']);
  assert.deepEqual((await c.get('/_session', { headers: basic('jan', 'apple') })).body.userCtx.roles, ['foo', 'bar']);
  assert.equal((await c.put('/_config/admins/jan', 'apple', { headers: ROOT })).status, 200);
  const session = await c.get('/_session', { headers: basic('jan', 'apple') });
  assert.deepEqual(session.body.userCtx, { name: 'jan', roles: ['_admin', 'foo', 'bar'] });
  // A change of the document's roles shows at once.
  const doc = (await c.get('/_users/org.couchdb.user:jan', { headers: ROOT })).body;
  assert.equal((await c.put('/_users/org.couchdb.user:jan', { ...doc, roles: ['foo'] }, { headers: ROOT })).status, 201);
  assert.deepEqual((await c.get('/_session', { headers: basic('jan', 'apple') })).body.userCtx.roles, ['_admin', 'foo']);
  assert.equal((await c.del('/_config/admins/jan', { headers: ROOT })).status, 200);
});

test('a user whose document is in conflict cannot authenticate until the conflict is resolved', async () => {
  const rev = await createUser(server.url, ROOT, 'chris', 'mp3');
  assert.equal((await c.get('/_session', { headers: basic('chris', 'mp3') })).body.userCtx.name, 'chris');
  const doc = (await c.get('/_users/org.couchdb.user:chris', { headers: ROOT })).body;
  const other = { ...doc, _rev: '1-0123456789abcdef0123456789abcdef', _revisions: undefined };
  const replicated = await c.post('/_users/_bulk_docs', { docs: [other], new_edits: false }, { headers: ROOT });
  assert.equal(replicated.status, 201);
  const refused = await c.get('/_session', { headers: basic('chris', 'mp3') });
  assert.equal(refused.status, 401);
  assert.match(refused.body.reason, /conflicts must be resolved/);
  const loser = [rev, other._rev].sort()[0]!;
  assert.equal((await c.del(`/_users/org.couchdb.user:chris?rev=${loser}`, { headers: ROOT })).status, 200);
  assert.equal((await c.get('/_session', { headers: basic('chris', 'mp3') })).body.userCtx.name, 'chris');
});

test('an [admins] value written without ?raw=true is hashed even when it looks hashed', async () => {
  const looksHashed = '-pbkdf2-b1eb7a68b0778a529c68d30749954e9e430417fb,4da0f8f1d98ce649a9c5a3845241ae24,10';
  assert.equal((await c.put('/_config/admins/administrator', looksHashed, { headers: ROOT })).status, 200);
  const stored = (await c.get('/_config/admins/administrator', { headers: ROOT })).body;
  assert.notEqual(stored, looksHashed);
  assert.match(stored, /^-pbkdf2-/);
  // It is the password now.
  const session = await c.get('/_session', { headers: basic('administrator', looksHashed) });
  assert.deepEqual(session.body.userCtx, { name: 'administrator', roles: ['_admin'] });
  // ?raw=true stores a value as given.
  assert.equal((await c.put('/_config/admins/administrator?raw=true', looksHashed, { headers: ROOT })).status, 200);
  assert.equal((await c.get('/_config/admins/administrator', { headers: ROOT })).body, looksHashed);
  assert.equal((await c.del('/_config/admins/administrator', { headers: ROOT })).status, 200);
});

test("CouchDB's special test handler: a named test user, otherwise a server admin", async () => {
  const handlers = (await c.get('/_config/httpd/authentication_handlers', { headers: ROOT })).body as string;
  const set = (value: string, headers: Record<string, string>) =>
    c.put('/_config/httpd/authentication_handlers', value, { headers: { ...headers, 'X-Couch-Persist': 'false' } });
  assert.equal((await set('{couch_httpd_auth, special_test_authentication_handler}', ROOT)).status, 200);
  try {
    const admin = await c.get('/_session');
    assert.deepEqual(admin.body.userCtx, { name: null, roles: ['_admin'] });
    assert.deepEqual(admin.body.info.authentication_handlers, ['special']);
    const chris = await c.get('/_session', { headers: { 'WWW-Authenticate': 'X-Couch-Test-Auth Chris Anderson:mp3' } });
    assert.deepEqual(chris.body.userCtx, { name: 'Chris Anderson', roles: [] });
    const wrong = await c.get('/_session', { headers: { 'WWW-Authenticate': 'X-Couch-Test-Auth Chris Anderson:mp4' } });
    assert.equal(wrong.status, 401);
  } finally {
    // With no test credentials the caller is an admin: the configuration can be put back.
    assert.equal((await set(handlers, {})).status, 200);
  }
  assert.equal((await c.get('/_session')).body.userCtx.name, null);
  assert.equal((await c.put('/_config/httpd/x', 'y')).status, 401);
});
