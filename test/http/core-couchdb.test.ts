/**
 * Behaviours of CouchDB 1.6's own browser test suite (share/www/script/test/*.js) for the core
 * document API that Settee once answered differently, grouped by the suite file they come from.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';

let server: TestServer;
let c: ReturnType<typeof client>;

before(async () => {
  server = await startServer();
  c = client(server.url);
});
after(async () => server.stop());

const json = { 'Content-Type': 'application/json' };

async function compact(db: string): Promise<void> {
  assert.equal((await c.post(`/${db}/_compact`, undefined, { headers: json })).status, 202);
  while ((await c.get(`/${db}`)).body.compact_running) await new Promise((r) => setTimeout(r, 20));
}

/** Saves `doc` `times` times in a row, each time from the previous revision; the last rev. */
async function editRepeatedly(db: string, id: string, times: number, from?: string): Promise<string> {
  let rev = from;
  for (let i = 0; i < times; i++) {
    const r = await c.put(`/${db}/${id}`, rev ? { _rev: rev, n: i } : { n: i });
    assert.equal(r.status, 201);
    rev = r.body.rev as string;
  }
  return rev!;
}

test('basics: error reasons are worded as CouchDB words them', async () => {
  assert.equal((await c.put('/basics')).status, 201);
  const del = await c.del('/basics/?rev=foobarbaz');
  assert.equal(del.status, 400);
  assert.equal(del.body.reason, 'You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?');
  const keys = await c.post('/basics/_all_docs', { keys: 1 });
  assert.equal(keys.status, 400);
  assert.deepEqual(keys.body, { error: 'bad_request', reason: '`keys` member must be a array.' });
});

test('rev_stemming: compaction stems histories longer than a lowered _revs_limit', async () => {
  assert.equal((await c.put('/stemming')).status, 201);
  assert.equal((await c.get('/stemming/_revs_limit')).body, 1000);
  await editRepeatedly('stemming', 'bar', 6);
  assert.equal((await c.put('/stemming/_revs_limit', 5)).status, 200);
  // Edits made before the limit was lowered keep their history until compaction.
  assert.equal((await c.get('/stemming/bar?revs=true')).body._revisions.ids.length, 6);
  const fooRev = await editRepeatedly('stemming', 'foo', 6);
  assert.equal((await c.get('/stemming/foo?revs=true')).body._revisions.ids.length, 5);
  await compact('stemming');
  const bar = await c.get('/stemming/bar?revs=true', { headers: { 'If-None-Match': '"pommes"' } });
  assert.equal(bar.body._revisions.ids.length, 5);
  assert.equal(bar.body._revisions.start, 6);
  // The stemmed document still takes edits from its current revision.
  assert.equal((await c.put('/stemming/bar', { _rev: bar.body._rev })).status, 201);
  assert.equal((await c.put('/stemming/foo', { _rev: fooRev })).status, 201);
});
