/**
 * CouchDB 3's Elixir config, compaction, purge, UTF-8, UUIDs, bulk, HTTP and form tests
 * (test/elixir/test/config_test.exs, compact_test.exs, view_compaction_test.exs, purge_test.exs,
 * utf8_test.exs, uuids_test.exs, lots_of_docs_test.exs, large_docs_text.exs, batch_save_test.exs,
 * http_test.exs and form_submit_test.exs, from the 3.x line), ported to real HTTP against Settee on
 * a single node.
 *
 * Versions: the 3.x-line files carrying `@moduletag kind:` (3.2/3.3 era) for every module but two.
 * compact_test.exs is `:pending` in that era, so the later 3.x version (two attachment documents,
 * a deleted attachment answering 404) is ported, which CouchDB runs. config_test.exs is the
 * `kind: :single_node` version ([httpd] config_whitelist, `log.level`), plus "Only JSON strings are
 * accepted", which only the later 3.x version has. large_docs is spelt large_docs_text.exs in 3.x.
 *
 * As in couchdb3-basics.test.ts, every request is made as the server admin `adm` (Basic auth) with
 * Content-Type application/json unless given; `set_config`, `@tag config:` and
 * `run_on_modified_server` are `withConfig`. CouchDB 3's `/_node/{node}/_config` is `/_config`.
 * Tests tagged `:pending` in the originals are ported but skipped. Where CouchDB 3 departs from
 * CouchDB 1.6 on purpose (the status of `_purge`, of too large a `_uuids` count), the tests expect 1.6's answer, which Settee gives,
 * and say so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { elixirAdminClient, elixirDbHelpers, withNodeConfig, makeDocs } from '../helpers/couch-elixir.js';
import { waitFor } from '../helpers/wait.js';

const { server, c: anonymous } = await serverForFile();
const c = await elixirAdminClient(server.url, anonymous);
/** The originals' create_db, delete_db, create_doc and bulk_save; `mkdb` is `@tag :with_db`. */
const { dbName, createDb, deleteDb, mkdb, createDoc, bulkSave } = elixirDbHelpers(c, 'c3-misc');

