/**
 * CouchDB 1.6's browser test suite (share/www/script/test/<script>.js): changes, rewrite, stats,
 * users_db, view_sandboxing, view_update_seq, view_pagination, multiple_rows, method_override,
 * http, form_submit, design_paths, attachments and basics, ported over real HTTP with the same
 * documents and assertions. Each script has its own database (`c16m_<script>`).
 *
 * The suite's browser-only conditions are taken as a real browser takes them: the asynchronous
 * parts of changes (continuous, longpoll, eventsource feeds) run, read as streams with bounded
 * waits. Where a script waited on time (`_sleep`, `waitForSuccess`), this port waits on the
 * condition instead. Parts needing what Settee has not (the Erlang query server) are left out
 * where they are, and said so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { serverForFile } from '../helpers/server.js';
import type { Response } from '../helpers/http.js';
import { couchJs, encodeOptions } from '../helpers/couch-js.js';
import { openStream, parseEvents } from '../helpers/stream.js';

const { server, c } = await serverForFile();

type Doc = Record<string, any>;
type Options = Record<string, unknown>;

// ------------------------------------------------------------------ the suite's helpers

const E = encodeURIComponent;

const qs = encodeOptions;
const { freshDb, open, deleteDoc } = couchJs(c);

/** CouchDB.prototype.save: PUT by id (a new UUID when none); `_rev` taken from the answer. */
async function save(db: string, doc: Doc, headers?: Record<string, string>): Promise<Response> {
  if (doc._id === undefined) doc._id = (await c.get('/_uuids')).body.uuids[0];
  const r = await c.put(`/${E(db)}/${E(doc._id)}`, doc, headers ? { headers } : undefined);
  if (r.status < 300 && r.body?.rev) doc._rev = r.body.rev;
  return r;
}

/** CouchDB.prototype.bulkSave: options go into the body; `_rev`s of successful rows are kept. */
async function bulkSave(db: string, docs: Doc[], options?: Options): Promise<Response> {
  for (const doc of docs) if (doc._id === undefined) doc._id = (await c.get('/_uuids')).body.uuids[0];
  const r = await c.post(`/${E(db)}/_bulk_docs`, { docs, ...options });
  assert.ok(r.status < 300 || r.status === 417, r.text);
  if (Array.isArray(r.body)) {
    r.body.forEach((row: Doc, i: number) => { if (row && row.rev && !row.error) docs[i]!._rev = row.rev; });
  }
  return r;
}

