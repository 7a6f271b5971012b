/**
 * One replication job: CouchDB's protocol between two peers. The changes reader runs ahead of
 * the batch workers (each: `_revs_diff` on the target, fetch what is missing from the source,
 * write it with `new_edits=false`), so round trips overlap; checkpoints record only the
 * sequence below which every batch is written. A continuous job follows the source's feed once
 * caught up and survives either peer going away: it resumes from its last checkpoint.
 */
import { randomBytes } from 'node:crypto';
import { CouchError } from '../errors.js';
import type { TaskHandle } from '../core/tasks.js';
import { checkpointBody, findStartPoint, rfc1123, type CheckpointBody, type HistoryEntry, type SessionStats } from './checkpoint.js';
import { REPLICATION_ID_VERSION, type ReplicationId } from './replication-id.js';
import type { ChangeRow, ChangesBatch, DocJson, ReplicationPeer, MissingRevs, WriteFailure } from './peer.js';
import { attachmentNames, attachmentsToSend } from './attachments.js';
import { sleep } from './sleep.js';

export interface ReplicationSettings {
  batchSize: number;
  /** Batches in flight at once. */
  workers: number;
  checkpointIntervalMs: number;
  /**
   * Whether sessions write checkpoints (`use_checkpoints`); without them a job still starts
   * from the checkpoints it finds, as CouchDB 1.6's does.
   */
  useCheckpoints: boolean;
  /** Continuous jobs and `_replicator` jobs start over after a failure, up to this many times in a row. */
  maxRetries: number;
}

export interface ReplicationOptions {
  id: ReplicationId;
  sourceDisplay: string;
  targetDisplay: string;
  continuous: boolean;
  createTarget: boolean;
  filter?: string;
  queryParams?: Record<string, unknown>;
  docIds?: readonly string[];
  selector?: Record<string, unknown>;
  /** `since_seq`: where to start reading the source, whatever the checkpoints say. */
  sinceSeq?: number | string;
  /** The `_replicator` document that started the job, if any. */
  docId: string | null;
}

export interface Peers {
  source: ReplicationPeer;
  target: ReplicationPeer;
}

/**
 * The answer to a one-shot `POST /_replicate`. A replication by `doc_ids` also carries its
 * session's times and counts at the top level, as CouchDB 0.11–1.6 answer it.
 */
export type ReplicationResult = SessionResult | NoChangesResult | UncheckpointedResult;

/** A session that replicated: its checkpoint. */
export interface SessionResult extends CheckpointBody {
  ok: true;
  no_changes?: undefined;
  start_time?: string;
  end_time?: string;
  docs_read?: number;
  docs_written?: number;
  doc_write_failures?: number;
}

/** A session that replicated with `use_checkpoints: false`: CouchDB 1.6 tells only that. */
export interface UncheckpointedResult {
  ok: true;
  use_checkpoints: false;
}

/** A session with nothing to replicate: the source's checkpoint as it was, if any. */
export interface NoChangesResult extends Partial<CheckpointBody> {
  ok: true;
  no_changes: true;
}

export interface ReplicationHooks {
  /** Registers the job in `_active_tasks`. */
  startTask(fields: Record<string, string | number | boolean | null>): TaskHandle;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** Called once the job has read both ends and started copying. */
  onTriggered?(): void;
}

/** An event of a job's life, newest first in `Replication.history` (`_scheduler/jobs`). */
export interface JobEvent {
  timestamp: string;
  type: 'added' | 'started' | 'crashed';
  reason?: string;
}

/** Where a job stands, as `_scheduler` shows it in `info`. */
export interface JobProgress {
  revisions_checked: number;
  missing_revisions_found: number;
  docs_read: number;
  docs_written: number;
  doc_write_failures: number;
  checkpointed_source_seq: number | string;
  source_seq: number | string;
  through_seq: number | string;
}

/** How many events a job keeps (CouchDB's `[replicator] max_history` default). */
const MAX_HISTORY = 20;

interface Batch {
  rows: ChangeRow[];
  lastSeq: number | string;
  done: boolean;
}

const FIRST_RESTART_MS = 500;
/** Documents whose attachments stream at once, per batch. */
const ATTACHMENT_STREAMS = 8;
const MAX_RESTART_MS = 30000;

