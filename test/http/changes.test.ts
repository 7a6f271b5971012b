/**
 * `_changes` over real HTTP, against CouchDB 1.6's behaviour (couch_changes.erl,
 * couch_httpd_db.erl and share/www/script/test/changes.js).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { streamer, jsonLines, parseEvents, type OpenStream } from '../helpers/stream.js';

const { server, c } = await serverForFile();
let s: ReturnType<typeof streamer>;
const open: OpenStream[] = [];

before(async () => {
  s = streamer(server.url);
});
after(async () => {
  for (const st of open) st.close();
});

let dbCounter = 0;
/** Creates a fresh database with a name unique to this file. */
async function mkdb(label: string): Promise<string> {
  const name = `changes-${label}-${++dbCounter}`;
  const r = await c.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
  return name;
}

async function save(db: string, id: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await c.put(`/${db}/${encodeURIComponent(id).replace('%2F', '/')}`, body);
  assert.equal(r.status, 201, r.text);
  return r.body.rev as string;
}

async function remove(db: string, id: string, rev: string): Promise<string> {
  const r = await c.del(`/${db}/${id}?rev=${rev}`);
  assert.equal(r.status, 200, r.text);
  return r.body.rev as string;
}

async function updateSeq(db: string): Promise<number> {
  const r = await c.get(`/${db}`);
  assert.equal(r.status, 200, r.text);
  return r.body.update_seq as number;
}

/** Opens a live feed and remembers it so a failing test still closes it. */
async function live(path: string, options?: Parameters<typeof s.get>[1], method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<OpenStream> {
  const st = method === 'GET' ? await s.get(path, options) : await s.post(path, body, options);
  open.push(st);
  return st;
}

/** One round trip to the server, so anything it was about to send has had its chance. */
async function roundTrip(): Promise<void> {
  assert.equal((await c.get('/')).status, 200);
}

const countNewlines = (text: string) => text.split('\n').length - 1;

/**
 * Writes documents `${prefix}0`, `${prefix}1`, … one after another, each as soon as the last is
 * saved, until `done()` holds or `ms` have passed; says whether `done()` came to hold while the
 * writes went on.
 */
async function keepWriting(db: string, prefix: string, done: () => boolean, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  for (let n = 0; !done() && Date.now() < until; n++) await save(db, `${prefix}${n}`);
  return done();
}

// ------------------------------------------------------------------ feed=normal

test('normal: empty database has no results and last_seq 0, in CouchDB\'s exact layout', async () => {
  const db = await mkdb('empty');
  const r = await c.get(`/${db}/_changes`);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.deepEqual(r.body, { results: [], last_seq: 0 });
  // couch_httpd_db: "{\"results\":[\n" then "\n],\n\"last_seq\":N}\n", then end_json_response's
  // own newline: the body ends in a blank line.
  assert.equal(r.text, '{"results":[\n\n],\n"last_seq":0}\n\n');
});

test('normal: one row per document, its latest change; deleted only on deleted winners', async () => {
  const db = await mkdb('shape');
  const a1 = await save(db, 'a', { v: 1 });
  const b1 = await save(db, 'b', { v: 1 });
  const a2 = await save(db, 'a', { _rev: a1, v: 2 });
  const b2 = await remove(db, 'b', b1);
  const r = await c.get(`/${db}/_changes`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    results: [
      { seq: 3, id: 'a', changes: [{ rev: a2 }] },
      { seq: 4, id: 'b', changes: [{ rev: b2 }], deleted: true },
    ],
    last_seq: 4,
  });
  assert.equal('deleted' in r.body.results[0], false);
  // Rows are separated by ",\n" and the envelope is on its own lines.
  assert.equal(r.text, `{"results":[\n${JSON.stringify(r.body.results[0])},\n${JSON.stringify(r.body.results[1])}\n],\n"last_seq":4}\n\n`);
});

test('normal: since skips up to and including the given sequence', async () => {
  const db = await mkdb('since');
  await save(db, 'a');
  await save(db, 'b');
  await save(db, 'c');
  let r = await c.get(`/${db}/_changes?since=1`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['b', 'c']);
  assert.equal(r.body.last_seq, 3);
  r = await c.get(`/${db}/_changes?since=3`);
  assert.deepEqual(r.body, { results: [], last_seq: 3 });
  r = await c.get(`/${db}/_changes?since=0`);
  assert.equal(r.body.results.length, 3);
});

test('normal: since=now starts at the current update_seq', async () => {
  const db = await mkdb('now');
  await save(db, 'a');
  await save(db, 'b');
  const r = await c.get(`/${db}/_changes?since=now`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { results: [], last_seq: 2 });
});

