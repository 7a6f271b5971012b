/**
 * CouchDB 1.6's replication test scripts (share/www/script/test/replication.js and the
 * replicator_db_*.js scripts with their share/www/script/replicator_db_inc.js helpers), ported
 * to real HTTP: the same documents, options and assertions, one test per script part.
 *
 * Sources: replication.js as stored at apache/couchdb d914d1cc78fa91d19a09c3e5a793216e1378a15b
 * (the 1.x line's last share/www version: new replicator, since_seq, COUCHDB-1242, cancel by
 * replication_id); replicator_db_inc.js, replicator_db_continuous.js and
 * replicator_db_identical.js at ae048910ebea89942116fe7734d36baaa7d6cfcf;
 * replicator_db_survives.js at abcaec9a083961cca3df4943366dd39027afada8;
 * replicator_db_security.js at 554959cad656b8a909f3e499565b2a3dc926f2b0; replicator_db_bad_rep_id,
 * _by_doc_id, _credential_delegation, _identical_continuous, _invalid_filter, _successive,
 * _swap_rep_db and _update_security at ae048910ebea89942116fe7734d36baaa7d6cfcf. replicator_db_simple,
 * _filtered, _compact_rep_db and _user_ctx are not stored under share/www: their 1.x texts
 * (`_replication_state` fields, the replicator_db_inc.js namespace) were found by content;
 * replicator_db_write_auth is test/javascript/tests at 6a4893aabdb26eb957a4e57be91ff8d0152161f8
 * (the 1.6 text moved unchanged, its function still misnamed replicator_db_survives).
 *
 * A few script parts run twice: once without some of their assertions and once with them
 * (those assertions once failed here). One check is not ported (a note says where).
 *
 * The suite's helpers (couch.js's CouchDB object and CouchDB.login/logout/replicate,
 * couch_test_runner.js's makeDocs and run_on_modified_server, replicator_db_inc.js's waits) are
 * reproduced as small functions sending the same requests. A `Couch` is one browser: after
 * login() its requests carry the AuthSession cookie, as the suite's XHRs do. The scripts' busy
 * waits (waitForRep, waitForSeq, waitForDocPos) poll with a bounded loop and, like the
 * originals, assert nothing themselves: the assertions after them decide. "Remote" endpoints
 * are URLs of the same server, as in the scripts (`CouchDB.protocol + host`).
 *
 * Data: the scripts' att1_data and att2_data are /_utils/script/test/lorem.txt and
 * lorem_b64.txt; here a text of the same kind and its base64 form stand in for them.
 *
 * Scripts that define a server admin (write_auth, security) or restart the server (survives)
 * run on servers of their own; the others share this file's server, each with its own
 * database names (`c16r_<part>_...`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { serverForFile, startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { req, type RequestOptions, type Response } from '../helpers/http.js';
import { encodeOptions } from '../helpers/couch-js.js';

const { server } = await serverForFile();

type Doc = Record<string, any>;
type Options = Record<string, unknown>;
interface Setting { section: string; key: string; value: string }

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the scripts' waits may poll (they assert nothing; what follows them does). */
const WAIT_MS = 20000;

const qs = encodeOptions;

const dbPath = (db: string): string => `/${encodeURIComponent(db)}/`;

/**
 * couch.js against one server, as one browser: the AuthSession cookie the server last set is
 * sent with every request. Document methods answer as couch.js does (open: null on 404);
 * failures the scripts catch are answered as the Response, for the test to inspect.
 */
class Couch {
  private cookie: string | undefined;
  constructor(private readonly base: () => string) {}

  get url(): string { return this.base(); }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    // couch.js sends every request as application/json unless told otherwise.
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...options.headers };
    if (this.cookie !== undefined) headers['Cookie'] = this.cookie;
    const r = await req(this.base(), method, path, { ...options, headers });
    const set = r.headers['set-cookie'];
    for (const value of Array.isArray(set) ? set : set === undefined ? [] : [set]) {
      const m = /^AuthSession=([^;]*)/.exec(value);
      if (!m) continue;
      this.cookie = m[1] && !/max-age=0\b/i.test(value) ? `AuthSession=${m[1]}` : undefined;
    }
    return r;
  }

  // ----- CouchDB (a database object)

  async deleteDb(db: string): Promise<void> {
    const r = await this.request('DELETE', dbPath(db));
    assert.ok(r.status === 200 || r.status === 404, `deleteDb ${db}: ${r.status} ${r.text}`);
  }

  async createDb(db: string): Promise<void> {
    const r = await this.request('PUT', dbPath(db));
    assert.equal(r.status, 201, `createDb ${db}: ${r.text}`);
  }

  /** save: PUT by id (a new UUID when none); `_rev` taken from the answer. */
  async save(db: string, doc: Doc): Promise<Response> {
    if (doc._id === undefined) doc._id = randomUUID().replace(/-/g, '');
    const r = await this.request('PUT', `${dbPath(db)}${encodeURIComponent(doc._id)}`, { body: doc });
    if (r.status < 300 && r.body?.rev) doc._rev = r.body.rev;
    return r;
  }

  /** save that must succeed: its `ok`. */
  async saveOk(db: string, doc: Doc): Promise<boolean> {
    const r = await this.save(db, doc);
    assert.ok(r.status === 201 || r.status === 202, `save ${db}/${doc._id}: ${r.status} ${r.text}`);
    return r.body.ok;
  }

  /**
   * open: the document, null when 404 (anything else fails the test). The id is encoded whole,
   * so a design document's is redirected, which the browser follows.
   */
  async open(db: string, id: string, options?: Options): Promise<Doc | null> {
    const r = await this.request('GET', `${dbPath(db)}${encodeURIComponent(id)}${qs(options)}`, { followRedirects: true });
    if (r.status === 404) return null;
    assert.equal(r.status, 200, `open ${db}/${id}: ${r.text}`);
    return r.body;
  }

  /** deleteDoc: DELETE ?rev=; the document then carries the deletion. */
  async deleteDoc(db: string, doc: Doc): Promise<Response> {
    const r = await this.request('DELETE', `${dbPath(db)}${encodeURIComponent(doc._id)}?rev=${doc._rev}`);
    if (r.status < 300) {
      doc._rev = r.body.rev;
      doc._deleted = true;
    }
    return r;
  }

  async bulkSave(db: string, docs: Doc[]): Promise<void> {
    const r = await this.request('POST', `${dbPath(db)}_bulk_docs`, { body: { docs } });
    assert.equal(r.status, 201, r.text);
    r.body.forEach((row: Doc, i: number) => { if (row.rev && !row.error) docs[i]!._rev = row.rev; });
  }

  async info(db: string): Promise<Doc> {
    const r = await this.request('GET', dbPath(db));
    assert.equal(r.status, 200, `info ${db}: ${r.text}`);
    return r.body;
  }

  async changes(db: string, options?: Options): Promise<Doc> {
    const r = await this.request('GET', `${dbPath(db)}_changes${qs(options)}`);
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  async setSecObj(db: string, secObj: Doc): Promise<boolean> {
    const r = await this.request('PUT', `${dbPath(db)}_security`, { body: secObj });
    assert.equal(r.status, 200, r.text);
    return r.body.ok;
  }

  async compact(db: string): Promise<Response> {
    return this.request('POST', `${dbPath(db)}_compact`);
  }

  async ensureFullCommit(db: string): Promise<void> {
    const r = await this.request('POST', `${dbPath(db)}_ensure_full_commit`);
    assert.equal(r.status, 201, r.text);
  }

  /** The scripts' `while (db.info().compact_running) {}`, bounded. */
  async waitCompaction(db: string): Promise<void> {
    const until = Date.now() + WAIT_MS;
    while ((await this.info(db)).compact_running && Date.now() < until) await sleep(20);
  }

  // ----- CouchDB (the server object)

  /** CouchDB.replicate: POST /_replicate with the body's options plus source and target. */
  async replicate(source: unknown, target: unknown, body: Options = {}): Promise<Response> {
    return this.request('POST', '/_replicate', { body: { ...body, source, target } });
  }

  /** CouchDB.replicate where the script lets any error throw: its result. */
  async replicateOk(source: unknown, target: unknown, body: Options = {}): Promise<Doc> {
    const r = await this.replicate(source, target, body);
    assert.ok(r.status === 200 || r.status === 202, `replicate ${JSON.stringify(source)} -> ${JSON.stringify(target)}: ${r.status} ${r.text}`);
    return r.body;
  }

  /** CouchDB.login: a form POST to /_session. */
  async login(name: string, password: string): Promise<Doc> {
    const r = await this.request('POST', '/_session', {
      raw: `name=${encodeURIComponent(name)}&password=${encodeURIComponent(password)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CouchDB-WWW-Authenticate': 'Cookie' },
    });
    return r.body;
  }

  async logout(): Promise<Doc> {
    const r = await this.request('DELETE', '/_session', {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-CouchDB-WWW-Authenticate': 'Cookie' },
    });
    return r.body;
  }

  async session(): Promise<Doc> {
    return (await this.request('GET', '/_session')).body;
  }

  async activeTasks(): Promise<Doc[]> {
    const r = await this.request('GET', '/_active_tasks');
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  /** A URL of a database on this server (`CouchDB.protocol + host + "/" + name`), credentials optional. */
  dbUrl(db: string, credentials?: string): string {
    const u = new URL(this.base());
    return `${u.protocol}//${credentials ? `${credentials}@` : ''}${u.host}/${db}`;
  }

  /**
   * run_on_modified_server: sets each value without persisting it, runs `fn`, puts the old
   * values back. A value that creates a server admin is removed with `cleanupAuth`.
   */
  async runOnModifiedServer(settings: Setting[], fn: () => Promise<void>, cleanupAuth?: Record<string, string>): Promise<void> {
    const old: (string | null)[] = [];
    const persist = { 'X-Couch-Persist': 'false' };
    try {
      for (const s of settings) {
        const r = await this.request('PUT', `/_config/${s.section}/${s.key}`, { body: s.value, headers: persist });
        assert.equal(r.status, 200, r.text);
        old.push(r.body === '' ? null : r.body);
      }
      await fn();
    } finally {
      const headers = { ...persist, ...cleanupAuth };
      for (let i = old.length - 1; i >= 0; i--) {
        const s = settings[i]!;
        const was = old[i];
        if (was === null || was === undefined) await this.request('DELETE', `/_config/${s.section}/${s.key}`, { headers });
        else await this.request('PUT', `/_config/${s.section}/${s.key}`, { body: was, headers });
      }
    }
  }
}

const couch = new Couch(() => server.url);

/** couch_test_runner.js makeDocs. */
function makeDocs(start: number, end: number): Doc[] {
  const docs: Doc[] = [];
  for (let i = start; i < end; i++) docs.push({ _id: String(i), integer: i, string: String(i) });
  return docs;
}

/** couch.js prepareUserDoc (1.6): a client-side salt and password_sha. */
function prepareUserDoc(userDoc: Doc, password: string): Doc {
  userDoc._id = userDoc._id ?? `org.couchdb.user:${userDoc.name}`;
  userDoc.salt = randomUUID().replace(/-/g, '');
  userDoc.password_sha = createHash('sha1').update(password + userDoc.salt).digest('hex');
  userDoc.type = 'user';
  userDoc.roles ??= [];
  return userDoc;
}

// Stand-ins for lorem.txt (text) and lorem_b64.txt (its base64 form).
const LOREM = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. Phasellus nunc sapien, porta id '
  + 'pellentesque at, elementum et felis. Curabitur condimentum ante in metus iaculis quis congue '
  + 'diam commodo. Donec eleifend ante sed nulla dapibus convallis. Ut cursus aliquam neque, vel '
  + 'porttitor tellus interdum ut. Sed pharetra lacinia adipiscing. In tristique tristique felis non '
  + 'tincidunt. Nulla auctor mauris a velit cursus ultricies. In at libero quis justo consectetur '
  + 'laoreet. Nullam id ultrices nunc. Donec non turpis nulla, eu lacinia ante.\n';
const att1_data = LOREM.repeat(6);
const att2_data = Buffer.from(att1_data).toString('base64');

/** replication.js compareObjects: every property of o1 (deeply) equals o2's. */
function compareObjects(o1: any, o2: any): boolean {
  for (const p of Object.keys(o1)) {
    if (o1[p] === null && o2[p] !== null) return false;
    if (typeof o1[p] === 'object' && o1[p] !== null) {
      if (typeof o2[p] !== 'object' || o2[p] === null) return false;
      if (!compareObjects(o1[p], o2[p])) return false;
    } else if (o1[p] !== o2[p]) return false;
  }
  return true;
}

/** replication.js populateDb: recreate (unless told not to), then bulkSave without `_rev`s. */
async function populateDb(db: string, docs: Doc[], dontRecreateDb = false, on = couch): Promise<void> {
  if (!dontRecreateDb) {
    await on.deleteDb(db);
    await on.createDb(db);
  }
  for (const doc of docs) delete doc._rev;
  if (docs.length > 0) await on.bulkSave(db, docs);
}

/** replicator_db_inc.js populate_db: recreate (not the users database), then save one by one. */
async function populate_db(db: string, docs: Doc[], usersDb: string | undefined, on = couch): Promise<void> {
  if (db !== usersDb) {
    await on.deleteDb(db);
    await on.createDb(db);
  }
  for (const doc of docs) {
    delete doc._rev;
    assert.equal(await on.saveOk(db, doc), true);
  }
}

/** replication.js addAtt: a standalone attachment PUT; the doc's `_rev` follows. */
async function addAtt(db: string, doc: Doc, attName: string, attData: string, type: string, on = couch): Promise<void> {
  let uri = `${dbPath(db)}${encodeURIComponent(doc._id)}/${attName}`;
  if (doc._rev) uri += `?rev=${doc._rev}`;
  const r = await on.request('PUT', uri, { raw: attData, headers: { 'Content-Type': type } });
  assert.equal(r.status, 201, r.text);
  doc._rev = r.body.rev;
}

async function attText(db: string, id: string, name: string, on = couch): Promise<string> {
  return (await on.request('GET', `${dbPath(db)}${id}/${name}`)).text;
}

/**
 * waitForSeq: until the target has caught up with the source. The scripts compare update
 * sequences (a target written with new_edits=false may need fewer, so that alone can wait
 * forever); here also until both list the same documents at the same revisions.
 */
async function waitForSeq(sourceDb: string, targetDb: string, on = couch): Promise<void> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const sourceSeq = (await on.info(sourceDb)).update_seq;
    const targetSeq = (await on.info(targetDb)).update_seq;
    if (targetSeq >= sourceSeq) return;
    if ((await liveRevs(sourceDb, on)) === (await liveRevs(targetDb, on))) return;
    if (Date.now() > until) return;
    await sleep(50);
  }
}

