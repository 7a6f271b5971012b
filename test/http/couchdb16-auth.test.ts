/**
 * CouchDB 1.6's own JavaScript tests of security and authentication (share/www/script/test/
 * security_validation.js, cookie_auth.js, proxyauth.js, reader_acl.js, users_db_security.js,
 * auth_cache.js, jsonp.js, config.js, oauth_users_db.js), ported to real HTTP: the same
 * documents, users, roles, security objects and assertions, one test per script.
 *
 * Defining a server admin ends admin party for the whole server, so every script gets a server
 * of its own. `run_on_modified_server` becomes `/_config` writes with `X-Couch-Persist: false`;
 * the browser the scripts ran in becomes `Browser`, which keeps the AuthSession cookie as a
 * browser does; `CouchDB.prepareUserDoc` is the 1.6 test runner's (a client-side `salt` and
 * `password_sha`, the pre-1.2 form CouchDB 1.6 still accepts).
 *
 * Where the stored 1.6-era script and CouchDB 1.6's source disagree, the source decides (each
 * such place says why).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { startServer, type TestServer } from '../helpers/server.js';
import { req, type RequestOptions, type Response } from '../helpers/http.js';

type Doc = Record<string, any>;
type HeaderMap = Record<string, string>;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One browser: its requests carry the AuthSession cookie the server last set, and a cookie set
 * empty (logout, a failed login) is forgotten, as a browser forgets it.
 */