/** CouchDB.prototype.query: a temporary view. */
async function query(db: string, map: string, reduce?: string | null, options?: Options): Promise<Doc> {
  const body: Doc = { language: 'javascript', map };
  if (reduce) body.reduce = reduce;
  const r = await c.post(`/${E(db)}/_temp_view${qs(options)}`, body);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** CouchDB.prototype.view: GET, or POST with keys. */
async function view(db: string, name: string, options?: Options, keys?: unknown[]): Promise<Doc> {
  const [ddoc, v] = name.split('/') as [string, string];
  const path = `/${E(db)}/_design/${ddoc}/_view/${v}${qs(options)}`;
  const r = keys ? await c.post(path, { keys }) : await c.get(path);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function allDocs(db: string, options?: Options): Promise<Doc> {
  const r = await c.get(`/${E(db)}/_all_docs${qs(options)}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function info(db: string): Promise<Doc> {
  const r = await c.get(`/${E(db)}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function ensureFullCommit(db: string): Promise<void> {
  const r = await c.post(`/${E(db)}/_ensure_full_commit`, undefined, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.ok, true);
}

/** couch_test_runner.js makeDocs, over a copy of `template`. */
function makeDocs(start: number, end: number, template: Doc = {}): Doc[] {
  const docs: Doc[] = [];
  for (let i = start; i < end; i++) docs.push({ ...structuredClone(template), _id: String(i), integer: i, string: String(i) });
  return docs;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * couch_test_runner.js run_on_modified_server: sets each value without persisting it, runs
 * `fn`, then puts the old values back (deleting the ones that were unset).
 */
async function runOnModifiedServer(settings: { section: string; key: string; value: string }[], fn: () => Promise<void>): Promise<void> {
  const old: (string | null)[] = [];
  const persist = { headers: { 'X-Couch-Persist': 'false' } };
  try {
    for (const s of settings) {
      const r = await c.put(`/_config/${s.section}/${E(s.key)}`, s.value, persist);
      assert.equal(r.status, 200, r.text);
      old.push(typeof r.body === 'string' && r.body !== '' ? r.body : null);
    }
    await fn();
  } finally {
    for (let i = old.length - 1; i >= 0; i--) {
      const s = settings[i]!;
      const was = old[i];
      if (was === null || was === undefined) await c.del(`/_config/${s.section}/${E(s.key)}`, persist);
      else await c.put(`/_config/${s.section}/${E(s.key)}`, was, persist);
    }
  }
}

/** CouchDB.requestStats(module, key, true): `/_stats/module/key?flush=true`. */
async function requestStats(module: string, key: string): Promise<Doc> {
  const r = await c.get(`/_stats/${module}/${key}?flush=true`);
  assert.equal(r.status, 200, r.text);
  return r.body[module][key];
}

/**
 * A GET with a JSON body, as the scripts' XHRs send one. The length is given: Node's client
 * otherwise sends a GET's body without Content-Length or chunking, which no server can frame.
 */
function getWithBody(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const raw = JSON.stringify(body);
  return c.request('GET', path, { raw, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(raw)), ...headers } });
}

/** The special test authentication handler, as the scripts configure it. */
const TEST_AUTH_HANDLERS = [
  { section: 'httpd', key: 'authentication_handlers', value: '{couch_httpd_auth, special_test_authentication_handler}' },
  { section: 'httpd', key: 'WWW-Authenticate', value: 'X-Couch-Test-Auth' },
];

const BASE64_TEXT = 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=';
const PLAIN_TEXT = 'This is a base64 encoded text';

/** A stream on the current server (its URL moves when the file's server restarts). */
const stream = (method: string, path: string, body?: unknown) =>
  openStream(server.url, method, path, body === undefined ? {} : { body });

/** The scripts' parse_changes_line: a line of a longpoll answer, its trailing comma removed. */
function parseChangesLine(line: string): Doc {
  return JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line);
}

// ------------------------------------------------------------------------------ changes
// changes.js of the 1.x line (apache/couchdb 093d2aa, the stored version with the eventsource
// block), with the sections 1.6.0 added (COUCHDB-1852 Last-Event-ID, COUCHDB-1923 attachments in
// _changes) as the script's next version has them, with 1.6's integer sequences.

const CH = 'c16m_changes';

test('changes: normal, continuous, eventsource and longpoll feeds; design-document, _view, _doc_ids and _design filters; userCtx; conflicts; style=all_docs', async () => {
  await freshDb(CH);
  let r = await c.get(`/${CH}/_changes`);
  assert.equal(r.body.results.length, 0);
  assert.equal(r.body.last_seq, 0, 'empty db');

  const docFoo: Doc = { _id: 'foo', bar: 1 };
  assert.equal((await save(CH, docFoo)).body.ok, true);
  await ensureFullCommit(CH);
  assert.equal((await open(CH, docFoo._id))!._id, docFoo._id);

  r = await c.get(`/${CH}/_changes`);
  assert.equal(r.body.last_seq, 1);
  assert.equal(r.body.results.length, 1, 'one doc db');
  assert.equal(r.body.results[0].changes[0].rev, docFoo._rev);

  // test with callback
  await runOnModifiedServer([{ section: 'httpd', key: 'allow_jsonp', value: 'true' }], async () => {
    const x = await c.get(`/${CH}/_changes?callback=jsonp`);
    assert.equal(x.status, 200);
    let jsonpFlag = 0;
    const jsonp = (obj: Doc): void => {
      assert.equal(jsonpFlag, 0);
      assert.ok(obj.results.length === 1 && obj.last_seq === 1, 'jsonp');
      jsonpFlag = 1;
    };
    new Function('jsonp', x.text)(jsonp);
    assert.equal(jsonpFlag, 1);
  });

  r = await c.get(`/${CH}/_changes?feed=continuous&timeout=10`);
  let lines = r.text.split('\n');
  assert.equal(JSON.parse(lines[0]!).changes[0].rev, docFoo._rev);
  assert.equal(JSON.parse(lines[1]!).last_seq, 1);

  // continuous: changes arrive as they are made
  let feed = await stream('GET', `/${CH}/_changes?feed=continuous&timeout=500`);
  const docBar: Doc = { _id: 'bar', bar: 1 };
  await save(CH, docBar);
  await feed.waitFor((t) => { const l = t.split('\n'); try { return JSON.parse(l[1]!).seq === 2; } catch { return false; } }, 10000, 'bar-only');
  lines = feed.text.split('\n');
  const change1 = JSON.parse(lines[0]!);
  const change2 = JSON.parse(lines[1]!);
  assert.equal(change1.seq, 1);
  assert.equal(change1.id, 'foo');
  assert.equal(change2.seq, 2);
  assert.equal(change2.id, 'bar');
  assert.equal(change2.changes[0].rev, docBar._rev);

  const docBaz: Doc = { _id: 'baz', baz: 1 };
  await save(CH, docBaz);
  await feed.waitFor((t) => { try { return JSON.parse(t.split('\n')[2]!).seq === 3; } catch { return false; } }, 10000, 'baz');
  const change3 = JSON.parse(feed.text.split('\n')[2]!);
  assert.equal(change3.seq, 3);
  assert.equal(change3.id, 'baz');
  assert.equal(change3.changes[0].rev, docBaz._rev);
  feed.close();

  // verify the heartbeat newlines are sent
  feed = await stream('GET', `/${CH}/_changes?feed=continuous&heartbeat=10&timeout=500`);
  const str = await feed.waitFor((t) => t.endsWith('\n\n'), 10000, 'heartbeat');
  assert.equal(str.charAt(str.length - 1), '\n');
  assert.equal(str.charAt(str.length - 2), '\n');
  feed.close();

  // test Server Sent Event (eventsource)
  feed = await stream('GET', `/${CH}/_changes?feed=eventsource`);
  await feed.waitFor((t) => parseEvents(t).filter((e) => e.data !== undefined).length >= 3, 10000, 'three events');
  const results = parseEvents(feed.text).filter((e) => e.data !== undefined).map((e) => JSON.parse(e.data!));
  feed.close();
  assert.equal(results[0].seq, 1);
  assert.equal(results[0].id, 'foo');
  assert.equal(results[1].seq, 2);
  assert.equal(results[1].id, 'bar');
  assert.equal(results[1].changes[0].rev, docBar._rev);

  // test longpolling
  feed = await stream('GET', `/${CH}/_changes?feed=longpoll`);
  await feed.waitFor((t) => t.split('\n')[5] === '"last_seq":3}', 10000, 'last_seq');
  feed.close();

  feed = await stream('GET', `/${CH}/_changes?feed=longpoll&since=3`);
  const docBarz: Doc = { _id: 'barz', bar: 1 };
  await save(CH, docBarz);
  await feed.waitFor((t) => t.split('\n')[3] === '"last_seq":4}', 10000, 'change_lines');
  lines = feed.text.split('\n');
  const change = parseChangesLine(lines[1]!);
  assert.equal(change.seq, 4);
  assert.equal(change.id, 'barz');
  assert.equal(change.changes[0].rev, docBarz._rev);
  assert.equal(lines[3], '"last_seq":4}');
  feed.close();

  // test the filtered changes
  const ddoc: Doc = {
    _id: '_design/changes_filter',
    filters: {
      bop: 'function(doc, req) { return (doc.bop);}',
      dynamic: '(function(doc, req) {\n        var field = req.query.field;\n        return doc[field];\n      })',
      userCtx: '(function(doc, req) {\n        return doc.user && (doc.user == req.userCtx.name);\n      })',
      conflicted: 'function(doc, req) { return (doc._conflicts);}',
    },
    options: { local_seq: true },
    views: {
      local_seq: { map: 'function(doc) {emit(doc._local_seq, null)}' },
      blah: { map: 'function(doc) {  if (doc._id == "blah") {    emit(null, null);  }}' },
    },
  };
  await save(CH, ddoc);

  r = await c.get(`/${CH}/_changes?filter=changes_filter/bop`);
  assert.equal(r.body.results.length, 0);

  await save(CH, { bop: 'foom' });
  await save(CH, { bop: false });

  r = await c.get(`/${CH}/_changes?filter=changes_filter/bop`);
  assert.equal(r.body.results.length, 1, 'filtered/bop');

  r = await c.get(`/${CH}/_changes?filter=changes_filter/dynamic&field=woox`);
  assert.equal(r.body.results.length, 0);

  r = await c.get(`/${CH}/_changes?filter=changes_filter/dynamic&field=bop`);
  assert.equal(r.body.results.length, 1, 'changes_filter/dynamic&field=bop');

  // filter with longpoll: longpoll filters full history when run without a since seq
  r = await c.get(`/${CH}/_changes?feed=longpoll&filter=changes_filter/bop`);
  assert.equal(r.body.last_seq, 7);
  // longpoll waits until a matching change before returning
  feed = await stream('GET', `/${CH}/_changes?feed=longpoll&since=7&filter=changes_filter/bop`);
  await save(CH, { _id: 'falsy', bop: '' }); // empty string is falsy
  await save(CH, { _id: 'bingo', bop: 'bingo' });
  let resp = JSON.parse(await feed.waitForEnd(10000));
  assert.equal(resp.last_seq, 9);
  assert.ok(resp.results && resp.results.length > 0 && resp.results[0].id === 'bingo', 'filter the correct update');

  // filter with continuous: the feed ends `timeout` ms after its last change; the script
  // retries with a doubled timeout (and the next sequence) when its client was too slow.
  let timeout = 500;
  let lastSeq = 10;
  for (let attempt = 0; ; attempt++) {
    feed = await stream('GET', `/${CH}/_changes?feed=continuous&filter=changes_filter/bop&timeout=${timeout}`);
    await save(CH, { _id: 'rusty', bop: 'plankton' });
    const rusty = (await open(CH, 'rusty', { cache_bust: Date.now() }))!;
    assert.equal(rusty._id, 'rusty');
    lines = (await feed.waitForEnd(timeout + 10000)).split('\n');
    let good = false;
    try { JSON.parse(lines[3]!); good = true; } catch { /* the client was too slow */ }
    if (good) {
      assert.equal(JSON.parse(lines[1]!).id, 'bingo', lines[1]);
      assert.equal(JSON.parse(lines[2]!).id, 'rusty', lines[2]);
      assert.equal(JSON.parse(lines[3]!).last_seq, lastSeq, lines[3]);
      break;
    }
    assert.ok(attempt < 4, `continuous-rusty never complete: ${JSON.stringify(lines)}`);
    await deleteDoc(CH, rusty);
    timeout *= 2;
    lastSeq += 2;
  }

  // error conditions
  r = await c.get(`/${CH}/_changes?filter=nothingtosee/bop`);
  assert.equal(r.status, 404, 'should return 404 for non existant design doc');
  r = await c.get(`/${CH}/_changes?filter=changes_filter/movealong`);
  assert.equal(r.status, 404, 'should return 404 for non existant filter fun');
  r = await c.get(`/${CH}/_changes?filter=nothingtosee/movealong`);
  assert.equal(r.status, 404, 'should return 404 for non existant design doc and filter fun');

  // changes get all_docs style with deleted docs
  const doc: Doc = { a: 1 };
  await save(CH, doc);
  await deleteDoc(CH, doc);
  r = await c.get(`/${CH}/_changes?filter=changes_filter/bop&style=all_docs`);
  assert.equal(r.body.results.length, 3, 'should return matching rows');

  // test filter on view function (map)
  assert.equal((await save(CH, { _id: 'blah', bop: 'plankton' })).body.ok, true);
  r = await c.get(`/${CH}/_changes?filter=_view&view=changes_filter/blah`);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].id, 'blah');

  // test for userCtx
  await runOnModifiedServer(TEST_AUTH_HANDLERS, async () => {
    const authOpts = { headers: { 'WWW-Authenticate': 'X-Couch-Test-Auth Chris Anderson:mp3' } };
    await c.get('/_session', authOpts);
    assert.equal((await save(CH, { user: 'Noah Slater' })).body.ok, true);
    let u = await c.get(`/${CH}/_changes?filter=changes_filter/userCtx`, authOpts);
    assert.equal(u.body.results.length, 0);

    const chris: Doc = { user: 'Chris Anderson' };
    const docResp = await save(CH, chris);
    assert.equal(docResp.body.ok, true);
    await ensureFullCommit(CH);
    u = await c.get(`/${CH}/_changes?filter=changes_filter/userCtx`, authOpts);
    assert.equal(u.body.results.length, 1, 'userCtx');
    assert.equal(u.body.results[0].id, docResp.body.id);
  });

  r = await c.get(`/${CH}/_changes?limit=1`);
  assert.equal(r.body.results.length, 1);

  // filter includes _conflicts
  const pizza: Doc = { food: 'pizza' };
  const id = (await save(CH, pizza)).body.id;
  await bulkSave(CH, [{ _id: id, food: 'pasta' }], { all_or_nothing: true });
  r = await c.get(`/${CH}/_changes?filter=changes_filter/conflicted`);
  assert.equal(r.body.results.length, 1, 'filter=changes_filter/conflicted');

  // The script's Erlang filter (language "erlang", run by couch_native_process) is left out:
  // Settee has no Erlang query server. The design document and the documents are saved as the
  // script saves them, so the sequences of the _doc_ids part stay the script's.
  await freshDb(CH);
  const erlDdoc = {
    _id: '_design/erlang',
    language: 'erlang',
    filters: { foo: 'fun({Doc}, Req) ->   case couch_util:get_value(<<"value">>, Doc) of  undefined -> false;  Value -> (Value rem 2) =:= 0;  _ -> false  end end.' },
  };
  assert.equal((await save(CH, erlDdoc)).body.ok, true);
  for (let i = 1; i <= 4; i++) assert.equal((await save(CH, { _id: `doc${i}`, value: i })).body.ok, true);

  // test filtering on docids
  const docIdsBody = { doc_ids: ['something', 'anotherthing', 'andmore'] };
  r = await c.post(`/${CH}/_changes?filter=_doc_ids`, docIdsBody);
  assert.equal(r.body.results.length, 0);

  assert.equal((await save(CH, { _id: 'something', bop: 'plankton' })).body.ok, true);
  r = await c.post(`/${CH}/_changes?filter=_doc_ids`, docIdsBody);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].id, 'something');

  assert.equal((await save(CH, { _id: 'anotherthing', bop: 'plankton' })).body.ok, true);
  r = await c.post(`/${CH}/_changes?filter=_doc_ids`, docIdsBody);
  assert.equal(r.body.results.length, 2);
  assert.equal(r.body.results[0].id, 'something');
  assert.equal(r.body.results[1].id, 'anotherthing');

  const docids = JSON.stringify(['something', 'anotherthing', 'andmore']);
  r = await getWithBody(`/${CH}/_changes?filter=_doc_ids&doc_ids=${E(docids)}`, docIdsBody);
  assert.equal(r.body.results.length, 2);
  assert.equal(r.body.results[0].id, 'something');
  assert.equal(r.body.results[1].id, 'anotherthing');

  r = await c.get(`/${CH}/_changes?filter=_design`);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].id, '_design/erlang');

  // filter docids with continuous
  feed = await stream('POST', `/${CH}/_changes?feed=continuous&timeout=500&since=7&filter=_doc_ids`, docIdsBody);
  assert.equal((await save(CH, { _id: 'andmore', bop: 'plankton' })).body.ok, true);
  const line = JSON.parse((await feed.waitForEnd(10000)).split('\n')[0]!);
  assert.equal(line.seq, 8);
  assert.equal(line.id, 'andmore');

  // COUCHDB-1037 - empty result for ?limit=1&filter=foo/bar in some cases
  await freshDb(CH);
  assert.equal((await save(CH, { _id: '_design/testdocs', filters: { testdocsonly: 'function (doc, req) {\n        return (typeof doc.integer === "number");\n      }' } })).status, 201);
  assert.equal((await save(CH, { _id: '_design/foobar', foo: 'bar' })).status, 201);
  await bulkSave(CH, makeDocs(0, 5));

  r = await c.get(`/${CH}/_changes`);
  assert.equal(r.body.last_seq, 7);
  assert.equal(r.body.results.length, 7);

  r = await c.get(`/${CH}/_changes?limit=1&filter=testdocs/testdocsonly`);
  assert.equal(r.body.last_seq, 3);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].id, '0');

  r = await c.get(`/${CH}/_changes?limit=2&filter=testdocs/testdocsonly`);
  assert.equal(r.body.last_seq, 4);
  assert.equal(r.body.results.length, 2);
  assert.equal(r.body.results[0].id, '0');
  assert.equal(r.body.results[1].id, '1');

  assert.equal((await requestStats('httpd', 'clients_requesting_changes')).current, 0);
  await c.get(`/${CH}/_changes`);
  assert.equal((await requestStats('httpd', 'clients_requesting_changes')).current, 0);

  // COUCHDB-1256
  await freshDb(CH);
  assert.equal((await save(CH, { _id: 'foo', a: 123 })).body.ok, true);
  assert.equal((await save(CH, { _id: 'bar', a: 456 })).body.ok, true);
  await c.put(`/${CH}/foo?new_edits=false`, { _rev: '1-cc609831f0ca66e8cd3d4c1e0d98108a', a: 456 });

  r = await c.get(`/${CH}/_changes?style=all_docs`);
  assert.equal(r.body.last_seq, 3);
  assert.equal(r.body.results.length, 2);

  r = await c.get(`/${CH}/_changes?style=all_docs&since=2`);
  assert.equal(r.body.last_seq, 3);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].changes.length, 2);

  // COUCHDB-1852 (1.6.0): an EventSource request with a Last-Event-ID header starts after it
  await freshDb(CH);
  for (let i = 0; i < 4; i++) await save(CH, { bop: 'foom' });
  r = await c.get(`/${CH}/_changes?feed=eventsource&timeout=100&since=0`, { headers: { Accept: 'text/event-stream', 'Last-Event-ID': '2' } });
  const ids = r.text.split('\n').map((l) => l.split(':').map((s) => s.trim())).filter((l) => l[0] === 'id');
  assert.equal(ids.length, 2, r.text);
  assert.equal(ids[0]![1], '3');
  assert.equal(ids[1]![1], '4');

  // COUCHDB-1923 (1.6.0): attachments and att_encoding_info in _changes?include_docs=true
  await freshDb(CH);
  await bulkSave(CH, makeDocs(20, 30, {
    _attachments: {
      'foo.txt': { content_type: 'text/plain', data: BASE64_TEXT },
      'bar.txt': { content_type: 'text/plain', data: BASE64_TEXT },
    },
  }));
  // [query, stub, data, encoding] each attachment of the first document shows
  const attachmentCases: [string, boolean | undefined, string | undefined, string | undefined][] = [
    ['include_docs=true', true, undefined, undefined],
    ['include_docs=true&attachments=true', undefined, BASE64_TEXT, undefined],
    ['include_docs=true&att_encoding_info=true', true, undefined, 'gzip'],
  ];
  for (const [params, stub, data, encoding] of attachmentCases) {
    r = await c.get(`/${CH}/_changes?${params}`);
    assert.equal(r.body.results.length, 10);
    for (const name of ['foo.txt', 'bar.txt']) {
      const att = r.body.results[0].doc._attachments[name];
      assert.equal(att.stub, stub, params);
      assert.equal(att.data, data, params);
      assert.equal(att.encoding, encoding, params);
      // With att_encoding_info the script expects 47, the length CouchDB's system zlib gives this
      // text; another deflate implementation may find other matches, so only a length is asked.
      if (encoding) assert.ok(Number.isInteger(att.encoded_length) && att.encoded_length > 0, JSON.stringify(att));
      else assert.equal(att.encoded_length, undefined, params);
    }
  }
  await c.del(`/${CH}`);
});