/** Every live document id with its revision, as text (a failed read never equals another). */
async function liveRevs(db: string, on = couch): Promise<string> {
  const r = await on.request('GET', `${dbPath(db)}_all_docs`);
  if (r.status !== 200) return `${db}: ${r.status} ${Math.random()}`;
  return JSON.stringify(r.body.rows.map((row: Doc) => [row.id, row.value.rev]));
}

/**
 * Until the target lists the same live documents at the same revisions as the source. Stricter
 * than waitForSeq, whose sequence comparison can be met early by a target that took more writes.
 */
async function waitForSameDocs(sourceDb: string, targetDb: string): Promise<void> {
  await waitFor(`${targetDb} to match ${sourceDb}`, async () => (await liveRevs(sourceDb)) === (await liveRevs(targetDb)), WAIT_MS);
}

/** replicator_db_inc.js waitForRep: until the document's `_replication_state` is `state`. */
async function waitForRep(repDb: string, repDoc: Doc, state: string, on = couch): Promise<void> {
  const until = Date.now() + WAIT_MS;
  while (Date.now() < until) {
    const doc = await on.open(repDb, repDoc._id);
    if (doc?._replication_state === state) return;
    await sleep(50);
  }
}

/** replicator_db_inc.js waitForDocPos: until the document's revision is at `pos` or later. */
async function waitForDocPos(db: string, docId: string, pos: number, on = couch): Promise<Doc | null> {
  // Its callers go on whatever the position (the script's bound is 3 s); a short bound here.
  const until = Date.now() + 5000;
  let doc = await on.open(db, docId);
  while (doc && Number(doc._rev.split('-', 1)[0]) < pos && Date.now() < until) {
    await sleep(50);
    doc = await on.open(db, docId);
  }
  return doc;
}

/** Until no active replication task matches (the scripts' `wait(ms)` before an absence check). */
async function waitNoReplicationTask(match: (task: Doc) => boolean, on = couch): Promise<void> {
  const until = Date.now() + WAIT_MS;
  while (Date.now() < until) {
    const tasks = await on.activeTasks();
    if (!tasks.some((t) => t.type === 'replication' && match(t))) return;
    await sleep(50);
  }
}

/** The four endpoint pairs of replication.js: names and URLs of the same server. */
function dbPairs(source: string, target: string, on = couch): { source: string; target: string }[] {
  return [
    { source, target },
    { source: on.dbUrl(source), target },
    { source, target: on.dbUrl(target) },
    { source: on.dbUrl(source), target: on.dbUrl(target) },
  ];
}

/** Sets `[replicator] db` (not persisted) and waits for the replicator to create it. */
async function useRepDb(name: string, on = couch, headers: Record<string, string> = {}): Promise<void> {
  const r = await on.request('PUT', '/_config/replicator/db', { body: name, headers: { 'X-Couch-Persist': 'false', ...headers } });
  assert.equal(r.status, 200, r.text);
  const until = Date.now() + WAIT_MS;
  while ((await on.request('GET', dbPath(name), { headers })).status !== 200 && Date.now() < until) await sleep(20);
}

/** A users database for `authentication_db`, created if the server has not made it. */
async function ensureDb(name: string, on = couch): Promise<void> {
  const r = await on.request('PUT', dbPath(name));
  assert.ok(r.status === 201 || r.status === 412, r.text);
}

/** The counts of a history entry, in the scripts' order. */
const counts = (h: Doc): number[] => [h.missing_checked, h.missing_found, h.docs_read, h.docs_written, h.doc_write_failures];

/** A history entry of a session that read the source from `seq - since` up to `seq`. */
function checkSession(h: Doc, seq: number, since: number, expected: number[]): void {
  assert.equal(h.start_last_seq, seq - since);
  assert.equal(h.end_last_seq, seq);
  assert.equal(h.recorded_seq, seq);
  assert.deepEqual(counts(h), expected);
}

/** The scripts' checks of one replicated attachment: its stub and its content on the target. */
async function checkAtt(db: string, copy: Doc, name: string, revpos: number, type: string, data: string): Promise<void> {
  const att = copy._attachments?.[name];
  assert.equal(typeof att, 'object', `${copy._id}/${name}`);
  assert.equal(att.revpos, revpos);
  assert.equal(att.content_type.indexOf(type), 0);
  assert.equal(att.stub, true);
  const content = await attText(db, copy._id, name);
  assert.equal(content.length, data.length);
  assert.equal(content, data);
}

// ====================================================================== replication.js

test('replication: simple replications by name and URL (attachments, deletions, conflicts, revisions the target has, no_changes)', async () => {
  const sourceDb = 'c16r_simple_a';
  const targetDb = 'c16r_simple_b';
  const docs = makeDocs(1, 21);
  docs.push({ _id: '_design/foo', language: 'javascript', value: 'ddoc' });

  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    for (let j = 10; j < 15; j++) await addAtt(sourceDb, docs[j]!, 'readme.txt', att1_data, 'text/plain');

    let repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    let sourceInfo = await couch.info(sourceDb);
    let targetInfo = await couch.info(targetDb);
    assert.equal(sourceInfo.doc_count, targetInfo.doc_count);
    assert.equal(typeof repResult.session_id, 'string');
    assert.equal(repResult.source_last_seq, sourceInfo.update_seq);
    assert.ok(Array.isArray(repResult.history));
    assert.equal(repResult.history.length, 1);
    let h = repResult.history[0];
    assert.equal(h.session_id, repResult.session_id);
    assert.equal(typeof h.start_time, 'string');
    assert.equal(typeof h.end_time, 'string');
    assert.equal(h.start_last_seq, 0);
    assert.equal(h.end_last_seq, sourceInfo.update_seq);
    assert.equal(h.recorded_seq, sourceInfo.update_seq);
    assert.equal(h.missing_checked, sourceInfo.doc_count);
    assert.equal(h.missing_found, sourceInfo.doc_count);
    assert.equal(h.docs_read, sourceInfo.doc_count);
    assert.equal(h.docs_written, sourceInfo.doc_count);
    assert.equal(h.doc_write_failures, 0);

    for (let j = 0; j < docs.length; j++) {
      const doc = docs[j]!;
      const copy = await couch.open(targetDb, doc._id);
      assert.ok(copy !== null, doc._id);
      assert.equal(compareObjects(doc, copy), true, doc._id);
      if (j >= 10 && j < 15) {
        await checkAtt(targetDb, copy, 'readme.txt', 2, 'text/plain', att1_data);
      }
    }

    // add one more doc to source, more attachments to some existing docs and replicate again
    const newDoc: Doc = { _id: 'foo666', value: 'd' };
    assert.equal(await couch.saveOk(sourceDb, newDoc), true);
    for (let j = 10; j < 15; j++) await addAtt(sourceDb, docs[j]!, 'data.dat', att2_data, 'application/binary');

    repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    sourceInfo = await couch.info(sourceDb);
    targetInfo = await couch.info(targetDb);
    assert.equal(sourceInfo.doc_count, targetInfo.doc_count);
    assert.equal(typeof repResult.session_id, 'string');
    assert.equal(repResult.source_last_seq, sourceInfo.update_seq);
    assert.equal(repResult.history.length, 2);
    h = repResult.history[0];
    assert.equal(h.session_id, repResult.session_id);
    assert.equal(typeof h.start_time, 'string');
    assert.equal(typeof h.end_time, 'string');
    assert.equal(h.start_last_seq, sourceInfo.update_seq - 6);
    assert.equal(h.end_last_seq, sourceInfo.update_seq);
    assert.equal(h.recorded_seq, sourceInfo.update_seq);
    assert.equal(h.missing_checked, 6);
    assert.equal(h.missing_found, 6);
    assert.equal(h.docs_read, 6);
    assert.equal(h.docs_written, 6);
    assert.equal(h.doc_write_failures, 0);

    let copy = await couch.open(targetDb, newDoc._id);
    assert.ok(copy !== null);
    assert.equal(copy._id, newDoc._id);
    assert.equal(copy.value, newDoc.value);

    for (let j = 10; j < 15; j++) {
      const doc = docs[j]!;
      copy = await couch.open(targetDb, doc._id);
      assert.ok(copy !== null);
      assert.equal(compareObjects(doc, copy), true);
      await checkAtt(targetDb, copy, 'readme.txt', 2, 'text/plain', att1_data);
      await checkAtt(targetDb, copy, 'data.dat', 3, 'application/binary', att2_data);
    }

    // test deletion is replicated
    let doc = (await couch.open(sourceDb, docs[1]!._id))!;
    assert.equal((await couch.deleteDoc(sourceDb, doc)).body.ok, true);
    repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    sourceInfo = await couch.info(sourceDb);
    targetInfo = await couch.info(targetDb);
    assert.equal(targetInfo.doc_count, sourceInfo.doc_count);
    assert.equal(targetInfo.doc_del_count, sourceInfo.doc_del_count);
    assert.equal(targetInfo.doc_del_count, 1);
    assert.equal(repResult.history.length, 3);
    checkSession(repResult.history[0], sourceInfo.update_seq, 1, [1, 1, 1, 1, 0]);
    assert.equal(await couch.open(targetDb, docs[1]!._id), null);
    const changes = await couch.changes(targetDb, { since: 0 });
    const last = changes.results[changes.results.length - 1];
    assert.equal(last.id, docs[1]!._id);
    assert.equal(last.deleted, true);

    // test conflict
    doc = (await couch.open(sourceDb, docs[0]!._id))!;
    doc.value = 'white';
    assert.equal(await couch.saveOk(sourceDb, doc), true);
    copy = (await couch.open(targetDb, docs[0]!._id))!;
    copy.value = 'black';
    assert.equal(await couch.saveOk(targetDb, copy), true);

    const expectOneChange = async (historyLength: number): Promise<void> => {
      repResult = await couch.replicateOk(pair.source, pair.target);
      assert.equal(repResult.ok, true);
      sourceInfo = await couch.info(sourceDb);
      targetInfo = await couch.info(targetDb);
      assert.equal(sourceInfo.doc_count, targetInfo.doc_count);
      assert.equal(repResult.history.length, historyLength);
      checkSession(repResult.history[0], sourceInfo.update_seq, 1, [1, 1, 1, 1, 0]);
    };
    await expectOneChange(4);
    copy = (await couch.open(targetDb, docs[0]!._id, { conflicts: true }))!;
    assert.equal(copy._rev.indexOf('2-'), 0);
    assert.ok(Array.isArray(copy._conflicts));
    assert.equal(copy._conflicts.length, 1);
    assert.equal(copy._conflicts[0].indexOf('2-'), 0);

    // replicate again with conflict
    doc.value = 'yellow';
    assert.equal(await couch.saveOk(sourceDb, doc), true);
    await expectOneChange(5);
    copy = (await couch.open(targetDb, docs[0]!._id, { conflicts: true }))!;
    assert.equal(copy._rev.indexOf('3-'), 0);
    assert.equal(copy._conflicts.length, 1);
    assert.equal(copy._conflicts[0].indexOf('2-'), 0);

    // resolve the conflict
    assert.equal((await couch.deleteDoc(targetDb, { _id: copy._id, _rev: copy._conflicts[0] })).body.ok, true);

    // replicate again, check there are no more conflicts
    doc.value = 'rainbow';
    assert.equal(await couch.saveOk(sourceDb, doc), true);
    await expectOneChange(6);
    copy = (await couch.open(targetDb, docs[0]!._id, { conflicts: true }))!;
    assert.equal(copy._rev.indexOf('4-'), 0);
    assert.equal(typeof copy._conflicts, 'undefined');

    // test that revisions already in a target are not copied
    assert.equal(await couch.saveOk(sourceDb, { _id: 'foo1', value: 111 }), true);
    assert.equal(await couch.saveOk(targetDb, { _id: 'foo1', value: 111 }), true);
    assert.equal(await couch.saveOk(sourceDb, { _id: 'foo2', value: 222 }), true);
    assert.equal(await couch.saveOk(sourceDb, { _id: 'foo3', value: 333 }), true);
    assert.equal(await couch.saveOk(targetDb, { _id: 'foo3', value: 333 }), true);
    repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    sourceInfo = await couch.info(sourceDb);
    assert.equal(repResult.source_last_seq, sourceInfo.update_seq);
    checkSession(repResult.history[0], sourceInfo.update_seq, 3, [3, 1, 1, 1, 0]);

    assert.equal(await couch.saveOk(sourceDb, { _id: 'foo4', value: 444 }), true);
    assert.equal(await couch.saveOk(targetDb, { _id: 'foo4', value: 444 }), true);
    assert.equal(await couch.saveOk(sourceDb, { _id: 'foo5', value: 555 }), true);
    assert.equal(await couch.saveOk(targetDb, { _id: 'foo5', value: 555 }), true);
    repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    sourceInfo = await couch.info(sourceDb);
    assert.equal(repResult.source_last_seq, sourceInfo.update_seq);
    checkSession(repResult.history[0], sourceInfo.update_seq, 2, [2, 0, 0, 0, 0]);

    repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    assert.equal(repResult.no_changes, true);
    sourceInfo = await couch.info(sourceDb);
    assert.equal(repResult.source_last_seq, sourceInfo.update_seq);
  }
});

test('replication: a source database that does not exist is db_not_found, by name and by URL', async () => {
  await couch.deleteDb('c16r_missing_src');
  await populateDb('c16r_missing_tgt', []);
  for (const source of ['c16r_missing_src', couch.dbUrl('c16r_missing_src')]) {
    const r = await couch.replicate(source, 'c16r_missing_tgt');
    assert.ok(r.status >= 400, `should have failed with db_not_found error: ${r.status} ${r.text}`);
    assert.equal(r.body.error, 'db_not_found');
  }
});

