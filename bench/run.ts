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
 *   --skip-large                    skip the large-attachment phase (1 GiB × scale up and down)
 *   --skip-views                    skip the view phase (map/reduce index over 100k × scale docs)
 *   --views-only                    run the view phase only
 *   --pouch-view-docs <n>           pouchdb-server's view corpus (default: Settee's, at most 20,000)
 *   --skip-design                   skip the design-function phase (validated writes, _list over 100k × scale rows)
 *   --design-only                   run the design-function phase only
 *   --skip-replication              skip the replication phase
 *   --replication-only              run the replication phase only (POST /_replicate by name, by URL, pull
 *                                   from a second server process, attachments, continuous latency)
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
import * as v from './views.js';
import * as d from './design.js';
import * as r from './replication.js';

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
const ATT_DB = 'bench_att';
const VIEW_DB = 'bench_views';
const LIST_DB = 'bench_list';
const MiB = 2 ** 20;

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
    attachments: { count: count(200, 50), bytes: 256 * 1024, clients: 4, capSeconds: 120, poolBytes: 4 * MiB },
    // One attachment of 1 GiB × scale, streamed in and out; bounded by time (scaled with the size) and by the server's
    // RSS (a server that buffers whole bodies could otherwise take the machine's memory).
    large: {
      bytes: Math.max(MiB, Math.round(2 ** 30 * scale)),
      chunkBytes: 256 * 1024,
      capSeconds: seconds(120, 30),
      rssLimitBytes: Math.min(4 * 2 ** 30, Math.floor(os.totalmem() / 2)),
      sampleMs: 50,
    },
    // The view phase, on a fresh server: N docs, an index built at query time, queries, reduces, an
    // incremental update. Every step has a time cap (scaled), past which the server's figure is n/a.
    views: {
      docs: count(100_000, 1000),
      // pouchdb-server's map/reduce indexes in JavaScript over LevelDB (under 1,000 docs/s here) and
      // reduces by reading every row: at 100k docs its part alone would take several minutes, so it
      // indexes at most 20k docs (--pouch-view-docs overrides); see extrapolateViews for the ratios.
      pouchDocs: Math.min(count(100_000, 1000), 20_000),
      batchSize: 1000,
      rangeQueries: count(2000, 500),
      rangeClients: 8,
      rangeSpan: 50,
      reduceReps: 20,
      editDocs: Math.round(count(100_000, 1000) / 100),
      caps: {
        load: seconds(240, 30),
        build: seconds(300, 30),
        range: seconds(60, 15),
        reduce: seconds(60, 15),
        group: seconds(60, 15),
        incremental: seconds(120, 20),
      },
      rssSampleMs: 100,
    },
    // Design-document functions, on a fresh server: writes with and without a validator, a _list over N rows.
    design: {
      puts: { docs: count(5_000, 200), clients: 16, capSeconds: 120 },
      bulk: { batches: count(50, 2), batchSize: 1000, capSeconds: 180 },
      listRows: count(100_000, 1000),
      capSeconds: seconds(300, 60),
      rssSampleMs: 100,
    },
    replication: {
      docs: count(20_000, 1000),
      attachmentDocs: count(200, 20),
      attachmentBytes: 256 * 1024,
      latencyWrites: count(100, 30),
      capSeconds: seconds(300, 60),
    },
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
  skipLarge: boolean;
  skipViews: boolean;
  viewsOnly: boolean;
  skipDesign: boolean;
  designOnly: boolean;
  pouchViewDocs: number | undefined;
  skipReplication: boolean;
  replicationOnly: boolean;
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
      'skip-large': { type: 'boolean', default: false },
      'skip-views': { type: 'boolean', default: false },
      'views-only': { type: 'boolean', default: false },
      'pouch-view-docs': { type: 'string' },
      'skip-design': { type: 'boolean', default: false },
      'design-only': { type: 'boolean', default: false },
      'skip-replication': { type: 'boolean', default: false },
      'replication-only': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node dist/bench/run.js [--only settee|pouchdb-server] [--scale F] [--tmp-dir DIR] [--keep-data]');
    console.log('                                [--settee-config FILE] [--settee-auth USER:PASS] [--out FILE] [--skip-large]');
    console.log('                                [--skip-views | --views-only] [--pouch-view-docs N] [--skip-design | --design-only]');
    console.log('                                [--skip-replication | --replication-only]');
    process.exit(0);
  }
  if (values['skip-views'] && values['views-only']) throw new Error('--skip-views and --views-only exclude each other');
  if (values['skip-design'] && values['design-only']) throw new Error('--skip-design and --design-only exclude each other');
  if (values['views-only'] && values['design-only']) throw new Error('--views-only and --design-only exclude each other');
  const scale = Number(values.scale);
  const pouchViewDocs = values['pouch-view-docs'];
  if (pouchViewDocs !== undefined && !(Number.isInteger(Number(pouchViewDocs)) && Number(pouchViewDocs) >= 100)) {
    throw new Error(`--pouch-view-docs must be an integer of at least 100, not ${pouchViewDocs}`);
  }
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
    skipLarge: values['skip-large']!,
    skipViews: values['skip-views']!,
    viewsOnly: values['views-only']!,
    skipDesign: values['skip-design']!,
    designOnly: values['design-only']!,
    pouchViewDocs: values['pouch-view-docs'] === undefined ? undefined : Number(values['pouch-view-docs']),
    skipReplication: values['skip-replication']!,
    replicationOnly: values['replication-only']!,
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function emptyResult(name: ServerName, status: ServerResult['status']): ServerResult {
  return { name, status, figures: {}, errors: {}, timings: {} };
}

