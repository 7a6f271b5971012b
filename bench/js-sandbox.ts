/**
 * Micro-benchmark of the JavaScript sandbox (src/js): map throughput by batch size and worker
 * count, and reduce round trips.
 *
 *   npx tsc -p tsconfig.json --outDir .build/js && node .build/js/bench/js-sandbox.js [--docs 100000]
 */
import { parseArgs } from 'node:util';
import { QueryServer, type DesignDocCode, type ViewProgram } from '../src/js/query-server.js';

const { values } = parseArgs({ options: { docs: { type: 'string', default: '100000' }, quick: { type: 'boolean', default: false } } });
const N = Number(values.docs);
/** --quick: only the trivial map, call 500×2, for each worker count and batch size. */
const QUICK = values.quick === true;

const docs = Array.from({ length: N }, (_, i) => ({
  _id: `doc${String(i).padStart(7, '0')}`,
  _rev: '1-967a00dff5e02add41819138abb3284d',
  type: i % 3 === 0 ? 'post' : 'comment',
  n: i,
  tags: ['a', 'b'],
  body: { title: `title ${i}`, words: i % 100 },
}));
const texts = docs.map((d) => JSON.stringify(d));

/** CPU seconds of the whole process (main thread and workers) spent in the last mapAll(). */
let lastCpuSeconds = 0;

async function mapAll(program: ViewProgram, batch: number, pipeline: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  let rows = 0;
  const lane = async () => {
    while (next < N) {
      const start = next;
      next += batch;
      const results = await program.mapJson(texts.slice(start, start + batch));
      for (const r of results) rows += r[0]!.length;
    }
  };
  await Promise.all(Array.from({ length: pipeline }, lane));
  const cpu = process.cpuUsage(cpu0);
  lastCpuSeconds = (cpu.user + cpu.system) / 1e6;
  if (rows !== N) throw new Error(`expected ${N} rows, got ${rows}`);
  return N / ((performance.now() - t0) / 1000);
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median of 3 runs over all N documents, after a warm-up run (WASM tier-up, V8 JIT). */
async function measure(program: ViewProgram, batch: number, pipeline: number): Promise<string> {
  const runs: number[] = [];
  const perCpu: number[] = [];
  for (let i = 0; i < 3; i++) {
    runs.push(await mapAll(program, batch, pipeline));
    perCpu.push(N / lastCpuSeconds);
  }
  return `${fmt(median(runs))} (${fmt(median(perCpu))}/cpu-s)`;
}

async function quick(): Promise<void> {
  const ddoc = { id: '_design/a', views: { v: { map: 'function(doc){ emit(doc._id, 1) }' } } };
  for (const workers of [1, 2]) {
    const line: string[] = [];
    for (const maxBatchDocs of [100, 250, 500]) {
      const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers, log: () => {}, maxBatchDocs });
      const program = await qs.views(ddoc);
      await mapAll(program, 500, 2);
      line.push(`maxBatchDocs ${maxBatchDocs}: ${await measure(program, 500, 2)}`);
      await qs.close();
    }
    console.log(`emit(doc._id, 1), call 500×2, workers=${workers}: ${line.join('  ')}`);
  }
}

async function main(): Promise<void> {
  const maps: [string, DesignDocCode][] = [
    ['emit(doc._id, 1)', { id: '_design/a', views: { v: { map: 'function(doc){ emit(doc._id, 1) }' } } }],
    ['emit([doc.type, doc.n], doc.n)', { id: '_design/b', views: { v: { map: 'function(doc){ if (doc.type) emit([doc.type, doc.n], doc.n) }', reduce: '_sum' } } }],
    ['two views (docs deep-frozen)', { id: '_design/c', views: {
      v: { map: 'function(doc){ emit(doc._id, 1) }' },
      w: { map: 'function(doc){ emit(doc.type, doc.body.words) }' },
    } }],
  ];
  console.log(`${fmt(N)} docs of ~${Math.round(texts.reduce((a, t) => a + t.length, 0) / N)} bytes; map calls/s, median of 3 (higher is better)`);
  console.log('in parentheses: documents per CPU-second of the whole process (main thread + workers), which other load on the machine does not skew');
  console.log('"call B×P": map() called with B documents at a time, P calls in flight\n');
  for (const [label, ddoc] of maps) {
    for (const workers of [1, 2]) {
      const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers, log: () => {} });
      const program = await qs.views(ddoc);
      await mapAll(program, 500, 2); // warm-up
      const line: string[] = [];
      for (const [batch, pipeline] of [[100, 1], [250, 1], [500, 1], [1000, 1], [500, 2]] as const) {
        line.push(`call ${batch}×${pipeline}: ${await measure(program, batch, pipeline)}`);
      }
      console.log(`${label}, workers=${workers}\n  ${line.join('  ')}`);
      program.dispose();
      await qs.close();
    }
  }
  console.log('\nmaxBatchDocs (documents per worker message), workers=2, emit(doc._id, 1), call 1000×2:');
  const sweep: string[] = [];
  for (const maxBatchDocs of [50, 100, 250, 500]) {
    const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers: 2, log: () => {}, maxBatchDocs });
    const program = await qs.views(maps[0]![1]);
    await mapAll(program, 1000, 2);
    sweep.push(`${maxBatchDocs}: ${await measure(program, 1000, 2)}`);
    await qs.close();
  }
  console.log(`  ${sweep.join('  ')}`);

  const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers: 2, log: () => {} });
  const objects = await qs.views(maps[0]![1]);
  const t = performance.now();
  for (let i = 0; i < N; i += 500) await objects.map(docs.slice(i, i + 500));
  console.log(`  map() with objects instead of JSON text, workers=2, call 500×1: ${fmt(N / ((performance.now() - t) / 1000))}`);
  objects.dispose();

  const program = await qs.views({ id: '_design/r', views: {
    sum: { map: 'function(doc){ emit(doc._id, 1) }', reduce: 'function(keys, values, rereduce) { return sum(values) }' },
    keys: { map: 'function(doc){ emit(doc._id, 1) }', reduce: 'function(keys, values, rereduce) { return rereduce ? sum(values) : keys.length }' },
  } });
  const values = Array.from({ length: 100 }, (_, i) => i);
  const keys = values.map((v) => [[v, 'k'], `id${v}`] as [unknown, string]);
  for (const name of ['sum', 'keys']) {
    let t0 = performance.now();
    const rounds = 2000;
    for (let i = 0; i < rounds; i++) await program.reduce(name, keys, values, false);
    const single = (performance.now() - t0) / rounds;
    t0 = performance.now();
    const calls = Array.from({ length: 1000 }, () => ({ keys, values, rereduce: false }));
    for (let i = 0; i < 10; i++) await program.reduceMany(name, calls);
    const many = 10_000 / ((performance.now() - t0) / 1000);
    console.log(`\nreduce "${name}" of 100 rows: ${(single * 1000).toFixed(0)} µs per reduce() round trip; reduceMany: ${fmt(many)} calls/s`);
  }
  await qs.close();
}

await (QUICK ? quick() : main());
