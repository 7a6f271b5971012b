import { fileURLToPath } from 'node:url';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from './http.js';

/** The compiled server entry beside this compiled file (dist/src/main.js for dist/bench). */
const SETTEE_ENTRY = fileURLToPath(new URL('../src/main.js', import.meta.url));

export type ServerName = 'settee' | 'pouchdb-server';
export const SERVER_NAMES: readonly ServerName[] = ['settee', 'pouchdb-server'];

export interface StartOptions {
  /** The project root (where bin/settee.js and bench/peers live). */
  root: string;
  /** Parent directory for the server's temporary data directory. */
  tmpRoot: string;
  /** Extra Settee settings file, passed as `--config`. */
  setteeConfig?: string;
  /** Leave the data directory (and the server log in it) in place after stopping. */
  keepData?: boolean;
}

export interface RunningServer {
  name: ServerName;
  url: string;
  pid: number;
  dataDir: string;
  logFile: string;
  /** How the server stores its data, for the report. */
  mode: string;
  /** CPU seconds (user + system) the server process has used so far. */
  cpuSeconds(): number;
  /** Peak resident set size so far, in bytes (VmHWM and our own samples, whichever is larger). */
  peakRssBytes(): number;
  /** Current resident set size (VmRSS) in bytes, 0 if unknown. */
  rssBytes(): number;
  /**
   * Starts a new peak-RSS window: resets the kernel's VmHWM (writes 5 to /proc/PID/clear_refs)
   * and returns a function giving the peak since then, in bytes: VmHWM when the reset worked,
   * and in any case the largest VmRSS sampled every `intervalMs` (0 if /proc is unreadable).
   * `onSample` sees every sample (e.g. to abort above a limit). Call `stop()` to end sampling.
   */
  watchRss(intervalMs: number, onSample?: (sample: RssSample) => void): RssWatch;
  alive(): boolean;
  /** The last lines the server wrote to its log, for error messages. */
  logTail(lines?: number): string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its data unless asked to keep it. */
  stop(): Promise<void>;
}

/** One reading of /proc/PID/status, in bytes: VmRSS and its anonymous and file-backed parts. */
export interface RssSample {
  rss: number;
  rssAnon: number;
  rssFile: number;
}

/** A peak-RSS window (see `RunningServer.watchRss`). */
export interface RssWatch {
  /** Peak RSS since the window opened, in bytes. */
  peak(): number;
  /** Largest sampled RssAnon (RSS without file pages mapped in) and RssFile, in bytes. */
  peakAnon(): number;
  peakFile(): number;
  /** Whether VmHWM could be reset for the window (else `peak` is from samples only). */
  hwmReset: boolean;
  stop(): void;
}

/** Servers still running, with the data directory to remove once killed (undefined: keep it). */
const live = new Map<ChildProcess, string | undefined>();

/** Kills every server still running; synchronous, so it is safe in an 'exit' or signal handler. */
export function killAllServers(): void {
  for (const [child, dataDir] of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  live.clear();
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function peersDir(root: string): string {
  return join(root, 'bench', 'peers');
}

function pouchdbServerBin(root: string): string {
  return join(peersDir(root), 'node_modules', 'pouchdb-server', 'bin', 'pouchdb-server');
}

/** Installs bench/peers (pouchdb-server) from the npm registry if it is not there yet. */
export function ensurePeersInstalled(root: string): { installed: boolean; seconds: number } {
  if (existsSync(pouchdbServerBin(root))) return { installed: false, seconds: 0 };
  const started = Date.now();
  console.log('Installing pouchdb-server into bench/peers (npm install, first run only)...');
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--prefix', peersDir(root)], {
    cwd: root,
    stdio: 'inherit',
  });
  if (result.status !== 0 || !existsSync(pouchdbServerBin(root))) {
    throw new Error(`npm install --prefix bench/peers failed (exit ${result.status ?? result.signal})`);
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`Installed pouchdb-server in ${seconds.toFixed(0)} s.`);
  return { installed: true, seconds };
}

interface ProcStatus {
  rss: number;
  hwm: number;
  /** The anonymous part of rss (heap, buffers), without file pages mapped in (e.g. LMDB's map). */
  rssAnon: number;
  rssFile: number;
}

