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

/** Where a PouchDB of a replication pair lives: a Settee database, or a local leveldb one. */
export type PouchKind = 'local' | 'http';
export type PouchPair = [PouchKind, PouchKind];

/** The pairs PouchDB's suite runs replication in that involve a server. SETTEE_POUCH_LOCAL_PAIR=1 adds [local, local]: a failure there is PouchDB's, not Settee's. */
export function pouchPairs(): PouchPair[] {
  const pairs: PouchPair[] = [['local', 'http'], ['http', 'http'], ['http', 'local']];
  if (process.env['SETTEE_POUCH_LOCAL_PAIR'] === '1') pairs.push(['local', 'local']);
  return pairs;
}

/** One test's two databases, named as PouchDB's suite names them: `name` (first of the pair) and `remote`. */
export interface PairDbs {
  pair: PouchPair;
  /** Addresses (a URL through the proxy, or a leveldb path) PouchDB accepts in place of a database. */
  name: string;
  remote: string;
  /** Settee database names of the http ones, for the proxy log. */
  nameDb: string;
  remoteDb: string;
  /** A new PouchDB for an address (tracked so the fixture closes it). */
  open(address: string): any;
  db(): any;
  rem(): any;
}

let pairCounter = 0;

/** Fresh databases for a pair on `fx`, named `<prefix><n>-<kinds>-testdb` and `…-remote`. */
export function pairDbs(fx: PouchFixture, pair: PouchPair, prefix: string): PairDbs {
  const n = ++pairCounter;
  const tag = pair.map((k) => k[0]).join('');
  const nameDb = `${prefix}${n}-${tag}-testdb`;
  const remoteDb = `${prefix}${n}-${tag}-remote`;
  const address = (kind: PouchKind, db: string) => (kind === 'http' ? fx.proxy.url + encodeURIComponent(db) : join(fx.localDir, db));
  const open = (addr: string) => (addr.startsWith('http') ? fx.open(decodeURIComponent(addr.slice(fx.proxy.url.length))) : fx.local(addr.slice(fx.localDir.length + 1)));
  const d: PairDbs = {
    pair, nameDb, remoteDb,
    name: address(pair[0], nameDb),
    remote: address(pair[1], remoteDb),
    open,
    db: () => open(d.name),
    rem: () => open(d.remote),
  };
  return d;
}