test('replication: since_seq starts the replication after that sequence', async () => {
  const sourceDb = 'c16r_since_a';
  const targetDb = 'c16r_since_b';
  const docs = makeDocs(1, 6);
  for (const pair of dbPairs(sourceDb, targetDb)) {
    const since_seq = 3;
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    const expected_ids: string[] = (await couch.changes(sourceDb, { since: since_seq })).results.map((r: Doc) => r.id);
    assert.equal(expected_ids.length, 2, '2 documents since since_seq');

    // The script cancels before and after (OTP < R14B03 kept child specs); nothing runs here.
    const before = await couch.replicate(pair.source, pair.target, { cancel: true });
    assert.equal(before.body.error, 'not found');
    const repResult = await couch.replicateOk(pair.source, pair.target, { since_seq });
    const after = await couch.replicate(pair.source, pair.target, { cancel: true });
    assert.equal(after.body.error, 'not found');
    assert.equal(repResult.ok, true);
    const h = repResult.history[0];
    assert.deepEqual(counts(h), [2, 2, 2, 2, 0]);
    for (const doc of docs) {
      const copy = await couch.open(targetDb, doc._id);
      if (!expected_ids.includes(doc._id)) assert.equal(copy, null, doc._id);
      else {
        assert.ok(copy !== null);
        assert.equal(compareObjects(doc, copy), true);
      }
    }
  }
});

test('replication: validate_doc_update on the target rejects documents, counted as doc_write_failures', async () => {
  const sourceDb = 'c16r_vdu_a';
  const targetDb = 'c16r_vdu_b';
  const docs = makeDocs(1, 8);
  docs[2]!['_attachments'] = { 'hello.txt': { content_type: 'text/plain', data: 'aGVsbG8gd29ybGQ=' } };
  const ddoc: Doc = {
    _id: '_design/test',
    language: 'javascript',
    validate_doc_update: String(function (newDoc: any) {
      if ((newDoc.integer % 2) !== 0) throw { forbidden: 'I only like multiples of 2.' };
    }),
  };
  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, [ddoc]);
    const repResult = await couch.replicateOk(pair.source, pair.target);
    assert.equal(repResult.ok, true);
    const h = repResult.history[0];
    assert.deepEqual(counts(h), [7, 7, 7, 3, 4]);
    for (const doc of docs) {
      const copy = await couch.open(targetDb, doc._id);
      if (doc.integer % 2 === 0) {
        assert.ok(copy !== null);
        assert.equal(copy.integer, doc.integer);
      } else assert.equal(copy, null);
    }
  }
});

test('replication: create_target creates the target database', async () => {
  const sourceDb = 'c16r_create_a';
  const targetDb = 'c16r_create_b';
  const docs = makeDocs(1, 2);
  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(sourceDb, docs);
    await couch.deleteDb(targetDb);
    const repResult = await couch.replicateOk(pair.source, pair.target, { create_target: true });
    assert.equal(repResult.ok, true);
    const sourceInfo = await couch.info(sourceDb);
    const targetInfo = await couch.info(targetDb);
    assert.equal(targetInfo.doc_count, sourceInfo.doc_count);
    assert.equal(targetInfo.update_seq, sourceInfo.update_seq);
  }
});

/**
 * replication.js's filtered replication. `checkSeqs`: also the sequences CouchDB 1.6 records
 * (the last replicated change, not the source's last sequence).
 */
async function filteredReplication(checkSeqs: boolean, suffix: string): Promise<void> {
  const sourceDb = `c16r_filtered${suffix}_a`;
  const targetDb = `c16r_filtered${suffix}_b`;
  const docs = makeDocs(1, 31);
  docs.push({
    _id: '_design/mydesign',
    language: 'javascript',
    filters: {
      myfilter: String(function (doc: any, req: any) {
        const modulus = Number(req.query.modulus);
        const special = req.query.special;
        return (doc.integer % modulus === 0) || (doc.string === special);
      }),
    },
  });
  const body = { filter: 'mydesign/myfilter', query_params: { modulus: '2', special: '7' } };
  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    let repResult = await couch.replicateOk(pair.source, pair.target, body);
    assert.equal(repResult.ok, true);
    for (const doc of docs) {
      const copy = await couch.open(targetDb, doc._id);
      if ((doc.integer && doc.integer % 2 === 0) || doc.string === '7') {
        assert.ok(copy !== null, doc._id);
        assert.equal(compareObjects(doc, copy), true);
      } else assert.equal(copy, null, doc._id);
    }
    assert.equal(repResult.history.length, 1);
    let h = repResult.history[0];
    assert.equal(h.start_last_seq, 0);
    if (checkSeqs) {
      // NOT 31 (31 is db seq for last doc - the ddoc, which was not replicated)
      assert.equal(repResult.source_last_seq, 30);
      assert.equal(h.end_last_seq, 30);
      assert.equal(h.recorded_seq, 30);
    }
    // 16 => 15 docs with even integer field  + 1 doc with string field "7"
    assert.deepEqual(counts(h), [16, 16, 16, 16, 0]);

    // add new docs to source and resume the same replication
    const newDocs = makeDocs(50, 56);
    await populateDb(sourceDb, newDocs, true);
    repResult = await couch.replicateOk(pair.source, pair.target, body);
    assert.equal(repResult.ok, true);
    for (const doc of newDocs) {
      const copy = await couch.open(targetDb, doc._id);
      if (doc.integer && doc.integer % 2 === 0) {
        assert.ok(copy !== null);
        assert.equal(compareObjects(doc, copy), true);
      } else assert.equal(copy, null);
    }
    assert.equal(repResult.history.length, 2);
    h = repResult.history[0];
    if (checkSeqs) {
      // last doc has even integer field, so last replicated seq is 36
      // (the script's comment; its last document, 55, is odd: 36 is the last even one's)
      assert.equal(repResult.source_last_seq, 36);
      assert.equal(h.start_last_seq, 30);
      assert.equal(h.end_last_seq, 36);
      assert.equal(h.recorded_seq, 36);
    }
    assert.deepEqual(counts(h), [3, 3, 3, 3, 0]);
  }
}

test('replication: filtered replication with query_params, resumed after more documents', async () => {
  await filteredReplication(false, '');
});

test('replication: a filtered replication records the last replicated sequence (30), not the source\'s last (31)', async () => {
  await filteredReplication(true, '_dev');
});

test('replication: a changed filter function starts the replication from scratch (COUCHDB-892)', async () => {
  const sourceDb = 'c16r_filter892_a';
  const targetDb = 'c16r_filter892_b';
  const filterFun1 = String(function (doc: any, req: any) {
    if (doc.value < Number(req.query.maxvalue)) return true;
    return false;
  });
  const filterFun2 = String(function () { return true; });
  const body = { filter: 'mydesign/myfilter', query_params: { maxvalue: '3' } };
  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(targetDb, []);
    await populateDb(sourceDb, []);
    for (let v = 1; v <= 4; v++) assert.equal(await couch.saveOk(sourceDb, { _id: `foo${v}`, value: v }), true);
    const ddoc: Doc = { _id: '_design/mydesign', language: 'javascript', filters: { myfilter: filterFun1 } };
    assert.equal(await couch.saveOk(sourceDb, ddoc), true);

    let repResult = await couch.replicateOk(pair.source, pair.target, body);
    assert.equal(repResult.ok, true);
    assert.equal(repResult.history.length, 1);
    assert.equal(repResult.history[0].docs_written, 2);
    assert.equal(repResult.history[0].docs_read, 2);
    assert.equal(repResult.history[0].doc_write_failures, 0);
    assert.equal((await couch.open(targetDb, 'foo1'))?.value, 1);
    assert.equal((await couch.open(targetDb, 'foo2'))?.value, 2);
    assert.equal(await couch.open(targetDb, 'foo3'), null);
    assert.equal(await couch.open(targetDb, 'foo4'), null);

    // replication should start from scratch after the filter's code changed
    ddoc.filters.myfilter = filterFun2;
    assert.equal(await couch.saveOk(sourceDb, ddoc), true);
    repResult = await couch.replicateOk(pair.source, pair.target, body);
    assert.equal(repResult.ok, true);
    assert.equal(repResult.history.length, 1);
    assert.equal(repResult.history[0].docs_written, 3);
    assert.equal(repResult.history[0].docs_read, 3);
    assert.equal(repResult.history[0].doc_write_failures, 0);
    for (let v = 1; v <= 4; v++) assert.equal((await couch.open(targetDb, `foo${v}`))?.value, v);
    assert.ok((await couch.open(targetDb, '_design/mydesign')) !== null);
  }
});

test('replication: by doc_ids (inexistent and percent-encoded ids, later updates with attachments, conflicts)', async () => {
  const sourceDb = 'c16r_docids_a';
  const targetDb = 'c16r_docids_b';
  const docs = makeDocs(1, 11);
  docs.push({ _id: '_design/foo', language: 'javascript', integer: 1 });
  const target_doc_ids = [
    { initial: ['1', '2', '10'], after: [] as string[], conflict_id: '2' },
    { initial: ['1', '2'], after: ['7'], conflict_id: '1' },
    { initial: ['1', 'foo_666', '10'], after: ['7'], conflict_id: '10' },
    { initial: ['_design/foo', '8'], after: ['foo_5'], conflict_id: '8' },
    { initial: ['_design%2Ffoo', '8'], after: ['foo_5'], conflict_id: '8' },
    { initial: [] as string[], after: ['foo_1000', '_design/foo', '1'], conflict_id: '1' },
  ];
  const inexistent = (ids: string[]) => ids.filter((id) => id.indexOf('foo_') === 0).length;

  /**
   * One replication by `ids` and the script's checks after it: the answer's counts, each id
   * on both ends, no other document on the target (`sent`: every id list replicated so far).
   */
  const replicateIds = async (pair: { source: string; target: string }, ids: string[], sent: string[][]): Promise<number> => {
    const repResult = await couch.replicateOk(pair.source, pair.target, { doc_ids: ids });
    const total = ids.length - inexistent(ids);
    assert.equal(repResult.ok, true);
    if (total === 0) assert.equal(repResult.no_changes, true);
    else {
      assert.equal(typeof repResult.start_time, 'string');
      assert.equal(typeof repResult.end_time, 'string');
      assert.equal(repResult.docs_read, total);
      assert.equal(repResult.docs_written, total);
      assert.equal(repResult.doc_write_failures, 0);
    }
    for (const raw of ids) {
      const id = decodeURIComponent(raw);
      const doc = await couch.open(sourceDb, id);
      const copy = await couch.open(targetDb, id);
      if (id.indexOf('foo_') === 0) {
        assert.equal(doc, null);
        assert.equal(copy, null);
      } else {
        assert.ok(doc !== null && copy !== null, id);
        assert.equal(compareObjects(doc, copy), true);
      }
    }
    // be absolutely sure that other docs were not replicated
    for (const d of docs) {
      const doc = await couch.open(targetDb, d._id);
      if (sent.some((list) => list.includes(encodeURIComponent(d._id)) || list.includes(d._id))) assert.ok(doc !== null, d._id);
      else assert.equal(doc, null, d._id);
    }
    return total;
  };

  for (const pair of dbPairs(sourceDb, targetDb)) {
    for (const spec of target_doc_ids) {
      await populateDb(sourceDb, docs);
      await populateDb(targetDb, []);
      const total = await replicateIds(pair, spec.initial, [spec.initial]);
      assert.equal((await couch.info(targetDb)).doc_count, total);

      // add more docs through replication by doc IDs
      const after_total = await replicateIds(pair, spec.after, [spec.initial, spec.after]);
      assert.equal((await couch.info(targetDb)).doc_count, total + after_total);

      // replicate again the same doc after updated on source (no conflict)
      let id = spec.conflict_id;
      let doc = (await couch.open(sourceDb, id))!;
      assert.ok(doc !== null);
      doc.integer = 666;
      assert.equal(await couch.saveOk(sourceDb, doc), true);
      await addAtt(sourceDb, doc, 'readme.txt', att1_data, 'text/plain');
      await addAtt(sourceDb, doc, 'data.dat', att2_data, 'application/binary');
      let repResult = await couch.replicateOk(pair.source, pair.target, { doc_ids: [id] });
      assert.equal(repResult.ok, true);
      assert.equal(repResult.docs_read, 1);
      assert.equal(repResult.docs_written, 1);
      assert.equal(repResult.doc_write_failures, 0);
      let copy = (await couch.open(targetDb, id, { conflicts: true }))!;
      assert.equal(copy.integer, 666);
      assert.equal(copy._rev.indexOf('4-'), 0);
      assert.equal(typeof copy._conflicts, 'undefined');
      await checkAtt(targetDb, copy, 'readme.txt', 3, 'text/plain', att1_data);
      await checkAtt(targetDb, copy, 'data.dat', 4, 'application/binary', att2_data);

      // generate a conflict through replication by doc IDs
      id = spec.conflict_id;
      doc = (await couch.open(sourceDb, id))!;
      copy = (await couch.open(targetDb, id))!;
      doc.integer += 100;
      copy.integer += 1;
      assert.equal(await couch.saveOk(sourceDb, doc), true);
      assert.equal(await couch.saveOk(targetDb, copy), true);
      repResult = await couch.replicateOk(pair.source, pair.target, { doc_ids: [id] });
      assert.equal(repResult.ok, true);
      assert.equal(repResult.docs_read, 1);
      assert.equal(repResult.docs_written, 1);
      assert.equal(repResult.doc_write_failures, 0);
      copy = (await couch.open(targetDb, id, { conflicts: true }))!;
      assert.equal(copy._rev.indexOf('5-'), 0);
      assert.ok(Array.isArray(copy._conflicts));
      assert.equal(copy._conflicts.length, 1);
      assert.equal(copy._conflicts[0].indexOf('5-'), 0);
    }
  }
});

