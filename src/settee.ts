/**
 * The composition root: loads configuration, opens storage and the engines, and serves them over
 * HTTP. `POST /_restart` calls `restart()`, which reloads configuration and reopens every
 * database without dropping the listening socket.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Config } from './config/config.js';
import { Logger } from './log/logger.js';
import { LmdbBackend } from './storage/lmdb.js';
import { DatabaseRegistry } from './core/registry.js';
import { UuidGenerator } from './core/uuids.js';
import { TaskRegistry } from './core/tasks.js';
import { CompactionDaemon, type IndexSizes } from './core/compaction-daemon.js';
import type { Database } from './core/database.js';
import { HttpServer } from './http/server.js';
import type { Services } from './api/services.js';
import { AUTH_SECTIONS, HTTPD_SECTIONS, MAIN_CONFIG_SECTION } from './couchdb-names.js';
import { routes } from './api/routes.js';
import { ViewService } from './views/service.js';
import { DesignService } from './design/service.js';
import { QueryServer } from './js/query-server.js';
import { availableParallelism } from 'node:os';
import { Authenticator } from './auth/authenticator.js';
import { ReplicatorManager } from './replicator/manager.js';
import { ReplicatorDatabase } from './replicator/replicator-db.js';
import { ensureReplicatorDesignDoc } from './auth/replicator-db.js';
import { StatsAggregator, parseWindows } from './core/stats.js';
import { QUERY_LANGUAGE } from './mango/indexes.js';
import { mangoIndexProgram } from './mango/index-program.js';

export interface SetteeOptions {
  port?: number;
  bind?: string;
  dataDir?: string;
  /** The writable local.ini; defaults to `<data dir>/local.ini`. */
  configFile?: string;
  /** Copy log lines to stderr. */
  logToStderr?: boolean;
}