type Step = (name: string, run: () => Promise<w.Figures>) => Promise<boolean>;

/** Runs one workload, recording its figures and timings or its failure, and prints a progress line; true if it ran. */
function stepper(server: RunningServer, result: ServerResult): Step {
  return async (name, run) => {
    const label = `  ${server.name.padEnd(15)}${name.padEnd(22)}`;
    if (!server.alive()) {
      result.errors[name] = 'server is no longer running';
      console.log(`${label}skipped: server is no longer running`);
      return false;
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
      return true;
    } catch (err) {
      const why = server.alive() ? message(err) : `${message(err)} (the server exited)`;
      result.errors[name] = why;
      console.log(`${label}FAILED: ${why}`);
      return false;
    }
  };
}

/** Runs the document workloads against one already-started server. */
async function runWorkloads(server: RunningServer, target: w.Target, p: Plan, result: ServerResult): Promise<void> {
  const step = stepper(server, result);

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

/**
 * 256 KiB attachments up, then down. They run after the main run's peak RSS is taken, so that
 * figure stays comparable with earlier runs; their own peak goes in their JSON detail.
 */
async function runAttachmentWorkloads(server: RunningServer, target: w.Target, p: Plan, result: ServerResult, content: Buffer): Promise<void> {
  const step = stepper(server, result);
  const watch = server.watchRss(200);
  let stored: w.StoredAttachments | undefined;
  await step('att PUT 256 KiB', async () => {
    const r = await w.attachmentUploads(target, ATT_DB, content, p.attachments);
    stored = r.stored;
    return r.figures;
  });
  await step('att GET 256 KiB', () => {
    if (!stored) throw new Error('not run: the uploads failed');
    return w.attachmentDownloads(target, content, stored, p.attachments);
  });
  watch.stop();
  const peakMb = watch.peak() / MiB;
  for (const key of ['att_upload', 'att_upload_rate', 'att_download', 'att_download_rate']) {
    const f = result.figures[key];
    if (f) f.detail = { ...f.detail, serverPeakRssMB: peakMb };
  }
}

/** "1 GiB", "102 MiB": the large attachment's size for labels. */
function sizeLabel(bytes: number): string {
  if (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30} GiB`;
  return `${Math.round(bytes / MiB)} MiB`;
}

/**
 * The large attachment, up then down, run last: the server's peak RSS during it is its own
 * figure (VmHWM reset for the phase, plus VmRSS samples), and the transfer is aborted if the
 * server's RSS passes the limit or the time cap is reached, so a server that buffers whole
 * bodies fails this phase with a reason instead of taking the machine down.
 */
async function runLargePhase(server: RunningServer, target: w.Target, p: Plan, result: ServerResult, content: Buffer): Promise<void> {
  const step = stepper(server, result);
  const size = sizeLabel(p.large.bytes);
  const limitMb = Math.round(p.large.rssLimitBytes / MiB);
  const controller = new AbortController();
  // Sampled peaks per direction, for the JSON detail.
  const phases = { upload: { rss: 0, anon: 0 }, download: { rss: 0, anon: 0 } };
  let phase = phases.upload;
  const watch = server.watchRss(p.large.sampleMs, (sample) => {
    phase.rss = Math.max(phase.rss, sample.rss);
    phase.anon = Math.max(phase.anon, sample.rssAnon);
    if (sample.rss > p.large.rssLimitBytes && !controller.signal.aborted) {
      controller.abort(new Error(`aborted: the server's RSS passed ${limitMb} MB (${Math.round(sample.rss / MiB)} MB)`));
    }
  });
  const opts = { ...p.large, signal: controller.signal };
  let id: string | undefined;
  let completed = false;
  try {
    await step(`att PUT ${size}`, async () => {
      const r = await w.largeAttachmentUpload(target, ATT_DB, content, opts);
      id = r.id;
      return r.figures;
    });
    const download = `att GET ${size}`;
    if (id !== undefined) {
      const uploaded = id;
      phase = phases.download;
      completed = await step(download, () => w.largeAttachmentDownload(target, ATT_DB, uploaded, content, opts));
    } else {
      result.errors[download] = 'not run: the upload failed';
      console.log(`  ${server.name.padEnd(15)}${download.padEnd(22)}skipped: the upload failed`);
    }
  } finally {
    watch.stop();
  }
  const peak = watch.peak();
  // A phase cut short (RSS limit, time cap, error) gives a peak over part of it: no ratio.
  const aborted = !completed;
  if (peak > 0) {
    result.figures.att_large_peak_rss = {
      value: peak / MiB,
      unit: 'MB',
      detail: {
        source: `${watch.hwmReset ? 'VmHWM reset for the phase (clear_refs), and ' : ''}VmRSS sampled every ${p.large.sampleMs} ms`,
        peakRssAnonMB: watch.peakAnon() / MiB,
        peakRssFileMB: watch.peakFile() / MiB,
        uploadSampledRssMB: phases.upload.rss / MiB,
        uploadSampledAnonMB: phases.upload.anon / MiB,
        downloadSampledRssMB: phases.download.rss / MiB,
        downloadSampledAnonMB: phases.download.anon / MiB,
        rssLimitMB: limitMb,
        rssLimitHit: controller.signal.aborted,
        aborted,
      },
    };
    // LMDB and the like map their files: pages read or written through the map count in VmRSS
    // as file pages (page cache, reclaimable); the anonymous part is the server's own memory.
    result.figures.att_large_peak_rss_anon = {
      value: watch.peakAnon() / MiB,
      unit: 'MB',
      detail: { source: `RssAnon sampled every ${p.large.sampleMs} ms`, aborted },
    };
    const mb = (bytes: number): string => formatNumber(bytes / MiB);
    console.log(
      `  ${server.name.padEnd(15)}${`RSS during ${size}`.padEnd(22)}peak ${mb(peak)} MB (sampled: anonymous ${mb(watch.peakAnon())} MB, ` +
        `file-backed ${mb(watch.peakFile())} MB)` +
        (controller.signal.aborted ? `, aborted above ${limitMb} MB` : aborted ? ', phase cut short' : ''),
    );
  }
}

