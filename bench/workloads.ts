import { Client, openLineStream, type StreamedReply } from './http.js';
import { median, now, percentile, prng } from './stats.js';

/** Where a workload sends its requests. */
export interface Target {
  base: string;
  headers: Record<string, string>;
}

/** One measured number; `detail` carries supporting numbers for the JSON output. */
export interface Figure {
  value: number;
  unit: string;
  detail?: Record<string, number | string | boolean>;
}

export type Figures = Record<string, Figure>;

const enc = encodeURIComponent;
const docPath = (db: string, id: string): string => `/${enc(db)}/${enc(id)}`;
const ms = (seconds: number): number => seconds * 1000;

const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.';

/** A small document body (~200 bytes as JSON, with its _id). */
export function makeDoc(id: string, n: number): Record<string, unknown> {
  return {
    _id: id,
    type: 'bench',
    n,
    name: `item ${n}`,
    tags: ['alpha', 'beta', 'gamma'],
    created: '2024-01-01T00:00:00.000Z',
    text: FILLER,
  };
}

const pad = (n: number): string => String(n).padStart(8, '0');

export async function createDb(target: Target, db: string): Promise<void> {
  const client = new Client(target.base, target.headers);
  try {
    await client.expect('PUT', `/${enc(db)}`, [201, 202]);
  } finally {
    client.close();
  }
}

/**
 * Runs `clients` workers, each with its own keep-alive connection, calling `step` until it
 * returns false or `deadline` passes. The first error stops every worker and is rethrown.
 */
async function pool(
  target: Target,
  clients: number,
  deadline: number,
  step: (worker: number, client: Client) => Promise<boolean>,
): Promise<void> {
  let failure: unknown;
  let stop = false;
  const worker = async (w: number): Promise<void> => {
    const client = new Client(target.base, target.headers);
    try {
      while (!stop && now() < deadline) {
        if (!(await step(w, client))) break;
      }
    } catch (err) {
      if (!stop) failure = err;
      stop = true;
    } finally {
      client.close();
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, w) => worker(w)));
  if (failure !== undefined) throw failure;
}

