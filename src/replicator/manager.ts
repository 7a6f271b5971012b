/**
 * The server's replicator: starts, finds, joins and cancels replication jobs by replication id
 * (`POST /_replicate`, `_replicator` documents), builds their peers, and stops them all when the
 * server stops.
 */
import { setMaxListeners } from 'node:events';
import { CouchError, unauthorized } from '../errors.js';
import { designMember } from '../design/service.js';
import { erlangPretty } from '../erlang-terms.js';
import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { TaskRegistry } from '../core/tasks.js';
import type { DatabaseRegistry } from '../core/registry.js';
import { isServerAdmin } from '../auth/user-context.js';
import { LocalPeer, hasValidation } from './local-peer.js';
import { displayEndpoint, endpointIdentity, stripCredentials, type Endpoint } from './endpoint.js';
import { HttpPeer } from './http-peer.js';
import { peerTlsFromConfig } from './peer-tls.js';
import { replicationId, type ReplicationId } from './replication-id.js';
import { Replication, type ReplicationResult, type ReplicationSettings } from './replication.js';
import { parseReplicationRequest, type ReplicationRequest, type ReplicationTuning } from './request.js';
import { unauthorizedPeer, type ReplicationPeer } from './peer.js';

export interface ReplicatorDeps {
  config: Config;
  log: Logger;
  tasks: TaskRegistry;
  dbs: DatabaseRegistry;
  serverUuid: string;
  /** This server's own base URL (`http://127.0.0.1:5984/`), for local database names. */
  localUrl(): string;
  /**
   * Headers that let a loopback request act as the identity a job runs as (a `_replicate`
   * requester, however it authenticated, or a `_replicator` document's `user_ctx`); the auth
   * engine signs them.
   */
  ownerHeaders?(owner: JobOwner): Record<string, string>;
}

/**
 * Who a job runs as (the requester, or its `_replicator` document's user_ctx or owner): its
 * requests to local databases have this user's rights, as in CouchDB.
 */
export interface JobOwner {
  name: string | null;
  roles: string[];
  /**
   * May create a missing local target though no server admin: a `_replicator` document without
   * `user_ctx`, which only an admin may write.
   */
  createsDatabases?: boolean;
}

export interface Job {
  id: ReplicationId;
  replication: Replication;
  /** Settles when the job ends: its result (one-shot) or its end by cancellation or failure. */
  done: Promise<ReplicationResult>;
  /** Settles once the job has read both ends and started copying (or failed before). */
  triggered: Promise<void>;
  docId: string | null;
  /** Who started it (only they, or an admin, may cancel it). */
  owner: JobOwner;
}

export interface JobCallbacks {
  onTriggered?(job: Job): void;
}

/** A `_replicator` document as the scheduler shows it (`_scheduler/docs`). */
export interface ReplicationDocState {
  database: string;
  docId: string;
  state: 'initializing' | 'running' | 'crashing' | 'completed' | 'failed';
  /** Why it failed ('failed'). */
  error?: string;
  /** Its job while one runs. */
  job: Job | undefined;
  source: string;
  target: string;
  startTime: Date;
  lastUpdated: Date;
}

/** The reply to `POST /_replicate`. */
export type ReplicateReply = ReplicationResult | { ok: true; _local_id: string };

export class ReplicatorManager {
  private readonly jobs = new Map<string, Job>();
  private stopped = false;
  private readonly documentSources = new Set<() => readonly ReplicationDocState[]>();

  constructor(private readonly deps: ReplicatorDeps) {}

  /** `POST /_replicate`. */
  async replicate(body: Record<string, unknown>, owner: JobOwner): Promise<ReplicateReply> {
    // A running job is also named by its `_local_id` or `id` (couch_replicator_utils:convert_options);
    // a cancel that names one ignores any source and target (couch_replicator_utils:parse_rep_doc).
    const named = ['replication_id', '_local_id', 'id'].map((field) => body[field]).find((v) => typeof v === 'string');
    if (body['cancel'] === true && typeof named === 'string') {
      return this.cancelById(named, owner);
    }
    const request = parseReplicationRequest(body);
    if (request.cancel) {
      const id = await this.idOf(request, owner);
      return this.cancelById(id.full, owner);
    }
    const job = await this.start(request, owner, null);
    if (request.continuous) {
      await Promise.race([job.triggered, job.done]);
      return { ok: true, _local_id: job.id.full };
    }
    return job.done;
  }

  /** Every job running now (`_scheduler/jobs`), oldest first. */
  list(): Job[] {
    return [...this.jobs.values()];
  }

  /** Lets a replicator database show its documents' states; returns the way to stop. */
  showDocuments(source: () => readonly ReplicationDocState[]): () => void {
    this.documentSources.add(source);
    return () => this.documentSources.delete(source);
  }

  /** The replicator databases' documents (`_scheduler/docs`). */
  documents(): ReplicationDocState[] {
    return [...this.documentSources].flatMap((source) => source());
  }

