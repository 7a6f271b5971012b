/**
 * Starts a real Settee server process for a test file: its own port and temporary data
 * directory, stopped (or killed) by the test. `serverForFile` does this for a whole file.
 */
import { after } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { client, type Client } from './http.js';

/** The compiled server entry beside this compiled file, so any build output folder works. */
export const ENTRY = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'main.js');

export interface TestServer {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ */
  url: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  /** Graceful stop; removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
}

/** `port: null` passes no `--port`, leaving the port to the configuration. */
export async function startServer(options: { dataDir?: string; port?: number | null; args?: string[] } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'settee-test-'));
  const portArgs = options.port === null ? [] : ['--port', String(options.port ?? 0)];
  const child = spawn(process.execPath, [ENTRY, ...portArgs, '--data-dir', dataDir, ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        child.stdout!.off('data', onData);
        resolveUrl(m[1]!.endsWith('/') ? m[1]! : `${m[1]}/`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (code) => reject(new Error(`settee exited with ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`settee did not start: ${output}`)), 15000).unref();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = Number(new URL(url).port);
  return {
    url, port, dataDir, process: child,
    async stop(stopOptions = {}) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      if (!stopOptions.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The file's server: the current process, followed across restarts. */
export interface FileServer {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly process: ChildProcess;
  /** Graceful stop; removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  /**
   * Stops the process, keeping the data directory, and starts a new one on it (same arguments,
   * new port). `url`, `port`, `process` and the file's client `c` follow the new process.
   */
  restart(): Promise<void>;
}

export interface ServerForFileOptions {
  /** Extra command-line arguments for the server. */
  args?: string[];
}

/**
 * The server most test files share: `const { server, c } = await serverForFile()` at the top of
 * a file starts one server for the file while the module loads, and registers an after() hook
 * that stops it and removes its data directory. `c` is `client(server.url)`, following restarts.
 *
 * It is started here rather than in a before() hook because node:test runs a file's top-level
 * before() hooks as soon as they are registered, all at once: a file's own before() could not
 * count on a server that another before() is still starting. Started first, it is there for
 * every hook and test of the file.
 */
export async function serverForFile(options: ServerForFileOptions = {}): Promise<{ server: FileServer; c: Client }> {
  let current = await startServer({ args: options.args });
  const dataDir = current.dataDir;
  after(async () => {
    await current.stop();
    // After a restart the process was given the directory, so stop() leaves it in place.
    rmSync(dataDir, { recursive: true, force: true });
  });

  const server: FileServer = {
    get url() { return current.url; },
    get port() { return current.port; },
    get dataDir() { return current.dataDir; },
    get process() { return current.process; },
    stop: (stopOptions) => current.stop(stopOptions),
    kill: () => current.kill(),
    async restart() {
      await current.stop({ keepData: true });
      current = await startServer({ dataDir, args: options.args });
    },
  };
  return { server, c: client(() => server.url) };
}
