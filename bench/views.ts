/**
 * The view workloads (issue 4): a map/reduce index over N documents of 10 types, built at query
 * time, then key-range queries, whole-index and group_level=1 reduces, and an incremental update
 * after editing 1% of the documents. Every answer is checked (row counts, sums), so a fast wrong
 * answer fails instead of scoring.
 *
 * Every step is bounded by a time cap: a server that cannot finish (pouchdb-server's map/reduce
 * builds indexes in JavaScript over LevelDB) gets n/a with the reason instead of stalling the run.
 */
import { Client } from './http.js';
import { median, now, percentile, prng } from './stats.js';
import type { Figures, Target } from './workloads.js';

const enc = encodeURIComponent;
const ms = (seconds: number): number => seconds * 1000;
const pad = (n: number): string => String(n).padStart(8, '0');

export const VIEW_DDOC = '_design/bench';
export const VIEW_NAME = 'by_type_n';
export const VIEW_MAP = 'function(doc){ emit([doc.type, doc.n], doc.n); }';
export const VIEW_REDUCE = '_sum';
const TYPES = 10;

/** Sizes and caps of the view phase for one server. Caps are in seconds. */
export interface ViewPlan {
  docs: number;
  batchSize: number;
  rangeQueries: number;
  rangeClients: number;
  rangeSpan: number;
  reduceReps: number;
  /**
   * Documents edited before the incremental update: 1% of Settee's corpus, the same number for
   * every server (so a server indexing a smaller corpus re-maps the same work).
   */
  editDocs: number;
  caps: { load: number; build: number; range: number; reduce: number; group: number; incremental: number };
}

const typeOf = (i: number): string => `t${i % TYPES}`;
const idOf = (i: number): string => `v-${pad(i)}`;

/** A document of the view corpus (~200 bytes as JSON): `type` is one of 10, `n` its index. */
function viewDoc(i: number): Record<string, unknown> {
  return {
    _id: idOf(i),
    type: typeOf(i),
    n: i,
    name: `item ${i}`,
    tags: ['alpha', 'beta', 'gamma'],
    created: '2024-01-01T00:00:00.000Z',
    text: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.',
  };
}

/**
 * The documents edited for the incremental update, spread over the whole id range and over all
 * 10 types (index k·step + k mod 10).
 */
function editedIndexes(p: ViewPlan): number[] {
  const count = Math.max(1, Math.min(p.docs, p.editDocs));
  const step = Math.floor(p.docs / count);
  const out: number[] = [];
  for (let k = 0; k < count; k++) out.push(k * step + (step >= TYPES ? k % TYPES : 0));
  return out;
}

/** What the load left for later steps: the revisions of the documents the update will edit. */
export interface ViewCorpus {
  docs: number;
  editRevs: Map<number, string>;
}

const viewPath = (db: string, query: string): string => `/${enc(db)}/${VIEW_DDOC}/_view/${VIEW_NAME}?${query}`;
const jsonParam = (value: unknown): string => enc(JSON.stringify(value));