async function benchServer(name: ServerName, opts: Options, p: Plan, content: Buffer): Promise<ServerResult> {
  const result = emptyResult(name, 'ok');
  let mainPeak: number | undefined;
  if (name === 'pouchdb-server') {
    try {
      const install = ensurePeersInstalled(ROOT);
      if (install.installed) result.timings['npm install'] = { wallS: round(install.seconds), serverCpuS: 0, benchCpuS: 0 };
    } catch (err) {
      return { ...result, status: 'failed', error: message(err) };
    }
  }
  const headers: Record<string, string> = {};
  if (name === 'settee' && opts.setteeAuth) headers.authorization = `Basic ${Buffer.from(opts.setteeAuth).toString('base64')}`;
  if (!opts.viewsOnly && !opts.designOnly && !opts.replicationOnly) {
    let server: RunningServer;
    try {
      server = await startServer(name, { root: ROOT, tmpRoot: opts.tmpRoot, setteeConfig: opts.setteeConfig, keepData: opts.keepData });
    } catch (err) {
      console.log(`  ${name}: ${message(err)}`);
      return { ...result, status: 'failed', error: message(err) };
    }
    result.mode = server.mode;
    const target: w.Target = { base: server.url, headers };
    console.log(`\n${name} (pid ${server.pid}) at ${server.url}, data in ${server.dataDir}`);
    try {
      result.version = await serverVersion(target);
      for (const db of [DB, RMW_DB, FEED_DB, ATT_DB]) await w.createDb(target, db);
      await runWorkloads(server, target, p, result);
      // The main run's peak, before the attachments (the large one has its own figure).
      mainPeak = server.peakRssBytes();
      await runAttachmentWorkloads(server, target, p, result, content);
    } catch (err) {
      result.errors.setup = message(err);
      console.log(`  ${name}: ${message(err)}`);
    } finally {
      const peak = mainPeak ?? server.peakRssBytes();
      if (peak > 0) result.figures.peak_rss = { value: peak / 2 ** 20, unit: 'MB', detail: { source: '/proc/<pid>/status VmHWM, before the attachment workloads' } };
      if (!server.alive()) result.errors.server = `server exited during the run; log tail:\n${server.logTail()}`;
      await server.stop();
    }
  }
  // The view phase and the large attachment each run against a freshly started server, so their
  // figures (RSS above all) are what that work costs, not what the earlier workloads left behind.
  if (!opts.skipViews && !opts.designOnly && !opts.replicationOnly) await runViewsOnFreshServer(name, opts, p, result, headers);
  if (!opts.skipDesign && !opts.viewsOnly && !opts.replicationOnly) await runDesignOnFreshServer(name, opts, p, result, headers);
  if (!opts.skipLarge && !opts.viewsOnly && !opts.designOnly && !opts.replicationOnly) await runLargeOnFreshServer(name, opts, p, result, headers, content);
  if (!opts.skipReplication && !opts.viewsOnly && !opts.designOnly) await runReplicationOnFreshServers(name, opts, p, result, headers, content);
  if (Object.keys(result.errors).length > 0) result.status = 'partial';
  return result;
}