  /** The running job with this id, if any. */
  get(fullId: string): Job | undefined {
    return this.jobs.get(fullId);
  }

  /** Starts a job, or returns the one already running with the same id. */
  async start(request: ReplicationRequest, owner: JobOwner, docId: string | null, callbacks: JobCallbacks = {}): Promise<Job> {
    if (this.stopped) throw new CouchError(503, 'service_unavailable', 'the replicator is stopping');
    const kill = new AbortController();
    // Every request in flight listens to it: batches, attachment streams, checkpoints.
    setMaxListeners(1000, kill.signal);
    const direct = isServerAdmin(owner);
    // A filtered source is read through the HTTP interface, where its filter runs.
    const source = this.peer(request.source, owner, request.tuning, kill.signal, direct && !request.filter && !request.selector);
    const target = this.peer(request.target, owner, request.tuning, kill.signal,
      direct && !(request.target.kind === 'local' && await hasValidation(this.deps.dbs, request.target.db)));
    let id: ReplicationId;
    try {
      id = replicationId({
        serverUuid: this.deps.serverUuid,
        source: endpointIdentity(request.source, owner),
        target: endpointIdentity(request.target, owner),
        filter: request.filter ? { name: request.filter, code: await filterCode(source, request.filter) } : undefined,
        queryParams: request.queryParams,
        docIds: request.docIds,
        selector: request.selector,
        continuous: request.continuous,
        createTarget: request.createTarget,
      });
    } catch (err) {
      source.close();
      target.close();
      throw err;
    }
    const existing = this.jobs.get(id.full);
    if (existing) {
      source.close();
      target.close();
      return existing;
    }
    const settings = this.settings(request.tuning);
    let resolveTriggered!: () => void;
    const triggered = new Promise<void>((resolve) => { resolveTriggered = resolve; });
    const job = { id, docId, owner } as Job;
    const replication = new Replication({
      id,
      sourceDisplay: displayEndpoint(request.source),
      targetDisplay: displayEndpoint(request.target),
      continuous: request.continuous,
      createTarget: request.createTarget,
      filter: request.filter,
      queryParams: request.queryParams,
      docIds: request.docIds,
      selector: request.selector,
      sinceSeq: request.sinceSeq,
      docId,
    }, { source, target }, settings, {
      startTask: (fields) => this.deps.tasks.start('replication', fields),
      log: (level, message) => this.deps.log[level](stripCredentials(message)),
      onTriggered: () => {
        resolveTriggered();
        callbacks.onTriggered?.(job);
      },
    });
    job.replication = replication;
    job.triggered = triggered;
    this.jobs.set(id.full, job);
    this.deps.log.info(`Replication ${id.full} started: ${displayEndpoint(request.source)} -> ${displayEndpoint(request.target)}`);
    // A job that ends before it triggers (it cannot open a database) settles only `done`, so
    // that a continuous request answers with the failure.
    job.done = replication.run().finally(() => {
      kill.abort();
      if (this.jobs.get(id.full) === job) this.jobs.delete(id.full);
    });
    job.done.then(
      () => this.deps.log.info(`Replication ${id.full} finished`),
      (err) => this.deps.log.warn(`Replication ${id.full} ended: ${err instanceof CouchError ? `${err.error} ${err.reason}` : String(err)}`),
    );
    return job;
  }

  /** The id a request has, without starting anything (for `cancel`). */
  private async idOf(request: ReplicationRequest, owner: JobOwner): Promise<ReplicationId> {
    const kill = new AbortController();
    const source = this.peer(request.source, owner, request.tuning, kill.signal, false);
    try {
      let code: string | undefined;
      if (request.filter) {
        try {
          code = await filterCode(source, request.filter);
        } catch {
          // The source is gone: the id of a running job is still found by its other parts.
          for (const job of this.jobs.values()) if (job.replication.options.filter === request.filter) return job.id;
        }
      }
      return replicationId({
        serverUuid: this.deps.serverUuid,
        source: endpointIdentity(request.source, owner),
        target: endpointIdentity(request.target, owner),
        filter: request.filter ? { name: request.filter, code } : undefined,
        queryParams: request.queryParams,
        docIds: request.docIds,
        selector: request.selector,
        continuous: request.continuous,
        createTarget: request.createTarget,
      });
    } finally {
      kill.abort();
      source.close();
    }
  }

  private async cancelById(fullId: string, requester: JobOwner): Promise<ReplicateReply> {
    const job = this.jobs.get(fullId) ?? [...this.jobs.values()].find((j) => j.id.base === fullId);
    // CouchDB 1.6's answer, spelling included.
    if (!job) throw new CouchError(404, 'not found', 'missing');
    if (!isServerAdmin(requester) && job.owner.name !== requester.name) {
      throw unauthorized("Can't cancel a replication triggered by another user");
    }
    job.replication.cancel();
    await job.done.catch(() => undefined);
    return { ok: true, _local_id: job.id.full };
  }