test('normal: since beyond update_seq gives no rows and last_seq = since', async () => {
  const db = await mkdb('future');
  await save(db, 'a');
  const r = await c.get(`/${db}/_changes?since=100`);
  assert.deepEqual(r.body, { results: [], last_seq: 100 });
});

test('normal: limit, and limit=0 acts as 1; last_seq is the last row sent', async () => {
  const db = await mkdb('limit');
  await save(db, 'a');
  await save(db, 'b');
  await save(db, 'c');
  let r = await c.get(`/${db}/_changes?limit=1`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['a']);
  assert.equal(r.body.last_seq, 1);
  r = await c.get(`/${db}/_changes?limit=0`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['a']);
  assert.equal(r.body.last_seq, 1);
  r = await c.get(`/${db}/_changes?limit=2&since=1`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['b', 'c']);
  assert.equal(r.body.last_seq, 3);
  r = await c.get(`/${db}/_changes?limit=10`);
  assert.equal(r.body.results.length, 3);
  assert.equal(r.body.last_seq, 3);
});

test('normal: descending lists newest first; last_seq is the last row sent', async () => {
  const db = await mkdb('desc');
  await save(db, 'a');
  await save(db, 'b');
  await save(db, 'c');
  let r = await c.get(`/${db}/_changes?descending=true`);
  assert.deepEqual(r.body.results.map((x: any) => [x.seq, x.id]), [[3, 'c'], [2, 'b'], [1, 'a']]);
  assert.equal(r.body.last_seq, 1);
  r = await c.get(`/${db}/_changes?descending=true&limit=1`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['c']);
  assert.equal(r.body.last_seq, 3);
  // Descending starts from update_seq: since does not apply (couch_changes StartSeq for rev).
  r = await c.get(`/${db}/_changes?descending=true&since=2`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['c', 'b', 'a']);
});

test('normal: include_docs embeds the winning revision; a deleted doc embeds its tombstone', async () => {
  const db = await mkdb('docs');
  const a1 = await save(db, 'a', { v: 'x' });
  const b1 = await save(db, 'b', { v: 'y' });
  const b2 = await remove(db, 'b', b1);
  const r = await c.get(`/${db}/_changes?include_docs=true`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results, [
    { seq: 1, id: 'a', changes: [{ rev: a1 }], doc: { _id: 'a', _rev: a1, v: 'x' } },
    { seq: 3, id: 'b', changes: [{ rev: b2 }], deleted: true, doc: { _id: 'b', _rev: b2, _deleted: true } },
  ]);
  const plain = await c.get(`/${db}/_changes`);
  assert.equal('doc' in plain.body.results[0], false);
});

/** A document with two leaf revisions: 1-a* from a normal PUT and a replicated 1-<other>. */
async function conflicted(db: string, id: string): Promise<{ winner: string; loser: string }> {
  const mine = await save(db, id, { who: 'mine' });
  const theirsRev = `1-${'f'.repeat(32)}` === mine ? `1-${'0'.repeat(32)}` : `1-${'f'.repeat(32)}`;
  const r = await c.put(`/${db}/${id}?new_edits=false`, { _rev: theirsRev, who: 'theirs' });
  assert.equal(r.status, 201, r.text);
  const got = await c.get(`/${db}/${id}`);
  const winner = got.body._rev as string;
  return { winner, loser: winner === mine ? theirsRev : mine };
}

test('normal: include_docs&conflicts=true adds _conflicts to the embedded doc', async () => {
  const db = await mkdb('conflicts');
  const { winner, loser } = await conflicted(db, 'x');
  let r = await c.get(`/${db}/_changes?include_docs=true&conflicts=true`);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].doc._rev, winner);
  assert.deepEqual(r.body.results[0].doc._conflicts, [loser]);
  r = await c.get(`/${db}/_changes?include_docs=true`);
  assert.equal('_conflicts' in r.body.results[0].doc, false);
});

