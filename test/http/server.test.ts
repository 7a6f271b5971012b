/**
 * Server-level endpoints over real HTTP, checked against CouchDB 1.6:
 * GET /, /_all_dbs, /_uuids (and its algorithms), /_restart, /_log, /favicon.ico, /_active_tasks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, serverForFile } from '../helpers/server.js';
import { client, type Response } from '../helpers/http.js';

const { server, c } = await serverForFile();

/** GET returning the raw bytes, for binary bodies. */
function getBytes(base: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpRequest(new URL(path.replace(/^\//, ''), base), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (ch: Buffer) => chunks.push(ch));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject).end();
  });
}

async function setConfig(section: string, key: string, value: string): Promise<void> {
  const r = await c.put(`/_config/${section}/${key}`, value);
  assert.equal(r.status, 200, r.text);
}

async function uuids(count?: number): Promise<string[]> {
  const r = await c.get(count === undefined ? '/_uuids' : `/_uuids?count=${count}`);
  assert.equal(r.status, 200, r.text);
  assert.ok(Array.isArray(r.body.uuids));
  return r.body.uuids as string[];
}

/** Retries a read until `ok` holds (the server applies some changes just after answering). */
async function eventually(read: () => Promise<Response>, ok: (r: Response) => boolean, attempts = 100): Promise<Response> {
  let last!: Response;
  for (let i = 0; i < attempts; i++) {
    last = await read();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 20));
  }
  return last;
}

// ------------------------------------------------------------------------------------- GET /

test('GET / answers the welcome object with couchdb, uuid, version and vendor', async () => {
  const r = await c.get('/');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.body.couchdb, 'Welcome');
  assert.match(r.body.uuid, /^[0-9a-f]{32}$/);
  assert.equal(typeof r.body.version, 'string');
  assert.match(r.body.version, /^1\.6\.\d+$/, 'clients feature-detect on a 1.6 version');
  assert.equal(typeof r.body.vendor, 'object');
  assert.equal(typeof r.body.vendor.name, 'string');
  assert.ok(r.body.vendor.name.length > 0);
  assert.equal(typeof r.body.vendor.version, 'string');
  assert.ok(r.text.endsWith('\n'), 'CouchDB ends JSON bodies with a newline');
});

test('GET / uuid is the same on every request', async () => {
  const a = await c.get('/');
  const b = await c.get('/');
  assert.equal(a.body.uuid, b.body.uuid);
});

test('GET / reports the configured uuid and [vendor] section as they are now', async () => {
  const before = (await c.get('/')).body;
  const nonPersistent = { headers: { 'X-Couch-Persist': 'false' } };
  await c.put('/_config/vendor/name', 'Example Corp', nonPersistent);
  await c.put('/_config/vendor/url', 'http://example.org', nonPersistent);
  await c.put('/_config/couchdb/uuid', 'abc123', nonPersistent);
  try {
    const now = (await c.get('/')).body;
    assert.equal(now.uuid, 'abc123');
    assert.deepEqual(now.vendor, { name: 'Example Corp', version: before.vendor.version, url: 'http://example.org' });
  } finally {
    await c.put('/_config/couchdb/uuid', before.uuid, nonPersistent);
    await c.del('/_config/vendor/name', nonPersistent);
    await c.del('/_config/vendor/url', nonPersistent);
  }
  assert.deepEqual((await c.get('/')).body, before);
});

test('GET / uuid survives a restart on the same data directory, and differs for another one', async () => {
  const before = (await c.get('/')).body.uuid as string;
  await server.restart();
  const afterRestart = await c.get('/');
  assert.equal(afterRestart.status, 200);
  assert.equal(afterRestart.body.uuid, before);

  const other = await startServer();
  try {
    const r = await client(other.url).get('/');
    assert.match(r.body.uuid, /^[0-9a-f]{32}$/);
    assert.notEqual(r.body.uuid, before);
  } finally {
    await other.stop();
  }
});