class Browser {
  private cookie: string | undefined;
  constructor(public base: string) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: HeaderMap = { ...options.headers };
    if (this.cookie !== undefined) headers['Cookie'] = this.cookie;
    // A browser frames every body it sends; Node's client leaves a DELETE's body unframed.
    const payload = options.body !== undefined ? JSON.stringify(options.body) : options.raw;
    if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
    const r = await req(this.base, method, path, { ...options, headers });
    const set = r.headers['set-cookie'];
    for (const value of Array.isArray(set) ? set : set === undefined ? [] : [set]) {
      const m = /^AuthSession=([^;]*)/.exec(value);
      if (!m) continue;
      const expired = /max-age=0\b/i.test(value);
      this.cookie = m[1] && !expired ? `AuthSession=${m[1]}` : undefined;
    }
    return r;
  }

  get(path: string, headers: HeaderMap = {}): Promise<Response> { return this.request('GET', path, { headers }); }
  put(path: string, body: unknown, headers: HeaderMap = {}): Promise<Response> { return this.request('PUT', path, { body, headers }); }
  post(path: string, body: unknown, headers: HeaderMap = {}): Promise<Response> { return this.request('POST', path, { body, headers }); }
  del(path: string, headers: HeaderMap = {}): Promise<Response> { return this.request('DELETE', path, { headers }); }

  /** CouchDB.login: a form POST to /_session; answers the parsed body. */
  async login(name: string, password: string): Promise<Doc> {
    const r = await this.request('POST', '/_session', {
      raw: `name=${encodeURIComponent(name)}&password=${encodeURIComponent(password)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CouchDB-WWW-Authenticate': 'Cookie' },
    });
    return r.body as Doc;
  }

  /** CouchDB.logout. */
  async logout(): Promise<Doc> {
    const r = await this.request('DELETE', '/_session', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CouchDB-WWW-Authenticate': 'Cookie' },
    });
    return r.body as Doc;
  }

  /** CouchDB.session. */
  async session(headers: HeaderMap = {}): Promise<Doc> {
    return (await this.get('/_session', headers)).body as Doc;
  }

  /** run_on_modified_server's setting of one value, not persisted. */
  async setConfig(section: string, key: string, value: string): Promise<void> {
    const r = await this.put(`/_config/${section}/${encodeURIComponent(key)}`, value, { 'X-Couch-Persist': 'false' });
    assert.equal(r.status, 200, `setting [${section}] ${key}: ${r.status} ${r.text}`);
  }

  /** CouchDB.newUuids(1)[0]. */
  async uuid(): Promise<string> {
    return ((await this.get('/_uuids')).body as { uuids: string[] }).uuids[0]!;
  }
}

/** A document path as couch.js builds it (a design document keeps its slash, as GETs must). */
function docPath(id: string): string {
  return id.startsWith('_design/') ? `_design/${encodeURIComponent(id.slice(8))}` : encodeURIComponent(id);
}

/** couch.js's CouchDB object for one database, through one browser, with fixed extra headers. */
class Db {
  readonly uri: string;
  constructor(private readonly b: Browser, readonly name: string, private readonly headers: HeaderMap = {}) {
    this.uri = `/${encodeURIComponent(name)}/`;
  }

  createDb(): Promise<Response> { return this.b.put(this.uri, undefined, this.headers); }
  deleteDb(): Promise<Response> { return this.b.del(this.uri, this.headers); }
  async info(): Promise<Doc> { return (await this.b.get(this.uri, this.headers)).body as Doc; }

  /** db.save: PUT under the document's id (a new uuid when it has none); keeps the new `_rev`. */
  async save(doc: Doc, query = ''): Promise<Response> {
    doc['_id'] ??= await this.b.uuid();
    const r = await this.b.put(`${this.uri}${docPath(doc['_id'] as string)}${query}`, doc, this.headers);
    if (r.status === 201 || r.status === 202) doc['_rev'] = r.body.rev;
    return r;
  }

  open(id: string, query = ''): Promise<Response> { return this.b.get(`${this.uri}${docPath(id)}${query}`, this.headers); }

  /** The document, or null for a 404 (db.open). */
  async openDoc(id: string): Promise<Doc | null> {
    const r = await this.open(id);
    if (r.status === 404) return null;
    assert.equal(r.status, 200, `open ${id}: ${r.status} ${r.text}`);
    return r.body as Doc;
  }

  async deleteDoc(doc: Doc): Promise<Response> {
    const r = await this.b.del(`${this.uri}${docPath(doc['_id'] as string)}?rev=${doc['_rev'] as string}`, this.headers);
    if (r.status === 200) {
      doc['_rev'] = r.body.rev;
      doc['_deleted'] = true;
    }
    return r;
  }

  bulkSave(docs: Doc[], options: Doc = {}): Promise<Response> {
    return this.b.post(`${this.uri}_bulk_docs`, { ...options, docs }, this.headers);
  }

  setSecObj(security: unknown): Promise<Response> { return this.b.put(`${this.uri}_security`, security, this.headers); }

  view(name: string): Promise<Response> {
    const [ddoc, view] = name.split('/') as [string, string];
    return this.b.get(`${this.uri}_design/${ddoc}/_view/${view}`, this.headers);
  }

  /** db.query: a temporary view. */
  query(map: string): Promise<Response> {
    return this.b.post(`${this.uri}_temp_view`, { language: 'javascript', map }, this.headers);
  }

  changes(): Promise<Response> { return this.b.get(`${this.uri}_changes`, this.headers); }
  allDocs(query: string): Promise<Response> { return this.b.get(`${this.uri}_all_docs${query}`, this.headers); }

  /** db.compact, then waits until compaction is done (the scripts spin on compact_running). */
  async compact(): Promise<Response> {
    const r = await this.b.post(`${this.uri}_compact`, undefined, { ...this.headers, 'Content-Type': 'application/json' });
    while ((await this.info())['compact_running'] === true) await sleep(20);
    return r;
  }
}

const hexSha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** The 1.6 test runner's CouchDB.prepareUserDoc: the pre-1.2 user document, hashed by the client. */
async function prepareUserDoc(b: Browser, userDoc: Doc, password?: string): Promise<Doc> {
  userDoc['_id'] ??= `org.couchdb.user:${userDoc['name'] as string}`;
  if (password !== undefined) {
    userDoc['salt'] = await b.uuid();
    userDoc['password_sha'] = hexSha1(password + (userDoc['salt'] as string));
  }
  userDoc['type'] = 'user';
  userDoc['roles'] ??= [];
  return userDoc;
}

/** The special test handler's credentials: `WWW-Authenticate: X-Couch-Test-Auth name:password`. */
const testAuth = (name: string, password: string): HeaderMap => ({ 'WWW-Authenticate': `X-Couch-Test-Auth ${name}:${password}` });

/** A server of the test's own, stopped (its data removed) when `body` ends. */
async function withServer(body: (server: TestServer) => Promise<void>, options: { port?: number } = {}): Promise<void> {
  const server = await startServer(options);
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

/**
 * run_on_modified_server's naming of the authentication database, then a wait until it is there
 * with its `_design/_auth` (both CouchDB 1.6 and Settee create it before the `/_config` PUT
 * answers; a proxyauth test below checks that).
 * Needs admin party.
 */
async function useAuthDb(b: Browser, name: string): Promise<void> {
  await b.setConfig('couch_httpd_auth', 'authentication_db', name);
  assert.equal((await b.get(`/${name}/_design/_auth`)).status, 200, `${name} is not there once its naming answered`);
}

/** The validate_doc_update of security_validation.js. */
const AUTHOR_VALIDATION = `(function (newDoc, oldDoc, userCtx, secObj) {
  if (secObj.admin_override) {
    if (userCtx.roles.indexOf('_admin') != -1) {
      // user is admin, they can do anything
      return true;
    }
  }
  // docs should have an author field.
  if (!newDoc._deleted && !newDoc.author) {
    throw {forbidden: "Documents must have an author field"};
  }
  if (oldDoc && oldDoc.author != userCtx.name) {
    throw {unauthorized: "You are not the author of this document. You jerk."};
  }
})`;

/** security_validation.js's server: the special test handler answers X-Couch-Test-Auth. */
async function securityValidationServer(b: Browser): Promise<Db> {
  const db = new Db(b, 'test_suite_db');
  await db.deleteDb();
  assert.equal((await db.createDb()).status, 201);
  await b.setConfig('httpd', 'authentication_handlers', '{couch_httpd_auth, special_test_authentication_handler}');
  await b.setConfig('httpd', 'WWW-Authenticate', 'X-Couch-Test-Auth');
  return db;
}

test('security_validation: validate_doc_update, database admins, admin_override, bulk docs and replication under X-Couch-Test-Auth', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const db = await securityValidationServer(b);

    // try saving document using the wrong credentials
    const wrongPasswordDb = new Db(b, 'test_suite_db', testAuth('Damien Katz', 'foo'));
    let r = await wrongPasswordDb.save({ foo: 1, author: 'Damien Katz' });
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // test force basic login
    r = await b.get('/_session?basic=true', testAuth('Damien Katz', 'foo'));
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    const designDoc: Doc = { _id: '_design/test', language: 'javascript', validate_doc_update: AUTHOR_VALIDATION };

    // Save a document normally
    const userDb = new Db(b, 'test_suite_db', testAuth('Damien Katz', 'pecan pie'));
    assert.equal((await userDb.save({ _id: 'testdoc', foo: 1, author: 'Damien Katz' })).body.ok, true);

    // Attempt to save the design as a non-admin
    r = await userDb.save(designDoc);
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // set user as the admin
    assert.equal((await db.setSecObj({ admins: { names: ['Damien Katz'] } })).body.ok, true);
    assert.equal((await userDb.save(designDoc)).body.ok, true);

    // Attempt to save the design as a non-admin (in replication scenario)
    const user2Db = new Db(b, 'test_suite_db', testAuth('Jan Lehnardt', 'apple'));
    r = await user2Db.save({ ...designDoc }, '?new_edits=false');
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // test the _session API
    const user = (await b.session(testAuth('Damien Katz', 'pecan pie')))['userCtx'];
    assert.equal(user.name, 'Damien Katz');
    assert.deepEqual(user.roles, []);

    // update the document
    let doc = (await userDb.openDoc('testdoc'))!;
    doc['foo'] = 2;
    assert.equal((await userDb.save(doc)).body.ok, true);

    // Save a document that's missing an author field (before and after compaction)
    for (let i = 0; i < 2; i++) {
      r = await userDb.save({ foo: 1 });
      assert.equal(r.body.error, 'forbidden');
      assert.equal(r.status, 403);
      r = await db.compact();
      assert.equal(r.body.ok, true);
      assert.equal(r.status, 202);
    }

    // Now attempt to update the document as a different user, Jan
    doc = (await user2Db.openDoc('testdoc'))!;
    doc['foo'] = 3;
    r = await user2Db.save(doc);
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // Now have Damien change the author to Jan
    doc = (await userDb.openDoc('testdoc'))!;
    doc['author'] = 'Jan Lehnardt';
    assert.equal((await userDb.save(doc)).body.ok, true);

    // Now update the document as Jan
    doc = (await user2Db.openDoc('testdoc'))!;
    doc['foo'] = 3;
    assert.equal((await user2Db.save(doc)).body.ok, true);

    // Damien can't delete it
    r = await userDb.deleteDoc({ ...doc });
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // admin must save with author field unless admin override
    const admin = (await b.session())['userCtx'];
    assert.equal(admin.name, null);
    assert.deepEqual(admin.roles, ['_admin']);

    // can't save the doc even though we are admin
    doc = (await db.openDoc('testdoc'))!;
    doc['foo'] = 3;
    r = await db.save(doc);
    assert.equal(r.body.error, 'unauthorized');
    assert.equal(r.status, 401);

    // now turn on admin override
    assert.equal((await db.setSecObj({ admin_override: true })).body.ok, true);
    assert.equal((await db.save(doc)).body.ok, true);

    // try to do something lame (couch_db:set_security accepts only an object: bad_request)
    r = await db.setSecObj(['foo']);
    assert.equal(r.status, 400);

    // go back to normal
    assert.equal((await db.setSecObj({ admin_override: false })).body.ok, true);

    // Now delete document
    assert.equal((await user2Db.deleteDoc(doc)).body.ok, true);

    // now test bulk docs
    r = await db.bulkSave([{ _id: 'bahbah', author: 'Damien Katz', foo: 'bar' }, { _id: 'fahfah', foo: 'baz' }]);
    assert.ok(r.body[0].rev);
    assert.equal(r.body[0].error, undefined);
    assert.equal(r.body[1].rev, undefined);
    assert.equal(r.body[1].error, 'forbidden');
    assert.ok(await db.openDoc('bahbah'));
    assert.equal(await db.openDoc('fahfah'), null);

    // now all or nothing with a failure: CouchDB 1.6 answers 417 with the errors (couch.js
    // bulkSave turns that into {errors})
    r = await db.bulkSave([{ _id: 'booboo', author: 'Damien Katz', foo: 'bar' }, { _id: 'foofoo', foo: 'baz' }], { all_or_nothing: true });
    assert.equal(r.status, 417);
    assert.equal(r.body.length, 1);
    assert.equal(r.body[0].error, 'forbidden');
    assert.equal(await db.openDoc('booboo'), null);
    assert.equal(await db.openDoc('foofoo'), null);

    // Now test replication
    const authHeaders = testAuth('Christopher Lenz', 'dog food');
    const host = server.url.replace(/\/$/, '');
    const dbPairs: { source: unknown; target: unknown }[] = [
      { source: 'test_suite_db_a', target: 'test_suite_db_b' },
      { source: 'test_suite_db_a', target: { url: `${host}/test_suite_db_b`, headers: authHeaders } },
      { source: { url: `${host}/test_suite_db_a`, headers: authHeaders }, target: 'test_suite_db_b' },
      { source: { url: `${host}/test_suite_db_a`, headers: authHeaders }, target: { url: `${host}/test_suite_db_b`, headers: authHeaders } },
    ];
    const adminDbA = new Db(b, 'test_suite_db_a');
    const adminDbB = new Db(b, 'test_suite_db_b');
    const dbA = new Db(b, 'test_suite_db_a', authHeaders);
    const dbB = new Db(b, 'test_suite_db_b', authHeaders);
    const replicate = async (source: unknown, target: unknown): Promise<Doc> => {
      const rep = await b.post('/_replicate', { source, target }, authHeaders);
      assert.equal(rep.status, 200, rep.text);
      return rep.body as Doc;
    };
    for (const [pair, { source: A, target: B }] of dbPairs.entries()) {
      await adminDbA.deleteDb();
      assert.equal((await adminDbA.createDb()).status, 201);
      await adminDbB.deleteDb();
      assert.equal((await adminDbB.createDb()).status, 201);

      // save and replicate documents that will and will not pass our design doc validation function.
      assert.equal((await dbA.save({ _id: 'foo1', value: 'a', author: 'Noah Slater' })).status, 201);
      assert.equal((await dbA.save({ _id: 'foo2', value: 'a', author: 'Christopher Lenz' })).status, 201);
      assert.equal((await dbA.save({ _id: 'bad1', value: 'a' })).status, 201);

      assert.equal((await replicate(A, B))['ok'], true, `pair ${pair}`);
      assert.equal((await replicate(B, A))['ok'], true, `pair ${pair}`);

      assert.ok(await dbA.openDoc('foo1'));
      assert.ok(await dbB.openDoc('foo1'));
      assert.ok(await dbA.openDoc('foo2'));
      assert.ok(await dbB.openDoc('foo2'));

      // save the design doc to dbA
      delete designDoc['_rev'];
      assert.equal((await adminDbA.save(designDoc)).status, 201);

      // no affect on already saved docs
      assert.ok(await dbA.openDoc('bad1'));

      // Update some docs on dbB. Since the design hasn't replicated, anything is allowed.
      // this edit will fail validation on replication to dbA (no author)
      assert.equal((await dbB.save({ _id: 'bad2', value: 'a' })).body.ok, true);

      // this edit will fail security on replication to dbA (wrong author replicating the change)
      const foo1 = (await dbB.openDoc('foo1'))!;
      foo1['value'] = 'b';
      await dbB.save(foo1);

      // this is a legal edit
      const foo2 = (await dbB.openDoc('foo2'))!;
      foo2['value'] = 'b';
      await dbB.save(foo2);

      const results = await replicate(B, A);
      assert.equal(results['ok'], true);
      assert.equal(results['history'][0].docs_written, 1, `pair ${pair}`);
      assert.equal(results['history'][0].doc_write_failures, 2, `pair ${pair}`);

      // bad2 should not be on dbA
      assert.equal(await dbA.openDoc('bad2'), null);
      // The edit to foo1 should not have replicated.
      assert.equal((await dbA.openDoc('foo1'))!['value'], 'a');
      // The edit to foo2 should have replicated.
      assert.equal((await dbA.openDoc('foo2'))!['value'], 'b');
    }
  });
});

/** The state cookie_auth.js leaves its users in, for the test below that shares it. */
interface CookieAuthWorld {
  b: Browser;
  usersDb: Db;
  password: string;
}

/**
 * cookie_auth.js's server: `test_suite_users` as the authentication database and `jan` as the
 * server admin, Jason Davies and jchris@apache.org as users.
 */
async function cookieAuthServer(server: TestServer): Promise<CookieAuthWorld & { jasonUserDoc: Doc; jchrisUserDoc: Doc }> {
  const b = new Browser(server.url);
  const usersDb = new Db(b, 'test_suite_users');
  await usersDb.deleteDb();
  assert.equal((await usersDb.createDb()).status, 201);
  await useAuthDb(b, 'test_suite_users');
  await b.setConfig('admins', 'jan', 'apple');
  const password = '3.141592653589';
  const jasonUserDoc = await prepareUserDoc(b, { name: 'Jason Davies' }, password);
  assert.equal((await usersDb.save(jasonUserDoc)).body.ok, true);
  const jchrisUserDoc = await prepareUserDoc(b, { name: 'jchris@apache.org' }, 'funnybone');
  assert.equal((await usersDb.save(jchrisUserDoc)).body.ok, true);
  return { b, usersDb, password, jasonUserDoc, jchrisUserDoc };
}

/** cookie_auth.js's and users_db_security.js's open_as and save_as: log in, act, log out. */
async function openAs(b: Browser, db: Db, id: string, name: string, password: string): Promise<Doc | null> {
  assert.equal((await b.login(name, password))['ok'], true, `login ${name}`);
  try {
    const r = await db.open(id, `?anti-cache=${Math.round(Math.random() * 100000)}`);
    return r.status === 404 ? null : r.body as Doc;
  } finally {
    await b.logout();
  }
}

async function saveAs(b: Browser, db: Db, doc: Doc, name: string, password: string): Promise<Response> {
  assert.equal((await b.login(name, password))['ok'], true, `login ${name}`);
  try {
    return await db.save(doc);
  } finally {
    await b.logout();
  }
}

test('cookie_auth: the users database, its validation and cookie sessions', async () => {
  await withServer(async (server) => {
    const { b, usersDb, password, jasonUserDoc, jchrisUserDoc } = await cookieAuthServer(server);
    try {
      // test that the users db is born with the auth ddoc
      const ddoc = await openAs(b, usersDb, '_design/_auth', 'jan', 'apple');
      assert.ok(ddoc?.['validate_doc_update']);

      const checkDoc = await openAs(b, usersDb, jasonUserDoc['_id'] as string, 'jan', 'apple');
      assert.equal(checkDoc?.['name'], 'Jason Davies');

      // make sure we cant create duplicate users
      const duplicateJchrisDoc = await prepareUserDoc(b, { name: 'jchris@apache.org' }, 'eh, Boo-Boo?');
      let r = await usersDb.save(duplicateJchrisDoc);
      assert.equal(r.body.error, 'conflict');
      assert.equal(r.status, 409);

      // we can't create _names
      const underscoreUserDoc = await prepareUserDoc(b, { name: '_why' }, 'copperfield');
      r = await usersDb.save(underscoreUserDoc);
      assert.equal(r.body.error, 'forbidden');
      assert.equal(r.status, 403);

      // we can't create docs with malformed ids
      const badIdDoc = await prepareUserDoc(b, { name: 'foo' }, 'bar');
      badIdDoc['_id'] = 'org.apache.couchdb:w00x';
      r = await usersDb.save(badIdDoc);
      assert.equal(r.body.error, 'forbidden');
      assert.equal(r.status, 403);

      // login works
      assert.equal((await b.login('Jason Davies', password))['ok'], true);
      assert.equal((await b.session())['userCtx'].name, 'Jason Davies');

      // JSON login works
      r = await b.post('/_session', { name: 'Jason Davies', password });
      assert.equal(r.body.ok, true);
      assert.equal((await b.session())['userCtx'].name, 'Jason Davies');

      // update one's own credentials document
      jasonUserDoc['foo'] = 2;
      assert.equal((await usersDb.save(jasonUserDoc)).body.ok, true);
      assert.equal((await b.session())['userCtx'].roles.indexOf('_admin'), -1);

      // can't delete another users doc unless you are admin. The stored 1.6-era script expects
      // 403 forbidden, but CouchDB 1.6 answers 404: its DELETE opens the document first
      // (couch_httpd_db:db_doc_req 'DELETE', "check for the existence of the doc to handle the
      // 404 case") and couch_users_db:after_doc_read hides another user's document (not_found).
      r = await usersDb.deleteDoc({ ...jchrisUserDoc });
      assert.equal(r.body.error, 'not_found');
      assert.equal(r.status, 404);

      assert.notEqual((await b.login('Jason Davies', '2.71828'))['ok'], true);
      assert.notEqual((await b.login('Robert Allen Zimmerman', 'd00d'))['ok'], true);
      // ("a failed login attempt should log you out": see the cookie_auth test below)

      // test redirect: a browser follows the 302 to / ("Welcome"); this client does not
      r = await b.request('POST', '/_session?next=/', {
        raw: `name=Jason%20Davies&password=${encodeURIComponent(password)}`,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      if (r.status === 200) {
        assert.match(r.text, /Welcome/);
      } else {
        assert.equal(r.status, 302);
        assert.ok(r.headers['location']);
      }

      // test users db validations
      // test that you can't update docs unless you are logged in as the user (or are admin)
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      assert.equal((await b.session())['userCtx'].name, 'jchris@apache.org');
      assert.equal((await b.session())['userCtx'].roles.length, 0);

      // The stored script expects 403 forbidden; CouchDB 1.6's couch_users_db:before_doc_update
      // throws not_found (404) when a signed-in user who is not an admin writes another user's
      // document, before any validation runs.
      jasonUserDoc['foo'] = 3;
      r = await usersDb.save(jasonUserDoc);
      assert.equal(r.body.error, 'not_found');
      assert.equal(r.status, 404);

      // test that you can't edit roles unless you are admin
      jchrisUserDoc['roles'] = ['foo'];
      r = await usersDb.save(jchrisUserDoc);
      assert.equal(r.body.error, 'forbidden');
      assert.equal(r.status, 403);

      assert.equal((await b.logout())['ok'], true);

      jchrisUserDoc['foo'] = ['foo'];
      assert.equal((await saveAs(b, usersDb, jchrisUserDoc, 'jan', 'apple')).body.ok, true);

      // test that you can't save system (underscore) roles even if you are admin
      jchrisUserDoc['roles'] = ['_bar'];
      r = await saveAs(b, usersDb, jchrisUserDoc, 'jan', 'apple');
      assert.equal(r.body.error, 'forbidden');
      assert.equal(r.status, 403);

      // make sure the foo role has been applied
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      let s = await b.session();
      assert.equal(s['userCtx'].name, 'jchris@apache.org');
      assert.equal(s['userCtx'].roles.indexOf('_admin'), -1);
      assert.notEqual(s['userCtx'].roles.indexOf('foo'), -1);

      // now let's make jchris a server admin
      assert.equal((await b.logout())['ok'], true);
      assert.equal((await b.login('jan', 'apple'))['ok'], true);
      await b.setConfig('admins', 'jchris@apache.org', 'funnybone');
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      s = await b.session();
      assert.equal(s['userCtx'].name, 'jchris@apache.org');
      assert.notEqual(s['userCtx'].roles.indexOf('_admin'), -1);
      // test that jchris still has the foo role
      assert.notEqual(s['userCtx'].roles.indexOf('foo'), -1);

      // should work even when user doc has no password
      const jchrisDoc = (await usersDb.openDoc(jchrisUserDoc['_id'] as string))!;
      delete jchrisDoc['salt'];
      delete jchrisDoc['password_sha'];
      assert.equal((await usersDb.save(jchrisDoc)).body.ok, true);
      assert.equal((await b.logout())['ok'], true);
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      s = await b.session();
      assert.equal(s['userCtx'].name, 'jchris@apache.org');
      assert.notEqual(s['userCtx'].roles.indexOf('_admin'), -1);
      // test session info
      assert.equal(s['info'].authenticated, 'cookie');
      assert.equal(s['info'].authentication_db, 'test_suite_users');
      // test that jchris still has the foo role
      assert.notEqual(s['userCtx'].roles.indexOf('foo'), -1);
    } finally {
      // Make sure we erase any auth cookies so we don't affect other tests
      assert.equal((await b.logout())['ok'], true);
    }
    // log in one last time so run_on_modified_server can clean up the admin account
    assert.equal((await b.login('jan', 'apple'))['ok'], true);
  });
});

test('cookie_auth: a failed login attempt logs you out', async () => {
  await withServer(async (server) => {
    const { b, password } = await cookieAuthServer(server);
    assert.equal((await b.login('Jason Davies', password))['ok'], true);
    assert.equal((await b.session())['userCtx'].name, 'Jason Davies');
    assert.notEqual((await b.login('Jason Davies', '2.71828'))['ok'], true);
    assert.notEqual((await b.login('Robert Allen Zimmerman', 'd00d'))['ok'], true);
    // a failed login attempt should log you out
    assert.notEqual((await b.session())['userCtx'].name, 'Jason Davies');
  });
});

test('proxyauth: X-Auth-CouchDB-* headers make the user, with and without the secret token', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = new Db(b, 'test_suite_users');
    const db = new Db(b, 'test_suite_db');
    const secret = createHash('sha256').update(String(Math.random())).digest('base64').slice(0, 64);
    await b.setConfig('httpd', 'authentication_handlers', '{couch_httpd_auth, proxy_authentification_handler}, {couch_httpd_auth, default_authentication_handler}');
    await useAuthDb(b, 'test_suite_users');
    await b.setConfig('couch_httpd_auth', 'secret', secret);
    await b.setConfig('couch_httpd_auth', 'x_auth_username', 'X-Auth-CouchDB-UserName');
    await b.setConfig('couch_httpd_auth', 'x_auth_roles', 'X-Auth-CouchDB-Roles');
    await b.setConfig('couch_httpd_auth', 'x_auth_token', 'X-Auth-CouchDB-Token');
    await b.setConfig('couch_httpd_auth', 'proxy_use_secret', 'false');

    // The script deletes test_suite_users here and counts on CouchDB recreating it; this server
    // is new, so its authentication database is already empty (the recreation is a proxyauth
    // test below).
    await db.deleteDb();
    assert.equal((await db.createDb()).status, 201);

    const benoitcUserDoc = await prepareUserDoc(b, { name: 'benoitc@apache.org' }, 'test');
    assert.equal((await usersDb.save(benoitcUserDoc)).body.ok, true);

    assert.equal((await b.session())['userCtx'].name, null);

    // test that you can use basic auth aginst the users db
    const s = await b.session({ Authorization: 'Basic YmVub2l0Y0BhcGFjaGUub3JnOnRlc3Q=' });
    assert.equal(s['userCtx'].name, 'benoitc@apache.org');
    assert.equal(s['info'].authenticated, 'default');

    await b.logout();

    const headers: HeaderMap = {
      'X-Auth-CouchDB-UserName': 'benoitc@apache.org',
      'X-Auth-CouchDB-Roles': 'test',
      'X-Auth-CouchDB-Token': createHmac('sha1', secret).update('benoitc@apache.org').digest('hex'),
    };
    const designDoc = {
      _id: '_design/test',
      language: 'javascript',
      shows: {
        welcome: '(function(doc,req) { return "Welcome " + req.userCtx["name"]; })',
        role: "(function(doc, req) { return req.userCtx['roles'][0]; })",
      },
    };
    await db.save(designDoc);

    let r = await b.get('/test_suite_db/_design/test/_show/welcome', headers);
    assert.equal(r.text, 'Welcome benoitc@apache.org');
    r = await b.get('/test_suite_db/_design/test/_show/role', headers);
    assert.equal(r.text, 'test');

    r = await b.put('/_config/couch_httpd_auth/proxy_use_secret', 'true', { 'X-Couch-Persist': 'false' });
    assert.equal(r.status, 200);

    r = await b.get('/test_suite_db/_design/test/_show/welcome', headers);
    assert.equal(r.text, 'Welcome benoitc@apache.org');
    r = await b.get('/test_suite_db/_design/test/_show/role', headers);
    assert.equal(r.text, 'test');
  });
});

test('proxyauth: the authentication database is there once the /_config PUT naming it has answered, so deleting it at once is a 200 (the script\'s first steps)', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    await b.setConfig('couch_httpd_auth', 'authentication_db', 'test_suite_users');
    // proxyauth.js: run_on_modified_server(...authentication_db...), then usersDb.deleteDb()
    const r = await b.del('/test_suite_users/').catch((err: Error) => err);
    assert.ok(!(r instanceof Error), `the server went away: ${String(r)}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.ok, true);
    assert.equal((await b.get('/')).status, 200);
  });
});