/** The installed package's root: the nearest folder above this file holding etc/default.ini. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'etc', 'default.ini'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('etc/default.ini not found above the server code');
    dir = parent;
  }
  return dir;
}

export const DEFAULT_INI = join(packageRoot(), 'etc', 'default.ini');

export class Settee {
  private services!: Services;
  private http!: HttpServer;
  private address: { port: number; host: string } | undefined;
  private tlsAddress: { port: number; host: string } | undefined;
  private replicatorDb: ReplicatorDatabase | undefined;
  private compactionDaemon: CompactionDaemon | undefined;
  /** The restart under way: requests that arrive meanwhile wait for the new services. */
  private restarting: Promise<void> | undefined;

  private constructor(private readonly options: SetteeOptions) {}

  static async start(options: SetteeOptions = {}): Promise<Settee> {
    const settee = new Settee(options);
    await settee.boot();
    const port = options.port ?? settee.services.config.layered(HTTPD_SECTIONS).getInt('port', 5984);
    const host = options.bind ?? settee.services.config.layered(HTTPD_SECTIONS).getString('bind_address', '127.0.0.1');
    const address = await settee.http.listen(port, host);
    settee.address = { port: address.port, host };
    // Clients read the port back from /_config (port 0 means "pick one"): report the real one.
    await settee.services.config.set(settee.services.config.layered(HTTPD_SECTIONS).sectionOf('port'), 'port', String(address.port), false);
    await settee.startTls(host);
    settee.services.log.info(`Apache CouchDB-compatible Settee has started on ${settee.url}`);
    settee.startReplicatorDb();
    settee.startCompactionDaemon();
    return settee;
  }

  /**
   * HTTPS beside HTTP, as CouchDB 1.6 enables it: an `httpsd` entry in `[daemons]`, with
   * `[ssl] cert_file`, `key_file` (PEM) and `port` (6984).
   */
  private async startTls(host: string): Promise<void> {
    const config = this.services.config;
    if (!config.get('daemons', 'httpsd')) return;
    const certFile = config.get('ssl', 'cert_file');
    const keyFile = config.get('ssl', 'key_file');
    if (!certFile || !keyFile) {
      this.services.log.error('[daemons] httpsd is set but [ssl] cert_file or key_file is missing: HTTPS not started');
      return;
    }
    const tls = { cert: await readFile(resolve(certFile)), key: await readFile(resolve(keyFile)) };
    const address = await this.http.listenTls(config.getInt('ssl', 'port', 6984), host, tls);
    this.tlsAddress = { port: address.port, host };
    await config.set('ssl', 'port', String(address.port), false);
    this.services.log.info(`HTTPS on ${this.tlsUrl}`);
  }

  /** The HTTPS address, when TLS is on. */
  get tlsUrl(): string | undefined {
    if (!this.tlsAddress) return undefined;
    const host = this.tlsAddress.host === '0.0.0.0' || this.tlsAddress.host === '::' ? '127.0.0.1' : this.tlsAddress.host;
    return `https://${host.includes(':') ? `[${host}]` : host}:${this.tlsAddress.port}/`;
  }

  get url(): string {
    const host = this.address?.host === '0.0.0.0' || this.address?.host === '::' ? '127.0.0.1' : this.address?.host;
    return `http://${host?.includes(':') ? `[${host}]` : host}:${this.address?.port}/`;
  }

  private async boot(): Promise<void> {
    const dataDir = resolve(this.options.dataDir ?? './data');
    const overrides: Record<string, Record<string, string>> = {};
    if (this.options.dataDir !== undefined) {
      overrides[MAIN_CONFIG_SECTION] = { database_dir: dataDir, view_index_dir: dataDir };
      overrides['log'] = { file: join(dataDir, 'settee.log') };
    }
    if (this.options.port !== undefined) overrides['httpd'] = { ...overrides['httpd'], port: String(this.options.port) };
    if (this.options.bind !== undefined) overrides['httpd'] = { ...overrides['httpd'], bind_address: this.options.bind };
    const config = await Config.load({
      defaultFile: DEFAULT_INI,
      localFile: resolve(this.options.configFile ?? join(dataDir, 'local.ini')),
      overrides,
    });
    this.services = await this.buildServices(config);
    this.http = new HttpServer(routes, () => this.services, () => this.restarting);
    this.http.onArrival((method) => this.services.stats.collector.countMethod(method));
    this.http.onRequest((method, status, ms, req) => {
      this.services.stats.collector.recordRequest(status, ms);
      this.services.log.info(`${req.peer} - - ${method} ${req.raw.url} ${status}`);
    });
  }

  private async buildServices(config: Config): Promise<Services> {
    const logFile = config.get('log', 'file');
    const log = new Logger(logFile ? resolve(logFile) : undefined, { config, stderr: this.options.logToStderr });
    let serverUuid = config.get(MAIN_CONFIG_SECTION, 'uuid');
    if (!serverUuid) {
      serverUuid = randomBytes(16).toString('hex');
      await config.set(MAIN_CONFIG_SECTION, 'uuid', serverUuid, true);
    }
    const backend = new LmdbBackend(resolve(config.getString(MAIN_CONFIG_SECTION, 'database_dir', './data')));
    const dbs = new DatabaseRegistry(backend, () => ({
      maxDbsOpen: config.getInt(MAIN_CONFIG_SECTION, 'max_dbs_open', 100),
      systemDbs: [config.layered(AUTH_SECTIONS).getString('authentication_db', '_users'), config.getString('replicator', 'db', '_replicator')],
      revsLimit: 1000,
      attachments: {
        compressibleTypes: config.getString('attachments', 'compressible_types', ''),
        compressionLevel: config.getInt('attachments', 'compression_level', 8),
      },
    }));
    const uuids = new UuidGenerator(() => ({
      algorithm: config.getString('uuids', 'algorithm', 'sequential'),
      utcIdSuffix: config.getString('uuids', 'utc_id_suffix', ''),
    }));
    const viewDir = resolve(config.getString(MAIN_CONFIG_SECTION, 'view_index_dir', config.getString(MAIN_CONFIG_SECTION, 'database_dir', './data')));
    let queryServer: Promise<QueryServer> | undefined;
    const sandbox = () => {
      queryServer ??= QueryServer.create({
        timeoutMs: config.getInt(MAIN_CONFIG_SECTION, 'os_process_timeout', 5000),
        memoryLimitBytes: 256 * 1024 * 1024,
        workers: Math.max(1, Math.min(2, availableParallelism())),
        // As couch_os_process:readjson logs a query server's ["log", Msg]: "OS Process <port> Log :: Msg".
        log: (message) => log.info(`OS Process #Port<0.${process.pid}> Log :: ${message}`),
        mapInterpreter: () => config.getBool('query_server_config', 'map_interpreter', true),
        // View indexes take their rows encoded by the workers (sort keys, stored rows).
        mapEncoder: new URL('./views/map-rows.js', import.meta.url),
      }).catch((err: unknown) => {
        // Not kept: the next request that needs the sandbox tries to start it again.
        queryServer = undefined;
        throw err;
      });
      return queryServer;
    };
    const tasks = new TaskRegistry();
    // Mango's JSON indexes are views of `query` design documents whose map runs natively.
    const views = new ViewService(new LmdbBackend(join(viewDir, '.views')), sandbox, new Map([[QUERY_LANGUAGE, mangoIndexProgram]]), tasks);
    // A deleted database takes its view indexes with it.
    dbs.onEvent((name, type) => {
      if (type === 'deleted') void views.dropDatabase(name).catch((err) => log.error(`dropping indexes of ${name}: ${String(err)}`));
    });
    // CouchDB 1.6 creates its system databases at start-up; clients expect them to exist.
    // (The users database comes with authentication, below.)
    const auth = await Authenticator.start(config, dbs);
    // Validation functions that state checks the auth engine makes natively do not run again.
    const design = new DesignService(sandbox, (dbName, ddocId, source) => auth.enforcesNatively(dbName, ddocId, source));
    await ensureReplicatorDb(dbs, config);
    const replicator = new ReplicatorManager({
      config, log, tasks, dbs, serverUuid, localUrl: () => localUrl(config),
      // A job reaches local databases as the identity it runs as.
      ownerHeaders: (owner) => auth.internalHeaders({ name: owner.name, roles: owner.roles }),
    });
    const stats = new StatsAggregator(
      { openDatabases: () => dbs.openCount, authCache: () => auth.cacheStats },
      { rateMs: config.getInt('stats', 'rate', 1000), windows: parseWindows(config.getString('stats', 'samples', '[0]')) },
    );
    return {
      config, log, dbs, uuids, serverUuid, views, auth, design, tasks, replicator, stats,
      dispatch: (req) => this.http.dispatch(req),
      restart: () => void this.restart(),
    };
  }

  /** Jobs of `_replicator` documents start once the server answers (local names are loopback HTTP). */
  private startReplicatorDb(): void {
    const { config, dbs, replicator, log } = this.services;
    this.replicatorDb = new ReplicatorDatabase(config.getString('replicator', 'db', '_replicator'), dbs, replicator, log);
    // Jobs start in the background: a peer that is slow to answer must not hold up start-up.
    this.replicatorDb.start().catch((err: unknown) => log.error(`_replicator: ${String(err)}`));
    this.unwatchReplicatorDb ??= config.onChange((section, key) => {
      if (section === 'replicator' && key === 'db') void this.switchReplicatorDb();
    });
  }

  private unwatchReplicatorDb: (() => void) | undefined;

  /**
   * `[replicator] db` changed: the old database's jobs stop and the named one (created when
   * missing) is watched instead, as CouchDB 1.6's replicator manager restarts on that setting.
   */
  private async switchReplicatorDb(): Promise<void> {
    const { config, dbs, log } = this.services;
    this.replicatorDb?.close();
    this.replicatorDb = undefined;
    try {
      await ensureReplicatorDb(dbs, config);
    } catch (err) {
      log.error(`_replicator: ${String(err)}`);
    }
    this.startReplicatorDb();
  }

  /** `[compactions]` rules, checked every `[compaction_daemon] check_interval` seconds. */
  private startCompactionDaemon(): void {
    const { config, dbs, tasks, log, views } = this.services;
    const databaseDir = resolve(config.getString(MAIN_CONFIG_SECTION, 'database_dir', './data'));
    this.compactionDaemon = new CompactionDaemon({
      config, dbs, tasks, log, databaseDir,
      viewIndexDir: resolve(config.getString(MAIN_CONFIG_SECTION, 'view_index_dir', databaseDir)),
      indexes: {
        indexes: (db) => designIndexes(db, views),
        compact: (db, ddocId) => views.compact(db, ddocId),
      },
    });
    this.compactionDaemon.start();
  }

  private async stopReplicator(services: Services): Promise<void> {
    this.replicatorDb?.stop();
    await services.replicator.stop();
  }

  /**
   * Reloads configuration and reopens storage, keeping the listening socket. Restarts asked for
   * while one is under way join it.
   */
  restart(): Promise<void> {
    this.restarting ??= this.reopen().finally(() => { this.restarting = undefined; });
    return this.restarting;
  }

  private async reopen(): Promise<void> {
    const old = this.services;
    old.auth.close();
    old.stats.close();
    await this.stopReplicator(old);
    await this.compactionDaemon?.stop();
    await old.views.close();
    await old.design.close();
    await old.dbs.closeAll();
    await old.config.reload();
    this.services = await this.buildServices(old.config);
    this.startReplicatorDb();
    this.startCompactionDaemon();
    old.log.info('Restarted');
    await old.log.close();
  }

  async stop(): Promise<void> {
    await this.stopReplicator(this.services);
    await this.compactionDaemon?.stop();
    await this.http.close();
    this.services.auth.close();
    this.services.stats.close();
    await this.services.views.close();
    await this.services.design.close();
    await this.services.dbs.closeAll();
    await this.services.log.close();
  }
}