test('normal: style=all_docs lists every leaf revision, winner first (COUCHDB-1256)', async () => {
  const db = await mkdb('alldocs');
  await save(db, 'foo', { a: 123 });
  await save(db, 'bar', { a: 456 });
  const r0 = await c.put(`/${db}/foo?new_edits=false`, { _rev: '1-cc609831f0ca66e8cd3d4c1e0d98108a', a: 456 });
  assert.equal(r0.status, 201, r0.text);
  const winner = (await c.get(`/${db}/foo`)).body._rev as string;

  let r = await c.get(`/${db}/_changes?style=all_docs`);
  assert.equal(r.body.last_seq, 3);
  assert.equal(r.body.results.length, 2);
  const foo = r.body.results.find((x: any) => x.id === 'foo');
  assert.equal(foo.seq, 3);
  assert.equal(foo.changes.length, 2);
  assert.equal(foo.changes[0].rev, winner);

  r = await c.get(`/${db}/_changes?style=all_docs&since=2`);
  assert.equal(r.body.last_seq, 3);
  assert.equal(r.body.results.length, 1);
  assert.equal(r.body.results[0].changes.length, 2);

  r = await c.get(`/${db}/_changes?style=main_only&since=2`);
  assert.deepEqual(r.body.results[0].changes, [{ rev: winner }]);
});

test('normal: style=all_docs: deleted applies to the winner only', async () => {
  const db = await mkdb('alldel');
  const { winner, loser } = await conflicted(db, 'x');
  const tomb = await remove(db, 'x', winner);
  const r = await c.get(`/${db}/_changes?style=all_docs`);
  assert.equal(r.body.results.length, 1);
  const row = r.body.results[0];
  // The surviving conflict becomes the winner: the row is not deleted, both leaves listed.
  assert.equal('deleted' in row, false);
  assert.equal(row.changes[0].rev, loser);
  assert.deepEqual(new Set(row.changes.map((x: any) => x.rev)), new Set([loser, tomb]));
  const main = await c.get(`/${db}/_changes`);
  assert.deepEqual(main.body.results[0].changes, [{ rev: loser }]);
});