/** Loads the corpus with _bulk_docs (one client, batches of 1000) and stores the design document. */
export async function loadViewCorpus(target: Target, db: string, p: ViewPlan): Promise<{ figures: Figures; corpus: ViewCorpus }> {
  const edited = new Set(editedIndexes(p));
  const editRevs = new Map<number, string>();
  const client = new Client(target.base, target.headers);
  const started = now();
  const deadline = started + ms(p.caps.load);
  let loaded = 0;
  try {
    for (let start = 0; start < p.docs; start += p.batchSize) {
      if (now() > deadline) throw new Error(`loading the documents did not finish within ${p.caps.load} s (${loaded} of ${p.docs} stored)`);
      const docs = [];
      const end = Math.min(p.docs, start + p.batchSize);
      for (let i = start; i < end; i++) docs.push(viewDoc(i));
      const left = Math.max(1000, deadline - now());
      const reply = await client.expect('POST', `/${enc(db)}/_bulk_docs`, [201, 202], JSON.stringify({ docs }), left);
      const results = JSON.parse(reply.body) as { id: string; rev?: string; ok?: boolean; error?: string; reason?: string }[];
      for (const r of results) {
        if (!r.ok || !r.rev) throw new Error(`_bulk_docs: ${r.id}: ${r.error} ${r.reason ?? ''}`);
        const i = Number(r.id.slice(2));
        if (edited.has(i)) editRevs.set(i, r.rev);
      }
      if (results.length !== end - start) throw new Error(`_bulk_docs: ${results.length} results for ${end - start} docs`);
      loaded += results.length;
    }
    const ddoc = { _id: VIEW_DDOC, language: 'javascript', views: { [VIEW_NAME]: { map: VIEW_MAP, reduce: VIEW_REDUCE } } };
    await client.expect('PUT', `/${enc(db)}/${VIEW_DDOC}`, [201, 202], JSON.stringify(ddoc));
  } finally {
    client.close();
  }
  const seconds = (now() - started) / 1000;
  return {
    corpus: { docs: p.docs, editRevs },
    figures: { view_load: { value: p.docs / seconds, unit: 'docs/s', detail: { docs: p.docs, batchSize: p.batchSize, seconds } } },
  };
}

interface MapReply {
  total_rows: number;
  offset: number;
  rows: { id: string; key: [string, number]; value: number }[];
}

/** One timed `?limit=1&reduce=false` query: the first one after a change waits for the index to catch up. */
async function timedIndexQuery(target: Target, db: string, capSeconds: number, expectedTotal: number): Promise<{ seconds: number; reply: MapReply }> {
  const client = new Client(target.base, target.headers);
  const path = viewPath(db, 'limit=1&reduce=false');
  try {
    const t0 = now();
    const raw = await client.request('GET', path, undefined, ms(capSeconds));
    const seconds = (now() - t0) / 1000;
    if (raw.status !== 200) throw new Error(`GET ${path} answered ${raw.status}: ${raw.body.slice(0, 300)}`);
    const reply = JSON.parse(raw.body) as MapReply;
    if (reply.total_rows !== expectedTotal || reply.rows.length !== 1) {
      throw new Error(`GET ${path}: total_rows ${reply.total_rows} and ${reply.rows.length} rows, ${expectedTotal} and 1 expected`);
    }
    return { seconds, reply };
  } catch (err) {
    if (/no answer within/.test((err as Error).message)) throw new Error(`not finished within the cap of ${capSeconds} s`);
    throw err;
  }
}

// 1. The index build: the first query after the documents and the design document are stored.
export async function viewBuild(target: Target, db: string, p: ViewPlan): Promise<Figures> {
  const { seconds, reply } = await timedIndexQuery(target, db, p.caps.build, p.docs);
  const first = reply.rows[0]!;
  if (first.id !== idOf(0) || JSON.stringify(first.key) !== JSON.stringify(['t0', 0])) {
    throw new Error(`first row ${JSON.stringify(first)}, expected id ${idOf(0)} key ["t0",0]`);
  }
  return {
    view_build: {
      value: p.docs / seconds,
      unit: 'docs/s',
      detail: { docs: p.docs, seconds, query: 'limit=1&reduce=false' },
    },
  };
}

/** Rows of type t3 with n in [a, a + span]: n ≡ 3 (mod 10), below the corpus size. */
function expectedRangeRows(a: number, span: number, docs: number): number {
  let count = 0;
  for (let n = a; n <= Math.min(a + span, docs - 1); n++) if (n % TYPES === 3) count++;
  return count;
}

// 2. Key-range queries with concurrent clients: startkey=["t3",a]&endkey=["t3",a+50]&reduce=false.
// Two rounds of the same size with different keys: the first right after the build (the
// server's code still cold: a JIT compiler has seen little of this path), the second after it,
// as a long-running server answers. The second is the figure compared with the target.
export async function viewRangeQueries(target: Target, db: string, p: ViewPlan): Promise<Figures> {
  const cold = await rangeRound(target, db, p, 4000);
  const warm = await rangeRound(target, db, p, 5000);
  return { view_range_cold: cold, view_range: warm };
}

