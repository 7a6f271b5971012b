/** `_show` over real HTTP: strings and response objects, provides() negotiation, missing docs, errors. */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

before(async () => {
  assert.equal((await c.put('/shw')).status, 201);
  assert.equal((await c.put('/shw/hello', { title: 'Hello', n: 3 })).status, 201);
  assert.equal((await c.put('/shw/a%2Fb', { title: 'slashed' })).status, 201);
  const ddoc = await c.put('/shw/_design/s', {
    lib: { fmt: 'exports.title = function(doc) { return "<h1>" + doc.title + "</h1>"; };' },
    shows: {
      plain: 'function(doc, req) { return doc ? "Hi " + doc.title : "no doc"; }',
      object: 'function(doc, req) { return {code: 202, headers: {"X-Answer": "42", "Content-Type": "text/plain"}, body: "id=" + req.id + " q=" + req.query.q}; }',
      json: 'function(doc) { return {json: {title: doc.title, revs: doc._revisions.start}}; }',
      base64: 'function() { return {base64: "aGVsbG8=", headers: {"Content-Type": "text/plain"}}; }',
      lib: 'function(doc) { return require("lib/fmt").title(doc); }',
      nego: 'function(doc, req) { provides("html", function() { return "<p>" + doc.title + "</p>"; }); provides("json", function() { return toJSON({t: doc.title}); }); registerType("foo", "application/x-foo"); provides("foo", function() { return "FOO"; }); }',
      req: 'function(doc, req) { return {json: {method: req.method, path: req.path, requested_path: req.requested_path, id: req.id, body: req.body, form: req.form, query: req.query, uuid: typeof req.uuid, raw_path: req.raw_path, peer: req.peer, secObj: req.secObj, userCtx: req.userCtx, info: req.info.db_name, cookie: req.cookie, header: req.headers["X-Custom"]}}; }',
      notfound: 'function() { throw(["error", "not_found", "nothing here"]); }',
      forbidden: 'function() { throw({error: "forbidden", reason: "go away"}); }',
      noreason: 'function() { throw({error: "forbidden", reason: ""}); }',
      extra: 'function() { return {body: "x", foo: 1}; }',
      arrayheaders: 'function() { return {body: "x", headers: ["X-A", "1"]}; }',
      lastwins: 'function() { return {json: {a: 1}, body: "plain"}; }',
      jsonlast: 'function() { return {body: "plain", json: {a: 1}}; }',
      numberheader: 'function() { return {body: "x", headers: {"X-Count": 5}}; }',
      crash: 'function(doc) { return doc.missing.field; }',
      loop: 'function() { while (true) {} }',
      undef: 'function() { return 42; }',
      logs: 'function(doc, req) { log("show-log-marker " + req.query.m); log({an: "object"}); return "logged"; }',
      conflicts: 'function(doc) { return {json: {conflicts: doc._conflicts || null}}; }',
      refuse: 'function(doc) { if (!doc) throw(["error", "forbidden", "not without a doc"]); return "ok"; }',
      method: 'function(doc, req) { return {headers: {"X-Method": req.method}, body: ""}; }',
      nobody: 'function() { return {code: 202}; }',
      ties: 'function(doc) { provides("json", function() { return "J"; }); provides("html", function() { return "H"; }); }',
      typed: 'function(doc) { provides("html", function() { return "plain"; }); return {headers: {"Content-Type": "text/plain"}}; }',
    },
  });
  assert.equal(ddoc.status, 201, ddoc.text);
});

test('a string is the body, as text/html', async () => {
  const r = await c.get('/shw/_design/s/_show/plain/hello');
  assert.equal(r.status, 200);
  assert.equal(r.text, 'Hi Hello');
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.ok(r.headers['etag']);
  const again = await c.get('/shw/_design/s/_show/plain/hello', { headers: { 'If-None-Match': r.headers['etag'] as string } });
  assert.equal(again.status, 304);
  const none = await c.get('/shw/_design/s/_show/plain');
  assert.equal(none.text, 'no doc');
  const missing = await c.get('/shw/_design/s/_show/plain/nope');
  assert.equal(missing.text, 'no doc');
  const slashed = await c.get('/shw/_design/s/_show/plain/a/b');
  assert.equal(slashed.text, 'Hi slashed');
  assert.equal((await c.put('/shw/_local/cfg', { title: 'local' })).status, 201);
  assert.equal((await c.get('/shw/_design/s/_show/plain/_local/cfg')).text, 'Hi local');
});