test('proxyauth: a deleted authentication database is recreated at once (reader_acl and users_db_security count on it too)', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = new Db(b, 'test_suite_users');
    await useAuthDb(b, 'test_suite_users');
    assert.equal((await usersDb.deleteDb()).status, 200);
    // proxyauth.js: usersDb.deleteDb(); ... T(usersDb.save(benoitcUserDoc).ok);
    const benoitcUserDoc = await prepareUserDoc(b, { name: 'benoitc@apache.org' }, 'test');
    assert.equal((await usersDb.save(benoitcUserDoc)).body.ok, true);
    assert.equal((await b.session({ Authorization: 'Basic YmVub2l0Y0BhcGFjaGUub3JnOnRlc3Q=' }))['userCtx'].name, 'benoitc@apache.org');
  });
});

/** reader_acl.js's run_on_modified_server settings (applied again after the restart). */
async function readerAclConfig(b: Browser): Promise<void> {
  await b.setConfig('httpd', 'authentication_handlers', '{couch_httpd_auth, cookie_authentication_handler}, {couch_httpd_auth, default_authentication_handler}');
  await useAuthDb(b, 'test_suite_users');
}

const EMIT_NULL = 'function(doc) { emit(null, null) }';

test('reader_acl: members and readers of a database, database admins, across a restart', async () => {
  let server = await startServer();
  const dataDir = server.dataDir;
  try {
    // testFun
    let b = new Browser(server.url);
    await readerAclConfig(b);
    let usersDb = new Db(b, 'test_suite_users');
    let secretDb = new Db(b, 'test_suite_db');
    try {
      // (The script deletes test_suite_users first and counts on its recreation: see the proxyauth
      // test. This server is new, so the database is empty already.)
      await secretDb.deleteDb();
      assert.equal((await secretDb.createDb()).status, 201);

      // create a user with top-secret-clearance
      const jchrisUserDoc = await prepareUserDoc(b, { name: 'jchris@apache.org', roles: ['top-secret'] }, 'funnybone');
      assert.equal((await usersDb.save(jchrisUserDoc)).body.ok, true);
      assert.equal((await b.post('/test_suite_users/_ensure_full_commit', undefined, { 'Content-Type': 'application/json' })).body.ok, true);

      assert.equal((await b.session())['userCtx'].name, null);

      // set secret db to be read controlled
      assert.equal((await secretDb.save({ _id: 'baz', foo: 'bar' })).body.ok, true);
      assert.equal((await secretDb.openDoc('baz'))!['foo'], 'bar');

      assert.equal((await secretDb.setSecObj({ members: { roles: ['super-secret-club'], names: ['joe', 'barb'] } })).body.ok, true);
    } finally {
      await b.logout();
    }

    // security changes will always commit synchronously
    await server.stop({ keepData: true });
    server = await startServer({ dataDir });

    // testFun2
    b = new Browser(server.url);
    await readerAclConfig(b);
    usersDb = new Db(b, 'test_suite_users');
    secretDb = new Db(b, 'test_suite_db');
    try {
      // can't read it as jchris b/c he's missing the needed role
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      assert.equal((await b.session())['userCtx'].name, 'jchris@apache.org');
      let r = await secretDb.open('baz');
      assert.equal(r.status, 401, "can't open a doc from a secret db");

      await b.logout();

      // make anyone with the top-secret role an admin
      // db admins are automatically members
      assert.equal((await secretDb.setSecObj({
        admins: { roles: ['top-secret'], names: [] },
        members: { roles: ['super-secret-club'], names: ['joe', 'barb'] },
      })).body.ok, true);

      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);

      // db admin can read
      assert.equal((await secretDb.openDoc('baz'))!['foo'], 'bar');

      // and run temp views
      assert.equal((await secretDb.query(EMIT_NULL)).body.total_rows, 1);

      await b.logout();
      assert.notEqual((await b.session())['userCtx'].roles.indexOf('_admin'), -1);

      // admin now adds the top-secret role to the db's members
      // and removes db-admins
      assert.equal((await secretDb.setSecObj({
        admins: { roles: [], names: [] },
        members: { roles: ['super-secret-club', 'top-secret'], names: ['joe', 'barb'] },
      })).body.ok, true);

      // server _admin can always read
      assert.equal((await secretDb.openDoc('baz'))!['foo'], 'bar');

      // and run temp views
      assert.equal((await secretDb.query(EMIT_NULL)).body.total_rows, 1);

      assert.equal((await secretDb.save({ _id: '_design/foo', views: { bar: { map: 'function(doc){emit(null, null)}' } } })).body.ok, true);

      // now top-secret users can read too
      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      assert.equal((await b.session())['userCtx'].roles.indexOf('_admin'), -1);
      assert.equal((await secretDb.openDoc('baz'))!['foo'], 'bar');
      // members can query stored views
      assert.equal((await secretDb.view('foo/bar')).body.total_rows, 1);

      // members can't do temp views (CouchDB 1.6: check_is_admin, 401)
      r = await secretDb.query(EMIT_NULL);
      assert.equal(r.status, 401, 'temp view should be admin only');

      await b.logout();

      // works with readers (backwards compat with 1.0)
      assert.equal((await secretDb.setSecObj({
        admins: { roles: [], names: [] },
        readers: { roles: ['super-secret-club', 'top-secret'], names: ['joe', 'barb'] },
      })).body.ok, true);

      assert.equal((await b.login('jchris@apache.org', 'funnybone'))['ok'], true);
      assert.equal((await b.session())['userCtx'].roles.indexOf('_admin'), -1);
      assert.equal((await secretDb.openDoc('baz'))!['foo'], 'bar');

      // can't set non string reader names or roles (the script only asks that these fail)
      r = await secretDb.setSecObj({ members: { roles: ['super-secret-club', { 'top-secret': 'awesome' }], names: ['joe', 'barb'] } });
      assert.ok(r.status >= 400, 'only string roles');
      r = await secretDb.setSecObj({ members: { roles: ['super-secret-club', { 'top-secret': 'awesome' }], names: ['joe', 22] } });
      assert.ok(r.status >= 400, 'only string names');
      r = await secretDb.setSecObj({ members: { roles: ['super-secret-club', { 'top-secret': 'awesome' }], names: 'joe' } });
      assert.ok(r.status >= 400, 'only lists of names');
    } finally {
      await b.logout();
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('users_db_security: password hashing, who may read and write which user document, public_fields and users_db_public', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = new Db(b, 'test_suite_users');
    const pws: Record<string, [string, string]> = {
      jan: ['jan', 'apple'], jchris: ['jchris', 'mp3'], jchris1: ['jchris', 'couch'], fdmanana: ['fdmanana', 'foobar'], benoitc: ['benoitc', 'test'],
    };
    const openAsUser = (id: string, user: string) => openAs(b, usersDb, id, ...pws[user]!);
    const saveAsUser = (doc: Doc, user: string) => saveAs(b, usersDb, doc, ...pws[user]!);
    const asUser = async (user: string, action: () => Promise<Response>): Promise<Response> => {
      assert.equal((await b.login(...pws[user]!))['ok'], true, `login ${user}`);
      try {
        return await action();
      } finally {
        await b.logout();
      }
    };

    await b.setConfig('couch_httpd_auth', 'iterations', '1');
    await useAuthDb(b, 'test_suite_users');
    // (The script deletes test_suite_users here and counts on its recreation: see the
    // proxyauth test. This server is new, so the database is empty already.)

    // a doc with a field 'password' should be hashed to 'derived_key' with salt and salt stored
    // in 'salt', 'password' is set to null. Exising 'derived_key' and 'salt' fields are
    // overwritten with new values when a non-null 'password' field exists.
    // anonymous should be able to create a user document
    let userDoc: Doc = { _id: 'org.couchdb.user:jchris', type: 'user', name: 'jchris', password: 'mp3', roles: [] };
    assert.equal((await usersDb.save(userDoc)).body.ok, true, 'should save document');
    userDoc = (await usersDb.openDoc('org.couchdb.user:jchris'))!;
    assert.equal(userDoc['password'], undefined, 'password field should be null 1');
    assert.equal(userDoc['derived_key'].length, 40, 'derived_key should exist');
    assert.equal(userDoc['salt'].length, 32, 'salt should exist');

    // create server admin
    await b.setConfig('couch_httpd_auth', 'iterations', '1');
    await b.setConfig('admins', 'jan', 'apple');
    {
      // anonymous should not be able to read an existing user's user document
      assert.equal(await usersDb.openDoc('org.couchdb.user:jchris'), null, 'anonymous user doc read should be not found');

      // anonymous should not be able to read /_users/_changes
      assert.equal((await usersDb.changes()).body.error, 'unauthorized', "anoymous can't read _changes");

      // user should be able to read their own document
      let jchrisDoc = (await openAsUser('org.couchdb.user:jchris', 'jchris'))!;
      assert.equal(jchrisDoc['_id'], 'org.couchdb.user:jchris');

      // user should not be able to read /_users/_changes
      assert.equal((await asUser('jchris', () => usersDb.changes())).body.error, 'unauthorized', "user can't read _changes");

      // new 'password' fields should trigger new hashing routine
      jchrisDoc['password'] = 'couch';
      assert.equal((await saveAsUser(jchrisDoc, 'jchris')).body.ok, true);
      jchrisDoc = (await openAsUser('org.couchdb.user:jchris', 'jchris1'))!;
      assert.equal(jchrisDoc['password'], undefined, 'password field should be null 2');
      assert.equal(jchrisDoc['derived_key'].length, 40, 'derived_key should exist');
      assert.equal(jchrisDoc['salt'].length, 32, 'salt should exist');
      assert.notEqual(userDoc['salt'], jchrisDoc['salt'], 'should have new salt');
      assert.notEqual(userDoc['derived_key'], jchrisDoc['derived_key'], 'should have new derived_key');

      // user should not be able to read another user's user document
      const fdmananaDoc: Doc = { _id: 'org.couchdb.user:fdmanana', type: 'user', name: 'fdmanana', password: 'foobar', roles: [] };
      await usersDb.save(fdmananaDoc);
      assert.equal(await openAsUser('org.couchdb.user:fdmanana', 'jchris1'), null, "should not_found opening another user's user doc");

      // save a db admin
      const benoitcDoc: Doc = { _id: 'org.couchdb.user:benoitc', type: 'user', name: 'benoitc', password: 'test', roles: ['user_admin'] };
      await saveAsUser(benoitcDoc, 'jan');

      assert.equal((await b.login('jan', 'apple'))['ok'], true);
      assert.equal((await usersDb.setSecObj({ admins: { roles: [], names: ['benoitc'] } })).body.ok, true);
      await b.logout();

      // user should not be able to read from any view
      const ddoc: Doc = { _id: '_design/user_db_auth', views: { test: { map: 'function(doc) { emit(doc._id, null); }' } } };
      await saveAsUser(ddoc, 'jan');
      assert.equal((await usersDb.view('user_db_auth/test')).body.error, 'forbidden', 'non-admins should not be able to read a view');

      // admin should be able to read from any view
      assert.equal((await asUser('jan', () => usersDb.view('user_db_auth/test'))).body.total_rows, 3, 'should allow access and list two users to admin');

      // db admin should be able to read from any view
      assert.equal((await asUser('benoitc', () => usersDb.view('user_db_auth/test'))).body.total_rows, 3, 'should allow access and list two users to db admin');

      // non-admins can't read design docs
      assert.equal((await asUser('jchris1', () => usersDb.open('_design/user_db_auth'))).body.error, 'forbidden', "non-admins can't read design docs");

      // admin should be able to read and edit any user doc
      fdmananaDoc['password'] = 'mobile';
      assert.equal((await saveAsUser(fdmananaDoc, 'jan')).body.ok, true, 'admin should be able to update any user doc');

      // admin should be able to read and edit any user doc
      fdmananaDoc['password'] = 'mobile1';
      assert.equal((await saveAsUser(fdmananaDoc, 'benoitc')).body.ok, true, 'db admin by role should be able to update any user doc');

      assert.equal((await b.login('jan', 'apple'))['ok'], true);
      assert.equal((await usersDb.setSecObj({ admins: { roles: ['user_admin'], names: [] } })).body.ok, true);
      await b.logout();

      // db admin should be able to read and edit any user doc
      fdmananaDoc['password'] = 'mobile2';
      assert.equal((await saveAsUser(fdmananaDoc, 'benoitc')).body.ok, true, 'db admin should be able to update any user doc');

      // ensure creation of old-style docs still works
      const robertDoc = await prepareUserDoc(b, { name: 'robert' }, 'anchovy');
      assert.equal((await usersDb.save(robertDoc)).body.ok, true, 'old-style user docs should still be accepted');

      // log in one last time so run_on_modified_server can clean up the admin account
      assert.equal((await b.login('jan', 'apple'))['ok'], true);
    }

    // (The script's next run_on_modified_server, public_fields "name,type" with users_db_public,
    // is in the users_db_security tests below.)
    await b.logout();
    assert.equal((await b.login('jan', 'apple'))['ok'], true);

    // public_fields "name" without users_db_public
    await b.setConfig('couch_httpd_auth', 'public_fields', 'name');
    await b.setConfig('couch_httpd_auth', 'users_db_public', 'false');
    {
      assert.equal((await b.login('jchris', 'couch'))['ok'], true);
      assert.equal((await usersDb.allDocs('?include_docs=true')).body.error, 'forbidden', 'should throw');

      // COUCHDB-1888 make sure admins always get all fields
      assert.equal((await b.login('jan', 'apple'))['ok'], true);
      const allAdmin = (await usersDb.allDocs('?include_docs=true')).body;
      assert.equal(allAdmin.rows[2].doc.type, 'user', 'should return type');
    }
  });
});

