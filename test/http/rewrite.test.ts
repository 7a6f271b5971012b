/** `_rewrite` over real HTTP: rules with variables, catch-alls and typed query values, and rewrite functions, routed through the server. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/rw')).status, 201);
  const docs = Array.from({ length: 10 }, (_, i) => ({ _id: `d${i}`, n: i, tag: i % 2 ? 'odd' : 'even' }));
  assert.equal((await c.post('/rw/_bulk_docs', { docs })).status, 201);
  const ddoc = await c.put('/rw/_design/app', {
    views: { by_tag: { map: 'function(doc) { if (doc.tag) emit([doc.tag, doc.n], null); }' } },
    shows: { page: 'function(doc, req) { return (doc ? doc._id : "none") + " q=" + JSON.stringify(req.query) + " path=" + req.path.join("/") + " requested=" + req.requested_path.join("/"); }' },
    rewrites: [
      { from: '', to: 'index.html' },
      { from: '/doc/:id', to: '../../:id', method: 'GET' },
      { from: '/put/:id', to: '../../:id', method: 'PUT' },
      { from: '/page/:id', to: '_show/page/:id', query: { extra: 'yes' } },
      { from: '/tag/:tag', to: '_view/by_tag', query: { startkey: [':tag'], endkey: [':tag', {}], limit: 3, include_docs: false } },
      { from: '/num/:n', to: '_view/by_tag', query: { key: ['even', ':n'] }, formats: { n: 'int' } },
      { from: '/byid/:id', to: '../../_all_docs', query: { key: ':id', include_docs: true } },
      { from: '/range', to: '../../_all_docs' },
      { from: '/db', to: '../..' },
      { from: '/files/*', to: '*' },
      { from: '/loop', to: '_rewrite/loop' },
      { from: '/nothing', to: '_show/page' },
    ],
    _attachments: { 'index.html': { content_type: 'text/html', data: Buffer.from('<h1>home</h1>').toString('base64') } },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
});

test('rules route to documents, attachments, shows and views', async () => {
  const home = await c.get('/rw/_design/app/_rewrite');
  assert.equal(home.status, 200, home.text);
  assert.equal(home.text, '<h1>home</h1>');
  const doc = await c.get('/rw/_design/app/_rewrite/doc/d3');
  assert.equal(doc.body._id, 'd3');
  const files = await c.get('/rw/_design/app/_rewrite/files/index.html');
  assert.equal(files.text, '<h1>home</h1>');
  const page = await c.get('/rw/_design/app/_rewrite/page/d4?foo=bar');
  assert.equal(page.status, 200);
  assert.match(page.text, /^d4 q=/);
  const q = JSON.parse(/q=(\{.*\}) path/.exec(page.text)![1]!);
  assert.deepEqual(q, { id: 'd4', foo: 'bar', extra: 'yes' });
  assert.match(page.text, /path=rw\/_design\/app\/_show\/page\/d4 requested=rw\/_design\/app\/_rewrite\/page\/d4$/);
  const db = await c.get('/rw/_design/app/_rewrite/db');
  assert.equal(db.body.db_name, 'rw');
});

test('query values: variables inside JSON arrays and typed formats', async () => {
  const tag = await c.get('/rw/_design/app/_rewrite/tag/odd');
  assert.equal(tag.status, 200, tag.text);
  assert.deepEqual(tag.body.rows.map((r: { id: string }) => r.id), ['d1', 'd3', 'd5']);
  const num = await c.get('/rw/_design/app/_rewrite/num/4');
  assert.deepEqual(num.body.rows.map((r: { id: string }) => r.id), ['d4']);
  // a bound string in a JSON parameter is JSON-encoded: key=":id" becomes key="d7"
  const byId = await c.get('/rw/_design/app/_rewrite/byid/d7');
  assert.equal(byId.status, 200, byId.text);
  assert.deepEqual(byId.body.rows.map((r: { id: string }) => r.id), ['d7']);
  assert.equal(byId.body.rows[0].doc.n, 7);
  // JSON parameters of the request pass through as JSON
  const range = await c.get(`/rw/_design/app/_rewrite/range?startkey=${encodeURIComponent('"d2"')}&endkey=${encodeURIComponent('"d4"')}`);
  assert.deepEqual(range.body.rows.map((r: { id: string }) => r.id), ['d2', 'd3', 'd4']);
});

test('methods select rules; writes pass through', async () => {
  const put = await c.put('/rw/_design/app/_rewrite/put/newdoc', { via: 'rewrite' });
  assert.equal(put.status, 201, put.text);
  assert.equal((await c.get('/rw/newdoc')).body.via, 'rewrite');
  const post = await c.post('/rw/_design/app/_rewrite/doc/d1', {});
  assert.equal(post.status, 404);
  // HEAD is GET to CouchDB: it takes the GET rules.
  const head = await c.head('/rw/_design/app/_rewrite/doc/d1');
  assert.equal(head.status, 200);
  assert.ok(head.headers['etag']);
});

test('secure_rewrites, loops and unmatched paths', async () => {
  assert.equal((await c.put('/rw/_design/up', { rewrites: [{ from: '/up', to: '../../../_uuids' }] })).status, 201);
  const up = await c.get('/rw/_design/up/_rewrite/up');
  assert.equal(up.status, 500);
  assert.deepEqual(up.body, { error: 'insecure_rewrite_rule', reason: 'too many ../.. segments' });
  const loop = await c.get('/rw/_design/app/_rewrite/loop');
  assert.equal(loop.status, 400);
  assert.equal(loop.body.reason, 'Exceeded rewrite recursion limit');
  const none = await c.get('/rw/_design/app/_rewrite/no/such/rule');
  assert.equal(none.status, 404);
  await c.put('/_config/httpd/secure_rewrites', 'false');
  try {
    const open = await c.get('/rw/_design/up/_rewrite/up');
    assert.equal(open.status, 200, open.text);
    assert.equal(open.body.uuids.length, 1);
  } finally {
    await c.put('/_config/httpd/secure_rewrites', 'true');
  }
});

test('rewrites given as a string are a function (CouchDB 2); one that is not compiles to a 400', async () => {
  assert.equal((await c.put('/rw/_design/stringy', { rewrites: '[{"from":"foo","to":"bar"}]' })).status, 201);
  const r = await c.get('/rw/_design/stringy/_rewrite/foo');
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'compilation_error');
});

test('a rewrite function routes with its own query, method, headers and body, or answers itself', async () => {
  const fn = `function(req) {
    var what = req.path[req.path.length - 1];
    if (what === 'teapot') return {code: 418, headers: {'X-Kind': 'tea'}, body: 'short and stout'};
    if (what === 'doc') return {path: '../../' + req.query.id};
    if (what === 'show') return {path: '_show/page/d1', query: {from: 'fn', n: 2}};
    if (what === 'post') return {path: '../../_bulk_docs', method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({docs: [{_id: 'from-fn'}]})};
    return null;
  }`;
  assert.equal((await c.put('/rw/_design/fn', { rewrites: fn, shows: { page: 'function(doc, req) { return doc._id + " " + JSON.stringify(req.query); }' } })).status, 201);
  const tea = await c.get('/rw/_design/fn/_rewrite/teapot');
  assert.equal(tea.status, 418);
  assert.equal(tea.headers['x-kind'], 'tea');
  assert.equal(tea.text, 'short and stout');
  const doc = await c.get('/rw/_design/fn/_rewrite/doc?id=d3');
  assert.equal(doc.status, 200, doc.text);
  assert.equal(doc.body._id, 'd3');
  const shown = await c.get('/rw/_design/fn/_rewrite/show?ignored=1');
  assert.equal(shown.text, 'd1 {"from":"fn","n":"2"}');
  const posted = await c.get('/rw/_design/fn/_rewrite/post');
  assert.equal(posted.status, 201, posted.text);
  assert.equal((await c.get('/rw/from-fn')).status, 200);
  const none = await c.get('/rw/_design/fn/_rewrite/nothing');
  assert.equal(none.status, 500, none.text);
  assert.deepEqual(none.body, { error: 'rewrite_error', reason: 'rewrite function could not produce mapping' });
});

test('rewritten requests carry x-couchdb-requested-path: the first URL the client asked for', async () => {
  const ddoc = await c.put('/rw/_design/requested', {
    rewrites: [
      { from: 'show', to: '_show/origin/d0' },
      { from: 'show_rewritten', to: '_rewrite/show' },
    ],
    shows: { origin: 'function(doc, req) { return req.headers["x-couchdb-requested-path"]; }' },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  const direct = '/rw/_design/requested/_rewrite/show?a=1&b=%22x%22';
  assert.equal((await c.get(direct)).text, direct);
  const chained = '/rw/_design/requested/_rewrite/show_rewritten';
  assert.equal((await c.get(chained)).text, chained);
  // one the client sent itself is kept
  const sent = await c.get(direct, { headers: { 'x-couchdb-requested-path': '/elsewhere' } });
  assert.equal(sent.text, '/elsewhere');
  // requests not rewritten get none
  assert.equal((await c.get('/rw/_design/requested/_show/origin/d0')).text, '');
});

test('bind_path as CouchDB 1.6: a trailing * needs a segment and gives a query its first one, a * inside binds one, an unbound :var is "undefined"', async () => {
  const ddoc = await c.put('/rw/_design/star', {
    shows: { echo: 'function(doc, req) { return {json: {id: req.id, query: req.query}}; }' },
    rewrites: [
      { from: 'all/*', to: '_show/echo/*', query: { first: '*' } },
      { from: 'mid/*/end', to: '_show/echo/fixed', query: { seg: '*' } },
      { from: 'unbound', to: '_show/echo/:nope' },
      { from: 'all', to: '_show/echo/bare' },
    ],
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  const all = await c.get('/rw/_design/star/_rewrite/all/a/b');
  assert.equal(all.body.id, 'a/b');
  assert.equal(all.body.query.first, 'a');
  assert.equal(all.body.query['*'], undefined);
  assert.equal((await c.get('/rw/_design/star/_rewrite/all')).body.id, 'bare');
  const mid = await c.get('/rw/_design/star/_rewrite/mid/x/end');
  assert.equal(mid.body.id, 'fixed');
  assert.equal(mid.body.query.seg, 'x');
  assert.equal((await c.get('/rw/_design/star/_rewrite/unbound')).body.id, 'undefined');
});