test('changes: since=now on a longpoll feed waits for the next change (the script\'s next version)', async () => {
  const db = 'c16m_changes_now';
  await freshDb(db);
  for (const id of ['foo', 'bar', 'baz', 'barz']) await save(db, { _id: id, bar: 1 });
  const feed = await stream('GET', `/${db}/_changes?feed=longpoll&since=now`);
  const docBarz: Doc = { _id: 'barzzzz', bar: 1 };
  await save(db, docBarz);
  await feed.waitFor((t) => t.split('\n')[3] === '"last_seq":5}', 10000, 'change_lines');
  const lines = feed.text.split('\n');
  const change = parseChangesLine(lines[1]!);
  assert.equal(change.seq, 5);
  assert.equal(change.id, 'barzzzz');
  assert.equal(change.changes[0].rev, docBarz._rev);
  assert.equal(lines[3], '"last_seq":5}');
  feed.close();
});

test('changes: descending, include_docs and conflicts=true (parameters of CouchDB 1.6\'s _changes the script does not reach)', async () => {
  const db = 'c16m_changes_params';
  await freshDb(db);
  const a: Doc = { _id: 'a', n: 1 };
  await save(db, a);
  await save(db, { _id: 'b', n: 2 });
  await bulkSave(db, [{ _id: 'a', n: 3 }], { all_or_nothing: true });
  let r = await c.get(`/${db}/_changes?descending=true`);
  assert.deepEqual(r.body.results.map((x: Doc) => x.id), ['a', 'b']);
  assert.equal(r.body.results[0].seq, 3);
  assert.equal(r.body.last_seq, 2);
  r = await c.get(`/${db}/_changes?descending=true&limit=1`);
  assert.deepEqual(r.body.results.map((x: Doc) => x.seq), [3]);
  r = await c.get(`/${db}/_changes?include_docs=true&conflicts=true`);
  const row = r.body.results.find((x: Doc) => x.id === 'a');
  assert.equal(row.doc._id, 'a');
  assert.equal(row.doc._conflicts.length, 1, JSON.stringify(row));
  r = await c.get(`/${db}/_changes?include_docs=true`);
  assert.equal(r.body.results.find((x: Doc) => x.id === 'a').doc._conflicts, undefined);
});

// ------------------------------------------------------------------------------ rewrite
// rewrite.js of the 1.x line (rules as arrays; the stored version with welcome4/5, formats,
// complexView5-7, secure_rewrites, requested_path and rewrite_limit), run, as the script's
// next version does, in a database with and one without a slash in its name.

