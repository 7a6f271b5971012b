/**
 * Server admins and admin party over real HTTP: everyone is an admin until `[admins]` has an
 * entry; then every admin-only operation is 401 without admin credentials. Admin passwords are
 * hashed when written and at start-up (`-pbkdf2-`), `-hashed-` entries still verify, and the
 * cookie secret is made once and kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, serverForFile } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { basic, defineAdmin, sessionCookie } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'secret');

test('admin party: with no admins every request is a server admin', async () => {
  const session = await c.get('/_session');
  assert.deepEqual(session.body.userCtx, { name: null, roles: ['_admin'] });
  assert.equal(session.body.info.authenticated, 'default');
  assert.equal((await c.put('/party')).status, 201);
  assert.equal((await c.get('/_config/couch_httpd_auth/authentication_db')).body, '_users');
  assert.equal((await c.put('/party/_security', { admins: { names: ['x'], roles: [] } })).status, 200);
  assert.equal((await c.put('/party/_design/d', { views: {} })).status, 201);
});

test('defining an admin hashes the password and ends admin party at once', async () => {
  const r = await c.put('/_config/admins/root', 'secret');
  assert.equal(r.status, 200);
  assert.equal(r.body, '');
  const stored = await c.get('/_config/admins/root', { headers: ROOT });
  assert.equal(stored.status, 200);
  assert.match(stored.body, /^-pbkdf2-[0-9a-f]{40},[0-9a-f]{32},10$/);
  // The plain password is nowhere in local.ini.
  const ini = readFileSync(join(server.dataDir, 'local.ini'), 'utf8');
  assert.ok(!/root\s*=\s*secret/.test(ini));
  assert.match(ini, /root = -pbkdf2-/);

  const anonymous = await c.get('/_session');
  assert.deepEqual(anonymous.body.userCtx, { name: null, roles: [] });
  assert.equal(anonymous.body.info.authenticated, undefined);
  const admin = await c.get('/_session', { headers: ROOT });
  assert.deepEqual(admin.body.userCtx, { name: 'root', roles: ['_admin'] });
  assert.equal(admin.body.info.authenticated, 'default');
});

test('every admin-only operation is 401 unauthorized without admin credentials', async () => {
  await c.put('/guarded', undefined, { headers: ROOT });
  await c.put('/guarded/doc', { a: 1 }, { headers: ROOT });
  const attempts: [string, string, unknown?][] = [
    ['PUT', '/newdb'],
    ['DELETE', '/guarded'],
    ['PUT', '/guarded/_security', { admins: { names: [], roles: [] }, members: { names: [], roles: [] } }],
    ['PUT', '/guarded/_design/app', { views: {} }],
    ['DELETE', '/party/_design/d?rev=1-x'],
    ['POST', '/guarded/_temp_view', { map: 'function(doc){emit(null,1)}' }],
    ['POST', '/guarded/_compact', {}],
    ['POST', '/guarded/_view_cleanup', {}],
    ['POST', '/guarded/_purge', {}],
    ['PUT', '/guarded/_revs_limit', 10],
    ['GET', '/_active_tasks'],
    ['POST', '/_restart', {}],
    ['GET', '/_config'],
    ['GET', '/_config/admins'],
    ['PUT', '/_config/admins/mallory', 'pw'],
    ['DELETE', '/_config/admins/root'],
    ['GET', '/_log'],
    ['GET', '/_db_updates?feed=normal&timeout=10'],
  ];
  for (const [method, path, body] of attempts) {
    const r = await c.request(method, path, { body, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 401, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.error, 'unauthorized', `${method} ${path}`);
  }
  // Anyone may write to the log (1.6 checks no user there); reading it stays for admins.
  assert.equal((await c.post('/_log', { level: 'info', message: 'from an anonymous caller' })).status, 200);
  // _restart and _temp_view look at the content type first, then at the caller (as 1.6).
  for (const path of ['/_restart', '/guarded/_temp_view']) {
    const r = await c.request('POST', path, { raw: '{}', headers: { 'Content-Type': 'text/plain' } });
    assert.equal(r.status, 415, path);
  }
  assert.equal((await c.request('POST', '/guarded/_compact', { raw: '{}', headers: { 'Content-Type': 'text/plain' } })).status, 401);
  // Nothing changed.
  assert.equal((await c.get('/_config/admins/mallory', { headers: ROOT })).status, 404);
  assert.equal((await c.get('/guarded', { headers: ROOT })).status, 200);
  assert.equal((await c.get('/newdb', { headers: ROOT })).status, 404);
});

test('the same operations succeed with admin credentials', async () => {
  assert.equal((await c.put('/newdb', undefined, { headers: ROOT })).status, 201);
  assert.equal((await c.put('/newdb/_design/app', { views: {} }, { headers: ROOT })).status, 201);
  assert.equal((await c.get('/_active_tasks', { headers: ROOT })).status, 200);
  assert.equal((await c.get('/_config', { headers: ROOT })).status, 200);
  assert.equal((await c.del('/newdb', { headers: ROOT })).status, 200);
});

test('ordinary reads and writes stay open to anonymous callers', async () => {
  assert.equal((await c.get('/')).status, 200);
  assert.equal((await c.get('/_all_dbs')).status, 200);
  assert.equal((await c.get('/_uuids')).status, 200);
  assert.equal((await c.get('/guarded/doc')).status, 200);
  assert.equal((await c.put('/guarded/anon', { by: 'anonymous' })).status, 201);
  assert.equal((await c.get('/guarded/_all_docs')).body.total_rows, 2);
});

test('wrong credentials are 401 even where none are needed', async () => {
  for (const headers of [basic('root', 'wrong'), basic('nobody', 'secret')]) {
    const r = await c.get('/', { headers });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
  }
});

test('-hashed- (salted SHA-1) admin entries still verify', async () => {
  const salt = 'c1a2f3';
  const sha = createHash('sha1').update(`oldpass${salt}`).digest('hex');
  const r = await c.put('/_config/admins/veteran?raw=true', `-hashed-${sha},${salt}`, { headers: ROOT });
  assert.equal(r.status, 200);
  assert.equal((await c.get('/_config/admins/veteran', { headers: ROOT })).body, `-hashed-${sha},${salt}`);
  const session = await c.get('/_session', { headers: basic('veteran', 'oldpass') });
  assert.deepEqual(session.body.userCtx, { name: 'veteran', roles: ['_admin'] });
  assert.equal((await c.get('/', { headers: basic('veteran', 'oldpas') })).status, 401);
});

test('the cookie secret is generated once and survives a restart, and so do sessions', async () => {
  const secret = (await c.get('/_config/couch_httpd_auth/secret', { headers: ROOT })).body as string;
  assert.match(secret, /^[0-9a-f]{32}$/);
  const login = await c.post('/_session', { name: 'root', password: 'secret' });
  const cookie = sessionCookie(login.headers['set-cookie']);
  assert.ok(cookie);
  await server.restart();
  assert.equal((await c.get('/_config/couch_httpd_auth/secret', { headers: ROOT })).body, secret);
  const session = await c.get('/_session', { headers: { Cookie: cookie } });
  assert.deepEqual(session.body.userCtx, { name: 'root', roles: ['_admin'] });
  assert.equal(session.body.info.authenticated, 'cookie');
});

test('plain passwords written into local.ini by hand are hashed at start-up', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'settee-admins-'));
  writeFileSync(join(dataDir, 'local.ini'), '[admins]\nhandwritten = letmein\n');
  const other = await startServer({ dataDir });
  try {
    const ini = readFileSync(join(dataDir, 'local.ini'), 'utf8');
    assert.match(ini, /handwritten = -pbkdf2-[0-9a-f]{40},[0-9a-f]{32},10/);
    assert.ok(!ini.includes('letmein'));
    const oc = client(other.url);
    assert.equal((await oc.put('/x')).status, 401);
    assert.equal((await oc.put('/x', undefined, { headers: basic('handwritten', 'letmein') })).status, 201);
  } finally {
    await other.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('deleting the last admin brings admin party back', async () => {
  const extra = await startServer();
  try {
    const ec = client(extra.url);
    await defineAdmin(extra.url, 'solo', 'pw');
    assert.equal((await ec.put('/db1')).status, 401);
    assert.equal((await ec.del('/_config/admins/solo', { headers: basic('solo', 'pw') })).status, 200);
    assert.equal((await ec.put('/db1')).status, 201);
  } finally {
    await extra.stop();
  }
});
