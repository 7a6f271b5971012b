/** validate_doc_update over real HTTP: every write path is checked, rejections are CouchDB-shaped. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

// Rejects documents without a `title`, documents marked `secret` (401), and changes of `owner`.
const VALIDATE = `function(newDoc, oldDoc, userCtx, secObj) {
  if (newDoc._deleted) { if (oldDoc && oldDoc.locked) throw({forbidden: 'locked'}); return; }
  if (newDoc.secret) throw({unauthorized: 'secret documents need a login'});
  if (!newDoc.title) throw({forbidden: 'Documents need a title.'});
  if (oldDoc && oldDoc.owner !== newDoc.owner) throw({forbidden: 'owner cannot change from ' + oldDoc.owner});
  if (newDoc.needs_admin && userCtx.roles.indexOf('_admin') < 0) throw({forbidden: 'admins only'});
  if (newDoc.check_ctx && (userCtx.db !== 'vdu-ctx' || typeof secObj !== 'object')) throw({forbidden: 'bad context ' + JSON.stringify([userCtx, secObj])});
}`;

async function setup(db: string, extra: Record<string, unknown> = {}): Promise<void> {
  assert.equal((await c.put(`/${db}`)).status, 201);
  const r = await c.put(`/${db}/_design/rules`, { validate_doc_update: VALIDATE, ...extra });
  assert.equal(r.status, 201, r.text);
}

test('single-document writes: PUT, POST, DELETE are validated with oldDoc', async () => {
  await setup('vdu-single');
  const bad = await c.put('/vdu-single/a', { x: 1 });
  assert.equal(bad.status, 403);
  assert.deepEqual(bad.body, { error: 'forbidden', reason: 'Documents need a title.' });
  const badPost = await c.post('/vdu-single', { x: 1 });
  assert.equal(badPost.status, 403);
  const secret = await c.put('/vdu-single/s', { title: 't', secret: true });
  assert.equal(secret.status, 401);
  assert.deepEqual(secret.body, { error: 'unauthorized', reason: 'secret documents need a login' });

  const good = await c.put('/vdu-single/a', { title: 'A', owner: 'ann', locked: true });
  assert.equal(good.status, 201);
  const steal = await c.put('/vdu-single/a', { _rev: good.body.rev, title: 'A', owner: 'bob' });
  assert.equal(steal.status, 403);
  assert.equal(steal.body.reason, 'owner cannot change from ann');
  const del = await c.del(`/vdu-single/a?rev=${good.body.rev}`);
  assert.equal(del.status, 403);
  assert.equal(del.body.reason, 'locked');
  // nothing of the rejected writes was stored
  const now = await c.get('/vdu-single/a');
  assert.equal(now.body._rev, good.body.rev);
  assert.equal(now.body.owner, 'ann');
  assert.equal((await c.get('/vdu-single')).body.doc_count, 2); // the design doc and `a`
});

test('_bulk_docs: per-document forbidden rows; all_or_nothing writes nothing (417)', async () => {
  await setup('vdu-bulk');
  const r = await c.post('/vdu-bulk/_bulk_docs', { docs: [{ _id: 'ok1', title: 'x' }, { _id: 'bad' }, { _id: 'ok2', title: 'y' }, { _id: 'sec', title: 'z', secret: true }] });
  assert.equal(r.status, 201);
  assert.equal(r.body.length, 4);
  assert.equal(r.body[0].ok, true);
  assert.deepEqual(r.body[1], { id: 'bad', error: 'forbidden', reason: 'Documents need a title.' });
  assert.equal(r.body[2].ok, true);
  assert.deepEqual(r.body[3], { id: 'sec', error: 'unauthorized', reason: 'secret documents need a login' });
  assert.equal((await c.get('/vdu-bulk/bad')).status, 404);

  const aon = await c.post('/vdu-bulk/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'n1', title: 'x' }, { _id: 'n2' }] });
  assert.equal(aon.status, 417);
  // Each refusal names the revision it was sent with: "0-" for a new document.
  assert.deepEqual(aon.body, [{ id: 'n2', rev: '0-', error: 'forbidden', reason: 'Documents need a title.' }]);
  assert.equal((await c.get('/vdu-bulk/n1')).status, 404);
  const ok1 = (await c.get('/vdu-bulk/ok1')).body;
  const edit = await c.post('/vdu-bulk/_bulk_docs', { all_or_nothing: true, docs: [{ ...ok1, title: undefined }] });
  assert.equal(edit.status, 417);
  assert.deepEqual(edit.body, [{ id: 'ok1', rev: ok1._rev, error: 'forbidden', reason: 'Documents need a title.' }]);
});

test('replicated writes (new_edits=false) are validated against the nearest stored ancestor', async () => {
  await setup('vdu-repl');
  const first = await c.put('/vdu-repl/r', { title: 'R', owner: 'ann' });
  const [pos, hash] = first.body.rev.split('-');
  const next = `${Number(pos) + 1}-${'f'.repeat(32)}`;
  const stolen = await c.post('/vdu-repl/_bulk_docs', {
    new_edits: false,
    docs: [{ _id: 'r', _rev: next, _revisions: { start: 2, ids: ['f'.repeat(32), hash] }, title: 'R', owner: 'bob' }],
  });
  assert.equal(stolen.status, 201);
  // A replicated write's refusal names the revision it was sent with.
  assert.deepEqual(stolen.body, [{ id: 'r', rev: next, error: 'forbidden', reason: 'owner cannot change from ann' }]);
  const fine = await c.post('/vdu-repl/_bulk_docs', {
    new_edits: false,
    docs: [{ _id: 'r', _rev: next, _revisions: { start: 2, ids: ['f'.repeat(32), hash] }, title: 'R2', owner: 'ann' }],
  });
  assert.deepEqual(fine.body, []);
  assert.equal((await c.get('/vdu-repl/r')).body._rev, next);
  // A replicated new document with no known ancestor sees oldDoc null.
  const fresh = await c.post('/vdu-repl/_bulk_docs', { new_edits: false, docs: [{ _id: 'q', _rev: '1-abc', owner: 'x' }] });
  assert.deepEqual(fresh.body, [{ id: 'q', rev: '1-abc', error: 'forbidden', reason: 'Documents need a title.' }]);
});

test('newDoc and oldDoc carry _revisions, as couch_doc:to_json_obj with revs gives them', async () => {
  assert.equal((await c.put('/vdu-revisions')).status, 201);
  const echo = `function(newDoc, oldDoc) {
    if (newDoc.echo) throw({forbidden: JSON.stringify([newDoc._rev || null, newDoc._revisions, oldDoc && oldDoc._rev, oldDoc && oldDoc._revisions])});
  }`;
  assert.equal((await c.put('/vdu-revisions/_design/echo', { validate_doc_update: echo })).status, 201);
  const seen = async (r: { status: number; body: { reason?: string } }): Promise<unknown> => {
    assert.equal(r.status, 403);
    return JSON.parse(r.body.reason!);
  };
  // A new document: no _rev, an empty path, no oldDoc.
  assert.deepEqual(await seen(await c.put('/vdu-revisions/d', { echo: true })), [null, { start: 0, ids: [] }, null, null]);
  const one = await c.put('/vdu-revisions/d', {});
  const two = await c.put('/vdu-revisions/d', { _rev: one.body.rev });
  const [, h1] = one.body.rev.split('-');
  const [, h2] = two.body.rev.split('-');
  // An edit names the revision it edits; oldDoc is that revision with its whole path.
  assert.deepEqual(await seen(await c.put('/vdu-revisions/d', { _rev: two.body.rev, echo: true })),
    [two.body.rev, { start: 2, ids: [h2] }, two.body.rev, { start: 2, ids: [h2, h1] }]);
  // A replicated revision names the path it was sent with.
  const sent = { start: 3, ids: ['e'.repeat(32), h2, h1] };
  const repl = await c.post('/vdu-revisions/_bulk_docs', { new_edits: false, docs: [{ _id: 'd', _rev: `3-${'e'.repeat(32)}`, _revisions: sent, echo: true }] });
  assert.deepEqual(JSON.parse(repl.body[0].reason), [`3-${'e'.repeat(32)}`, sent, two.body.rev, { start: 2, ids: [h2, h1] }]);
});

test('attachment PUT and DELETE, and COPY, are validated', async () => {
  await setup('vdu-att');
  const doc = await c.put('/vdu-att/d', { title: 'D', owner: 'ann', locked: false });
  // An attachment PUT on a new document: the new doc has no title.
  const att = await c.request('PUT', '/vdu-att/new/file.txt', { raw: 'hello', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(att.status, 403);
  assert.equal((await c.get('/vdu-att/new')).status, 404);
  const ok = await c.request('PUT', `/vdu-att/d/file.txt?rev=${doc.body.rev}`, { raw: 'hello', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(ok.status, 201, ok.text);
  // Now forbid changes: a design doc rejecting any attachment removal.
  const rules2 = await c.put('/vdu-att/_design/atts', {
    validate_doc_update: 'function(n, o) { if (o && o._attachments && o._attachments["file.txt"] && !(n._attachments && n._attachments["file.txt"])) throw({forbidden: "keep file.txt"}); if (n._attachments && n._attachments["file.txt"] && n._attachments["file.txt"].length !== 5) throw({forbidden: "stub not merged"}); }',
  });
  assert.equal(rules2.status, 201);
  const rm = await c.del(`/vdu-att/d/file.txt?rev=${ok.body.rev}`);
  assert.equal(rm.status, 403);
  assert.equal(rm.body.reason, 'keep file.txt');
  // A stub-only edit sees the full stub (merged from oldDoc).
  const edit = await c.put('/vdu-att/d', { _rev: ok.body.rev, title: 'D', owner: 'ann', _attachments: { 'file.txt': { stub: true } } });
  assert.equal(edit.status, 201, edit.text);
  const copy = await c.copy('/vdu-att/d', { headers: { Destination: 'd2' } });
  assert.equal(copy.status, 201);
  const badSource = await c.put('/vdu-att/plain', { title: 'p', owner: 'x' });
  assert.equal(badSource.status, 201);
  const copyOver = await c.copy('/vdu-att/plain', { headers: { Destination: `d2?rev=${copy.body.rev}` } });
  assert.equal(copyOver.status, 403, copyOver.text); // owner ann → x, and the attachment goes
});

test('userCtx and secObj reach the function; design documents skip validators', async () => {
  await setup('vdu-ctx');
  const r = await c.put('/vdu-ctx/c', { title: 't', check_ctx: true, needs_admin: true });
  assert.equal(r.status, 201, r.text);
  // a design document without a title is not validated by validate_doc_update (admins only)
  const ddoc = await c.put('/vdu-ctx/_design/other', { views: {} });
  assert.equal(ddoc.status, 201);
  // _local documents are never validated
  assert.equal((await c.put('/vdu-ctx/_local/x', { no: 'title' })).status, 201);
});

test('validators of every design document run; removing one lifts its rule', async () => {
  await setup('vdu-many');
  const second = await c.put('/vdu-many/_design/second', { validate_doc_update: 'function(n) { if (n.title === "nope") throw({forbidden: "second says no"}); }' });
  assert.equal((await c.put('/vdu-many/a', { title: 'nope' })).body.reason, 'second says no');
  assert.equal((await c.put('/vdu-many/b', {})).body.reason, 'Documents need a title.');
  assert.equal((await c.del(`/vdu-many/_design/second?rev=${second.body.rev}`)).status, 200);
  assert.equal((await c.put('/vdu-many/a', { title: 'nope' })).status, 201);
});

test('functions that crash or use require() from the design document', async () => {
  assert.equal((await c.put('/vdu-crash')).status, 201);
  await c.put('/vdu-crash/_design/x', {
    lib: { rules: 'exports.check = function(d) { if (d.n > 3) throw({forbidden: "too big: " + d.n}); };' },
    validate_doc_update: 'function(n) { require("lib/rules").check(n); if (n.crash) n.no.such.thing; }',
  });
  const big = await c.put('/vdu-crash/a', { n: 4 });
  assert.equal(big.status, 403);
  assert.equal(big.body.reason, 'too big: 4');
  const crash = await c.put('/vdu-crash/b', { crash: true });
  assert.equal(crash.status, 500);
  assert.equal(typeof crash.body.error, 'string');
  assert.equal((await c.put('/vdu-crash/c', { n: 1 })).status, 201);
});

test('an edit that conflicts answers 409, not the validator\'s verdict', async () => {
  await setup('vdu-conflict');
  const first = await c.put('/vdu-conflict/a', { title: 'A', owner: 'ann' });
  assert.equal(first.status, 201);
  const noRev = await c.put('/vdu-conflict/a', { owner: 'bob' }); // the validator would say 403
  assert.equal(noRev.status, 409);
  const second = await c.put('/vdu-conflict/a', { _rev: first.body.rev, title: 'A2', owner: 'ann' });
  assert.equal(second.status, 201);
  const stale = await c.put('/vdu-conflict/a', { _rev: first.body.rev, owner: 'bob' });
  assert.equal(stale.status, 409);
  const bulk = await c.post('/vdu-conflict/_bulk_docs', { docs: [{ _id: 'a', owner: 'bob' }] });
  assert.equal(bulk.body[0].error, 'conflict');
});

test('quick validations of single documents and slow, deep or hungry ones agree (run here or on a sandbox thread)', async () => {
  assert.equal((await c.put('/vdu-heavy')).status, 201);
  assert.equal((await c.put('/vdu-heavy/_design/v', {
    validate_doc_update: `function(newDoc) {
      function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); }
      if (newDoc.deep && depth(3000) !== 3000) throw({forbidden: 'shallow'});
      if (newDoc.hungry) { var a = []; for (var i = 0; i < 400000; i++) a.push({i: i}); if (a.length !== 400000) throw({forbidden: 'starved'}); }
      if (newDoc.slow) { var until = Date.now() + 100; while (Date.now() < until) {} }
      if (newDoc.bad) throw({forbidden: 'bad ' + newDoc._id});
    }`,
  })).status, 201);
  // Each kind twice: once where it is first tried, once after it was sent to the sandbox threads.
  for (const round of [1, 2]) {
    for (const kind of ['plain', 'deep', 'hungry', 'slow']) {
      const ok = await c.put(`/vdu-heavy/${kind}-${round}`, { [kind]: true });
      assert.equal(ok.status, 201, `${kind}: ${ok.text}`);
      const bad = await c.put(`/vdu-heavy/${kind}-bad-${round}`, { [kind]: true, bad: true });
      assert.equal(bad.status, 403, `${kind}: ${bad.text}`);
      assert.equal(bad.body.reason, `bad ${kind}-bad-${round}`);
    }
  }
  // A runaway function times out as os_process_error, and the server keeps answering.
  assert.equal((await c.put('/_config/couchdb/os_process_timeout', '"1000"')).status, 200);
  try {
    assert.equal((await c.put('/vdu-runaway')).status, 201);
    assert.equal((await c.put('/vdu-runaway/_design/v', { validate_doc_update: 'function(doc) { while (true) {} }' })).status, 201);
    const stuck = await c.put('/vdu-runaway/x', { a: 1 });
    assert.equal(stuck.status, 500, stuck.text);
    assert.equal(stuck.body.error, 'os_process_error');
    assert.equal((await c.get('/vdu-heavy/plain-1')).status, 200);
  } finally {
    await c.put('/_config/couchdb/os_process_timeout', '"5000"');
  }
});

test('a design document in another language without a validator does not stop writes', async () => {
  assert.equal((await c.put('/vdu-erlang')).status, 201);
  const erlang = { language: 'erlang', filters: { foo: 'fun({Doc}, Req) -> true end.' } };
  assert.equal((await c.put('/vdu-erlang/_design/erlang', erlang)).status, 201);
  assert.equal((await c.put('/vdu-erlang/something', { bop: 'plankton' })).status, 201);
});

const FAR_HASH = 'f'.repeat(32);

// Echoes what validation sees: the edited revision (newDoc._rev) and oldDoc's revision.
const ECHO = `function(newDoc, oldDoc) {
  if (newDoc.echo) throw({forbidden: JSON.stringify({ old: oldDoc ? oldDoc._rev : null, v: oldDoc ? oldDoc.v : null })});
  if (newDoc.refuse) throw({forbidden: 'refused'});
}`;

test('validate_doc_update runs on all_or_nothing and new_edits=false writes with CouchDB\'s oldDoc', async () => {
  assert.equal((await c.put('/vdu-branches', undefined)).status, 201);
  assert.equal((await c.put('/vdu-branches/_design/echo', { validate_doc_update: ECHO })).status, 201);
  const seen = (r: { status: number; body: unknown; text: string }): unknown => {
    assert.ok(r.status === 417 || r.status === 201, r.text);
    const [row] = r.body as { error: string; reason: string }[];
    assert.equal(row?.error, 'forbidden', r.text);
    return JSON.parse(row!.reason);
  };
  const one = (await c.put('/vdu-branches/d', { v: 1 })).body.rev as string;
  const two = (await c.put('/vdu-branches/d', { _rev: one, v: 2 })).body.rev as string;
  const aon = (doc: Record<string, unknown>) => c.post('/vdu-branches/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'd', ...doc }] });
  // No `_rev`, or one that is no leaf: a new branch, validated with no oldDoc.
  assert.deepEqual(seen(await aon({ echo: true })), { old: null, v: null });
  assert.deepEqual(seen(await aon({ _rev: one, echo: true })), { old: null, v: null });
  // A leaf: that revision.
  assert.deepEqual(seen(await aon({ _rev: two, echo: true })), { old: two, v: 2 });
  // A `_rev` of a document that does not exist is a conflict, not validated.
  const missing = await c.post('/vdu-branches/_bulk_docs', { all_or_nothing: true, docs: [{ _id: 'nowhere', _rev: one, echo: true }] });
  assert.equal(missing.status, 417, missing.text);
  assert.deepEqual(missing.body, [{ id: 'nowhere', rev: one, error: 'conflict', reason: 'Document update conflict.' }]);
  // A refusal stops the whole batch.
  const stopped = await aon({ refuse: true });
  assert.equal(stopped.status, 417, stopped.text);
  assert.deepEqual(stopped.body, [{ id: 'd', rev: '0-', error: 'forbidden', reason: 'refused' }]);
  assert.equal((await c.get('/vdu-branches/d?open_revs=all')).body.length, 1);

  // new_edits=false: the nearest stored ancestor on the revision's path, any branch; none for a branch of its own.
  const [, h1] = one.split('-');
  const conflict = await c.post('/vdu-branches/_bulk_docs', { new_edits: false, docs: [{ _id: 'd', _rev: `2-${'c'.repeat(32)}`, _revisions: { start: 2, ids: ['c'.repeat(32), h1] }, v: 'c' }] });
  assert.deepEqual(conflict.body, []);
  const onBranch = await c.post('/vdu-branches/_bulk_docs', { new_edits: false, docs: [{ _id: 'd', _rev: `3-${FAR_HASH}`, _revisions: { start: 3, ids: [FAR_HASH, 'c'.repeat(32)] }, echo: true }] });
  assert.deepEqual(seen(onBranch), { old: `2-${'c'.repeat(32)}`, v: 'c' });
  const alone = await c.post('/vdu-branches/_bulk_docs', { new_edits: false, docs: [{ _id: 'd', _rev: `9-${FAR_HASH}`, _revisions: { start: 9, ids: [FAR_HASH, 'e'.repeat(32)] }, echo: true }] });
  assert.deepEqual(seen(alone), { old: null, v: null });
  const put = await c.put(`/vdu-branches/d?new_edits=false`, { _rev: `9-${FAR_HASH}`, _revisions: { start: 9, ids: [FAR_HASH, 'e'.repeat(32)] }, echo: true });
  assert.equal(put.status, 403, put.text);
  assert.deepEqual(JSON.parse(put.body.reason), { old: null, v: null });
});

test('a validator within the interpreter\'s subset judges _bulk_docs as the sandbox does ([query_server_config] map_interpreter on and off)', async () => {
  const rules = 'function(newDoc, oldDoc, userCtx) { if (newDoc._deleted) return; if (typeof newDoc.type !== "string") throw({forbidden: "type required"}); if (oldDoc && oldDoc.type !== newDoc.type) throw({unauthorized: "type is " + oldDoc.type}); }';
  const answers: unknown[] = [];
  for (const interpret of ['true', 'false']) {
    assert.equal((await c.put(`/_config/query_server_config/map_interpreter`, interpret)).status, 200);
    const db = `vdu-interp-${interpret}`;
    await setup(db, { validate_doc_update: rules });
    const first = await c.post(`/${db}/_bulk_docs`, { docs: Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}`, ...(i % 3 ? { type: `t${i % 2}` } : {}) })) });
    assert.equal(first.status, 201);
    const byId = new Map((first.body as { id: string; rev?: string }[]).map((r) => [r.id, r.rev]));
    const second = await c.post(`/${db}/_bulk_docs`, {
      docs: [1, 2, 4, 5].map((i) => ({ _id: `d${i}`, _rev: byId.get(`d${i}`), type: i < 3 ? 'changed' : `t${i % 2}` })),
    });
    answers.push([first.body, second.body].map((rows) => (rows as { id: string; error?: string; reason?: string; ok?: boolean }[])
      .map((r) => [r.id, r.ok ?? false, r.error ?? null, r.reason ?? null])));
  }
  assert.deepEqual(answers[0], answers[1]);
  const [first, second] = answers[0] as [unknown[][], unknown[][]];
  assert.deepEqual(first[0], ['d0', false, 'forbidden', 'type required']);
  assert.deepEqual(first[1], ['d1', true, null, null]);
  assert.deepEqual(second[0], ['d1', false, 'unauthorized', 'type is t1']);
  assert.deepEqual(second[2], ['d4', true, null, null]);
  assert.equal((await c.del('/_config/query_server_config/map_interpreter')).status, 200);
});
