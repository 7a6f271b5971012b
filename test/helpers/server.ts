/**
 * Starts a real Settee server process for a test file: its own port and temporary data
 * directory, stopped (or killed) by the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export async function startServer(options: { dataDir?: string; port?: number; args?: string[] } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'settee-test-'));
  const child = spawn(process.execPath, [ENTRY, '--port', String(options.port ?? 0), '--data-dir', dataDir, ...(options.args ?? [])], {
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
