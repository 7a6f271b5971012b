/**
 * Behaviours of CouchDB 1.6's own browser test suite (share/www/script/test/*.js) for the core
 * document API that Settee once answered differently, grouped by the suite file they come from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

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

/** Splits a multipart body the naive way CouchDB's suite does: "name: value" headers, as sent. */
function naiveParts(contentType: string, text: string): { headers: Record<string, string>; body: string }[] {
  const m = /boundary="?([^";]+)"?/.exec(contentType);
  assert.ok(m, `no boundary in ${contentType}`);
  const boundary = m[1]!;
  const start = text.indexOf(`--${boundary}\r\n`) + boundary.length + 4;
  const inner = text.slice(start, text.indexOf(`\r\n--${boundary}--`));
  return inner.split(`\r\n--${boundary}`).map((section) => {
    const end = section.indexOf('\r\n\r\n');
    const headers: Record<string, string> = {};
    for (const line of section.slice(0, end).split('\r\n')) {
      const [name, value] = line.split(': ');
      headers[name!] = value!;
    }
    return { headers, body: section.slice(end + 4) };
  });
}

test('attachments_multipart: new content gets the new revpos, and multipart replies read as CouchDB writes them', async () => {
  assert.equal((await c.put('/multipart')).status, 201);
  const related = { 'Content-Type': 'multipart/related;boundary="abc123"' };
  const first = await c.put('/multipart/doc', undefined, {
    headers: related,
    raw: '--abc123\r\ncontent-type: application/json\r\n\r\n'
      + JSON.stringify({ _attachments: { 'foo.txt': { follows: true, content_type: 'application/octet-stream', length: 3 }, 'bar.txt': { follows: true, content_type: 'application/octet-stream', length: 3 } } })
      + '\r\n--abc123\r\n\r\nfoo\r\n--abc123\r\n\r\nbar\r\n--abc123--',
  });
  assert.equal(first.status, 201);
  const firstRev = first.body.rev as string;
  // The client sends back bar.txt's old stub fields (revpos 1) with new content: it is revpos 2.
  const doc = (await c.get('/multipart/doc')).body;
  delete doc._attachments['bar.txt'].stub;
  // As CouchDB's test: the old digest goes too (new content with it is content_md5_mismatch).
  delete doc._attachments['bar.txt'].digest;
  doc._attachments['bar.txt'].follows = true;
  doc._attachments['bar.txt'].length = 4;
  const second = await c.put('/multipart/doc', undefined, {
    headers: related,
    raw: `--abc123\r\ncontent-type: application/json\r\n\r\n${JSON.stringify(doc)}\r\n--abc123\r\n\r\nbar2\r\n--abc123--`,
  });
  assert.equal(second.status, 201);
  const stubs = (await c.get('/multipart/doc')).body._attachments;
  assert.equal(stubs['foo.txt'].revpos, 1);
  assert.equal(stubs['bar.txt'].revpos, 2);

  // Only what changed since the first revision follows; the JSON part's header is lower case.
  const since = await c.get(`/multipart/doc?atts_since=["${firstRev}"]`, { headers: { Accept: 'multipart/related, */*' } });
  const parts = naiveParts(String(since.headers['content-type']), since.text);
  assert.equal(parts.length, 2);
  assert.equal(parts[0]!.headers['content-type'], 'application/json');
  const json0 = JSON.parse(parts[0]!.body);
  assert.equal(json0._attachments['foo.txt'].stub, true);
  assert.equal(json0._attachments['bar.txt'].follows, true);
  assert.equal(parts[1]!.body, 'bar2');

  // open_revs as multipart/mixed carries every attachment even without attachments=true.
  const mixed = await c.get(`/multipart/doc?open_revs=["${second.body.rev}"]`, { headers: { Accept: 'multipart/mixed' } });
  assert.equal(mixed.status, 200);
  const outer = naiveParts(String(mixed.headers['content-type']), mixed.text);
  assert.equal(outer.length, 1);
  assert.ok(outer[0]!.headers['Content-Type']!.startsWith('multipart/related;'));
  const inner = naiveParts(outer[0]!.headers['Content-Type']!, outer[0]!.body);
  assert.equal(inner.length, 3);
  assert.equal(inner[0]!.headers['content-type'], 'application/json');
  assert.deepEqual(inner.slice(1).map((p) => p.body).sort(), ['bar2', 'foo']);
});

