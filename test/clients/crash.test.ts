/**
 * Crash safety: many concurrent writers (`_bulk_docs` and single PUTs/DELETEs), every write the
 * server acknowledged recorded with its id and rev, SIGKILL in the middle, restart on the same
 * data directory, then check that nothing acknowledged was lost and the database is coherent.
 *
 * The kill happens at three moments, chosen by how many acknowledgements have arrived (not by
 * time): right after the first acknowledgements, in steady state, and with large bulk requests
 * in flight. The rounds share one data directory, so later rounds also crash a server that
 * itself recovered from a crash, and every earlier database is checked again after each crash.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { startServer, type TestServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';

let server: TestServer | undefined;
let dataDir: string | undefined;

after(async () => {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** What the server acknowledged for one document: the newest acknowledged rev. */
interface Acked { rev: string; deleted: boolean }
type AckLog = Map<string, Acked>;

/** One HTTP exchange on a private agent (a killed server must not poison other sockets). */
function send(agent: Agent, base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const url = new URL(path.replace(/^\//, ''), base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const r = httpRequest(url, {
      method, agent,
      headers: { Accept: 'application/json', ...(payload ? { 'Content-Type': 'application/json' } : {}) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
        } catch {
          reject(new Error(`unparseable ${res.statusCode} response: ${text.slice(0, 200)}`));
        }
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(payload);
  });
}

interface Round {
  /** Kill once this many bulk-written and this many singly-written docs have been acknowledged. */
  killAfter: { bulk: number; single: number };
  /** Documents per `_bulk_docs` request. */
  bulkSize: number;
  bulkWriters: number;
  putWriters: number;
}

interface RoundResult {
  acked: Map<string, AckLog>;
  ackCount: number;
  /** Errors other than the connection dying (these fail the test). */
  unexpected: string[];
}

/**
 * Runs the writers against `srv` until `killAfter` acknowledgements, SIGKILLs the server, and
 * returns everything that was acknowledged. Writers stop at their first failed request: a
 * request in flight at the kill may or may not have been applied.
 */