for (const rewriteDb of ['c16m_rewrite', 'c16m_rewrite/with_slashes']) {
  test(`rewrite: rules to attachments, updates, shows, views and lists, query variables, formats, secure_rewrites, requested path, loops (${rewriteDb})`, async () => {
    const dbName = E(rewriteDb);
    await freshDb(rewriteDb);
    const designDoc: Doc = {
      _id: '_design/test',
      language: 'javascript',
      _attachments: { 'foo.txt': { content_type: 'text/plain', data: BASE64_TEXT } },
      rewrites: [
        { from: 'foo', to: 'foo.txt' },
        { from: 'foo2', to: 'foo.txt', method: 'GET' },
        { from: 'hello/:id', to: '_update/hello/:id', method: 'PUT' },
        { from: '/welcome', to: '_show/welcome' },
        { from: '/welcome/:name', to: '_show/welcome', query: { name: ':name' } },
        { from: '/welcome2', to: '_show/welcome', query: { name: 'user' } },
        { from: '/welcome3/:name', to: '_update/welcome2/:name', method: 'PUT' },
        { from: '/welcome3/:name', to: '_show/welcome2/:name', method: 'GET' },
        { from: '/welcome4/*', to: '_show/welcome3', query: { name: '*' } },
        { from: '/welcome5/*', to: '_show/*', query: { name: '*' } },
        { from: 'basicView', to: '_view/basicView' },
        { from: 'simpleForm/basicView', to: '_list/simpleForm/basicView' },
        { from: 'simpleForm/basicViewFixed', to: '_list/simpleForm/basicView', query: { startkey: 3, endkey: 8 } },
        { from: 'simpleForm/basicViewPath/:start/:end', to: '_list/simpleForm/basicView', query: { startkey: ':start', endkey: ':end' }, formats: { start: 'int', end: 'int' } },
        { from: 'simpleForm/complexView', to: '_list/simpleForm/complexView', query: { key: [1, 2] } },
        { from: 'simpleForm/complexView2', to: '_list/simpleForm/complexView', query: { key: ['test', {}] } },
        { from: 'simpleForm/complexView3', to: '_list/simpleForm/complexView', query: { key: ['test', ['test', 'essai']] } },
        { from: 'simpleForm/complexView4', to: '_list/simpleForm/complexView2', query: { key: { c: 1 } } },
        { from: 'simpleForm/complexView5/:a/:b', to: '_list/simpleForm/complexView3', query: { key: [':a', ':b'] } },
        { from: 'simpleForm/complexView6', to: '_list/simpleForm/complexView3', query: { key: [':a', ':b'] } },
        { from: 'simpleForm/complexView7/:a/:b', to: '_view/complexView3', query: { key: [':a', ':b'], include_docs: ':doc' }, format: { doc: 'bool' } },
        { from: '/', to: '_view/basicView' },
        { from: '/db/*', to: '../../*' },
      ],
      lists: {
        simpleForm: `(function(head, req) {
              log("simpleForm");
              send('<ul>');
              var row, row_number = 0, prevKey, firstKey = null;
              while (row = getRow()) {
                row_number += 1;
                if (!firstKey) firstKey = row.key;
                prevKey = row.key;
                send('\\n<li>Key: '+row.key
                +' Value: '+row.value
                +' LineNo: '+row_number+'</li>');
              }
              return '</ul><p>FirstKey: '+ firstKey + ' LastKey: '+ prevKey+'</p>';
            })`,
      },
      shows: {
        welcome: '(function(doc,req) {\n              return "Welcome " + req.query["name"];\n            })',
        welcome2: '(function(doc, req) {\n              return "Welcome " + doc.name;\n            })',
        welcome3: '(function(doc,req) {\n              return "Welcome " + req.query["name"];\n            })',
      },
      updates: {
        hello: `(function(doc, req) {
              if (!doc) {
                if (req.id) {
                  return [{ _id : req.id }, "New World"]
                }
                return [null, "Empty World"];
              }
              doc.world = "hello";
              doc.edited_by = req.userCtx;
              return [doc, "hello doc"];
            })`,
        welcome2: `(function(doc, req) {
              if (!doc) {
                if (req.id) {
                  return [{ _id: req.id, name: req.id }, "New World"]
                }
                return [null, "Empty World"];
              }
              return [doc, "hello doc"];
            })`,
      },
      views: {
        basicView: { map: '(function(doc) {\n                if (doc.integer) {\n                  emit(doc.integer, doc.string);\n                }\n              })' },
        complexView: { map: '(function(doc) {\n                if (doc.type == "complex") {\n                  emit([doc.a, doc.b], doc.string);\n                }\n              })' },
        complexView2: { map: '(function(doc) {\n                if (doc.type == "complex") {\n                  emit(doc.a, doc.string);\n                }\n              })' },
        complexView3: { map: '(function(doc) {\n                if (doc.type == "complex") {\n                  emit(doc.b, doc.string);\n                }\n              })' },
      },
    };

    await runOnModifiedServer(TEST_AUTH_HANDLERS, async () => {
      assert.equal((await save(rewriteDb, designDoc)).status, 201);
      await bulkSave(rewriteDb, makeDocs(0, 10));
      await bulkSave(rewriteDb, [
        { a: 1, b: 1, string: 'doc 1', type: 'complex' },
        { a: 1, b: 2, string: 'doc 2', type: 'complex' },
        { a: 'test', b: {}, string: 'doc 3', type: 'complex' },
        { a: 'test', b: ['test', 'essai'], string: 'doc 4', type: 'complex' },
        { a: { c: 1 }, b: '', string: 'doc 5', type: 'complex' },
      ]);

      // test simple rewriting
      const base = `/${dbName}/_design/test/_rewrite`;
      let x = await c.get(`${base}/foo`);
      assert.equal(x.text, PLAIN_TEXT);
      assert.equal(x.headers['content-type'], 'text/plain');
      x = await c.get(`${base}/foo2`);
      assert.equal(x.text, PLAIN_TEXT);
      assert.equal(x.headers['content-type'], 'text/plain');

      // test POST: hello update world
      const doc: Doc = { word: 'plankton', name: 'Rusty' };
      const resp = await save(rewriteDb, doc);
      assert.equal(resp.body.ok, true);
      const docid = resp.body.id;
      x = await c.request('PUT', `${base}/hello/${docid}`, { headers: { 'Content-Type': 'application/json' } });
      assert.equal(x.status, 201);
      assert.equal(x.text, 'hello doc');
      assert.match(String(x.headers['content-type']), /charset=utf-8/);
      assert.equal((await open(rewriteDb, docid))!.world, 'hello');

      assert.equal((await c.get(`${base}/welcome?name=user`)).text, 'Welcome user');
      assert.equal((await c.get(`${base}/welcome/user`)).text, 'Welcome user');
      assert.equal((await c.get(`${base}/welcome2`)).text, 'Welcome user');

      x = await c.request('PUT', `${base}/welcome3/test`, { headers: { 'Content-Type': 'application/json' } });
      assert.equal(x.status, 201);
      assert.equal(x.text, 'New World');
      assert.match(String(x.headers['content-type']), /charset=utf-8/);
      assert.equal((await c.get(`${base}/welcome3/test`)).text, 'Welcome test');

      assert.equal((await c.get(`${base}/welcome4/user`)).text, 'Welcome user');
      assert.equal((await c.get(`${base}/welcome5/welcome3`)).text, 'Welcome welcome3');

      x = await c.get(`${base}/basicView`);
      assert.equal(x.status, 200, 'view call');
      assert.match(x.text, /{"total_rows":9/);
      x = await c.get(`${base}/`);
      assert.equal(x.status, 200, 'view call');
      assert.match(x.text, /{"total_rows":9/);

      // get with query params
      for (const path of ['simpleForm/basicView?startkey=3&endkey=8', 'simpleForm/basicViewFixed', 'simpleForm/basicViewFixed?startkey=4', 'simpleForm/basicViewPath/3/8']) {
        x = await c.get(`${base}/${path}`);
        assert.equal(x.status, 200, `with query params: ${path} ${x.text}`);
        assert.ok(!/Key: 1/.test(x.text), x.text);
        assert.match(x.text, /FirstKey: 3/);
        assert.match(x.text, /LastKey: 8/);
      }

      x = await c.get(`${base}/simpleForm/complexView`);
      assert.equal(x.status, 200, 'with query params');
      assert.match(x.text, /FirstKey: [1, 2]/);
      const expectValue: [string, RegExp][] = [
        ['simpleForm/complexView2', /Value: doc 3/],
        ['simpleForm/complexView3', /Value: doc 4/],
        ['simpleForm/complexView4', /Value: doc 5/],
        ['simpleForm/complexView5/test/essai', /Value: doc 4/],
        ['simpleForm/complexView6?a=test&b=essai', /Value: doc 4/],
      ];
      for (const [path, re] of expectValue) {
        x = await c.get(`${base}/${path}`);
        assert.equal(x.status, 200, `with query params: ${path} ${x.text}`);
        assert.match(x.text, re, path);
      }
      x = await c.get(`${base}/simpleForm/complexView7/test/essai?doc=true`);
      assert.equal(x.status, 200, `with query params ${x.text}`);
      assert.equal(typeof x.body.rows[0].doc, 'object');

      // COUCHDB-2031: a rule up to the database keeps the query string.
      x = await c.get(`${base}/db/_design/test?meta=true`);
      assert.equal(x.status, 200, `path normalization works with qs params ${x.text}`);
      assert.equal(x.body._id, '_design/test');
      assert.equal(typeof x.body._revs_info, 'object');

      // test path relative to server
      designDoc.rewrites.push({ from: 'uuids', to: '../../../_uuids' });
      assert.equal((await save(rewriteDb, designDoc)).body.ok, true);
      x = await c.get(`${base}/uuids`);
      assert.equal(x.status, 500);
      assert.equal(x.body.error, 'insecure_rewrite_rule');

      await runOnModifiedServer([{ section: 'httpd', key: 'secure_rewrites', value: 'false' }], async () => {
        const u = await c.get(`${base}/uuids?cache=bust`);
        assert.equal(u.status, 200, u.text);
        assert.equal(u.body.uuids.length, 1);
      });
    });

    // test invalid rewrites: a string
    await save(rewriteDb, { _id: '_design/invalid', rewrites: '[{"from":"foo","to":"bar"}]' });
    let res = await c.get(`/${dbName}/_design/invalid/_rewrite/foo`);
    assert.equal(res.status, 400, 'should return 400');

    await save(rewriteDb, {
      _id: '_design/requested_path',
      rewrites: [
        { from: 'show', to: '_show/origin/0' },
        { from: 'show_rewritten', to: '_rewrite/show' },
      ],
      shows: { origin: '(function(doc, req) {\n            return req.headers["x-couchdb-requested-path"];\n    })' },
    });
    let url = `/${dbName}/_design/requested_path/_rewrite/show`;
    res = await c.get(url);
    assert.equal(res.text, url, 'should return the original url');
    url = `/${dbName}/_design/requested_path/_rewrite/show_rewritten`;
    res = await c.get(url);
    assert.equal(res.text, url, 'returned the original url');

    await save(rewriteDb, { _id: '_design/loop', rewrites: [{ from: 'loop', to: '_rewrite/loop' }] });

    // Assert loop detection
    await runOnModifiedServer([{ section: 'httpd', key: 'rewrite_limit', value: '2' }], async () => {
      const l = await c.get(`/${dbName}/_design/loop/_rewrite/loop`);
      assert.equal(l.status, 400);
    });

    // Assert serial execution is not spuriously counted as loop
    await runOnModifiedServer([
      { section: 'httpd', key: 'rewrite_limit', value: '2' },
      { section: 'httpd', key: 'secure_rewrites', value: 'false' },
    ], async () => {
      for (let i = 0; i < 5; i++) assert.equal((await c.get(`/${dbName}/_design/test/_rewrite/foo`)).status, 200);
    });
    await c.del(`/${dbName}`);
  });
}

// -------------------------------------------------------------------------------- stats
// stats.js of the 1.x line (apache/couchdb 03ec23e, runTest/getStat form). Its max_dbs_open part
// waits (there with `GET /_sleep`) so that the databases it opened first are idle and closable.

const ST = 'c16m_stats';

async function statsTest(mod: string, key: string, funcs: { setup?: () => Promise<void>; run?: () => Promise<void>; test: (before: number, after: number) => void }) {
  await freshDb(ST);
  if (funcs.setup) await funcs.setup();
  const before = (await requestStats(mod, key)).current;
  if (funcs.run) await funcs.run();
  const after = (await requestStats(mod, key)).current;
  funcs.test(before, after);
}

async function doView(): Promise<void> {
  await save(ST, { _id: '_design/test', language: 'javascript', views: { all_docs: { map: 'function(doc) {emit(doc.integer, null);}' } } });
  await view(ST, 'test/all_docs');
}

test('stats: open databases, requests, reads, writes, bulk, view and temporary view reads, methods, status codes, the aggregates of every counter', async () => {
  await c.del(`/${ST}`);
  const before = (await requestStats('couchdb', 'open_databases')).current;
  await c.put(`/${ST}`);
  const after = (await requestStats('couchdb', 'open_databases')).current;
  assert.equal(after, before + 1, 'Creating a db increments open db count.');

  await statsTest('couchdb', 'open_databases', {
    setup: () => server.restart(),
    run: async () => { await open(ST, '123'); },
    test: (b, a) => assert.equal(a, b + 1, 'Opening a db increments open db count.'),
  });

  await statsTest('couchdb', 'open_databases', {
    run: async () => { await c.del(`/${ST}`); },
    test: (b, a) => assert.equal(a, b - 1, 'Deleting a db decrements open db count.'),
  });

  // Just fetching the before value is the extra +1 in test
  await statsTest('httpd', 'requests', {
    run: async () => { await c.get('/'); },
    test: (b, a) => assert.equal(a, b + 2, 'Request counts are incremented properly.'),
  });

  await statsTest('couchdb', 'database_reads', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { await open(ST, 'test'); },
    test: (b, a) => assert.equal(a, b + 1, 'Reading a doc increments docs reads.'),
  });
  await statsTest('couchdb', 'database_reads', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { await c.get('/'); },
    test: (b, a) => assert.equal(a, b, 'Only doc reads increment doc reads.'),
  });
  await statsTest('couchdb', 'database_reads', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { await c.get(`/${ST}/test?open_revs=all`); },
    test: (b, a) => assert.equal(a, b + 1, 'Reading doc revs increments docs reads.'),
  });

  await statsTest('couchdb', 'database_writes', {
    run: async () => { await save(ST, { a: '1' }); },
    test: (b, a) => assert.equal(a, b + 1, 'Saving docs incrememnts doc writes.'),
  });
  await statsTest('couchdb', 'database_writes', {
    run: async () => { await c.request('POST', `/${ST}`, { raw: '{"a": "1"}', headers: { 'Content-Type': 'application/json' } }); },
    test: (b, a) => assert.equal(a, b + 1, "POST'ing new docs increments doc writes."),
  });
  await statsTest('couchdb', 'database_writes', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { const doc = (await open(ST, 'test'))!; await save(ST, doc); },
    test: (b, a) => assert.equal(a, b + 1, 'Updating docs incrememnts doc writes.'),
  });
  await statsTest('couchdb', 'database_writes', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { const doc = (await open(ST, 'test'))!; await deleteDoc(ST, doc); },
    test: (b, a) => assert.equal(a, b + 1, 'Deleting docs increments doc writes.'),
  });
  await statsTest('couchdb', 'database_writes', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { await c.copy(`/${ST}/test`, { headers: { Destination: 'copy_of_test' } }); },
    test: (b, a) => assert.equal(a, b + 1, 'Copying docs increments doc writes.'),
  });
  await statsTest('couchdb', 'database_writes', {
    run: async () => { await c.request('PUT', `/${ST}/bin_doc2/foo2.txt`, { raw: 'This is no base64 encoded test', headers: { 'Content-Type': 'text/plain;charset=utf-8' } }); },
    test: (b, a) => assert.equal(a, b + 1, 'Create with attachment increments doc writes.'),
  });
  await statsTest('couchdb', 'database_writes', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => {
      const doc = (await open(ST, 'test'))!;
      await c.request('PUT', `/${ST}/test/foo2.txt?rev=${doc._rev}`, { raw: 'This is no base64 encoded text', headers: { 'Content-Type': 'text/plainn;charset=utf-8' } });
    },
    test: (b, a) => assert.equal(a, b + 1, 'Adding attachment increments doc writes.'),
  });

  // makeDocs(5) has no end: an empty _bulk_docs, still one bulk request
  await statsTest('httpd', 'bulk_requests', {
    run: async () => { await bulkSave(ST, []); },
    test: (b, a) => assert.equal(a, b + 1, 'The bulk_requests counter is incremented.'),
  });

  await statsTest('httpd', 'view_reads', {
    run: doView,
    test: (b, a) => assert.equal(a, b + 1, 'Reading a view increments view reads.'),
  });
  await statsTest('httpd', 'view_reads', {
    setup: async () => { await save(ST, { _id: 'test' }); },
    run: async () => { await open(ST, 'test'); },
    test: (b, a) => assert.equal(a, b, "Reading a doc doesn't increment view reads."),
  });
  await statsTest('httpd', 'temporary_view_reads', {
    run: async () => { await query(ST, 'function(doc) {emit(doc._id)}'); },
    test: (b, a) => assert.equal(a, b + 1, 'Temporary views have their own counter.'),
  });
  await statsTest('httpd', 'temporary_view_reads', {
    run: doView,
    test: (b, a) => assert.equal(a, b, "Permanent views don't affect temporary views."),
  });
  await statsTest('httpd', 'view_reads', {
    run: async () => { await query(ST, 'function(doc) {emit(doc._id)}'); },
    test: (b, a) => assert.equal(a, b, "Temporary views don't affect permanent views."),
  });

  // Relies on getting the stats values being GET requests.
  await statsTest('httpd_request_methods', 'GET', {
    test: (b, a) => assert.equal(a, b + 1, 'Get requests are incremented properly.'),
  });
  await statsTest('httpd_request_methods', 'GET', {
    run: async () => { await c.post('/'); },
    test: (b, a) => assert.equal(a, b + 1, "POST requests don't affect GET counter."),
  });
  await statsTest('httpd_request_methods', 'POST', {
    run: async () => { await c.post('/'); },
    test: (b, a) => assert.equal(a, b + 1, 'POST requests are incremented properly.'),
  });

  await statsTest('httpd_status_codes', '404', {
    run: async () => { await c.get('/nonexistant_db'); },
    test: (b, a) => assert.equal(a, b + 1, 'Increments 404 counter on db not found.'),
  });
  await statsTest('httpd_status_codes', '404', {
    run: async () => { await c.get('/'); },
    test: (b, a) => assert.equal(a, b, "Getting DB info doesn't increment 404's"),
  });

  const aggregates = ['current', 'description', 'mean', 'min', 'max', 'stddev', 'sum'];
  const summary = (await c.get('/_stats', { headers: { Accept: 'application/json' } })).body as Doc;
  assert.ok(Object.keys(summary).length > 0);
  for (const [, group] of Object.entries(summary)) {
    for (const [j, stat] of Object.entries(group as Doc)) {
      for (const k of Object.keys(stat as Doc)) assert.ok(aggregates.includes(k), `Unknown property name: ${j}`);
      for (const k of aggregates) assert.ok((stat as Doc)[k] !== undefined, `Missing required property: ${k} (${j})`);
    }
  }
  await c.del(`/${ST}`);
});

