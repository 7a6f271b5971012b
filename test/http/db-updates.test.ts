/**
 * `GET /_db_updates` as CouchDB 1.6's couch_dbupdates_httpd sends it: longpoll (the default)
 * answers the first database event; continuous and eventsource send every event
 * until the client leaves, each `{ok, type, db_name}` (types created, updated, deleted, compacted); `timeout` is how long a feed waits for an event, after which it ends
 * without a heartbeat or sends a newline and goes on with one (the default for the live feeds).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { openStream, type OpenStream } from '../helpers/stream.js';

const { server, c } = await serverForFile();
const open: OpenStream[] = [];
after(() => { for (const s of open) s.close(); });

async function feed(query: string): Promise<OpenStream> {
  const s = await openStream(server.url, 'GET', `/_db_updates${query}`);
  open.push(s);
  assert.equal(s.status, 200);
  return s;
}

test('longpoll answers the next event, ok first, and ends with end_json_response\'s newline', async () => {
  const s = await feed('');
  assert.equal((await c.put('/dbu-longpoll')).status, 201);
  const text = await s.waitForEnd();
  assert.equal(text, '{"ok":true,"type":"created","db_name":"dbu-longpoll"}\n');
});

test('longpoll with nothing happening ends after the timeout, with only the closing newline', async () => {
  const s = await feed('?feed=longpoll&timeout=100&heartbeat=true');
  assert.equal(await s.waitForEnd(), '\n');
});

test('continuous sends created, updated and deleted events, one JSON object per line', async () => {
  const s = await feed('?feed=continuous');
  assert.equal((await c.put('/dbu-cont')).status, 201);
  assert.equal((await c.put('/dbu-cont/doc', { a: 1 })).status, 201);
  assert.equal((await c.del('/dbu-cont')).status, 200);
  await s.waitFor((t) => t.includes('"deleted"'), 5000, 'the deleted event');
  const events = s.lines().filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  const mine = events.filter((e) => e.db_name === 'dbu-cont');
  assert.deepEqual(mine.map((e) => e.type), ['created', 'updated', 'deleted']);
  assert.deepEqual(mine[0], { ok: true, type: 'created', db_name: 'dbu-cont' });
  assert.equal(s.ended, false);
});

test('a finished compaction is a compacted event', async () => {
  assert.equal((await c.put('/dbu-compact')).status, 201);
  assert.equal((await c.put('/dbu-compact/doc', { a: 1 })).status, 201);
  const s = await feed('?feed=continuous');
  const r = await c.post('/dbu-compact/_compact', {});
  assert.equal(r.status, 202);
  await s.waitFor((t) => t.includes('"compacted"'), 10000, 'the compacted event');
  const events = s.lines().filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  assert.deepEqual(events.filter((e) => e.db_name === 'dbu-compact'), [{ ok: true, type: 'compacted', db_name: 'dbu-compact' }]);
});

test('a live feed sends a newline each `timeout` without events, and stays open', async () => {
  const s = await feed('?feed=continuous&timeout=50');
  await s.waitFor((t) => t.split('\n').length >= 4, 5000, 'three heartbeats');
  assert.match(s.text, /^\n+$/);
  assert.equal(s.ended, false);
  assert.equal((await c.put('/dbu-after-beats')).status, 201);
  await s.waitFor((t) => t.includes('dbu-after-beats'), 5000, 'the event after the heartbeats');
});

test('heartbeat=false: a live feed ends after `timeout` without events', async () => {
  const s = await feed('?feed=continuous&timeout=100&heartbeat=false');
  assert.equal((await c.put('/dbu-no-beat')).status, 201);
  const text = await s.waitForEnd();
  assert.deepEqual(text.split('\n').filter(Boolean).map((l) => JSON.parse(l)), [{ ok: true, type: 'created', db_name: 'dbu-no-beat' }]);
  assert.ok(text.endsWith('}\n\n'), JSON.stringify(text));
});

test('without heartbeat, continuous and eventsource feeds idle for `timeout` end with only the closing newline', async () => {
  for (const kind of ['continuous', 'eventsource']) {
    const s = await feed(`?feed=${kind}&timeout=50&heartbeat=false`);
    assert.equal(await s.waitForEnd(), '\n', kind);
  }
});

test('eventsource sends data events as text/event-stream', async () => {
  const s = await feed('?feed=eventsource');
  assert.match(String(s.headers['content-type']), /^text\/event-stream/);
  assert.equal(s.headers['cache-control'], 'no-cache');
  assert.equal((await c.put('/dbu-es')).status, 201);
  const text = await s.waitFor((t) => t.includes('\n\n'), 5000, 'one event');
  assert.equal(text, 'data: {"ok":true,"type":"created","db_name":"dbu-es"}\n\n');
});

test('a timeout that is no non-negative integer is a 400 invalid_integer (1.6 crashes; global_changes_httpd to_non_neg_int)', async () => {
  for (const timeout of ['abc', '-5', '1.5', '']) {
    const r = await c.get(`/_db_updates?feed=continuous&timeout=${timeout}`);
    assert.equal(r.status, 400, timeout);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_integer' }, timeout);
  }
});

test('a timeout longer than a Node timer can wait still waits for the event (Erlang waits up to 2^32-1 ms)', async () => {
  const s = await feed('?feed=longpoll&timeout=3000000000');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal((await c.put('/dbu-long-timeout')).status, 201);
  assert.equal(await s.waitForEnd(), '{"ok":true,"type":"created","db_name":"dbu-long-timeout"}\n');
});

test('only GET: other methods are 405', async () => {
  const r = await c.post('/_db_updates', {});
  assert.equal(r.status, 405);
  assert.equal(r.body.error, 'method_not_allowed');
});