test('copy_doc: a copy keeps the revpos of the attachments it copies', async () => {
  assert.equal((await c.put('/copyrevpos')).status, 201);
  const created = await c.put('/copyrevpos/src', { _attachments: { 'a.txt': { content_type: 'text/plain', data: 'aGVsbG8=' } } });
  await c.put('/copyrevpos/src', { _rev: created.body.rev, _attachments: { 'a.txt': { stub: true } }, edited: true });
  assert.equal((await c.copy('/copyrevpos/src', { headers: { Destination: 'dst' } })).status, 201);
  assert.equal((await c.get('/copyrevpos/dst')).body._attachments['a.txt'].revpos, 1);
});

test('etags: _all_docs carries an ETag that moves with the database and answers If-None-Match with 304', async () => {
  assert.equal((await c.put('/alletag')).status, 201);
  await c.put('/alletag/a', { v: 1 });
  const first = await c.get('/alletag/_all_docs');
  const etag = String(first.headers['etag']);
  assert.match(etag, /^".+"$/);
  assert.equal((await c.get('/alletag/_all_docs', { headers: { 'If-None-Match': etag } })).status, 304);
  await c.put('/alletag/b', { v: 1 });
  const after = await c.get('/alletag/_all_docs', { headers: { 'If-None-Match': etag } });
  assert.equal(after.status, 200);
  assert.equal(after.body.rows.length, 2);
  assert.notEqual(after.headers['etag'], etag);
});