function latencyDetail(latencies: number[]): Record<string, number> {
  return { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}

// 1. Single-document PUTs of new ids with concurrent clients.
export async function singlePuts(
  target: Target,
  db: string,
  opts: { docs: number; clients: number; capSeconds: number },
): Promise<{ figures: Figures; ids: string[] }> {
  const ids: string[] = [];
  const latencies: number[] = [];
  let next = 0;
  const started = now();
  await pool(target, opts.clients, started + ms(opts.capSeconds), async (_w, client) => {
    const n = next++;
    if (n >= opts.docs) return false;
    const id = `put-${pad(n)}`;
    const t0 = now();
    await client.expect('PUT', docPath(db, id), [201, 202], JSON.stringify(makeDoc(id, n)));
    latencies.push(now() - t0);
    ids.push(id);
    return true;
  });
  const seconds = (now() - started) / 1000;
  return {
    ids,
    figures: {
      put_single: {
        value: ids.length / seconds,
        unit: 'docs/s',
        detail: { docs: ids.length, requested: opts.docs, clients: opts.clients, seconds, capped: ids.length < opts.docs, ...latencyDetail(latencies) },
      },
    },
  };
}

// 2. _bulk_docs in batches, one client, one batch at a time. Each batch's body is built between
// requests, off the clock: the figure is the documents over the time the server took to answer
// (request sent to response read), so the benchmark's own JSON work does not dilute it.
export async function bulkDocs(
  target: Target,
  db: string,
  opts: { batches: number; batchSize: number; capSeconds: number; idPrefix?: string },
): Promise<{ figures: Figures; ids: string[] }> {
  const prefix = opts.idPrefix ?? 'bulk-';
  const client = new Client(target.base, target.headers);
  const ids: string[] = [];
  const latencies: number[] = [];
  const deadline = now() + ms(opts.capSeconds);
  try {
    for (let b = 0; b < opts.batches && now() < deadline; b++) {
      const docs = [];
      for (let i = 0; i < opts.batchSize; i++) {
        const n = b * opts.batchSize + i;
        docs.push(makeDoc(`${prefix}${pad(n)}`, n));
      }
      const body = JSON.stringify({ docs });
      const t0 = now();
      const reply = await client.expect('POST', `/${enc(db)}/_bulk_docs`, [201, 202], body, 300_000);
      latencies.push(now() - t0);
      const results = JSON.parse(reply.body) as { id: string; ok?: boolean; error?: string; reason?: string }[];
      const failed = results.find((r) => !r.ok);
      if (failed) throw new Error(`_bulk_docs: ${failed.id}: ${failed.error} ${failed.reason ?? ''}`);
      for (const r of results) ids.push(r.id);
    }
  } finally {
    client.close();
  }
  const seconds = latencies.reduce((sum, l) => sum + l, 0) / 1000;
  const requested = opts.batches * opts.batchSize;
  return {
    ids,
    figures: {
      bulk_docs: {
        value: ids.length / seconds,
        unit: 'docs/s',
        detail: { docs: ids.length, requested, batchSize: opts.batchSize, seconds, timed: 'requests only', capped: ids.length < requested, ...latencyDetail(latencies) },
      },
    },
  };
}

// 3. Random GETs of existing documents with concurrent clients, for a fixed time.
export async function randomGets(
  target: Target,
  db: string,
  ids: readonly string[],
  opts: { clients: number; seconds: number; maxRequests: number },
): Promise<Figures> {
  if (ids.length === 0) throw new Error('no documents to read (the write workloads stored none)');
  const latencies: number[] = [];
  // Each client has its own seeded generator, so every server gets the same sequence of ids.
  const randoms = Array.from({ length: opts.clients }, (_, w) => prng(1000 + w));
  let issued = 0;
  const started = now();
  await pool(target, opts.clients, started + ms(opts.seconds), async (w, client) => {
    if (issued++ >= opts.maxRequests) return false;
    const random = randoms[w]!;
    const id = ids[Math.floor(random() * ids.length)]!;
    const t0 = now();
    await client.expect('GET', docPath(db, id), [200]);
    latencies.push(now() - t0);
    return true;
  });
  const seconds = (now() - started) / 1000;
  return {
    get_random: {
      value: latencies.length / seconds,
      unit: 'req/s',
      detail: { requests: latencies.length, clients: opts.clients, seconds, docs: ids.length, ...latencyDetail(latencies) },
    },
  };
}

/** Times one full read (until the last byte arrives), then parses it to count the rows. */
async function timedFullRead(client: Client, path: string, rowsOf: (body: unknown) => unknown[]): Promise<{ rows: number; seconds: number; bytes: number }> {
  const t0 = now();
  const reply = await client.expect('GET', path, [200], undefined, 600_000);
  const seconds = (now() - t0) / 1000;
  return { rows: rowsOf(JSON.parse(reply.body)).length, seconds, bytes: Buffer.byteLength(reply.body) };
}

/** Repeats a full read up to `reps` times (at least once, then while under the cap); figure is the median rate. */
async function repeatedScan(
  target: Target,
  path: string,
  rowsOf: (body: unknown) => unknown[],
  opts: { reps: number; capSeconds: number; expectedRows: number },
): Promise<Figure> {
  const client = new Client(target.base, target.headers);
  const rates: number[] = [];
  let last = { rows: 0, seconds: 0, bytes: 0 };
  const deadline = now() + ms(opts.capSeconds);
  try {
    for (let r = 0; r < opts.reps && (r === 0 || now() < deadline); r++) {
      last = await timedFullRead(client, path, rowsOf);
      rates.push(last.rows / last.seconds);
    }
  } finally {
    client.close();
  }
  if (last.rows === 0) throw new Error(`GET ${path} returned no rows`);
  return {
    value: median(rates),
    unit: 'rows/s',
    detail: { rows: last.rows, expectedRows: opts.expectedRows, reps: rates.length, bytes: last.bytes, bestRowsPerS: Math.max(...rates) },
  };
}

// 4a. _all_docs full scans, without and with the documents.
export async function allDocsScan(
  target: Target,
  db: string,
  opts: { reps: number; capSeconds: number; expectedRows: number },
): Promise<Figures> {
  const rows = (body: unknown): unknown[] => (body as { rows: unknown[] }).rows;
  return {
    all_docs_scan: await repeatedScan(target, `/${enc(db)}/_all_docs`, rows, opts),
    all_docs_scan_docs: await repeatedScan(target, `/${enc(db)}/_all_docs?include_docs=true`, rows, opts),
  };
}

type Row = { key: string };

/**
 * Walks _all_docs page by page (include_docs=true, 100 rows a page) from the start, again and
 * again, for a fixed time. `nextPath` builds the request for a page given the previous page's
 * rows, or undefined for the first page.
 */
async function pageWalk(
  target: Target,
  opts: { seconds: number; maxPages: number },
  firstPath: string,
  nextPage: (rows: Row[]) => { path: string | undefined; shown: number },
): Promise<Figure> {
  const client = new Client(target.base, target.headers);
  let pages = 0;
  let rowsShown = 0;
  let passes = 0;
  const latencies: number[] = [];
  const started = now();
  const deadline = started + ms(opts.seconds);
  try {
    let path = firstPath;
    while (pages < opts.maxPages && now() < deadline) {
      const t0 = now();
      const reply = await client.expect('GET', path, [200]);
      latencies.push(now() - t0);
      const next = nextPage((JSON.parse(reply.body) as { rows: Row[] }).rows);
      pages++;
      rowsShown += next.shown;
      if (next.path === undefined) {
        passes++;
        path = firstPath;
      } else {
        path = next.path;
      }
    }
  } finally {
    client.close();
  }
  const seconds = (now() - started) / 1000;
  return {
    value: pages / seconds,
    unit: 'pages/s',
    detail: { pages, rows: rowsShown, completePasses: passes, seconds, ...latencyDetail(latencies) },
  };
}

// 4b. Paged _all_docs queries, 100 rows a page.
export async function allDocsPaging(
  target: Target,
  db: string,
  opts: { pageSize: number; seconds: number; maxPages: number },
): Promise<Figures> {
  const size = opts.pageSize;
  const base = `/${enc(db)}/_all_docs?include_docs=true`;
  const key = (k: string): string => enc(JSON.stringify(k));
  // limit=N, next page from the last row's key with skip=1 (the pattern CouchDB's guide shows).
  const startkeySkip = await pageWalk(target, opts, `${base}&limit=${size}`, (rows) => ({
    shown: rows.length,
    path: rows.length < size ? undefined : `${base}&limit=${size}&startkey=${key(rows[size - 1]!.key)}&skip=1`,
  }));
  // Skip-free: limit=N+1, the extra row's key starts the next page.
  const keyed = await pageWalk(target, opts, `${base}&limit=${size + 1}`, (rows) => ({
    shown: Math.min(rows.length, size),
    path: rows.length <= size ? undefined : `${base}&limit=${size + 1}&startkey=${key(rows[size]!.key)}`,
  }));
  return { all_docs_page_skip1: startkeySkip, all_docs_page_keyed: keyed };
}

// 5. Read-modify-write: each client GETs one of its own documents and PUTs it back with the rev.
export async function readModifyWrite(
  target: Target,
  db: string,
  opts: { clients: number; docsPerClient: number; seconds: number; maxUpdates: number },
): Promise<Figures> {
  const idOf = (w: number, k: number): string => `rmw-${String(w).padStart(2, '0')}-${pad(k)}`;
  const setup = new Client(target.base, target.headers);
  try {
    const docs = [];
    for (let w = 0; w < opts.clients; w++) {
      for (let k = 0; k < opts.docsPerClient; k++) docs.push(makeDoc(idOf(w, k), k));
    }
    await setup.expect('POST', `/${enc(db)}/_bulk_docs`, [201, 202], JSON.stringify({ docs }));
  } finally {
    setup.close();
  }
  const turns = new Array<number>(opts.clients).fill(0);
  const latencies: number[] = [];
  let issued = 0;
  const started = now();
  await pool(target, opts.clients, started + ms(opts.seconds), async (w, client) => {
    if (issued++ >= opts.maxUpdates) return false;
    const id = idOf(w, turns[w]++ % opts.docsPerClient);
    const t0 = now();
    const doc = JSON.parse((await client.expect('GET', docPath(db, id), [200])).body) as { n: number };
    doc.n += 1;
    await client.expect('PUT', docPath(db, id), [201, 202], JSON.stringify(doc));
    latencies.push(now() - t0);
    return true;
  });
  const seconds = (now() - started) / 1000;
  return {
    rmw: {
      value: latencies.length / seconds,
      unit: 'updates/s',
      detail: { updates: latencies.length, clients: opts.clients, docsPerClient: opts.docsPerClient, seconds, ...latencyDetail(latencies) },
    },
  };
}

// 6a. _changes?since=0, read in full.
export async function changesScan(
  target: Target,
  db: string,
  opts: { reps: number; capSeconds: number; expectedRows: number },
): Promise<Figures> {
  const results = (body: unknown): unknown[] => (body as { results: unknown[] }).results;
  return { changes_scan: await repeatedScan(target, `/${enc(db)}/_changes?since=0`, results, opts) };
}

// 6b. Latency from a PUT being sent until its change line arrives on a continuous feed.
/**
 * A continuous `_changes` feed whose rows are awaited by document id: `arrival(id, ms)` resolves
 * with the moment the row arrived, or undefined after `ms`.
 */
export function watchArrivals(target: Target, path: string): {
  opened: Promise<unknown>;
  arrival(id: string, timeoutMs: number): Promise<number | undefined>;
  close(): void;
} {
  const waiters = new Map<string, (at: number) => void>();
  const feed = openLineStream(target.base, path, target.headers, (line) => {
    const at = now();
    let change: { id?: unknown };
    try {
      change = JSON.parse(line) as { id?: unknown };
    } catch {
      return;
    }
    if (typeof change.id === 'string') waiters.get(change.id)?.(at);
  });
  const arrival = (id: string, timeoutMs: number): Promise<number | undefined> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(id);
        resolve(undefined);
      }, timeoutMs);
      waiters.set(id, (at) => {
        clearTimeout(timer);
        waiters.delete(id);
        resolve(at);
      });
    });
  return { opened: feed.opened, arrival, close: () => feed.close() };
}