test('replication: continuous replication (attachments, design documents, new and deleted documents, cancel)', async () => {
  const sourceDb = 'c16r_continuous_a';
  const targetDb = 'c16r_continuous_b';
  const docs = makeDocs(1, 25);
  docs.push({ _id: '_design/foo', language: 'javascript', filters: { myfilter: String(function () { return true; }) } });

  for (const pair of dbPairs(sourceDb, targetDb)) {
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    for (let j = 10; j < 15; j++) await addAtt(sourceDb, docs[j]!, 'readme.txt', att1_data, 'text/plain');

    let repResult = await couch.replicateOk(pair.source, pair.target, { continuous: true });
    assert.equal(repResult.ok, true);
    assert.equal(typeof repResult._local_id, 'string');
    const rep_id = repResult._local_id;
    await waitForSameDocs(sourceDb, targetDb);

    for (let j = 0; j < docs.length; j++) {
      const doc = docs[j]!;
      const copy = await couch.open(targetDb, doc._id);
      assert.ok(copy !== null, doc._id);
      assert.equal(compareObjects(doc, copy), true, doc._id);
      if (j >= 10 && j < 15) {
        await checkAtt(targetDb, copy, 'readme.txt', 2, 'text/plain', att1_data);
      }
    }
    assert.equal((await couch.info(targetDb)).doc_count, (await couch.info(sourceDb)).doc_count);

    // add attachments to docs in source
    for (let j = 10; j < 15; j++) await addAtt(sourceDb, docs[j]!, 'data.dat', att2_data, 'application/binary');
    const ddoc = docs[docs.length - 1]!; // design doc
    await addAtt(sourceDb, ddoc, 'readme.txt', att1_data, 'text/plain');
    await waitForSameDocs(sourceDb, targetDb);

    const modifDocs = docs.slice(10, 15).concat([ddoc]);
    for (const doc of modifDocs) {
      const copy = await couch.open(targetDb, doc._id);
      assert.ok(copy !== null);
      assert.equal(compareObjects(doc, copy), true, doc._id);
      await checkAtt(targetDb, copy, 'readme.txt', 2, 'text/plain', att1_data);
      if (doc._id.indexOf('_design/') === -1) {
        await checkAtt(targetDb, copy, 'data.dat', 3, 'application/binary', att2_data);
      }
    }
    assert.equal((await couch.info(targetDb)).doc_count, (await couch.info(sourceDb)).doc_count);

    // add another attachment to the ddoc on source
    await addAtt(sourceDb, ddoc, 'data.dat', att2_data, 'application/binary');
    await waitForSameDocs(sourceDb, targetDb);
    let copy = (await couch.open(targetDb, ddoc._id))!;
    await checkAtt(targetDb, copy, 'readme.txt', 2, 'text/plain', att1_data);
    await checkAtt(targetDb, copy, 'data.dat', 3, 'application/binary', att2_data);
    let targetInfo = await couch.info(targetDb);
    assert.equal(targetInfo.doc_count, (await couch.info(sourceDb)).doc_count);

    // add more docs to source
    const newDocs = makeDocs(25, 35);
    await populateDb(sourceDb, newDocs, true);
    await waitForSameDocs(sourceDb, targetDb);
    for (const doc of newDocs) {
      copy = (await couch.open(targetDb, doc._id))!;
      assert.ok(copy !== null, doc._id);
      assert.equal(compareObjects(doc, copy), true);
    }
    targetInfo = await couch.info(targetDb);
    assert.equal(targetInfo.doc_count, (await couch.info(sourceDb)).doc_count);

    // delete docs from source
    assert.equal((await couch.deleteDoc(sourceDb, newDocs[0]!)).body.ok, true);
    assert.equal((await couch.deleteDoc(sourceDb, newDocs[6]!)).body.ok, true);
    await waitForSameDocs(sourceDb, targetDb);
    assert.equal(await couch.open(targetDb, newDocs[0]!._id), null);
    assert.equal(await couch.open(targetDb, newDocs[6]!._id), null);
    const changes = await couch.changes(targetDb, { since: targetInfo.update_seq });
    const line1 = changes.results[changes.results.length - 2];
    const line2 = changes.results[changes.results.length - 1];
    assert.equal(line1.id, newDocs[0]!._id);
    assert.equal(line1.deleted, true);
    assert.equal(line2.id, newDocs[6]!._id);
    assert.equal(line2.deleted, true);

    // cancel the replication
    repResult = await couch.replicateOk(pair.source, pair.target, { continuous: true, cancel: true });
    assert.equal(repResult.ok, true);
    assert.equal(repResult._local_id, rep_id);

    // The script waits 2 s; here until the job has left _active_tasks, and a moment more.
    await waitNoReplicationTask((t) => t.replication_id === rep_id);
    const doc: Doc = { _id: 'foobar', value: 666 };
    assert.equal(await couch.saveOk(sourceDb, doc), true);
    await sleep(300);
    assert.equal(await couch.open(targetDb, doc._id), null);
  }
});

test('replication: a filtered continuous replication survives compaction of its source (COUCHDB-1093)', async () => {
  const sourceDb = 'c16r_1093_a';
  const targetDb = 'c16r_1093_b';
  const docs = makeDocs(1, 10);
  docs.push({ _id: '_design/foo', language: 'javascript', filters: { myfilter: String(function () { return true; }) } });
  await populateDb(sourceDb, docs);
  await populateDb(targetDb, []);
  const body = { continuous: true, filter: 'foo/myfilter' };
  let repResult = await couch.replicateOk(couch.dbUrl(sourceDb), targetDb, body);
  assert.equal(repResult.ok, true);
  assert.equal(typeof repResult._local_id, 'string');

  const tasks = await couch.activeTasks();
  assert.equal((await couch.compact(sourceDb)).body.ok, true);
  await couch.waitCompaction(sourceDb);
  assert.equal(await couch.saveOk(sourceDb, makeDocs(30, 31)[0]!), true);
  const tasksAfter = await couch.activeTasks();
  assert.equal(tasksAfter.length, tasks.length);
  await waitForSeq(sourceDb, targetDb);
  // The script checks the source (sourceDb.open("30")); the target is what the fix is about.
  assert.ok((await couch.open(sourceDb, '30')) !== null);
  assert.ok((await couch.open(targetDb, '30')) !== null, 'the new document reached the target after compaction');

  // cancel replication
  repResult = await couch.replicateOk(couch.dbUrl(sourceDb), targetDb, { ...body, cancel: true });
  assert.equal(repResult.ok, true);
  assert.equal(typeof repResult._local_id, 'string');
});

/**
 * replication.js's compressed attachments, without its check that the copy is still
 * gzip-encoded (Settee's replicator fetches attachments decoded: see the note below).
 */
async function compressedAttachments(suffix: string): Promise<void> {
  const sourceDb = `c16r_compressed${suffix}_a`;
  const targetDb = `c16r_compressed${suffix}_b`;
  const doc: Doc = { _id: 'foobar' };
  let bigTextAtt = att1_data;
  while (bigTextAtt.length < 128 * 1024) bigTextAtt += att1_data;
  const attName = 'readme.txt';
  const compressionLevel = (await couch.request('GET', '/_config/attachments/compression_level')).body;
  const compressibleTypes = (await couch.request('GET', '/_config/attachments/compressible_types')).body;
  const setAtt = async (key: string, value: string) => {
    const r = await couch.request('PUT', `/_config/attachments/${key}`, { body: value, headers: { 'X-Couch-Persist': 'false' } });
    assert.equal(r.status, 200, r.text);
  };
  try {
    for (const pair of dbPairs(sourceDb, targetDb)) {
      await populateDb(sourceDb, [doc]);
      await populateDb(targetDb, []);
      // enable compression of text types
      await setAtt('compression_level', '8');
      await setAtt('compressible_types', 'text/*');
      const put = await couch.request('PUT', `/${sourceDb}/${doc._id}/${attName}?rev=${doc._rev}`, { raw: bigTextAtt, headers: { 'Content-Type': 'text/plain' } });
      assert.equal(put.status, 201, put.text);
      // disable compression and replicate
      await setAtt('compression_level', '0');

      const repResult = await couch.replicateOk(pair.source, pair.target);
      assert.equal(repResult.ok, true);
      assert.equal(repResult.history.length, 1);
      const h = repResult.history[0];
      assert.deepEqual(counts(h), [1, 1, 1, 1, 0]);
      const copy = (await couch.open(targetDb, doc._id, { att_encoding_info: true, bypass_cache: Math.round(Math.random() * 1000) }))!;
      assert.ok(copy !== null);
      assert.ok(attName in copy._attachments);
      assert.equal(typeof copy._attachments[attName].length, 'number');
      assert.equal(copy._attachments[attName].length, bigTextAtt.length);
      assert.equal(await attText(targetDb, doc._id, attName), bigTextAtt);
    }
  } finally {
    await setAtt('compression_level', compressionLevel);
    await setAtt('compressible_types', compressibleTypes);
  }
}

test('replication: a large text attachment stored compressed replicates intact with compression off (content, length)', async () => {
  await compressedAttachments('');
});

// Not ported as a test: the script also checks that an attachment stored gzip'd arrives
// gzip'd (encoding, encoded_length) with compression off on the target; Settee's replicator
// fetches attachments decoded and the target stores them as it would any upload.

const JOE = (): Doc => prepareUserDoc({ name: 'joe', roles: ['erlanger'] }, 'erly');

test('replication: a user who is not an admin of the target cannot replicate design documents into it', async () => {
  const sourceDb = 'c16r_nonadmin1_a';
  const targetDb = 'c16r_nonadmin1_b';
  const usersDb = 'c16r_nonadmin1_auth';
  const server_config = [{ section: 'couch_httpd_auth', key: 'authentication_db', value: usersDb }];
  const docs = makeDocs(1, 6);
  docs.push({ _id: '_design/foo', language: 'javascript' });
  const pairs = [
    { source: sourceDb, target: targetDb },
    { source: couch.dbUrl(sourceDb), target: targetDb },
    { source: sourceDb, target: couch.dbUrl(targetDb, 'joe:erly') },
    { source: couch.dbUrl(sourceDb), target: couch.dbUrl(targetDb, 'joe:erly') },
  ];
  for (const pair of pairs) {
    await couch.deleteDb(usersDb);
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    assert.equal(await couch.setSecObj(targetDb, { admins: { names: ['superman'], roles: ['god'] } }), true);
    let repResult: Doc = {};
    await couch.runOnModifiedServer(server_config, async () => {
      await ensureDb(usersDb);
      assert.equal(await couch.saveOk(usersDb, JOE()), true);
      assert.equal((await couch.login('joe', 'erly')).ok, true);
      assert.equal((await couch.session()).userCtx.name, 'joe');
      const r = await couch.replicate(pair.source, pair.target);
      assert.equal((await couch.logout()).ok, true);
      assert.equal(r.status, 200, `${JSON.stringify(pair)}: ${r.text}`);
      repResult = r.body;
    });
    assert.equal(repResult.ok, true);
    const h = repResult.history[0];
    assert.equal(h.docs_read, docs.length);
    assert.equal(h.docs_written, docs.length - 1); // 1 ddoc
    assert.equal(h.doc_write_failures, 1);
    for (const doc of docs) {
      const copy = await couch.open(targetDb, doc._id);
      if (doc._id.indexOf('_design/') === 0) assert.equal(copy, null);
      else {
        assert.ok(copy !== null, doc._id);
        assert.equal(compareObjects(doc, copy), true);
      }
    }
  }
});

test('replication: a user who is not a reader of the source is unauthorized', async () => {
  const sourceDb = 'c16r_nonadmin2_a';
  const targetDb = 'c16r_nonadmin2_b';
  const usersDb = 'c16r_nonadmin2_auth';
  const server_config = [{ section: 'couch_httpd_auth', key: 'authentication_db', value: usersDb }];
  const docs = makeDocs(1, 6);
  docs.push({ _id: '_design/foo', language: 'javascript' });
  const pairs = [
    { source: sourceDb, target: targetDb },
    { source: couch.dbUrl(sourceDb, 'joe:erly'), target: targetDb },
    { source: sourceDb, target: couch.dbUrl(targetDb) },
    { source: couch.dbUrl(sourceDb, 'joe:erly'), target: couch.dbUrl(targetDb) },
  ];
  for (const pair of pairs) {
    await couch.deleteDb(usersDb);
    await populateDb(sourceDb, docs);
    await populateDb(targetDb, []);
    assert.equal(await couch.setSecObj(sourceDb, {
      admins: { names: ['superman'], roles: ['god'] },
      readers: { names: ['john'], roles: ['secret'] },
    }), true);
    await couch.runOnModifiedServer(server_config, async () => {
      await ensureDb(usersDb);
      assert.equal(await couch.saveOk(usersDb, JOE()), true);
      assert.equal((await couch.login('joe', 'erly')).ok, true);
      assert.equal((await couch.session()).userCtx.name, 'joe');
      const r = await couch.replicate(pair.source, pair.target);
      assert.equal((await couch.logout()).ok, true);
      assert.ok(r.status >= 400, `should have raised an exception: ${JSON.stringify(pair)} ${r.text}`);
      assert.equal(r.body.error, 'unauthorized', JSON.stringify(pair));
    });
    for (const doc of docs) assert.equal(await couch.open(targetDb, doc._id), null);
  }
});