export class Replication {
  private readonly stopping = new AbortController();
  private readonly stats: SessionStats = { missing_checked: 0, missing_found: 0, docs_read: 0, docs_written: 0, doc_write_failures: 0 };
  private task: TaskHandle | undefined;
  private sourceSeq: number | string = 0;
  private checkpointedSeq: number | string = 0;
  /** The sequence every change before which is replicated (CouchDB's current_through_seq). */
  private throughSeq: number | string = 0;
  /** When the job was created, and its events since, newest first. */
  readonly startTime = new Date();
  readonly history: JobEvent[] = [{ timestamp: isoSeconds(this.startTime), type: 'added' }];

  constructor(
    readonly options: ReplicationOptions,
    private readonly peers: Peers,
    private readonly settings: ReplicationSettings,
    private readonly hooks: ReplicationHooks,
  ) {}

  get cancelled(): boolean {
    return this.stopping.signal.aborted;
  }

  /** Its counts and sequences so far. */
  progress(): JobProgress {
    return {
      revisions_checked: this.stats.missing_checked,
      missing_revisions_found: this.stats.missing_found,
      docs_read: this.stats.docs_read,
      docs_written: this.stats.docs_written,
      doc_write_failures: this.stats.doc_write_failures,
      checkpointed_source_seq: this.checkpointedSeq,
      source_seq: this.sourceSeq,
      through_seq: this.checkpointedSeq,
    };
  }

  private event(type: JobEvent['type'], reason?: string): void {
    this.history.unshift({ timestamp: isoSeconds(new Date()), type, ...(reason === undefined ? {} : { reason }) });
    this.history.length = Math.min(this.history.length, MAX_HISTORY);
  }

  /** Stops the job; a session in progress writes its checkpoint and ends. */
  cancel(): void {
    this.stopping.abort();
  }

  /**
   * Runs until done (one-shot) or cancelled (continuous). Transient failures of a continuous or
   * `_replicator` job restart it from its last checkpoint, with backoff; others end it.
   */
  async run(): Promise<ReplicationResult> {
    let failures = 0;
    let backoff = FIRST_RESTART_MS;
    try {
      for (;;) {
        try {
          const progressBefore = this.stats.docs_read + this.stats.missing_checked;
          this.event('started');
          const result = await this.session();
          if (!this.options.continuous || this.cancelled) return result;
          if (this.stats.docs_read + this.stats.missing_checked > progressBefore) failures = 0;
        } catch (err) {
          if (this.cancelled) throw new CouchError(500, 'cancelled', 'replication cancelled');
          this.event('crashed', errorText(err));
          // A one-shot `POST /_replicate` answers its client with the failure; continuous and
          // `_replicator` jobs try again (CouchDB's max_replication_retry_count).
          const retries = this.options.continuous || this.options.docId !== null;
          if (!retries || !isTransient(err) || ++failures > this.settings.maxRetries) throw err;
          this.hooks.log('warn', `Replication ${this.options.id.full} failed (${errorText(err)}); restarting in ${backoff} ms`);
          await sleep(backoff, this.stopping.signal);
          backoff = Math.min(backoff * 2, MAX_RESTART_MS);
          if (this.cancelled) throw new CouchError(500, 'cancelled', 'replication cancelled');
        }
      }
    } finally {
      this.task?.done();
      this.task = undefined;
      this.peers.source.close();
      this.peers.target.close();
    }
  }