// CouchDB 1.6's couch_server (handle_call({open_result, ...})) counts a database in
// open_databases and puts it in the max_dbs_open LRU only when it is not a system database
// (couch_db:is_system_db: the users and replicator databases); so does Settee.
test('stats: open_databases and max_dbs_open leave out _users and _replicator, which are never closed to make room', async () => {
  await server.restart();
  const max = 5;
  await runOnModifiedServer([{ section: 'couchdb', key: 'max_dbs_open', value: String(max) }], async () => {
    const preDbs = (await requestStats('couchdb', 'open_databases')).current || 0;
    const preFiles = (await requestStats('couchdb', 'open_os_files')).current || 0;
    // (this port's check) after a restart no database but the system ones is open, and CouchDB
    // counts none of those
    assert.equal(preDbs, 0, 'open_databases after a restart');
    // As the script: the max'th database opens more than a second after the first, so the
    // first is idle by then (CouchDB's delayed commit; Settee's quiet time before closing).
    const times: number[] = [];
    for (let i = 0; i < max * 2; i++) {
      if (i >= max) {
        const msecs = Date.now() - times[i - max]!;
        if (msecs < 1000) await sleep(msecs + 250);
      }
      await freshDb(`${ST}_${i}`);
      times.push(Date.now());
      await save(`${ST}_${i}`, { _id: String(i), lang: 'Awesome!' });
    }
    const openDbs = (await requestStats('couchdb', 'open_databases')).current;
    assert.equal(openDbs > 0, true, 'We actually opened some dbs.');
    assert.equal(openDbs, max, "We only have max db's open.");
    for (let i = 0; i < max * 2; i++) await c.del(`/${ST}_${i}`);
    const postDbs = (await requestStats('couchdb', 'open_databases')).current;
    const postFiles = (await requestStats('couchdb', 'open_os_files')).current;
    assert.equal(postDbs, preDbs, 'We have the same number of open dbs.');
    assert.equal(postFiles || 0, preFiles, 'We have the same number of open files.');
  });

});

// ----------------------------------------------------------------------------- users_db
// users_db.js of the 1.x line (the stored version with the "roles must exist" check), plus the
// checks the script's next version adds for 1.6 behaviour: roles of strings only, and a password
// starting with ':'. The 1.6 runner's CouchDB.prepareUserDoc sends a plain `password` field.

const USERS = 'c16m_users';

function prepareUserDoc(userDoc: Doc, password?: string): Doc {
  userDoc._id ??= `org.couchdb.user:${userDoc.name}`;
  if (password) userDoc.password = password;
  userDoc.type = 'user';
  userDoc.roles ??= [];
  return userDoc;
}

