/**
 * What the PouchDB client suites share: a server behind the logging proxy, Settee databases
 * opened through PouchDB's HTTP adapter, local leveldb PouchDBs in a temporary directory, and
 * the clean-up of every database they opened.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import PouchDB from 'pouchdb';
import { startServer, type TestServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { startProxy, type LoggingProxy } from './proxy.js';

export class PouchFixture {
  private readonly opened: any[] = [];

  private constructor(
    readonly server: TestServer,
    readonly proxy: LoggingProxy,
    readonly raw: ReturnType<typeof client>,
    readonly localDir: string,
  ) {}

  static async start(tmpPrefix: string): Promise<PouchFixture> {
    const server = await startServer();
    const proxy = await startProxy(server.url);
    return new PouchFixture(server, proxy, client(server.url), mkdtempSync(join(tmpdir(), tmpPrefix)));
  }

  /** A Settee database created with raw HTTP, opened through PouchDB's HTTP adapter (via the proxy). */
  async remote(name: string): Promise<any> {
    const r = await this.raw.put(`/${encodeURIComponent(name)}`);
    assert.equal(r.status, 201, r.text);
    return this.open(name);
  }

  /** A Settee database through PouchDB's HTTP adapter, as it is (PouchDB creates it if missing). */
  open(name: string): any {
    const db = new PouchDB(this.proxy.url + encodeURIComponent(name));
    this.opened.push(db);
    return db;
  }

  /** A local leveldb PouchDB in the temporary directory. */
  local(name: string): any {
    const db = new PouchDB(join(this.localDir, name));
    this.opened.push(db);
    return db;
  }

  async close(): Promise<void> {
    for (const db of this.opened) {
      try { await db.close(); } catch { /* already closed or destroyed */ }
    }
    await this.proxy.stop();
    await this.server.stop();
    rmSync(this.localDir, { recursive: true, force: true });
  }
}

/** Awaits a client call that must fail and returns its error. */
export async function failure(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
}