test('replication: pushing a document with attachments to a URL makes no conflict (COUCHDB-885)', async () => {
  const sourceDb = 'c16r_885_a';
  const targetDb = 'c16r_885_b';
  await populateDb(sourceDb, []);
  await populateDb(targetDb, []);
  const doc: Doc = { _id: 'doc1' };
  assert.equal(await couch.saveOk(sourceDb, doc), true);
  let repResult = await couch.replicateOk(sourceDb, couch.dbUrl(targetDb));
  assert.equal(repResult.ok, true);
  assert.equal(repResult.history.length, 1);
  assert.equal(repResult.history[0].docs_written, 1);
  assert.equal(repResult.history[0].docs_read, 1);
  assert.equal(repResult.history[0].doc_write_failures, 0);

  doc['_attachments'] = {
    'hello.txt': { content_type: 'text/plain', data: 'aGVsbG8gd29ybGQ=' },
    'foo.dat': { content_type: 'not/compressible', data: 'aSBhbSBub3QgZ3ppcGVk' },
  };
  assert.equal(await couch.saveOk(sourceDb, doc), true);
  repResult = await couch.replicateOk(sourceDb, couch.dbUrl(targetDb));
  assert.equal(repResult.ok, true);
  assert.equal(repResult.history.length, 2);
  assert.equal(repResult.history[0].docs_written, 1);
  assert.equal(repResult.history[0].docs_read, 1);
  assert.equal(repResult.history[0].doc_write_failures, 0);

  const copy = (await couch.open(targetDb, doc._id, { conflicts: true, deleted_conflicts: true, attachments: true, att_encoding_info: true }))!;
  assert.ok(copy !== null);
  assert.equal(typeof copy._conflicts, 'undefined');
  assert.equal(typeof copy._deleted_conflicts, 'undefined');
  assert.equal(copy._attachments['hello.txt'].content_type, 'text/plain');
  assert.equal(copy._attachments['hello.txt'].data, 'aGVsbG8gd29ybGQ=');
  assert.equal(copy._attachments['hello.txt'].encoding, 'gzip');
  assert.equal(copy._attachments['foo.dat'].content_type, 'not/compressible');
  assert.equal(copy._attachments['foo.dat'].data, 'aSBhbSBub3QgZ3ppcGVk');
  assert.equal(typeof copy._attachments['foo.dat'].encoding, 'undefined');
});

test('replication: non-string query_params are a bad_request (COUCHDB-1242)', async () => {
  // The script passes its CouchDB objects (JSON: name and uri) as the endpoints, as here; the
  // request fails, and the script's catch wants bad_request.
  const sourceDb = 'c16r_1242_a';
  const targetDb = 'c16r_1242_b';
  await populateDb(sourceDb, []);
  await populateDb(targetDb, []);
  const asJson = (db: string) => ({ name: db, uri: `/${db}/` });
  const r = await couch.replicate(asJson(sourceDb), asJson(targetDb), { filter: 'mydesign/myfilter', query_params: { maxvalue: 4 } });
  assert.ok(r.status >= 400, r.text);
  assert.equal(r.body.error, 'bad_request', r.text);
});

test('replication: a continuous replication is cancelled by its replication_id from _active_tasks', async () => {
  const sourceDb = 'c16r_cancelid_a';
  const targetDb = 'c16r_cancelid_b';
  await populateDb(sourceDb, makeDocs(1, 6));
  await populateDb(targetDb, []);
  const repResult = await couch.replicateOk(couch.dbUrl(sourceDb), targetDb, { continuous: true, create_target: true });
  assert.equal(repResult.ok, true);
  assert.equal(typeof repResult._local_id, 'string');

  let tasks = await couch.activeTasks();
  let repId: string | null | undefined;
  for (const task of tasks) if (task.replication_id === repResult._local_id) repId = task.replication_id;
  assert.equal(repId, repResult._local_id, 'Replication found in _active_tasks');
  let r = await couch.request('POST', '/_replicate', { body: { replication_id: repId, cancel: true } });
  assert.equal(r.status, 200, 'Replication cancel request success');

  tasks = await couch.activeTasks();
  repId = null;
  for (const task of tasks) if (task.replication_id === repResult._local_id) repId = task.replication_id;
  assert.equal(repId, null, 'Replication was canceled');

  r = await couch.request('POST', '/_replicate', { body: { replication_id: repResult._local_id, cancel: true } });
  assert.equal(r.status, 404, '2nd replication cancel failed');
});

test('replication: a non-admin user cannot cancel a replication another user started', async () => {
  const sourceDb = 'c16r_cancelother_a';
  const targetDb = 'c16r_cancelother_b';
  const usersDb = 'c16r_cancelother_auth';
  const userDoc = prepareUserDoc({ name: 'tony', roles: ['mafia'] }, 'soprano');
  await couch.runOnModifiedServer([{ section: 'couch_httpd_auth', key: 'authentication_db', value: usersDb }], async () => {
    await populateDb(sourceDb, makeDocs(1, 6));
    await populateDb(targetDb, []);
    await ensureDb(usersDb);
    assert.equal(await couch.saveOk(usersDb, userDoc), true);
    const repResult = await couch.replicateOk(couch.dbUrl(sourceDb), targetDb, { continuous: true });
    assert.equal(repResult.ok, true);
    assert.equal(typeof repResult._local_id, 'string');

    assert.equal((await couch.login('tony', 'soprano')).ok, true);
    assert.equal((await couch.session()).userCtx.name, 'tony');
    let r = await couch.request('POST', '/_replicate', { body: { replication_id: repResult._local_id, cancel: true } });
    assert.equal(r.status, 401, 'Unauthorized to cancel replication');
    assert.equal(r.body.error, 'unauthorized');
    assert.equal((await couch.logout()).ok, true);

    r = await couch.request('POST', '/_replicate', { body: { replication_id: repResult._local_id, cancel: true } });
    assert.equal(r.status, 200, 'Authorized to cancel replication');
  });
});

// ===================================================================== replicator_db_*.js

/** The scripts\' checks of a replication document the replicator has marked `state`. */
async function checkRepDoc(repDb: string, repDoc: Doc, state: string, on = couch): Promise<Doc> {
  const repDoc1 = (await on.open(repDb, repDoc._id))!;
  assert.ok(repDoc1 !== null);
  assert.equal(repDoc1.source, repDoc.source);
  assert.equal(repDoc1.target, repDoc.target);
  assert.equal(repDoc1._replication_state, state, repDoc._id);
  assert.equal(typeof repDoc1._replication_id, 'string');
  assert.equal(typeof repDoc1._replication_state_time, 'string');
  return repDoc1;
}

const docs1 = (): Doc[] => [{ _id: 'foo1', value: 11 }, { _id: 'foo2', value: 22 }, { _id: 'foo3', value: 33 }];
const repDbConfig = (repDb: string, usersDb?: string): Setting[] => [
  { section: 'couch_httpd_auth', key: 'iterations', value: '1' },
  { section: 'replicator', key: 'db', value: repDb },
  ...(usersDb ? [{ section: 'couch_httpd_auth', key: 'authentication_db', value: usersDb }] : []),
];

/** The scripts' `repDb.deleteDb(); run_on_modified_server(server_config, fn)`, the rep db made by the replicator. */
async function withRepDb(repDb: string, usersDb: string | undefined, fn: () => Promise<void>, on = couch): Promise<void> {
  await on.deleteDb(repDb);
  await on.runOnModifiedServer(repDbConfig(repDb, usersDb), async () => {
    await useRepDb(repDb, on);
    await fn();
  });
}

test('replicator_db_simple: a replication document completes with _replication_state, _replication_id and _replication_stats', async () => {
  const dbA = 'c16r_rdsimple_a';
  const dbB = 'c16r_rdsimple_b';
  const repDb = 'c16r_rdsimple_rep';
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc: Doc = { _id: 'foo_simple_rep', source: dbA, target: dbB };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    for (const doc of docs) {
      const copy = await couch.open(dbB, doc._id);
      assert.ok(copy !== null);
      assert.equal(copy.value, doc.value);
    }
    const repDoc1 = (await couch.open(repDb, repDoc._id))!;
    assert.ok(repDoc1 !== null);
    assert.equal(repDoc1.source, repDoc.source);
    assert.equal(repDoc1.target, repDoc.target);
    assert.equal(repDoc1._replication_state, 'completed', 'simple');
    assert.equal(typeof repDoc1._replication_state_time, 'string');
    assert.equal(typeof repDoc1._replication_id, 'string');
    assert.equal(typeof repDoc1._replication_stats, 'object', 'doc has stats');
    const stats = repDoc1._replication_stats;
    assert.equal(stats.revisions_checked, docs.length, 'right # of revisions_checked');
    assert.equal(stats.missing_revisions_found, docs.length, 'right # of missing_revisions_found');
    assert.equal(stats.docs_read, docs.length, 'right # of docs_read');
    assert.equal(stats.docs_written, docs.length, 'right # of docs_written');
    assert.equal(stats.doc_write_failures, 0, 'right # of doc_write_failures');
    assert.equal(stats.checkpointed_source_seq, (await couch.info(dbA)).update_seq, 'right checkpointed_source_seq');
  });
});

test('replicator_db_continuous: a continuous replication document, its _active_tasks entry, design documents, stopped by deleting it', async () => {
  const dbA = 'c16r_rdcont_a';
  const dbB = 'c16r_rdcont_b';
  const repDb = 'c16r_rdcont_rep';
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc: Doc = { _id: 'foo_cont_rep_doc', source: couch.dbUrl(dbA), target: dbB, continuous: true, user_ctx: { roles: ['_admin'] } };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForSeq(dbA, dbB);
    for (const doc of docs) {
      const copy = await couch.open(dbB, doc._id);
      assert.ok(copy !== null);
      assert.equal(copy.value, doc.value);
    }
    const tasks = await couch.activeTasks();
    assert.equal(tasks.length, 1, '1 active task');
    assert.equal(tasks[0]!.doc_id, repDoc._id, 'replication doc id in active tasks');

    // add another doc to source, it will be replicated to target
    assert.equal(await couch.saveOk(dbA, { _id: 'foo1000', value: 1001 }), true);
    await waitForSeq(dbA, dbB);
    const copy = await couch.open(dbB, 'foo1000');
    assert.ok(copy !== null);
    assert.equal(copy.value, 1001);

    await waitForRep(repDb, repDoc, 'triggered');
    const repDoc1 = (await couch.open(repDb, repDoc._id))!;
    assert.equal(repDoc1.source, repDoc.source);
    assert.equal(repDoc1.target, repDoc.target);
    assert.equal(repDoc1._replication_state, 'triggered');
    assert.equal(typeof repDoc1._replication_state_time, 'string');
    assert.equal(typeof repDoc1._replication_id, 'string');

    // Design documents are only replicated to local targets if the respective
    // replication document has a user_ctx filed with the "_admin" role in it.
    const ddoc: Doc = { _id: '_design/foobar', language: 'javascript' };
    assert.equal(await couch.saveOk(dbA, ddoc), true);
    await waitForSeq(dbA, dbB);
    let ddoc_copy = await couch.open(dbB, '_design/foobar');
    assert.ok(ddoc_copy !== null);
    assert.equal(ddoc.language, 'javascript');

    // update the design doc on source, test that the new revision is replicated
    ddoc.language = 'erlang';
    assert.equal(await couch.saveOk(dbA, ddoc), true);
    assert.equal(ddoc._rev.indexOf('2-'), 0);
    await waitForSeq(dbA, dbB);
    ddoc_copy = await couch.open(dbB, '_design/foobar');
    assert.ok(ddoc_copy !== null);
    assert.equal(ddoc_copy._rev, ddoc._rev);
    assert.equal(ddoc.language, 'erlang');

    // stop replication by deleting the replication document
    assert.equal((await couch.deleteDoc(repDb, repDoc1)).body.ok, true);
    // add another doc to source, it will NOT be replicated to target (the script waits 200 ms)
    await waitNoReplicationTask((t) => t.doc_id === repDoc._id);
    assert.equal(await couch.saveOk(dbA, { _id: 'foo666', value: 999 }), true);
    await sleep(200);
    assert.equal(await couch.open(dbB, 'foo666'), null);
  });
});

test('replicator_db_identical: two documents stating the same replication run it once; the second only gets its _replication_id', async () => {
  const dbA = 'c16r_rdident_a';
  const dbB = 'c16r_rdident_b';
  const repDb = 'c16r_rdident_rep';
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    let repDoc1: Doc = { _id: 'foo_dup_rep_doc_1', source: couch.dbUrl(dbA), target: dbB };
    let repDoc2: Doc = { _id: 'foo_dup_rep_doc_2', source: couch.dbUrl(dbA), target: dbB };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    assert.equal(await couch.saveOk(repDb, repDoc2), true);
    await waitForRep(repDb, repDoc1, 'completed');
    for (const doc of docs) {
      const copy = await couch.open(dbB, doc._id);
      assert.ok(copy !== null);
      assert.equal(copy.value, doc.value);
    }
    repDoc1 = (await couch.open(repDb, 'foo_dup_rep_doc_1'))!;
    assert.equal(repDoc1._replication_state, 'completed', 'identical');
    assert.equal(typeof repDoc1._replication_state_time, 'string');
    assert.equal(typeof repDoc1._replication_id, 'string');
    // The script reads the second document once; its _replication_id may be written a moment later.
    const until = Date.now() + WAIT_MS;
    do {
      repDoc2 = (await couch.open(repDb, 'foo_dup_rep_doc_2'))!;
    } while (repDoc2._replication_id === undefined && Date.now() < until && (await sleep(50), true));
    assert.equal(typeof repDoc2._replication_state, 'undefined');
    assert.equal(typeof repDoc2._replication_state_time, 'undefined');
    assert.equal(repDoc2._replication_id, repDoc1._replication_id);
  });
});