test('a CouchDB 3 local.ini works as written: [chttpd] port, bind_address, enable_cors and max_http_request_size', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'settee-chttpd-'));
  const localIni = join(dataDir, 'local.ini');
  writeFileSync(localIni, '[chttpd]\nport = 0\nbind_address = 127.0.0.1\nenable_cors = true\nmax_http_request_size = 2000\n\n[cors]\norigins = *\n');
  const other = await startServer({ dataDir, port: null, args: ['--config', localIni] });
  try {
    // Port 0 came from [chttpd], not [httpd]'s 5984: the real port is reported where it was read.
    assert.notEqual(other.port, 5984);
    const oc = client(other.url);
    assert.equal((await oc.get('/_config/chttpd/port')).body, String(other.port));
    const cors = await oc.get('/', { headers: { Origin: 'http://app.example' } });
    assert.equal(cors.headers['access-control-allow-origin'], 'http://app.example');
    assert.equal((await oc.put('/big')).status, 201);
    assert.equal((await oc.put('/big/doc', { text: 'x'.repeat(5000) })).status, 413);
  } finally {
    await other.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------------- /_all_dbs

test('_all_dbs is a sorted array that includes created and excludes deleted databases', async () => {
  for (const name of ['srv-zeta', 'srv-alpha', 'srv-mid/dle', 'srv-beta']) {
    assert.equal((await c.put(`/${encodeURIComponent(name)}`)).status, 201);
  }
  let r = await c.get('/_all_dbs');
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body));
  assert.deepEqual(r.body, [...r.body].sort(), 'sorted');
  for (const name of ['srv-zeta', 'srv-alpha', 'srv-mid/dle', 'srv-beta']) assert.ok(r.body.includes(name), name);
  assert.equal(new Set(r.body).size, r.body.length, 'no duplicates');

  assert.equal((await c.del('/srv-alpha')).status, 200);
  r = await c.get('/_all_dbs');
  assert.ok(!r.body.includes('srv-alpha'));
  assert.ok(r.body.includes('srv-beta'));
  assert.deepEqual(r.body, [...r.body].sort());
});

test('_all_dbs does not list a database whose creation was refused', async () => {
  assert.equal((await c.put('/Srv-Upper')).status, 400);
  const r = await c.get('/_all_dbs');
  assert.ok(!r.body.includes('Srv-Upper'));
  assert.ok(!r.body.includes('srv-upper'));
});

// --------------------------------------------------------------------------------- /_uuids

test('_uuids gives one uuid by default and count of them when asked', async () => {
  await setConfig('uuids', 'algorithm', 'random');
  const one = await uuids();
  assert.equal(one.length, 1);
  assert.match(one[0]!, /^[0-9a-f]{32}$/);
  const explicitOne = await uuids(1);
  assert.equal(explicitOne.length, 1);
  assert.notEqual(explicitOne[0], one[0]);

  const many = await uuids(17);
  assert.equal(many.length, 17);
  assert.equal(new Set(many).size, 17);
  for (const u of many) assert.match(u, /^[0-9a-f]{32}$/);
});

test('_uuids?count=0 is an empty list', async () => {
  assert.deepEqual(await uuids(0), []);
});

test('_uuids gives 1000 unique uuids at the default maximum', async () => {
  const list = await uuids(1000);
  assert.equal(list.length, 1000);
  assert.equal(new Set(list).size, 1000);
});

test('_uuids carries cache-busting headers: ETag, Expires in the past, Pragma no-cache', async () => {
  const r = await c.get('/_uuids?count=2');
  assert.equal(r.status, 200);
  assert.equal(typeof r.headers.etag, 'string');
  assert.ok((r.headers.etag as string).length > 2);
  assert.equal(r.headers.pragma, 'no-cache');
  // CouchDB 1.6's fixed date in the past (couch_httpd_misc_handlers:handle_uuids_req).
  assert.equal(r.headers.expires, 'Mon, 01 Jan 1990 00:00:00 GMT');
  const expires = Date.parse(String(r.headers.expires));
  assert.ok(Number.isFinite(expires), `Expires is a date: ${r.headers.expires}`);
  assert.ok(expires < Date.now(), 'Expires is in the past');
  assert.match(String(r.headers['cache-control']), /no-cache/);
  assert.match(String(r.headers['cache-control']), /must-revalidate/);
  const again = await c.get('/_uuids?count=2');
  assert.notEqual(again.headers.etag, r.headers.etag, 'a new list has a new ETag');
});

test('_uuids count above uuids/max_count is refused with 403 forbidden (CouchDB 1.6)', async () => {
  const r = await c.get('/_uuids?count=1001');
  assert.equal(r.status, 403);
  assert.equal(r.body.error, 'forbidden');
  assert.equal(r.body.reason, 'count parameter too large');

  await setConfig('uuids', 'max_count', '5');
  try {
    assert.equal((await uuids(5)).length, 5);
    const over = await c.get('/_uuids?count=6');
    assert.equal(over.status, 403);
    assert.equal(over.body.error, 'forbidden');
  } finally {
    await setConfig('uuids', 'max_count', '1000');
  }
});

