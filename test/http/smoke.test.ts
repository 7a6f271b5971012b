import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

test('GET / welcomes like CouchDB', async () => {
  const r = await c.get('/');
  assert.equal(r.status, 200);
  assert.equal(r.body.couchdb, 'Welcome');
  assert.match(r.body.uuid, /^[0-9a-f]{32}$/);
  assert.equal(r.headers['cache-control'], 'must-revalidate');
  assert.equal(r.headers['content-type'], 'application/json');
});

test('create a database, write and read a document', async () => {
  assert.equal((await c.put('/smoke')).status, 201);
  const w = await c.put('/smoke/doc1', { hello: 'world' });
  assert.equal(w.status, 201);
  assert.match(w.body.rev, /^1-[0-9a-f]{32}$/);
  const r = await c.get('/smoke/doc1');
  assert.deepEqual(r.body, { _id: 'doc1', _rev: w.body.rev, hello: 'world' });
  assert.equal(r.headers.etag, `"${w.body.rev}"`);
});

test('text/plain unless the client accepts JSON', async () => {
  const r = await c.get('/', { headers: { Accept: '*/*' } });
  assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
});
