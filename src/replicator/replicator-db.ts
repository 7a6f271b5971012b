/**
 * The `_replicator` database (`[replicator] db`): each document states a replication; the
 * replicator starts it as the document's `user_ctx` and records `_replication_state` (`triggered`,
 * `completed`, `error`), `_replication_state_time` and `_replication_id` on it, as CouchDB 1.6
 * does. Deleting the document cancels the job; a job that fails starts again after 5 s, then
 * 10, 20... (`max_replication_retry_count` times; a document stating no replication it can
 * start, such as a filter it cannot read, is not retried); at start-up every document not
 * `completed` starts again, as does one written again without `_replication_state` once its
 * job has ended. Changes arrive through the registry's update events: no polling.
 *
 * The database holds `_design/_replicator`, written when missing (at start, when the database
 * is created again, before the replicator records a state), as CouchDB 1.6's manager keeps it.
 * The auth engine sets `owner` on write (before_doc_update, src/auth/replicator-db.ts), checks
 * the fields as that design document's function does (a user's `user_ctx` names only them and
 * roles they have) and hides other users' credentials from readers. A job runs as its
 * document's `user_ctx`; without one (admins may leave it out), with no user and no roles, as
 * CouchDB 1.6 runs it. Its loopback requests carry that identity, signed by the auth engine.
 */
import { CouchError } from '../errors.js';
import type { DatabaseRegistry } from '../core/registry.js';
import type { Database } from '../core/database.js';
import { parseIncomingDoc } from '../core/document.js';
import type { Logger } from '../log/logger.js';
import type { Job, JobOwner, ReplicationDocState, ReplicatorManager } from './manager.js';
import { parseReplicationRequest, type ReplicationRequest } from './request.js';
import { displayEndpoint } from './endpoint.js';
import type { JobProgress, ReplicationResult } from './replication.js';
import { ensureReplicatorDesignDoc } from '../auth/replicator-db.js';

/** The wait before a failed job's first retry; each later one waits twice as long. */
const RETRY_FIRST_WAIT_MS = 5000;

/** Fields that state the replication; edits to others (the state fields) do not restart it. */
const REQUEST_FIELDS = ['source', 'target', 'continuous', 'create_target', 'filter', 'query_params', 'doc_ids', 'selector', 'since_seq', 'owner', 'user_ctx'];

interface TrackedDoc {
  /** The request fields the job was started from. */
  request: string;
  job: Job | undefined;
  /** The next start of a job that failed. */
  retry?: NodeJS.Timeout;
  /** What `_scheduler/docs` shows of it. */
  status: ReplicationDocState;
}