/**
 * users_db_security.js's users as its second run_on_modified_server finds them (jchris with the
 * password couch, fdmanana, benoitc, robert, _design/user_db_auth), under public_fields
 * "name,type" and users_db_public; nobody signed in.
 */
async function publicUsersDbServer(b: Browser): Promise<Db> {
  const usersDb = new Db(b, 'test_suite_users');
  await b.setConfig('couch_httpd_auth', 'iterations', '1');
  await useAuthDb(b, 'test_suite_users');
  for (const [name, password, roles] of [['jchris', 'couch', []], ['fdmanana', 'mobile2', []], ['benoitc', 'test', ['user_admin']]] as const) {
    assert.equal((await usersDb.save({ _id: `org.couchdb.user:${name}`, type: 'user', name, password, roles: [...roles] })).status, 201);
  }
  assert.equal((await usersDb.save(await prepareUserDoc(b, { name: 'robert' }, 'anchovy'))).status, 201);
  assert.equal((await usersDb.save({ _id: '_design/user_db_auth', views: { test: { map: 'function(doc) { emit(doc._id, null); }' } } })).status, 201);
  await b.setConfig('couch_httpd_auth', 'public_fields', 'name,type');
  await b.setConfig('couch_httpd_auth', 'users_db_public', 'true');
  await b.setConfig('admins', 'jan', 'apple');
  return usersDb;
}