export async function feedLatency(
  target: Target,
  db: string,
  opts: { writes: number; capSeconds: number; waitMs: number },
): Promise<Figures> {
  const feed = watchArrivals(target, `/${enc(db)}/_changes?feed=continuous&since=now&heartbeat=1000`);
  const arrival = feed.arrival;
  const client = new Client(target.base, target.headers);
  const put = (id: string, n: number): Promise<unknown> => client.expect('PUT', docPath(db, id), [201, 202], JSON.stringify(makeDoc(id, n)));
  const latencies: number[] = [];
  try {
    await feed.opened;
    // The feed may register a moment after its headers: write until one change comes through.
    let live = false;
    for (let i = 0; i < 20 && !live; i++) {
      const seen = arrival(`warmup-${i}`, 500);
      await put(`warmup-${i}`, i);
      live = (await seen) !== undefined;
    }
    if (!live) throw new Error('the continuous feed delivered no change for 20 warm-up writes');

    const deadline = now() + ms(opts.capSeconds);
    for (let i = 0; i < opts.writes && now() < deadline; i++) {
      const id = `feed-${pad(i)}`;
      const seen = arrival(id, opts.waitMs);
      const t0 = now();
      await put(id, i);
      const at = await seen;
      if (at === undefined) throw new Error(`change for ${id} did not arrive within ${opts.waitMs} ms`);
      latencies.push(at - t0);
    }
  } finally {
    feed.close();
    client.close();
  }
  const detail = {
    writes: latencies.length,
    requested: opts.writes,
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    maxMs: Math.max(...latencies),
  };
  return {
    feed_latency_p50: { value: percentile(latencies, 50), unit: 'ms', detail },
    feed_latency_p99: { value: percentile(latencies, 99), unit: 'ms', detail },
  };
}