/** The view indexes of a database's design documents that have views, with their sizes. */
async function designIndexes(db: Database, views: ViewService): Promise<IndexSizes[]> {
  const out: IndexSizes[] = [];
  for await (const rows of db.designDocs()) {
    for (const { id } of rows) {
      try {
        const ddoc = JSON.parse((await db.openDoc(id)).json) as { views?: unknown };
        if (!ddoc.views || typeof ddoc.views !== 'object' || Object.keys(ddoc.views).length === 0) continue;
        const { index } = await views.open(db, id, false);
        out.push({ ddocId: id, diskSize: await index.store.diskSize(), dataSize: await index.store.dataSize(), updating: index.isUpdating });
      } catch {
        // Deleted or unreadable meanwhile: nothing to compact.
      }
    }
  }
  return out;
}

/** This server's own base URL as seen from itself, from the configured address and real port. */
function localUrl(config: Config): string {
  const httpd = config.layered(HTTPD_SECTIONS);
  const bind = httpd.getString('bind_address', '127.0.0.1');
  const host = bind === '0.0.0.0' ? '127.0.0.1' : bind === '::' ? '[::1]' : bind.includes(':') ? `[${bind}]` : bind;
  return `http://${host}:${httpd.getInt('port', 5984)}/`;
}

/**
 * The replicator database (`[replicator] db`), created when missing, with its
 * `_design/_replicator`: CouchDB 1.6's replication manager makes sure of both when it starts.
 */
async function ensureReplicatorDb(dbs: DatabaseRegistry, config: Config): Promise<void> {
  await ensureReplicatorDesignDoc(await dbs.ensure(config.getString('replicator', 'db', '_replicator')));
}