test('users_db_security: with public_fields, an anonymous reader sees a user document\'s public fields', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = await publicUsersDbServer(b);
    const res = await usersDb.openDoc('org.couchdb.user:jchris');
    assert.ok(res, 'anonymous GET of org.couchdb.user:jchris: not found');
    assert.equal(res['name'], 'jchris');
    assert.equal(res['type'], 'user');
    assert.equal(res['roles'], undefined);
    assert.equal(res['salt'], undefined);
    assert.equal(res['password_scheme'], undefined);
    assert.equal(res['derived_key'], undefined);
  });
});

test('users_db_security: with users_db_public, a user\'s _all_docs?include_docs=true shows only public fields', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = await publicUsersDbServer(b);
    assert.equal((await b.login('jchris', 'couch'))['ok'], true);
    const r = await usersDb.allDocs('?include_docs=true');
    assert.equal(r.status, 200, r.text);
    const all = r.body;
    assert.ok(all.rows);
    assert.ok((all.rows as Doc[]).every((row) => row['doc']
      ? Object.keys(row['doc'] as Doc).every((key) => key === 'name' || key === 'type')
      : (row['id'] as string)[0] === '_'), JSON.stringify(all.rows));
  });
});

test('auth_cache: logins through a 3-user credentials cache see every change of a user document (hit and miss counters not compared)', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const authDb = new Db(b, 'test_suite_users');
    await useAuthDb(b, 'test_suite_users');
    await b.setConfig('couch_httpd_auth', 'auth_cache_size', '3');
    await b.setConfig('httpd', 'authentication_handlers', '{couch_httpd_auth, default_authentication_handler}');
    await b.setConfig('couch_httpd_auth', 'secret', createHash('sha256').update(String(Math.random())).digest('base64').slice(0, 64));

    const fdmanana = await prepareUserDoc(b, { name: 'fdmanana', roles: ['dev'] }, 'qwerty');
    assert.equal((await authDb.save(fdmanana)).body.ok, true);
    const chris = await prepareUserDoc(b, { name: 'chris', roles: ['dev', 'mafia', 'white_costume'] }, 'the_god_father');
    assert.equal((await authDb.save(chris)).body.ok, true);
    const joe = await prepareUserDoc(b, { name: 'joe', roles: ['erlnager'] }, 'functional');
    assert.equal((await authDb.save(joe)).body.ok, true);
    const johndoe = await prepareUserDoc(b, { name: 'johndoe', roles: ['user'] }, '123456');
    assert.equal((await authDb.save(johndoe)).body.ok, true);

    const loginLogout = async (name: string, password: string): Promise<void> => {
      assert.equal((await b.login(name, password))['ok'], true, `login ${name}`);
      assert.equal((await b.logout())['ok'], true);
    };
    // the script counts a miss, a hit, misses for chris, joe and johndoe, a miss for joe again
    // (its MRU cache dropped joe for johndoe) and a hit for fdmanana
    await loginLogout('fdmanana', 'qwerty');
    await loginLogout('fdmanana', 'qwerty');
    await loginLogout('chris', 'the_god_father');
    await loginLogout('joe', 'functional');
    await loginLogout('johndoe', '123456');
    await loginLogout('joe', 'functional');
    await loginLogout('fdmanana', 'qwerty');

    let newSalt = await b.uuid();
    fdmanana['salt'] = newSalt;
    fdmanana['password_sha'] = hexSha1('foobar' + newSalt);
    assert.equal((await authDb.save(fdmanana)).body.ok, true);

    // cache was refreshed
    assert.equal((await b.login('fdmanana', 'qwerty'))['error'], 'unauthorized');
    await loginLogout('fdmanana', 'foobar');

    // and yet another update
    newSalt = await b.uuid();
    fdmanana['salt'] = newSalt;
    fdmanana['password_sha'] = hexSha1('javascript' + newSalt);
    assert.equal((await authDb.save(fdmanana)).body.ok, true);

    // cache was refreshed
    assert.equal((await b.login('fdmanana', 'foobar'))['error'], 'unauthorized');
    await loginLogout('fdmanana', 'javascript');

    assert.equal((await authDb.deleteDoc(fdmanana)).body.ok, true);
    assert.equal((await b.login('fdmanana', 'javascript'))['error'], 'unauthorized');

    // login, compact authentication DB, login again (the script sees a cache hit)
    await loginLogout('johndoe', '123456');
    assert.equal((await authDb.compact()).body.ok, true);
    await loginLogout('johndoe', '123456');
  });
});