test('_uuids answers a count that is not an integer, or a negative one, with a 400 (CouchDB 1.6 crashes on them)', async () => {
  // handle_uuids_req reads the count with list_to_integer (badarg) and makes the list with
  // lists:seq(1, Count), which has no clause for a negative count (function_clause): invalid
  // parameters, 400s here as in CouchDB 3.
  for (const bad of ['abc', '1.5', '', '1e3', '0x10', ' 5']) {
    const r = await c.get(`/_uuids?count=${encodeURIComponent(bad)}`);
    assert.equal(r.status, 400, `count=${bad}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'count must be an integer' }, `count=${bad}`);
  }
  for (const bad of ['-1', '-1000']) {
    const r = await c.get(`/_uuids?count=${bad}`);
    assert.equal(r.status, 400, `count=${bad}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'count must be a non-negative integer' }, `count=${bad}`);
  }
  // list_to_integer takes a sign.
  assert.equal((await c.get('/_uuids?count=%2B2')).body.uuids.length, 2);
  assert.deepEqual((await c.get('/_uuids?count=-0')).body.uuids, []);
});

test('_uuids random algorithm: 32 hex digits without a shared prefix', async () => {
  await setConfig('uuids', 'algorithm', 'random');
  const list = await uuids(20);
  for (const u of list) assert.match(u, /^[0-9a-f]{32}$/);
  const prefixes = new Set(list.map((u) => u.slice(0, 26)));
  assert.ok(prefixes.size > 1, 'random uuids do not share the sequential 26-digit prefix');
});

test('_uuids sequential algorithm: a shared 26-hex prefix and a monotonically increasing suffix', async () => {
  await setConfig('uuids', 'algorithm', 'sequential');
  const first = await uuids(100);
  const second = await uuids(100);
  const all = [...first, ...second];
  let prefixChanges = 0;
  for (let i = 1; i < all.length; i++) {
    const prev = all[i - 1]!;
    const cur = all[i]!;
    assert.match(cur, /^[0-9a-f]{32}$/);
    if (prev.slice(0, 26) !== cur.slice(0, 26)) {
      prefixChanges++; // the suffix overflowed and a new random prefix was chosen
      continue;
    }
    const step = Number.parseInt(cur.slice(26), 16) - Number.parseInt(prev.slice(26), 16);
    assert.ok(step >= 1 && step <= 0xffe, `suffix increases by 1..0xffe, got ${step} (${prev} -> ${cur})`);
    assert.ok(cur > prev, 'sequential ids sort in generation order');
  }
  assert.ok(prefixChanges <= 1, `prefix changed ${prefixChanges} times in 200 ids`);
});

test('_uuids utc_random algorithm: 14 hex of epoch microseconds, increasing, then 18 random hex', async () => {
  await setConfig('uuids', 'algorithm', 'utc_random');
  const lower = Date.now() * 1000;
  const first = await uuids(50);
  const second = await uuids(50);
  const upper = Date.now() * 1000;
  const all = [...first, ...second];
  for (const u of all) assert.match(u, /^[0-9a-f]{32}$/);
  const times = all.map((u) => Number.parseInt(u.slice(0, 14), 16));
  // The clock check only guards against a wrong unit or epoch; the margin is generous.
  assert.ok(times[0]! >= lower - 60_000_000 && times[times.length - 1]! <= upper + 60_000_000,
    `time prefix ${times[0]} is microseconds since 1970 (now ~${lower})`);
  for (let i = 1; i < times.length; i++) {
    assert.ok(times[i]! > times[i - 1]!, `time prefix increases: ${all[i - 1]} -> ${all[i]}`);
  }
  assert.ok(new Set(all.map((u) => u.slice(14))).size > 1, 'random suffixes differ');
});

test('_uuids utc_id algorithm: time prefix followed by uuids/utc_id_suffix', async () => {
  await setConfig('uuids', 'utc_id_suffix', 'settee-node-1');
  await setConfig('uuids', 'algorithm', 'utc_id');
  const list = await uuids(5);
  for (const u of list) {
    assert.match(u, /^[0-9a-f]{14}settee-node-1$/);
  }
  const times = list.map((u) => Number.parseInt(u.slice(0, 14), 16));
  for (let i = 1; i < times.length; i++) assert.ok(times[i]! > times[i - 1]!);
});