async function serverVersion(target: w.Target): Promise<string | undefined> {
  const client = new Client(target.base, target.headers);
  try {
    return (JSON.parse((await client.expect('GET', '/', [200])).body) as { version?: string }).version;
  } finally {
    client.close();
  }
}

/** The view phase's sizes for a server: pouchdb-server may index fewer documents (see the plan). */
function viewPlanFor(p: Plan, name: ServerName): v.ViewPlan {
  const { rssSampleMs: _, pouchDocs, ...plan } = p.views;
  return name === 'pouchdb-server' ? { ...plan, docs: pouchDocs } : plan;
}

/**
 * When pouchdb-server indexed fewer documents than Settee, its figures are put on Settee's scale
 * where the cost model is plain, and said so: whole-index reduce and group_level read every row
 * of the range in pouchdb-mapreduce (time ∝ rows; measured here: 352 ms at 10k rows, 740–790 ms at
 * 20k, 1.4 s at 50k, 3.8–4.0 s at 100k), so they are scaled linearly to Settee's count and shown with "~". Rates (build docs/s,
 * range queries/s) are compared as measured, and so are the incremental update (the same number
 * of edited documents on both servers) and peak RSS: a smaller index can only flatter
 * pouchdb-server there. The measured values stay in the JSON.
 */