test('jsonp: ?callback= wraps JSON answers, chunked or not, once allow_jsonp is on', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const db = new Db(b, 'test_suite_db');
    await db.deleteDb();
    assert.equal((await db.createDb()).status, 201);

    assert.equal((await db.save({ _id: '0', a: 0, b: 0 })).body.ok, true);

    // callback param is ignored unless jsonp is configured
    let r = await b.get('/test_suite_db/0?callback=jsonp_not_configured');
    JSON.parse(r.text);

    await b.setConfig('httpd', 'allow_jsonp', 'true');

    // The script evaluates the answer with its callbacks defined; so does this test.
    let jsonpFlag = 0;
    const jsonpNoChunk = (doc: Doc): void => {
      assert.equal(jsonpFlag, 0);
      assert.equal(doc['_id'], '0');
      jsonpFlag = 1;
    };
    const jsonpChunk = (doc: Doc): void => {
      assert.equal(jsonpFlag, 0);
      assert.equal(doc['total_rows'], 1);
      jsonpFlag = 1;
    };
    const evaluate = (text: string): void => {
      new Function('jsonp_no_chunk', 'jsonp_chunk', text)(jsonpNoChunk, jsonpChunk);
    };

    // Test unchunked callbacks.
    r = await b.get('/test_suite_db/0?callback=jsonp_no_chunk');
    assert.equal(r.status, 200);
    jsonpFlag = 0;
    evaluate(r.text);
    assert.equal(jsonpFlag, 1);
    r = await b.get('/test_suite_db/0?callback=foo"');
    assert.equal(r.status, 400);

    // Test chunked responses
    assert.equal((await db.save({ _id: '1', a: 1, b: 1 })).body.ok, true);
    const designDoc = { _id: '_design/test', language: 'javascript', views: { all_docs: { map: 'function(doc) {if(doc.a) emit(null, doc.a);}' } } };
    assert.equal((await db.save(designDoc)).body.ok, true);

    const url = '/test_suite_db/_design/test/_view/all_docs?callback=jsonp_chunk';
    r = await b.get(url);
    assert.equal(r.status, 200);
    jsonpFlag = 0;
    evaluate(r.text);
    assert.equal(jsonpFlag, 1);
    r = await b.get(`${url}'`);
    assert.equal(r.status, 400);
  });
});

