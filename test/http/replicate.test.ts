/**
 * Settee's replicator over real HTTP: `POST /_replicate` between local names, URLs to the same
 * server and a second server process (killed and restarted mid-way), continuous jobs and
 * cancelling them, filters and Mango selectors, checkpoints, `_active_tasks`, and the
 * `_replicator` database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startServer, serverForFile, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { client } from '../helpers/http.js';

const { server, c } = await serverForFile();

/** The server's log as GET /_log serves it (pending lines are written first). */
async function serverLog(): Promise<string> {
  const r = await c.get('/_log?bytes=1000000');
  assert.equal(r.status, 200);
  return r.text;
}

let counter = 0;
async function mkdb(label: string, on = c): Promise<string> {
  const name = `repl-${label}-${++counter}`;
  const r = await on.put(`/${name}`);
  assert.equal(r.status, 201, r.text);
  return name;
}

async function bulk(db: string, docs: unknown[], on = c): Promise<{ id: string; rev: string }[]> {
  const r = await on.post(`/${db}/_bulk_docs`, { docs });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function replicate(body: Record<string, unknown>, on = c) {
  return on.post('/_replicate', body);
}

/** Every leaf of every document (conflicts and tombstones included), with its body. */
async function snapshot(db: string, on = c) {
  const changes = await on.get(`/${db}/_changes?style=all_docs`);
  const out: Record<string, unknown[]> = {};
  for (const row of changes.body.results) {
    const leaves = await on.get(`/${db}/${encodeURIComponent(row.id)}?open_revs=all&revs=true`, { headers: { Accept: 'application/json' } });
    out[row.id] = leaves.body.map((l: any) => l.ok).sort((a: any, b: any) => (a._rev < b._rev ? -1 : 1));
  }
  return out;
}

test('one-shot between local names: every leaf, tombstone and attachment, with CouchDB\'s result', async () => {
  const src = await mkdb('src');
  const [a, , d] = await bulk(src, [
    { _id: 'a', v: 1 },
    { _id: 'b', _attachments: { 'hello.txt': { content_type: 'text/plain', data: Buffer.from('hello world').toString('base64') } } },
    { _id: 'd', v: 'to delete' },
  ]);
  // A conflict on a, and a deleted d.
  await c.post(`/${src}/_bulk_docs`, { docs: [{ _id: 'a', _rev: a!.rev, v: 2 }] });
  await c.post(`/${src}/_bulk_docs`, { new_edits: false, docs: [{ _id: 'a', _rev: '2-ffff', _revisions: { start: 2, ids: ['ffff', a!.rev.slice(2)] }, v: 'conflict' }] });
  assert.equal((await c.del(`/${src}/d?rev=${d!.rev}`)).status, 200);
  await c.put(`/${src}/_local/never`, { local: true });

  const r = await replicate({ source: src, target: `${src}-copy`, create_target: true });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.ok, true);
  assert.equal(r.body.replication_id_version, 3);
  assert.match(r.body.session_id, /^[0-9a-f]{32}$/);
  const srcInfo = (await c.get(`/${src}`)).body;
  assert.equal(r.body.source_last_seq, srcInfo.update_seq);
  assert.equal(r.body.history.length, 1);
  const h = r.body.history[0];
  for (const field of ['session_id', 'start_time', 'end_time']) assert.equal(typeof h[field], 'string', field);
  assert.equal(h.session_id, r.body.session_id);
  assert.equal(h.start_last_seq, 0);
  assert.equal(h.end_last_seq, srcInfo.update_seq);
  assert.equal(h.recorded_seq, srcInfo.update_seq);
  // a has two leaves (2-ffff and its 2-... edit), b one, d one tombstone.
  assert.equal(h.missing_checked, 4);
  assert.equal(h.missing_found, 4);
  assert.equal(h.docs_read, 4);
  assert.equal(h.docs_written, 4);
  assert.equal(h.doc_write_failures, 0);

  assert.deepEqual(await snapshot(`${src}-copy`), await snapshot(src));
  const att = await c.get(`/${src}-copy/b/hello.txt`);
  assert.equal(att.text, 'hello world');
  const winner = await c.get(`/${src}-copy/a?conflicts=true`);
  assert.deepEqual(winner.body._conflicts.length, 1);
  const deleted = await c.get(`/${src}-copy/d`);
  assert.equal(deleted.status, 404);
  assert.equal(deleted.body.reason, 'deleted');
  assert.equal((await c.get(`/${src}-copy/_local/never`)).status, 404, '_local documents never replicate');
});

for (const via of ['name', 'url'] as const) {
test(`attachments by ${via}: binary and compressible, large, added later (only the new one travels), in conflicts`, async () => {
  const src = await mkdb(`atts-${via}`);
  const ep = (db: string) => (via === 'url' ? `${server.url}${db}` : db);
  const binary = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 2654435761) >>> 24;
  const text = 'compressible text '.repeat(20000);
  const put = await c.request('PUT', `/${src}/doc/bin.dat`, { raw: binary, headers: { 'Content-Type': 'application/octet-stream' } });
  assert.equal(put.status, 201, put.text);
  const put2 = await c.request('PUT', `/${src}/doc/notes.txt?rev=${put.body.rev}`, { raw: text, headers: { 'Content-Type': 'text/plain' } });
  assert.equal(put2.status, 201, put2.text);
  const tgt = `${src}-copy`;
  const first = await replicate({ source: ep(src), target: ep(tgt), create_target: true });
  assert.equal(first.status, 200, first.text);
  assert.equal(first.body.history[0].docs_written, 1);
  const got = await new Promise<Buffer>((resolve, reject) => {
    import('node:http').then(({ get }) => get(`${server.url}${tgt}/doc/bin.dat`, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (x: Buffer) => chunks.push(x));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    }).on('error', reject));
  });
  assert.ok(got.equals(binary), 'binary content byte for byte');
  assert.equal((await c.get(`/${tgt}/doc/notes.txt`)).text, text);

  // A third attachment in a later revision; the next run sends only it, and a conflict carries its own.
  const cur = (await c.get(`/${src}/doc`)).body;
  const put3 = await c.request('PUT', `/${src}/doc/later.txt?rev=${cur._rev}`, { raw: 'later', headers: { 'Content-Type': 'text/plain' } });
  assert.equal(put3.status, 201);
  const branch = await c.post(`/${src}/_bulk_docs`, { new_edits: false, docs: [{
    _id: 'doc', _rev: '3-bbbb', _revisions: { start: 3, ids: ['bbbb', cur._rev.slice(2), put.body.rev.slice(2)] },
    _attachments: { 'branch.txt': { content_type: 'text/plain', data: Buffer.from('on a branch').toString('base64') } },
  }] });
  assert.equal(branch.status, 201, branch.text);
  const second = await replicate({ source: ep(src), target: ep(tgt) });
  assert.equal(second.status, 200, second.text);
  assert.equal(second.body.history[0].docs_written, 2);
  assert.equal(second.body.history[0].doc_write_failures, 0);
  assert.deepEqual(await snapshot(tgt), await snapshot(src));
  assert.equal((await c.get(`/${tgt}/doc/later.txt?rev=${put3.body.rev}`)).text, 'later');
  assert.equal((await c.get(`/${tgt}/doc/branch.txt?rev=3-bbbb`)).text, 'on a branch');
  assert.equal((await c.get(`/${tgt}/doc/notes.txt?rev=3-bbbb`)).status, 404, 'the branch dropped notes.txt');
  if (via === 'name') return;
  // Over HTTP the replicator's reads of attachment content are in the server's request log: bin.dat once.
  const log = await serverLog();
  const fetched = (name: string) => log.split('\n').filter((l) => l.includes(`GET /${src}/doc/${name}?rev=`)).length;
  assert.equal(fetched('bin.dat'), 1, 'content the target has is not fetched again');
  assert.equal(fetched('later.txt'), 1);
  assert.equal(fetched('branch.txt'), 1);
});
}