function extrapolateViews(p: Plan, result: ServerResult): void {
  const measuredDocs = p.views.pouchDocs;
  const docs = p.views.docs;
  if (measuredDocs === docs) return;
  const factor = docs / measuredDocs;
  const at = `${measuredDocs.toLocaleString('en-US')} docs`;
  for (const key of ['view_reduce', 'view_group_level']) {
    const f = result.figures[key];
    if (!f) continue;
    f.detail = {
      ...f.detail,
      measured: f.value,
      measuredAtDocs: measuredDocs,
      extrapolated: true,
      note: `measured ${formatNumber(f.value)} ${f.unit} on ${at}; shown ×${formatNumber(factor)} (linear: pouchdb-mapreduce reads every row)`,
    };
    f.value *= factor;
  }
  for (const key of ['view_build', 'view_range_cold', 'view_range', 'view_incremental', 'view_peak_rss']) {
    const f = result.figures[key];
    if (!f) continue;
    const same = key === 'view_incremental' ? ` (the same ${p.views.editDocs.toLocaleString('en-US')} docs edited)` : '';
    f.detail = { ...f.detail, measuredAtDocs: measuredDocs, note: `measured on ${at}${same} and compared as is (a smaller index favours pouchdb-server)` };
  }
}

/**
 * The view phase: load the corpus, then build, range queries, reduces and the incremental update,
 * with the server's peak RSS from the build on (VmHWM reset when the build starts, VmRSS sampled).
 * A step that fails (or passes its cap) leaves its figure n/a; steps that need the index then do
 * not run, since a server still building in the background would skew them.
 */
async function runViewPhase(server: RunningServer, target: w.Target, p: Plan, result: ServerResult): Promise<void> {
  const step = stepper(server, result);
  const vp = viewPlanFor(p, server.name);
  const skip = (name: string, why: string): void => {
    result.errors[name] = `not run: ${why}`;
    console.log(`  ${server.name.padEnd(15)}${name.padEnd(22)}skipped: ${why}`);
  };
  await w.createDb(target, VIEW_DB);
  let corpus: v.ViewCorpus | undefined;
  await step('view docs load', async () => {
    const r = await v.loadViewCorpus(target, VIEW_DB, vp);
    corpus = r.corpus;
    return r.figures;
  });
  const later = ['view range queries', 'view reduce', 'view group_level=1', 'view incremental'];
  if (!corpus) {
    for (const name of ['view build', ...later]) skip(name, 'the documents were not loaded');
    return;
  }
  const loaded = corpus;
  const watch = server.watchRss(p.views.rssSampleMs);
  let built = false;
  try {
    built = await step('view build', () => v.viewBuild(target, VIEW_DB, vp));
    if (!built) {
      for (const name of later) skip(name, 'the index build did not complete');
      return;
    }
    await step('view range queries', () => v.viewRangeQueries(target, VIEW_DB, vp));
    await step('view reduce', () => v.viewReduce(target, VIEW_DB, vp));
    await step('view group_level=1', () => v.viewGroupLevel(target, VIEW_DB, vp));
    await step('view incremental', () => v.viewIncremental(target, VIEW_DB, vp, loaded));
  } finally {
    watch.stop();
    const peak = watch.peak();
    if (peak > 0) {
      const source = `${watch.hwmReset ? 'VmHWM reset at the build (clear_refs), and ' : ''}VmRSS sampled every ${p.views.rssSampleMs} ms, from the build to the end of the phase`;
      // A phase cut short gives a peak over part of it: no ratio.
      const aborted = !built;
      result.figures.view_peak_rss = {
        value: peak / MiB,
        unit: 'MB',
        detail: { source, docs: vp.docs, peakRssAnonMB: watch.peakAnon() / MiB, peakRssFileMB: watch.peakFile() / MiB, aborted },
      };
      result.figures.view_peak_rss_anon = { value: watch.peakAnon() / MiB, unit: 'MB', detail: { source: `RssAnon sampled every ${p.views.rssSampleMs} ms`, aborted } };
      const mb = (bytes: number): string => formatNumber(bytes / MiB);
      console.log(
        `  ${server.name.padEnd(15)}${'RSS during views'.padEnd(22)}peak ${mb(peak)} MB (sampled: anonymous ${mb(watch.peakAnon())} MB, ` +
          `file-backed ${mb(watch.peakFile())} MB)${aborted ? ', phase cut short' : ''}`,
      );
    }
  }
}