test('normal: filter=_doc_ids with GET doc_ids and with POST {doc_ids}', async () => {
  const db = await mkdb('docids');
  const ids = JSON.stringify(['something', 'anotherthing', 'andmore']);
  let r = await c.post(`/${db}/_changes?filter=_doc_ids`, { doc_ids: JSON.parse(ids) });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { results: [], last_seq: 0 });
  await save(db, 'unrelated');
  await save(db, 'something');
  await save(db, 'other');
  await save(db, 'anotherthing');

  r = await c.post(`/${db}/_changes?filter=_doc_ids`, { doc_ids: JSON.parse(ids) });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results.map((x: any) => [x.seq, x.id]), [[2, 'something'], [4, 'anotherthing']]);
  assert.equal(r.body.last_seq, 4);

  r = await c.get(`/${db}/_changes?filter=_doc_ids&doc_ids=${encodeURIComponent(ids)}`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['something', 'anotherthing']);

  r = await c.get(`/${db}/_changes?filter=_doc_ids&since=2&doc_ids=${encodeURIComponent(ids)}`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['anotherthing']);

  r = await c.get(`/${db}/_changes?filter=_doc_ids&limit=1&doc_ids=${encodeURIComponent(ids)}`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['something']);
  assert.equal(r.body.last_seq, 2);

  // Ids that are no JSON are couch_httpd's invalid_json; JSON that is no list of strings is
  // couch_changes' own reason.
  r = await c.get(`/${db}/_changes?filter=_doc_ids&doc_ids=abc`);
  assert.equal(r.status, 400, r.text);
  assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' });
  for (const bad of ['5', '[1]', '"x"']) {
    r = await c.get(`/${db}/_changes?filter=_doc_ids&doc_ids=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(r.body, { error: 'bad_request', reason: '`doc_ids` filter parameter is not a list.' }, bad);
  }
});

test('normal: filter=_doc_ids with many ids behaves the same', async () => {
  const db = await mkdb('docidsmany');
  const ids = Array.from({ length: 150 }, (_, i) => `id-${i}`);
  await save(db, 'id-7');
  await save(db, 'not-listed');
  await save(db, 'id-149');
  await save(db, 'id-7', { _rev: (await c.get(`/${db}/id-7`)).body._rev });
  let r = await c.post(`/${db}/_changes?filter=_doc_ids`, { doc_ids: ids });
  assert.deepEqual(r.body.results.map((x: any) => [x.seq, x.id]), [[3, 'id-149'], [4, 'id-7']]);
  assert.equal(r.body.last_seq, 4);
  r = await c.post(`/${db}/_changes?filter=_doc_ids&limit=1`, { doc_ids: ids });
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['id-149']);
  assert.equal(r.body.last_seq, 3);
});

test('normal: filter=_doc_ids without a list of ids is a 400', async () => {
  const db = await mkdb('docidsbad');
  const notAList = { error: 'bad_request', reason: '`doc_ids` filter parameter is not a list.' };
  let r = await c.get(`/${db}/_changes?filter=_doc_ids`);
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, notAList);
  r = await c.post(`/${db}/_changes?filter=_doc_ids`, { doc_ids: 'abc' });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, notAList);
});

test('normal: a negative since is before the first change', async () => {
  const db = await mkdb('negsince');
  await save(db, 'a');
  const r = await c.get(`/${db}/_changes?since=-1`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results.map((x: { id: string }) => x.id), ['a']);
});

test('normal: POST without a filter lists all changes', async () => {
  const db = await mkdb('post');
  await save(db, 'a');
  await save(db, 'b');
  const r = await c.post(`/${db}/_changes`, {});
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['a', 'b']);
  assert.equal(r.body.last_seq, 2);
});

test('normal: filter=_design passes only design documents', async () => {
  const db = await mkdb('design');
  await save(db, 'plain');
  await save(db, '_design/one', { views: {} });
  await save(db, 'designer');
  await save(db, '_design/two', { views: {} });
  let r = await c.get(`/${db}/_changes?filter=_design`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['_design/one', '_design/two']);
  assert.equal(r.body.last_seq, 4);
  // With a limit, last_seq is the last row sent (COUCHDB-1037).
  r = await c.get(`/${db}/_changes?filter=_design&limit=1`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['_design/one']);
  assert.equal(r.body.last_seq, 2);
});

test('normal: unknown filters: 400 for a bad builtin or a malformed name, 404 for a missing design doc', async () => {
  const db = await mkdb('filters');
  await save(db, 'a');
  let r = await c.get(`/${db}/_changes?filter=nothingtosee/bop`);
  assert.equal(r.status, 404);
  assert.equal(r.body.error, 'not_found');
  r = await c.get(`/${db}/_changes?filter=_bogus`);
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'bad_request');
  r = await c.get(`/${db}/_changes?filter=nameonly`);
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'bad_request');
  r = await c.get(`/${db}/_changes?filter=_view`);
  assert.equal(r.status, 400, '_view without view= is a bad request');
  assert.equal(r.body.error, 'bad_request');
});

test('normal: _local documents never appear and do not move last_seq', async () => {
  const db = await mkdb('local');
  await save(db, 'a');
  const l = await c.put(`/${db}/_local/cp`, { seq: 1 });
  assert.equal(l.status, 201, l.text);
  const l2 = await c.put(`/${db}/_local/cp`, { seq: 2, _rev: l.body.rev });
  assert.equal(l2.status, 201, l2.text);
  const r = await c.get(`/${db}/_changes`);
  assert.deepEqual(r.body.results.map((x: any) => x.id), ['a']);
  assert.equal(r.body.last_seq, 1);
  assert.equal(await updateSeq(db), 1);
});

test('normal: a Last-Event-ID header does not apply outside eventsource', async () => {
  const db = await mkdb('lei');
  await save(db, 'a');
  await save(db, 'b');
  const r = await c.get(`/${db}/_changes`, { headers: { 'Last-Event-ID': '1' } });
  assert.equal(r.body.results.length, 2);
});

// ------------------------------------------------------------------ feed=longpoll

test('longpoll: answers at once when changes exist', async () => {
  const db = await mkdb('lp-now');
  const rev = await save(db, 'a');
  const st = await live(`/${db}/_changes?feed=longpoll`);
  assert.equal(st.status, 200);
  const text = await st.waitForEnd();
  assert.deepEqual(JSON.parse(text), { results: [{ seq: 1, id: 'a', changes: [{ rev }] }], last_seq: 1 });
});

test('longpoll: waits for a write and returns it', async () => {
  const db = await mkdb('lp-wait');
  await save(db, 'a');
  const st = await live(`/${db}/_changes?feed=longpoll&since=1`);
  assert.equal(st.status, 200);
  await roundTrip();
  assert.equal(st.ended, false, 'longpoll must wait while nothing changed');
  assert.equal(st.text, '{"results":[\n');
  const rev = await save(db, 'barz');
  const text = await st.waitForEnd();
  assert.deepEqual(JSON.parse(text), { results: [{ seq: 2, id: 'barz', changes: [{ rev }] }], last_seq: 2 });
  // changes.js reads the body line by line.
  const lines = text.split('\n');
  assert.equal(lines[3], '"last_seq":2}');
});

test('longpoll: limit applies', async () => {
  const db = await mkdb('lp-limit');
  await save(db, 'a');
  await save(db, 'b');
  const st = await live(`/${db}/_changes?feed=longpoll&limit=1`);
  const body = JSON.parse(await st.waitForEnd());
  assert.deepEqual(body.results.map((x: any) => x.id), ['a']);
  assert.equal(body.last_seq, 1);
});

test('longpoll: timeout returns empty results with last_seq', async () => {
  const db = await mkdb('lp-timeout');
  await save(db, 'a');
  await save(db, 'b');
  const st = await live(`/${db}/_changes?feed=longpoll&since=now&timeout=100`);
  const text = await st.waitForEnd();
  assert.deepEqual(JSON.parse(text), { results: [], last_seq: 2 });
  // As the normal feed: the last line, then end_json_response's newline.
  assert.equal(text, '{"results":[\n\n],\n"last_seq":2}\n\n');
});

test('longpoll: with a filter, waits for a matching change', async () => {
  const db = await mkdb('lp-filter');
  await save(db, 'a');
  const st = await live(`/${db}/_changes?feed=longpoll&since=now&filter=_doc_ids`, undefined, 'POST', { doc_ids: ['bingo'] });
  assert.equal(st.status, 200);
  await save(db, 'falsy');
  await roundTrip();
  assert.equal(st.ended, false, 'a change the filter rejects must not end the longpoll');
  const rev = await save(db, 'bingo');
  const body = JSON.parse(await st.waitForEnd());
  assert.deepEqual(body, { results: [{ seq: 3, id: 'bingo', changes: [{ rev }] }], last_seq: 3 });
});

test('longpoll: the opening goes out at once, heartbeat newlines follow it; the body still parses', async () => {
  const db = await mkdb('lp-hb');
  const st = await live(`/${db}/_changes?feed=longpoll&heartbeat=100`);
  // As couch_changes: `{"results":[` first, then a newline per heartbeat.
  const waiting = await st.waitFor((t) => t.startsWith('{"results":[\n\n'), 5000, 'the opening and a heartbeat newline');
  assert.match(waiting, /^\{"results":\[\n\n+$/);
  assert.equal(st.ended, false);
  const rev = await save(db, 'a');
  const text = await st.waitForEnd();
  assert.match(text, /^\{"results":\[\n\n+\{"seq":1,/);
  assert.deepEqual(JSON.parse(text), { results: [{ seq: 1, id: 'a', changes: [{ rev }] }], last_seq: 1 });
});

test('longpoll: heartbeats go on while writes the filter rejects keep waking it', async () => {
  // couch_changes:maybe_heartbeat: a change the filter rejects sends a heartbeat once the
  // interval has passed since the last thing sent, however often changes wake the feed.
  const db = await mkdb('lp-hb-busy');
  const st = await live(`/${db}/_changes?feed=longpoll&filter=_doc_ids&heartbeat=100`, undefined, 'POST', { doc_ids: ['wanted'] });
  assert.ok(await keepWriting(db, 'other', () => st.text.startsWith('{"results":[\n\n')), `no heartbeat among the writes: ${JSON.stringify(st.text)}`);
  assert.equal(st.ended, false);
  const rev = await save(db, 'wanted');
  const body = JSON.parse(await st.waitForEnd());
  assert.deepEqual(body.results, [{ seq: body.last_seq, id: 'wanted', changes: [{ rev }] }]);
});

test('longpoll: timeout counts from the last write that woke it, whether its filter passed it or not', async () => {
  // couch_changes:keep_sending_changes waits `timeout` afresh after every database update.
  const db = await mkdb('lp-timeout-busy');
  const st = await live(`/${db}/_changes?feed=longpoll&filter=_doc_ids&timeout=500`, undefined, 'POST', { doc_ids: ['wanted'] });
  assert.equal(await keepWriting(db, 'other', () => st.ended, 2000), false, `ended while writes kept coming: ${JSON.stringify(st.text)}`);
  const text = await st.waitForEnd();
  assert.deepEqual(JSON.parse(text), { results: [], last_seq: await updateSeq(db) });
});

// ------------------------------------------------------------------ feed=continuous

test('continuous: one JSON object per line, then {"last_seq":N} when the timeout ends it', async () => {
  const db = await mkdb('cont-lines');
  const a = await save(db, 'foo', { bar: 1 });
  const b = await save(db, 'bar', { bar: 1 });
  const st = await live(`/${db}/_changes?feed=continuous&timeout=10`);
  assert.equal(st.status, 200);
  const text = await st.waitForEnd();
  assert.equal(text,
    `${JSON.stringify({ seq: 1, id: 'foo', changes: [{ rev: a }] })}\n` +
    `${JSON.stringify({ seq: 2, id: 'bar', changes: [{ rev: b }] })}\n` +
    '{"last_seq":2}\n\n');
});

test('continuous: a write made after opening appears as a new line', async () => {
  const db = await mkdb('cont-live');
  await save(db, 'foo');
  const st = await live(`/${db}/_changes?feed=continuous`);
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the existing change');
  const bar = await save(db, 'bar');
  await st.waitFor((t) => jsonLines(t).length >= 2, 5000, 'the change for bar');
  assert.deepEqual(jsonLines(st.text)[1], { seq: 2, id: 'bar', changes: [{ rev: bar }] });
  const baz = await save(db, 'baz');
  await st.waitFor((t) => jsonLines(t).length >= 3, 5000, 'the change for baz');
  assert.deepEqual(jsonLines(st.text)[2], { seq: 3, id: 'baz', changes: [{ rev: baz }] });
  assert.equal(st.ended, false);
  st.close();
});

test('continuous: heartbeat sends empty lines', async () => {
  const db = await mkdb('cont-hb');
  await save(db, 'a');
  const st = await live(`/${db}/_changes?feed=continuous&since=now&heartbeat=100`);
  const text = await st.waitFor((t) => countNewlines(t) >= 2, 5000, 'two heartbeats');
  assert.match(text, /^\n+$/);
  st.close();
});

test('continuous: with heartbeat the feed outlives timeout (heartbeat replaces it)', async () => {
  const db = await mkdb('cont-hb-timeout');
  const st = await live(`/${db}/_changes?feed=continuous&since=now&heartbeat=100&timeout=150`);
  // Five heartbeats 100 ms apart take longer than the 150 ms timeout.
  const text = await st.waitFor((t) => countNewlines(t) >= 5, 5000, 'five heartbeats');
  assert.match(text, /^\n+$/, 'no last_seq line: the feed did not end');
  assert.equal(st.ended, false);
  const rev = await save(db, 'late');
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the late change');
  assert.deepEqual(jsonLines(st.text)[0], { seq: 1, id: 'late', changes: [{ rev }] });
  st.close();
});

test('continuous: heartbeats go on while writes the filter rejects keep waking the feed', async () => {
  // couch_changes:maybe_heartbeat, as for longpoll; a replicator following a filtered feed of a
  // busy database would otherwise hear nothing and give the connection up.
  const db = await mkdb('cont-hb-busy');
  const st = await live(`/${db}/_changes?feed=continuous&filter=_doc_ids&heartbeat=100`, undefined, 'POST', { doc_ids: ['wanted'] });
  assert.ok(await keepWriting(db, 'other', () => st.text.includes('\n')), `no heartbeat among the writes: ${JSON.stringify(st.text)}`);
  assert.match(st.text, /^\n+$/);
  st.close();
});

test('eventsource: heartbeat events go on while writes the filter rejects keep waking the feed', async () => {
  const db = await mkdb('es-hb-busy');
  const st = await live(`/${db}/_changes?feed=eventsource&filter=_doc_ids&heartbeat=100`, undefined, 'POST', { doc_ids: ['wanted'] });
  const beat = (t: string) => parseEvents(t).some((e) => e.event === 'heartbeat');
  assert.ok(await keepWriting(db, 'other', () => beat(st.text)), `no heartbeat among the writes: ${JSON.stringify(st.text)}`);
  assert.ok(parseEvents(st.text).every((e) => e.event === 'heartbeat'), 'no change events');
  st.close();
});

test('continuous: timeout counts from the last write that woke it, whether its filter passed it or not', async () => {
  const db = await mkdb('cont-timeout-busy');
  const st = await live(`/${db}/_changes?feed=continuous&filter=_doc_ids&timeout=500`, undefined, 'POST', { doc_ids: ['wanted'] });
  assert.equal(await keepWriting(db, 'other', () => st.ended, 2000), false, `ended while writes kept coming: ${JSON.stringify(st.text)}`);
  assert.equal(await st.waitForEnd(), `{"last_seq":${await updateSeq(db)}}\n\n`);
});

test('continuous: limit ends the feed with a last_seq line', async () => {
  const db = await mkdb('cont-limit');
  await save(db, 'a');
  await save(db, 'b');
  await save(db, 'c');
  let st = await live(`/${db}/_changes?feed=continuous&limit=2`);
  let lines = jsonLines(await st.waitForEnd());
  assert.deepEqual(lines.map((l) => l.id ?? l), ['a', 'b', { last_seq: 2 }]);

  // A limit met by writes that arrive later also ends it.
  st = await live(`/${db}/_changes?feed=continuous&since=now&limit=1`);
  const rev = await save(db, 'd');
  lines = jsonLines(await st.waitForEnd());
  assert.deepEqual(lines, [{ seq: 4, id: 'd', changes: [{ rev }] }, { last_seq: 4 }]);
});

test('continuous: since=now sends only later writes', async () => {
  const db = await mkdb('cont-now');
  await save(db, 'old1');
  await save(db, 'old2');
  const st = await live(`/${db}/_changes?feed=continuous&since=now`);
  assert.equal(st.status, 200);
  const rev = await save(db, 'new');
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the new change');
  assert.deepEqual(jsonLines(st.text), [{ seq: 3, id: 'new', changes: [{ rev }] }]);
  st.close();
});

test('continuous: POST filter=_doc_ids follows only the listed documents', async () => {
  const db = await mkdb('cont-docids');
  await save(db, 'something');
  const st = await live(`/${db}/_changes?feed=continuous&since=1&filter=_doc_ids&timeout=60000`, undefined, 'POST',
    { doc_ids: ['something', 'andmore'] });
  await save(db, 'ignored');
  const rev = await save(db, 'andmore');
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the change for andmore');
  assert.deepEqual(jsonLines(st.text), [{ seq: 3, id: 'andmore', changes: [{ rev }] }]);
  st.close();
});

test('continuous: include_docs embeds documents in live lines', async () => {
  const db = await mkdb('cont-docs');
  const st = await live(`/${db}/_changes?feed=continuous&include_docs=true`);
  const rev = await save(db, 'a', { n: 1 });
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the change');
  assert.deepEqual(jsonLines(st.text)[0], { seq: 1, id: 'a', changes: [{ rev }], doc: { _id: 'a', _rev: rev, n: 1 } });
  st.close();
});

test('continuous: changes_timeout caps timeout and is the default', async () => {
  const db = await mkdb('cont-cap');
  const set = await c.put('/_config/httpd/changes_timeout', '200');
  assert.equal(set.status, 200, set.text);
  try {
    let st = await live(`/${db}/_changes?feed=continuous&timeout=600000`);
    assert.equal(await st.waitForEnd(5000), '{"last_seq":0}\n\n');
    st = await live(`/${db}/_changes?feed=continuous`);
    assert.equal(await st.waitForEnd(5000), '{"last_seq":0}\n\n');
  } finally {
    const back = await c.put('/_config/httpd/changes_timeout', '60000');
    assert.equal(back.status, 200, back.text);
  }
});

// ------------------------------------------------------------------ feed=eventsource

test('eventsource: text/event-stream with data: and id: lines, live writes included', async () => {
  const db = await mkdb('es');
  const a = await save(db, 'foo');
  const st = await live(`/${db}/_changes?feed=eventsource`);
  assert.equal(st.status, 200);
  assert.match(String(st.headers['content-type']), /^text\/event-stream/);
  await st.waitFor((t) => parseEvents(t).length >= 1, 5000, 'the first event');
  assert.equal(st.text, `data: ${JSON.stringify({ seq: 1, id: 'foo', changes: [{ rev: a }] })}\nid: 1\n\n`);
  const b = await save(db, 'bar');
  await st.waitFor((t) => parseEvents(t).length >= 2, 5000, 'the second event');
  const events = parseEvents(st.text);
  assert.equal(events[1]!.id, '2');
  assert.deepEqual(JSON.parse(events[1]!.data!), { seq: 2, id: 'bar', changes: [{ rev: b }] });
  st.close();
});

test('eventsource: the Last-Event-ID header resumes after that sequence', async () => {
  const db = await mkdb('es-resume');
  await save(db, 'a');
  await save(db, 'b');
  const c3 = await save(db, 'c');
  const st = await live(`/${db}/_changes?feed=eventsource&since=0`, { headers: { 'Last-Event-ID': '2' } });
  await st.waitFor((t) => parseEvents(t).length >= 1, 5000, 'an event');
  await roundTrip();
  const events = parseEvents(st.text);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.id, '3');
  assert.deepEqual(JSON.parse(events[0]!.data!), { seq: 3, id: 'c', changes: [{ rev: c3 }] });
  st.close();
});

test('eventsource: heartbeat sends heartbeat events', async () => {
  const db = await mkdb('es-hb');
  const st = await live(`/${db}/_changes?feed=eventsource&heartbeat=100`);
  await st.waitFor((t) => parseEvents(t).some((e) => e.event === 'heartbeat'), 5000, 'a heartbeat event');
  assert.equal(parseEvents(st.text).some((e) => e.data !== undefined && e.data !== ''), false);
  st.close();
});

test('eventsource: the timeout ends the stream without a last_seq line, with end_json_response\'s newline', async () => {
  const db = await mkdb('es-timeout');
  const a = await save(db, 'a');
  const st = await live(`/${db}/_changes?feed=eventsource&timeout=50`);
  const text = await st.waitForEnd();
  assert.equal(text, `data: ${JSON.stringify({ seq: 1, id: 'a', changes: [{ rev: a }] })}\nid: 1\n\n\n`);
});

// ------------------------------------------------------------------ errors

test('an unknown feed is a normal one (couch_changes runs any other name so)', async () => {
  const db = await mkdb('err-feed');
  const r = await c.get(`/${db}/_changes?feed=bogus`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { results: [], last_seq: 0 });
});

test('errors: a since that is neither an integer nor now is a 400', async () => {
  const db = await mkdb('err-since');
  for (const since of ['abc', '1.5', '']) {
    const r = await c.get(`/${db}/_changes?since=${since}`);
    assert.equal(r.status, 400, `since=${since}: ${r.text}`);
    assert.equal(typeof r.body.error, 'string');
  }
});

// ------------------------------------------------------------------ robustness

test('closing 50 continuous feeds leaves the server answering and writing', async () => {
  const db = await mkdb('many');
  await save(db, 'first');
  const feeds: OpenStream[] = [];
  for (let i = 0; i < 50; i++) feeds.push(await live(`/${db}/_changes?feed=continuous&heartbeat=100`));
  await Promise.all(feeds.map((f) => f.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the first change')));
  for (const f of feeds) f.close();
  // Writes after the clients left still work, and the feeds are gone from under them.
  const root = await c.get('/');
  assert.equal(root.status, 200);
  const rev = await save(db, 'after');
  for (let i = 0; i < 20; i++) await save(db, `more-${i}`);
  const r = await c.get(`/${db}/_changes?since=1&limit=1`);
  assert.deepEqual(r.body.results, [{ seq: 2, id: 'after', changes: [{ rev }] }]);
  assert.equal(await updateSeq(db), 22);
  // And a new live feed still works.
  const st = await live(`/${db}/_changes?feed=continuous&since=now`);
  const late = await save(db, 'late');
  await st.waitFor((t) => jsonLines(t).length >= 1, 5000, 'the late change');
  assert.deepEqual(jsonLines(st.text), [{ seq: 23, id: 'late', changes: [{ rev: late }] }]);
  st.close();
});

test('deleting the database ends its live feeds as a timeout would', async () => {
  const db = await mkdb('gone');
  await save(db, 'a');
  const cont = await live(`/${db}/_changes?feed=continuous&since=now&heartbeat=100`);
  const poll = await live(`/${db}/_changes?feed=longpoll&since=now`);
  const es = await live(`/${db}/_changes?feed=eventsource&since=now&heartbeat=100`);
  await roundTrip();
  assert.equal((await c.del(`/${db}`)).status, 200);
  const text = await cont.waitForEnd();
  assert.deepEqual(jsonLines(text), [{ last_seq: 1 }]);
  assert.ok(text.length < 200, `only heartbeats before the last line, got ${text.length} bytes`);
  assert.deepEqual(JSON.parse(await poll.waitForEnd()), { results: [], last_seq: 1 });
  const events = parseEvents(await es.waitForEnd());
  assert.ok(events.every((e) => e.event === 'heartbeat'), 'no change events');
  assert.equal((await c.get('/')).status, 200);
});

test('deleting and recreating the database starts the changes over', async () => {
  const db = await mkdb('recreate');
  await save(db, 'a');
  await save(db, 'b');
  await save(db, 'c');
  assert.equal((await c.get(`/${db}/_changes`)).body.last_seq, 3);
  assert.equal((await c.del(`/${db}`)).status, 200);
  assert.equal((await c.put(`/${db}`)).status, 201);
  let r = await c.get(`/${db}/_changes`);
  assert.deepEqual(r.body, { results: [], last_seq: 0 });
  const rev = await save(db, 'z');
  r = await c.get(`/${db}/_changes`);
  assert.deepEqual(r.body, { results: [{ seq: 1, id: 'z', changes: [{ rev }] }], last_seq: 1 });
  r = await c.get(`/${db}/_changes?since=2`);
  assert.deepEqual(r.body.results, []);
});

// Last: a request for a missing database has been seen to take the whole server down.
test('errors: a missing database is a 404 on every feed', async () => {
  for (const feed of ['normal', 'longpoll', 'continuous', 'eventsource']) {
    const r = await c.get(`/changes-no-such-db/_changes?feed=${feed}&timeout=10`);
    assert.equal(r.status, 404, feed);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'no_db_file' }, feed);
  }
  const p = await c.post('/changes-no-such-db/_changes?filter=_doc_ids', { doc_ids: ['a'] });
  assert.equal(p.status, 404);
});