/** A port free now, for a server whose configured port the test must know in advance. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

test('config: /_config lists the settings, single values, changes, and [httpd] config_whitelist', async () => {
  const port = await freePort();
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const db = new Db(b, 'test_suite_db');
    await db.deleteDb();
    assert.equal((await db.createDb()).status, 201);

    // test that /_config returns all the settings
    let config = (await b.get('/_config')).body;
    assert.equal(config.httpd.port, String(port), 'ports should match');

    assert.ok(config.couchdb.database_dir);
    assert.ok(config.daemons.httpd);
    assert.ok(config.httpd_global_handlers._config);
    assert.ok(config.log.level);
    assert.ok(config.query_servers.javascript);

    // test that settings can be altered, and that an undefined whitelist allows any change
    assert.equal(config.httpd.config_whitelist, undefined, 'Default whitelist is empty');
    const put = (path: string, value: unknown) => b.put(`/_config/${path}`, value, { 'X-Couch-Persist': 'false' });
    const del = (path: string) => b.del(`/_config/${path}`, { 'X-Couch-Persist': 'false' });
    const change = (method: string, path: string, value: unknown) =>
      b.request(method, `/_config/${path}`, { body: value, headers: { 'X-Couch-Persist': 'false' } });
    assert.equal((await put('test/foo', 'bar')).status, 200);
    config = (await b.get('/_config/test')).body;
    assert.equal(config.foo, 'bar');

    // you can get a single key
    assert.equal((await b.get('/_config/test/foo')).body, 'bar');

    // Non-term whitelist values allow further modification of the whitelist.
    assert.equal((await put('httpd/config_whitelist', '!This is an invalid Erlang term!')).status, 200, 'Set config whitelist to an invalid Erlang term');
    assert.equal((await del('httpd/config_whitelist')).status, 200, 'Modify whitelist despite it being invalid syntax');

    // Non-list whitelist values allow further modification of the whitelist.
    assert.equal((await put('httpd/config_whitelist', '{[yes, a_valid_erlang_term, but_unfortunately, not_a_list]}')).status, 200, 'Set config whitelist to an non-list term');
    assert.equal((await del('httpd/config_whitelist')).status, 200, 'Modify whitelist despite it not being a list');

    // Keys not in the whitelist may not be modified.
    assert.equal((await put('httpd/config_whitelist', '[{httpd,config_whitelist}, {test,foo}]')).status, 200, 'Set config whitelist to something valid');
    for (const method of ['PUT', 'DELETE']) {
      for (const pair of ['test/not_foo', 'not_test/foo', 'neither_test/nor_foo']) {
        const testName = `${method} to /_config/${pair} disallowed: not whitelisted`;
        assert.equal((await change(method, pair, `Bummer! ${testName}`)).status, 400, testName);
      }
    }

    // Keys in the whitelist may be modified.
    for (const method of ['PUT', 'DELETE']) {
      assert.equal((await change(method, 'test/foo', `${method} to whitelisted config variable`)).status, 200, 'Keys in the whitelist may be modified');
    }

    // Non-2-tuples in the whitelist are ignored
    assert.equal((await put('httpd/config_whitelist', '[{httpd,config_whitelist}, these, {are}, {nOt, 2, tuples}, [so], [they, will], [all, become, noops], {test,foo}]')).status, 200, 'Set config whitelist with some inert values');
    for (const method of ['PUT', 'DELETE']) {
      assert.equal((await change(method, 'test/foo', `${method} to whitelisted config variable`)).status, 200, 'Update whitelisted variable despite invalid entries');
    }

    // Atoms, binaries, and strings suffice as whitelist sections and keys.
    for (const pair of ['{test,foo}', '{"test","foo"}', '{<<"test">>,<<"foo">>}']) {
      assert.equal((await put('httpd/config_whitelist', `[{httpd,config_whitelist}, ${pair}]`)).status, 200, `Set config whitelist to include ${pair}`);
      const pairFormat = ({ t: 'tuple', '"': 'string', '<': 'binary' } as Record<string, string>)[pair[1]!];
      for (const method of ['PUT', 'DELETE']) {
        assert.equal((await change(method, 'test/foo', `${method} with ${pairFormat}`)).status, 200, `Whitelist works with ${pairFormat}`);
      }
    }

    assert.equal((await del('httpd/config_whitelist')).status, 200, 'Reset config whitelist to undefined');
  }, { port });
});

// --------------------------------------------------------------------- oauth_users_db

/** RFC 5849's percent-encoding (oauth.js's OAuth.percentEncode). */
const percentEncode = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * oauth_users_db.js's oauthRequest for a GET: oauth.js's OAuth.SignatureMethod.sign (no
 * timestamp or nonce is added: the script signs its parameters as they are), the parameters then
 * sent in the query string (OAuth.addToURL).
 */