export class ReplicatorDatabase {
  private readonly tracked = new Map<string, TrackedDoc>();
  private lastSeq = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private off: (() => void) | undefined;
  private hideDocuments: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly dbName: string,
    private readonly dbs: DatabaseRegistry,
    private readonly manager: ReplicatorManager,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.hideDocuments = this.manager.showDocuments(() => [...this.tracked.values()].map((t) => t.status));
    this.off = this.dbs.onEvent((name, type) => {
      if (name !== this.dbName) return;
      if (type === 'deleted') {
        for (const [id, doc] of this.tracked) {
          doc.job?.replication.cancel();
          this.tracked.delete(id);
        }
        this.lastSeq = 0;
        return;
      }
      if (type === 'created') {
        this.lastSeq = 0;
        // A new replicator database gets its design document, as CouchDB 1.6's manager gives it.
        void this.dbs.get(this.dbName).then(ensureReplicatorDesignDoc).catch((err: unknown) => this.log.error(`_replicator: ${String(err)}`));
      }
      this.catchUp();
    });
    this.catchUp();
    await this.running;
  }

  stop(): void {
    this.stopped = true;
    this.off?.();
    this.hideDocuments?.();
  }

  /** Stops watching and cancels the jobs this database's documents started (another replaces it). */
  close(): void {
    this.stop();
    for (const doc of this.tracked.values()) {
      clearTimeout(doc.retry);
      doc.job?.replication.cancel();
    }
    this.tracked.clear();
  }

  /** Reads the database's changes since the last look; one reader at a time. */
  private catchUp(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.readChanges();
        } catch (err) {
          if (!(err instanceof CouchError && err.status === 404)) this.log.error(`_replicator: ${String(err)}`);
        }
      } while (this.again && !this.stopped);
    })().finally(() => { this.running = undefined; });
  }

  private async readChanges(): Promise<void> {
    const db = await this.dbs.get(this.dbName);
    const release = db.retain();
    try {
      for await (const rows of db.changes(this.lastSeq)) {
        for (const row of rows) {
          if (this.stopped) return;
          this.lastSeq = row.seq;
          if (row.id.startsWith('_design/')) continue;
          if (row.deleted) this.forget(row.id);
          else await this.consider(db, row.id);
        }
      }
    } finally {
      release();
    }
  }

  private forget(docId: string): void {
    const tracked = this.tracked.get(docId);
    this.tracked.delete(docId);
    clearTimeout(tracked?.retry);
    if (tracked?.job) {
      this.log.info(`_replicator: ${docId} deleted, cancelling ${tracked.job.id.full}`);
      tracked.job.replication.cancel();
    }
  }

  /** A document written: start its job unless it is the one already running (or completed). */
  private async consider(db: Database, docId: string): Promise<void> {
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse((await db.openDoc(docId)).json) as Record<string, unknown>;
    } catch {
      return;
    }
    const request = requestKey(doc);
    const tracked = this.tracked.get(docId);
    if (tracked && tracked.request === request && !runsAgain(tracked, doc)) return;
    clearTimeout(tracked?.retry);
    if (tracked?.job) tracked.job.replication.cancel();
    let parsed: ReplicationRequest | undefined;
    let invalid: unknown;
    try {
      parsed = parseReplicationRequest(doc);
    } catch (err) {
      invalid = err;
    }
    const now = new Date();
    const status: ReplicationDocState = {
      database: this.dbName, docId, state: 'initializing', job: undefined,
      source: parsed ? displayEndpoint(parsed.source) : '', target: parsed ? displayEndpoint(parsed.target) : '',
      startTime: now, lastUpdated: now,
    };
    const entry: TrackedDoc = { request, job: undefined, status };
    this.tracked.set(docId, entry);
    if (doc['_replication_state'] === 'completed') return moveTo(status, 'completed');

    // Its user_ctx (checked when written); without one, no user and no roles, as CouchDB 1.6's
    // couch_replicator_manager:rep_user_ctx runs it (so it writes no design document), but with
    // its admin writer's right to create the target (where 1.6 refuses).
    const owner = userContextOf(doc) ?? { name: null, roles: [], createsDatabases: true };
    if (!parsed) return this.refuse(docId, entry, invalid);
    await this.launch(docId, entry, parsed, owner, 0);
  }

  /**
   * A document that states no replication the replicator can start (its request does not parse,
   * or its replication id cannot be computed: a filter it cannot read) ends in `error` with the
   * reason alone, and is not retried: CouchDB 1.6's couch_replicator_manager:parse_rep_doc turns
   * these failures into `bad_rep_doc`, which rep_db_update_error records.
   */
  private async refuse(docId: string, entry: TrackedDoc, err: unknown): Promise<void> {
    const reason = badDocReason(err);
    moveTo(entry.status, 'failed', reason);
    await this.record(docId, entry.request, { _replication_state: 'error', _replication_state_reason: reason });
  }

  /**
   * Starts a document's job. One that fails (to start, or later) starts again after 5 s, then
   * 10, 20... up to `[replicator] max_replication_retry_count` times, as CouchDB 1.6's
   * replication manager retries, unless the document changed or went meanwhile.
   */
  private async launch(docId: string, entry: TrackedDoc, parsed: ReplicationRequest, owner: JobOwner, failures: number): Promise<void> {
    const { request, status } = entry;
    const failed = (err: unknown, fields: Record<string, unknown>): void => {
      moveTo(status, 'failed', reasonOf(err));
      void this.record(docId, request, { _replication_state: 'error', _replication_state_reason: reasonOf(err), ...fields });
      if (failures >= this.manager.retryLimit()) return;
      entry.retry = setTimeout(() => {
        entry.retry = undefined;
        if (!this.stopped && this.tracked.get(docId) === entry) void this.launch(docId, entry, parsed, owner, failures + 1);
      }, RETRY_FIRST_WAIT_MS * 2 ** Math.min(failures, 10));
      entry.retry.unref();
    };
    let job: Job;
    try {
      job = await this.manager.start(parsed, owner, docId, {
        onTriggered: (j) => {
          moveTo(status, 'running');
          void this.record(docId, request, {
            _replication_state: 'triggered', _replication_state_reason: undefined, _replication_id: j.id.base, _replication_stats: undefined,
          });
        },
      });
    } catch (err) {
      // Its first start computes the replication id: what fails there is the document's fault.
      if (failures === 0) await this.refuse(docId, entry, err);
      else failed(err, {});
      return;
    }
    if (job.docId !== docId) {
      this.log.warn(`_replicator: ${docId} asks for ${job.id.full}, already running for ${job.docId ?? 'a _replicate request'}`);
      // The duplicate is tagged with the replication it shares, as CouchDB 1.6 tags it.
      void this.record(docId, request, { _replication_id: job.id.base });
      return;
    }
    entry.job = job;
    status.job = job;
    job.done.then(
      (result) => {
        status.job = undefined;
        if (entry.job === job) entry.job = undefined;
        if (!job.replication.cancelled) moveTo(status, 'completed');
        if (!job.replication.options.continuous && !job.replication.cancelled) {
          void this.record(docId, request, {
            _replication_state: 'completed', _replication_state_reason: undefined, _replication_id: job.id.base,
            _replication_stats: completionStats(result, job.replication.progress()),
          });
        }
      },
      (err) => {
        status.job = undefined;
        if (entry.job === job) entry.job = undefined;
        if (!job.replication.cancelled) failed(err, { _replication_id: job.id.base });
      },
    );
  }

  /**
   * Writes state fields onto the document (undefined ones are removed), unless it was edited or
   * deleted since, as couch_replicator_manager:update_rep_doc writes them: a new
   * `_replication_state_time` only with a new state, and nothing when nothing changes.
   */
  private async record(docId: string, request: string, fields: Record<string, unknown>): Promise<void> {
    if (this.stopped) return;
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const db = await this.dbs.get(this.dbName);
        // Whoever deleted the design document, it comes back with the next state written
        // (couch_replicator_manager:update_rep_doc).
        await ensureReplicatorDesignDoc(db);
        const doc = JSON.parse((await db.openDoc(docId)).json) as Record<string, unknown>;
        if (requestKey(doc) !== request) return;
        const before = JSON.stringify(doc);
        for (const [key, value] of Object.entries(fields)) {
          if (value === undefined) delete doc[key];
          else if (key !== '_replication_state') doc[key] = value;
          else if (doc[key] !== value) Object.assign(doc, { [key]: value, _replication_state_time: isoTime(new Date()) });
        }
        if (JSON.stringify(doc) === before) return;
        const incoming = parseIncomingDoc(doc);
        const uploads = await db.prepareAttachments(incoming);
        try {
          const [result] = await db.edit([incoming], { newEdits: true, allOrNothing: false, durable: true });
          if (result?.ok) return;
          if (result && result.error !== 'conflict') throw new CouchError(result.status, result.error, result.reason);
        } finally {
          for (const u of uploads) u.release();
        }
      } catch (err) {
        if (err instanceof CouchError && err.status === 404) return;
        this.log.error(`_replicator: recording state on ${docId}: ${String(err)}`);
        return;
      }
    }
  }
}