test('a rule\'s method is matched as written, as bind_method compares it: "get" is no GET, "*" is any', async () => {
  const ddoc = await c.put('/rw/_design/methods', {
    shows: { echo: 'function(doc, req) { return "shown " + req.query.via; }' },
    rewrites: [
      { from: 'm', to: '_show/echo', method: 'get', query: { via: 'lower' } },
      { from: 'm', to: '_show/echo', method: '*', query: { via: 'star' } },
    ],
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  assert.equal((await c.get('/rw/_design/methods/_rewrite/m')).text, 'shown star');
});

test('a rule without a `to` fails every request to the rules, matching or not: 500 error/invalid_rewrite_target, as make_rule throws it', async () => {
  const ddoc = await c.put('/rw/_design/noto', {
    rewrites: ['not a rule', { from: 'fine', to: '../../d1' }, { from: 'broken' }],
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  for (const path of ['fine', 'broken', 'elsewhere']) {
    const r = await c.get(`/rw/_design/noto/_rewrite/${path}`);
    assert.equal(r.status, 500, `${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'error', reason: 'invalid_rewrite_target' });
  }
});

test('secure_rewrites counts the `..` of every rule\'s from and to, as path_to_list does: a third anywhere fails any request to the rules', async () => {
  const ddoc = await c.put('/rw/_design/dots', {
    rewrites: [
      { from: 'fine', to: '../../d1' },
      { from: 'inside', to: '_show/../../../d2' },
      { from: 'x/../../..', to: '../../d3' },
    ],
  });
  assert.equal(ddoc.status, 201, ddoc.text);
  for (const path of ['fine', 'inside', 'other']) {
    const r = await c.get(`/rw/_design/dots/_rewrite/${path}`);
    assert.equal(r.status, 500, `${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'insecure_rewrite_rule', reason: 'too many ../.. segments' });
  }
  assert.equal((await c.put('/rw/_design/dots2', { rewrites: [{ from: 'fine', to: '../../d1' }, { from: 'x/../../..', to: '../../d3' }] })).status, 201);
  assert.equal((await c.get('/rw/_design/dots2/_rewrite/fine')).status, 500);
  await c.put('/_config/httpd/secure_rewrites', 'false');
  try {
    assert.equal((await c.get('/rw/_design/dots/_rewrite/fine')).body._id, 'd1');
    assert.equal((await c.get('/rw/_design/dots/_rewrite/inside')).body._id, 'd2');
  } finally {
    await c.put('/_config/httpd/secure_rewrites', 'true');
  }
});

test('a JSON parameter of the request that is no JSON is a 400 invalid_json, matched or not, as decode_query_value decodes them first (CouchDB 1.6 crashes; not passed on as a string)', async () => {
  for (const path of ['range?startkey=d2', 'no/such/rule?key=%7Bnope', 'range?keys=%5B1']) {
    const r = await c.get(`/rw/_design/app/_rewrite/${path}`);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' });
  }
  // other parameters are strings, whatever they hold
  const page = await c.get('/rw/_design/app/_rewrite/page/d4?foo=%7Bnope');
  assert.equal(page.status, 200, page.text);
});