async function oauthGet(b: Browser, url: string, parameters: Record<string, string>, accessor: { consumerSecret: string; tokenSecret: string }): Promise<Response> {
  delete parameters['oauth_signature'];
  const normalized = Object.entries(parameters).map(([k, v]) => [percentEncode(k), percentEncode(v)])
    .sort(([k1, v1], [k2, v2]) => (k1! < k2! ? -1 : k1! > k2! ? 1 : v1! < v2! ? -1 : v1! > v2! ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`).join('&');
  const key = `${percentEncode(accessor.consumerSecret)}&${percentEncode(accessor.tokenSecret)}`;
  parameters['oauth_signature'] = parameters['oauth_signature_method'] === 'PLAINTEXT'
    ? key
    : createHmac('sha1', key).update(['GET', percentEncode(url), percentEncode(normalized)].join('&')).digest('base64');
  const query = Object.entries(parameters).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
  return b.get(`${new URL(url).pathname}?${query}`);
}

test('oauth_users_db: OAuth credentials from a user document\'s oauth field (use_users_db), PLAINTEXT and HMAC-SHA1; bad tokens and secrets', async () => {
  await withServer(async (server) => {
    const b = new Browser(server.url);
    const usersDb = new Db(b, 'test_suite_users', { 'X-Couch-Full-Commit': 'false' });
    const host = new URL(server.url).host;
    // The script's generateSecret(64): 64 characters of the base64 alphabet.
    const secret = Array.from({ length: 64 }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charAt(Math.floor(Math.random() * 64))).join('');
    await usersDb.deleteDb();
    await b.setConfig('httpd', 'WWW-Authenticate', 'OAuth');
    await b.setConfig('couch_httpd_auth', 'secret', secret);
    await useAuthDb(b, 'test_suite_users');
    await b.setConfig('couch_httpd_oauth', 'use_users_db', 'true');
    await b.setConfig('httpd', 'authentication_handlers', '{couch_httpd_oauth, oauth_authentication_handler}, {couch_httpd_auth, default_authentication_handler}');

    const fdmanana = await prepareUserDoc(b, {
      name: 'fdmanana',
      roles: ['dev'],
      oauth: { consumer_keys: { key_foo: 'bar', key_xpto: 'mars' }, tokens: { salut: 'ola', tok1: '123' } },
    }, 'qwerty');
    assert.equal((await usersDb.save(fdmanana)).body.ok, true);

    for (const signatureMethod of ['PLAINTEXT', 'HMAC-SHA1']) {
      const parameters: Record<string, string> = {
        oauth_signature_method: signatureMethod,
        oauth_consumer_key: 'key_foo',
        oauth_token: 'tok1',
        oauth_version: '1.0',
      };
      const accessor = { consumerSecret: 'bar', tokenSecret: '123' };

      let r = await oauthGet(b, `http://${host}/_oauth/request_token`, parameters, accessor);
      assert.equal(r.status, 200, `${signatureMethod} request_token: ${r.text}`);

      r = await oauthGet(b, `http://${host}/_session`, parameters, accessor);
      assert.equal(r.status, 200, r.text);
      let data = r.body as Doc;
      assert.equal(data['ok'], true);
      assert.equal(typeof data['userCtx'], 'object');
      assert.equal(data['userCtx'].name, 'fdmanana');
      assert.equal(data['userCtx'].roles[0], 'dev');
      assert.equal(data['info'].authenticated, 'oauth');

      // test invalid token
      parameters['oauth_token'] = 'not a token!';
      r = await oauthGet(b, `http://${host}/_session`, parameters, accessor);
      assert.equal(r.status, 400, `Request should be invalid: ${r.text}`);

      // test invalid secret
      parameters['oauth_token'] = 'tok1';
      accessor.tokenSecret = 'badone';
      r = await oauthGet(b, `http://${host}/_session`, parameters, accessor);
      data = r.body as Doc;
      assert.equal(data['userCtx'].name, null, r.text);
      assert.equal(data['userCtx'].roles.length, 1);
      assert.equal(data['userCtx'].roles[0], '_admin');
      assert.equal(data['info'].authentication_handlers.indexOf('default') >= 0, true);
      assert.equal(data['info'].authenticated, 'default');
    }
  });
});