/** A freshly started server for one phase; undefined (the failure recorded under `errorKey`) if it did not start. */
async function startFresh(name: ServerName, opts: Options, result: ServerResult, errorKey: string): Promise<RunningServer | undefined> {
  try {
    return await startServer(name, { root: ROOT, tmpRoot: opts.tmpRoot, setteeConfig: opts.setteeConfig, keepData: opts.keepData });
  } catch (err) {
    result.errors[errorKey] = message(err);
    console.log(`  ${name}: ${message(err)}`);
    return undefined;
  }
}

async function runViewsOnFreshServer(name: ServerName, opts: Options, p: Plan, result: ServerResult, headers: Record<string, string>): Promise<void> {
  const fresh = await startFresh(name, opts, result, 'views');
  if (!fresh) return;
  result.mode ??= fresh.mode;
  const target: w.Target = { base: fresh.url, headers };
  console.log(`\n${name} (pid ${fresh.pid}) at ${fresh.url}: view phase, ${viewPlanFor(p, name).docs} docs, on a fresh server`);
  try {
    result.version ??= await serverVersion(target);
    await runViewPhase(fresh, target, p, result);
    if (name === 'pouchdb-server') extrapolateViews(p, result);
  } catch (err) {
    result.errors.views = message(err);
    console.log(`  ${name}: ${message(err)}`);
  } finally {
    if (!fresh.alive()) result.errors.viewsServer = `server exited during the view phase; log tail:\n${fresh.logTail()}`;
    await fresh.stop();
  }
}

/**
 * The design-function phase on a fresh server: plain vs validated writes, then a `_list` over
 * the rows of a view (built first, so the list's time is the list's), with the server's peak RSS
 * during the list (VmHWM reset when it starts, VmRSS sampled).
 */
async function runDesignOnFreshServer(name: ServerName, opts: Options, p: Plan, result: ServerResult, headers: Record<string, string>): Promise<void> {
  const fresh = await startFresh(name, opts, result, 'design');
  if (!fresh) return;
  result.mode ??= fresh.mode;
  const target: w.Target = { base: fresh.url, headers };
  const { rssSampleMs, ...plan } = p.design;
  console.log(`\n${name} (pid ${fresh.pid}) at ${fresh.url}: design-function phase, on a fresh server`);
  const step = stepper(fresh, result);
  try {
    result.version ??= await serverVersion(target);
    await step('validated writes', () => d.validatedWrites(target, plan));
    const prepared = await step('list corpus + view', async () => {
      await d.prepareList(target, LIST_DB, plan);
      return {};
    });
    if (prepared) {
      const watch = fresh.watchRss(rssSampleMs);
      let ran = false;
      try {
        ran = await step(`_list ${plan.listRows} rows`, () => d.listRun(target, LIST_DB, plan));
      } finally {
        watch.stop();
        if (watch.peak() > 0) {
          result.figures.ddoc_list_peak_rss = {
            value: watch.peak() / MiB,
            unit: 'MB',
            detail: { source: `${watch.hwmReset ? 'VmHWM reset for the list, and ' : ''}VmRSS sampled every ${rssSampleMs} ms`, peakRssAnonMB: watch.peakAnon() / MiB, aborted: !ran },
          };
        }
      }
    }
  } catch (err) {
    result.errors.design = message(err);
    console.log(`  ${name}: ${message(err)}`);
  } finally {
    if (!fresh.alive()) result.errors.designServer = `server exited during the design phase; log tail:\n${fresh.logTail()}`;
    await fresh.stop();
  }
}