async function rangeRound(target: Target, db: string, p: ViewPlan, seed: number): Promise<Figures[string]> {
  const latencies: number[] = [];
  const randoms = Array.from({ length: p.rangeClients }, (_, w) => prng(seed + w));
  let issued = 0;
  let rows = 0;
  let failure: unknown;
  let stop = false;
  const started = now();
  const deadline = started + ms(p.caps.range);
  const worker = async (w: number): Promise<void> => {
    const client = new Client(target.base, target.headers);
    try {
      while (!stop && now() < deadline && issued < p.rangeQueries) {
        issued++;
        const a = Math.floor(randoms[w]!() * Math.max(1, p.docs - p.rangeSpan));
        const path = viewPath(db, `startkey=${jsonParam(['t3', a])}&endkey=${jsonParam(['t3', a + p.rangeSpan])}&reduce=false`);
        const t0 = now();
        const reply = await client.expect('GET', path, [200], undefined, Math.max(1000, deadline - t0));
        latencies.push(now() - t0);
        const got = (JSON.parse(reply.body) as MapReply).rows;
        const want = expectedRangeRows(a, p.rangeSpan, p.docs);
        if (got.length !== want || got.some((r) => r.key[0] !== 't3' || r.key[1] < a || r.key[1] > a + p.rangeSpan)) {
          throw new Error(`GET ${path}: ${got.length} rows, ${want} expected (all of type t3 with n in [${a}, ${a + p.rangeSpan}])`);
        }
        rows += got.length;
      }
    } catch (err) {
      if (!stop) failure = err;
      stop = true;
    } finally {
      client.close();
    }
  };
  await Promise.all(Array.from({ length: p.rangeClients }, (_, w) => worker(w)));
  if (failure !== undefined) {
    const why = (failure as Error).message;
    throw new Error(/no answer within/.test(why) ? `a query was not answered within the cap of ${p.caps.range} s` : why);
  }
  const seconds = (now() - started) / 1000;
  const queries = latencies.length;
  const capped = queries < p.rangeQueries;
  return {
      value: queries / seconds,
      unit: 'queries/s',
      detail: {
        queries,
        requested: p.rangeQueries,
        clients: p.rangeClients,
        rows,
        seconds,
        capped,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        ...(capped ? { note: `hit its ${p.caps.range} s cap: ${queries} of ${p.rangeQueries} queries` } : {}),
      },
  };
}

/** Runs one reduce query up to `reps` times (at least once, then while under the cap); the figure is the median latency. */
async function repeatedReduce(
  target: Target,
  path: string,
  reps: number,
  capSeconds: number,
  check: (rows: { key: unknown; value: unknown }[]) => string | undefined,
): Promise<{ medianMs: number; detail: Record<string, number | string | boolean> }> {
  const client = new Client(target.base, target.headers);
  const latencies: number[] = [];
  const started = now();
  const deadline = started + ms(capSeconds);
  try {
    for (let r = 0; r < reps && (r === 0 || now() < deadline); r++) {
      const t0 = now();
      let reply;
      try {
        reply = await client.expect('GET', path, [200], undefined, Math.max(1000, deadline - t0));
      } catch (err) {
        if (/no answer within/.test((err as Error).message)) throw new Error(`not answered within the cap of ${capSeconds} s`);
        throw err;
      }
      latencies.push(now() - t0);
      const problem = check((JSON.parse(reply.body) as { rows: { key: unknown; value: unknown }[] }).rows);
      if (problem) throw new Error(`GET ${path}: ${problem}`);
    }
  } finally {
    client.close();
  }
  const capped = latencies.length < reps;
  return {
    medianMs: median(latencies),
    detail: {
      reps: latencies.length,
      requested: reps,
      minMs: Math.min(...latencies),
      maxMs: Math.max(...latencies),
      capped,
      ...(capped ? { note: `hit its ${capSeconds} s cap: median of ${latencies.length} of ${reps} queries` } : {}),
    },
  };
}