test('_uuids switches algorithm live on each PUT /_config/uuids/algorithm', async () => {
  await setConfig('uuids', 'algorithm', 'utc_id');
  assert.match((await uuids(1))[0]!, /^[0-9a-f]{14}settee-node-1$/);

  await setConfig('uuids', 'algorithm', 'random');
  const random = await uuids(10);
  for (const u of random) assert.match(u, /^[0-9a-f]{32}$/);
  assert.ok(new Set(random.map((u) => u.slice(0, 26))).size > 1);

  await setConfig('uuids', 'algorithm', 'sequential');
  const seq = await uuids(10);
  let shared = 0;
  for (let i = 1; i < seq.length; i++) if (seq[i]!.slice(0, 26) === seq[i - 1]!.slice(0, 26)) shared++;
  assert.ok(shared >= 8, `sequential ids share their prefix (${shared}/9)`);
});

test('POST /db without _id uses the configured uuid algorithm for the new id', async () => {
  await setConfig('uuids', 'algorithm', 'utc_id');
  assert.equal((await c.put('/srv-uuid-docs')).status, 201);
  const r = await c.post('/srv-uuid-docs', { a: 1 });
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.id, /^[0-9a-f]{14}settee-node-1$/);
  await setConfig('uuids', 'algorithm', 'sequential');
});

// -------------------------------------------------------------------------------- /_restart

test('POST /_restart answers 202 {ok:true} and the server keeps answering', async () => {
  const r = await c.post('/_restart', {});
  assert.equal(r.status, 202, r.text);
  assert.deepEqual(r.body, { ok: true });
  const welcome = await eventually(() => c.get('/'), (x) => x.status === 200);
  assert.equal(welcome.status, 200);
  assert.equal(welcome.body.couchdb, 'Welcome');
  const dbs = await eventually(() => c.get('/_all_dbs'), (x) => x.status === 200);
  assert.ok(dbs.body.includes('srv-beta'), 'databases are still there after the restart');
  const doc = await c.put('/srv-beta/after-restart', { ok: 1 });
  assert.equal(doc.status, 201, doc.text);
});

test('requests sent while the server restarts wait for it and are answered by the restarted server', async () => {
  assert.equal((await c.put('/srv-restart-window')).status, 201);
  assert.equal((await c.put('/srv-restart-window/_design/d', { views: { v: { map: 'function (doc) { emit(doc.n, null); }' } } })).status, 201);
  let written = 0;
  for (let round = 0; round < 5; round++) {
    assert.equal((await c.post('/_restart', {})).status, 202);
    // Without waiting for the restart, spread over its course: each request must find its
    // database, and every write must stay.
    const answers: Promise<{ status: number; text: string }>[] = [];
    for (let i = 0; i < 20; i++) {
      answers.push(c.put(`/srv-restart-window/doc-${round}-${i}`, { n: i }), c.get('/srv-restart-window/_design/d/_view/v'));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    for (const a of await Promise.all(answers)) assert.ok(a.status === 200 || a.status === 201, `${a.status} ${a.text}`);
    written += 20;
  }
  const info = (await c.get('/srv-restart-window')).body;
  assert.equal(info.doc_count, written + 1);
  assert.equal(info.update_seq, written + 1);
  assert.equal((await c.get('/srv-restart-window/_design/d/_view/v')).body.total_rows, written);
  await server.restart();
  assert.equal((await c.get('/srv-restart-window')).body.doc_count, written + 1);
});

test('POST /_restart drops configuration changes made with X-Couch-Persist: false', async () => {
  const put = await c.put('/_config/srv_restart/volatile', 'yes', { headers: { 'X-Couch-Persist': 'false' } });
  assert.equal(put.status, 200);
  await setConfig('srv_restart', 'kept', 'yes');
  assert.equal((await c.get('/_config/srv_restart/volatile')).body, 'yes');
  assert.equal((await c.post('/_restart', {})).status, 202);
  const gone = await eventually(() => c.get('/_config/srv_restart/volatile'), (x) => x.status === 404);
  assert.equal(gone.status, 404);
  assert.equal((await c.get('/_config/srv_restart/kept')).body, 'yes');
});

test('POST /_restart requires Content-Type application/json (415) and only POST (405)', async () => {
  const noType = await c.request('POST', '/_restart');
  assert.equal(noType.status, 415);
  assert.equal(noType.body.error, 'bad_content_type');
  const get = await c.get('/_restart');
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, 'POST');
  assert.equal((await c.get('/')).status, 200);
});

// ------------------------------------------------------------------------------------ /_log