for (const via of ['name', 'url'] as const) {
test(`stubs out of sync by ${via}: a target refusing them gets the content instead, as CouchDB's replicator retries`, async () => {
  const src = await mkdb(`stubs-${via}`);
  const tgt = await mkdb(`stubs-${via}-tgt`);
  const ep = (db: string) => (via === 'url' ? `${server.url}${db}` : db);
  const [a, b, cc] = ['a'.repeat(32), 'b'.repeat(32), 'c'.repeat(32)];
  const write = async (db: string, docs: unknown[]) => {
    const r = await c.post(`/${db}/_bulk_docs`, { new_edits: false, docs });
    assert.equal(r.status, 201, r.text);
  };
  await write(src, [
    { _id: 'd', _rev: `1-${a}` },
    { _id: 'plain', _rev: `1-${a}`, v: 1 },
  ]);
  await write(src, [{ _id: 'd', _rev: `2-${b}`, _revisions: { start: 2, ids: [b, a] }, _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from('the content').toString('base64') } } }]);
  await write(src, [{ _id: 'd', _rev: `3-${cc}`, _revisions: { start: 3, ids: [cc, b, a] }, v: 3, _attachments: { 'a.txt': { stub: true } } }]);
  // The target holds revision 2 of d without its attachment: what _revs_diff says it has is not so.
  await write(tgt, [{ _id: 'd', _rev: `2-${b}`, _revisions: { start: 2, ids: [b, a] } }]);
  const r = await replicate({ source: ep(src), target: ep(tgt) });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.history[0].docs_written, 2, r.text);
  assert.equal(r.body.history[0].doc_write_failures, 0, r.text);
  assert.equal((await c.get(`/${tgt}/d/a.txt?rev=3-${cc}`)).text, 'the content');
  assert.equal((await c.get(`/${tgt}/d`)).body.v, 3);
  assert.equal((await c.get(`/${tgt}/plain`)).body.v, 1, 'its batch-mates are written too');
  assert.match(await serverLog(), new RegExp(`retrying d 3-${cc}`));
});
}

test('as a peer: attachments=true with atts_since sends only the content added since (CouchDB 1.6)', async () => {
  const db = await mkdb('peer-atts');
  const one = await c.put(`/${db}/d`, { _attachments: { 'a.txt': { content_type: 'text/plain', data: Buffer.from('A').toString('base64') } } });
  const two = await c.request('PUT', `/${db}/d/b.txt?rev=${one.body.rev}`, { raw: 'B', headers: { 'Content-Type': 'text/plain' } });
  const r = await c.get(`/${db}/d?open_revs=${encodeURIComponent(JSON.stringify([two.body.rev]))}&attachments=true&atts_since=${encodeURIComponent(JSON.stringify([one.body.rev]))}`,
    { headers: { Accept: 'application/json' } });
  const atts = r.body[0].ok._attachments;
  assert.equal(atts['a.txt'].stub, true);
  assert.equal(atts['b.txt'].data, Buffer.from('B').toString('base64'));
});

test('checkpoints on both ends; the same request resumes where the last one stopped', async () => {
  const src = await mkdb('ckpt');
  const tgt = await mkdb('ckpt-target');
  await bulk(src, Array.from({ length: 30 }, (_, i) => ({ _id: `d${i}` })));
  const first = await replicate({ source: src, target: tgt });
  assert.equal(first.body.history[0].docs_written, 30);

  const ids = await c.get(`/${src}/_local/${encodeURIComponent('x')}`);
  assert.equal(ids.status, 404);
  const again = await replicate({ source: src, target: tgt });
  assert.equal(again.body.no_changes, true, 'nothing new: no new session recorded');

  await bulk(src, Array.from({ length: 5 }, (_, i) => ({ _id: `e${i}` })));
  const second = await replicate({ source: src, target: tgt });
  assert.equal(second.body.history.length, 2);
  const [latest, earlier] = second.body.history;
  assert.equal(latest.start_last_seq, earlier.recorded_seq, 'resumed from the checkpoint');
  assert.equal(latest.missing_checked, 5, 'only the new changes were checked');
  assert.equal(latest.docs_written, 5);

  // Find the checkpoint documents: _local/<replication id> on both ends, identical.
  const tasksId = await checkpointId(src, tgt, second.body.session_id);
  const onSource = await c.get(`/${src}/_local/${tasksId}`);
  const onTarget = await c.get(`/${tgt}/_local/${tasksId}`);
  assert.equal(onSource.status, 200);
  assert.equal(onTarget.status, 200);
  for (const doc of [onSource.body, onTarget.body]) {
    assert.equal(doc.session_id, second.body.session_id);
    assert.equal(doc.source_last_seq, second.body.source_last_seq);
    assert.equal(doc.replication_id_version, 3);
    assert.deepEqual(doc.history, second.body.history);
  }
});

/** The checkpoint's id: the continuous job of the same request reports it as its `_local_id`. */
async function checkpointId(src: string, tgt: string, _session: string): Promise<string> {
  const started = await replicate({ source: src, target: tgt, continuous: true });
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.ok, true);
  const full: string = started.body._local_id;
  const cancelled = await replicate({ source: src, target: tgt, continuous: true, cancel: true });
  assert.equal(cancelled.status, 200, cancelled.text);
  return full.split('+')[0]!;
}

test('URLs to the same server, with credentials that never show', async () => {
  const src = await mkdb('url');
  await bulk(src, [{ _id: 'x', n: 1 }]);
  // A real user: credentials that name nobody are refused, even in admin party.
  const user = await c.put('/_users/org.couchdb.user:replicator', { name: 'replicator', password: 's3cret-pw', roles: [], type: 'user' });
  assert.equal(user.status, 201, user.text);
  const base = server.url.replace('http://', 'http://replicator:s3cret-pw@');
  const r = await replicate({ source: `${base}${src}`, target: { url: `${server.url}${src}-copy` }, create_target: true, continuous: true });
  assert.equal(r.status, 202, r.text);
  assert.doesNotMatch(r.text, /s3cret-pw/);
  const task = await waitFor('the task', async () => {
    const tasks = await c.get('/_active_tasks');
    return tasks.body.find((t: any) => t.replication_id === r.body._local_id);
  });
  assert.doesNotMatch(JSON.stringify(task), /s3cret-pw/);
  assert.equal(task.source, `http://replicator:*****@${server.url.slice(7)}${src}/`);
  assert.equal(task.target, `${server.url}${src}-copy/`);
  assert.equal(task.type, 'replication');
  assert.equal(task.continuous, true);
  assert.equal(task.doc_id, null);
  for (const field of ['pid']) assert.equal(typeof task[field], 'string');
  for (const field of ['progress', 'started_on', 'updated_on', 'checkpointed_source_seq', 'source_seq', 'docs_read', 'docs_written',
    'doc_write_failures', 'missing_revisions_found', 'revisions_checked']) {
    assert.equal(typeof task[field], 'number', field);
  }
  await waitFor('x on the target', async () => (await c.get(`/${src}-copy/x`)).status === 200);
  // A write after the start arrives too, and the task counts it.
  await c.put(`/${src}/later`, { n: 2 });
  await waitFor('later on the target', async () => (await c.get(`/${src}-copy/later`)).status === 200);
  const counted = await waitFor('the task to count both', async () => {
    const tasks = await c.get('/_active_tasks');
    const t = tasks.body.find((x: any) => x.replication_id === r.body._local_id);
    return t && t.docs_written === 2 ? t : undefined;
  });
  assert.equal(counted.docs_read, 2);
  assert.equal(counted.revisions_checked, 2);
  assert.equal(counted.missing_revisions_found, 2);
  assert.equal(counted.source_seq, 2);

  const cancel = await replicate({ source: `${base}${src}`, target: { url: `${server.url}${src}-copy` }, create_target: true, continuous: true, cancel: true });
  assert.equal(cancel.status, 200, cancel.text);
  assert.equal(cancel.body._local_id, r.body._local_id);
  const tasks = await c.get('/_active_tasks');
  assert.equal(tasks.body.filter((t: any) => t.replication_id === r.body._local_id).length, 0);
  const log = await serverLog();
  assert.match(log, /Replication/);
  assert.doesNotMatch(log, /s3cret-pw/, 'credentials never reach the log');
});