// 7. Attachments.

const MiB = 2 ** 20;
/** Stride between the pool offsets of consecutive bodies: a prime, so offsets do not repeat. */
const STRIDE = 4099;

/** Deterministic pseudo-random bytes, so every server stores the same (incompressible) content. */
export function randomPool(bytes: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(bytes - (bytes % 4));
  const random = prng(seed);
  for (let i = 0; i < out.length; i += 4) out.writeUInt32LE(Math.floor(random() * 4294967296), i);
  return out;
}

/** The n-th distinct window of `bytes` bytes of the pool (distinct content, so distinct digests). */
function poolSlice(content: Buffer, n: number, bytes: number): Buffer {
  if (bytes > content.length) throw new Error(`attachment pool of ${content.length} bytes is smaller than ${bytes}`);
  const span = content.length - bytes + 1;
  const offset = (n * STRIDE) % span;
  return content.subarray(offset, offset + bytes);
}

/** Checks a body arriving in pieces against the expected bytes, given chunk by chunk, without copying. */
class StreamCheck {
  private chunk = 0;
  private offset = 0;
  private current: Buffer;
  mismatchAt = -1;
  received = 0;

  constructor(private readonly expectedChunk: (i: number) => Buffer | undefined) {
    this.current = expectedChunk(0) ?? Buffer.alloc(0);
  }