const basic = (name: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}` });

test('users_db: _design/_auth, basic auth against the users database, no login with a conflicted user document, its validation rules', async () => {
  await c.del(`/${USERS}`);
  await runOnModifiedServer([{ section: 'couch_httpd_auth', key: 'authentication_db', value: USERS }], async () => {
    // test that the validation function is installed
    const ddoc = (await open(USERS, '_design/_auth'))!;
    assert.ok(ddoc.validate_doc_update);

    // test that you can login as a user using basic auth
    let jchrisUserDoc = prepareUserDoc({ name: 'jchris@apache.org' }, 'funnybone');
    assert.equal((await save(USERS, jchrisUserDoc)).body.ok, true);

    assert.equal((await c.get('/_session')).body.userCtx.name, null);

    // test that you can use basic auth against the users db
    let s = await c.get('/_session', { headers: { Authorization: 'Basic amNocmlzQGFwYWNoZS5vcmc6ZnVubnlib25l' } });
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.userCtx.name, 'jchris@apache.org');
    assert.equal(s.body.info.authenticated, 'default');
    assert.equal(s.body.info.authentication_db, USERS);
    assert.deepEqual(s.body.info.authentication_handlers, ['oauth', 'cookie', 'default']);
    s = await c.get('/_session', { headers: { Authorization: 'Basic Xzpf' } }); // name and pass of _:_
    assert.equal(s.body.name, undefined);
    assert.equal(s.body.info.authenticated, 'default');

    // now create a conflicting edit on the jchris doc, and make sure there's no login
    const jchrisUser2 = structuredClone(jchrisUserDoc);
    jchrisUser2.foo = 'bar';
    assert.equal((await save(USERS, jchrisUser2)).body.ok, true);
    assert.equal((await save(USERS, structuredClone(jchrisUserDoc))).status, 409, 'should be an update conflict');
    // save as bulk with all_or_nothing to force a conflict save
    await bulkSave(USERS, [jchrisUserDoc], { all_or_nothing: true });
    const jchrisWithConflict = (await open(USERS, jchrisUserDoc._id, { conflicts: true }))!;
    assert.equal(jchrisWithConflict._conflicts.length, 1);

    // no login with conflicted user doc
    s = await c.get('/_session', { headers: { Authorization: 'Basic amNocmlzQGFwYWNoZS5vcmc6ZnVubnlib25l' } });
    assert.notEqual(s.status, 200, 'this will throw');
    assert.equal(s.body.error, 'unauthorized');
    assert.match(s.body.reason, /conflict/);

    // you can delete a user doc
    const ctx = (await c.get('/_session')).body.userCtx;
    assert.equal(ctx.name, null);
    assert.ok(ctx.roles.includes('_admin'));
    assert.equal((await deleteDoc(USERS, jchrisWithConflict)).body.ok, true);

    // you can't change doc from type "user"
    jchrisUserDoc = (await open(USERS, jchrisUserDoc._id))!;
    const refused = async (doc: Doc, reason: string) => {
      const r = await save(USERS, structuredClone(doc));
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.reason, reason);
    };
    jchrisUserDoc.type = 'not user';
    await refused(jchrisUserDoc, 'doc.type must be user');
    jchrisUserDoc.type = 'user';

    // "roles" must be an array
    jchrisUserDoc.roles = 'not an array';
    await refused(jchrisUserDoc, 'doc.roles must be an array');
    // (next version) "roles" must be an array of strings
    jchrisUserDoc.roles = [12];
    await refused(jchrisUserDoc, 'doc.roles can only contain strings');
    jchrisUserDoc.roles = [];

    // "roles" must exist
    delete jchrisUserDoc.roles;
    await refused(jchrisUserDoc, 'doc.roles must exist');
    jchrisUserDoc.roles = [];

    // character : is not allowed in usernames
    await refused(prepareUserDoc({ name: 'joe:erlang' }, 'qwerty'), 'Character `:` is not allowed in usernames.');

    // (next version) a user with a password starting with ':' can log in
    assert.equal((await save(USERS, prepareUserDoc({ name: 'foo@example.org' }, ':bar'))).body.ok, true);
    s = await c.get('/_session', { headers: { Authorization: 'Basic Zm9vQGV4YW1wbGUub3JnOjpiYXI=' } });
    assert.equal(s.body.userCtx.name, 'foo@example.org');
  });
  await c.del(`/${USERS}`);
});

// ---------------------------------------------------------------------- view_sandboxing

test('view_sandboxing: maps cannot reach gc, map_funs or map_results; a map changing its doc does not change what other maps see (COUCHDB-925)', async () => {
  const db = 'c16m_view_sandboxing';
  await freshDb(db);
  assert.equal((await save(db, { integer: 1, string: '1', array: [1, 2, 3] })).body.ok, true);

  // a view cannot invoke interpreter internals such as the garbage collector
  let results = await query(db, '(function(doc) {\n      gc();\n      emit(null, doc);\n    })');
  assert.equal(results.total_rows, 0);
  // a view cannot access the map_funs array of the view server
  results = await query(db, '(function(doc) { map_funs.push(1); emit(null, doc); })');
  assert.equal(results.total_rows, 0);
  // a view cannot access the map_results array of the view server
  results = await query(db, '(function(doc) { map_results.push(1); emit(null, doc); })');
  assert.equal(results.total_rows, 0);

  // COUCHDB-925: altering 'doc' in one map function affects other map functions
  const ddoc = {
    _id: '_design/foobar',
    language: 'javascript',
    views: {
      view1: { map: 'function (doc) {\n            if (doc.values) {\n              doc.values = [666];\n            }\n            if (doc.tags) {\n              doc.tags.push("qwerty");\n            }\n            if (doc.tokens) {\n              doc.tokens["c"] = 3;\n            }\n          }' },
      view2: { map: 'function (doc) {\n            if (doc.values) {\n              emit(doc._id, doc.values);\n            }\n            if (doc.tags) {\n              emit(doc._id, doc.tags);\n            }\n            if (doc.tokens) {\n              emit(doc._id, doc.tokens);\n            }\n          }' },
    },
  };
  const doc1 = { _id: 'doc1', values: [1, 2, 3] };
  const doc2 = { _id: 'doc2', tags: ['foo', 'bar'], tokens: { a: 1, b: 2 } };
  await freshDb(db);
  assert.equal((await save(db, ddoc)).body.ok, true);
  assert.equal((await save(db, doc1)).body.ok, true);
  assert.equal((await save(db, doc2)).body.ok, true);

  const view1Results = await view(db, 'foobar/view1', { bypass_cache: Math.round(Math.random() * 1000) });
  const view2Results = await view(db, 'foobar/view2', { bypass_cache: Math.round(Math.random() * 1000) });
  assert.equal(view1Results.rows.length, 0, 'view1 has 0 rows');
  assert.equal(view2Results.rows.length, 3, 'view2 has 3 rows');
  assert.equal(view2Results.rows[0].key, doc1._id);
  assert.equal(view2Results.rows[1].key, doc2._id);
  assert.equal(view2Results.rows[2].key, doc2._id);

  assert.equal(view2Results.rows[0].value.length, 3, "installed engine doesn't allow sealing of arrays");
  assert.deepEqual(view2Results.rows[0].value, [1, 2, 3]);
  assert.equal(view2Results.rows[1].value.a, 1);
  assert.equal(view2Results.rows[1].value.b, 2);
  assert.equal(typeof view2Results.rows[1].value.c, 'undefined', 'doc2.tokens object was not sealed');
  assert.equal(view2Results.rows[2].value.length, 2, "installed engine doesn't allow sealing of arrays");
  assert.deepEqual(view2Results.rows[2].value, ['foo', 'bar']);
  await c.del(`/${db}`);
});

// ---------------------------------------------------------------------- view_update_seq

test('view_update_seq: update_seq in _all_docs and view answers, with stale=ok, keys and reduce', async () => {
  const db = 'c16m_view_update_seq';
  await freshDb(db);
  assert.equal((await info(db)).update_seq, 0);

  let resp = await allDocs(db, { update_seq: true });
  assert.equal(resp.rows.length, 0);
  assert.equal(resp.update_seq, 0);

  const designDoc = {
    _id: '_design/test',
    language: 'javascript',
    views: {
      all_docs: { map: 'function(doc) { emit(doc.integer, doc.string) }' },
      summate: { map: 'function (doc) {emit(doc.integer, doc.integer)};', reduce: 'function (keys, values) { return sum(values); };' },
    },
  };
  assert.equal((await save(db, designDoc)).body.ok, true);
  assert.equal((await info(db)).update_seq, 1);

  resp = await allDocs(db, { update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 1);

  await bulkSave(db, makeDocs(0, 100));

  resp = await allDocs(db, { limit: 1 });
  assert.equal(resp.rows.length, 1);
  assert.ok(!resp.update_seq, 'all docs');

  resp = await allDocs(db, { limit: 1, update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 101);

  resp = await view(db, 'test/all_docs', { limit: 1, update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 101);

  resp = await view(db, 'test/all_docs', { limit: 1, update_seq: false });
  assert.equal(resp.rows.length, 1);
  assert.ok(!resp.update_seq, 'view');

  resp = await view(db, 'test/summate', { update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 101);

  await save(db, { id: '0' });
  resp = await view(db, 'test/all_docs', { limit: 1, stale: 'ok', update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 101);

  resp = await view(db, 'test/all_docs', { limit: 1, update_seq: true });
  assert.equal(resp.rows.length, 1);
  assert.equal(resp.update_seq, 102);

  resp = await view(db, 'test/all_docs', { update_seq: true }, ['0', '1']);
  assert.equal(resp.update_seq, 102);
  resp = await view(db, 'test/all_docs', { update_seq: true }, ['0', '1']);
  assert.equal(resp.update_seq, 102);
  resp = await view(db, 'test/summate', { group: true, update_seq: true }, ['0', '1']);
  assert.equal(resp.update_seq, 102);
  await c.del(`/${db}`);
});

// ---------------------------------------------------------------------- view_pagination

test('view_pagination: paging a temporary view by startkey/startkey_docid both ways, descending=false, endkey_docid', async () => {
  const db = 'c16m_view_pagination';
  await freshDb(db);
  const docs = makeDocs(0, 100);
  await bulkSave(db, docs);
  const queryFun = 'function(doc) { emit(doc.integer, null); }';

  // page through the view ascending
  for (let i = 0; i < docs.length; i += 10) {
    const r = await query(db, queryFun, null, { startkey: i, startkey_docid: i, limit: 10 });
    assert.equal(r.rows.length, 10);
    assert.equal(r.total_rows, docs.length);
    assert.equal(r.offset, i);
    for (let j = 0; j < 10; j++) assert.equal(r.rows[j].key, i + j);
  }
  // page through the view descending
  for (let i = docs.length - 1; i >= 0; i -= 10) {
    const r = await query(db, queryFun, null, { startkey: i, startkey_docid: i, descending: true, limit: 10 });
    assert.equal(r.rows.length, 10);
    assert.equal(r.total_rows, docs.length);
    assert.equal(r.offset, docs.length - i - 1);
    for (let j = 0; j < 10; j++) assert.equal(r.rows[j].key, i - j);
  }
  // ignore descending=false
  for (let i = 0; i < docs.length; i += 10) {
    const r = await query(db, queryFun, null, { startkey: i, startkey_docid: i, descending: false, limit: 10 });
    assert.equal(r.rows.length, 10);
    assert.equal(r.total_rows, docs.length);
    assert.equal(r.offset, i);
    for (let j = 0; j < 10; j++) assert.equal(r.rows[j].key, i + j);
  }
  // test endkey_docid
  const r = await query(db, 'function(doc) { emit(null, null);}', null, { startkey: null, startkey_docid: 1, endkey: null, endkey_docid: 40 });
  assert.equal(r.rows.length, 35);
  assert.equal(r.total_rows, docs.length);
  assert.equal(r.offset, 1);
  const expected = ['1', '10', '11', '12', '13', '14', '15', '16', '17', '18', '19', '2', '20', '21', '22', '23', '24', '25',
    '26', '27', '28', '29', '3', '30', '31', '32', '33', '34', '35', '36', '37', '38', '39', '4', '40'];
  assert.deepEqual(r.rows.map((row: Doc) => row.id), expected);
  await c.del(`/${db}`);
});

// ------------------------------------------------------------------------ multiple_rows

test('multiple_rows: a document emitting several rows, updated and deleted', async () => {
  const db = 'c16m_multiple_rows';
  await freshDb(db);
  const nc: Doc = { _id: 'NC', cities: ['Charlotte', 'Raleigh'] };
  const ma: Doc = { _id: 'MA', cities: ['Boston', 'Lowell', 'Worcester', 'Cambridge', 'Springfield'] };
  const fl: Doc = { _id: 'FL', cities: ['Miami', 'Tampa', 'Orlando', 'Springfield'] };
  assert.equal((await save(db, nc)).body.ok, true);
  assert.equal((await save(db, ma)).body.ok, true);
  assert.equal((await save(db, fl)).body.ok, true);

  const generateListOfCitiesAndState = 'function(doc) { for (var i = 0; i < doc.cities.length; i++)  emit(doc.cities[i] + ", " + doc._id, null);}';
  const keys = async () => (await query(db, generateListOfCitiesAndState)).rows.map((row: Doc) => row.key);

  assert.deepEqual((await keys()).slice(0, 11), ['Boston, MA', 'Cambridge, MA', 'Charlotte, NC', 'Lowell, MA', 'Miami, FL',
    'Orlando, FL', 'Raleigh, NC', 'Springfield, FL', 'Springfield, MA', 'Tampa, FL', 'Worcester, MA']);

  // add another city to NC
  nc.cities.push('Wilmington');
  assert.equal((await save(db, nc)).body.ok, true);
  assert.deepEqual((await keys()).slice(0, 12), ['Boston, MA', 'Cambridge, MA', 'Charlotte, NC', 'Lowell, MA', 'Miami, FL',
    'Orlando, FL', 'Raleigh, NC', 'Springfield, FL', 'Springfield, MA', 'Tampa, FL', 'Wilmington, NC', 'Worcester, MA']);

  // now delete MA
  assert.equal((await deleteDoc(db, ma)).body.ok, true);
  assert.deepEqual((await keys()).slice(0, 7), ['Charlotte, NC', 'Miami, FL', 'Orlando, FL', 'Raleigh, NC', 'Springfield, FL',
    'Tampa, FL', 'Wilmington, NC']);
  await c.del(`/${db}`);
});

// ---------------------------------------------------------------------- method_override

test('method_override: a POST with X-HTTP-Method-Override acts as PUT or DELETE; a GET ignores it', async () => {
  const result = (await c.get('/')).body;
  assert.equal(result.couchdb, 'Welcome');
  const db = 'c16m_method_override';
  await freshDb(db);

  let doc: Doc | null = { bob: 'connie' };
  let x = await c.post(`/${db}/fnord`, doc, { headers: { 'X-HTTP-Method-Override': 'PUT' } });
  assert.equal(x.status, 201, x.text);
  doc = await open(db, 'fnord');
  assert.equal(doc!.bob, 'connie');

  x = await c.request('POST', `/${db}/fnord?rev=${doc!._rev}`, { headers: { 'X-HTTP-Method-Override': 'DELETE', 'Content-Type': 'application/json' } });
  assert.equal(x.status, 200, x.text);

  x = await getWithBody(`/${db}/fnord2`, doc, { 'X-HTTP-Method-Override': 'PUT' });
  // Method Override is ignored when original Method isn't POST
  assert.equal(x.status, 404);

  doc = await open(db, 'fnord');
  assert.equal(doc, null);
  await c.del(`/${db}`);
});

// --------------------------------------------------------------------------------- http

test('http: Location headers name the host asked for, X-Forwarded-Host, or the header [httpd] x_forwarded_host names', async () => {
  const db = 'c16m_http';
  await c.del(`/${db}`);
  // bug COUCHDB-100: DELETE on non-existent DB returns 500 instead of 404
  assert.equal((await c.del(`/${db}`)).status, 404);
  assert.equal((await c.put(`/${db}`)).status, 201);

  let x = await c.request('PUT', `/${db}/test`, { raw: '{}', headers: { 'Content-Type': 'application/json' } });
  assert.equal(x.headers.location, `${server.url}${db}/test`, 'should include ip address');

  x = await c.request('PUT', `/${db}/test2`, { raw: '{}', headers: { 'Content-Type': 'application/json', 'X-Forwarded-Host': 'mysite.com' } });
  assert.equal(x.headers.location, `http://mysite.com/${db}/test2`, 'should include X-Forwarded-Host');

  await runOnModifiedServer([{ section: 'httpd', key: 'x_forwarded_host', value: 'X-Host' }], async () => {
    x = await c.request('PUT', `/${db}/test3`, { raw: '{}', headers: { 'Content-Type': 'application/json', 'X-Host': 'mysite2.com' } });
    assert.equal(x.headers.location, `http://mysite2.com/${db}/test3`, 'should include X-Host');
  });
  await c.del(`/${db}`);
});