test('cancelling a replication that is not running is a 404', async () => {
  const src = await mkdb('nocancel');
  const r = await replicate({ source: src, target: `${src}-x`, continuous: true, cancel: true });
  assert.equal(r.status, 404);
  // CouchDB 1.6's spelling.
  assert.equal(r.body.error, 'not found');
});

test('a replication with nothing to do answers no_changes with the previous session, as 1.6', async () => {
  const src = await mkdb('noop');
  const tgt = await mkdb('noop-target');
  await bulk(src, [{ _id: 'a' }]);
  const first = await replicate({ source: src, target: tgt });
  assert.equal(first.status, 200, first.text);
  const again = await replicate({ source: src, target: tgt });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.body.no_changes, true);
  assert.equal(again.body.session_id, first.body.session_id);
  assert.deepEqual(again.body.history, first.body.history);
  assert.equal(again.body.source_last_seq, first.body.source_last_seq);
});

test('a missing source or target is db_not_found; create_target creates it', async () => {
  const src = await mkdb('missing');
  const noSource = await replicate({ source: `${src}-nope`, target: src });
  assert.equal(noSource.status, 404);
  assert.equal(noSource.body.error, 'db_not_found');
  const noTarget = await replicate({ source: src, target: `${src}-nope` });
  assert.equal(noTarget.body.error, 'db_not_found');
  assert.equal((await c.get(`/${src}-nope`)).status, 404);
  // A continuous one answers with the failure too, not with a job that has already ended.
  const continuous = await replicate({ source: `${src}-nope`, target: src, continuous: true });
  assert.equal(continuous.status, 404, continuous.text);
  assert.deepEqual(continuous.body, { error: 'db_not_found', reason: `could not open ${src}-nope` });
  const created = await replicate({ source: src, target: `${src}-nope`, create_target: true });
  assert.equal(created.status, 200, created.text);
  assert.equal((await c.get(`/${src}-nope`)).status, 200);
  const bad = await replicate({ target: src });
  assert.equal(bad.status, 400);
});