  feed(piece: Buffer): void {
    let pos = 0;
    while (pos < piece.length && this.mismatchAt < 0) {
      if (this.offset === this.current.length) {
        const next = this.expectedChunk(++this.chunk);
        if (!next) {
          this.mismatchAt = this.received + pos; // longer than expected
          break;
        }
        this.current = next;
        this.offset = 0;
      }
      const n = Math.min(piece.length - pos, this.current.length - this.offset);
      if (!piece.subarray(pos, pos + n).equals(this.current.subarray(this.offset, this.offset + n))) {
        this.mismatchAt = this.received + pos;
      }
      pos += n;
      this.offset += n;
    }
    this.received += piece.length;
  }
}

const attPath = (db: string, id: string, name: string): string => `${docPath(db, id)}/${enc(name)}`;
const ATT_NAME = 'blob.bin';
const ATT_TYPE = 'application/octet-stream';

function failed(what: string, reply: StreamedReply): Error {
  return new Error(`${what} answered ${reply.status}: ${reply.body.toString('utf8', 0, 300)}`);
}

/** Attachments the upload workload stored: doc ids and the pool window each one holds. */
export interface StoredAttachments {
  db: string;
  bytes: number;
  items: { id: string; n: number }[];
}

// 7a. Standalone attachment PUTs, each creating a new document, with concurrent clients.
export async function attachmentUploads(
  target: Target,
  db: string,
  content: Buffer,
  opts: { count: number; bytes: number; clients: number; capSeconds: number },
): Promise<{ figures: Figures; stored: StoredAttachments }> {
  const stored: StoredAttachments = { db, bytes: opts.bytes, items: [] };
  const latencies: number[] = [];
  let next = 0;
  const started = now();
  await pool(target, opts.clients, started + ms(opts.capSeconds), async (_w, client) => {
    const n = next++;
    if (n >= opts.count) return false;
    const id = `att-${pad(n)}`;
    const t0 = now();
    const reply = await client.send('PUT', attPath(db, id, ATT_NAME), {
      headers: { 'Content-Type': ATT_TYPE, Accept: 'application/json' },
      body: poolSlice(content, n, opts.bytes),
    });
    if (reply.status !== 201 && reply.status !== 202) throw failed(`PUT ${attPath(db, id, ATT_NAME)}`, reply);
    latencies.push(now() - t0);
    stored.items.push({ id, n });
    return true;
  });
  const seconds = (now() - started) / 1000;
  const uploads = stored.items.length;
  const detail = {
    uploads,
    requested: opts.count,
    docs: uploads,
    bytesEach: opts.bytes,
    clients: opts.clients,
    seconds,
    capped: uploads < opts.count,
    ...latencyDetail(latencies),
  };
  return {
    stored,
    figures: {
      att_upload: { value: (uploads * opts.bytes) / MiB / seconds, unit: 'MB/s', detail },
      att_upload_rate: { value: uploads / seconds, unit: 'uploads/s', detail },
    },
  };
}