// -------------------------------------------------------------------------- form_submit

test('form_submit: a JSON POST to a document id is a 415 bad_content_type', async () => {
  const db = 'c16m_form_submit';
  await freshDb(db);
  // The browser running the suite sends its page as Referer, which CouchDB checks first.
  const x = await c.request('POST', `/${db}/baz`, { raw: '{}', headers: { 'Content-Type': 'application/json', Referer: `${server.url}_utils/couch_tests.html` } });
  assert.equal(x.status, 415);
  // The script's T(result.error, "bad_content_type") and T(result.reason, "...") check only that
  // both are there (the second argument is T's message); 1.6's couch_httpd:validate_ctype words
  // the reason "Content-Type must be multipart/form-data".
  assert.equal(x.body.error, 'bad_content_type');
  assert.ok(x.body.reason);
  await c.del(`/${db}`);
});

// ------------------------------------------------------------------------- design_paths

test('design_paths: design documents from _bulk_docs and PUT, at _design/x and _design%2Fx, in databases with and without a slash', async () => {
  for (const name of ['c16m_design_paths', 'c16m_design_paths/with_slashes']) {
    const dbName = E(name);
    await freshDb(name);

    // create a ddoc w bulk_docs
    await bulkSave(name, [{ _id: '_design/test', views: { testing: { map: 'function(){emit(1,1)}' } } }]);
    assert.equal((await c.get(`/${dbName}/_design/test`)).body._id, '_design/test');
    // it's at 2 urls...
    assert.equal((await c.get(`/${dbName}/_design%2Ftest`, { followRedirects: true })).body._id, '_design/test');
    // ensure that views are addressable
    assert.equal((await view(name, 'test/testing')).total_rows, 0);

    // create a ddoc by putting to url with raw slash
    const x = await c.put(`/${dbName}/_design/test2`, { _id: '_design/test2', views: { testing: { map: 'function(){emit(1,1)}' } } });
    assert.equal(x.status, 201, x.text);
    assert.equal((await c.get(`/${dbName}/_design/test2`)).body._id, '_design/test2');
    assert.equal((await c.get(`/${dbName}/_design%2Ftest2`, { followRedirects: true })).body._id, '_design/test2');
    assert.equal((await view(name, 'test2/testing')).total_rows, 0);
    await c.del(`/${dbName}`);
  }
});

// -------------------------------------------------------------------------- attachments
// attachments.js of the 1.x line (apache/couchdb 8d83b39). The script reads a large text from
// the suite's own files (/_utils/script/test/lorem.txt); this port sends a text of its own.

const LOREM = Array.from({ length: 400 }, (_, i) => `Lorem ipsum dolor sit amet, consectetur adipiscing elit ${i}. Sed do eiusmod tempor.\n`).join('');

test('attachments: inline, standalone and empty attachments, revisions, binary data, sparseness at compaction, large attachments, ETags, stubs, Content-MD5', async () => {
  const db = 'c16m_attachments';
  const text = { 'Content-Type': 'text/plain;charset=utf-8' };
  await freshDb(db);

  const binAttDoc = { _id: 'bin_doc', _attachments: { 'foo.txt': { content_type: 'application/octet-stream', data: BASE64_TEXT } } };
  assert.equal((await save(db, binAttDoc)).body.ok, true);
  let x = await c.get(`/${db}/bin_doc/foo.txt`);
  assert.equal(x.text, PLAIN_TEXT);
  assert.equal(x.headers['content-type'], 'application/octet-stream');
  assert.equal(x.headers.etag, '"aEI7pOYCRBLTRQvvqYrrJQ=="');

  // empty attachment
  let binAttDoc2: Doc = { _id: 'bin_doc2', _attachments: { 'foo.txt': { content_type: 'text/plain', data: '' } } };
  assert.equal((await save(db, binAttDoc2)).body.ok, true);
  x = await c.get(`/${db}/bin_doc2/foo.txt`);
  assert.equal(x.text.length, 0);
  assert.equal(x.headers['content-type'], 'text/plain');

  // test RESTful doc API
  x = await c.request('PUT', `/${db}/bin_doc2/foo2.txt?rev=${binAttDoc2._rev}`, { raw: 'This is no base64 encoded text', headers: text });
  assert.equal(x.status, 201);
  assert.equal(String(x.headers.location).slice(-18), '/bin_doc2/foo2.txt', 'should return Location header to newly created or updated attachment');
  let rev = x.body.rev;

  binAttDoc2 = (await open(db, 'bin_doc2'))!;
  assert.notEqual(binAttDoc2._attachments['foo.txt'], undefined);
  assert.notEqual(binAttDoc2._attachments['foo2.txt'], undefined);
  assert.equal(binAttDoc2._attachments['foo2.txt'].content_type.toLowerCase(), 'text/plain;charset=utf-8');
  assert.equal(binAttDoc2._attachments['foo2.txt'].length, 30);

  x = await c.get(`/${db}/bin_doc2/foo2.txt`);
  assert.equal(x.text, 'This is no base64 encoded text');
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');

  // test without rev, should fail
  assert.equal((await c.del(`/${db}/bin_doc2/foo2.txt`)).status, 409);
  // test with rev, should not fail
  x = await c.del(`/${db}/bin_doc2/foo2.txt?rev=${rev}`);
  assert.equal(x.status, 200);
  assert.equal(x.headers.location, undefined, 'should not return Location header on DELETE request');

  // test binary data
  const binData = 'JHAPDO*AU£PN ){(3u[d 93DQ9¡€])}    ææøo\'∂ƒæ≤çæππ•¥∫¶®#†π¶®¥π€ª®˙π8np';
  x = await c.request('PUT', `/${db}/bin_doc3/attachment.txt`, { raw: binData, headers: text });
  assert.equal(x.status, 201);
  rev = x.body.rev;
  assert.equal(x.headers.etag, `"${rev}"`);

  x = await c.get(`/${db}/bin_doc3/attachment.txt`);
  assert.equal(x.text, binData);
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');

  // without rev
  assert.equal((await c.request('PUT', `/${db}/bin_doc3/attachment.txt`, { raw: binData, headers: text })).status, 409);
  // with nonexistent rev
  assert.equal((await c.request('PUT', `/${db}/bin_doc3/attachment.txt?rev=1-adae8575ecea588919bd08eb020c708e`, { raw: binData, headers: text })).status, 409);
  // with current rev
  x = await c.request('PUT', `/${db}/bin_doc3/attachment.txt?rev=${rev}`, { raw: binData, headers: text });
  assert.equal(x.status, 201);
  rev = x.body.rev;
  assert.equal(x.headers.etag, `"${rev}"`);

  x = await c.get(`/${db}/bin_doc3/attachment.txt`);
  assert.equal(x.text, binData);
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');
  x = await c.get(`/${db}/bin_doc3/attachment.txt?rev=${rev}`);
  assert.equal(x.text, binData);
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');

  assert.equal((await c.del(`/${db}/bin_doc3/attachment.txt?rev=${rev}`)).status, 200);
  assert.equal((await c.get(`/${db}/bin_doc3/attachment.txt`)).status, 404);

  // deleted attachment is still accessible with revision
  x = await c.get(`/${db}/bin_doc3/attachment.txt?rev=${rev}`);
  assert.equal(x.status, 200);
  assert.equal(x.text, binData);
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');

  // empty attachments
  x = await c.request('PUT', `/${db}/bin_doc4/attachment.txt`, { raw: '', headers: text });
  assert.equal(x.status, 201);
  rev = x.body.rev;
  x = await c.get(`/${db}/bin_doc4/attachment.txt`);
  assert.equal(x.status, 200);
  assert.equal(x.text.length, 0);

  // overwrite previously empty attachment
  x = await c.request('PUT', `/${db}/bin_doc4/attachment.txt?rev=${rev}`, { raw: 'This is a string', headers: text });
  assert.equal(x.status, 201);
  x = await c.get(`/${db}/bin_doc4/attachment.txt`);
  assert.equal(x.status, 200);
  assert.equal(x.text, 'This is a string');

  // Attachment sparseness COUCHDB-220
  const docs: Doc[] = [];
  for (let i = 0; i < 5; i++) docs.push({ _id: String(i), _attachments: { 'foo.txt': { content_type: 'text/plain', data: BASE64_TEXT } } });
  const saved = (await bulkSave(db, docs)).body as Doc[];
  // delete the docs, and, looping over them, remove '_rev' so they can be re-created
  const toUp: Doc[] = [];
  for (let i = 0; i < saved.length; i++) {
    toUp.push({ _id: saved[i]!.id, _rev: saved[i]!.rev, _deleted: true });
    delete docs[i]!._rev;
  }
  await bulkSave(db, toUp);
  await bulkSave(db, docs);

  const before = (await info(db)).disk_size;
  // Compact it.
  x = await c.post(`/${db}/_compact`, undefined, { headers: { 'Content-Type': 'application/json' } });
  assert.equal(x.body.ok, true);
  assert.equal(x.status, 202);
  for (let i = 0; i < 1000 && (await info(db)).compact_running; i++) await sleep(20);
  const after = (await info(db)).disk_size;
  // Compaction should reduce the database slightly, but not orders of magnitude
  assert.ok(after > before * 0.1, `before: ${before} after: ${after}`);

  // test large attachments - COUCHDB-366
  x = await c.request('PUT', `/${db}/bin_doc5/lorem.txt`, { raw: LOREM, headers: text });
  assert.equal(x.status, 201);
  rev = x.body.rev;
  x = await c.get(`/${db}/bin_doc5/lorem.txt`);
  assert.equal(x.text, LOREM);
  assert.equal(String(x.headers['content-type']).toLowerCase(), 'text/plain;charset=utf-8');

  // test large inline attachment too
  const doc5 = (await open(db, 'bin_doc5', { attachments: true }))!;
  assert.equal(doc5._attachments['lorem.txt'].data, Buffer.from(LOREM).toString('base64'));

  // test etags for attachments.
  x = await c.get(`/${db}/bin_doc5/lorem.txt`);
  assert.equal(x.status, 200);
  const etag = String(x.headers.etag);
  x = await c.get(`/${db}/bin_doc5/lorem.txt`, { headers: { 'if-none-match': etag } });
  assert.equal(x.status, 304);

  // test COUCHDB-497 - empty attachments
  x = await c.request('PUT', `/${db}/bin_doc5/empty.txt?rev=${rev}`, { raw: '', headers: { ...text, 'Content-Length': '0' } });
  assert.equal(x.status, 201, 'should send 201 Accepted');
  rev = x.body.rev;
  x = await c.request('PUT', `/${db}/bin_doc5/empty.txt?rev=${rev}`, { headers: text });
  assert.equal(x.status, 201, 'should send 201 Accepted');

  // implicit doc creation allows creating docs with a reserved id. COUCHDB-565
  x = await c.request('PUT', `/${db}/_nonexistant/attachment.txt`, { raw: 'THIS IS AN ATTACHMENT. BOOYA!', headers: text });
  assert.equal(x.status, 400, 'should return error code 400 Bad Request');

  // test COUCHDB-809 - stubs should only require the 'stub' field
  const binDoc6: Doc = { _id: 'bin_doc6', _attachments: { 'foo.txt': { content_type: 'text/plain', data: BASE64_TEXT } } };
  assert.equal((await save(db, binDoc6)).body.ok, true);
  // stub out the attachment
  binDoc6._attachments['foo.txt'] = { stub: true };
  assert.equal((await save(db, binDoc6)).body.ok, true);
  // stub out the attachment with the wrong revpos
  binDoc6._attachments['foo.txt'] = { stub: true, revpos: 10 };
  x = await save(db, binDoc6);
  assert.notEqual(x.status, 201, "Shouldn't get here!");
  assert.equal(x.body.error, 'missing_stub');

  // test MD5 header
  x = await c.request('PUT', `/${db}/bin_doc7/attachment.txt`, { raw: 'foo bar', headers: { 'Content-Type': 'application/octet-stream', 'Content-MD5': 'MntvB0NYESObxH4VRDUycw==' } });
  assert.equal(x.status, 201);
  x = await c.get(`/${db}/bin_doc7/attachment.txt`);
  assert.equal(x.headers['content-md5'], 'MntvB0NYESObxH4VRDUycw==');
  assert.equal(createHash('md5').update('foo bar').digest('base64'), 'MntvB0NYESObxH4VRDUycw==');
  await c.del(`/${db}`);
});

