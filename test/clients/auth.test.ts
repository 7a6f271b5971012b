/**
 * Real clients against a server with admins, users and a members-only database: nano with
 * Basic credentials in the URL and with `nano.auth` (cookie session), and PouchDB's HTTP
 * adapter with its `auth` option, replication included.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nano from 'nano';
import PouchDB from 'pouchdb';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';

const { server, c: raw } = await serverForFile();
let localDir: string;
const ROOT = basic('root', 'rootpw');
const opened: any[] = [];

function withCredentials(user: string, password: string): string {
  const url = new URL(server.url);
  url.username = user;
  url.password = password;
  return url.toString();
}

function pouch(name: string, auth?: { username: string; password: string }): any {
  const db = new PouchDB(server.url + name, auth ? { auth, skip_setup: true } : { skip_setup: true });
  opened.push(db);
  return db;
}

before(async () => {
  localDir = mkdtempSync(join(tmpdir(), 'settee-auth-clients-'));
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'bob', 'bobpw');
  await createUser(server.url, ROOT, 'eve', 'evepw');
  await raw.put('/team', undefined, { headers: ROOT });
  await raw.put('/team/_security', { admins: { names: [], roles: [] }, members: { names: ['bob'], roles: [] } }, { headers: ROOT });
});

after(async () => {
  for (const db of opened) {
    try { await db.close(); } catch { /* already closed */ }
  }
  rmSync(localDir, { recursive: true, force: true });
});

test('nano with Basic credentials in the URL', async () => {
  const admin = nano(withCredentials('root', 'rootpw'));
  await admin.db.create('nanodb');
  const bob = nano(withCredentials('bob', 'bobpw'));
  const team = bob.use<{ text: string }>('team');
  const inserted = await team.insert({ text: 'from nano' }, 'n1');
  assert.equal(inserted.ok, true);
  assert.equal((await team.get('n1')).text, 'from nano');
  await assert.rejects(bob.db.create('bobdb'), (err: any) => err.statusCode === 401);
  const eve = nano(withCredentials('eve', 'evepw'));
  await assert.rejects(eve.use('team').get('n1'), (err: any) => err.statusCode === 401 && err.error === 'unauthorized');
  const anonymous = nano(server.url);
  await assert.rejects(anonymous.use('team').get('n1'), (err: any) => err.statusCode === 401);
});

test('nano.auth logs in with a cookie session that later calls use', async () => {
  const couch = nano(server.url);
  const login = await couch.auth('bob', 'bobpw');
  assert.equal(login.ok, true);
  assert.equal(login.name, 'bob');
  const session = await couch.session();
  assert.equal(session.userCtx.name, 'bob');
  assert.equal((session.info as { authenticated?: string }).authenticated, 'cookie');
  const team = couch.use<{ text: string }>('team');
  await team.insert({ text: 'with a cookie' }, 'n2');
  assert.equal((await team.get('n2')).text, 'with a cookie');
  await assert.rejects(couch.auth('bob', 'wrong'), (err: any) => err.statusCode === 401);
});

test('PouchDB with the auth option reads, writes and replicates a members-only database', async () => {
  const remote = pouch('team', { username: 'bob', password: 'bobpw' });
  const put = await remote.put({ _id: 'p1', text: 'from pouch' });
  assert.equal(put.ok, true);
  assert.equal((await remote.get('p1')).text, 'from pouch');
  const all = await remote.allDocs();
  assert.ok(all.rows.some((row: { id: string }) => row.id === 'p1'));

  const local = new PouchDB(join(localDir, 'team-copy'));
  opened.push(local);
  const pulled = await local.replicate.from(remote);
  assert.equal(pulled.ok, true);
  assert.equal((await local.get('n1')).text, 'from nano');
  await local.put({ _id: 'offline', text: 'written locally' });
  const pushed = await local.replicate.to(remote);
  assert.equal(pushed.ok, true);
  assert.equal((await raw.get('/team/offline', { headers: ROOT })).body.text, 'written locally');
});

test('PouchDB without credentials, or as a non-member, is refused', async () => {
  await assert.rejects(pouch('team').get('p1'), (err: any) => err.status === 401);
  await assert.rejects(pouch('team', { username: 'eve', password: 'evepw' }).get('p1'), (err: any) => err.status === 401);
  await assert.rejects(pouch('team', { username: 'bob', password: 'nope' }).get('p1'), (err: any) => err.status === 401);
});

test('a member\'s PouchDB cannot push design documents', async () => {
  const local = new PouchDB(join(localDir, 'with-ddoc'));
  opened.push(local);
  await local.put({ _id: '_design/app', views: {} });
  await local.put({ _id: 'plain' });
  const remote = pouch('team', { username: 'bob', password: 'bobpw' });
  const result = await local.replicate.to(remote);
  assert.equal(result.doc_write_failures, 1);
  assert.equal((await raw.get('/team/_design/app', { headers: ROOT })).status, 404);
  assert.equal((await raw.get('/team/plain', { headers: ROOT })).status, 200);
});

test('replicating a user document with more roles into _users as that user is refused', async () => {
  const users = pouch('_users', { username: 'bob', password: 'bobpw' });
  const own = await users.get('org.couchdb.user:bob');
  const local = new PouchDB(join(localDir, 'users-copy'));
  opened.push(local);
  await local.bulkDocs([{ ...own, roles: ['boss'], _rev: own._rev }], { new_edits: false });
  const edited = await local.get('org.couchdb.user:bob');
  await local.put({ ...edited, roles: ['boss'] });
  const result = await local.replicate.to(users, { doc_ids: ['org.couchdb.user:bob'] });
  assert.equal(result.doc_write_failures, 1);
  assert.deepEqual((await raw.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body.roles, []);
  const session = await raw.get('/_session', { headers: basic('bob', 'bobpw') });
  assert.deepEqual(session.body.userCtx.roles, []);
});
