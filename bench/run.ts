import { existsSync } from 'node:fs';
/**
 * Settee's benchmark: the same CouchDB-API workloads run against Settee and pouchdb-server,
 * one server at a time, printed side by side (figures only, no pass/fail).
 *
 *   npm run bench                                   # both servers, default sizes
 *   node dist/bench/run.js --only pouchdb-server --scale 0.2
 *
 * Options:
 *   --only <settee|pouchdb-server>  run one server only
 *   --scale <factor>                scale document counts and durations (default 1)
 *   --tmp-dir <dir>                 where the servers' temporary data directories go (default: OS temp dir)
 *   --keep-data                     leave the data directories (and server logs) in place
 *   --settee-config <file>          pass `--config <file>` to Settee
 *   --settee-auth <user:pass>       send Basic auth with every request to Settee
 *   --out <file>                    JSON results (default bench/results/latest.json)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from './http.js';
import { compare, formatNumber, formatTable, type ServerResult } from './report.js';
import { ensurePeersInstalled, killAllServers, SERVER_NAMES, startServer, type RunningServer, type ServerName } from './servers.js';
import { round } from './stats.js';
import * as w from './workloads.js';

/** The project root: the nearest folder above this file with the bench's peers manifest. */
const ROOT = (() => {
  let dir = fileURLToPath(new URL('.', import.meta.url));
  while (!existsSync(join(dir, 'bench', 'peers', 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('project root not found above the bench code');
    dir = parent;
  }
  return dir;
})();

const DB = 'bench';
const RMW_DB = 'bench_rmw';
const FEED_DB = 'bench_feed';

/** Sizes of every workload for a scale factor. Caps are safety limits in seconds, not scaled. */
function plan(scale: number) {
  const count = (base: number, min: number): number => Math.max(min, Math.round(base * scale));
  const seconds = (base: number, min: number): number => Math.max(min, base * scale);
  return {
    puts: { docs: count(10_000, 100), clients: 16, capSeconds: 120 },
    bulk: { batches: count(100, 1), batchSize: 1000, capSeconds: 180 },
    gets: { clients: 32, seconds: seconds(15, 2), maxRequests: count(3_000_000, 1000) },
    scans: { reps: 3, capSeconds: 60 },
    paging: { pageSize: 100, seconds: seconds(8, 2), maxPages: count(200_000, 100) },
    rmw: { clients: 16, docsPerClient: 10, seconds: seconds(15, 2), maxUpdates: count(1_000_000, 500) },
    changes: { reps: 3, capSeconds: 60 },
    feed: { writes: count(200, 20), capSeconds: 60, waitMs: 10_000 },
  };
}
type Plan = ReturnType<typeof plan>;

interface Options {
  servers: ServerName[];
  scale: number;
  tmpRoot: string;
  keepData: boolean;
  setteeConfig: string | undefined;
  setteeAuth: string | undefined;
  out: string;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      scale: { type: 'string', default: '1' },
      'tmp-dir': { type: 'string', default: os.tmpdir() },
      'keep-data': { type: 'boolean', default: false },
      'settee-config': { type: 'string' },
      'settee-auth': { type: 'string' },
      out: { type: 'string', default: join(ROOT, 'bench', 'results', 'latest.json') },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node dist/bench/run.js [--only settee|pouchdb-server] [--scale F] [--tmp-dir DIR] [--keep-data]');
    console.log('                                [--settee-config FILE] [--settee-auth USER:PASS] [--out FILE]');
    process.exit(0);
  }
  const scale = Number(values.scale);
  if (!(scale > 0)) throw new Error(`--scale must be a positive number, not ${values.scale}`);
  const only = values.only;
  if (only !== undefined && !SERVER_NAMES.includes(only as ServerName)) {
    throw new Error(`--only must be one of ${SERVER_NAMES.join(', ')}`);
  }
  return {
    servers: only ? [only as ServerName] : [...SERVER_NAMES],
    scale,
    tmpRoot: resolve(values['tmp-dir']!),
    keepData: values['keep-data']!,
    setteeConfig: values['settee-config'] ? resolve(values['settee-config']) : undefined,
    setteeAuth: values['settee-auth'],
    out: resolve(values.out!),
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function emptyResult(name: ServerName, status: ServerResult['status']): ServerResult {
  return { name, status, figures: {}, errors: {}, timings: {} };
}

/** Runs every workload against one already-started server, recording figures and failures. */
async function runWorkloads(server: RunningServer, target: w.Target, p: Plan, result: ServerResult): Promise<void> {
  const step = async (name: string, run: () => Promise<w.Figures>): Promise<void> => {
    const label = `  ${server.name.padEnd(15)}${name.padEnd(22)}`;
    if (!server.alive()) {
      result.errors[name] = 'server is no longer running';
      console.log(`${label}skipped: server is no longer running`);
      return;
    }
    const wall0 = performance.now();
    const cpu0 = process.cpuUsage();
    const serverCpu0 = server.cpuSeconds();
    try {
      const figures = await run();
      Object.assign(result.figures, figures);
      const cpu = process.cpuUsage(cpu0);
      const timing = {
        wallS: round((performance.now() - wall0) / 1000),
        serverCpuS: round(server.cpuSeconds() - serverCpu0),
        benchCpuS: round((cpu.user + cpu.system) / 1e6),
      };
      result.timings[name] = timing;
      const shown = Object.values(figures).map((f) => `${formatNumber(f.value)} ${f.unit}`).join(', ');
      console.log(`${label}${shown}  (${timing.wallS} s; CPU s: server ${timing.serverCpuS}, bench ${timing.benchCpuS})`);
    } catch (err) {
      result.errors[name] = message(err);
      console.log(`${label}FAILED: ${message(err)}`);
    }
  };

  const ids: string[] = [];
  const keep = (written: string[]): void => {
    for (const id of written) ids.push(id);
  };
  await step('single PUTs', async () => {
    const r = await w.singlePuts(target, DB, p.puts);
    keep(r.ids);
    return r.figures;
  });
  await step('_bulk_docs', async () => {
    const r = await w.bulkDocs(target, DB, p.bulk);
    keep(r.ids);
    return r.figures;
  });
  await step('random GETs', () => w.randomGets(target, DB, ids, p.gets));
  await step('_all_docs scans', () => w.allDocsScan(target, DB, { ...p.scans, expectedRows: ids.length }));
  await step('_all_docs paging', () => w.allDocsPaging(target, DB, p.paging));
  await step('read-modify-write', () => w.readModifyWrite(target, RMW_DB, p.rmw));
  await step('_changes since=0', () => w.changesScan(target, DB, { ...p.changes, expectedRows: ids.length }));
  await step('continuous feed', () => w.feedLatency(target, FEED_DB, p.feed));
}

async function benchServer(name: ServerName, opts: Options, p: Plan): Promise<ServerResult> {
  const result = emptyResult(name, 'ok');
  if (name === 'pouchdb-server') {
    try {
      const install = ensurePeersInstalled(ROOT);
      if (install.installed) result.timings['npm install'] = { wallS: round(install.seconds), serverCpuS: 0, benchCpuS: 0 };
    } catch (err) {
      return { ...result, status: 'failed', error: message(err) };
    }
  }
  let server: RunningServer;
  try {
    server = await startServer(name, { root: ROOT, tmpRoot: opts.tmpRoot, setteeConfig: opts.setteeConfig, keepData: opts.keepData });
  } catch (err) {
    console.log(`  ${name}: ${message(err)}`);
    return { ...result, status: 'failed', error: message(err) };
  }
  result.mode = server.mode;
  const headers: Record<string, string> = {};
  if (name === 'settee' && opts.setteeAuth) headers.authorization = `Basic ${Buffer.from(opts.setteeAuth).toString('base64')}`;
  const target: w.Target = { base: server.url, headers };
  console.log(`\n${name} (pid ${server.pid}) at ${server.url}, data in ${server.dataDir}`);
  try {
    const client = new Client(server.url, headers);
    try {
      const welcome = JSON.parse((await client.expect('GET', '/', [200])).body) as { version?: string };
      result.version = welcome.version;
    } finally {
      client.close();
    }
    for (const db of [DB, RMW_DB, FEED_DB]) await w.createDb(target, db);
    await runWorkloads(server, target, p, result);
  } catch (err) {
    result.errors.setup = message(err);
    console.log(`  ${name}: ${message(err)}`);
  } finally {
    const peak = server.peakRssBytes();
    if (peak > 0) result.figures.peak_rss = { value: peak / 2 ** 20, unit: 'MB', detail: { source: '/proc/<pid>/status VmHWM' } };
    if (!server.alive()) result.errors.server = `server exited during the run; log tail:\n${server.logTail()}`;
    await server.stop();
  }
  if (Object.keys(result.errors).length > 0) result.status = 'partial';
  return result;
}

/** Notes worth printing under the table: failures, capped workloads, row-count mismatches. */
function notes(results: ServerResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    if (r.status === 'skipped') continue;
    if (r.error) lines.push(`${r.name}: ${r.error.split('\n')[0]}`);
    for (const [name, err] of Object.entries(r.errors)) lines.push(`${r.name}: ${name} failed: ${err.split('\n')[0]}`);
    for (const [key, f] of Object.entries(r.figures)) {
      if (f.detail?.capped === true) lines.push(`${r.name}: ${key} hit its time cap (${f.detail.docs} of ${f.detail.requested} docs)`);
      const { rows, expectedRows } = f.detail ?? {};
      if (typeof expectedRows === 'number' && rows !== expectedRows) lines.push(`${r.name}: ${key} returned ${rows} rows, ${expectedRows} expected`);
    }
  }
  return lines;
}

function roundFigures(result: ServerResult): ServerResult {
  const figures: w.Figures = {};
  for (const [key, f] of Object.entries(result.figures)) {
    const detail = f.detail && Object.fromEntries(Object.entries(f.detail).map(([k, v]) => [k, typeof v === 'number' ? round(v) : v]));
    figures[key] = { ...f, value: round(f.value), ...(detail ? { detail } : {}) };
  }
  return { ...result, figures };
}

async function main(): Promise<void> {
  const opts = parseOptions();
  const p = plan(opts.scale);
  const startedAt = new Date();
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart: round(os.loadavg()[0]!),
  };
  console.log(`Settee benchmark, scale ${opts.scale}, ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}`);
  // Other work on the machine skews the figures; the load average tells the reader how quiet it was.
  console.log(`Load average at start: ${machine.loadAverageAtStart} (1 min)`);
  console.log(
    `Workloads: ${p.puts.docs} single PUTs, ${p.bulk.batches}×${p.bulk.batchSize} bulk docs, ` +
      `GETs ${p.gets.seconds} s, paging ${p.paging.seconds} s each, RMW ${p.rmw.seconds} s, ${p.feed.writes} feed writes`,
  );

  const results = new Map<ServerName, ServerResult>();
  for (const name of SERVER_NAMES) {
    results.set(name, opts.servers.includes(name) ? await benchServer(name, opts, p) : emptyResult(name, 'skipped'));
  }
  const settee = results.get('settee')!;
  const pouch = results.get('pouchdb-server')!;
  const rows = compare(settee, pouch);

  console.log('');
  for (const r of [settee, pouch]) {
    if (r.status !== 'skipped') console.log(`${r.name}${r.version ? ` ${r.version}` : ''}: ${r.mode ?? 'did not start'}`);
  }
  console.log('');
  console.log(formatTable(rows, settee, pouch));
  const extra = notes([settee, pouch]);
  if (extra.length > 0) console.log(`\nNotes:\n${extra.map((l) => `  - ${l}`).join('\n')}`);

  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    loadAverageAtEnd: round(os.loadavg()[0]!),
    scale: opts.scale,
    machine,
    plan: p,
    comparison: rows.map((r) => ({
      ...r,
      settee: r.settee === null ? null : round(r.settee),
      pouchdbServer: r.pouchdbServer === null ? null : round(r.pouchdbServer),
      ratio: r.ratio === null ? null : round(r.ratio),
    })),
    servers: { settee: roundFigures(settee), 'pouchdb-server': roundFigures(pouch) },
  };
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nJSON written to ${opts.out}`);
  if (rows.every((r) => r.settee === null && r.pouchdbServer === null)) process.exitCode = 1;
}

process.on('exit', killAllServers);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAllServers();
    process.exit(130);
  });
}

main().then(
  () => {
    killAllServers();
  },
  (err: unknown) => {
    console.error(message(err));
    killAllServers();
    process.exitCode = 1;
  },
);