// ------------------------------------------------------------------------------- basics
// basics.js of the 1.x line (apache/couchdb c2c7f19). Documents with unknown `_` members are a
// 500 doc_validation: 1.6's couch_httpd:error_info has no clause of its own for doc_validation
// (later versions answer 400).

test('basics: welcome, database creation and Location, documents, revs_info, local_seq, open_revs/latest, views, deletion, restarts, error responses', async () => {
  const db = 'c16m_basics';
  assert.equal((await c.get('/')).body.couchdb, 'Welcome');
  await c.del(`/${db}`);
  // bug COUCHDB-100: DELETE on non-existent DB returns 500 instead of 404
  assert.equal((await c.del(`/${db}`)).status, 404);
  assert.equal((await c.put(`/${db}`)).status, 201);

  // PUT on existing DB should return 412 instead of 500
  let x = await c.put(`/${db}/`);
  assert.equal(x.status, 412);

  // creating a new DB should return Location header, also for dbs with slashes (COUCHDB-411)
  for (const dbname of [db, `${db}%2Fwith_slashes`]) {
    await c.del(`/${dbname}`);
    x = await c.put(`/${dbname}`);
    const location = String(x.headers.location);
    assert.equal(location.slice(-dbname.length), dbname, 'should return Location header to newly created document');
    assert.equal(location.slice(0, 'http://'.length), 'http://', 'should return absolute Location header to newly created document');
  }

  assert.equal((await info(db)).db_name, db);
  assert.ok(((await c.get('/_all_dbs')).body as string[]).includes(db));
  assert.equal((await info(db)).doc_count, 0);

  // create a document and save it to the database
  const doc: Doc = { _id: '0', a: 1, b: 1 };
  const result = (await save(db, doc)).body;
  assert.equal(result.ok, true);
  assert.ok(result.id);
  assert.ok(result.rev);
  assert.ok(doc._id === result.id && doc._rev === result.rev);
  const id = result.id;

  // make sure the revs_info status is good
  assert.equal((await open(db, id, { revs_info: true }))!._revs_info[0].status, 'available');
  // make sure you can do a seq=true option
  assert.equal((await open(db, id, { local_seq: true }))!._local_seq, 1);

  assert.equal((await save(db, { _id: '1', a: 2, b: 4 })).body.ok, true);
  assert.equal((await save(db, { _id: '2', a: 3, b: 9 })).body.ok, true);
  assert.equal((await save(db, { _id: '3', a: 4, b: 16 })).body.ok, true);
  assert.equal((await info(db)).doc_count, 4);

  // COUCHDB-954
  const oldRev = (await save(db, { _id: 'COUCHDB-954', a: 1 })).body.rev;
  const newRev = (await save(db, { _id: 'COUCHDB-954', _rev: oldRev })).body.rev;
  // test behavior of open_revs with explicit revision list
  let revs = await open(db, 'COUCHDB-954', { open_revs: [oldRev, newRev] }) as unknown as Doc[];
  assert.equal(revs.length, 2, 'should get two revisions back');
  assert.ok(revs[0]!.ok);
  assert.ok(revs[1]!.ok);
  // latest=true suppresses non-leaf revisions
  revs = await open(db, 'COUCHDB-954', { open_revs: [oldRev, newRev], latest: true }) as unknown as Doc[];
  assert.equal(revs.length, 1, 'should only get the child revision with latest=true');
  assert.equal(revs[0]!.ok._rev, newRev, 'should get the child and not the parent');
  // latest=true returns a child when you ask for a parent
  revs = await open(db, 'COUCHDB-954', { open_revs: [oldRev], latest: true }) as unknown as Doc[];
  assert.equal(revs[0]!.ok._rev, newRev, 'should get child when we requested parent');
  // clean up after ourselves
  await save(db, { _id: 'COUCHDB-954', _rev: newRev, _deleted: true });

  // a map function that selects all documents whose "a" member is 4, and returns b
  const mapFunction = '(function(doc){\n    if (doc.a==4)\n      emit(null, doc.b);\n  })';
  let results = await query(db, mapFunction);
  assert.ok(results.total_rows === 1 && results.rows[0].value === 16);

  // reopen document we saved earlier, modify and save
  const existingDoc = (await open(db, id))!;
  assert.equal(existingDoc.a, 1);
  existingDoc.a = 4;
  await save(db, existingDoc);
  results = await query(db, mapFunction);
  assert.equal(results.total_rows, 2);

  // write 2 more documents
  assert.equal((await save(db, { a: 3, b: 9 })).body.ok, true);
  assert.equal((await save(db, { a: 4, b: 16 })).body.ok, true);
  results = await query(db, mapFunction);
  assert.equal(results.total_rows, 3);
  assert.equal((await info(db)).doc_count, 6);

  results = await query(db, mapFunction, '(function(keys, values){\n    return sum(values);\n  })');
  assert.equal(results.rows[0].value, 33);

  // delete a document
  assert.equal((await deleteDoc(db, existingDoc)).body.ok, true);
  assert.equal(await open(db, existingDoc._id), null);
  results = await query(db, mapFunction);
  assert.equal(results.total_rows, 2);
  assert.equal((await info(db)).doc_count, 5);

  // make sure we can still open the old rev of the deleted doc
  assert.notEqual(await open(db, existingDoc._id, { rev: existingDoc._rev }), null);
  // make sure restart works
  await ensureFullCommit(db);
  await server.restart();
  assert.notEqual(await open(db, existingDoc._id, { rev: existingDoc._rev }), null);

  // test that the POST response has a Location header
  x = await c.post(`/${db}`, { foo: 'bar' });
  assert.equal(x.body.ok, true);
  const loc = x.headers.location;
  assert.ok(loc, 'should have a Location header');
  const locs = String(loc).split('/');
  assert.equal(locs[locs.length - 1], x.body.id);
  assert.equal(locs[locs.length - 2], db);

  // test that POSTs with an _id aren't overridden with a UUID
  x = await c.post(`/${db}`, { _id: 'oppossum', yar: 'matey' });
  assert.equal(x.body.ok, true);
  assert.equal(x.body.id, 'oppossum');
  assert.equal((await open(db, 'oppossum'))!.yar, 'matey');

  // document PUTs should return a Location header
  x = await c.request('PUT', `/${db}/newdoc`, { raw: JSON.stringify({ a: 1 }), headers: { 'Content-Type': 'application/json' } });
  assert.equal(String(x.headers.location).slice(-`/${db}/newdoc`.length), `/${db}/newdoc`, 'should return Location header to newly created document');
  assert.equal(String(x.headers.location).slice(0, 'http://'.length), 'http://', 'should return absolute Location header to newly created document');

  // deleting a non-existent doc should be 404
  assert.equal((await c.del(`/${db}/doc-does-not-exist`)).status, 404);

  // Check for invalid document members
  const badDocs: [string, Doc][] = [
    ['goldfish', { _zing: 4 }],
    ['zebrafish', { _zoom: 'hello' }],
    ['mudfish', { zane: 'goldfish', _fan: 'something smells delicious' }],
    ['tastyfish', { _bing: { 'wha?': 'soda can' } }],
  ];
  for (const [docId, body] of badDocs) {
    x = await c.request('PUT', `/${db}/${docId}`, { raw: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
    assert.equal(x.status, 500, x.text);
    assert.equal(x.body.error, 'doc_validation');
    x = await c.post(`/${db}/`, body);
    assert.equal(x.status, 500, x.text);
    assert.equal(x.body.error, 'doc_validation');
  }

  // Check some common error responses. PUT body not an object
  const rawJson = (method: string, path: string, body: string) => c.request(method, path, { raw: body, headers: { 'Content-Type': 'application/json' } });
  x = await rawJson('PUT', `/${db}/bar`, '[]');
  assert.equal(x.status, 400);
  assert.equal(x.body.error, 'bad_request');
  assert.equal(x.body.reason, 'Document must be a JSON object');

  // Body of a _bulk_docs is not an object
  x = await rawJson('POST', `/${db}/_bulk_docs`, '[]');
  assert.equal(x.status, 400);
  assert.equal(x.body.error, 'bad_request');
  assert.equal(x.body.reason, 'Request body must be a JSON object');

  // Body of an _all_docs multi-get is not a {"key": [...]} structure.
  x = await rawJson('POST', `/${db}/_all_docs`, '[]');
  assert.equal(x.status, 400);
  assert.equal(x.body.error, 'bad_request');
  assert.equal(x.body.reason, 'Request body must be a JSON object');
  x = await rawJson('POST', `/${db}/_all_docs`, '{"keys": 1}');
  assert.equal(x.status, 400);
  assert.equal(x.body.error, 'bad_request');
  assert.equal(x.body.reason, '`keys` member must be a array.');

  // oops, the doc id got lost in code nirwana
  x = await c.del(`/${db}/?rev=foobarbaz`);
  assert.equal(x.status, 400, 'should return a bad request');
  assert.equal(x.body.error, 'bad_request');
  assert.equal(x.body.reason, 'You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?');

  // On restart, a request for creating a database that already exists can not override the
  // existing database file
  const foobar = 'c16m_basics_foobar';
  await c.del(`/${foobar}`);
  assert.equal((await c.put(`/${foobar}`)).status, 201);
  assert.equal((await save(foobar, { _id: 'doc1' })).body.ok, true);
  await ensureFullCommit(foobar);
  assert.equal((await info(foobar)).doc_count, 1);
  await server.restart();
  assert.equal((await c.put(`/${foobar}`)).status, 412);
  assert.equal((await info(foobar)).doc_count, 1);

  for (const name of [db, `${db}%2Fwith_slashes`, foobar]) await c.del(`/${name}`);
});