test('replicator_db_compact_rep_db: compacting the replicator database leaves its continuous replications running', async () => {
  const dbA = 'c16r_rdcompact_a';
  const dbB = 'c16r_rdcompact_b';
  const dbA_copy = 'c16r_rdcompact_a_copy';
  const dbB_copy = 'c16r_rdcompact_b_copy';
  const repDb = 'c16r_rdcompact_rep';
  const usersDb = 'c16r_rdcompact_auth';
  const docs = makeDocs(1, 50);
  await withRepDb(repDb, usersDb, async () => {
    await populate_db(dbA, docs, usersDb);
    await populate_db(dbB, docs, usersDb);
    await populate_db(dbA_copy, [], usersDb);
    await populate_db(dbB_copy, [], usersDb);
    const repDoc1: Doc = { _id: 'rep1', source: couch.dbUrl(dbA), target: dbA_copy, continuous: true };
    const repDoc2: Doc = { _id: 'rep2', source: couch.dbUrl(dbB), target: dbB_copy, continuous: true };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    assert.equal(await couch.saveOk(repDb, repDoc2), true);

    const compaction = await couch.compact(repDb);
    assert.equal(compaction.body.ok, true);
    assert.equal(compaction.status, 202);

    await waitForSeq(dbA, dbA_copy);
    await waitForSeq(dbB, dbB_copy);
    await couch.waitCompaction(repDb);
    for (const doc of docs) {
      assert.ok((await couch.open(dbA_copy, doc._id)) !== null, doc._id);
      assert.ok((await couch.open(dbB_copy, doc._id)) !== null, doc._id);
    }

    const new_doc: Doc = { _id: 'foo666', value: 666 };
    assert.equal(await couch.saveOk(dbA, new_doc), true);
    delete new_doc._rev;
    assert.equal(await couch.saveOk(dbB, new_doc), true);
    await waitForSeq(dbA, dbA_copy);
    await waitForSeq(dbB, dbB_copy);
    // The script opens the sources (dbA, dbB) here; the copies are what compaction must not stop.
    for (const db of [dbA, dbB, dbA_copy, dbB_copy]) {
      const copy = await couch.open(db, new_doc._id);
      assert.ok(copy !== null, db);
      assert.equal(copy.value, 666);
    }
    // The script's cleanup deletes the replicator database, which stops both jobs.
    for (const d of [repDoc1, repDoc2]) assert.equal((await couch.deleteDoc(repDb, (await couch.open(repDb, d._id))!)).status, 200);
    await waitNoReplicationTask((t) => t.doc_id === 'rep1' || t.doc_id === 'rep2');
  });
});

/**
 * replicator_db_filtered.js. `checkWrites`: the design document's write fails, as a document
 * without user_ctx runs with no roles in CouchDB 1.6 (see the test that checks it).
 */
async function replicatorDbFiltered(checkWrites: boolean, suffix: string): Promise<void> {
  const dbA = `c16r_rdfilt${suffix}_a`;
  const dbB = `c16r_rdfilt${suffix}_b`;
  const repDb = `c16r_rdfilt${suffix}_rep`;
  const docs2 = docs1().concat([{
    _id: '_design/mydesign',
    language: 'javascript',
    filters: { myfilter: String(function (doc: any, req: any) { return (doc.value % 2) !== Number(req.query.myparam); }) },
  }]);
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs2, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc: Doc = { _id: 'foo_filt_rep_doc', source: couch.dbUrl(dbA), target: dbB, filter: 'mydesign/myfilter', query_params: { myparam: 1 } };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    for (const doc of docs2) {
      const copy = await couch.open(dbB, doc._id);
      if (typeof doc.value === 'number') {
        if ((doc.value % 2) !== 1) {
          assert.ok(copy !== null);
          assert.equal(copy.value, doc.value);
        } else assert.equal(copy, null);
      }
    }
    const repDoc1 = (await couch.open(repDb, repDoc._id))!;
    assert.equal(repDoc1.source, repDoc.source);
    assert.equal(repDoc1.target, repDoc.target);
    assert.equal(repDoc1._replication_state, 'completed', 'filtered');
    assert.equal(typeof repDoc1._replication_state_time, 'string');
    assert.equal(typeof repDoc1._replication_id, 'string');
    assert.equal(typeof repDoc1._replication_stats, 'object', 'doc has stats');
    const stats = repDoc1._replication_stats;
    assert.equal(stats.revisions_checked, 2, 'right # of revisions_checked');
    assert.equal(stats.missing_revisions_found, 2, 'right # of missing_revisions_found');
    assert.equal(stats.docs_read, 2, 'right # of docs_read');
    if (checkWrites) {
      assert.equal(stats.docs_written, 1, 'right # of docs_written');
      assert.equal(stats.doc_write_failures, 1, 'right # of doc_write_failures');
    }
    assert.equal(stats.checkpointed_source_seq, (await couch.info(dbA)).update_seq, 'right checkpointed_source_seq');
  });
}

test('replicator_db_filtered: a filtered replication document with query_params', async () => {
  await replicatorDbFiltered(false, '');
});

test('replicator_db_filtered: a document without user_ctx (admin party) cannot write the design document (docs_written 1, doc_write_failures 1)', async () => {
  await replicatorDbFiltered(true, '_dev');
});

/**
 * replicator_db_user_ctx.js. `checkImplicitCtx`: a document written without user_ctx runs with
 * {name: null, roles: []} and so copies no design document (see the test that checks it).
 */
async function replicatorDbUserCtx(checkImplicitCtx: boolean, suffix: string): Promise<void> {
  const dbA = `c16r_rdctx${suffix}_a`;
  const dbB = `c16r_rdctx${suffix}_b`;
  const repDb = `c16r_rdctx${suffix}_rep`;
  const usersDb = `c16r_rdctx${suffix}_auth`;
  const docs = docs1();
  await withRepDb(repDb, usersDb, async () => {
    await ensureDb(usersDb);
    await populate_db(dbA, docs, usersDb);
    await populate_db(dbB, [], usersDb);
    await populate_db(usersDb, [], usersDb);
    assert.equal(await couch.saveOk(usersDb, prepareUserDoc({ name: 'joe', roles: ['erlanger', 'bar'] }, 'erly')), true);
    assert.equal(await couch.saveOk(usersDb, prepareUserDoc({ name: 'fdmanana', roles: ['a', 'b', 'c'] }, 'qwerty')), true);
    assert.equal(await couch.setSecObj(dbB, { admins: { names: [], roles: ['god'] }, readers: { names: [], roles: ['foo'] } }), true);

    const loginAs = async (name: string, password: string) => {
      assert.equal((await couch.login(name, password)).ok, true);
      const session = await couch.session();
      assert.equal(session.userCtx.name, name);
      assert.equal(session.userCtx.roles.indexOf('_admin'), -1);
    };
    await loginAs('joe', 'erly');
    let repDoc: Doc = { _id: 'foo_rep', source: couch.dbUrl(dbA), target: dbB };
    let r = await couch.save(repDb, repDoc);
    assert.equal(r.body.error, 'forbidden', 'Should have failed, user_ctx missing.');
    repDoc.user_ctx = { name: 'john', roles: ['erlanger'] };
    r = await couch.save(repDb, repDoc);
    assert.equal(r.body.error, 'forbidden', 'Should have failed, wrong user_ctx.name.');
    repDoc.user_ctx = { name: 'joe', roles: ['bar', 'god', 'erlanger'] };
    r = await couch.save(repDb, repDoc);
    assert.equal(r.body.error, 'forbidden', 'Should have failed, a bad role in user_ctx.roles.');
    // user_ctx.roles might contain only a subset of the user's roles
    repDoc.user_ctx = { name: 'joe', roles: ['erlanger'] };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await couch.logout();

    await waitForRep(repDb, repDoc, 'error');
    let repDoc1 = await checkRepDoc(repDb, repDoc, 'error');

    await loginAs('fdmanana', 'qwerty');
    r = await couch.deleteDoc(repDb, { ...repDoc1 });
    assert.equal(r.body.error, 'forbidden', "Shouldn't be able to delete replication document.");
    await couch.logout();
    await loginAs('joe', 'erly');
    assert.equal((await couch.deleteDoc(repDb, repDoc1)).body.ok, true);
    await couch.logout();
    for (const doc of docs) assert.equal(await couch.open(dbB, doc._id), null);

    assert.equal(await couch.setSecObj(dbB, { admins: { names: [], roles: ['god', 'erlanger'] }, readers: { names: [], roles: ['foo'] } }), true);
    await loginAs('joe', 'erly');
    repDoc = { _id: 'foo_rep_2', source: couch.dbUrl(dbA), target: dbB, user_ctx: { name: 'joe', roles: ['erlanger'] } };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await couch.logout();
    // The script waits for "complete", a state that never comes (its wait only times out).
    await waitForRep(repDb, repDoc, 'completed');
    repDoc1 = await checkRepDoc(repDb, repDoc, 'completed');
    for (const doc of docs) {
      const copy = await couch.open(dbB, doc._id);
      assert.ok(copy !== null);
      assert.equal(copy.value, doc.value);
    }

    // Admins don't need to supply a user_ctx property in replication docs. If they do not,
    // the implicit user_ctx {name: null, roles: []} is used, meaning that design documents
    // will not be replicated into local targets (checked in a test below).
    assert.equal(await couch.setSecObj(dbB, { admins: { names: [], roles: [] }, readers: { names: [], roles: [] } }), true);
    const ddoc: Doc = { _id: '_design/foo' };
    assert.equal(await couch.saveOk(dbA, ddoc), true);
    repDoc = { _id: 'foo_rep_3', source: couch.dbUrl(dbA), target: dbB };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    repDoc1 = await checkRepDoc(repDb, repDoc, 'completed');
    const ddoc_copy = await couch.open(dbB, ddoc._id);
    if (checkImplicitCtx) assert.equal(ddoc_copy, null);

    repDoc = { _id: 'foo_rep_4', source: couch.dbUrl(dbA), target: dbB, user_ctx: { roles: ['_admin'] } };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    repDoc1 = await checkRepDoc(repDb, repDoc, 'completed');
    assert.ok((await couch.open(dbB, ddoc._id)) !== null);
  });
}

test('replicator_db_user_ctx: user_ctx is checked against the writer; jobs run with it (errors, design documents)', async () => {
  await replicatorDbUserCtx(false, '');
});

test('replicator_db_user_ctx: a document without user_ctx (admin party) runs with no roles, so the design document is not replicated', async () => {
  await replicatorDbUserCtx(true, '_dev');
});

test('replicator_db_survives: a continuous replication document restarts after a server restart', async () => {
  const own = await startServer();
  let current: TestServer = own;
  const on = new Couch(() => current.url);
  const dbA = 'c16r_rdsurv_a';
  const dbB = 'c16r_rdsurv_b';
  const repDb = 'c16r_rdsurv_rep';
  const usersDb = 'c16r_rdsurv_auth';
  const docs = docs1();
  try {
    await withRepDb(repDb, usersDb, async () => {
      const origRepDbName = (await on.request('GET', '/_config/replicator/db')).text;
      await on.deleteDb(repDb);
      await useRepDb(repDb, on);
      await populate_db(dbA, docs, usersDb, on);
      await populate_db(dbB, [], usersDb, on);
      const repDoc: Doc = { _id: 'foo_cont_rep_survives_doc', source: dbA, target: dbB, continuous: true };
      assert.equal(await on.saveOk(repDb, repDoc), true);
      await waitForSeq(dbA, dbB, on);
      for (const doc of docs) {
        const copy = await on.open(dbB, doc._id);
        assert.ok(copy !== null);
        assert.equal(copy.value, doc.value);
      }
      await on.ensureFullCommit(repDb);
      await on.ensureFullCommit(dbA);

      // restartServer(): the same data directory, a new process.
      await current.stop({ keepData: true });
      current = await startServer({ dataDir: own.dataDir });
      await useRepDb(repDb, on);

      // add another doc to source, it will be replicated to target
      assert.equal(await on.saveOk(dbA, { _id: 'foo1000', value: 1001 }), true);
      await waitForSeq(dbA, dbB, on);
      const copy = await on.open(dbB, 'foo1000');
      assert.ok(copy !== null);
      assert.equal(copy.value, 1001);

      const doc = await waitForDocPos(repDb, 'foo_cont_rep_survives_doc', 3, on);
      assert.ok(doc !== null);
      assert.equal(doc.continuous, true);
      // stop replication
      assert.equal((await on.deleteDoc(repDb, doc)).body.ok, true);
      const r = await on.request('PUT', '/_config/replicator/db', { raw: origRepDbName, headers: { 'X-Couch-Persist': 'false' } });
      assert.equal(r.status, 200, r.text);
    }, on);
  } finally {
    await current.stop();
    const { rmSync } = await import('node:fs');
    rmSync(own.dataDir, { recursive: true, force: true });
  }
});

test('replicator_db_write_auth: a server admin adds a replication document; a triggered one cannot be edited', async () => {
  const own = await startServer();
  const on = new Couch(() => own.url);
  const dbA = 'c16r_rdwrite_a';
  const dbB = 'c16r_rdwrite_b';
  const repDb = 'c16r_rdwrite_rep';
  const docs = docs1();
  try {
    await withRepDb(repDb, undefined, async () => {
      await populate_db(dbA, docs, undefined, on);
      await populate_db(dbB, [], undefined, on);
      await on.runOnModifiedServer([{ section: 'admins', key: 'fdmanana', value: 'qwerty' }], async () => {
        let repDoc: Doc = { _id: 'foo_rep_doc', source: dbA, target: dbB, continuous: true };
        assert.equal((await on.login('fdmanana', 'qwerty')).ok, true);
        const session = await on.session();
        assert.equal(session.userCtx.name, 'fdmanana');
        assert.notEqual(session.userCtx.roles.indexOf('_admin'), -1);
        assert.equal(await on.saveOk(repDb, repDoc), true);

        // The script waits for "completed", which a continuous job never reaches (its wait
        // only times out); here for the documents and the job's "triggered" state.
        await waitForSeq(dbA, dbB, on);
        await waitForRep(repDb, repDoc, 'triggered', on);
        for (const doc of docs) {
          const copy = await on.open(dbB, doc._id);
          assert.ok(copy !== null);
          assert.equal(copy.value, doc.value);
        }
        repDoc = (await on.open(repDb, 'foo_rep_doc'))!;
        assert.ok(repDoc !== null);
        repDoc.target = 'test_suite_foo_db';
        repDoc.create_target = true;
        // Only the replicator can update replication documents.
        // Admins can only add and delete replication documents.
        const r = await on.save(repDb, repDoc);
        assert.equal(r.body.error, 'forbidden', `Should have thrown an exception: ${r.text}`);
      });
    }, on);
  } finally {
    await own.stop();
  }
});

/**
 * replicator_db_security.js. `changesAsUsers`: non-admin users read the replicator database's
 * `_changes?include_docs=true` (others' credentials hidden; see the note below);
 * otherwise only the server and database admins' reads are checked.
 */
