/** `_changes` filters over real HTTP: filter functions with CouchDB's `req`, in every feed, and Mango selectors (`filter=_selector`). */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/flt')).status, 201);
  const docs = Array.from({ length: 30 }, (_, i) => ({ _id: `d${String(i).padStart(2, '0')}`, n: i, kind: i % 3 === 0 ? 'three' : 'other' }));
  assert.equal((await c.post('/flt/_bulk_docs', { docs })).status, 201);
  const ddoc = await c.put('/flt/_design/f', {
    lib: { kinds: 'exports.is = function(doc, k) { return doc.kind === k; };' },
    filters: {
      kind: 'function(doc, req) { return require("lib/kinds").is(doc, req.query.kind); }',
      min: 'function(doc, req) { return doc.n >= req.query.min; }',
      deleted: 'function(doc) { return !!doc._deleted; }',
      ctx: 'function(doc, req) { return doc._id === "d01" && req.userCtx.db === "flt" && req.userCtx.roles.indexOf("_admin") >= 0 && typeof req.secObj === "object" && req.info.db_name === "flt" && req.method === "GET"; }',
      boom: 'function(doc) { if (doc.n === 25) throw new Error("bad doc " + doc._id); return true; }',
      post: 'function(doc, req) { return req.method === "POST" && JSON.parse(req.body).want === doc._id; }',
    },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
});

const ids = (body: { results: { id: string }[] }) => body.results.map((r) => r.id);

test('filter function with req.query and require() from the design document', async () => {
  const r = await c.get('/flt/_changes?filter=f/kind&kind=three');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(ids(r.body), ['d00', 'd03', 'd06', 'd09', 'd12', 'd15', 'd18', 'd21', 'd24', 'd27']);
  assert.equal(r.body.last_seq, 31);
  const limited = await c.get('/flt/_changes?filter=f/min&min=28&include_docs=true');
  assert.deepEqual(ids(limited.body), ['d28', 'd29']);
  assert.equal(limited.body.results[0].doc.n, 28);
  const withLimit = await c.get('/flt/_changes?filter=f/kind&kind=three&limit=2');
  assert.deepEqual(ids(withLimit.body), ['d00', 'd03']);
});

test('req has userCtx, secObj, info and method; POST bodies reach req.body', async () => {
  const r = await c.get('/flt/_changes?filter=f/ctx');
  assert.deepEqual(ids(r.body), ['d01']);
  const p = await c.post('/flt/_changes?filter=f/post', { want: 'd07' });
  assert.deepEqual(ids(p.body), ['d07']);
});

test('deleted documents reach the filter as tombstones', async () => {
  const doc = await c.get('/flt/d02');
  await c.del(`/flt/d02?rev=${doc.body._rev}`);
  const r = await c.get('/flt/_changes?filter=f/deleted');
  assert.deepEqual(ids(r.body), ['d02']);
  assert.equal(r.body.results[0].deleted, true);
});

test('missing design document or filter is a 404; bad code a compilation error', async () => {
  const noDdoc = await c.get('/flt/_changes?filter=nope/kind');
  assert.equal(noDdoc.status, 404);
  assert.equal(noDdoc.body.error, 'not_found');
  const noFilter = await c.get('/flt/_changes?filter=f/nope');
  assert.equal(noFilter.status, 404);
  assert.equal(noFilter.body.error, 'not_found');
  await c.put('/flt/_design/broken', { filters: { x: 'function(doc) { return (' } });
  const broken = await c.get('/flt/_changes?filter=broken/x');
  assert.equal(broken.status, 400);
  assert.equal(broken.body.error, 'compilation_error');
});

test('a filter that throws gives an error response, not a dropped feed', async () => {
  const r = await c.get('/flt/_changes?filter=f/boom');
  assert.equal(r.status, 500);
  assert.equal(r.body.error, 'render_error');
  assert.match(r.body.reason, /bad doc d25/);
  // continuous: the feed ends with an error line
  const cont = await c.get('/flt/_changes?filter=f/boom&feed=continuous&timeout=100');
  assert.equal(cont.status, 200);
  const lines = cont.text.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  assert.equal(lines[lines.length - 1].error, 'render_error');
});

test('continuous feed with a filter delivers only matching new changes', async () => {
  const url = new URL('flt/_changes?feed=continuous&filter=f/kind&kind=live&since=now&heartbeat=1000', server.url);
  const seen: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const r = httpRequest(url, (res) => {
      let buf = '';
      res.on('data', (chunk: Buffer) => {
        buf += chunk.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const row = JSON.parse(line) as { id?: string };
          if (row.id) seen.push(row.id);
          if (seen.length === 2) { r.destroy(); resolve(); }
        }
      });
      res.on('error', () => undefined);
    });
    r.on('error', (err) => { if (seen.length < 2) reject(err); });
    r.end();
    setTimeout(async () => {
      await c.put('/flt/l1', { kind: 'other' });
      await c.put('/flt/l2', { kind: 'live' });
      await c.put('/flt/l3', { kind: 'other' });
      await c.put('/flt/l4', { kind: 'live' });
    }, 200);
  });
  assert.deepEqual(seen, ['l2', 'l4']);
});