async function writeUntilKilled(srv: TestServer, dbs: string[], round: Round, tag: string): Promise<RoundResult> {
  const acked = new Map<string, AckLog>(dbs.map((d) => [d, new Map()]));
  const unexpected: string[] = [];
  let ackCount = 0;
  const kinds = { bulk: 0, single: 0 };
  let killing: Promise<void> | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  const ack = (kind: 'bulk' | 'single', db: string, id: string, rev: string, deleted: boolean) => {
    acked.get(db)!.set(id, { rev, deleted });
    ackCount++;
    kinds[kind]++;
    if (kinds.bulk >= round.killAfter.bulk && kinds.single >= round.killAfter.single && !killing) killing = srv.kill();
  };
  const alive = () => killing === undefined;

  const bulkWriter = async (w: number) => {
    const db = dbs[0]!;
    const mine = new Map<string, { id: string; rev: string; deleted: boolean }>();
    let n = 0;
    while (alive()) {
      const docs: any[] = [];
      for (let i = 0; i < round.bulkSize; i++) docs.push({ _id: `${tag}-b${w}-${n++}`, w, round: tag, pad: 'p'.repeat(i % 7 * 30) });
      // Update or delete some documents this writer wrote before.
      const touched = [...mine.values()].filter((d) => !d.deleted).slice(-Math.ceil(round.bulkSize / 2));
      touched.forEach((d, i) => docs.push(i % 5 === 4 ? { _id: d.id, _rev: d.rev, _deleted: true } : { _id: d.id, _rev: d.rev, w, updated: n }));
      let r;
      try {
        r = await send(agent, srv.url, 'POST', `/${encodeURIComponent(db)}/_bulk_docs`, { docs });
      } catch {
        return; // the server died under this request
      }
      if (r.status !== 201 || !Array.isArray(r.body)) {
        unexpected.push(`bulk ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        return;
      }
      r.body.forEach((res: any, i: number) => {
        const sent = docs[i];
        if (!res.ok) {
          unexpected.push(`bulk entry ${JSON.stringify(res)}`);
          return;
        }
        if (res.id !== sent._id) unexpected.push(`bulk result ${i} id ${res.id} != ${sent._id}`);
        const deleted = sent._deleted === true;
        ack('bulk', db, res.id, res.rev, deleted);
        mine.set(res.id, { id: res.id, rev: res.rev, deleted });
      });
    }
  };

  const putWriter = async (w: number) => {
    let n = 0;
    while (alive()) {
      // Alternate between the databases; each document gets a create, two updates and,
      // every third document, a delete.
      const db = dbs[n % dbs.length]!;
      const id = `${tag}-s${w}-${n}`;
      const path = `/${encodeURIComponent(db)}/${encodeURIComponent(id)}`;
      let rev: string | undefined;
      const steps = n % 3 === 2 ? 4 : 3;
      n++;
      for (let step = 0; step < steps && alive(); step++) {
        let r;
        try {
          r = step === 3
            ? await send(agent, srv.url, 'DELETE', `${path}?rev=${rev}`)
            : await send(agent, srv.url, 'PUT', path, { w, step, ...(rev ? { _rev: rev } : {}) });
        } catch {
          return;
        }
        const expected = step === 3 ? 200 : 201;
        if (r.status !== expected) {
          unexpected.push(`${step === 3 ? 'DELETE' : 'PUT'} ${path} -> ${r.status} ${JSON.stringify(r.body)}`);
          return;
        }
        rev = r.body.rev as string;
        ack('single', db, id, rev, step === 3);
      }
    }
  };

  await Promise.all([
    ...Array.from({ length: round.bulkWriters }, (_, w) => bulkWriter(w)),
    ...Array.from({ length: round.putWriters }, (_, w) => putWriter(w)),
  ]);
  agent.destroy();
  if (!killing) assert.fail(`writers stopped before ${JSON.stringify(round.killAfter)} acknowledgements (${JSON.stringify(kinds)}): ${unexpected.join('; ')}`);
  await killing;
  return { acked, ackCount, unexpected };
}

const revPos = (rev: string) => Number(rev.split('-')[0]);

/**
 * Checks one database after a restart: it opens, every acknowledged write is there with its
 * rev or a descendant, doc_count matches _all_docs, and _changes reads to the end coherently.
 * Returns a fingerprint of the database (id -> winning rev, deleted) for later comparison.
 */
async function verify(url: string, db: string, acked: AckLog): Promise<Map<string, string>> {
  const c = client(url);
  const enc = encodeURIComponent(db);

  const info = await c.get(`/${enc}`);
  assert.equal(info.status, 200, `GET /${db} after restart: ${info.text}`);

  // _changes, read to the end: one row per document, increasing seqs, last_seq = update_seq.
  const changes = await c.get(`/${enc}/_changes`);
  assert.equal(changes.status, 200, changes.text.slice(0, 300));
  assert.ok(changes.body && Array.isArray(changes.body.results), `_changes is complete JSON: ${changes.text.slice(-300)}`);
  const results = changes.body.results as { seq: number; id: string; changes: { rev: string }[]; deleted?: boolean }[];
  assert.equal(changes.body.last_seq, info.body.update_seq, '_changes last_seq = update_seq');
  if (results.length > 0) assert.equal(results.at(-1)!.seq, changes.body.last_seq);
  for (let i = 1; i < results.length; i++) assert.ok(results[i]!.seq > results[i - 1]!.seq, `seqs increase at ${i}`);
  const byId = new Map(results.map((r) => [r.id, r]));
  assert.equal(byId.size, results.length, 'each document appears once in _changes');

  // doc_count / doc_del_count against _all_docs and _changes.
  const all = await c.get(`/${enc}/_all_docs`);
  assert.equal(all.status, 200);
  assert.equal(all.body.rows.length, all.body.total_rows, '_all_docs rows = total_rows');
  assert.equal(info.body.doc_count, all.body.rows.length, 'doc_count = _all_docs rows');
  const live = results.filter((r) => !r.deleted);
  assert.equal(info.body.doc_count, live.length, 'doc_count = live documents in _changes');
  assert.equal(info.body.doc_del_count, results.length - live.length, 'doc_del_count = deleted documents in _changes');
  const allRevs = new Map<string, string>(all.body.rows.map((r: any) => [r.id, r.value.rev]));
  for (const r of live) assert.equal(allRevs.get(r.id), r.changes[0]!.rev, `${r.id}: _all_docs and _changes agree`);

  // Every acknowledged write, with its rev or a later one.
  const lost: string[] = [];
  for (const [id, want] of acked) {
    const change = byId.get(id);
    if (!change) {
      lost.push(`${id}@${want.rev} (absent)`);
      continue;
    }
    const current = change.changes[0]!.rev;
    const deleted = change.deleted === true;
    if (current === want.rev) {
      if (deleted !== want.deleted) lost.push(`${id}@${want.rev} deleted=${deleted}, acknowledged deleted=${want.deleted}`);
      continue;
    }
    // A later write (one in flight at the kill) may have landed: the acknowledged rev must be
    // its ancestor.
    if (revPos(current) <= revPos(want.rev)) {
      lost.push(`${id}@${want.rev} (found ${current})`);
      continue;
    }
    const doc = await c.get(`/${enc}/${encodeURIComponent(id)}?rev=${current}&revs=true`);
    const history: string[] = doc.body?._revisions
      ? doc.body._revisions.ids.map((h: string, i: number) => `${doc.body._revisions.start - i}-${h}`)
      : [];
    if (!history.includes(want.rev)) lost.push(`${id}@${want.rev} (found ${current}, history ${history.join(',')})`);
  }
  assert.deepEqual(lost, [], `${lost.length} of ${acked.size} acknowledged documents lost or wrong in ${db}`);

  // The database takes writes again, including to a document whose last write was in flight.
  const probe = await c.put(`/${enc}/probe-${Date.now()}-${Math.random()}`, { after: 'restart' });
  assert.equal(probe.status, 201, probe.text);
  const someId = [...acked.keys()].at(-1);
  if (someId !== undefined) {
    const cur = byId.get(someId)!;
    const upd = await c.put(`/${enc}/${encodeURIComponent(someId)}`, { _rev: cur.changes[0]!.rev, after: 'restart' });
    assert.equal(upd.status, 201, `update ${someId} after restart: ${upd.text}`);
  }

  // Fingerprint after the probes, for the later rounds.
  const again = await c.get(`/${enc}/_changes`);
  return new Map((again.body.results as any[]).map((r) => [r.id, `${r.changes[0].rev}${r.deleted ? ' deleted' : ''}`]));
}

test('acknowledged writes survive SIGKILL at three different moments', { timeout: 300_000 }, async (t) => {
  server = await startServer();
  dataDir = server.dataDir;
  const shared = 'crash-shared';
  assert.equal((await client(server.url).put(`/${shared}`)).status, 201);

  const rounds: Round[] = [
    // Right after the first acknowledgements: the databases were just created.
    { killAfter: { bulk: 1, single: 1 }, bulkSize: 10, bulkWriters: 4, putWriters: 8 },
    // Steady state, many small writes in flight.
    { killAfter: { bulk: 400, single: 200 }, bulkSize: 20, bulkWriters: 4, putWriters: 12 },
    // Large bulk requests in flight.
    { killAfter: { bulk: 3000, single: 60 }, bulkSize: 400, bulkWriters: 3, putWriters: 6 },
  ];
  /** Everything ever acknowledged, per database, across rounds. */
  const everAcked = new Map<string, AckLog>([[shared, new Map()]]);
  const fingerprints = new Map<string, Map<string, string>>();

  for (const [i, round] of rounds.entries()) {
    const db = `crash-round-${i}`;
    const created = await client(server.url).put(`/${db}`);
    assert.equal(created.status, 201, created.text);
    everAcked.set(db, new Map());

    const result = await writeUntilKilled(server, [db, shared], round, `r${i}`);
    assert.deepEqual(result.unexpected, [], 'no request failed except by the kill');
    assert.ok(result.ackCount >= round.killAfter.bulk + round.killAfter.single);
    for (const [name, log] of result.acked) for (const [id, a] of log) everAcked.get(name)!.set(id, a);

    server = await startServer({ dataDir });
    t.diagnostic(`round ${i}: ${result.ackCount} writes acknowledged before the kill (${[...result.acked].map(([n, l]) => `${n}: ${l.size} docs`).join(', ')})`);

    // The databases written in this round, and the shared one, with everything acknowledged.
    for (const name of [db, shared]) fingerprints.set(name, await verify(server.url, name, everAcked.get(name)!));
    // Databases of earlier rounds were idle during this crash: exactly as they were.
    for (let j = 0; j < i; j++) {
      const old = `crash-round-${j}`;
      const now = await client(server.url).get(`/${old}/_changes`);
      assert.equal(now.status, 200);
      const state = new Map((now.body.results as any[]).map((r) => [r.id, `${r.changes[0].rev}${r.deleted ? ' deleted' : ''}`]));
      assert.deepEqual(state, fingerprints.get(old), `${old} unchanged by the crash of round ${i}`);
    }
    const dbs = await client(server.url).get('/_all_dbs');
    for (const name of [shared, ...rounds.slice(0, i + 1).map((_, j) => `crash-round-${j}`)]) {
      assert.ok(dbs.body.includes(name), `${name} listed after restart`);
    }
  }
});

test('a view build killed part way resumes to exactly the rows of every document', { timeout: 300_000 }, async (t) => {
  const own = await startServer();
  const dir = own.dataDir;
  let current: TestServer = own;
  try {
    const c = client(own.url);
    const db = 'crash-view';
    assert.equal((await c.put(`/${db}`)).status, 201);
    // Enough documents for many batches of the build; every tenth emits a key longer than the
    // store's keys, whose rows are ordered by tags assigned from the rows already written.
    const total = 30_000;
    const long = 'k'.repeat(1500);
    for (let start = 0; start < total; start += 3000) {
      const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: `d${String(start + i).padStart(6, '0')}`, n: start + i }));
      assert.equal((await c.post(`/${db}/_bulk_docs`, { docs })).status, 201);
    }
    const map = `function(doc) { emit(doc.n % 10 === 0 ? [${JSON.stringify(long)}, -doc.n] : ['short', doc.n], doc.n); }`;
    assert.equal((await c.put(`/${db}/_design/v`, { views: { byN: { map, reduce: '_count' } } })).status, 201);

    // Start the build, and kill the server once about a third of it is done.
    const agent = new Agent({ keepAlive: false });
    const building = send(agent, own.url, 'GET', `/${db}/_design/v/_view/byN?limit=1&reduce=false`).catch(() => undefined);
    let seen = 0;
    for (let polls = 0; polls < 10_000 && seen < total / 3; polls++) {
      const partial = await c.get(`/${db}/_design/v/_view/byN?stale=ok&reduce=false&limit=0`);
      seen = partial.body.total_rows ?? 0;
    }
    await own.kill();
    await building;
    agent.destroy();
    t.diagnostic(`killed with ${seen} of ${total} rows counted`);

    current = await startServer({ dataDir: dir });
    const restarted = client(current.url);
    const count = await restarted.get(`/${db}/_design/v/_view/byN`);
    assert.equal(count.status, 200, count.text);
    assert.deepEqual(count.body.rows, [{ key: null, value: total }]);
    const rows = await restarted.get(`/${db}/_design/v/_view/byN?reduce=false`);
    assert.equal(rows.body.total_rows, total);
    // Long keys first (arrays order by their first member), by -n; then the short ones by n.
    const expected = [
      ...Array.from({ length: total / 10 }, (_, i) => total - 10 - i * 10),
      ...Array.from({ length: total }, (_, n) => n).filter((n) => n % 10 !== 0),
    ];
    assert.deepEqual(rows.body.rows.map((r: { value: number }) => r.value), expected);
  } finally {
    await current.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