/** The originals' info: GET /{db}, 200. */
async function info(db: string) {
  const r = await c.get(`/${db}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/**
 * The originals' retry_until: retries while the condition is false or an assertion in it fails
 * (their bound is 30 s, or 10 s in compact; ours is generous).
 */
async function retryUntil(what: string, condition: () => Promise<boolean | void>): Promise<void> {
  let lastError: unknown;
  try {
    await waitFor(what, async () => {
      try {
        return (await condition()) !== false;
      } catch (e) {
        if (!(e instanceof assert.AssertionError)) throw e;
        lastError = e;
        return false;
      }
    });
  } catch (e) {
    throw lastError ?? e;
  }
}

/** The originals' compact: POST _compact is 202, then wait for compact_running false. */
async function compact(db: string) {
  const r = await c.post(`/${db}/_compact`);
  assert.equal(r.status, 202, r.text);
  await retryUntil(`compaction of ${db}`, async () => (await info(db)).compact_running === false);
  return r.body;
}

/** The originals' set_config. */
const withConfig = (section: string, key: string, value: string, body: () => Promise<void>) => withNodeConfig(c, section, key, value, body);

// ------------------------------------------------------------------ config_test.exs

/** The originals' context[:config_url]: `/_node/node1@127.0.0.1/_config` in CouchDB 3. */
const configUrl = '/_config';

async function configSetup() {
  const r = await c.get(configUrl);
  assert.equal(r.status, 200, r.text);
  return r.body as Record<string, Record<string, string>>;
}

async function setConfig(section: string, key: string, val: string, statusAssert: number | null = 200) {
  const r = await c.put(`${configUrl}/${section}/${key}`, val, { headers: { 'X-Couch-Persist': 'false' } });
  if (statusAssert !== null) assert.equal(r.status, statusAssert, `PUT ${section}/${key}: ${r.status} ${r.text}`);
  return r;
}

async function getConfig(section: string, key?: string, statusAssert = 200) {
  const r = await c.get(key ? `${configUrl}/${section}/${key}` : `${configUrl}/${section}`);
  assert.equal(r.status, statusAssert, r.text);
  return r.body;
}

async function deleteConfig(section: string, key: string, statusAssert = 200) {
  const r = await c.del(`${configUrl}/${section}/${key}`);
  assert.equal(r.status, statusAssert, `DELETE ${section}/${key}: ${r.status} ${r.text}`);
}

/** Not in the originals, which leave some whitelists set: removes one so later tests do not depend on order. */
async function dropWhitelist(): Promise<void> {
  await c.del(`${configUrl}/httpd/config_whitelist`, { headers: { 'X-Couch-Persist': 'false' } });
}

test('config: CouchDB respects configured protocols', { skip: 'tagged :pending in the original (no body)' }, () => {});

test('config: Standard config options are present', async () => {
  const config = await configSetup();
  assert.ok(config.couchdb?.database_dir);
  assert.ok(config.log?.level);
});

test('config: Settings can be altered with undefined whitelist allowing any change', async () => {
  const config = await configSetup();
  // The original reads context["config"] (string key), always nil; its intent is asserted here.
  assert.ok(!config.httpd?.config_whitelist, 'Default whitelist is empty');
  await setConfig('test', 'foo', 'bar');
  assert.equal((await getConfig('test')).foo, 'bar');
  assert.equal(await getConfig('test', 'foo'), 'bar');
});

test('config: Server-side password hashing, and raw updates disabling that', async () => {
  await configSetup();
  const plainPass = 's3cret';
  await setConfig('admins', 'administrator', plainPass);
  // Couch.login: POST /_session with the credentials in the body; ok and a cookie.
  const login = await c.post('/_session', { username: 'administrator', password: plainPass });
  assert.equal(login.body?.ok, true, `login: ${login.status} ${login.text}`);
  assert.ok(login.headers['set-cookie'], 'login sets a cookie');
  const hashPass = (await getConfig('admins', 'administrator')) as string;
  assert.ok(/^-pbkdf2-/.test(hashPass) || /^-hashed-/.test(hashPass), hashPass);
  await deleteConfig('admins', 'administrator');
  assert.ok((await c.del('/_session')).body?.ok);
});

test('config: PORT `BUGGED` ?raw tests from config.js', { skip: 'tagged :pending in the original (no body)' }, () => {});

test('config: Non-term whitelist values allow further modification of the whitelist', async () => {
  await configSetup();
  const val = '!This is an invalid Erlang term!';
  await setConfig('httpd', 'config_whitelist', val);
  assert.equal(await getConfig('httpd', 'config_whitelist'), val);
  await deleteConfig('httpd', 'config_whitelist');
});

test('config: Non-list whitelist values allow further modification of the whitelist', async () => {
  await configSetup();
  const val = '{[yes, a_valid_erlang_term, but_unfortunately, not_a_list]}';
  await setConfig('httpd', 'config_whitelist', val);
  assert.equal(await getConfig('httpd', 'config_whitelist'), val);
  await deleteConfig('httpd', 'config_whitelist');
});

test('config: Keys not in the whitelist may not be modified', async () => {
  await configSetup();
  try {
    const val = '[{httpd,config_whitelist}, {test,foo}]';
    await setConfig('httpd', 'config_whitelist', val);
    assert.equal(await getConfig('httpd', 'config_whitelist'), val);
    await setConfig('test', 'foo', 'PUT to whitelisted config variable');
    await deleteConfig('test', 'foo');
  } finally {
    await dropWhitelist();
  }
});

test('config: Non-2-tuples in the whitelist are ignored', async () => {
  await configSetup();
  try {
    const val =
      '[{httpd,config_whitelist}, these, {are}, {nOt, 2, tuples}, [so], [they, will], [all, become, noops], {test,foo}]';
    await setConfig('httpd', 'config_whitelist', val);
    assert.equal(await getConfig('httpd', 'config_whitelist'), val);
    await setConfig('test', 'foo', 'PUT to whitelisted config variable');
    await deleteConfig('test', 'foo');
  } finally {
    await dropWhitelist();
  }
});

test('config: Atoms, binaries, and strings suffice as whitelist sections and keys.', async () => {
  await configSetup();
  const vals = ['{test,foo}', '{"test","foo"}', '{<<"test">>,<<"foo">>}'];
  try {
    for (const pair of vals) {
      // The original's whitelist lacks its closing bracket. CouchDB 1.6, which Settee follows,
      // then lets only the whitelist itself change; closed, each form of the pair is honoured.
      await setConfig('httpd', 'config_whitelist', `[{httpd,config_whitelist}, ${pair}`);
      const pairFormat = ({ t: 'tuple', '"': 'string', '<': 'binary' } as Record<string, string>)[pair[1]!];
      await setConfig('test', 'foo', `PUT with ${pairFormat}`, 400);
      await setConfig('httpd', 'config_whitelist', `[{httpd,config_whitelist}, ${pair}]`);
      await setConfig('test', 'foo', `PUT with ${pairFormat}`);
      await deleteConfig('test', 'foo');
    }
    await deleteConfig('httpd', 'config_whitelist');
  } finally {
    await dropWhitelist();
  }
});

test('config: Blacklist is functional', async () => {
  await configSetup();
  const sections = [
    'daemons',
    'external',
    'httpd_design_handlers',
    'httpd_db_handlers',
    'native_query_servers',
    'os_daemons',
    'query_servers',
  ];
  const answers: string[] = [];
  for (const section of sections) {
    const r = await setConfig(section, 'wohali', 'rules', null);
    answers.push(`${section}: ${r.status} ${r.text.trim()}`);
    // Not in the original: a change that was let through is undone before asserting.
    if (r.status === 200) await c.del(`${configUrl}/${section}/wohali`, { headers: { 'X-Couch-Persist': 'false' } });
  }
  for (const [i, section] of sections.entries()) {
    assert.match(answers[i]!, /: 403 /, `PUT ${configUrl}/${section}/wohali should be 403; answers: ${answers.join(' | ')}`);
  }
});

test('config: Reload config', async () => {
  await configSetup();
  const r = await c.post(`${configUrl}/_reload`);
  assert.equal(r.status, 200, `POST ${configUrl}/_reload: ${r.status} ${r.text}`);
});

// From the later 3.x version only. "Those are negative test cases. The positive cases are
// implicitly tested by other ones."
test('config: Only JSON strings are accepted', async () => {
  await configSetup();
  // CouchDB 3's own path (/_config answers the same, config.test.ts).
  const url = '/_node/_local/_config/a/b';
  const values = ['true', '11', '{}', '{"testing": [1, 2, 3]}'];
  for (const value of values) {
    const r = await c.raw('PUT', url, value);
    // Not in the original: a value that was accepted is removed again.
    if (r.status === 200) await c.del(url);
    assert.equal(r.status, 400, `PUT ${url} ${value}: ${r.status} ${r.text}`);
  }
});

// ------------------------------------------------------------------ compact_test.exs

const attDocId1 = 'att_doc1';
const attDocId2 = 'att_doc2';
const attName = 'foo.txt';
const attPlaintext = 'This is plain text'.repeat(100);

test('compact: compaction reduces size of deleted docs', async () => {
  const db = await mkdb('compact');
  // populate
  let docs: Record<string, any>[] = makeDocs(0, 19);
  let r = await c.post(`/${db}/_bulk_docs`, { docs });
  assert.ok([201, 202].includes(r.status), r.text);
  docs = docs.map((d, i) => {
    assert.equal(r.body[i].id, d._id);
    return { ...d, _rev: r.body[i].rev };
  });
  const attDoc = (id: string) => ({
    _id: id,
    _attachments: { [attName]: { content_type: 'text/plain', data: Buffer.from(attPlaintext).toString('base64') } },
  });
  r = await c.put(`/${db}/${attDocId1}`, attDoc(attDocId1));
  assert.ok([201, 202].includes(r.status), r.text);
  r = await c.put(`/${db}/${attDocId2}`, attDoc(attDocId2));
  assert.ok([201, 202].includes(r.status), r.text);
  docs.push({ _id: attDocId2, _rev: r.body.rev });

  let dbInfo = await info(db);
  const origDataSize = dbInfo.sizes?.active;
  const origDiskSize = dbInfo.sizes?.file;
  const startTime = dbInfo.instance_start_time;
  assert.ok(Number.isInteger(origDataSize) && Number.isInteger(origDiskSize), `sizes: ${JSON.stringify(dbInfo.sizes)}`);
  assert.ok(origDataSize < origDiskSize, `sizes: ${JSON.stringify(dbInfo.sizes)}`);

  // delete
  r = await c.post(`/${db}/_bulk_docs`, { docs: docs.map((d) => ({ ...d, _deleted: true })) });
  assert.ok([201, 202].includes(r.status), r.text);
  assert.equal((await c.post(`/${db}/_ensure_full_commit`)).body?.ok, true);

  // The original compares the top-level data_size, which CouchDB 3 no longer has (nil, so its
  // comparisons always hold). Settee keeps 1.6's data_size, which shrinks as documents are
  // deleted; what compaction must shrink is the file, checked below.
  const deletedDiskSize = (await info(db)).sizes.file as number;

  await compact(db);

  await retryUntil('compaction results', async () => {
    assert.equal((await info(db)).instance_start_time, startTime);
    assert.equal((await c.get(`/${db}`)).body.doc_count, 1);
    // assert_attachment_available
    const att = await c.get(`/${db}/${attDocId1}/${attName}`);
    assert.equal(att.text, attPlaintext);
    assert.equal(att.headers['content-type'], 'text/plain');
    // assert_deleted_attachment_not_available
    const gone = await c.get(`/${db}/${attDocId2}/${attName}`);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, { error: 'not_found', reason: 'deleted' });
    dbInfo = await info(db);
    const finalDataSize = dbInfo.sizes?.active;
    const finalDiskSize = dbInfo.sizes?.file;
    assert.ok(finalDataSize < finalDiskSize, `sizes: ${JSON.stringify(dbInfo.sizes)}`);
    assert.ok(Number.isInteger(finalDataSize) && Number.isInteger(finalDiskSize));
    assert.ok(finalDiskSize < deletedDiskSize, `sizes.file ${finalDiskSize} < ${deletedDiskSize} before compaction`);
  });
  await deleteDb(db);
});

// ------------------------------------------------------------------ view_compaction_test.exs

test('view_compaction: view compaction', async () => {
  const numDocs = 1000;
  const ddoc = {
    _id: '_design/foo',
    language: 'javascript',
    views: {
      view1: { map: 'function(doc) { emit(doc._id, doc.value) }' },
      view2: {
        map: "function(doc) { if (typeof(doc.integer) === 'number') {emit(doc._id, doc.integer);} }",
        reduce: 'function(keys, values, rereduce) { return sum(values); }',
      },
    },
  };
  const bulkSaveForUpdate = async (db: string, docs: Record<string, any>[]) => {
    const revs = (await bulkSave(db, docs)).body;
    return docs.map((m) => ({ ...m, _rev: revs[Number(m._id)].rev, integer: m.integer + 1 }));
  };
  const view = async (db: string, name: string) => {
    const [root, v] = name.split('/');
    const r = await c.get(`/${db}/_design/${root}/_view/${v}`);
    assert.ok([200, 201].includes(r.status), r.text);
    return r;
  };

  const db = await mkdb('view-compaction');
  await createDoc(db, ddoc);
  let docs = makeDocs(0, numDocs - 1);
  docs = await bulkSaveForUpdate(db, docs);

  assert.equal((await view(db, 'foo/view1')).body.rows.length, numDocs);
  assert.equal((await view(db, 'foo/view2')).body.rows.length, 1);
  let r = await c.get(`/${db}/_design/foo/_info`);
  assert.equal(r.body.view_index.update_seq, numDocs + 1);

  docs = await bulkSaveForUpdate(db, docs);
  assert.equal((await view(db, 'foo/view1')).body.rows.length, numDocs);
  assert.equal((await view(db, 'foo/view2')).body.rows.length, 1);
  r = await c.get(`/${db}/_design/foo/_info`);
  assert.equal(r.body.view_index.update_seq, 2 * numDocs + 1);

  await bulkSave(db, docs);
  assert.equal((await view(db, 'foo/view1')).body.rows.length, numDocs);
  assert.equal((await view(db, 'foo/view2')).body.rows.length, 1);
  r = await c.get(`/${db}/_design/foo/_info`);
  assert.equal(r.body.view_index.update_seq, 3 * numDocs + 1);

  const diskSizeBeforeCompact = r.body.view_index.sizes?.file;
  const dataSizeBeforeCompact = r.body.view_index.sizes?.active;
  assert.ok(Number.isInteger(diskSizeBeforeCompact), `view_index.sizes: ${JSON.stringify(r.body.view_index.sizes)}`);
  assert.ok(dataSizeBeforeCompact < diskSizeBeforeCompact, `view_index.sizes: ${JSON.stringify(r.body.view_index.sizes)}`);

  r = await c.post(`/${db}/_compact/foo`);
  assert.equal(r.body?.ok, true, r.text);
  await retryUntil('view compaction', async () =>
    (await c.get(`/${db}/_design/foo/_info`)).body.view_index.compact_running === false);

  assert.equal((await view(db, 'foo/view1')).body.rows.length, numDocs);
  assert.equal((await view(db, 'foo/view2')).body.rows.length, 1);
  r = await c.get(`/${db}/_design/foo/_info`);
  assert.equal(r.body.view_index.update_seq, 3 * numDocs + 1);

  const diskSizeAfterCompact = r.body.view_index.sizes?.file;
  const dataSizeAfterCompact = r.body.view_index.sizes?.active;
  assert.ok(diskSizeAfterCompact < diskSizeBeforeCompact, `file ${diskSizeAfterCompact} < ${diskSizeBeforeCompact}`);
  assert.ok(Number.isInteger(dataSizeAfterCompact));
  assert.ok(dataSizeAfterCompact < diskSizeAfterCompact, `view_index.sizes: ${JSON.stringify(r.body.view_index.sizes)}`);
  await deleteDb(db);
});

// ------------------------------------------------------------------ purge_test.exs

/**
 * CouchDB 3 answers a successful `_purge` with 201 (202 when not every copy wrote), the body
 * `{"purge_seq": null, "purged": {...}}`; CouchDB 1.6, and so Settee, answer 200 with a numeric
 * purge_seq. The tests below expect 1.6's status.
 */
const PURGE_OK = 200;

async function openDoc(db: string, id: string | number, expect = 200) {
  const r = await c.get(`/${db}/${id}`);
  assert.equal(r.status, expect, `GET /${db}/${id}: ${r.text}`);
  return r.body;
}

async function openRev(db: string, id: string, rev: string, expect: number) {
  const r = await c.get(`/${db}/${id}?rev=${rev}`);
  assert.equal(r.status, expect, `GET /${db}/${id}?rev=${rev}: ${r.text}`);
  return r.body;
}

async function testAllDocsTwice(db: string, numDocs: number, singleDocExpect: number, offset = 0) {
  let r = await c.get(`/${db}/_design/test/_view/all_docs_twice`);
  assert.equal(r.status, 200, r.text);
  const rows = r.body.rows;
  for (let x = 0; x <= numDocs - offset; x++) {
    assert.equal(rows[2 * x]?.key, x + offset + 1);
    assert.equal(rows[2 * x + 1]?.key, x + offset + 1);
  }
  r = await c.get(`/${db}/_design/test/_view/single_doc`);
  assert.equal(r.body.total_rows, singleDocExpect);
}

test('purge: purge documents', async () => {
  const db = await mkdb('purge');
  const designDoc = {
    _id: '_design/test',
    language: 'javascript',
    views: {
      all_docs_twice: { map: 'function(doc) { emit(doc.integer, null); emit(doc.integer, null) }' },
      single_doc: { map: 'function(doc) { if (doc._id == "1") { emit(1, null) }}' },
    },
  };
  await createDoc(db, designDoc);
  const numDocs = 10;
  await bulkSave(db, makeDocs(1, numDocs + 1));
  await testAllDocsTwice(db, numDocs, 1);

  const dbInfo = await info(db);
  const doc1 = await openDoc(db, 1);
  const doc2 = await openDoc(db, 2);
  let r = await c.post(`/${db}/_purge`, { 1: [doc1._rev], 2: [doc2._rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);
  const result = r.body;
  assert.equal(result.purged['1'][0], doc1._rev);
  assert.equal(result.purged['2'][0], doc2._rev);

  await openDoc(db, 1, 404);
  await openDoc(db, 2, 404);

  const purgedInfo = await info(db);
  assert.notEqual(purgedInfo.purge_seq, dbInfo.purge_seq);

  await testAllDocsTwice(db, numDocs, 0, 2);

  // purge sequences are preserved after compaction (COUCHDB-1021)
  await compact(db);
  const compactedInfo = await info(db);
  assert.equal(compactedInfo.purge_seq, purgedInfo.purge_seq);

  // purge documents twice in a row without loading views
  // (causes full view rebuilds)
  const doc3 = await openDoc(db, 3);
  const doc4 = await openDoc(db, 4);
  r = await c.post(`/${db}/_purge`, { 3: [doc3._rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);
  r = await c.post(`/${db}/_purge`, { 4: [doc4._rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);

  await testAllDocsTwice(db, numDocs, 0, 4);
  await deleteDb(db);
});

test('purge: COUCHDB-1065', async () => {
  const dbA = await mkdb('purge-1065-a');
  const dbB = dbName('purge-1065-b');
  await createDb(dbB);
  const docA = await createDoc(dbA, { _id: 'test', a: 1 });
  const docB = await createDoc(dbB, { _id: 'test', a: 2 });
  // replicate: local names, as the originals' helper leaves names without a scheme alone.
  const rep = await c.post('/_replicate', { source: dbA, target: dbB });
  assert.ok(rep.status >= 200 && rep.status < 300, `_replicate: ${rep.status} ${rep.text}`);

  await openRev(dbB, 'test', docA.body.rev, 200);
  await openRev(dbB, 'test', docB.body.rev, 200);

  let r = await c.post(`/${dbB}/_purge`, { test: [docA.body.rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);
  await openRev(dbB, 'test', docA.body.rev, 404);

  r = await c.post(`/${dbB}/_purge`, { test: [docB.body.rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);
  await openRev(dbB, 'test', docB.body.rev, 404);

  r = await c.post(`/${dbB}/_purge`, { test: [docA.body.rev, docB.body.rev] });
  assert.equal(r.status, PURGE_OK, `CouchDB 3: 201; 1.6: 200 — ${r.text}`);

  await deleteDb(dbB);
  await deleteDb(dbA);
});

// ------------------------------------------------------------------ utf8_test.exs

test('utf8: UTF8 support', async () => {
  const db = await mkdb('utf8');
  const texts = [
    '1. Ascii: hello',
    '2. Russian: На берегу пустынных волн',
    '3. Math: ∮ E⋅da = Q,  n → ∞, ∑ f(i) = ∏ g(i),',
    '4. Geek: STARGΛ̊TE SG-1',
    '5. Braille: ⡌⠁⠧⠑ ⠼⠁⠒  ⡍⠜⠇⠑⠹⠰⠎ ⡣⠕⠌',
    '6. null \u0000 byte',
  ];
  for (const [index, string] of texts.entries()) {
    const r = await c.post(`/${db}?w=3`, { _id: String(index), text: string });
    assert.ok([201, 202].includes(r.status), r.text);
  }
  for (const index of texts.keys()) {
    const r = await c.get(`/${db}/${index}`);
    const { _id: id, text } = r.body;
    assert.equal(r.status, 200);
    assert.equal(text, texts[Number(id)]);
  }
  const designDoc = {
    _id: '_design/temp_utf8_support',
    language: 'javascript',
    views: { view: { map: 'function(doc) { emit(null, doc.text) }' } },
  };
  const designResp = await c.put(`/${db}/_design/temp_utf8_support?w=3`, designDoc);
  assert.ok([201, 202].includes(designResp.status), designResp.text);
  const values = (await c.get(`/${db}/_design/temp_utf8_support/_view/view`)).body.rows as { value: string }[];
  for (const [index, { value }] of values.entries()) assert.equal(value, texts[index]);
  await deleteDb(db);
});

// ------------------------------------------------------------------ uuids_test.exs

test('uuids: cache busting headers are set', async () => {
  const r = await c.get('/_uuids');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['cache-control']), /no-cache/);
  assert.equal(r.headers.pragma, 'no-cache');
  assert.ok(String(r.headers.etag ?? '').length > 0, 'ETag');
});

test('uuids: can return single uuid', async () => {
  let r = await c.get('/_uuids');
  assert.equal(r.status, 200);
  const [uuid1] = r.body.uuids;
  assert.equal(r.body.uuids.length, 1);
  r = await c.get('/_uuids?count=1');
  assert.equal(r.status, 200);
  const [uuid2] = r.body.uuids;
  assert.equal(r.body.uuids.length, 1);
  assert.notEqual(uuid1, uuid2);
});

test('uuids: no duplicates in 1,000 UUIDs', async () => {
  const r = await c.get('/_uuids?count=1000');
  assert.equal(r.status, 200);
  const uuids = r.body.uuids as string[];
  assert.equal(new Set(uuids).size, uuids.length);
});

test('uuids: Method Not Allowed error on POST', async () => {
  const r = await c.post('/_uuids?count=1000');
  assert.equal(r.status, 405, r.text);
});

test('uuids: Bad Request error when exceeding max UUID count', async () => {
  const r = await c.get('/_uuids?count=1001');
  // CouchDB 3 answers 400 bad_request; CouchDB 1.6, and so Settee, 403 forbidden "count parameter too large".
  assert.equal(r.status, 403, r.text);
});

test('uuids: sequential uuids are sequential', async () => {
  await withConfig('uuids', 'algorithm', 'sequential', async () => {
    const r = await c.get('/_uuids?count=1000');
    assert.equal(r.status, 200);
    const uuids = r.body.uuids as string[];
    for (let i = 1; i < uuids.length; i++) {
      assert.equal(uuids[i]!.length, 32);
      assert.ok(uuids[i - 1]! < uuids[i]!, `${uuids[i - 1]} < ${uuids[i]}`);
    }
  });
});

test('uuids: utc_random uuids are roughly random', async () => {
  await withConfig('uuids', 'algorithm', 'utc_random', async () => {
    const r = await c.get('/_uuids?count=1000');
    assert.equal(r.status, 200);
    const uuids = r.body.uuids as string[];
    assert.equal(uuids[1]!.length, 32);
    // Assert no collisions
    assert.equal(new Set(uuids).size, uuids.length);
    // Assert rough ordering of UUIDs
    const u1 = uuids[1]!.slice(0, 14);
    const u2 = uuids[uuids.length - 1]!.slice(0, 14);
    assert.ok(u1 < u2, `${u1} < ${u2}`);
  });
});

test('uuids: utc_id uuids are correct', async () => {
  const utcIdSuffix = 'frog';
  await withConfig('uuids', 'algorithm', 'utc_id', async () => {
    await withConfig('uuids', 'utc_id_suffix', utcIdSuffix, async () => {
      const r = await c.get('/_uuids?count=10');
      assert.equal(r.status, 200);
      const uuids = r.body.uuids as string[];
      for (let i = 1; i < uuids.length; i++) {
        const curr = uuids[i]!;
        assert.equal(curr.length, 14 + utcIdSuffix.length);
        assert.equal(curr.slice(14), utcIdSuffix);
        assert.ok(curr > uuids[i - 1]!, `${curr} > ${uuids[i - 1]}`);
      }
    });
  });
});

// ------------------------------------------------------------------ lots_of_docs_test.exs

const docsRange = Array.from({ length: 500 }, (_, i) => i);

async function bulkPost(docs: unknown[], db: string) {
  const r = await c.post(`/${db}/_bulk_docs?w=3`, { docs });
  assert.ok([201, 202].includes(r.status) && r.body.length === docs.length,
    `Expected 201 and the same number of response rows as in request, but got ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

async function saveLotsOfDocs(db: string) {
  const docs = makeDocs(0, docsRange.length - 1);
  for (let i = 0; i < docs.length; i += 100) await bulkPost(docs.slice(i, i + 100), db);
}

/** The original's query_view: a ddoc tempddoc, created, queried and deleted. */
async function queryView(db: string, sorting = 'ascending') {
  const descending = sorting === 'descending';
  const mapDoc = { views: { view: { map: 'function(doc) { emit(doc.integer, null); }' } } };
  const { rev } = (await c.put(`/${db}/_design/tempddoc`, mapDoc)).body;
  const response = (await c.get(`/${db}/_design/tempddoc/_view/view?descending=${descending}`)).body;
  await c.del(`/${db}/_design/tempddoc?rev=${rev}`);
  return response;
}

test('lots_of_docs: lots of docs with _all_docs', async () => {
  const db = await mkdb('lots-all-docs');
  await saveLotsOfDocs(db);
  const { rows, total_rows: totalRows } = (await c.get(`/${db}/_all_docs`)).body;
  assert.equal(totalRows, docsRange.length);
  assert.equal(totalRows, rows.length);
  const sortedIds = docsRange.map(String).sort();
  sortedIds.forEach((value, index) => assert.equal(rows[index].key, value));

  await retryUntil('descending _all_docs', async () => {
    const { rows: descRows, total_rows: descTotalRows } = (await c.get(`/${db}/_all_docs?descending=true`)).body;
    assert.equal(descTotalRows, docsRange.length);
    assert.equal(descTotalRows, descRows.length);
    [...sortedIds].reverse().forEach((value, index) => assert.equal(descRows[index].key, value));
  });
  await deleteDb(db);
});

test('lots_of_docs: lots of docs with a regular view', async () => {
  const db = await mkdb('lots-view');
  await saveLotsOfDocs(db);
  const { rows, total_rows: totalRows } = await queryView(db);
  assert.equal(totalRows, rows.length);
  assert.equal(totalRows, docsRange.length);
  for (const i of docsRange) assert.equal(rows[i].key, i);

  await retryUntil('descending view', async () => {
    const { rows: descRows, total_rows: descTotalRows } = await queryView(db, 'descending');
    assert.equal(descTotalRows, descRows.length);
    assert.equal(descTotalRows, docsRange.length);
    [...docsRange].reverse().forEach((value, index) => assert.equal(descRows[index].key, value));
  });
  await deleteDb(db);
});

// ------------------------------------------------------------------ large_docs_text.exs

test('large_docs: Large docs', async () => {
  const db = await mkdb('large-docs');
  const longText = '0123456789\n'.repeat(10);
  const resps = [];
  for (const id of ['0', '1', '2', '3']) resps.push((await c.post(`/${db}`, { _id: id, longtest: longText })).body);
  for (const resp of resps) assert.equal(resp?.ok, true);

  // query
  const mapDoc = { views: { view: { map: 'function(doc) { emit(null, doc.longtest); }' } } };
  const { rev } = (await c.put(`/${db}/_design/tempddoc`, mapDoc)).body;
  const { rows } = (await c.get(`/${db}/_design/tempddoc/_view/view`)).body;
  await c.del(`/${db}/_design/tempddoc?rev=${rev}`);

  assert.equal(rows.length, 4);
  for (const row of rows) assert.equal(row.value, longText);
  await deleteDb(db);
});

// ------------------------------------------------------------------ batch_save_test.exs

const batchDocCount = 100;

async function batchRun(method: 'PUT' | 'POST', pathFun: (db: string, i: number) => string, db: string, expectedDocCount: number) {
  for (let i = 1; i <= batchDocCount; i++) {
    const path = `${pathFun(db, i)}?batch=ok`;
    const body = { a: i, b: i };
    const r = method === 'PUT' ? await c.put(path, body) : await c.post(path, body);
    assert.ok(r.body?.ok && r.status === 202, `${method} ${path}: ${r.status} ${r.text}`);
  }
  await retryUntil('doc_count', async () => (await c.get(`/${db}`)).body.doc_count === expectedDocCount);
}

test('batch_save: batch put', async () => {
  const db = await mkdb('batch-put');
  await batchRun('PUT', (name, i) => `/${name}/${i}`, db, batchDocCount);
  await deleteDb(db);
});

test('batch_save: batch post', async () => {
  const db = await mkdb('batch-post');
  await batchRun('POST', (name) => `/${name}`, db, batchDocCount);
  await deleteDb(db);
});

test('batch_save: batch put with identical doc ids', async () => {
  const db = await mkdb('batch-same-id');
  await batchRun('PUT', (name) => `/${name}/foo`, db, 1);
  await deleteDb(db);
});

// ------------------------------------------------------------------ http_test.exs

/** Couch.process_url: the server's base URL and the path. */
const processUrl = (path: string) => `${server.url.replace(/\/$/, '')}${path}`;

test('http: location header', async () => {
  const db = await mkdb('http-location');
  const r = await c.put(`/${db}/test`, {});
  assert.equal(r.headers.location, `${processUrl(`/${db}`)}/test`);
  await deleteDb(db);
});

test('http: location header should include X-Forwarded-Host', async () => {
  const db = await mkdb('http-forwarded');
  const r = await c.put(`/${db}/test2`, {}, { headers: { 'X-Forwarded-Host': 'mysite.com' } });
  assert.equal(r.headers.location, `http://mysite.com/${db}/test2`);
  await deleteDb(db);
});

test('http: location header should include custom header', async () => {
  const db = await mkdb('http-custom-header');
  await withConfig('httpd', 'x_forwarded_host', 'X-Host', async () => {
    const r = await c.put(`/${db}/test3`, {}, { headers: { 'X-Host': 'mysite2.com' } });
    assert.equal(r.headers.location, `http://mysite2.com/${db}/test3`);
  });
  await deleteDb(db);
});

test('http: COUCHDB-708: newlines document names', async () => {
  const db = await mkdb('http-708');
  const textPlain = { headers: { 'Content-Type': 'text/plain;charset=utf-8' } };
  let r = await c.put(`/${db}/docid%0A/attachment.txt`, {}, textPlain);
  assert.equal(r.headers.location, `${processUrl(`/${db}`)}/docid%0A/attachment.txt`);

  r = await c.put(`/${db}/docidtest%0A`, {}, textPlain);
  assert.equal(r.headers.location, `${processUrl(`/${db}`)}/docidtest%0A`);

  r = await c.post(`/${db}/`, { _id: 'docidtestpost%0A' }, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.headers.location, `${processUrl(`/${db}`)}/docidtestpost%250A`);
  await deleteDb(db);
});

// ------------------------------------------------------------------ form_submit_test.exs

test('form_submit: form submission gives back invalid content-type', async () => {
  const db = await mkdb('form-submit');
  const headers = { Referer: 'http://127.0.0.1:15984', 'Content-Type': 'application/x-www-form-urlencoded' };
  const { body: responseBody, status: statusCode } = await c.post(`/${db}/baz`, {}, { headers });
  const { error, reason } = responseBody ?? {};
  assert.equal(statusCode, 415);
  assert.equal(error, 'bad_content_type');
  assert.equal(reason, 'Content-Type must be multipart/form-data');
  await deleteDb(db);
});