  /** Stops every job (each writes its checkpoint first, briefly). */
  async stop(): Promise<void> {
    this.stopped = true;
    const all = [...this.jobs.values()];
    for (const job of all) job.replication.cancel();
    await Promise.race([
      Promise.allSettled(all.map((j) => j.done)),
      new Promise((resolve) => setTimeout(resolve, 5000).unref()),
    ]);
  }

  /** `direct`: a local name may be used without HTTP (see local-peer.ts for when). */
  private peer(endpoint: Endpoint, owner: JobOwner, tuning: ReplicationTuning, signal: AbortSignal, direct: boolean): ReplicationPeer {
    if (endpoint.kind === 'local' && direct) return new LocalPeer(this.deps.dbs, endpoint.db);
    const config = this.deps.config;
    // Other local names go through this server's own HTTP interface, so validation, security
    // and filters apply exactly as for any client, with the owner's credentials.
    const url = endpoint.kind === 'local' ? `${this.deps.localUrl()}${encodeURIComponent(endpoint.db)}/` : endpoint.url;
    const headers = endpoint.kind === 'local' ? this.deps.ownerHeaders?.(owner) ?? {} : endpoint.headers;
    return new HttpPeer({
      url, headers, signal,
      display: displayEndpoint(endpoint),
      // CouchDB 1.0/1.1 called the pool's size max_http_sessions; 1.2 and later http_connections.
      maxSessions: tuning.httpConnections
        ?? config.getInt('replicator', 'http_connections', config.getInt('replicator', 'max_http_sessions', 20)),
      ...(/^https:/i.test(url) ? { tls: peerTlsFromConfig(config) } : {}),
      // A timeout of 0 would be none at all for Node; CouchDB's would fail every request.
      timeoutMs: Math.max(1, tuning.connectionTimeoutMs ?? config.getInt('replicator', 'connection_timeout', 30000)),
      retries: tuning.retriesPerRequest ?? config.getInt('replicator', 'retries_per_request', 10),
      onRetry: (message) => this.deps.log.info(stripCredentials(message)),
      // create_target of a local name needs a server admin (couch_replicator_api_wrap:db_open);
      // a remote target needs its own rights.
      ...(endpoint.kind === 'local' ? {
        create: async () => {
          if (!isServerAdmin(owner) && owner.createsDatabases !== true) throw unauthorizedPeer(endpoint.db);
          await this.deps.dbs.ensure(endpoint.db);
        },
      } : {}),
    });
  }

  /** How many times a `_replicator` document's failed job starts again (`[replicator] max_replication_retry_count`). */
  retryLimit(): number {
    return this.settings().maxRetries;
  }

  /** A job's settings: the request's own options, else the `[replicator]` section's. */
  private settings(tuning: ReplicationTuning = {}): ReplicationSettings {
    const config = this.deps.config;
    const retries = config.getString('replicator', 'max_replication_retry_count', '10');
    return {
      batchSize: Math.max(1, tuning.workerBatchSize ?? config.getInt('replicator', 'worker_batch_size', 500)),
      workers: Math.max(1, tuning.workerProcesses ?? config.getInt('replicator', 'worker_processes', 4)),
      checkpointIntervalMs: Math.max(100, tuning.checkpointIntervalMs ?? config.getInt('replicator', 'checkpoint_interval', 5000)),
      useCheckpoints: tuning.useCheckpoints ?? config.getString('replicator', 'use_checkpoints', 'true') !== 'false',
      maxRetries: retries === 'infinity' ? Infinity : Math.max(0, Number(retries) || 0),
    };
  }
}

/**
 * A design-document filter's source code (part of the replication id); built-in filters have
 * none. It fails as couch_replicator_utils:filter_code fails in CouchDB 1.6: a source it cannot
 * open or a design document it cannot read is a 500 `error` quoting the Erlang term, a missing
 * `filters` member or filter is couch_util:get_nested_json_value's 404, and code that is not a
 * string fails re:replace (500 `badarg`).
 */
async function filterCode(source: ReplicationPeer, filter: string): Promise<string | undefined> {
  if (filter.startsWith('_')) return undefined;
  const slash = filter.indexOf('/');
  const ddocName = filter.slice(0, slash);
  const name = filter.slice(slash + 1);
  try {
    await source.info();
  } catch (err) {
    if (err instanceof CouchError && (err.error === 'db_not_found' || err.error === 'unauthorized')) {
      throw new CouchError(500, 'error',
        `Could not open source database \`${source.display}\`: {${err.error},${erlangPretty(source.display)}}`);
    }
    throw err;
  }
  const doc = await source.getDoc(`_design/${ddocName}`);
  if (!doc) {
    throw new CouchError(500, 'error',
      `Couldn't open document \`_design/${ddocName}\` from source database \`${source.display}\`: {error,<<"not_found">>}`);
  }
  const code = designMember(doc, ['filters', name]);
  if (typeof code !== 'string') throw new CouchError(500, 'unknown_error', 'badarg');
  return code;
}