async function replicatorDbSecurity(changesAsUsers: boolean): Promise<void> {
  const own = await startServer();
  const on = new Couch(() => own.url);
  const [repDb, usersDb, dbA, dbB, dbC] = ['c16r_rdsec_rep', 'c16r_rdsec_users', 'c16r_rdsec_a', 'c16r_rdsec_b', 'c16r_rdsec_c'] as const;
  const pws: Record<string, string> = { jan: 'apple', jchris: 'mp3', fdmanana: 'foobar', benoitc: 'test' };
  const loginUser = async (name: string) => assert.equal((await on.login(name, pws[name]!)).ok, true, name);
  const repChanges = async (name: string): Promise<Doc> => {
    await loginUser(name);
    const r = await on.request('GET', `/${repDb}/_changes?include_docs=true&anti-cache=${Math.round(Math.random() * 100000)}`);
    assert.equal(r.status, 200, `_changes as ${name}: ${r.text}`);
    return r.body;
  };
  const save_as = async (db: string, doc: Doc, name: string): Promise<Doc> => {
    await loginUser(name);
    try {
      return (await on.save(db, doc)).body;
    } finally {
      await on.logout();
    }
  };
  const open_as = async (db: string, id: string, name: string): Promise<Doc | null> => {
    await loginUser(name);
    try {
      return await on.open(db, id);
    } finally {
      await on.logout();
    }
  };
  const view = (): Promise<Response> => on.request('GET', `/${repDb}/_design/reps/_view/test`);
  const allDocs = (): Promise<Response> => on.request('GET', `/${repDb}/_all_docs?include_docs=true`);
  const host = new URL(own.url).host;

  try {
    for (const db of [repDb, usersDb, dbA, dbB, dbC]) {
      await on.deleteDb(db);
      await on.createDb(db);
    }
    await on.deleteDb(usersDb);
    await on.deleteDb(repDb);
    await on.runOnModifiedServer([
      { section: 'couch_httpd_auth', key: 'authentication_db', value: usersDb },
      { section: 'replicator', key: 'db', value: repDb },
    ], async () => {
      await useRepDb(repDb, on);
      await ensureDb(usersDb, on);
      // in admin party mode, anonymous should be able to create a replication
      let repDoc: Doc = { _id: 'null-owner-rep', source: dbA, target: dbB };
      const result = await on.save(repDb, repDoc);
      assert.equal(result.body.ok, true, 'should allow anonymous replication docs in admin party');
      // new docs should get an owner field enforced. In admin party mode owner is null
      repDoc = (await on.open(repDb, repDoc._id))!;
      assert.equal(repDoc.owner, null, 'owner should be null in admin party');

      for (const name of ['jchris', 'fdmanana', 'benoitc']) await on.save(usersDb, prepareUserDoc({ name, roles: [] }, pws[name]!));
      assert.equal(await on.setSecObj(repDb, { admins: { roles: [], names: ['benoitc'] } }), true);

      await on.runOnModifiedServer([{ section: 'admins', key: 'jan', value: 'apple' }], async () => {
        // replication docs from admin-party mode in non-admin party mode can not be edited by
        // non-admins (non-server admins)
        repDoc = (await on.open(repDb, repDoc._id))!;
        repDoc.target = dbC;
        let res = await save_as(repDb, repDoc, 'jchris');
        assert.equal(res.error, 'forbidden', 'should forbid editing null-owner docs');

        // ... they can only be edited by admins (server admins)
        repDoc = (await waitForDocPos(repDb, repDoc._id, 3, on))!;
        repDoc.target = dbC;
        res = await save_as(repDb, repDoc, 'jan');
        repDoc = (await open_as(repDb, repDoc._id, 'jchris'))!;
        assert.equal(res.ok, true, `should allow editing null-owner docs to admins: ${JSON.stringify(res)}`);
        assert.equal(repDoc.owner, 'jan', 'owner should be the admin now');

        // user can update their own replication docs (repDoc.owner)
        let jchrisRepDoc: Doc = { _id: 'jchris-rep-doc', source: dbC, target: dbA, user_ctx: { name: 'jchris', roles: [] } };
        res = await save_as(repDb, jchrisRepDoc, 'jchris');
        assert.equal(res.ok, true, 'should create rep doc');
        jchrisRepDoc = (await on.open(repDb, jchrisRepDoc._id))!;
        assert.equal(jchrisRepDoc.owner, 'jchris', 'should assign correct owner');
        jchrisRepDoc = (await waitForDocPos(repDb, jchrisRepDoc._id, 3, on))!;
        jchrisRepDoc = (await open_as(repDb, jchrisRepDoc._id, 'jchris'))!;
        jchrisRepDoc.target = dbB;
        res = await save_as(repDb, jchrisRepDoc, 'jchris');
        assert.equal(res.ok, true, `should allow update of rep doc: ${JSON.stringify(res)}`);

        // user should not be able to read from any view
        const ddoc = {
          _id: '_design/reps',
          views: { test: { map: 'function(doc) {if (doc._replication_state) { emit(doc._id, doc._replication_state);}}' } },
        };
        await save_as(repDb, ddoc, 'jan');
        let r = await view();
        assert.equal(r.body.error, 'forbidden', `non-admins should not be able to read a view: ${r.text}`);
        // admin should be able to read from any view
        await loginUser('jan');
        r = await view();
        await on.logout();
        assert.equal(r.body.total_rows, 2, `should allow access and list two users: ${r.text}`);
        // test _all_docs, only available for _admins
        r = await allDocs();
        assert.equal(r.body.error, 'forbidden', `non-admins should not be able to access _all_docs: ${r.text}`);
        await loginUser('jan');
        r = await allDocs();
        assert.equal(r.status, 200, "admin couldn't access _all_docs");
        await on.logout();

        r = await view();
        assert.equal(r.body.error, 'forbidden', 'non-admins should not be able to read a view');
        // a database admin should be able to read from any view
        await loginUser('benoitc');
        r = await view();
        await on.logout();
        assert.equal(r.body.total_rows, 2, `should allow access and list two users: ${r.text}`);
        r = await allDocs();
        assert.equal(r.body.error, 'forbidden', 'non-admins should not be able to access _all_docs');
        await loginUser('benoitc');
        r = await allDocs();
        assert.equal(r.status, 200, "db admin couldn't access _all_docs");
        await on.logout();

        // Verify that users can't access credentials in the "source" and "target" fields of
        // replication documents owned by other users.
        const withCreds = `http://fdmanana:foobar@${host}/${dbC}`;
        const withoutCreds = `http://${host}/${dbC}`;
        let fdmananaRepDoc: Doc = { _id: 'fdmanana-rep-doc', source: withCreds, target: dbA, user_ctx: { name: 'fdmanana', roles: [] } };
        res = await save_as(repDb, fdmananaRepDoc, 'fdmanana');
        assert.equal(res.ok, true, 'should create rep doc');
        await waitForDocPos(repDb, fdmananaRepDoc._id, 3, on);
        fdmananaRepDoc = (await open_as(repDb, fdmananaRepDoc._id, 'fdmanana'))!;
        assert.equal(fdmananaRepDoc.owner, 'fdmanana', 'should assign correct owner');
        assert.equal(fdmananaRepDoc.source, withCreds, 'source field has credentials');
        fdmananaRepDoc = (await open_as(repDb, fdmananaRepDoc._id, 'jchris'))!;
        assert.equal(fdmananaRepDoc.owner, 'fdmanana', 'should assign correct owner');
        assert.equal(fdmananaRepDoc.source, withoutCreds, "source field doesn't contain credentials");

        // _changes?include_docs=true: other users' credentials are hidden; their own, the
        // server admins' and the database admins' views show them.
        const readers = [['jchris', withoutCreds], ['fdmanana', withCreds], ['jan', withCreds], ['benoitc', withCreds]] as const;
        for (const [name, expected] of readers.filter(([who]) => changesAsUsers || who === 'jan' || who === 'benoitc')) {
          const changes = await repChanges(name);
          const doc = changes.results[changes.results.length - 1].doc;
          assert.equal(doc._id, fdmananaRepDoc._id, `Got the right doc from _changes (${name})`);
          assert.equal(doc.source, expected, `source field as ${name} sees it (doc from _changes)`);
          await on.logout();
        }

        let fdmananaRepDocOAuth: Doc = {
          _id: 'fdmanana-rep-doc-oauth',
          source: dbC,
          target: { url: `http://${host}/${dbA}`, oauth: { token: 'abc', token_secret: 'foo', consumer_key: '123', consumer_secret: '321' } },
          user_ctx: { name: 'fdmanana', roles: [] },
        };
        res = await save_as(repDb, fdmananaRepDocOAuth, 'fdmanana');
        assert.equal(res.ok, true, 'should create rep doc');
        await waitForDocPos(repDb, fdmananaRepDocOAuth._id, 3, on);
        fdmananaRepDocOAuth = (await open_as(repDb, fdmananaRepDocOAuth._id, 'fdmanana'))!;
        assert.equal(fdmananaRepDocOAuth.owner, 'fdmanana', 'should assign correct owner');
        assert.equal(typeof fdmananaRepDocOAuth.target.oauth, 'object', 'target field has oauth credentials');
        fdmananaRepDocOAuth = (await open_as(repDb, fdmananaRepDocOAuth._id, 'jchris'))!;
        assert.equal(fdmananaRepDocOAuth.owner, 'fdmanana', 'should assign correct owner');
        assert.equal(typeof fdmananaRepDocOAuth.target.oauth, 'undefined', "target field doesn't have oauth credentials");

        // Login as admin so run_on_modified_server can do its cleanup.
        await loginUser('jan');
      });
    });
  } finally {
    await own.stop();
  }
}

test('replicator_db_security: owners, who may edit replication documents, views and _all_docs for admins, credentials hidden from other users', async () => {
  await replicatorDbSecurity(false);
});

test('replicator_db_security: users read the replicator database\'s _changes?include_docs=true, other users\' credentials hidden', async () => {
  await replicatorDbSecurity(true);
});


// ============================================= replicator_db_*.js (the 1.x line's other scripts)

/** The scripts' checks of a completed replication document's `_replication_stats`. */
async function checkRepStats(repDoc: Doc, sourceDb: string, expected: { checked: number; found: number; read: number; written: number; failures: number }): Promise<void> {
  assert.equal(typeof repDoc._replication_stats, 'object', 'doc has stats');
  const stats = repDoc._replication_stats;
  assert.equal(stats.revisions_checked, expected.checked, 'right # of revisions_checked');
  assert.equal(stats.missing_revisions_found, expected.found, 'right # of missing_revisions_found');
  assert.equal(stats.docs_read, expected.read, 'right # of docs_read');
  assert.equal(stats.docs_written, expected.written, 'right # of docs_written');
  assert.equal(stats.doc_write_failures, expected.failures, 'right # of doc_write_failures');
  assert.equal(stats.checkpointed_source_seq, (await couch.info(sourceDb)).update_seq, 'right checkpointed_source_seq');
}

/** The scripts' check that each of `docs` has its copy, of the same value, in `db`. */
async function checkCopies(db: string, docs: Doc[], on = couch): Promise<void> {
  for (const doc of docs) {
    const copy = await on.open(db, doc._id);
    assert.ok(copy !== null, `${db}/${doc._id}`);
    assert.equal(copy.value, doc.value);
  }
}

/** Deletes replication documents (continuous jobs left running) and waits for their jobs to end. */
async function stopRepDocs(repDb: string, ids: string[], on = couch): Promise<void> {
  for (const id of ids) {
    const doc = await on.open(repDb, id);
    if (doc) assert.equal((await on.deleteDoc(repDb, doc)).status, 200);
  }
  await waitNoReplicationTask((t) => ids.includes(t.doc_id), on);
}

test('replicator_db_bad_rep_id: a replication_id field in a replication document is ignored; the replicator computes its own', async () => {
  const [dbA, dbB, repDb] = ['c16r_rdbadid_a', 'c16r_rdbadid_b', 'c16r_rdbadid_rep'];
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc: Doc = { _id: 'foo_rep', source: dbA, target: dbB, replication_id: '1234abc' };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    await checkCopies(dbB, docs);
    const repDoc1 = await checkRepDoc(repDb, repDoc, 'completed');
    assert.notEqual(repDoc1._replication_id, '1234abc');
  });
});

test('replicator_db_by_doc_id: a doc_ids replication document copies only the listed documents (a design document fails without user_ctx)', async () => {
  const [dbA, dbB, repDb] = ['c16r_rdbyid_a', 'c16r_rdbyid_b', 'c16r_rdbyid_rep'];
  // to test that we can replicate docs with slashes in their IDs
  const docs2 = docs1().concat([{ _id: '_design/mydesign', language: 'javascript' }]);
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs2, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc: Doc = { _id: 'foo_cont_rep_doc', source: couch.dbUrl(dbA), target: dbB, doc_ids: ['foo666', 'foo3', '_design/mydesign', 'foo999', 'foo1'] };
    assert.equal(await couch.saveOk(repDb, repDoc), true);
    await waitForRep(repDb, repDoc, 'completed');
    assert.equal((await couch.open(dbB, 'foo1'))?.value, 11);
    assert.equal(await couch.open(dbB, 'foo2'), null);
    assert.equal((await couch.open(dbB, 'foo3'))?.value, 33);
    assert.equal(await couch.open(dbB, 'foo666'), null);
    assert.equal(await couch.open(dbB, 'foo999'), null);
    assert.equal(await couch.open(dbB, '_design/mydesign'), null);
    await checkRepStats((await couch.open(repDb, repDoc._id))!, dbA, { checked: 3, found: 3, read: 3, written: 2, failures: 1 });
  });
});

