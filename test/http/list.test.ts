/** `_list` over real HTTP: list functions over views, streaming, provides(), errors. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/lst')).status, 201);
  const docs = Array.from({ length: 50 }, (_, i) => ({ _id: `d${String(i).padStart(2, '0')}`, n: i, kind: i % 2 ? 'odd' : 'even' }));
  assert.equal((await c.post('/lst/_bulk_docs', { docs })).status, 201);
  const ddoc = await c.put('/lst/_design/l', {
    views: {
      by_n: { map: 'function(doc) { if (typeof doc.n === "number") emit(doc.n, doc.kind); }' },
      count: { map: 'function(doc) { if (doc.kind) emit(doc.kind, 1); }', reduce: '_count' },
    },
    lib: { csv: 'exports.line = function(row) { return row.key + "," + row.value + "\\n"; };' },
    lists: {
      csv: 'function(head, req) { start({headers: {"Content-Type": "text/csv"}}); send("total=" + head.total_rows + " offset=" + head.offset + "\\n"); var row, line = require("lib/csv").line; while ((row = getRow())) send(line(row)); return "end\\n"; }',
      json: 'function(head, req) { var rows = [], row; while ((row = getRow())) rows.push(row.key); return toJSON({rows: rows, q: req.query.extra || null}); }',
      code: 'function(head) { start({code: 203, headers: {"X-List": "yes"}}); send("a"); send("b"); return "c"; }',
      nego: 'function(head, req) { provides("html", function() { send("<ul>"); var r; while ((r = getRow())) send("<li>" + r.key + "</li>"); return "</ul>"; }); provides("json", function() { var n = 0; while (getRow()) n++; return toJSON({n: n}); }); }',
      early: 'function(head) { throw(["error", "not_found", "no list for you"]); }',
      late: 'function(head) { start({headers: {"Content-Type": "text/plain"}}); var r; while ((r = getRow())) { if (r.key === 10) throw new Error("row ten"); send(r.key + ";"); } }',
      reduced: 'function(head) { var out = [], r; while ((r = getRow())) out.push(r.key + "=" + r.value); return out.join(" "); }',
      docs: 'function(head) { var r = getRow(); return r.doc._id + ":" + r.doc.n; }',
      spinEarly: 'function(head) { while (true) {} }',
      spinLate: 'function(head) { start({headers: {"Content-Type": "text/plain"}}); getRow(); send("first;"); var t = Date.now(); while (Date.now() - t < 100) {} getRow(); while (true) {} }',
      many: 'function(head) { start({headers: {"Content-Type": "text/plain"}}); var r; while ((r = getRow())) { send(r.key + "\\n"); } }',
    },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  await c.put('/lst/_design/other', { views: { kinds: { map: 'function(doc) { if (doc.kind === "odd") emit(doc._id, null); }' } } });
});

test('a list renders view rows with its own headers; query parameters pass through', async () => {
  const r = await c.get('/lst/_design/l/_list/csv/by_n?startkey=3&limit=3');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers['content-type'], 'text/csv');
  assert.equal(r.text, 'total=50 offset=3\n3,odd\n4,even\n5,odd\nend\n');
  const json = await c.get('/lst/_design/l/_list/json/by_n?descending=true&limit=2&extra=x');
  assert.equal(json.headers['content-type'], 'application/json');
  assert.deepEqual(json.body, { rows: [49, 48], q: 'x' });
  const posted = await c.post('/lst/_design/l/_list/json/by_n', { keys: [7, 2] });
  assert.deepEqual(posted.body.rows, [7, 2]);
  const code = await c.get('/lst/_design/l/_list/code/by_n');
  assert.equal(code.status, 203);
  assert.equal(code.headers['x-list'], 'yes');
  assert.equal(code.text, 'abc');
});

test('a list over another design document\'s view, reduce views and include_docs', async () => {
  const r = await c.get('/lst/_design/l/_list/json/other/kinds?limit=3');
  assert.deepEqual(r.body.rows, ['d01', 'd03', 'd05']);
  const reduced = await c.get('/lst/_design/l/_list/reduced/count?group=true');
  assert.equal(reduced.text, 'even=25 odd=25');
  const docs = await c.get('/lst/_design/l/_list/docs/by_n?include_docs=true&key=12');
  assert.equal(docs.text, 'd12:12');
});

test('provides() chooses by Accept and format=', async () => {
  const html = await c.get('/lst/_design/l/_list/nego/by_n?limit=2', { headers: { Accept: 'text/html' } });
  assert.equal(html.text, '<ul><li>0</li><li>1</li></ul>');
  assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
  const json = await c.get('/lst/_design/l/_list/nego/by_n?format=json');
  assert.deepEqual(json.body, { n: 50 });
});

test('errors before the first row are error responses; later ones end the body with the error', async () => {
  const early = await c.get('/lst/_design/l/_list/early/by_n');
  assert.equal(early.status, 404);
  assert.deepEqual(early.body, { error: 'not_found', reason: 'no list for you' });
  const late = await c.get('/lst/_design/l/_list/late/by_n');
  assert.equal(late.status, 200);
  assert.match(late.text, /^0;1;2;3;4;5;6;7;8;9;\n\{"code":500,"error":"render_error","reason":".*row ten.*"\}\n$/);
  assert.equal((await c.get('/lst/_design/l/_list/nope/by_n')).status, 404);
  assert.equal((await c.get('/lst/_design/l/_list/csv/nope')).status, 404);
  const noView = await c.get('/lst/_design/l/_list/csv');
  assert.equal(noView.status, 404);
  assert.deepEqual(noView.body, { error: 'list_error', reason: 'Bad path.' });
  assert.deepEqual((await c.get('/lst/_design/l/_list/')).body, { error: 'list_error', reason: 'Bad path.' });
  // still healthy
  assert.equal((await c.get('/lst/_design/l/_list/code/by_n')).text, 'abc');
});

test('output streams while the list runs: the first bytes arrive before the rows run out', async () => {
  const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: `m${String(i).padStart(5, '0')}`, n: 1000 + i }));
  assert.equal((await c.post('/lst/_bulk_docs', { docs })).status, 201);
  // Read the first chunk, then stop reading: the server must not have produced everything.
  const text = await new Promise<string>((resolve, reject) => {
    const r = httpRequest(new URL('lst/_design/l/_list/many/by_n', server.url), (res) => {
      let got = '';
      res.on('data', (chunk: Buffer) => {
        got += chunk.toString();
        res.destroy();
        resolve(got);
      });
      res.on('error', () => undefined);
    });
    r.on('error', reject);
    r.end();
  });
  assert.ok(text.startsWith('0\n1\n'));
  assert.ok(!text.includes('3999\n'), 'the whole output came in the first chunk');
  // and the complete list, read to the end, has every row
  const all = await c.get('/lst/_design/l/_list/many/by_n');
  assert.equal(all.text.split('\n').filter((l) => l !== '').length, 3050);
  assert.ok(all.text.endsWith('3999\n'));
});

test('a list whose client stops reading holds back neither other lists nor views and writes', async () => {
  await c.put('/lst/_design/big', {
    views: { all: { map: 'function(doc) { emit(doc._id, doc); }' } },
    lists: { fat: 'function() { start({headers: {"Content-Type": "text/plain"}}); var r; while ((r = getRow())) send(JSON.stringify(r) + new Array(2000).join("x") + "\\n"); }' },
  });
  assert.equal((await c.get('/lst/_design/big/_view/all?limit=1')).status, 200);
  // A client that reads the head and then nothing: the server's output backs up.
  const stalled = await new Promise<import('node:http').ClientRequest>((resolve, reject) => {
    const r = httpRequest(new URL('lst/_design/big/_list/fat/all', server.url), (res) => {
      res.once('data', () => { res.pause(); resolve(r); });
    });
    r.on('error', reject);
    r.end();
  });
  try {
    const other = await c.get('/lst/_design/l/_list/csv/by_n?limit=2');
    assert.equal(other.status, 200);
    assert.equal(other.text, 'total=3050 offset=0\n0,even\n1,odd\nend\n');
    assert.equal((await c.get('/lst/_design/l/_view/count?group=true')).status, 200);
    assert.equal((await c.put('/lst/while-stalled', { n: -1 })).status, 201);
  } finally {
    stalled.destroy();
  }
});

test('HEAD on a list (whose body is never read) leaves no list behind', async () => {
  const within = <T>(p: Promise<T>, ms: number): Promise<T> =>
    Promise.race([p, new Promise<T>((_, reject) => { setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref(); })]);
  for (let i = 0; i < 6; i++) {
    const head = await within(c.head('/lst/_design/big/_list/fat/all'), 20_000);
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  }
  const after = await within(c.get('/lst/_design/l/_list/csv/by_n?limit=1'), 20_000);
  assert.equal(after.text, 'total=3051 offset=0\n-1,null\nend\n');
});

test('runaway lists are stopped: before the head an error reply, after it the body ends with the error', async () => {
  await c.put('/_config/couchdb/os_process_timeout', '300');
  try {
    const early = await c.get('/lst/_design/l/_list/spinEarly/by_n');
    assert.equal(early.status, 500);
    assert.equal(early.body.error, 'os_process_error');
    const late = await c.get('/lst/_design/l/_list/spinLate/by_n');
    assert.equal(late.status, 200);
    assert.equal(late.text, 'first;\n{"code":500,"error":"os_process_error","reason":"OS process timed out."}\n');
  } finally {
    await c.put('/_config/couchdb/os_process_timeout', '5000');
  }
  assert.equal((await c.get('/lst/_design/l/_list/code/by_n')).text, 'abc');
});

test('list answers carry ETags: 304 on a match; Accept, keys and new rows change them', async () => {
  const r = await c.get('/lst/_design/l/_list/json/by_n?limit=2');
  assert.equal(r.status, 200);
  const etag = r.headers['etag'] as string;
  assert.ok(etag);
  // The answer depends on Accept, as a show's.
  assert.equal(r.headers['vary'], 'Accept');
  const again = await c.get('/lst/_design/l/_list/json/by_n?limit=2', { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  const html = await c.get('/lst/_design/l/_list/json/by_n?limit=2', { headers: { Accept: 'text/html', 'If-None-Match': etag } });
  assert.equal(html.status, 200);
  assert.notEqual(html.headers['etag'], etag);
  const one = await c.post('/lst/_design/l/_list/json/by_n', { keys: [1] });
  const two = await c.post('/lst/_design/l/_list/json/by_n', { keys: [2] });
  assert.ok(one.headers['etag']);
  assert.notEqual(one.headers['etag'], two.headers['etag']);

  const reduced = await c.get('/lst/_design/l/_list/reduced/count?group=true');
  const reducedEtag = reduced.headers['etag'] as string;
  assert.ok(reducedEtag, 'reduce lists have ETags too');
  assert.equal((await c.get('/lst/_design/l/_list/reduced/count?group=true', { headers: { 'If-None-Match': reducedEtag } })).status, 304);
  assert.equal((await c.put('/lst/etag-change', { kind: 'even' })).status, 201);
  const changed = await c.get('/lst/_design/l/_list/reduced/count?group=true', { headers: { 'If-None-Match': reducedEtag } });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers['etag'], reducedEtag);
});

test('a missing list is looked up after the query and the view: their errors come first', async () => {
  // couch_mrview_show: couch_mrview:query_view parses the parameters and opens the view before
  // start_list_resp asks the query server for the list function.
  const noView = await c.get('/lst/_design/l/_list/nope/nope');
  assert.equal(noView.status, 404);
  assert.deepEqual(noView.body, { error: 'not_found', reason: 'missing_named_view' });
  const badParam = await c.get('/lst/_design/l/_list/nope/by_n?startkey=bad');
  assert.equal(badParam.status, 400);
  assert.deepEqual(badParam.body, { error: 'bad_request', reason: 'invalid_json' });
  const noList = await c.get('/lst/_design/l/_list/nope/by_n');
  assert.equal(noList.status, 404);
  assert.deepEqual(noList.body, { error: 'not_found', reason: 'missing lists function nope on design doc _design/l' });
});

test('a list over _all_docs with keys gets a missing key as a row of its key alone', async () => {
  // couch_mrview_show:send_list_row hands the list only a row's id, key, value and doc.
  await c.put('/lst/_design/rows', { lists: { rows: 'function() { var r, out = []; while ((r = getRow())) out.push(r); return JSON.stringify(out); }' } });
  const r = await c.post('/lst/_design/rows/_list/rows/_all_docs', { keys: ['d01', 'no-such-doc'] });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.length, 2);
  assert.equal(r.body[0].id, 'd01');
  assert.deepEqual(r.body[1], { key: 'no-such-doc' });
});

test('a list that throws loses what it sent after its last getRow(), as render.js sends chunks only at getRow()', async () => {
  await c.put('/lst/_design/lost', {
    views: { some: { map: 'function(doc) { if (typeof doc.n === "number" && doc.n < 5) emit(doc.n, null); }' } },
    lists: { lost: 'function() { start({headers: {"Content-Type": "text/plain"}}); getRow(); send("kept;"); getRow(); send("lost;"); throw new Error("boom"); }' },
  });
  const r = await c.get('/lst/_design/lost/_list/lost/some');
  assert.equal(r.status, 200);
  assert.match(r.text, /^kept;\n\{"code":500,"error":"render_error","reason":".*boom.*"\}\n$/);
});