/** A TCP relay to `target` that counts the connections open at once through it. */
async function countingRelay(target: number) {
  const { connect } = await import('node:net');
  let open = 0;
  let most = 0;
  const sockets = new Set<import('node:net').Socket>();
  const relay = createServer((client) => {
    open++;
    most = Math.max(most, open);
    const upstream = connect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => { client.destroy(); upstream.destroy(); };
    client.once('close', () => { open--; end(); });
    upstream.once('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    port: (relay.address() as import('node:net').AddressInfo).port,
    most: () => most,
    reset: () => { most = open; },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

test('[replicator] http_connections bounds the connections to a peer (max_http_sessions when unset)', async () => {
  const src = await mkdb('pool');
  await bulk(src, Array.from({ length: 100 }, (_, i) => ({ _id: `d${i}`, i })));
  const relay = await countingRelay(server.port);
  const NO_PERSIST = { headers: { 'X-Couch-Persist': 'false' } };
  try {
    // Many small batches on four workers: without a bound they fetch from the source at once.
    assert.equal((await c.put('/_config/replicator/http_connections', '1', NO_PERSIST)).status, 200);
    const r = await replicate({ source: `http://127.0.0.1:${relay.port}/${src}`, target: await mkdb('pool-target'), worker_batch_size: 5 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.history[0].docs_written, 100);
    assert.equal(relay.most(), 1, 'one connection at a time');

    // CouchDB 1.0/1.1's name for the pool's size is read when http_connections is unset.
    await c.del('/_config/replicator/http_connections', NO_PERSIST);
    assert.equal((await c.put('/_config/replicator/max_http_sessions', '1', NO_PERSIST)).status, 200);
    relay.reset();
    const again = await replicate({ source: `http://127.0.0.1:${relay.port}/${src}`, target: await mkdb('pool-target'), worker_batch_size: 5 });
    assert.equal(again.status, 200, again.text);
    assert.equal(relay.most(), 1);
  } finally {
    await c.put('/_config/replicator/http_connections', '20', NO_PERSIST);
    await c.del('/_config/replicator/max_http_sessions', NO_PERSIST);
    await relay.close();
  }
});

/** A peer that accepts connections and reads requests, but never answers. */
async function silentPeer(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('a peer that never answers: each request times out, is retried, then the replication fails', async () => {
  const silent = await silentPeer();
  const settings = { connection_timeout: '300', retries_per_request: '2' };
  const before: Record<string, string> = {};
  try {
    for (const [k, v] of Object.entries(settings)) before[k] = (await c.put(`/_config/replicator/${k}`, v)).body;
    const target = await mkdb('silent');
    const r = await replicate({ source: `${silent.url}/nowhere`, target });
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error, 'replication_peer_error');
    assert.match(r.body.reason, /timed out/);
    assert.ok(silent.connections() >= 1);
    const log = await serverLog();
    assert.match(log, /retrying in \d+ ms/, 'the retries are logged');
  } finally {
    for (const [k, v] of Object.entries(before)) await c.put(`/_config/replicator/${k}`, v);
    await silent.close();
  }
});

test('doc_ids, filter=_doc_ids and filter=_view pick documents', async () => {
  const src = await mkdb('filters');
  await bulk(src, [
    { _id: 'a', keep: true }, { _id: 'b', keep: false }, { _id: 'c', keep: true },
    { _id: '_design/f', views: { kept: { map: 'function(doc) { if (doc.keep) emit(doc._id, null); }' } } },
  ]);
  const ids = async (db: string) => (await c.get(`/${db}/_all_docs`)).body.rows.map((r: any) => r.id);

  const byIds = await replicate({ source: src, target: `${src}-ids`, create_target: true, doc_ids: ['b', 'c'] });
  assert.equal(byIds.status, 200, byIds.text);
  assert.deepEqual(await ids(`${src}-ids`), ['b', 'c']);
  await replicate({ source: src, target: `${src}-ids2`, create_target: true, filter: '_doc_ids', doc_ids: ['a'] });
  assert.deepEqual(await ids(`${src}-ids2`), ['a']);

  const byView = await replicate({ source: src, target: `${src}-view`, create_target: true, filter: '_view', query_params: { view: 'f/kept' } });
  assert.equal(byView.status, 200, byView.text);
  assert.deepEqual(await ids(`${src}-view`), ['a', 'c']);
});

test('a Mango selector picks documents; it is checked up front and excludes filter and doc_ids', async () => {
  const src = await mkdb('selector');
  await bulk(src, [{ _id: 'a', n: 1, kind: 'keep' }, { _id: 'b', n: 2, kind: 'drop' }, { _id: 'c', n: 3, kind: 'keep' }, { _id: 'd', n: 4, kind: 'keep' }]);
  const ids = async (db: string) => (await c.get(`/${db}/_all_docs`)).body.rows.map((r: any) => r.id);

  const bySelector = await replicate({ source: src, target: `${src}-sel`, create_target: true, selector: { kind: 'keep', n: { $lt: 4 } } });
  assert.equal(bySelector.status, 200, bySelector.text);
  assert.deepEqual(await ids(`${src}-sel`), ['a', 'c']);
  // Another selector is another replication (its own checkpoints), so it copies what it picks.
  await replicate({ source: src, target: `${src}-sel`, selector: { n: { $gte: 4 } } });
  assert.deepEqual(await ids(`${src}-sel`), ['a', 'c', 'd']);

  for (const [body, reason] of [
    [{ selector: 'kind' }, '`selector` must be a JSON object'],
    [{ selector: { n: { $bogus: 1 } } }, undefined],
    [{ selector: { kind: 'keep' }, doc_ids: ['a'] }, '`selector`, `filter` and `doc_ids` are mutually exclusive'],
    [{ selector: { kind: 'keep' }, filter: '_view', query_params: { view: 'f/v' } }, '`selector`, `filter` and `doc_ids` are mutually exclusive'],
  ] as const) {
    const r = await replicate({ source: src, target: `${src}-bad`, create_target: true, ...body });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error, 'bad_request');
    if (reason) assert.equal(r.body.reason, reason);
  }
  assert.equal((await c.get(`/${src}-bad`)).status, 404);
});

test('design-document filters with query_params pick documents, one-shot and continuous; the target validates', async () => {
  const src = await mkdb('ddoc-filter');
  await bulk(src, [
    { _id: 'red-1', colour: 'red' }, { _id: 'blue-1', colour: 'blue' }, { _id: 'red-2', colour: 'red' },
    { _id: '_design/f', filters: { colour: 'function(doc, req) { return doc.colour === req.query.colour; }' } },
  ]);
  const ids = async (db: string) => (await c.get(`/${db}/_all_docs`)).body.rows.map((r: any) => r.id);
  const one = await replicate({ source: src, target: `${src}-red`, create_target: true, filter: 'f/colour', query_params: { colour: 'red' } });
  assert.equal(one.status, 200, one.text);
  assert.deepEqual(await ids(`${src}-red`), ['red-1', 'red-2']);
  // Another filter parameter is another replication (its own id and checkpoint).
  const blue = await replicate({ source: `${server.url}${src}`, target: `${server.url}${src}-red`, filter: 'f/colour', query_params: { colour: 'blue' } });
  assert.equal(blue.status, 200, blue.text);
  assert.notEqual(blue.body.session_id, one.body.session_id);
  assert.deepEqual(await ids(`${src}-red`), ['blue-1', 'red-1', 'red-2']);

  // A target whose validate_doc_update refuses some documents: they are skipped and counted.
  const strict = await mkdb('ddoc-filter-strict');
  assert.equal((await c.put(`/${strict}/_design/v`, {
    validate_doc_update: 'function(doc) { if (doc.colour === "blue") throw({forbidden: "no blue here"}); }',
  })).status, 201);
  const live = await replicate({ source: src, target: strict, continuous: true, filter: 'f/colour', query_params: { colour: 'red' } });
  assert.equal(live.status, 202, live.text);
  await bulk(src, [{ _id: 'red-3', colour: 'red' }, { _id: 'blue-2', colour: 'blue' }]);
  await waitFor('red-3 on the target', async () => (await c.get(`/${strict}/red-3`)).status === 200);
  assert.equal((await c.get(`/${strict}/blue-2`)).status, 404);
  const all = await replicate({ source: src, target: strict });
  assert.equal(all.status, 200, all.text);
  assert.ok(all.body.history[0].doc_write_failures >= 2, JSON.stringify(all.body.history[0]));
  assert.equal((await c.get(`/${strict}/blue-1`)).status, 404);
  const cancel = await replicate({ source: src, target: strict, continuous: true, filter: 'f/colour', query_params: { colour: 'red' }, cancel: true });
  assert.equal(cancel.status, 200, cancel.text);
});

test('a filter that cannot be read fails as CouchDB 1.6\'s filter_code fails', async () => {
  const src = await mkdb('filter-errors');
  await bulk(src, [{ _id: '_design/f', filters: { kept: 'function(doc) { return true; }', odd: 7 } }, { _id: '_design/plain' }]);
  const cases: [Record<string, unknown>, number, Record<string, string>][] = [
    [{ source: src, filter: 'nope/kept' }, 500,
      { error: 'error', reason: `Couldn't open document \`_design/nope\` from source database \`${src}\`: {error,<<"not_found">>}` }],
    [{ source: `${server.url}${src}`, filter: 'nope/kept' }, 500,
      { error: 'error', reason: `Couldn't open document \`_design/nope\` from source database \`${server.url}${src}/\`: {error,<<"not_found">>}` }],
    [{ source: src, filter: 'f/missing' }, 404, { error: 'not_found', reason: 'missing json key: missing' }],
    [{ source: src, filter: 'plain/kept' }, 404, { error: 'not_found', reason: 'missing json key: filters' }],
    [{ source: src, filter: 'f/odd' }, 500, { error: 'unknown_error', reason: 'badarg' }],
    [{ source: `${src}-none`, filter: 'f/kept' }, 500,
      { error: 'error', reason: `Could not open source database \`${src}-none\`: {db_not_found,<<"${src}-none">>}` }],
    [{ source: `${server.url}${src}-none`, filter: 'f/kept' }, 500,
      { error: 'error', reason: `Could not open source database \`${server.url}${src}-none/\`: {db_not_found,<<"${server.url}${src}-none/">>}` }],
    [{ source: src, filter: 'kept' }, 400, { error: 'bad_request', reason: 'Invalid filter. Must match `ddocname/filtername`.' }],
  ];
  for (const [fields, status, body] of cases) {
    const r = await replicate({ target: `${src}-target`, create_target: true, ...fields });
    assert.equal(r.status, status, `${JSON.stringify(fields)}: ${r.text}`);
    assert.deepEqual(r.body, body);
  }
  assert.equal((await c.get(`/${src}-target`)).status, 404, 'no job started');
});

test('a second server process: push, pull, and continuous through a kill and restart', { timeout: 120000 }, async () => {
  const other = await startServer();
  const o = client(other.url);
  try {
    const local = await mkdb('two');
    await bulk(local, Array.from({ length: 40 }, (_, i) => ({ _id: `p${i}`, n: i })));
    const push = await replicate({ source: local, target: `${other.url}pushed`, create_target: true });
    assert.equal(push.status, 200, push.text);
    assert.equal((await o.get('/pushed')).body.doc_count, 40);

    await bulk('pushed', [{ _id: 'from-other' }], o);
    const pull = await replicate({ source: `${other.url}pushed`, target: local });
    assert.equal(pull.status, 200, pull.text);
    assert.equal(pull.body.history[0].docs_written, 1);
    assert.equal((await c.get(`/${local}/from-other`)).status, 200);

    // Continuous push; the target is killed, written to meanwhile, and comes back on its port.
    const cont = await replicate({ source: local, target: `${other.url}pushed`, continuous: true });
    assert.equal(cont.status, 202, cont.text);
    await c.put(`/${local}/before-kill`, {});
    await waitFor('before-kill on the other server', async () => (await o.get('/pushed/before-kill')).status === 200);
    await other.kill();
    await bulk(local, Array.from({ length: 20 }, (_, i) => ({ _id: `during${i}` })));
    const back = await startServer({ dataDir: other.dataDir, port: other.port });
    const b = client(back.url);
    try {
      await waitFor('writes made while it was down', async () => (await b.get('/pushed')).body?.doc_count === 62);
      await c.put(`/${local}/after-restart`, {});
      await waitFor('after-restart', async () => (await b.get('/pushed/after-restart')).status === 200);
      const ours = (await c.get(`/${local}/_all_docs`)).body.rows.map((r: any) => [r.id, r.value.rev]);
      const theirs = (await b.get('/pushed/_all_docs')).body.rows.map((r: any) => [r.id, r.value.rev]);
      assert.deepEqual(theirs, ours);
      const stop = await replicate({ source: local, target: `${other.url}pushed`, continuous: true, cancel: true });
      assert.equal(stop.status, 200, stop.text);

      // Continuous pull; now the source goes away and comes back.
      const pulled = `${local}-pulled`;
      const pull2 = await replicate({ source: `${other.url}pushed`, target: pulled, create_target: true, continuous: true });
      assert.equal(pull2.status, 202, pull2.text);
      await waitFor('the pull to catch up', async () => (await c.get(`/${pulled}`)).body?.doc_count === 63);
      await back.kill();
      const third = await startServer({ dataDir: other.dataDir, port: other.port });
      try {
        await client(third.url).put('/pushed/after-source-restart', {});
        await waitFor('after-source-restart pulled', async () => (await c.get(`/${pulled}/after-source-restart`)).status === 200);
        const tasks = (await c.get('/_active_tasks')).body.filter((t: any) => t.replication_id === pull2.body._local_id);
        assert.equal(tasks.length, 1, 'the same job, still running');
        const stopPull = await replicate({ source: `${other.url}pushed`, target: pulled, create_target: true, continuous: true, cancel: true });
        assert.equal(stopPull.status, 200, stopPull.text);
      } finally {
        await third.stop({ keepData: true });
      }
    } finally {
      await back.stop({ keepData: true });
    }
  } finally {
    await other.stop();
  }
});

test('_replicator documents: state recorded, deletion cancels, jobs restart with the server', { timeout: 90000 }, async () => {
  const own = await startServer();
  const o = client(own.url);
  try {
    await o.put('/rsrc');
    await bulk('rsrc', [{ _id: 'one' }, { _id: 'two' }], o);
    const put = await o.put('/_replicator/once', { source: 'rsrc', target: 'rcopy', create_target: true });
    assert.equal(put.status, 201, put.text);
    const done = await waitFor('completed', async () => {
      const doc = (await o.get('/_replicator/once')).body;
      return doc._replication_state === 'completed' ? doc : undefined;
    });
    assert.match(done._replication_id, /^[0-9a-f]{32}$/);
    assert.match(done._replication_state_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    // CouchDB 1.6's record of a completed job.
    assert.deepEqual(done._replication_stats, {
      revisions_checked: 2, missing_revisions_found: 2, docs_read: 2, docs_written: 2, doc_write_failures: 0,
      checkpointed_source_seq: 2,
    });
    assert.equal((await o.get('/rcopy')).body.doc_count, 2);

    await o.put('/_replicator/broken', { source: 'no-such-db', target: 'rcopy' });
    const broken = await waitFor('error', async () => {
      const doc = (await o.get('/_replicator/broken')).body;
      return doc._replication_state === 'error' ? doc : undefined;
    });
    assert.match(broken._replication_state_reason, /db_not_found/);
    assert.match(broken._replication_id, /^[0-9a-f]{32}$/);
    // Written in admin party: the owner is recorded as null, as CouchDB records it.
    assert.equal(broken.owner, null);

    const live = await o.put('/_replicator/live', { source: 'rsrc', target: `${own.url}rlive`, create_target: true, continuous: true });
    assert.equal(live.status, 201);
    const triggered = await waitFor('triggered', async () => {
      const doc = (await o.get('/_replicator/live')).body;
      return doc._replication_state === 'triggered' ? doc : undefined;
    });
    const tasks = (await o.get('/_active_tasks')).body.filter((t: any) => t.type === 'replication');
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].doc_id, 'live');
    assert.equal(tasks[0].replication_id.split('+')[0], triggered._replication_id);
    await o.put('/rsrc/three', {});
    await waitFor('three in rlive', async () => (await o.get('/rlive/three')).status === 200);

    // A restart of the server restarts the job.
    await own.stop({ keepData: true });
    const again = await startServer({ dataDir: own.dataDir, port: own.port });
    const a = client(again.url);
    try {
      await waitFor('the job back in _active_tasks', async () => (await a.get('/_active_tasks')).body.some((t: any) => t.doc_id === 'live'));
      await a.put('/rsrc/four', {});
      await waitFor('four in rlive', async () => (await a.get('/rlive/four')).status === 200);
      // The completed one did not run again.
      assert.equal((await a.get('/_replicator/once')).body._rev, done._rev);

      const current = (await a.get('/_replicator/live')).body;
      assert.equal((await a.del(`/_replicator/live?rev=${current._rev}`)).status, 200);
      await waitFor('the job gone', async () => !(await a.get('/_active_tasks')).body.some((t: any) => t.type === 'replication'));
      await a.put('/rsrc/five', {});
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await a.get('/rlive/five')).status, 404, 'a cancelled job copies nothing more');
    } finally {
      await again.stop();
    }
  } finally {
    await own.stop();
  }
});

test('a _replicator job cut short by a crash resumes from its checkpoint after the restart', { timeout: 120000 }, async () => {
  const own = await startServer();
  const o = client(own.url);
  let again: TestServer | undefined;
  try {
    // Small batches and frequent checkpoints, so the crash lands mid-way with a checkpoint behind it.
    assert.equal((await o.put('/_config/replicator/worker_batch_size', '10')).status, 200);
    assert.equal((await o.put('/_config/replicator/worker_processes', '1')).status, 200);
    assert.equal((await o.put('/_config/replicator/checkpoint_interval', '100')).status, 200);
    await o.put('/csrc');
    for (let b = 0; b < 10; b++) await bulk('csrc', Array.from({ length: 500 }, (_, i) => ({ _id: `d${b}-${i}`, i })), o);
    await o.put('/_replicator/crash', { source: 'csrc', target: 'cdst', create_target: true });
    await waitFor('a checkpoint', async () => {
      const task = (await o.get('/_active_tasks')).body.find((t: any) => t.doc_id === 'crash');
      return task && task.checkpointed_source_seq > 0;
    });
    await own.kill();
    again = await startServer({ dataDir: own.dataDir, port: own.port });
    const a = client(again.url);
    await waitFor('completed', async () => (await a.get('/_replicator/crash')).body._replication_state === 'completed');
    assert.equal((await a.get('/cdst')).body.doc_count, 5000);
    const id = (await a.get('/_replicator/crash')).body._replication_id;
    const checkpoint = (await a.get(`/cdst/_local/${id}`)).body;
    const resumed = checkpoint.history[0];
    assert.ok(resumed.start_last_seq > 0, `the last session started from a checkpoint: ${JSON.stringify(checkpoint.history)}`);
    assert.ok(resumed.missing_checked <= 5000 - resumed.start_last_seq, 'it did not go over what was checkpointed');
    assert.equal(resumed.doc_write_failures, 0);
  } finally {
    await again?.stop({ keepData: true });
    await own.stop();
  }
});


test('a job writes to a local database as its requester, whatever the way it authenticated', async () => {
  const handlers = (await c.get('/_config/httpd/authentication_handlers')).body as string;
  const setHandlers = (value: string) =>
    c.put('/_config/httpd/authentication_handlers', value, { headers: { 'X-Couch-Persist': 'false' } });
  assert.equal((await c.put('/repl-as-src')).status, 201);
  assert.equal((await c.put('/repl-as-tgt')).status, 201);
  const validate = 'function(newDoc, oldDoc, userCtx) { if (newDoc.author !== userCtx.name) throw({forbidden: "wrong author"}); }';
  assert.equal((await c.put('/repl-as-tgt/_design/authors', { validate_doc_update: validate })).status, 201);
  assert.equal((await c.post('/repl-as-src/_bulk_docs', { docs: [{ _id: 'mine', author: 'lenz' }, { _id: 'theirs', author: 'noah' }] })).status, 201);
  // Proxy authentication: no credentials a loopback request could borrow.
  assert.equal((await setHandlers('{couch_httpd_auth, proxy_authentication_handler}, {couch_httpd_auth, default_authentication_handler}')).status, 200);
  try {
    const r = await c.post('/_replicate', { source: 'repl-as-src', target: 'repl-as-tgt' }, { headers: { 'X-Auth-CouchDB-UserName': 'lenz' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.history[0].docs_written, 1);
    assert.equal(r.body.history[0].doc_write_failures, 1);
  } finally {
    assert.equal((await setHandlers(handlers)).status, 200);
  }
  assert.equal((await c.get('/repl-as-tgt/mine')).status, 200);
  assert.equal((await c.get('/repl-as-tgt/theirs')).status, 404);
});

test('since_seq starts the replication there; doc_ids may be percent-encoded and report top-level counts', async () => {
  const src = await mkdb('since');
  assert.equal((await c.post(`/${src}/_bulk_docs`, { docs: [1, 2, 3, 4, 5, 6].map((n) => ({ _id: `d${n}` })) })).status, 201);
  const since = await replicate({ source: src, target: `${src}-a`, create_target: true, since_seq: 4 });
  assert.equal(since.status, 200, since.text);
  assert.equal(since.body.history[0].start_last_seq, 4);
  assert.equal(since.body.history[0].docs_written, 2);
  assert.equal((await c.get(`/${src}-a/d1`)).status, 404);
  assert.equal((await c.get(`/${src}-a/d6`)).status, 200);

  assert.equal((await c.put(`/${src}/_design/foo`, { views: {} })).status, 201);
  const byIds = await replicate({ source: src, target: `${src}-b`, create_target: true, doc_ids: ['d1', '_design%2Ffoo'] });
  assert.equal(byIds.status, 200, byIds.text);
  assert.equal((await c.get(`/${src}-b/_design/foo`)).status, 200);
  assert.equal(byIds.body.docs_read, 2);
  assert.equal(byIds.body.docs_written, 2);
  assert.equal(byIds.body.doc_write_failures, 0);
  assert.equal(typeof byIds.body.start_time, 'string');
  assert.equal(typeof byIds.body.end_time, 'string');
  // Ids that match nothing: no change seen, nothing recorded.
  const none = await replicate({ source: src, target: `${src}-c`, create_target: true, doc_ids: ['nothing-here'] });
  assert.equal(none.status, 200, none.text);
  // As CouchDB 1.6: no new session, and the source's checkpoint as it was (here none).
  assert.deepEqual(none.body, { ok: true, no_changes: true });
});

/** The `_local` documents of a database (checkpoints among them). */
async function localDocs(db: string): Promise<string[]> {
  const r = await c.get(`/${db}/_local_docs`);
  assert.equal(r.status, 200, r.text);
  return r.body.rows.map((row: { id: string }) => row.id);
}

test('use_checkpoints: false writes no checkpoint on either end, and answers only that (CouchDB 1.6)', async () => {
  const src = await mkdb('nockpt');
  const tgt = await mkdb('nockpt-target');
  await bulk(src, Array.from({ length: 12 }, (_, i) => ({ _id: `d${i}` })));
  const r = await replicate({ source: src, target: tgt, use_checkpoints: false, checkpoint_interval: 100 });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { ok: true, use_checkpoints: false });
  assert.equal((await c.get(`/${tgt}`)).body.doc_count, 12);
  assert.deepEqual(await localDocs(src), []);
  assert.deepEqual(await localDocs(tgt), []);
  // Nothing recorded, so the next request starts from the beginning again.
  const again = await replicate({ source: src, target: tgt, use_checkpoints: false });
  assert.deepEqual(again.body, { ok: true, use_checkpoints: false });
  assert.deepEqual(await localDocs(tgt), []);
});

test('tuning options leave the replication id alone: a tuned request resumes the untuned one\'s checkpoint', async () => {
  const src = await mkdb('tuned');
  const tgt = await mkdb('tuned-target');
  await bulk(src, Array.from({ length: 10 }, (_, i) => ({ _id: `d${i}` })));
  const first = await replicate({ source: src, target: tgt });
  assert.equal(first.body.history[0].docs_written, 10);
  await bulk(src, Array.from({ length: 4 }, (_, i) => ({ _id: `e${i}` })));
  const tuned = await replicate({
    source: src, target: tgt, worker_processes: 2, worker_batch_size: '3', http_connections: 5,
    connection_timeout: 10000, retries_per_request: 3, checkpoint_interval: 1000, socket_options: '[{nodelay, true}]',
  });
  assert.equal(tuned.status, 200, tuned.text);
  assert.equal(tuned.body.history.length, 2);
  assert.equal(tuned.body.history[0].start_last_seq, first.body.source_last_seq);
  assert.equal(tuned.body.history[0].docs_written, 4);
  assert.equal((await localDocs(tgt)).length, 1, 'one checkpoint document, under the same id');
});

test('worker_batch_size sets how many changes each read of the source asks for', async () => {
  const src = await mkdb('batch');
  const tgt = await mkdb('batch-target');
  await bulk(src, Array.from({ length: 7 }, (_, i) => ({ _id: `d${i}` })));
  // A URL source, so its reads are requests in the log.
  const r = await replicate({ source: `${server.url}${src}`, target: tgt, worker_batch_size: 3 });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.history[0].docs_written, 7);
  const reads = (await serverLog()).split('\n').filter((line) => line.includes(`GET /${src}/_changes?`));
  assert.ok(reads.length >= 3, reads.join('\n'));
  for (const line of reads) assert.match(line, /[?&]limit=3[& ]/);
});

test('connection_timeout and retries_per_request of the request apply to its peers', { timeout: 20000 }, async () => {
  const silent = await silentPeer();
  try {
    const target = await mkdb('tuned-silent');
    const r = await replicate({ source: `${silent.url}/nowhere`, target, connection_timeout: 200, retries_per_request: '1' });
    assert.equal(r.status, 502, r.text);
    assert.match(r.body.reason, /timed out after 200 ms/);
    // One retry, not the configured ten: the request's own retries_per_request.
    const retries = (await serverLog()).split('\n').filter((line) => /timed out after 200 ms; retrying in/.test(line));
    assert.equal(retries.length, 1, retries.join('\n'));
  } finally {
    await silent.close();
  }
});

test('checkpoint_interval of the request shows in _active_tasks', async () => {
  const src = await mkdb('interval');
  const tgt = await mkdb('interval-target');
  const started = await replicate({ source: src, target: tgt, continuous: true, checkpoint_interval: 1234 });
  assert.equal(started.status, 202, started.text);
  try {
    const task = (await c.get('/_active_tasks')).body.find((t: { replication_id?: string }) => t.replication_id === started.body._local_id);
    assert.equal(task?.checkpoint_interval, 1234);
  } finally {
    await replicate({ source: src, target: tgt, continuous: true, cancel: true });
  }
});

test('a task lists pid first, then its properties in the order of their names (couch_task_status)', async () => {
  const src = await mkdb('task-order');
  const tgt = await mkdb('task-order-target');
  const started = await replicate({ source: src, target: tgt, continuous: true });
  assert.equal(started.status, 202, started.text);
  try {
    const task = (await c.get('/_active_tasks')).body.find((t: { replication_id?: string }) => t.replication_id === started.body._local_id);
    assert.ok(task, 'the replication task');
    const keys = Object.keys(task);
    assert.equal(keys[0], 'pid');
    assert.deepEqual(keys.slice(1), [...keys.slice(1)].sort());
    for (const key of ['type', 'started_on', 'updated_on', 'progress', 'replication_id']) assert.ok(keys.includes(key), key);
  } finally {
    await replicate({ source: src, target: tgt, continuous: true, cancel: true });
  }
});

test('a replication task\'s progress is the share of source_seq replicated through, checkpointed or not, and 0 for an empty source (couch_replicator:update_task)', async () => {
  const empty = await mkdb('progress-empty');
  const emptyTarget = await mkdb('progress-empty-target');
  const idle = await replicate({ source: empty, target: emptyTarget, continuous: true });
  assert.equal(idle.status, 202, idle.text);
  const src = await mkdb('progress');
  const tgt = await mkdb('progress-target');
  await bulk(src, [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }]);
  const started = await replicate({ source: src, target: tgt, continuous: true, use_checkpoints: false });
  assert.equal(started.status, 202, started.text);
  try {
    const tasks = (await c.get('/_active_tasks')).body as { replication_id?: string; progress?: unknown; source_seq?: unknown }[];
    const idleTask = tasks.find((t) => t.replication_id === idle.body._local_id);
    assert.equal(idleTask?.source_seq, 0);
    assert.equal(idleTask?.progress, 0);
    const task = await waitFor('the three documents written', async () => {
      const t = (await c.get('/_active_tasks')).body.find((x: { replication_id?: string }) => x.replication_id === started.body._local_id);
      return t?.docs_written === 3 ? t : undefined;
    });
    assert.equal(task.checkpointed_source_seq, 0);
    assert.equal(task.source_seq, 3);
    assert.equal(task.progress, 100);
  } finally {
    await replicate({ source: empty, target: emptyTarget, continuous: true, cancel: true });
    await replicate({ source: src, target: tgt, continuous: true, use_checkpoints: false, cancel: true });
  }
});