async function runLargeOnFreshServer(
  name: ServerName, opts: Options, p: Plan, result: ServerResult, headers: Record<string, string>, content: Buffer,
): Promise<void> {
  let fresh: RunningServer;
  try {
    fresh = await startServer(name, { root: ROOT, tmpRoot: opts.tmpRoot, setteeConfig: opts.setteeConfig, keepData: opts.keepData });
  } catch (err) {
    result.errors.large = message(err);
    return;
  }
  const target: w.Target = { base: fresh.url, headers };
  try {
    await w.createDb(target, ATT_DB);
    await runLargePhase(fresh, target, p, result, content);
  } catch (err) {
    result.errors.large = message(err);
    console.log(`  ${name}: ${message(err)}`);
  } finally {
    await fresh.stop();
  }
}

/**
 * The replication phase, on a fresh server and a second process of the same kind (the pull's
 * source): by name, by URL, pulled, attachments by URL, then a continuous replication's latency.
 */
async function runReplicationOnFreshServers(
  name: ServerName, opts: Options, p: Plan, result: ServerResult, headers: Record<string, string>, content: Buffer,
): Promise<void> {
  const rp = p.replication;
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      servers.push(await startServer(name, { root: ROOT, tmpRoot: opts.tmpRoot, setteeConfig: opts.setteeConfig, keepData: opts.keepData }));
    }
  } catch (err) {
    result.errors.replication = message(err);
    console.log(`  ${name}: ${message(err)}`);
    for (const s of servers) await s.stop();
    return;
  }
  const [main, second] = servers as [RunningServer, RunningServer];
  const target: w.Target = { base: main.url, headers };
  const remote: w.Target = { base: second.url, headers };
  const withAuth = (base: string): string => (opts.setteeAuth && name === 'settee' ? base.replace('http://', `http://${opts.setteeAuth}@`) : base);
  console.log(`\n${name} (pids ${main.pid}, ${second.pid}): replication phase, ${rp.docs} docs, ${rp.attachmentDocs} × 256 KiB attachments`);
  const step = stepper(main, result);
  try {
    result.version ??= await serverVersion(target);
    result.mode ??= main.mode;
    await r.loadDocs(target, 'repl_src', rp.docs);
    await r.loadDocs(remote, 'repl_src', rp.docs);
    await r.loadAttachments(target, 'repl_att_src', content, rp);
    const figure = (key: string, x: { docsPerSecond: number; seconds: number }): w.Figures =>
      ({ [key]: { value: x.docsPerSecond, unit: 'docs/s', detail: { docs: rp.docs, seconds: x.seconds } } });
    await step('replicate by name', async () => figure('repl_by_name', await r.replicateOnce(target, 'repl_src', 'repl_by_name', rp.docs, rp.capSeconds)));
    await step('replicate by URL', async () => figure('repl_by_url', await r.replicateOnce(
      target, withAuth(`${main.url}/repl_src`), 'repl_by_url', rp.docs, rp.capSeconds, withAuth(`${main.url}/repl_by_url`))));
    await step('replicate pull', async () => figure('repl_pull', await r.replicateOnce(target, withAuth(`${second.url}/repl_src`), 'repl_pull', rp.docs, rp.capSeconds)));
    await step('replicate attachments', async () => {
      const x = await r.replicateOnce(target, withAuth(`${main.url}/repl_att_src`), 'repl_att', rp.attachmentDocs, rp.capSeconds, withAuth(`${main.url}/repl_att`));
      return { repl_att: { value: r.ATTACHMENT_MB(rp) / x.seconds, unit: 'MB/s', detail: { docs: rp.attachmentDocs, seconds: x.seconds } } };
    });
    await step('continuous latency', () => r.continuousLatency({ base: withAuth(main.url), headers }, rp));
  } catch (err) {
    result.errors.replication = message(err);
    console.log(`  ${name}: ${message(err)}`);
  } finally {
    for (const s of servers) await s.stop();
  }
}

