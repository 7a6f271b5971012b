/**
 * Micro-benchmark of the JavaScript sandbox (src/js): map throughput by batch size and worker
 * count, and reduce round trips.
 *
 *   npx tsc -p tsconfig.json --outDir .build/js && node .build/js/bench/js-sandbox.js [--docs 100000]
 */
import { parseArgs } from 'node:util';
import { QueryServer, type ViewProgram } from '../src/js/query-server.js';

const { values } = parseArgs({ options: { docs: { type: 'string', default: '100000' } } });
const N = Number(values.docs);

const docs = Array.from({ length: N }, (_, i) => ({
  _id: `doc${String(i).padStart(7, '0')}`,
  _rev: '1-967a00dff5e02add41819138abb3284d',
  type: i % 3 === 0 ? 'post' : 'comment',
  n: i,
  tags: ['a', 'b'],
  body: { title: `title ${i}`, words: i % 100 },
}));
const texts = docs.map((d) => JSON.stringify(d));

async function mapAll(program: ViewProgram, batch: number, pipeline: number): Promise<number> {
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
  if (rows !== N) throw new Error(`expected ${N} rows, got ${rows}`);
  return N / ((performance.now() - t0) / 1000);
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

async function main(): Promise<void> {
  const trivial = { id: '_design/bench', views: { v: { map: 'function(doc){ emit(doc._id, 1) }' } } };
  const typical = { id: '_design/bench2', views: { v: { map: 'function(doc){ if (doc.type) emit([doc.type, doc.n], doc.n) }', reduce: '_sum' } } };
  const twoViews = { id: '_design/bench3', views: {
    v: { map: 'function(doc){ emit(doc._id, 1) }' },
    w: { map: 'function(doc){ emit(doc.type, doc.body.words) }' },
  } };
  console.log(`${N} docs of ~${Math.round(texts.reduce((a, t) => a + t.length, 0) / N)} bytes; map calls/s (higher is better)\n`);
  for (const workers of [1, 2]) {
    for (const [label, ddoc] of [['emit(doc._id, 1)', trivial], ['emit([doc.type, doc.n], doc.n)', typical], ['two views (docs frozen)', twoViews]] as const) {
      for (const maxBatchDocs of [100, 250, 500]) {
        const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers, log: () => {}, maxBatchDocs });
        const program = await qs.views(ddoc);
        await mapAll(program, 500, 2); // warm-up (WASM tier-up)
        const line: string[] = [];
        for (const [batch, pipeline] of [[100, 1], [250, 1], [500, 1], [500, 2], [2000, 1]] as const) {
          line.push(`call ${batch}×${pipeline}: ${fmt(await mapAll(program, batch, pipeline))}`);
        }
        console.log(`workers=${workers} maxBatchDocs=${maxBatchDocs} ${label}\n  ${line.join('  ')}`);
        program.dispose();
        await qs.close();
      }
    }
  }

  const qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 256 << 20, workers: 2, log: () => {} });
  const program = await qs.views({ id: '_design/r', views: { v: { map: 'function(doc){ emit(doc._id, 1) }', reduce: 'function(k, v, re) { return sum(v) }' } } });
  const values = Array.from({ length: 100 }, (_, i) => i);
  const keys = values.map((v) => [v, `id${v}`] as [unknown, string]);
  let t0 = performance.now();
  const rounds = 2000;
  for (let i = 0; i < rounds; i++) await program.reduce('v', keys, values, false);
  const single = (performance.now() - t0) / rounds;
  t0 = performance.now();
  const calls = Array.from({ length: 1000 }, () => ({ keys, values, rereduce: false }));
  for (let i = 0; i < 10; i++) await program.reduceMany('v', calls);
  const many = 10_000 / ((performance.now() - t0) / 1000);
  console.log(`\nreduce of 100 values: ${(single * 1000).toFixed(0)} µs per reduce() round trip; reduceMany: ${fmt(many)} reduce calls/s`);
  await qs.close();
}

await main();