test('filter functions see _conflicts, as CouchDB opens documents for them', async () => {
  assert.equal((await c.put('/flt-conflicts')).status, 201);
  assert.equal((await c.put('/flt-conflicts/_design/f', { filters: { conflicted: 'function(doc, req) { return !!doc._conflicts; }' } })).status, 201);
  const first = await c.put('/flt-conflicts/pizza', { food: 'pizza' });
  assert.equal(first.status, 201);
  assert.equal((await c.put('/flt-conflicts/plain', { food: 'bread' })).status, 201);
  const forced = await c.post('/flt-conflicts/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'pizza', food: 'pasta' }] });
  assert.equal(forced.status, 201);
  const r = await c.get('/flt-conflicts/_changes?filter=f/conflicted');
  assert.deepEqual(ids(r.body), ['pizza']);
});

test('filter functions see _revisions naming the revision alone, as CouchDB 1.6 opens documents for them (a doc_info, rendered with revs)', async () => {
  assert.equal((await c.put('/flt-revisions')).status, 201);
  const echo = 'function(doc, req) { return JSON.stringify(doc._revisions) === req.query.want; }';
  assert.equal((await c.put('/flt-revisions/_design/f', { filters: { revisions: echo } })).status, 201);
  const one = await c.put('/flt-revisions/a', { v: 1 });
  const two = await c.put('/flt-revisions/a', { _rev: one.body.rev, v: 2 });
  assert.equal((await c.put('/flt-revisions/b', { v: 1 })).status, 201);
  // couch_db:open_doc of a change's doc_info gives the revision without its ancestors.
  const want = JSON.stringify({ start: 2, ids: [two.body.rev.split('-')[1]] });
  const r = await c.get(`/flt-revisions/_changes?filter=f/revisions&want=${encodeURIComponent(want)}`);
  assert.deepEqual(ids(r.body), ['a']);
});

test('filter=_view maps the document as filter functions get it: _revisions naming the revision alone, _conflicts', async () => {
  const db = 'flt-view-doc';
  assert.equal((await c.put(`/${db}`)).status, 201);
  assert.equal((await c.put(`/${db}/_design/v`, {
    views: {
      second: { map: 'function(doc) { if (doc._revisions && doc._revisions.start === 2 && doc._revisions.ids.length === 1) emit(doc._id, null); }' },
      conflicted: { map: 'function(doc) { if (doc._conflicts) emit(doc._id, doc._conflicts.length); }' },
    },
  })).status, 201);
  const one = await c.put(`/${db}/edited`, { v: 1 });
  assert.equal((await c.put(`/${db}/edited`, { _rev: one.body.rev, v: 2 })).status, 201);
  assert.equal((await c.put(`/${db}/plain`, { v: 1 })).status, 201);
  assert.equal((await c.put(`/${db}/pizza`, { food: 'pizza' })).status, 201);
  assert.equal((await c.post(`/${db}/_bulk_docs`, { all_or_nothing: true, docs: [{ _id: 'pizza', food: 'pasta' }] })).status, 201);
  assert.deepEqual(ids((await c.get(`/${db}/_changes?filter=_view&view=v/second`)).body), ['edited']);
  assert.deepEqual(ids((await c.get(`/${db}/_changes?filter=_view&view=v/conflicted`)).body), ['pizza']);
});

test('style=all_docs: filters judge each leaf on its own and a change lists the leaves that pass (functions, _view, _selector)', async () => {
  const db = 'flt-leaves';
  assert.equal((await c.put(`/${db}`)).status, 201);
  assert.equal((await c.put(`/${db}/_design/f`, {
    filters: {
      red: 'function(doc) { return doc.color === "red"; }',
      conflicted: 'function(doc) { return !!doc._conflicts; }',
    },
    views: { red: { map: 'function(doc) { if (doc.color === "red") emit(doc._id, null); }' } },
  })).status, 201);
  // Three leaves each: `mixed` a red winner and a blue one, `loser-red` a blue winner and a red
  // loser, `blue` none red, `deleted-red` a red tombstone beside a live blue winner.
  const hash = (digit: string) => digit.repeat(32);
  const leaf = (id: string, rev: string, color: string, deleted = false) =>
    ({ _id: id, _rev: rev, color, ...(deleted ? { _deleted: true } : {}) });
  const docs = [
    leaf('mixed', `1-${hash('b')}`, 'red'), leaf('mixed', `1-${hash('a')}`, 'blue'),
    leaf('loser-red', `1-${hash('b')}`, 'blue'), leaf('loser-red', `1-${hash('a')}`, 'red'),
    leaf('blue', `1-${hash('b')}`, 'blue'), leaf('blue', `1-${hash('a')}`, 'blue'),
    leaf('deleted-red', `1-${hash('b')}`, 'blue'), leaf('deleted-red', `1-${hash('a')}`, 'red', true),
  ];
  assert.equal((await c.post(`/${db}/_bulk_docs`, { new_edits: false, docs })).status, 201);
  const listed = (body: { results: { id: string; changes: { rev: string }[] }[] }) =>
    Object.fromEntries(body.results.map((r) => [r.id, r.changes.map((ch) => ch.rev)]));
  const expected = { mixed: [`1-${hash('b')}`], 'loser-red': [`1-${hash('a')}`], 'deleted-red': [`1-${hash('a')}`] };

  const byFunction = await c.get(`/${db}/_changes?filter=f/red&style=all_docs`);
  assert.deepEqual(listed(byFunction.body), expected);
  // The change's winner still says whether it is deleted.
  assert.equal(byFunction.body.results.find((r: { id: string }) => r.id === 'deleted-red').deleted, undefined);
  const byView = await c.get(`/${db}/_changes?filter=_view&view=f/red&style=all_docs`);
  assert.deepEqual(listed(byView.body), expected);
  const bySelector = await c.post(`/${db}/_changes?filter=_selector&style=all_docs`, { selector: { color: 'red' } });
  assert.deepEqual(listed(bySelector.body), expected);

  // Without style=all_docs the winner decides, and lists itself alone.
  const mainOnly = await c.get(`/${db}/_changes?filter=f/red`);
  assert.deepEqual(listed(mainOnly.body), { mixed: [`1-${hash('b')}`] });
  // Judged alone, a leaf has no conflicts to show; the winner of a whole change has.
  assert.deepEqual(Object.keys(listed((await c.get(`/${db}/_changes?filter=f/conflicted`)).body)), ['mixed', 'loser-red', 'blue']);
  assert.deepEqual(listed((await c.get(`/${db}/_changes?filter=f/conflicted&style=all_docs`)).body), {});
});

test('filter=_selector: a Mango selector in the POST body picks the changes, tombstones included', async () => {
  assert.equal((await c.put('/flt-sel')).status, 201);
  const docs = [
    { _id: 'a', type: 'post', n: 1 }, { _id: 'b', type: 'user', n: 2 }, { _id: 'c', type: 'post', n: 3 },
    { _id: 'd', type: 'post', n: 4, tags: ['x', 'y'] },
  ];
  assert.equal((await c.post('/flt-sel/_bulk_docs', { docs })).status, 201);
  const rev = (await c.get('/flt-sel/c')).body._rev;
  assert.equal((await c.del(`/flt-sel/c?rev=${rev}`)).status, 200);

  const posts = await c.post('/flt-sel/_changes?filter=_selector', { selector: { type: 'post' } });
  assert.equal(posts.status, 200, posts.text);
  assert.deepEqual(ids(posts.body), ['a', 'd']);
  const ranged = await c.post('/flt-sel/_changes?filter=_selector&include_docs=true', { selector: { n: { $gte: 2 }, tags: { $elemMatch: { $eq: 'y' } } } });
  assert.deepEqual(ids(ranged.body), ['d']);
  assert.equal(ranged.body.results[0].doc.n, 4);
  // A deleted document is matched as its tombstone, as CouchDB opens it.
  const deleted = await c.post('/flt-sel/_changes?filter=_selector', { selector: { _deleted: true } });
  assert.deepEqual(ids(deleted.body), ['c']);
  assert.equal(deleted.body.results[0].deleted, true);
  // An empty selector matches every document.
  assert.deepEqual(ids((await c.post('/flt-sel/_changes?filter=_selector', { selector: {} })).body), ['a', 'b', 'd', 'c']);
  // `fields` is accepted (CouchDB does not apply it to changes either).
  assert.deepEqual(ids((await c.post('/flt-sel/_changes?filter=_selector', { selector: { type: 'user' }, fields: ['_id'] })).body), ['b']);

  // A longpoll feed waits for the next matching change.
  const since = posts.body.last_seq;
  const waiting = c.post(`/flt-sel/_changes?filter=_selector&feed=longpoll&since=${since}`, { selector: { type: 'post' } });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal((await c.put('/flt-sel/e', { type: 'user' })).status, 201);
  assert.equal((await c.put('/flt-sel/f', { type: 'post' })).status, 201);
  assert.deepEqual(ids((await waiting).body), ['f']);
});

test('filter=_selector: CouchDB\'s errors for a missing or bad selector', async () => {
  const get = await c.get('/flt-sel/_changes?filter=_selector');
  assert.equal(get.status, 400);
  assert.deepEqual(get.body, { error: 'bad_request', reason: 'Selector must be specified in POST payload' });
  for (const body of [{}, { selector: 'type' }, { selector: ['a'] }, { selector: null }]) {
    const r = await c.post('/flt-sel/_changes?filter=_selector', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'Selector error: expected a JSON object' });
  }
  const fields = await c.post('/flt-sel/_changes?filter=_selector', { selector: {}, fields: 'a' });
  assert.deepEqual(fields.body, { error: 'bad_request', reason: 'Selector error: fields must be JSON array' });
  const operator = await c.post('/flt-sel/_changes?filter=_selector', { selector: { n: { $bogus: 1 } } });
  assert.equal(operator.status, 400);
  assert.equal(operator.body.error, 'bad_request');
  assert.match(operator.body.reason, /\$bogus/);
});