/** Notes worth printing under the table: failures, capped workloads, row-count mismatches. */
function notes(results: ServerResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    if (r.status === 'skipped') continue;
    if (r.error) lines.push(`${r.name}: ${r.error.split('\n')[0]}`);
    for (const [name, err] of Object.entries(r.errors)) {
      lines.push(`${r.name}: ${name} ${err.startsWith('not run:') ? '' : 'failed: '}${err.split('\n')[0]}`);
    }
    for (const [key, f] of Object.entries(r.figures)) {
      if (typeof f.detail?.note === 'string') lines.push(`${r.name}: ${key} ${f.detail.note}`);
      else if (f.detail?.capped === true) lines.push(`${r.name}: ${key} hit its time cap (${f.detail.docs} of ${f.detail.requested} docs)`);
      if (key === 'att_large_peak_rss' && f.detail?.aborted === true) {
        lines.push(`${r.name}: its peak RSS during the large attachment covers only the part that ran (no ratio)`);
      }
      if (key === 'view_peak_rss' && f.detail?.aborted === true) {
        lines.push(`${r.name}: its peak RSS during the view phase covers only the part that ran (no ratio)`);
      }
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
  if (opts.pouchViewDocs !== undefined) p.views.pouchDocs = opts.pouchViewDocs;
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
  if (!opts.viewsOnly && !opts.designOnly) {
    console.log(
      `Workloads: ${p.puts.docs} single PUTs, ${p.bulk.batches}×${p.bulk.batchSize} bulk docs, ` +
        `GETs ${p.gets.seconds} s, paging ${p.paging.seconds} s each, RMW ${p.rmw.seconds} s, ${p.feed.writes} feed writes, ` +
        `${p.attachments.count}×256 KiB attachments up and down (${p.attachments.clients} clients), ` +
        (opts.skipLarge ? 'large attachment skipped' : `one ${sizeLabel(p.large.bytes)} attachment up and down`),
    );
  }
  if (!opts.skipDesign && !opts.viewsOnly) {
    console.log(`Design functions: ${p.design.puts.docs} PUTs and ${p.design.bulk.batches}×${p.design.bulk.batchSize} bulk docs with and without validate_doc_update, _list over ${p.design.listRows} rows`);
  }
  if (!opts.skipViews && !opts.designOnly) {
    const c = p.views.caps;
    console.log(
      `Views: ${p.views.docs} docs${p.views.pouchDocs !== p.views.docs ? ` (pouchdb-server: ${p.views.pouchDocs})` : ''}, map emit([doc.type, doc.n], doc.n) + _sum; ${p.views.rangeQueries} range queries ` +
        `(${p.views.rangeClients} clients), ${p.views.reduceReps}× reduce and group_level=1, ${p.views.editDocs} docs edited; ` +
        `caps (s): load ${c.load}, build ${c.build}, range ${c.range}, reduce ${c.reduce}, group ${c.group}, update ${c.incremental}`,
    );
  }
  // Attachment bodies: windows of one deterministic pseudo-random pool, the same for every server.
  const content = w.randomPool(p.attachments.poolBytes, 42);

  const results = new Map<ServerName, ServerResult>();
  for (const name of SERVER_NAMES) {
    results.set(name, opts.servers.includes(name) ? await benchServer(name, opts, p, content) : emptyResult(name, 'skipped'));
  }
  const settee = results.get('settee')!;
  const pouch = results.get('pouchdb-server')!;
  const rows = compare(settee, pouch, {
    largeSize: sizeLabel(p.large.bytes),
    skipLarge: opts.skipLarge,
    viewDocs: p.views.docs.toLocaleString('en-US'),
    viewEdits: `${p.views.editDocs.toLocaleString('en-US')} (1%)`,
    skipViews: opts.skipViews || opts.designOnly,
    viewsOnly: opts.viewsOnly,
    skipDesign: opts.skipDesign || opts.viewsOnly || opts.replicationOnly,
    designOnly: opts.designOnly,
    listRows: p.design.listRows.toLocaleString('en-US'),
    replDocs: p.replication.docs.toLocaleString('en-US'),
    replAttDocs: p.replication.attachmentDocs.toLocaleString('en-US'),
    skipReplication: opts.skipReplication || opts.viewsOnly || opts.designOnly,
    replicationOnly: opts.replicationOnly,
  });

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
      ...(r.faster !== undefined ? { faster: r.faster === null ? null : round(r.faster) } : {}),
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