test('integer options are read as couch_util:to_integer reads them; others are CouchDB\'s 500s', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ worker_processes: 'four' }, 'badarg'],
    [{ worker_batch_size: '2.5' }, 'badarg'],
    [{ connection_timeout: 2.5 }, 'function_clause'],
    [{ http_connections: true }, 'function_clause'],
    [{ retries_per_request: null }, 'function_clause'],
    [{ checkpoint_interval: [5000] }, 'function_clause'],
  ];
  for (const [options, reason] of cases) {
    const r = await replicate({ source: 'tuning-src', target: 'tuning-tgt', ...options });
    assert.equal(r.status, 500, `${JSON.stringify(options)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'unknown_error', reason });
  }
  // A string of digits is an integer; the source's absence is then the answer.
  const digits = await replicate({ source: 'tuning-src', target: 'tuning-tgt', worker_processes: '4' });
  assert.equal(digits.status, 404, digits.text);
});

test('a since_seq that is not a sequence is a 400', async () => {
  const r = await replicate({ source: 'a', target: 'b', since_seq: { at: 4 } });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, { error: 'bad_request', reason: 'since_seq must be a sequence' });
});

test('a source no database can be named is db_not_found', async () => {
  const r = await replicate({ source: '/foobar', target: 'whatever' });
  assert.equal(r.status, 404);
  assert.equal(r.body.error, 'db_not_found');
});

test("only its owner or an admin cancels a running replication (named by any of its ids); only an admin creates a target", async () => {
  const handlers = (await c.get('/_config/httpd/authentication_handlers')).body as string;
  const setHandlers = (value: string) =>
    c.put('/_config/httpd/authentication_handlers', value, { headers: { 'X-Couch-Persist': 'false' } });
  const src = await mkdb('owned');
  const tgt = await mkdb('owned-target');
  const as = (name: string) => ({ 'X-Auth-CouchDB-UserName': name });
  // Proxy authentication: named users without the admin role, even in admin party.
  assert.equal((await setHandlers('{couch_httpd_auth, proxy_authentication_handler}, {couch_httpd_auth, default_authentication_handler}')).status, 200);
  try {
    const started = await c.post('/_replicate', { source: src, target: tgt, continuous: true }, { headers: as('jan') });
    assert.equal(started.status, 202, started.text);
    const id = started.body._local_id as string;
    const other = await c.post('/_replicate', { replication_id: id, cancel: true }, { headers: as('joe') });
    assert.equal(other.status, 401);
    assert.equal(other.body.reason, "Can't cancel a replication triggered by another user");
    // The job is also named by its `_local_id` (or `id`).
    const own = await c.post('/_replicate', { _local_id: id, cancel: true }, { headers: as('jan') });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual((await c.post('/_replicate', { id, cancel: true }, { headers: as('jan') })).body.error, 'not found');
    // A cancel naming the job ignores any source and target it also carries.
    const again = await c.post('/_replicate', { source: src, target: tgt, continuous: true }, { headers: as('jan') });
    assert.equal(again.status, 202, again.text);
    const named = await c.post('/_replicate', { source: 'elsewhere', target: 'anywhere', replication_id: id, cancel: true }, { headers: as('jan') });
    assert.deepEqual(named.body, { ok: true, _local_id: id });
    // Only a server admin has the replicator create a local database (404, as 1.6 answers it).
    const created = await c.post('/_replicate', { source: src, target: `${src}-by-jan`, create_target: true }, { headers: as('jan') });
    assert.equal(created.status, 404, created.text);
    assert.deepEqual(created.body, { error: 'unauthorized', reason: `unauthorized to access or create database ${src}-by-jan` });
    assert.equal((await c.get(`/${src}-by-jan`)).status, 404);
  } finally {
    assert.equal((await setHandlers(handlers)).status, 200);
  }
});

test('naming another [replicator] db creates it and runs its documents; the old one is left', async () => {
  const setDb = (name: string) => c.put('/_config/replicator/db', name, { headers: { 'X-Couch-Persist': 'false' } });
  const src = await mkdb('repdb-src');
  await bulk(src, [{ _id: 'a' }, { _id: 'b' }]);
  assert.equal((await setDb('other_rep_db')).status, 200);
  try {
    await waitFor('the new replicator database', async () => (await c.get('/other_rep_db')).status === 200 || undefined);
    assert.equal((await c.put('/other_rep_db/job', { source: src, target: `${src}-copy`, create_target: true })).status, 201);
    const done = await waitFor('completed', async () => {
      const doc = (await c.get('/other_rep_db/job')).body;
      return doc._replication_state === 'completed' ? doc : undefined;
    });
    assert.equal(done._replication_stats.docs_written, 2);
    // The old database is not watched meanwhile.
    assert.equal((await c.put('/_replicator/ignored', { source: src, target: `${src}-ignored`, create_target: true })).status, 201);
  } finally {
    assert.equal((await setDb('_replicator')).status, 200);
  }
  // Watched again: the document written meanwhile runs now.
  const ignored = await waitFor('the old database watched again', async () => {
    const doc = (await c.get('/_replicator/ignored')).body;
    return doc._replication_state === 'completed' ? doc : undefined;
  });
  assert.equal(ignored._replication_state, 'completed');
});

test('a second _replicator document for a running replication is tagged with its id', async () => {
  const src = await mkdb('twin-src');
  const tgt = await mkdb('twin-tgt');
  assert.equal((await c.put('/_replicator/twin1', { source: src, target: tgt, continuous: true })).status, 201);
  const first = await waitFor('twin1 triggered', async () => {
    const doc = (await c.get('/_replicator/twin1')).body;
    return doc._replication_state === 'triggered' ? doc : undefined;
  });
  assert.equal((await c.put('/_replicator/twin2', { source: src, target: tgt, continuous: true })).status, 201);
  const second = await waitFor('twin2 tagged', async () => {
    const doc = (await c.get('/_replicator/twin2')).body;
    return doc._replication_id ? doc : undefined;
  });
  assert.equal(second._replication_id, first._replication_id);
  assert.equal(second._replication_state, undefined);
  for (const id of ['twin1', 'twin2']) {
    const doc = (await c.get(`/_replicator/${id}`)).body;
    assert.equal((await c.del(`/_replicator/${id}?rev=${doc._rev}`)).status, 200);
  }
});

test('a _replicator job that fails starts again after 5 s: a source created meanwhile is replicated', async () => {
  const src = `retried-${Date.now()}`;
  assert.equal((await c.put(`/_replicator/${src}`, { source: src, target: `${src}-copy`, create_target: true })).status, 201);
  await waitFor('the error state', async () => (await c.get(`/_replicator/${src}`)).body._replication_state === 'error' || undefined);
  assert.match((await c.get(`/_replicator/${src}`)).body._replication_state_reason, /^db_not_found: could not open /);
  assert.equal((await c.put(`/${src}`)).status, 201);
  await bulk(src, [{ _id: 'a' }]);
  await waitFor('the retry to complete', async () => (await c.get(`/_replicator/${src}`)).body._replication_state === 'completed' || undefined, 15000);
  assert.equal((await c.get(`/${src}-copy/a`)).status, 200);
});

test('a completed _replicator document edited without its _replication_state runs again (CouchDB 1.6 process_update)', async () => {
  const src = await mkdb('rerun-src');
  const tgt = `${src}-copy`;
  await bulk(src, [{ _id: 'first' }]);
  const id = `rerun-${Date.now()}`;
  assert.equal((await c.put(`/_replicator/${id}`, { source: src, target: tgt, create_target: true })).status, 201);
  const done = await waitFor('completed', async () => {
    const doc = (await c.get(`/_replicator/${id}`)).body;
    return doc._replication_state === 'completed' ? doc : undefined;
  });
  await bulk(src, [{ _id: 'second' }]);
  // The same replication, written again without the replicator's fields: it runs again.
  const edit = await c.put(`/_replicator/${id}`, { _rev: done._rev, source: src, target: tgt, create_target: true });
  assert.equal(edit.status, 201, edit.text);
  const again = await waitFor('completed again', async () => {
    const doc = (await c.get(`/_replicator/${id}`)).body;
    return doc._replication_state === 'completed' ? doc : undefined;
  });
  assert.equal(again._replication_id, done._replication_id);
  assert.equal(again._replication_stats.docs_written, 1);
  assert.equal((await c.get(`/${tgt}/second`)).status, 200);
});

test('a _replicator document stating no replication it can start records CouchDB 1.6\'s reason alone (bad_rep_doc)', async () => {
  const src = await mkdb('badrep');
  const cases: [Record<string, unknown>, string][] = [
    [{ source: src, target: `${src}-copy`, filter: 'nofilter' }, 'Invalid filter. Must match `ddocname/filtername`.'],
    [{ source: src, target: `${src}-copy`, filter: 'nodesign/f' },
      `Couldn't open document \`_design/nodesign\` from source database \`${src}\`: {error,<<"not_found">>}`],
    [{ source: src, target: `${src}-copy`, worker_processes: 'abc' }, '{error,badarg}'],
  ];
  for (const [i, [body, reason]] of cases.entries()) {
    const id = `badrep-${Date.now()}-${i}`;
    assert.equal((await c.put(`/_replicator/${id}`, body)).status, 201);
    const doc = await waitFor(`${id} in error`, async () => {
      const d = (await c.get(`/_replicator/${id}`)).body;
      return d._replication_state === 'error' ? d : undefined;
    });
    assert.equal(doc._replication_state_reason, reason);
    assert.equal(doc._replication_id, undefined);
  }
});

test('a _replicator document triggered again loses the last run\'s _replication_stats (CouchDB 1.6 replication_started)', async () => {
  const src = await mkdb('restats-src');
  const tgt = `${src}-copy`;
  await bulk(src, [{ _id: 'one' }]);
  const id = `restats-${Date.now()}`;
  assert.equal((await c.put(`/_replicator/${id}`, { source: src, target: tgt, create_target: true })).status, 201);
  const done = await waitFor('completed', async () => {
    const doc = (await c.get(`/_replicator/${id}`)).body;
    return doc._replication_state === 'completed' ? doc : undefined;
  });
  assert.equal(typeof done._replication_stats, 'object');
  // Made continuous, the replicator's other fields kept but its state.
  const { _replication_state: _state, ...rest } = done;
  assert.equal((await c.put(`/_replicator/${id}`, { ...rest, continuous: true })).status, 201);
  const triggered = await waitFor('triggered', async () => {
    const doc = (await c.get(`/_replicator/${id}`)).body;
    return doc._replication_state === 'triggered' ? doc : undefined;
  });
  assert.equal(triggered._replication_stats, undefined);
  assert.equal((await c.del(`/_replicator/${id}?rev=${triggered._rev}`)).status, 200);
});