test('replicator_db_credential_delegation: a job runs with its document\'s user_ctx roles; only a role admin of the target copies design documents', async () => {
  const own = await startServer();
  const on = new Couch(() => own.url);
  const [dbA, dbB, repDb, usersDb] = ['c16r_rddeleg_a', 'c16r_rddeleg_b', 'c16r_rddeleg_rep', 'c16r_rddeleg_auth'];
  const docs = docs1();
  const ddoc: Doc = { _id: '_design/beer', language: 'javascript' };
  try {
    await withRepDb(repDb, usersDb, async () => {
      await ensureDb(usersDb, on);
      await populate_db(usersDb, [], usersDb, on);
      assert.equal(await on.saveOk(usersDb, prepareUserDoc({ name: 'joe', roles: ['god', 'erlanger'] }, 'erly')), true);
      await populate_db(dbA, docs.concat([ddoc]), usersDb, on);
      await populate_db(dbB, [], usersDb, on);
      assert.equal(await on.setSecObj(dbB, { admins: { names: [], roles: ['god'] } }), true);

      await on.runOnModifiedServer([
        { section: 'couch_httpd_auth', key: 'iterations', value: '1' },
        { section: 'admins', key: 'fdmanana', value: 'qwerty' },
      ], async () => {
        assert.equal((await on.login('fdmanana', 'qwerty')).ok, true);
        const session = await on.session();
        assert.equal(session.userCtx.name, 'fdmanana');
        assert.notEqual(session.userCtx.roles.indexOf('_admin'), -1);

        const repDoc: Doc = { _id: 'foo_rep_del_doc_1', source: dbA, target: dbB, user_ctx: { name: 'joe', roles: ['erlanger'] } };
        assert.equal(await on.saveOk(repDb, repDoc), true);
        await waitForRep(repDb, repDoc, 'completed', on);
        await checkCopies(dbB, docs, on);
        // design doc was not replicated, because joe is not an admin of db B
        assert.equal(await on.open(dbB, ddoc._id), null);

        // the same replication with the role "god" in the delegated user context
        const repDoc2: Doc = { _id: 'foo_rep_del_doc_2', source: dbA, target: dbB, user_ctx: { name: 'joe', roles: ['erlanger', 'god'] } };
        assert.equal(await on.saveOk(repDb, repDoc2), true);
        await waitForRep(repDb, repDoc2, 'completed', on);
        await checkCopies(dbB, docs, on);
        // anyone with a 'god' role is an admin of db B, so the job can write design docs to it
        const copy = await on.open(dbB, ddoc._id);
        assert.ok(copy !== null);
        assert.equal(copy.language, ddoc.language);
      });
    }, on);
  } finally {
    await own.stop();
  }
});

test('replicator_db_identical_continuous: two documents stating one continuous replication run it once; deleting the second leaves it running, deleting the first stops it', async () => {
  const [dbA, dbB, repDb] = ['c16r_rdidcont_a', 'c16r_rdidcont_b', 'c16r_rdidcont_rep'];
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    let repDoc1: Doc = { _id: 'foo_dup_cont_rep_doc_1', source: couch.dbUrl(dbA), target: dbB, continuous: true };
    let repDoc2: Doc = { _id: 'foo_dup_cont_rep_doc_2', source: couch.dbUrl(dbA), target: dbB, continuous: true };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    assert.equal(await couch.saveOk(repDb, repDoc2), true);

    await waitForSeq(dbA, dbB);
    await checkCopies(dbB, docs);
    // The script reads both documents once the documents are copied; the replicator may write
    // their fields a moment later, so here it waits for them (it asserts nothing itself).
    await waitForRep(repDb, repDoc1, 'triggered');
    const until = Date.now() + WAIT_MS;
    while ((await couch.open(repDb, repDoc2._id))?._replication_id === undefined && Date.now() < until) await sleep(50);
    repDoc1 = (await couch.open(repDb, 'foo_dup_cont_rep_doc_1'))!;
    assert.ok(repDoc1 !== null);
    assert.equal(repDoc1._replication_state, 'triggered');
    assert.equal(typeof repDoc1._replication_state_time, 'string');
    assert.equal(typeof repDoc1._replication_id, 'string');
    repDoc2 = (await couch.open(repDb, 'foo_dup_cont_rep_doc_2'))!;
    assert.ok(repDoc2 !== null);
    assert.equal(typeof repDoc2._replication_state, 'undefined');
    assert.equal(typeof repDoc2._replication_state_time, 'undefined');
    assert.equal(repDoc2._replication_id, repDoc1._replication_id);

    assert.equal(await couch.saveOk(dbA, { _id: 'foo666', value: 999 }), true);
    await waitForSeq(dbA, dbB);
    assert.equal((await couch.open(dbB, 'foo666'))?.value, 999);

    // deleting the second replication doc neither affects the first one nor stops the replication
    assert.equal((await couch.deleteDoc(repDb, repDoc2)).body.ok, true);
    repDoc1 = (await couch.open(repDb, 'foo_dup_cont_rep_doc_1'))!;
    assert.ok(repDoc1 !== null);
    assert.equal(repDoc1._replication_state, 'triggered');
    assert.equal(typeof repDoc1._replication_state_time, 'string');

    assert.equal(await couch.saveOk(dbA, { _id: 'foo5000', value: 5000 }), true);
    await waitForSeq(dbA, dbB);
    assert.equal((await couch.open(dbB, 'foo5000'))?.value, 5000);

    // deleting the first replication document stops the replication (the script waits a fixed
    // time; here until its task is gone, then 200 ms as replicator_db_continuous)
    assert.equal((await couch.deleteDoc(repDb, repDoc1)).body.ok, true);
    await waitNoReplicationTask((t) => t.doc_id === 'foo_dup_cont_rep_doc_1' || t.doc_id === 'foo_dup_cont_rep_doc_2');
    assert.equal(await couch.saveOk(dbA, { _id: 'foo1983', value: 1983 }), true);
    await sleep(200);
    assert.equal(await couch.open(dbB, 'foo1983'), null);
  });
});

test('replicator_db_invalid_filter: a replication document naming a filter that does not exist ends in error without a _replication_id (COUCHDB-1199)', async () => {
  const [dbA, dbB, repDb, usersDb] = ['c16r_rdbadfilt_a', 'c16r_rdbadfilt_b', 'c16r_rdbadfilt_rep', 'c16r_rdbadfilt_auth'];
  await withRepDb(repDb, usersDb, async () => {
    // a source that does not exist
    let repDoc1: Doc = { _id: 'rep1', source: 'c16r_rdbadfilt_foo', target: 'c16r_rdbadfilt_bar', filter: 'test/foofilter' };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    await waitForRep(repDb, repDoc1, 'error');
    repDoc1 = (await couch.open(repDb, repDoc1._id))!;
    assert.equal(typeof repDoc1._replication_id, 'undefined');
    assert.equal(repDoc1._replication_state, 'error');

    await populate_db(dbA, docs1(), usersDb);
    await populate_db(dbB, [], usersDb);
    // a source without the filter's design document
    let repDoc2: Doc = { _id: 'rep2', source: dbA, target: dbB, filter: 'test/foofilter' };
    assert.equal(await couch.saveOk(repDb, repDoc2), true);
    await waitForRep(repDb, repDoc2, 'error');
    repDoc2 = (await couch.open(repDb, repDoc2._id))!;
    assert.equal(typeof repDoc2._replication_id, 'undefined');
    assert.equal(repDoc2._replication_state, 'error');

    const ddoc: Doc = {
      _id: '_design/mydesign',
      language: 'javascript',
      filters: { myfilter: String(function (_doc: unknown, _req: unknown) { return true; }) },
    };
    assert.equal(await couch.saveOk(dbA, ddoc), true);
    let repDoc3: Doc = { _id: 'rep3', source: dbA, target: dbB, filter: 'mydesign/myfilter' };
    assert.equal(await couch.saveOk(repDb, repDoc3), true);
    await waitForRep(repDb, repDoc3, 'completed');
    repDoc3 = (await couch.open(repDb, repDoc3._id))!;
    assert.equal(typeof repDoc3._replication_id, 'string');
    assert.equal(repDoc3._replication_state, 'completed');
  });
});

test('replicator_db_successive: a second document stating a completed replication runs it again from its checkpoint', async () => {
  const [dbA, dbB, repDb] = ['c16r_rdsucc_a', 'c16r_rdsucc_b', 'c16r_rdsucc_rep'];
  const docs = docs1();
  await withRepDb(repDb, undefined, async () => {
    await populate_db(dbA, docs, undefined);
    await populate_db(dbB, [], undefined);
    const repDoc1: Doc = { _id: 'foo_ident_rep_1', source: dbA, target: dbB };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    await waitForRep(repDb, repDoc1, 'completed');
    await checkCopies(dbB, docs);
    const repDoc1_copy = await checkRepDoc(repDb, repDoc1, 'completed');
    await checkRepStats(repDoc1_copy, dbA, { checked: docs.length, found: docs.length, read: docs.length, written: docs.length, failures: 0 });

    const newDoc: Doc = { _id: 'doc666', value: 666 };
    assert.equal(await couch.saveOk(dbA, newDoc), true);
    await sleep(200);
    // not replicated because first replication is complete (not continuous)
    assert.equal(await couch.open(dbB, newDoc._id), null);

    const repDoc2: Doc = { _id: 'foo_ident_rep_2', source: dbA, target: dbB };
    assert.equal(await couch.saveOk(repDb, repDoc2), true);
    await waitForRep(repDb, repDoc2, 'completed');
    assert.equal((await couch.open(dbB, newDoc._id))?.value, newDoc.value);
    const repDoc2_copy = await checkRepDoc(repDb, repDoc2, 'completed');
    assert.equal(repDoc2_copy._replication_id, repDoc1_copy._replication_id);
    await checkRepStats(repDoc2_copy, dbA, { checked: 1, found: 1, read: 1, written: 1, failures: 0 });
  });
});

test('replicator_db_swap_rep_db: naming another replicator database stops the first one\'s jobs and starts the new one\'s; naming the first again swaps back', async () => {
  const repDb = 'c16r_rdswap_rep';
  const usersDb = 'c16r_rdswap_auth';
  const [repDb2, dbA, dbA_copy, dbB, dbB_copy, dbC, dbC_copy] = ['rep_2', 'a', 'a_copy', 'b', 'b_copy', 'c', 'c_copy'].map((n) => `c16r_rdswap_${n}`) as [string, string, string, string, string, string, string];
  const docs = docs1();
  await withRepDb(repDb, usersDb, async () => {
    for (const db of [dbA, dbB, dbC]) await populate_db(db, docs, usersDb);
    for (const db of [dbA_copy, dbB_copy, dbC_copy, repDb2]) await populate_db(db, [], usersDb);
    const repDoc1: Doc = { _id: 'rep1', source: couch.dbUrl(dbA), target: dbA_copy, continuous: true };
    const repDoc2: Doc = { _id: 'rep2', source: couch.dbUrl(dbB), target: dbB_copy, continuous: true };
    const repDoc3: Doc = { _id: 'rep3', source: couch.dbUrl(dbC), target: dbC_copy, continuous: true };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    assert.equal(await couch.saveOk(repDb, repDoc2), true);
    await waitForSeq(dbA, dbA_copy);
    await waitForSeq(dbB, dbB_copy);

    const setRepDb = async (name: string) => {
      const r = await couch.request('PUT', '/_config/replicator/db', { body: name, headers: { 'X-Couch-Persist': 'false' } });
      assert.equal(r.status, 200);
    };
    await setRepDb(repDb2);
    // The script gives the switch 500 ms, then waits for copies that must not come (its waits
    // only time out); here until the first database's jobs are gone.
    await waitNoReplicationTask((t) => t.doc_id === 'rep1' || t.doc_id === 'rep2');

    const new_doc: Doc = { _id: 'foo666', value: 666 };
    assert.equal(await couch.saveOk(dbA, new_doc), true);
    delete new_doc._rev;
    assert.equal(await couch.saveOk(dbB, new_doc), true);
    delete new_doc._rev;

    assert.equal(await couch.saveOk(repDb2, repDoc3), true);
    await waitForSeq(dbC, dbC_copy);
    for (const db of [dbA_copy, dbB_copy, dbC_copy]) await checkCopies(db, docs);

    // replications rep1 and rep2 should have been stopped when the replicator database was swapped
    assert.equal(await couch.open(dbA_copy, new_doc._id), null);
    assert.equal(await couch.open(dbB_copy, new_doc._id), null);

    // after naming the former replicator database again, rep1 and rep2 resume, rep3 stops (the
    // script saves to dbC at once and waits 1 s; here until rep3's job is gone, then saves)
    await setRepDb(repDb);
    await waitNoReplicationTask((t) => t.doc_id === 'rep3');
    assert.equal(await couch.saveOk(dbC, new_doc), true);
    await waitForSeq(dbA, dbA_copy);
    await waitForSeq(dbB, dbB_copy);
    assert.equal((await couch.open(dbA_copy, new_doc._id))?.value, new_doc.value);
    assert.equal((await couch.open(dbB_copy, new_doc._id))?.value, new_doc.value);
    assert.equal(await couch.open(dbC_copy, new_doc._id), null);

    await stopRepDocs(repDb, ['rep1', 'rep2']);
    await couch.deleteDb(repDb2);
  });
});

test('replicator_db_update_security: a replicator database given a readers list still runs its documents\' replications', async () => {
  const [dbA, dbB, dbA_copy, dbB_copy, repDb, usersDb] = ['a', 'b', 'a_copy', 'b_copy', 'rep', 'auth'].map((n) => `c16r_rdupdsec_${n}`) as [string, string, string, string, string, string];
  const docs = makeDocs(1, 3);
  await withRepDb(repDb, usersDb, async () => {
    await populate_db(dbA, docs, usersDb);
    await populate_db(dbB, docs, usersDb);
    await populate_db(dbA_copy, [], usersDb);
    await populate_db(dbB_copy, [], usersDb);
    const repDoc1: Doc = { _id: 'rep1', source: couch.dbUrl(dbA), target: dbA_copy };
    const repDoc2: Doc = { _id: 'rep2', source: couch.dbUrl(dbB), target: dbB_copy };
    assert.equal(await couch.saveOk(repDb, repDoc1), true);
    await waitForRep(repDb, repDoc1, 'completed');
    assert.equal(await couch.setSecObj(repDb, { readers: { names: ['joe'] } }), true);
    assert.equal(await couch.saveOk(repDb, repDoc2), true);
    await waitForRep(repDb, repDoc2, 'completed');
    // The script ends on its waits; here what they wait for is checked.
    await checkRepDoc(repDb, repDoc1, 'completed');
    await checkRepDoc(repDb, repDoc2, 'completed');
    for (const doc of docs) assert.ok((await couch.open(dbB_copy, doc._id)) !== null, doc._id);
  });
});