const totalOf = (docs: number): number => (docs * (docs - 1)) / 2;

// 3. The whole index reduced: GET the view with reduce=true (the _sum of every n).
export async function viewReduce(target: Target, db: string, p: ViewPlan): Promise<Figures> {
  const want = totalOf(p.docs);
  const r = await repeatedReduce(target, viewPath(db, 'reduce=true'), p.reduceReps, p.caps.reduce, (rows) =>
    rows.length === 1 && rows[0]!.value === want ? undefined : `${JSON.stringify(rows).slice(0, 200)}, expected one row of value ${want}`,
  );
  return { view_reduce: { value: r.medianMs, unit: 'ms', detail: { ...r.detail, docs: p.docs } } };
}

// 4. group_level=1: one row per type, each the _sum of its n.
export async function viewGroupLevel(target: Target, db: string, p: ViewPlan): Promise<Figures> {
  const want = Array.from({ length: Math.min(TYPES, p.docs) }, (_, t) => {
    let sum = 0;
    for (let n = t; n < p.docs; n += TYPES) sum += n;
    return { key: [`t${t}`], value: sum };
  });
  const same = (rows: { key: unknown; value: unknown }[]): boolean =>
    rows.length === want.length && rows.every((r, i) => JSON.stringify(r.key) === JSON.stringify(want[i]!.key) && r.value === want[i]!.value);
  const r = await repeatedReduce(target, viewPath(db, 'group_level=1'), p.reduceReps, p.caps.group, (rows) =>
    same(rows) ? undefined : `${JSON.stringify(rows).slice(0, 300)}, expected ${JSON.stringify(want).slice(0, 300)}`,
  );
  return { view_group_level: { value: r.medianMs, unit: 'ms', detail: { ...r.detail, docs: p.docs, groups: want.length } } };
}

// 5. Incremental update: `editDocs` documents edited in one _bulk_docs (their n moved past the end
// of their type's range), then the first query, which brings the index up to date, is timed.
export async function viewIncremental(target: Target, db: string, p: ViewPlan, corpus: ViewCorpus): Promise<Figures> {
  const edited = editedIndexes(p);
  const docs = edited.map((i) => {
    const rev = corpus.editRevs.get(i);
    if (!rev) throw new Error(`no revision recorded for ${idOf(i)}`);
    return { ...viewDoc(i), _rev: rev, n: i + p.docs, edited: true };
  });
  const client = new Client(target.base, target.headers);
  const t0 = now();
  try {
    const reply = await client.expect('POST', `/${enc(db)}/_bulk_docs`, [201, 202], JSON.stringify({ docs }), ms(p.caps.incremental));
    const failed = (JSON.parse(reply.body) as { id: string; ok?: boolean; error?: string }[]).find((r) => !r.ok);
    if (failed) throw new Error(`_bulk_docs: ${failed.id}: ${failed.error}`);
  } finally {
    client.close();
  }
  const editSeconds = (now() - t0) / 1000;
  const { seconds } = await timedIndexQuery(target, db, p.caps.incremental, p.docs);

  // The edits are in the index: the moved t3 rows are where their new n puts them (not timed).
  const check = new Client(target.base, target.headers);
  try {
    const path = viewPath(db, `startkey=${jsonParam(['t3', p.docs])}&endkey=${jsonParam(['t3', {}])}&reduce=false`);
    const got = (JSON.parse((await check.expect('GET', path, [200], undefined, ms(p.caps.incremental))).body) as MapReply).rows.length;
    const want = edited.filter((i) => i % TYPES === 3).length;
    if (got !== want) throw new Error(`after the edits, GET ${path}: ${got} rows, ${want} expected`);
  } finally {
    check.close();
  }
  return {
    view_incremental: {
      value: seconds * 1000,
      unit: 'ms',
      detail: { editedDocs: docs.length, docs: p.docs, editSeconds, editedPerS: docs.length / seconds },
    },
  };
}