function readProcStatus(pid: number): ProcStatus | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rss: kb('VmRSS') * 1024, hwm: kb('VmHWM') * 1024, rssAnon: kb('RssAnon') * 1024, rssFile: kb('RssFile') * 1024 };
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function readProcCpuSeconds(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

function commandFor(name: ServerName, port: number, dataDir: string, opts: StartOptions): { args: string[]; cwd: string; mode: string } {
  if (name === 'settee') {
    // SETTEE_BENCH_NODE_FLAGS: flags for Settee's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p` to profile a phase).
    const nodeFlags = (process.env.SETTEE_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
    const args = [...nodeFlags, SETTEE_ENTRY, '--port', String(port), '--bind', '127.0.0.1', '--data-dir', join(dataDir, 'data')];
    if (opts.setteeConfig) args.push('--config', opts.setteeConfig);
    return { args, cwd: opts.root, mode: 'on disk (LMDB), fsync per commit (group commit)' };
  }
  // pouchdb-server writes config.json and log.txt beside it: keep both in the temp dir.
  const args = [
    pouchdbServerBin(opts.root),
    '--port', String(port),
    '--host', '127.0.0.1',
    '--dir', join(dataDir, 'db'),
    '--config', join(dataDir, 'config.json'),
    '--no-stdout-logs',
  ];
  return { args, cwd: dataDir, mode: 'on disk (LevelDB via leveldown, default mode: writes not fsynced)' };
}

/** Starts a server on a free loopback port with its data in a new temp dir; resolves once GET / answers. */
export async function startServer(name: ServerName, opts: StartOptions): Promise<RunningServer> {
  if (name === 'settee' && !existsSync(SETTEE_ENTRY)) {
    throw new Error(`${SETTEE_ENTRY} does not exist: build first`);
  }
  const port = await freePort();
  const dataDir = mkdtempSync(join(opts.tmpRoot, `settee-bench-${name}-`));
  mkdirSync(join(dataDir, name === 'settee' ? 'data' : 'db'), { recursive: true });
  const logFile = join(dataDir, 'server.log');
  const { args, cwd, mode } = commandFor(name, port, dataDir, opts);
  const logFd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  live.set(child, opts.keepData ? undefined : dataDir);
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `exited with ${signal ?? `code ${code}`}`;
    live.delete(child);
  });
  const pid = child.pid ?? -1;

  // Sample RSS too, in case VmHWM is not available.
  let sampledPeak = 0;
  const sampler = setInterval(() => {
    const status = readProcStatus(pid);
    if (status) sampledPeak = Math.max(sampledPeak, status.rss, status.hwm);
  }, 200);
  sampler.unref();

  const url = `http://127.0.0.1:${port}`;
  const logTail = (lines = 15): string => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  };
  const server: RunningServer = {
    name,
    url,
    pid,
    dataDir,
    logFile,
    mode,
    cpuSeconds: () => readProcCpuSeconds(pid) ?? 0,
    peakRssBytes: () => {
      const status = readProcStatus(pid);
      if (status) sampledPeak = Math.max(sampledPeak, status.rss, status.hwm);
      return sampledPeak;
    },
    rssBytes: () => readProcStatus(pid)?.rss ?? 0,
    watchRss: (intervalMs, onSample) => {
      // Keep the whole-run peak: fold the current high-water mark in before resetting it.
      const before = readProcStatus(pid);
      if (before) sampledPeak = Math.max(sampledPeak, before.rss, before.hwm);
      let hwmReset = false;
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        hwmReset = true;
      } catch {
        // older kernel or not permitted: rely on the samples
      }
      let peak = 0;
      let peakAnon = 0;
      let peakFile = 0;
      const sample = (): void => {
        const status = readProcStatus(pid);
        if (!status) return;
        peak = Math.max(peak, status.rss, hwmReset ? status.hwm : 0);
        peakAnon = Math.max(peakAnon, status.rssAnon);
        peakFile = Math.max(peakFile, status.rssFile);
        onSample?.(status);
      };
      sample();
      const timer = setInterval(sample, intervalMs);
      return {
        peak: () => {
          if (exited === undefined) {
            const status = readProcStatus(pid);
            if (status) peak = Math.max(peak, status.rss, hwmReset ? status.hwm : 0);
          }
          return peak;
        },
        peakAnon: () => peakAnon,
        peakFile: () => peakFile,
        hwmReset,
        stop: () => clearInterval(timer),
      };
    },
    alive: () => exited === undefined,
    logTail,
    stop: async () => {
      clearInterval(sampler);
      if (exited === undefined) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await gone;
        clearTimeout(timer);
      }
      live.delete(child);
      if (!opts.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };

  try {
    await waitUntilAnswering(url, () => exited, 60_000);
  } catch (err) {
    const tail = logTail();
    await server.stop();
    throw new Error(`${name} did not start: ${(err as Error).message}${tail ? `\n--- ${name} log ---\n${tail}` : ''}`);
  }
  return server;
}

async function waitUntilAnswering(url: string, exited: () => string | undefined, timeoutMs: number): Promise<void> {
  const client = new Client(url);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const gone = exited();
      if (gone) throw new Error(`process ${gone}`);
      try {
        const reply = await client.request('GET', '/', undefined, 2000);
        if (reply.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`GET / did not answer 200 within ${timeoutMs / 1000} s`);
      await sleep(100);
    }
  } finally {
    client.close();
  }
}