/**
 * Whether a document stating the replication it stated before starts it again: when it no longer
 * says how that went (no `_replication_state`, as after an edit that leaves the replicator's
 * fields out) and no job of its own runs or waits to retry, as CouchDB 1.6's
 * couch_replicator_manager:process_update starts a state-less document whose replication is not
 * running (one that completed or failed for good included).
 */
function runsAgain(tracked: TrackedDoc, doc: Record<string, unknown>): boolean {
  return doc['_replication_state'] === undefined && tracked.job === undefined && tracked.retry === undefined;
}

/** What `_scheduler/docs` shows of a document from now on. */
function moveTo(status: ReplicationDocState, state: ReplicationDocState['state'], error?: string): void {
  Object.assign(status, { state, error, lastUpdated: new Date() });
}

function requestKey(doc: Record<string, unknown>): string {
  return JSON.stringify(REQUEST_FIELDS.map((k) => doc[k] ?? null));
}

function reasonOf(err: unknown): string {
  if (err instanceof CouchError) return `${err.error}: ${err.reason}`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Why a document states no replication, as CouchDB 1.6 records it: the text thrown as
 * `{error, Reason}` (couch_replicator_utils' messages), or a crash's `{Class,Reason}` term
 * printed (couch_util:to_binary of what parse_rep_doc caught), without the error's name.
 */
function badDocReason(err: unknown): string {
  if (err instanceof CouchError) return err.error === 'unknown_error' ? `{error,${err.reason}}` : err.reason;
  return reasonOf(err);
}

/** A document's `user_ctx` as a job identity (checked when written: a user names only themselves and roles they have). */
function userContextOf(doc: Record<string, unknown>): JobOwner | undefined {
  const ctx = doc['user_ctx'];
  if (ctx === null || typeof ctx !== 'object' || Array.isArray(ctx)) return undefined;
  const { name, roles } = ctx as { name?: unknown; roles?: unknown };
  return {
    name: typeof name === 'string' ? name : null,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === 'string') : [],
  };
}

/**
 * A completed job's `_replication_stats`, as CouchDB 1.6 records them: this session's counts,
 * or the job's where it wrote no checkpoint to take them from.
 */
function completionStats(result: ReplicationResult, progress: JobProgress): Record<string, number | string> {
  if ('use_checkpoints' in result) {
    const { revisions_checked, missing_revisions_found, docs_read, docs_written, doc_write_failures, checkpointed_source_seq } = progress;
    return { revisions_checked, missing_revisions_found, docs_read, docs_written, doc_write_failures, checkpointed_source_seq };
  }
  const session = result.no_changes ? undefined : result.history[0];
  return {
    revisions_checked: session?.missing_checked ?? 0,
    missing_revisions_found: session?.missing_found ?? 0,
    docs_read: session?.docs_read ?? 0,
    docs_written: session?.docs_written ?? 0,
    doc_write_failures: session?.doc_write_failures ?? 0,
    checkpointed_source_seq: result.source_last_seq ?? 0,
  };
}

/** CouchDB 1.6 writes `_replication_state_time` as ISO 8601 with an offset. */
function isoTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