test('response objects: code, headers, json, base64; require() from the design document', async () => {
  const r = await c.get('/shw/_design/s/_show/object/hello?q=x');
  assert.equal(r.status, 202);
  assert.equal(r.headers['x-answer'], '42');
  assert.equal(r.headers['content-type'], 'text/plain');
  assert.equal(r.text, 'id=hello q=x');
  const j = await c.get('/shw/_design/s/_show/json/hello');
  assert.equal(j.headers['content-type'], 'application/json');
  assert.deepEqual(j.body, { title: 'Hello', revs: 1 });
  const b = await c.get('/shw/_design/s/_show/base64');
  assert.equal(b.text, 'hello');
  const lib = await c.get('/shw/_design/s/_show/lib/hello');
  assert.equal(lib.text, '<h1>Hello</h1>');
});

test('provides() negotiates on Accept and format=', async () => {
  const html = await c.get('/shw/_design/s/_show/nego/hello', { headers: { Accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' } });
  assert.equal(html.text, '<p>Hello</p>');
  assert.equal(html.headers['content-type'], 'text/html; charset=utf-8');
  const json = await c.get('/shw/_design/s/_show/nego/hello', { headers: { Accept: 'application/json' } });
  assert.deepEqual(json.body, { t: 'Hello' });
  assert.equal(json.headers['content-type'], 'application/json');
  const fmt = await c.get('/shw/_design/s/_show/nego/hello?format=foo');
  assert.equal(fmt.text, 'FOO');
  assert.equal(fmt.headers['content-type'], 'application/x-foo');
  const none = await c.get('/shw/_design/s/_show/nego/hello', { headers: { Accept: 'image/png' } });
  assert.equal(none.status, 406);
  assert.equal(none.body.error, 'not_acceptable');
  // render.js runProvides: Accept reverses the provided list, so the refusal lists the last first.
  assert.equal(none.body.reason, 'Content-Type image/png not supported, try one of: application/x-foo, application/json, text/x-json, text/html; charset=utf-8');
  // A format names the key; its refusal names the Accept header and keeps provides() order.
  const xml = await c.get('/shw/_design/s/_show/nego/hello?format=xml', { headers: { Accept: 'text/plain' } });
  assert.equal(xml.status, 406);
  assert.equal(xml.body.reason, 'Content-Type text/plain not supported, try one of: text/html; charset=utf-8, application/json, text/x-json, application/x-foo');
  // A format never registered fails the function (mimesByKey has no such key): a render_error.
  const unknown = await c.get('/shw/_design/s/_show/nego/hello?format=nonesuch');
  assert.equal(unknown.status, 500);
  assert.equal(unknown.body.error, 'render_error');
  // An empty format is no format: Accept decides.
  const empty = await c.get('/shw/_design/s/_show/nego/hello?format=', { headers: { Accept: 'application/x-foo' } });
  assert.equal(empty.text, 'FOO');
});

test('the req object', async () => {
  const r = await c.post('/shw/_design/s/_show/req/hello?startkey=%22a%22&q=1', undefined, {
    raw: 'a=1&b=two', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Custom': 'yes', Cookie: 'theme=dark; other=1' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.method, 'POST');
  assert.deepEqual(r.body.path, ['shw', '_design', 's', '_show', 'req', 'hello']);
  assert.deepEqual(r.body.requested_path, r.body.path);
  assert.equal(r.body.id, 'hello');
  assert.equal(r.body.body, 'a=1&b=two');
  assert.deepEqual(r.body.form, { a: '1', b: 'two' });
  assert.deepEqual(r.body.query, { startkey: 'a', q: '1' });
  assert.equal(r.body.uuid, 'string');
  assert.equal(r.body.raw_path, '/shw/_design/s/_show/req/hello?startkey=%22a%22&q=1');
  assert.equal(r.body.peer, '127.0.0.1');
  assert.deepEqual(r.body.secObj, {});
  assert.deepEqual(r.body.userCtx, { db: 'shw', name: null, roles: ['_admin'] });
  assert.equal(r.body.info, 'shw');
  assert.deepEqual(r.body.cookie, { theme: 'dark', other: '1' });
  assert.equal(r.body.header, 'yes');
  const get = await c.get('/shw/_design/s/_show/req');
  assert.equal(get.body.body, 'undefined');
  assert.equal(get.body.id, null);
});

test('response objects are read as couch_httpd_external reads them: the last body member wins, others fail', async () => {
  const extra = await c.get('/shw/_design/s/_show/extra');
  assert.equal(extra.status, 500);
  assert.deepEqual(extra.body, { error: 'external_response_error', reason: 'Invalid data from external server: {<<"foo">>,1}' });
  const arrayHeaders = await c.get('/shw/_design/s/_show/arrayheaders');
  assert.equal(arrayHeaders.status, 500);
  assert.deepEqual(arrayHeaders.body, { error: 'external_response_error', reason: 'Invalid data from external server: {<<"headers">>,[<<"X-A">>,<<"1">>]}' });
  const body = await c.get('/shw/_design/s/_show/lastwins');
  assert.equal(body.text, 'plain');
  assert.equal(body.headers['content-type'], 'text/html; charset=utf-8');
  const json = await c.get('/shw/_design/s/_show/jsonlast');
  assert.deepEqual(json.body, { a: 1 });
  assert.equal(json.headers['content-type'], 'application/json');
  // A header value that is no string fails binary_to_list: badarg, CouchDB's generic 500.
  const numberHeader = await c.get('/shw/_design/s/_show/numberheader');
  assert.equal(numberHeader.status, 500);
  assert.deepEqual(numberHeader.body, { error: 'unknown_error', reason: 'badarg' });
});

test('errors: thrown CouchDB errors, crashes, timeouts, missing functions', async () => {
  const nf = await c.get('/shw/_design/s/_show/notfound');
  assert.equal(nf.status, 404);
  assert.deepEqual(nf.body, { error: 'not_found', reason: 'nothing here' });
  const fb = await c.get('/shw/_design/s/_show/forbidden');
  assert.equal(fb.status, 403);
  assert.deepEqual(fb.body, { error: 'forbidden', reason: 'go away' });
  // render.js renderError keeps an error's id only when both members are true: an empty reason is a render_error.
  const noReason = await c.get('/shw/_design/s/_show/noreason');
  assert.equal(noReason.status, 500);
  assert.equal(noReason.body.error, 'render_error');
  const crash = await c.get('/shw/_design/s/_show/crash/hello');
  assert.equal(crash.status, 500);
  assert.equal(crash.body.error, 'render_error');
  // a crash on a missing document is that document not being found (CouchDB)
  const crashMissing = await c.get('/shw/_design/s/_show/crash/nope');
  assert.equal(crashMissing.status, 404);
  const undef = await c.get('/shw/_design/s/_show/undef');
  assert.equal(undef.status, 500);
  assert.equal(undef.body.error, 'render_error');
  const noFn = await c.get('/shw/_design/s/_show/nope');
  assert.equal(noFn.status, 404);
  assert.equal(noFn.body.error, 'not_found');
  const noDdoc = await c.get('/shw/_design/nope/_show/plain');
  assert.equal(noDdoc.status, 404);
  // the server stays usable after all that
  assert.equal((await c.get('/shw/_design/s/_show/plain/hello')).text, 'Hi Hello');
});

test('a runaway show times out with os_process_error', async () => {
  await c.put('/_config/couchdb/os_process_timeout', '300');
  try {
    const r = await c.get('/shw/_design/s/_show/loop');
    assert.equal(r.status, 500);
    assert.equal(r.body.error, 'os_process_error');
  } finally {
    await c.put('/_config/couchdb/os_process_timeout', '5000');
  }
  assert.equal((await c.get('/shw/_design/s/_show/plain/hello')).text, 'Hi Hello');
});

test('the document comes with its _conflicts', async () => {
  const first = await c.put('/shw/torn', { side: 'a' });
  assert.equal(first.status, 201);
  // all_or_nothing writes the edit beside the existing revision: a conflict
  const bulk = await c.post('/shw/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'torn', side: 'b' }] });
  assert.equal(bulk.status, 201, bulk.text);
  const r = await c.get('/shw/_design/s/_show/conflicts/torn');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.conflicts.length, 1);
  const plain = await c.get('/shw/_design/s/_show/conflicts/hello');
  assert.equal(plain.body.conflicts, null);
});

test('a show path without a function name is show_error', async () => {
  const r = await c.get('/shw/_design/s/_show/');
  assert.equal(r.status, 404);
  assert.deepEqual(r.body, { error: 'show_error', reason: 'Invalid path.' });
});

test('log() writes to the server log', async () => {
  const r = await c.get('/shw/_design/s/_show/logs?m=7731');
  assert.equal(r.text, 'logged');
  const log = await c.get('/_log?bytes=5000');
  // couch_os_process:readjson writes a query server's log message after "OS Process <port> Log :: ".
  assert.match(log.text, /\[info\] \[<0\.\d+\.0>\] OS Process #Port<0\.\d+> Log :: show-log-marker 7731\n/);
  assert.match(log.text, /OS Process #Port<0\.\d+> Log :: \{"an":"object"\}\n/);
});

test('an unknown _name under a design document: 404 missing handler once the document is found', async () => {
  for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
    const r = await c.request(method, '/shw/_design/s/_nothing/x');
    assert.equal(r.status, 404, method);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'missing handler: _nothing' }, method);
  }
  // No design document: the document's own 404.
  const none = await c.get('/shw/_design/none/_nothing');
  assert.deepEqual(none.body, { error: 'not_found', reason: 'missing' });
  const nodb = await c.get('/shw-no-db/_design/s/_nothing');
  assert.deepEqual(nodb.body, { error: 'not_found', reason: 'no_db_file' });
});

test('as CouchDB 1.6: any failure on a missing document is that document not found; HEAD runs as GET; If-None-Match may list several ETags', async () => {
  const refused = await c.get('/shw/_design/s/_show/refuse/nothing-here');
  assert.equal(refused.status, 404);
  assert.deepEqual(refused.body, { error: 'not_found', reason: 'document not found' });
  // Without a document id the function's own error stands.
  assert.equal((await c.get('/shw/_design/s/_show/refuse')).status, 403);
  assert.equal((await c.head('/shw/_design/s/_show/method/hello')).headers['x-method'], 'GET');
  const r = await c.get('/shw/_design/s/_show/plain/hello');
  const several = await c.get('/shw/_design/s/_show/plain/hello', { headers: { 'If-None-Match': `"other", ${r.headers['etag'] as string}` } });
  assert.equal(several.status, 304);
  // Behind a proxy on this machine, the peer is the last X-Forwarded-For hop (mochiweb's get(peer)).
  const proxied = await c.get('/shw/_design/s/_show/req/hello', { headers: { 'X-Forwarded-For': '203.0.113.9, 192.0.2.7' } });
  assert.equal(proxied.body.peer, '192.0.2.7');
  assert.equal((await c.get('/shw/_design/s/_show/req/hello')).body.peer, '127.0.0.1');
  // key, startkey and endkey reach req.query parsed (not start_key): other text is a 400.
  const keyed = await c.get('/shw/_design/s/_show/req/hello?key=%5B1%5D&start_key=%5B2%5D');
  assert.deepEqual(keyed.body.query, { key: [1], start_key: '[2]' });
  assert.deepEqual((await c.get('/shw/_design/s/_show/req/hello?key=notjson')).body, { error: 'bad_request', reason: 'invalid_json' });
  // provides() chooses as CouchDB's mimeparse does (its entries sorted as strings, the last
  // wins): with */*, json's second type; a Content-Type the show set stays.
  const tie = await c.get('/shw/_design/s/_show/ties/hello', { headers: { Accept: '*/*' } });
  assert.equal(tie.text, 'J');
  assert.equal(tie.headers['content-type'], 'text/x-json');
  assert.equal((await c.get('/shw/_design/s/_show/ties/hello', { headers: { Accept: 'text/html' } })).text, 'H');
  assert.equal((await c.get('/shw/_design/s/_show/typed/hello', { headers: { Accept: 'text/html' } })).headers['content-type'], 'text/plain');
  // A response with no body at all is couch_httpd_external's default, JSON.
  const nobody = await c.get('/shw/_design/s/_show/nobody');
  assert.equal(nobody.status, 202);
  assert.equal(nobody.headers['content-type'], 'application/json');
});