test('GET /_log is the plain-text tail of the log, including recent requests', async () => {
  const marker = `srvlogmarker${Date.now()}`;
  assert.equal((await c.get(`/_all_dbs?${marker}=1`)).status, 200);
  const r = await eventually(() => c.get('/_log?bytes=100000'), (x) => x.text.includes(marker));
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain/);
  assert.ok(r.text.includes(marker), 'the request line is in the log');
  assert.match(r.text, /\[info\]/);
});

test('GET /_log?bytes=N answers at most N bytes, the end of the log', async () => {
  // Make sure the log is longer than what we ask for.
  for (let i = 0; i < 5; i++) await c.get(`/_all_dbs?filler=${i}`);
  const small = await c.get('/_log?bytes=120');
  assert.equal(small.status, 200);
  assert.equal(Buffer.byteLength(small.text), 120);
  assert.equal(Number(small.headers['content-length']), 120);
  const def = await c.get('/_log');
  assert.ok(Buffer.byteLength(def.text) <= 1000, 'default is 1000 bytes');
  assert.ok(Buffer.byteLength(def.text) > 120);
});

test('GET /_log rejects bytes beyond log_max_chunk_size, negative numbers and others that are not integers with 400', async () => {
  assert.equal((await c.get('/_log?bytes=1000001')).status, 400);
  assert.equal((await c.get('/_log?bytes=-5')).status, 400);
  assert.equal((await c.get('/_log?offset=-5')).status, 400);
  // handle_log_req reads both with list_to_integer (1.6 crashes on others, 500 badarg).
  for (const [path, name] of [['/_log?bytes=abc', 'bytes'], ['/_log?offset=x', 'offset'], ['/_log?bytes=', 'bytes']] as const) {
    const r = await c.get(path);
    assert.equal(r.status, 400, `${path}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: `${name} must be an integer` }, path);
  }
});

test('POST /_log writes a message at the given level; an unknown level is 400, and so is a message that is not a string', async () => {
  const message = `srv-posted-${Date.now()}`;
  const ok = await c.post('/_log', { level: 'info', message });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { ok: true });
  const r = await eventually(() => c.get('/_log?bytes=5000'), (x) => x.text.includes(message));
  assert.ok(r.text.includes(message));
  const bad = await c.post('/_log', { level: 'loud', message: 'x' });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, { error: "Unrecognized log level 'loud'" });
  // CouchDB 1.6 converts the message with binary_to_list first (a 500 badarg on anything else):
  // a missing or non-string one is refused whatever the level.
  for (const body of [{ level: 'info' }, { level: 'loud', message: 5 }]) {
    const r = await c.post('/_log', body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'message must be a string' });
  }
});

// ------------------------------------------------------------------------------ favicon.ico

test('GET /favicon.ico is a non-empty icon with long-lived caching', async () => {
  const r = await getBytes(server.url, '/favicon.ico');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^image\//);
  assert.ok(r.body.length > 0);
  assert.equal(Number(r.headers['content-length']), r.body.length);
  assert.deepEqual([...r.body.subarray(0, 4)], [0, 0, 1, 0], 'ICO magic number');
  assert.equal(r.headers['cache-control'], 'public, max-age=31536000');
  // handle_favicon_req also sends an Expires date 365 days ahead of the answer's Date.
  const expires = Date.parse(String(r.headers['expires']));
  const date = Date.parse(String(r.headers['date']));
  assert.ok(Number.isFinite(expires) && Number.isFinite(date), JSON.stringify(r.headers));
  assert.ok(Math.abs(expires - date - 365 * 86400000) <= 2000, `${r.headers['expires']} vs ${r.headers['date']}`);
  const head = await c.head('/favicon.ico');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
});

// --------------------------------------------------------------------------- /_active_tasks

test('GET /_active_tasks is an array of task objects', async () => {
  const r = await c.get('/_active_tasks');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.ok(Array.isArray(r.body));
  for (const task of r.body) {
    assert.equal(typeof task.type, 'string');
    assert.equal(typeof task.pid, 'string');
    assert.equal(typeof task.started_on, 'number');
    assert.equal(typeof task.updated_on, 'number');
  }
  const post = await c.post('/_active_tasks', {});
  assert.equal(post.status, 405);
});

test('the server still answers GET / at the end', async () => {
  const r = await c.get('/');
  assert.equal(r.status, 200);
  assert.equal(r.body.couchdb, 'Welcome');
  assert.equal(server.process.exitCode, null);
});