  /** One session: from the last common checkpoint to the end of the feed (or cancellation). */
  private async session(): Promise<ReplicationResult> {
    const { source, target } = this.peers;
    const sessionId = randomBytes(16).toString('hex');
    const startTime = rfc1123(new Date());
    const sourceInfo = await source.info();
    try {
      await target.info();
    } catch (err) {
      if (!(err instanceof CouchError && err.error === 'db_not_found' && this.options.createTarget)) throw err;
      await target.create();
      await target.info();
    }
    this.sourceSeq = sourceInfo.update_seq;
    const localId = this.options.id.base;
    const [sourceLog, targetLog] = await Promise.all([source.getLocal(localId), target.getLocal(localId)]);
    const found = findStartPoint(sourceLog as Partial<CheckpointBody> | undefined, targetLog as Partial<CheckpointBody> | undefined);
    const start = this.options.sinceSeq === undefined ? found : { ...found, since: this.options.sinceSeq };
    const revs = { source: sourceLog?.['_rev'] as string | undefined, target: targetLog?.['_rev'] as string | undefined };
    this.checkpointedSeq = start.since;
    this.throughSeq = start.since;
    this.openTask();
    this.hooks.onTriggered?.();

    const sessionStats: SessionStats = { missing_checked: 0, missing_found: 0, docs_read: 0, docs_written: 0, doc_write_failures: 0 };
    let recorded: number | string = start.since;
    let lastEntry: HistoryEntry | undefined;
    let sawChanges = false;
    /** Sequence below which everything is written. */
    let through: number | string = start.since;

    const writeCheckpoint = async (): Promise<void> => {
      if (seqEquals(through, recorded) && lastEntry) return;
      // A session that has seen no change records nothing, even where a filtered feed moved on
      // (CouchDB 1.6 answers such a session with `no_changes`).
      if (!sawChanges || !this.settings.useCheckpoints) return;
      const seq = through;
      await target.ensureFullCommit();
      const entry: HistoryEntry = {
        session_id: sessionId, start_time: startTime, end_time: rfc1123(new Date()),
        start_last_seq: start.since, end_last_seq: seq, recorded_seq: seq, ...sessionStats,
      };
      const body = checkpointBody(sessionId, entry, start.history);
      const [sourceRev, targetRev] = await Promise.all([
        this.putCheckpoint(source, localId, body, revs.source, true),
        this.putCheckpoint(target, localId, body, revs.target, false),
      ]);
      revs.source = sourceRev ?? revs.source;
      revs.target = targetRev;
      recorded = seq;
      lastEntry = entry;
      this.checkpointedSeq = seq;
      this.updateTask();
    };

    // The pipeline: batches complete in any order, `through` advances over the finished prefix.
    const pending: { batch: Batch; finished: boolean }[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: unknown;
    let checkpointing: Promise<void> | undefined;
    let lastCheckpointAt = Date.now();
    const maybeCheckpoint = () => {
      if (checkpointing || Date.now() - lastCheckpointAt < this.settings.checkpointIntervalMs) return;
      lastCheckpointAt = Date.now();
      checkpointing = writeCheckpoint().catch((err) => { failure ??= err; }).finally(() => { checkpointing = undefined; });
    };
    const timer = setInterval(maybeCheckpoint, this.settings.checkpointIntervalMs);
    timer.unref();

    const sessionAbort = new AbortController();
    const onStop = () => sessionAbort.abort();
    this.stopping.signal.addEventListener('abort', onStop, { once: true });

    try {
      let since = start.since;
      let replicatedThrough = start.since;
      let caughtUp = false;
      while (!sessionAbort.signal.aborted && failure === undefined) {
        while (inFlight.size >= this.settings.workers) await Promise.race(inFlight);
        if (failure !== undefined) break;
        let batch: ChangesBatch;
        try {
          batch = await source.changes({
            since, limit: this.settings.batchSize, feed: caughtUp ? 'longpoll' : 'normal',
            filter: this.options.filter, queryParams: this.options.queryParams, docIds: this.options.docIds,
            selector: this.options.selector,
          }, sessionAbort.signal);
        } catch (err) {
          if (sessionAbort.signal.aborted) break;
          throw err;
        }
        // Checkpoints record the last change replicated, as CouchDB's do: changes a filter left
        // out after it are read again by the next session. The feed itself goes on from its end.
        const rows = batch.results;
        replicatedThrough = rows.length > 0 ? rows[rows.length - 1]!.seq : replicatedThrough;
        const item = { batch: { rows, lastSeq: replicatedThrough, done: false }, finished: false };
        since = batch.last_seq ?? since;
        if (batch.results.length > 0) sawChanges = true;
        if (seqGreater(since, this.sourceSeq)) this.sourceSeq = since;
        pending.push(item);
        const work = this.processBatch(item.batch, sessionStats).then(() => {
          item.finished = true;
          while (pending.length > 0 && pending[0]!.finished) through = pending.shift()!.batch.lastSeq;
          this.throughSeq = through;
          this.updateTask();
          maybeCheckpoint();
        }, (err) => {
          failure ??= err;
          sessionAbort.abort();
        });
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
        if (batch.results.length < this.settings.batchSize) {
          if (!this.options.continuous) break;
          if (!caughtUp) {
            caughtUp = true;
            // Caught up: record where, so a restart does not redo the catch-up.
            await Promise.all(inFlight);
            lastCheckpointAt = 0;
            maybeCheckpoint();
          }
        }
      }
      await Promise.all(inFlight);
      await checkpointing;
      if (failure !== undefined) throw failure;
      await writeCheckpoint();
    } finally {
      clearInterval(timer);
      this.stopping.signal.removeEventListener('abort', onStop);
      sessionAbort.abort();
    }
    if (!sawChanges && !lastEntry) {
      // Nothing to do: CouchDB 1.6 answers with the source's checkpoint as it was (no new session).
      const { _id: _ignoredId, _rev: _ignoredRev, ...previous } = (sourceLog ?? {}) as Partial<CheckpointBody> & { _id?: unknown; _rev?: unknown };
      return { ok: true, no_changes: true, ...previous };
    }
    if (!this.settings.useCheckpoints) return { ok: true, use_checkpoints: false };
    const history = lastEntry ? [lastEntry, ...start.history].slice(0, 50) : start.history;
    const result: SessionResult = {
      ok: true, session_id: sessionId, source_last_seq: recorded, replication_id_version: REPLICATION_ID_VERSION, history,
    };
    if (this.options.docIds && lastEntry) {
      const { start_time, end_time, docs_read, docs_written, doc_write_failures } = lastEntry;
      Object.assign(result, { start_time, end_time, docs_read, docs_written, doc_write_failures });
    }
    return result;
  }

  /** Writes one end's checkpoint; a source that refuses writes (read-only access) is tolerated. */
  private async putCheckpoint(peer: ReplicationPeer, id: string, body: CheckpointBody, rev: string | undefined, isSource: boolean): Promise<string | undefined> {
    const doc = { ...body, ...(rev ? { _rev: rev } : {}) };
    try {
      return await peer.putLocal(id, doc);
    } catch (err) {
      if (err instanceof CouchError && err.status === 409) {
        // Someone else (another job with the same id) moved it: write over the current one.
        const current = await peer.getLocal(id);
        return peer.putLocal(id, { ...body, ...(current?.['_rev'] ? { _rev: current['_rev'] } : {}) });
      }
      if (isSource && err instanceof CouchError && (err.status === 401 || err.status === 403)) {
        this.hooks.log('warn', `Replication ${this.options.id.full}: cannot checkpoint on the source (${err.reason})`);
        return undefined;
      }
      throw err;
    }
  }

  /** `_revs_diff`, fetch, write: one batch of changes. */
  private async processBatch(batch: Batch, session: SessionStats): Promise<void> {
    if (batch.rows.length === 0) return;
    const { source, target } = this.peers;
    const asked: Record<string, string[]> = {};
    let checked = 0;
    for (const row of batch.rows) {
      const revs = (asked[row.id] ??= []);
      for (const change of row.changes) {
        if (!revs.includes(change.rev)) {
          revs.push(change.rev);
          checked++;
        }
      }
    }
    const diff = await target.revsDiff(asked);
    const missing: MissingRevs[] = [];
    let found = 0;
    for (const [id, entry] of Object.entries(diff)) {
      if (entry.missing.length === 0) continue;
      missing.push({ id, revs: entry.missing, possibleAncestors: entry.possible_ancestors ?? [] });
      found += entry.missing.length;
    }
    this.count(session, { missing_checked: checked, missing_found: found });
    if (missing.length === 0) return;
    const docs = await source.fetch(missing);
    this.count(session, { docs_read: docs.length });
    const ancestors = new Map(missing.map((m) => [m.id, m.possibleAncestors]));
    const plain: DocJson[] = [];
    const withContent: { doc: DocJson; names: string[] }[] = [];
    for (const doc of docs) {
      const names = attachmentsToSend(doc, ancestors.get(doc._id) ?? []);
      if (names.length === 0) plain.push(doc);
      else withContent.push({ doc, names });
    }
    const failures = await this.writePlain(plain, withContent);
    // Attachment content streams from the source into a multipart PUT, a few documents at a time.
    let next = 0;
    const stream = async () => {
      while (next < withContent.length) {
        const { doc, names } = withContent[next++]!;
        const send = (sent: readonly string[]) => target.writeWithAttachments(doc, sent.map((name) => ({
          name, open: () => source.openAttachment(doc._id, doc._rev, name),
        })));
        let failure = await send(names);
        const all = attachmentNames(doc);
        if (failure?.error === 'missing_stub' && all.length > names.length) {
          this.logStubRetry(doc);
          failure = await send(all);
        }
        if (failure) failures.push(failure);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ATTACHMENT_STREAMS, withContent.length) }, stream));
    for (const f of failures) this.hooks.log('warn', `Replication ${this.options.id.full}: ${f.id} ${f.rev ?? ''} not written: ${f.error} ${f.reason}`);
    this.count(session, { docs_written: docs.length - failures.length, doc_write_failures: failures.length });
  }

  /**
   * Writes revisions that need no attachment content in one request. Should the target refuse
   * it for a stub naming nothing (its attachments are not what `_revs_diff` let us expect), the
   * revisions with stubs go with all their content instead, as CouchDB's replicator retries them.
   */
  private async writePlain(plain: DocJson[], withContent: { doc: DocJson; names: string[] }[]): Promise<WriteFailure[]> {
    try {
      return await this.peers.target.write(plain);
    } catch (err) {
      if (!(err instanceof CouchError && err.error === 'missing_stub')) throw err;
      const bare = plain.filter((doc) => attachmentNames(doc).length === 0);
      for (const doc of plain) {
        if (attachmentNames(doc).length === 0) continue;
        this.logStubRetry(doc);
        withContent.push({ doc, names: attachmentNames(doc) });
      }
      return await this.peers.target.write(bare);
    }
  }

  private logStubRetry(doc: DocJson): void {
    this.hooks.log('warn', `Replication ${this.options.id.full}: retrying ${doc._id} ${doc._rev} with its attachments' content, the target's stubs being out of sync`);
  }

  private count(session: SessionStats, delta: Partial<SessionStats>): void {
    for (const [k, v] of Object.entries(delta) as [keyof SessionStats, number][]) {
      session[k] += v;
      this.stats[k] += v;
    }
  }

  private openTask(): void {
    if (this.task) return;
    this.task = this.hooks.startTask(this.taskFields());
  }

  private updateTask(): void {
    this.task?.update(this.taskFields());
  }

  private taskFields(): Record<string, string | number | boolean | null> {
    // couch_replicator:update_task: the share of the source's sequence replicated through (not
    // checkpointed), 0 for an empty source, null for sequences that are not numbers.
    const source = this.sourceSeq;
    const through = this.throughSeq;
    const progress = typeof source === 'number' && typeof through === 'number'
      ? (source === 0 ? 0 : Math.floor((through * 100) / source))
      : null;
    return {
      replication_id: this.options.id.full,
      source: this.options.sourceDisplay,
      target: this.options.targetDisplay,
      doc_id: this.options.docId,
      continuous: this.options.continuous,
      checkpointed_source_seq: this.checkpointedSeq,
      source_seq: this.sourceSeq,
      docs_read: this.stats.docs_read,
      docs_written: this.stats.docs_written,
      doc_write_failures: this.stats.doc_write_failures,
      missing_revisions_found: this.stats.missing_found,
      revisions_checked: this.stats.missing_checked,
      checkpoint_interval: this.settings.checkpointIntervalMs,
      progress,
    };
  }
}

/** Failures another attempt may overcome: the peer unreachable or failing, not a refusal. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof CouchError)) return true;
  return err.status >= 500;
}

function errorText(err: unknown): string {
  return err instanceof CouchError ? `${err.error}: ${err.reason}` : err instanceof Error ? err.message : String(err);
}

/** Sequences are numbers here and in CouchDB 1.6; other peers' opaque ones compare by their number. */
function seqNumber(seq: number | string): number {
  if (typeof seq === 'number') return seq;
  const m = /^(\d+)/.exec(seq);
  return m ? Number(m[1]) : 0;
}

function seqGreater(a: number | string, b: number | string): boolean {
  return seqNumber(a) > seqNumber(b);
}

function seqEquals(a: number | string, b: number | string): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** ISO 8601 to the second, as CouchDB's scheduler writes times (`2017-04-29T05:01:37Z`). */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
