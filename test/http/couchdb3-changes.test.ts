/**
 * CouchDB 3's Elixir `_changes` tests (test/elixir/test/changes_test.exs and
 * changes_async_test.exs), ported to real HTTP against Settee on a single node.
 *
 * CouchDB 3's sequences are opaque strings ("3-g1AAA..."); Settee's are numbers. Where the
 * originals check a sequence's "N-" prefix, these compare the sequence's number instead.
 * The originals read live feeds one chunk at a time with short timeouts; here the feeds are
 * read to their end (or until a condition holds) with generous bounds, never timed.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { elixirDbHelpers, makeDocs } from '../helpers/couch-elixir.js';
import { openStream, jsonLines, type OpenStream, type StreamOptions } from '../helpers/stream.js';

const { server, c } = await serverForFile();
/** The originals' create_doc and bulk_save; `mkdb` is `@tag :with_db`. */
const { mkdb, createDoc, bulkSave } = elixirDbHelpers(c, 'c3-changes');
const open: OpenStream[] = [];
after(() => {
  for (const st of open) st.close();
});

async function openDoc(db: string, id: string): Promise<Record<string, unknown>> {
  const r = await c.get(`/${db}/${id}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function saveDoc(db: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await c.put(`/${db}/${body._id as string}`, body);
  assert.ok([201, 202].includes(r.status), `save_doc: ${r.status} ${r.text}`);
  assert.equal(r.body.ok, true);
  return { ...body, _rev: r.body.rev };
}

const sampleDocFoo = () => ({ _id: 'foo', bar: 'baz' });
const createDocBar = (db: string, id: string) => createDoc(db, { _id: id, bar: 1 });

/** The originals' create_filters_view: the changes_filter design document. */
async function createFiltersView(db: string): Promise<void> {
  const dynamic = 'function(doc, req) {\n  var field = req.query.field;\n  return doc[field];\n}\n';
  await createDoc(db, {
    _id: '_design/changes_filter',
    filters: {
      bop: 'function(doc, req) { return (doc.bop);}',
      dynamic,
      userCtx: dynamic,
      conflicted: 'function(doc, req) { return (doc._conflicts);}',
    },
    options: { local_seq: true },
    views: {
      local_seq: { map: 'function(doc) {emit(doc._local_seq, null)}' },
      blah: { map: 'function(doc) {\n  if (doc._id == "blah") {\n    emit(null, null);\n  }\n}\n' },
    },
  });
}

/** The originals' create_erlang_filters_view: a filter in the native (Erlang) query server's language. */
async function createErlangFiltersView(db: string): Promise<void> {
  const erlangFun = [
    ' fun({Doc}, Req) ->',
    '  case couch_util:get_value(<<"value">>, Doc) of',
    '    undefined -> false;',
    '       Value -> (Value rem 2) =:= 0;',
    '    _ -> false',
    '  end',
    ' end.',
    '',
  ].join('\n');
  await createDoc(db, { _id: '_design/erlang', language: 'erlang', filters: { foo: erlangFun } });
}

const changeRevAt = (results: any[], i: number): string => results[i].changes[0].rev;
const ids = (results: { id?: string }[]): string[] => results.map((r) => r.id!);

/** A sequence's number: Settee's numeric sequence, or the "N-" prefix of a CouchDB 3 sequence. */
const seqNum = (seq: unknown): number => (typeof seq === 'number' ? seq : parseInt(String(seq), 10));

async function live(path: string, options: StreamOptions = {}, method: 'GET' | 'POST' = 'GET'): Promise<OpenStream> {
  // Rawresp sends Content-Type: application/json on every request.
  const st = await openStream(server.url, method, path, { headerTimeoutMs: 30000, ...options, headers: { 'Content-Type': 'application/json', ...options.headers } });
  open.push(st);
  return st;
}

/** The originals' parse_event: every non-blank `data:` value, decoded. */
function parseEventData(text: string): any[] {
  return [...text.matchAll(/data: (.*)/g)].map((m) => m[1]!).filter((d) => d.trim() !== '').map((d) => JSON.parse(d));
}

async function checkEmptyDb(db: string): Promise<void> {
  const r = await c.get(`/${db}/_changes`);
  assert.deepEqual(r.body.results, [], 'db must be empty');
  assert.equal(seqNum(r.body.last_seq), 0, 'seq must start with 0');
}

// ------------------------------------------------------------------ changes_test.exs

test('changes: Changes feed negative heartbeat', async () => {
  const db = await mkdb('neg-hb');
  const r = await c.get(`/${db}/_changes?feed=continuous&heartbeat=-1000`);
  assert.equal(r.status, 400, r.text.slice(0, 200));
  assert.equal(r.body?.error, 'bad_request');
  assert.equal(r.body?.reason, 'The heartbeat value should be a positive integer (in milliseconds).');
});

test('changes: Changes feed non-integer heartbeat', async () => {
  const db = await mkdb('nonint-hb');
  const r = await c.get(`/${db}/_changes?feed=continuous&heartbeat=a1000`);
  assert.equal(r.status, 400, r.text.slice(0, 200));
  assert.equal(r.body?.error, 'bad_request');
  assert.equal(r.body?.reason, 'Invalid heartbeat value. Expecting a positive integer value (in milliseconds).');
});

test('changes: function filtered changes', async () => {
  const db = await mkdb('fn-filter');
  await createFiltersView(db);

  let r = await c.get(`/${db}/_changes?filter=changes_filter/bop`);
  assert.deepEqual(r.body.results, [], 'db must be empty');

  const { rev, id } = (await createDoc(db, { bop: 'foom' })).body;
  await createDoc(db, { bop: false });

  r = await c.get(`/${db}/_changes?filter=changes_filter/bop`);
  assert.equal(r.body.results.length, 1);
  const changeRev = changeRevAt(r.body.results, 0);
  assert.equal(changeRev, rev);

  let doc = await openDoc(db, id);
  doc = await saveDoc(db, { ...doc, newattr: 'a' });

  r = await c.get(`/${db}/_changes?filter=changes_filter/bop`);
  assert.equal(r.body.results.length, 1);
  let newChangeRev = changeRevAt(r.body.results, 0);
  assert.equal(newChangeRev, doc._rev);
  assert.notEqual(newChangeRev, changeRev);

  r = await c.get(`/${db}/_changes?filter=changes_filter/dynamic&field=woox`);
  assert.deepEqual(r.body.results, [], 'db must be empty');

  r = await c.get(`/${db}/_changes?filter=changes_filter/dynamic&field=bop`);
  assert.equal(r.body.results.length, 1, 'db must have one change');
  newChangeRev = changeRevAt(r.body.results, 0);
  assert.equal(newChangeRev, doc._rev);
});

test('changes: non-existing desing doc for filtered changes', async () => {
  const db = await mkdb('no-ddoc');
  const r = await c.get(`/${db}/_changes?filter=nothingtosee/bop`);
  assert.equal(r.status, 404, r.text);
});

test('changes: non-existing function for filtered changes', async () => {
  const db = await mkdb('no-fn');
  await createFiltersView(db);
  const r = await c.get(`/${db}/_changes?filter=changes_filter/movealong`);
  assert.equal(r.status, 404, r.text);
});

test('changes: non-existing desing doc and funcion for filtered changes', async () => {
  const db = await mkdb('no-ddoc-fn');
  const r = await c.get(`/${db}/_changes?filter=nothingtosee/movealong`);
  assert.equal(r.status, 404, r.text);
});

test('changes: map function filtered changes', async () => {
  const db = await mkdb('view-filter');
  await createFiltersView(db);
  await createDoc(db, { _id: 'blah', bop: 'plankton' });
  const r = await c.get(`/${db}/_changes?filter=_view&view=changes_filter/blah`);
  assert.equal(r.body.results.length, 1, r.text);
  assert.equal(r.body.results[0].id, 'blah');
});

test('changes: changes limit', async () => {
  const db = await mkdb('limit');
  await createDoc(db, { _id: 'blah', bop: 'plankton' });
  await createDoc(db, { _id: 'blah2', bop: 'plankton' });
  await createDoc(db, { _id: 'blah3', bop: 'plankton' });

  let r = await c.get(`/${db}/_changes?limit=1`);
  assert.equal(r.body.results.length, 1);
  r = await c.get(`/${db}/_changes?limit=2`);
  assert.equal(r.body.results.length, 2);
});

test('changes: erlang function filtered changes', async () => {
  // CouchDB's test suite turns on its native (Erlang) query server; Settee has none, so a filter
  // in Erlang is CouchDB's answer for a language it lacks: 500 EXIT, never unfiltered changes.
  const db = await mkdb('erlang-filter');
  await createErlangFiltersView(db);
  await createDoc(db, { _id: 'doc2', value: 2 });
  const r = await c.get(`/${db}/_changes?filter=erlang/foo`);
  assert.equal(r.status, 500, r.text);
  assert.equal(r.body.error, 'EXIT');
});

test('changes: changes filtering on docids', async () => {
  const db = await mkdb('doc-ids');
  const docIds = { doc_ids: ['doc1', 'doc3', 'doc4'] };

  let r = await c.post(`/${db}/_changes?filter=_doc_ids`, docIds);
  assert.deepEqual(r.body.results, []);

  await createDoc(db, { _id: 'doc1', value: 1 });
  await createDoc(db, { _id: 'doc2', value: 2 });

  r = await c.post(`/${db}/_changes?filter=_doc_ids`, docIds);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].id, 'doc1');

  await createDoc(db, { _id: 'doc3', value: 3 });

  r = await c.post(`/${db}/_changes?filter=_doc_ids`, docIds);
  assert.equal(r.body.results.length, 2);
  let changesIds = ids(r.body.results);
  assert.ok(changesIds.includes('doc1'));
  assert.ok(changesIds.includes('doc3'));

  const encoded = encodeURIComponent(JSON.stringify(docIds.doc_ids));
  r = await c.get(`/${db}/_changes?filter=_doc_ids&doc_ids=${encoded}`);
  assert.equal(r.body.results.length, 2, r.text);
  changesIds = ids(r.body.results);
  assert.ok(changesIds.includes('doc1'));
  assert.ok(changesIds.includes('doc3'));
});

test('changes: changes filtering on design docs', async () => {
  const db = await mkdb('design-filter');
  await createErlangFiltersView(db);
  await createDoc(db, { _id: 'doc1', value: 1 });

  const r = await c.get(`/${db}/_changes?filter=_design`);
  assert.equal(r.body.results.length, 1, r.text);
  assert.equal(r.body.results[0].id, '_design/erlang');
});

test('changes: COUCHDB-1037-empty result for ?limit=1&filter=foo/bar in some cases', async () => {
  const db = await mkdb('couchdb-1037');
  const filterFun = ' function(doc, req) {\n    return (typeof doc.integer === "number");\n  }\n';
  await createDoc(db, { _id: '_design/testdocs', language: 'javascript', filters: { testdocsonly: filterFun } });
  await createDoc(db, { _id: '_design/foobar', foo: 'bar' });
  await bulkSave(db, makeDocs(0, 4));

  let r = await c.get(`/${db}/_changes`);
  assert.equal(r.body.results.length, 7);

  r = await c.get(`/${db}/_changes?limit=1&filter=testdocs/testdocsonly`);
  assert.equal(r.body.results.length, 1);
  // we can't guarantee ordering
  assert.match(r.body.results[0].id, /[0-4]/);

  r = await c.get(`/${db}/_changes?limit=2&filter=testdocs/testdocsonly`);
  assert.equal(r.body.results.length, 2);
  // we can't guarantee ordering
  assert.match(r.body.results[0].id, /[0-4]/);
  assert.match(r.body.results[1].id, /[0-4]/);
});

test('changes: COUCHDB-1256', async () => {
  const db = await mkdb('couchdb-1256');
  const { rev: fooRev } = (await createDoc(db, { _id: 'foo', a: 123 })).body;
  await createDoc(db, { _id: 'bar', a: 456 });

  await c.put(`/${db}/foo?new_edits=false`, { _rev: fooRev, a: 456 });

  let r = await c.get(`/${db}/_changes?style=all_docs`);
  assert.equal(r.body.results.length, 2);

  r = await c.get(`/${db}/_changes?style=all_docs&since=${encodeURIComponent(String(r.body.results[0].seq))}`);
  assert.equal(r.body.results.length, 1);
});

test('changes: COUCHDB-1923', async () => {
  const db = await mkdb('couchdb-1923');
  const attachmentData = 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=';
  const docs = makeDocs(20, 29, {
    _attachments: {
      'foo.txt': { content_type: 'text/plain', data: attachmentData },
      'bar.txt': { content_type: 'text/plain', data: attachmentData },
    },
  });
  await bulkSave(db, docs);

  // The originals' `not Enum.member?(att, "data")` on a map is always true in Elixir; this checks
  // what it means to: the member is absent.
  let r = await c.get(`/${db}/_changes?include_docs=true`);
  assert.equal(r.body.results.length, 10);
  let firstDoc = r.body.results[0].doc;
  for (const name of ['foo.txt', 'bar.txt']) {
    const att = firstDoc._attachments[name];
    assert.ok(att.stub, `${name} stub`);
    assert.ok(!('data' in att), `${name} has no data`);
    assert.ok(!('encoding' in att), `${name} has no encoding: ${JSON.stringify(att)}`);
    assert.ok(!('encoded_length' in att), `${name} has no encoded_length: ${JSON.stringify(att)}`);
  }

  r = await c.get(`/${db}/_changes?include_docs=true&attachments=true`);
  assert.equal(r.body.results.length, 10);
  firstDoc = r.body.results[0].doc;
  for (const name of ['foo.txt', 'bar.txt']) {
    const att = firstDoc._attachments[name];
    assert.ok(!('stub' in att), `${name} is not a stub: ${JSON.stringify(att)}`);
    assert.equal(att.data, attachmentData);
    assert.ok(!('encoding' in att), `${name} has no encoding: ${JSON.stringify(att)}`);
    assert.ok(!('encoded_length' in att), `${name} has no encoded_length: ${JSON.stringify(att)}`);
  }

  r = await c.get(`/${db}/_changes?include_docs=true&att_encoding_info=true`);
  assert.equal(r.body.results.length, 10);
  firstDoc = r.body.results[0].doc;
  for (const name of ['foo.txt', 'bar.txt']) {
    const att = firstDoc._attachments[name];
    assert.ok(att.stub, `${name} stub`);
    assert.ok(!('data' in att), `${name} has no data`);
    assert.equal(att.encoding, 'gzip', `${name}: ${JSON.stringify(att)}`);
    // CouchDB's zlib makes 47 bytes of this text, Node's 49 (README: where Settee differs).
    assert.ok(att.encoded_length === 47 || att.encoded_length === 49, `${name}: ${JSON.stringify(att)}`);
  }
});

// ------------------------------------------------------------------ changes_async_test.exs

/** The originals' test_changes, for feed=live and feed=continuous. */
async function testChanges(db: string, feed: string): Promise<void> {
  await checkEmptyDb(db);
  const { rev } = (await createDoc(db, sampleDocFoo())).body;

  const r = await c.get(`/${db}/_changes`);
  assert.equal(r.body.results.length, 1, 'db must not be empty');
  assert.equal(seqNum(r.body.last_seq), 1, 'seq must start with 1');

  const whole = await c.get(`/${db}/_changes?feed=${feed}&timeout=100`);
  assert.equal(whole.status, 200, whole.text);
  let changes = jsonLines(whole.text);
  assert.equal(changes[0].changes[0].rev, rev);
  // the sequence is not fully ordered and a complex structure now
  assert.equal(seqNum(changes[1].last_seq), 1);

  const st = await live(`/${db}/_changes?feed=${feed}&timeout=500`);
  assert.equal(st.status, 200);
  await createDocBar(db, 'bar');
  changes = jsonLines(await st.waitForEnd(30000));
  assert.equal(changes.length, 3, JSON.stringify(changes));
}

test('changes: live changes', async () => {
  await testChanges(await mkdb('live'), 'live');
});

test('changes: continuous changes', async () => {
  await testChanges(await mkdb('continuous'), 'continuous');
});

test('changes: longpoll changes', async () => {
  const db = await mkdb('longpoll');
  await checkEmptyDb(db);
  await createDoc(db, sampleDocFoo());

  let st = await live(`/${db}/_changes?feed=longpoll`);
  let changes = JSON.parse(await st.waitForEnd(30000));
  assert.equal(changes.results.length, 1, 'db should not be empty');
  assert.equal(seqNum(changes.last_seq), 1, 'seq must start with 1-');

  const lastSeq = changes.last_seq;
  st = await live(`/${db}/_changes?feed=longpoll&since=${encodeURIComponent(String(lastSeq))}`);
  assert.equal(st.status, 200);
  await createDocBar(db, 'bar');
  changes = JSON.parse(await st.waitForEnd(30000));
  assert.equal(changes.results.length, 1, 'should return one change');
  assert.equal(seqNum(changes.last_seq), 2, 'seq must start with 2-');

  st = await live(`/${db}/_changes?feed=longpoll&since=now`);
  assert.equal(st.status, 200);
  await createDocBar(db, 'barzzzz');
  changes = JSON.parse(await st.waitForEnd(30000));
  assert.equal(changes.results.length, 1, 'should return one change');
  assert.equal(changes.results[0].id, 'barzzzz');
  assert.equal(seqNum(changes.last_seq), 3, 'seq must start with 3-');
});

test('changes: eventsource changes', async () => {
  const db = await mkdb('eventsource');
  await checkEmptyDb(db);
  await createDoc(db, sampleDocFoo());

  const st = await live(`/${db}/_changes?feed=eventsource&timeout=500`);
  assert.equal(st.status, 200);
  await createDocBar(db, 'bar');
  const changes = parseEventData(await st.waitForEnd(30000));
  assert.equal(changes.length, 2, JSON.stringify(changes));
  assert.equal(changes[0].id, 'foo');
  assert.equal(changes[1].id, 'bar');
});

test('changes: eventsource heartbeat', async () => {
  const db = await mkdb('es-heartbeat');
  const st = await live(`/${db}/_changes?feed=eventsource&heartbeat=10`);
  assert.equal(st.status, 200);
  const beatsIn = (t: string) => (t.match(/event: heartbeat/g) ?? []).length;
  await st.waitFor((t) => beatsIn(t) >= 3, 30000, 'three heartbeat events');
  assert.ok(beatsIn(st.text) >= 3);
  st.close();
});

test('changes: longpoll filtered changes', async () => {
  const db = await mkdb('longpoll-filter');
  await createFiltersView(db);
  await createDoc(db, { bop: 'foom' });
  await createDoc(db, { bop: false });

  let st = await live(`/${db}/_changes?feed=longpoll&filter=changes_filter/bop`);
  let changes = JSON.parse(await st.waitForEnd(30000));
  assert.equal(changes.results.length, 1, 'db should not be empty');
  assert.equal(seqNum(changes.last_seq), 3, 'seq must start with 3-');

  const lastSeq = changes.last_seq;
  // longpoll waits until a matching change before returning
  st = await live(`/${db}/_changes?feed=longpoll&filter=changes_filter/bop&since=${encodeURIComponent(String(lastSeq))}`);
  assert.equal(st.status, 200);
  await createDoc(db, { _id: 'falsy', bop: '' });
  // Doc doesn't match the filter: nothing comes within the originals' 1 s wait.
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(st.ended, false, `longpoll answered a non-matching change: ${JSON.stringify(st.text)}`);
  assert.ok(!st.text.includes('"id"'), `no change row yet: ${JSON.stringify(st.text)}`);

  // Doc matches the filter
  await createDoc(db, { _id: 'bingo', bop: 'bingo' });
  changes = JSON.parse(await st.waitForEnd(30000));
  assert.equal(changes.results.length, 1, 'db should not be empty');
  assert.equal(seqNum(changes.last_seq), 5, 'seq must start with 5-');
  assert.equal(changes.results[0].id, 'bingo');
});

test('changes: continuous filtered changes', async () => {
  const db = await mkdb('continuous-filter');
  await createFiltersView(db);
  await createDoc(db, { bop: false });
  await createDoc(db, { _id: 'bingo', bop: 'bingo' });

  const st = await live(`/${db}/_changes?feed=continuous&filter=changes_filter/bop&timeout=500`);
  assert.equal(st.status, 200);
  await createDoc(db, { _id: 'rusty', bop: 'plankton' });

  const changes = jsonLines(await st.waitForEnd(30000));
  const changesIds = changes.filter((p) => 'id' in p).map((p) => p.id);
  assert.ok(changesIds.includes('bingo'));
  assert.ok(changesIds.includes('rusty'));
  assert.equal(changesIds.length, 2);
});

test('changes: continuous filtered changes with doc ids', async () => {
  const db = await mkdb('continuous-doc-ids');
  const docIds = { doc_ids: ['doc1', 'doc3', 'doc4'] };
  await createDoc(db, { _id: 'doc1', value: 1 });
  await createDoc(db, { _id: 'doc2', value: 2 });

  const st = await live(`/${db}/_changes?feed=continuous&timeout=500&filter=_doc_ids`, { body: docIds }, 'POST');
  assert.equal(st.status, 200);
  await createDoc(db, { _id: 'doc3', value: 3 });

  const changes = jsonLines(await st.waitForEnd(30000));
  const changesIds = changes.filter((p) => 'id' in p).map((p) => p.id);
  assert.ok(changesIds.includes('doc1'));
  assert.ok(changesIds.includes('doc3'));
  assert.equal(changesIds.length, 2);
});

test('changes: COUCHDB-1852', async () => {
  const db = await mkdb('couchdb-1852');
  for (let i = 0; i < 4; i++) await createDoc(db, { bop: 'foom' });

  const r = await c.get(`/${db}/_changes`);
  assert.equal(r.body.results.length, 4);
  const seq = r.body.results[1].seq;

  // simulate an EventSource request with a Last-Event-ID header
  const st = await live(`/${db}/_changes?feed=eventsource&timeout=100&since=0`, {
    headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(seq) },
  });
  const changes = parseEventData(await st.waitForEnd(30000));
  assert.equal(changes.length, 2, JSON.stringify(changes));
});