// 7b. Standalone attachment GETs of what 7a stored, each once, checked byte for byte as they stream in.
export async function attachmentDownloads(
  target: Target,
  content: Buffer,
  stored: StoredAttachments,
  opts: { count: number; clients: number; capSeconds: number },
): Promise<Figures> {
  if (stored.items.length === 0) throw new Error('no attachments to read (the upload workload stored none)');
  const latencies: number[] = [];
  let next = 0;
  let bytes = 0;
  const started = now();
  await pool(target, opts.clients, started + ms(opts.capSeconds), async (_w, client) => {
    const n = next++;
    if (n >= opts.count) return false;
    const item = stored.items[n % stored.items.length]!;
    const expected = poolSlice(content, item.n, stored.bytes);
    const check = new StreamCheck((i) => (i === 0 ? expected : undefined));
    const path = attPath(stored.db, item.id, ATT_NAME);
    const t0 = now();
    const reply = await client.send('GET', path, { onBody: (piece) => check.feed(piece), keepBytes: 1024 });
    if (reply.status !== 200) throw failed(`GET ${path}`, reply);
    latencies.push(now() - t0);
    if (check.mismatchAt >= 0 || reply.bytes !== stored.bytes) {
      throw new Error(`GET ${path}: ${reply.bytes} bytes, ${stored.bytes} expected` + (check.mismatchAt >= 0 ? `, first difference at byte ${check.mismatchAt}` : ''));
    }
    bytes += reply.bytes;
    return true;
  });
  const seconds = (now() - started) / 1000;
  const detail = { downloads: latencies.length, requested: opts.count, bytes, clients: opts.clients, seconds, verified: true, ...latencyDetail(latencies) };
  return {
    att_download: { value: bytes / MiB / seconds, unit: 'MB/s', detail },
    att_download_rate: { value: latencies.length / seconds, unit: 'downloads/s', detail },
  };
}

/** The chunks of a large attachment: distinct pool windows, the last one short. */
function largeChunk(content: Buffer, totalBytes: number, chunkBytes: number, i: number): Buffer | undefined {
  const start = i * chunkBytes;
  if (start >= totalBytes) return undefined;
  return poolSlice(content, i, Math.min(chunkBytes, totalBytes - start));
}

/**
 * 7c. One large attachment PUT, streamed from a generator under a declared Content-Length and
 * written with backpressure: the benchmark never holds more than its pool and the socket buffer.
 */
export async function largeAttachmentUpload(
  target: Target,
  db: string,
  content: Buffer,
  opts: { bytes: number; chunkBytes: number; capSeconds: number; signal?: AbortSignal },
): Promise<{ figures: Figures; id: string }> {
  const id = 'large-attachment';
  const path = attPath(db, id, ATT_NAME);
  function* chunks(): Generator<Buffer> {
    for (let i = 0; ; i++) {
      const chunk = largeChunk(content, opts.bytes, opts.chunkBytes, i);
      if (!chunk) return;
      yield chunk;
    }
  }
  const client = new Client(target.base, target.headers);
  const t0 = now();
  try {
    const reply = await client.send('PUT', path, {
      headers: { 'Content-Type': ATT_TYPE, Accept: 'application/json' },
      body: { length: opts.bytes, chunks: chunks() },
      timeoutMs: ms(opts.capSeconds),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (reply.status !== 201 && reply.status !== 202) throw failed(`PUT ${path}`, reply);
  } finally {
    client.close();
  }
  const seconds = (now() - t0) / 1000;
  const detail = { bytes: opts.bytes, seconds };
  return {
    id,
    figures: {
      att_large_upload: { value: opts.bytes / MiB / seconds, unit: 'MB/s', detail },
      att_large_upload_s: { value: seconds, unit: 's', detail },
    },
  };
}

// 7d. The large attachment read back, streamed, checked against the generator's bytes and discarded.
export async function largeAttachmentDownload(
  target: Target,
  db: string,
  id: string,
  content: Buffer,
  opts: { bytes: number; chunkBytes: number; capSeconds: number; signal?: AbortSignal },
): Promise<Figures> {
  const path = attPath(db, id, ATT_NAME);
  const check = new StreamCheck((i) => largeChunk(content, opts.bytes, opts.chunkBytes, i));
  const client = new Client(target.base, target.headers);
  const t0 = now();
  let reply: StreamedReply;
  try {
    reply = await client.send('GET', path, {
      onBody: (piece) => check.feed(piece),
      keepBytes: 1024,
      timeoutMs: ms(opts.capSeconds),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } finally {
    client.close();
  }
  const seconds = (now() - t0) / 1000;
  if (reply.status !== 200) throw failed(`GET ${path}`, reply);
  if (check.mismatchAt >= 0 || reply.bytes !== opts.bytes) {
    throw new Error(`GET ${path}: ${reply.bytes} bytes, ${opts.bytes} expected` + (check.mismatchAt >= 0 ? `, first difference at byte ${check.mismatchAt}` : ''));
  }
  const detail = { bytes: reply.bytes, seconds, verified: true };
  return {
    att_large_download: { value: reply.bytes / MiB / seconds, unit: 'MB/s', detail },
    att_large_download_s: { value: seconds, unit: 's', detail },
  };
}