test('method_override: a POST with X-HTTP-Method-Override acts as the verb it names; other verbs ignore it', async () => {
  assert.equal((await c.put('/override')).status, 201);
  const put = await c.post('/override/fnord', { bob: 'connie' }, { headers: { 'X-HTTP-Method-Override': 'PUT' } });
  assert.equal(put.status, 201);
  const doc = (await c.get('/override/fnord')).body;
  assert.equal(doc.bob, 'connie');
  const del = await c.post(`/override/fnord?rev=${doc._rev}`, undefined, { headers: { 'X-HTTP-Method-Override': 'DELETE' } });
  assert.equal(del.status, 200);
  assert.equal((await c.get('/override/fnord')).status, 404);
  const body = JSON.stringify({ bob: 1 });
  const ignored = await c.request('GET', '/override/fnord2', {
    raw: body, headers: { 'X-HTTP-Method-Override': 'PUT', 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
  });
  assert.equal(ignored.status, 404);
});

test('form_submit: POST to a document takes only multipart/form-data, from a page on the same host', async () => {
  assert.equal((await c.put('/forms')).status, 201);
  const notForm = await c.post('/forms/baz', {});
  assert.equal(notForm.status, 415);
  assert.equal(notForm.body.error, 'bad_content_type');

  const rev = (await c.put('/forms/doc', { a: 1 })).body.rev as string;
  const boundary = 'formboundary42';
  const form = [
    `--${boundary}\r\nContent-Disposition: form-data; name="_rev"\r\n\r\n${rev}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="_attachments"; filename="hello.txt"\r\nContent-Type: text/plain\r\n\r\nhello form\r\n`,
    `--${boundary}--\r\n`,
  ].join('');
  const headers = { 'Content-Type': `multipart/form-data; boundary=${boundary}` };
  assert.equal((await c.request('POST', '/forms/doc', { raw: form, headers })).status, 400, 'no Referer');
  const posted = await c.request('POST', '/forms/doc', { raw: form, headers: { ...headers, Referer: `${server.url}_utils/` } });
  assert.equal(posted.status, 201);
  assert.equal(posted.body.id, 'doc');
  assert.equal(posted.headers['etag'], `"${posted.body.rev}"`);
  const doc = (await c.get('/forms/doc')).body;
  assert.equal(doc.a, 1);
  assert.equal(doc._attachments['hello.txt'].content_type, 'text/plain');
  assert.equal((await c.get('/forms/doc/hello.txt')).text, 'hello form');
});

test('form_submit: a _rev naming a deleted revision edits it, and the document stays deleted (couch_httpd_db:db_doc_req)', async () => {
  assert.equal((await c.put('/formsdeleted')).status, 201);
  const first = (await c.put('/formsdeleted/doc', { a: 1 })).body.rev as string;
  const deleted = (await c.del(`/formsdeleted/doc?rev=${first}`)).body.rev as string;
  const boundary = 'formboundary43';
  const form = [
    `--${boundary}\r\nContent-Disposition: form-data; name="_rev"\r\n\r\n${deleted}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="_attachments"; filename="late.txt"\r\nContent-Type: text/plain\r\n\r\nlate\r\n`,
    `--${boundary}--\r\n`,
  ].join('');
  const headers = { 'Content-Type': `multipart/form-data; boundary=${boundary}`, Referer: `${server.url}_utils/` };
  const posted = await c.request('POST', '/formsdeleted/doc', { raw: form, headers });
  assert.equal(posted.status, 201, posted.text);
  assert.equal((await c.get('/formsdeleted/doc')).status, 404);
  const stored = (await c.get(`/formsdeleted/doc?rev=${posted.body.rev}`)).body;
  assert.equal(stored._deleted, true);
  assert.equal(stored._attachments['late.txt'].length, 4);
});

test('purge: every purge request moves purge_seq and update_seq, even one that matches nothing', async () => {
  assert.equal((await c.put('/purgenoop')).status, 201);
  const first = await c.put('/purgenoop/a', { v: 1 });
  await c.put('/purgenoop/a', { _rev: first.body.rev, v: 2 });
  const before = (await c.get('/purgenoop')).body;
  // An inner revision and a missing document: nothing to remove.
  const r = await c.post('/purgenoop/_purge', { a: [first.body.rev], nothere: ['1-abc'] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { purge_seq: before.purge_seq + 1, purged: {} });
  const after = (await c.get('/purgenoop')).body;
  assert.equal(after.purge_seq, before.purge_seq + 1);
  assert.equal(after.update_seq, before.update_seq + 1);
  assert.equal(after.doc_count, 1);
  assert.equal((await c.get('/purgenoop/a')).body.v, 2);
});

test('attachments: atts_since leaves older attachments as stubs even with attachments=true', async () => {
  assert.equal((await c.put('/attssince')).status, 201);
  const first = await c.put('/attssince/doc', { _attachments: { 'old.txt': { content_type: 'application/octet-stream', data: 'b2xk' } } });
  const second = await c.put('/attssince/doc', {
    _rev: first.body.rev,
    _attachments: { 'old.txt': { stub: true }, 'new.txt': { content_type: 'application/octet-stream', data: 'bmV3' } },
  });
  const inline = (await c.get(`/attssince/doc?attachments=true&atts_since=["${first.body.rev}"]`)).body._attachments;
  assert.equal(inline['old.txt'].stub, true);
  assert.equal(inline['new.txt'].data, 'bmV3');
  // What CouchDB's replicator asks for: open_revs, attachments=true and atts_since, as multipart/mixed.
  const mixed = await c.get(`/attssince/doc?open_revs=["${second.body.rev}"]&attachments=true&atts_since=["${first.body.rev}"]`, { headers: { Accept: 'multipart/mixed' } });
  const outer = naiveParts(String(mixed.headers['content-type']), mixed.text);
  const inner = naiveParts(outer[0]!.headers['Content-Type']!, outer[0]!.body);
  assert.equal(inner.length, 2);
  const json = JSON.parse(inner[0]!.body);
  assert.equal(json._attachments['old.txt'].stub, true);
  assert.equal(json._attachments['new.txt'].follows, true);
  assert.equal(inner[1]!.body, 'new');
});

test('changes: an eventsource feed is sent uncached, as text/event-stream', async () => {
  assert.equal((await c.put('/evsource')).status, 201);
  await c.put('/evsource/a', {});
  const r = await c.get('/evsource/_changes?feed=eventsource&timeout=10');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/event-stream');
  assert.equal(r.headers['cache-control'], 'no-cache');
  assert.match(r.text, /^data: \{"seq":1,"id":"a"/);
});

test('changes: a normal feed carries the database-state ETag and answers If-None-Match with 304', async () => {
  assert.equal((await c.put('/changesetag')).status, 201);
  await c.put('/changesetag/a', {});
  const first = await c.get('/changesetag/_changes');
  const etag = String(first.headers['etag']);
  assert.match(etag, /^".+"$/);
  assert.equal((await c.get('/changesetag/_changes', { headers: { 'If-None-Match': etag } })).status, 304);
  await c.put('/changesetag/b', {});
  const after = await c.get('/changesetag/_changes', { headers: { 'If-None-Match': etag } });
  assert.equal(after.status, 200);
  assert.equal(after.body.results.length, 2);
});

test('basics: an empty _id counts as none, on POST and in _bulk_docs', async () => {
  assert.equal((await c.put('/emptyid')).status, 201);
  const posted = await c.post('/emptyid', { _id: '', v: 1 });
  assert.equal(posted.status, 201);
  assert.match(posted.body.id, /^[0-9a-f]{32}$/);
  const bulk = await c.post('/emptyid/_bulk_docs', { docs: [{ _id: '', v: 2 }] });
  assert.equal(bulk.status, 201);
  assert.match(bulk.body[0].id, /^[0-9a-f]{32}$/);
  assert.equal((await c.get('/emptyid')).body.doc_count, 2);
});

test('http: a 405 lists the allowed methods in CouchDB order', async () => {
  assert.equal((await c.put('/methods')).status, 201);
  const allDocs = await c.request('PUT', '/methods/_all_docs');
  assert.equal(allDocs.status, 405);
  // couch_mrview_http's wording, not couch_httpd_db's unreachable "GET,HEAD,POST".
  assert.equal(allDocs.body.reason, 'Only GET,POST,HEAD allowed');
  assert.equal(allDocs.headers['allow'], 'GET,POST,HEAD');
  const doc = await c.request('PATCH', '/methods/doc');
  assert.equal(doc.status, 405);
  assert.equal(doc.body.reason, 'Only DELETE,GET,HEAD,POST,PUT,COPY allowed');
  assert.equal(doc.headers['allow'], 'DELETE,GET,HEAD,POST,PUT,COPY');
  assert.equal((await c.request('POST', '/methods/doc/att.txt')).body.reason, 'Only DELETE,GET,HEAD,PUT allowed');
  // Each handler's own words: its order, often without HEAD, and the database's without PUT.
  const worded: [string, string, string][] = [
    ['PATCH', '/methods', 'DELETE,GET,HEAD,POST'],
    ['POST', '/methods/_security', 'PUT,GET'],
    ['DELETE', '/methods/_revs_limit', 'PUT,GET'],
    ['POST', '/_uuids', 'GET'],
    ['POST', '/_stats', 'GET'],
    ['PUT', '/_session', 'GET,HEAD,POST,DELETE'],
    ['PATCH', '/_config', 'GET,PUT,DELETE'],
    ['PATCH', '/_config/couchdb/uuid', 'GET,PUT,DELETE'],
    ['DELETE', '/_log', 'GET,POST'],
  ];
  for (const [method, path, allow] of worded) {
    const r = await c.request(method, path);
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.headers['allow'], allow, `${method} ${path}`);
    assert.equal(r.body.reason, `Only ${allow} allowed`);
  }
});

test('design handlers: _show runs for any method, _update for any but GET (render.js refuses it: CouchDB\'s 500 method_not_allowed), and _compact compacts the views', async () => {
  assert.equal((await c.put('/dmethods')).status, 201);
  assert.equal((await c.put('/dmethods/_design/d', {
    views: { v: { map: 'function (doc) { emit(doc._id, null); }' } },
    shows: { s: 'function (doc, req) { return req.method; }' },
    updates: { u: 'function (doc, req) { return [null, req.method]; }' },
  })).status, 201);
  for (const method of ['PUT', 'DELETE', 'PATCH']) {
    const shown = await c.request(method, '/dmethods/_design/d/_show/s');
    assert.equal(shown.status, 200, method);
    assert.equal(shown.text, method);
    const updated = await c.request(method, '/dmethods/_design/d/_update/u');
    assert.equal(updated.status, 200, method);
    assert.equal(updated.text, method);
  }
  const get = await c.get('/dmethods/_design/d/_update/u');
  assert.equal(get.status, 500);
  assert.equal(get.body.error, 'method_not_allowed');
  assert.equal((await c.request('GET', '/dmethods/_design/d/_view/v')).status, 200);
  const compact = await c.request('POST', '/dmethods/_design/d/_compact', { body: {} });
  assert.equal(compact.status, 202);
  assert.equal((await c.get('/dmethods/_design/d/_compact')).headers['allow'], 'POST');
  assert.equal((await c.request('POST', '/dmethods/_design/nope/_compact', { body: {} })).status, 404);
  assert.equal((await c.request('PATCH', '/dmethods/_design/d/_info')).headers['allow'], 'GET');
  // Methods no route lists still reach the catch-alls: an unknown handler is a 404.
  assert.equal((await c.request('OPTIONS', '/dmethods/_design/d/_nosuch')).body.reason, 'missing handler: _nosuch');
});

test('ids: /db/_design is the document `_design`, and `_design/` or `_local/` is no id', async () => {
  assert.equal((await c.put('/designids')).status, 201);
  assert.equal((await c.get('/designids/_design')).status, 404);
  const put = await c.put('/designids/_design', {});
  assert.equal(put.status, 400);
  assert.equal(put.body.reason, 'Only reserved document ids may start with underscore.');
  for (const id of ['_design/', '_local/']) {
    const posted = await c.post('/designids', { _id: id });
    assert.equal(posted.status, 400, id);
    assert.equal(posted.body.reason, `Illegal document id \`${id}\``);
  }
});

test('local docs: a bare _local path and _local attachments are bad requests, as CouchDB words them', async () => {
  assert.equal((await c.put('/localpaths')).status, 201);
  const bare = await c.get('/localpaths/_local');
  assert.equal(bare.status, 400);
  assert.equal(bare.body.reason, 'Invalid _local document id.');
  assert.equal((await c.put('/localpaths/_local/', {})).status, 400);
  assert.equal((await c.put('/localpaths/_local/x', { a: 1 })).status, 201);
  const att = await c.request('PUT', '/localpaths/_local/x/a.txt', { raw: 'hi', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(att.status, 400);
  assert.equal(att.body.reason, '_local documents do not accept attachments.');
  assert.equal((await c.get('/localpaths/_local/x')).body.a, 1);
});

test('open_revs with latest=true answers every leaf descending from the asked revision', async () => {
  assert.equal((await c.put('/latest')).status, 201);
  const first = (await c.put('/latest/doc', { v: 1 })).body.rev as string;
  const base = first.split('-')[1]!;
  const r = await c.post('/latest/_bulk_docs', {
    new_edits: false,
    docs: [
      { _id: 'doc', _rev: '2-bbb', _revisions: { start: 2, ids: ['bbb', base] }, v: 2 },
      { _id: 'doc', _rev: '2-aaa', _revisions: { start: 2, ids: ['aaa', base] }, v: 3 },
    ],
  });
  assert.equal(r.status, 201);
  const open = await c.get(`/latest/doc?open_revs=["${first}"]&latest=true`);
  assert.equal(open.status, 200);
  const revs = (open.body as { ok: { _rev: string } }[]).map((x) => x.ok._rev).sort();
  assert.deepEqual(revs, ['2-aaa', '2-bbb']);
  const plain = await c.get(`/latest/doc?open_revs=["${first}"]`);
  assert.deepEqual((plain.body as { ok: { _rev: string } }[]).map((x) => x.ok._rev), [first]);
});

test('open_revs: CouchDB reasons for bad lists, an empty list is a plain GET, found revisions come before missing ones', async () => {
  assert.equal((await c.put('/openrevs')).status, 201);
  const rev = (await c.put('/openrevs/d', { a: 1 })).body.rev as string;
  const json = { headers: { Accept: 'application/json' } };
  const ask = (value: string) => c.get(`/openrevs/d?open_revs=${encodeURIComponent(value)}`, json);
  assert.deepEqual((await ask('garbage')).body, { error: 'bad_request', reason: 'invalid_json' });
  assert.deepEqual((await ask('["bad"]')).body, { error: 'bad_request', reason: 'Invalid rev format' });
  assert.deepEqual((await ask('{"a":1}')).body, { error: 'bad_request', reason: 'Invalid list of revisions' });
  const empty = await ask('[]');
  assert.equal(empty.status, 200);
  assert.equal(empty.body._rev, rev);
  assert.equal(empty.headers['etag'], `"${rev}"`);
  const mixed = await ask(JSON.stringify(['2-abc', rev]));
  assert.deepEqual(mixed.body, [{ ok: { _id: 'd', _rev: rev, a: 1 } }, { missing: '2-abc' }]);
});

test('_local documents: a revision or open_revs finds nothing, as CouchDB looks in the document tree', async () => {
  assert.equal((await c.put('/localrevs')).status, 201);
  assert.equal((await c.put('/localrevs/_local/x', { a: 1 })).body.rev, '0-1');
  assert.equal((await c.get('/localrevs/_local/x?rev=0-1')).status, 404);
  assert.equal((await c.get('/localrevs/_local/x?rev=abc')).body.reason, 'Invalid rev format');
  const json = { headers: { Accept: 'application/json' } };
  assert.deepEqual((await c.get('/localrevs/_local/x?open_revs=all', json)).body, []);
  assert.deepEqual((await c.get(`/localrevs/_local/x?open_revs=${encodeURIComponent('["0-1"]')}`, json)).body, [{ missing: '0-1' }]);
  assert.equal((await c.get('/localrevs/_local/x')).body.a, 1);
  assert.equal((await c.copy('/localrevs/_local/x?rev=0-1', { headers: { Destination: 'y' } })).status, 404);
  assert.equal((await c.copy('/localrevs/_local/x', { headers: { Destination: 'y' } })).status, 201);
});

test('_revs_diff: missing revisions in couch_key_tree order, possible ancestors in reverse winner order, repeats kept', async () => {
  assert.equal((await c.put('/revsdiff')).status, 201);
  const docs = [
    { _id: 'x', _rev: '3-d', _revisions: { start: 3, ids: ['d', 'c', 'a'] } },
    { _id: 'x', _rev: '2-b', _revisions: { start: 2, ids: ['b', 'a'] } },
  ];
  assert.equal((await c.post('/revsdiff/_bulk_docs', { docs, new_edits: false })).status, 201);
  const r = await c.post('/revsdiff/_revs_diff', { x: ['3-x', '1-y', '2-c', '4-z', '1-a'], y: ['2-q', '2-q'] });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {
    x: { missing: ['1-y', '3-x', '4-z'], possible_ancestors: ['2-b', '3-d'] },
    y: { missing: ['2-q', '2-q'] },
  });
});

test('DELETE looks the document up before reading the revision: a missing one is 404 whatever rev says', async () => {
  assert.equal((await c.put('/deleteorder')).status, 201);
  assert.deepEqual((await c.del('/deleteorder/nothing?rev=abc')).body, { error: 'not_found', reason: 'missing' });
  assert.equal((await c.put('/deleteorder/d', {})).status, 201);
  assert.deepEqual((await c.del('/deleteorder/d?rev=abc')).body, { error: 'bad_request', reason: 'Invalid rev format' });
});
