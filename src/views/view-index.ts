/**
 * One design document's view index: every view's rows, kept in one ordered store keyed by an
 * order-preserving sort key, so range queries are range scans. Built lazily and incrementally
 * from the database's by-sequence index; all views of the design document are updated together.
 *
 * Layout (keys):
 *   m info                       {signature, collation, seq, purgeSeq, counts, reductionsValid}
 *   k <view> <sortKey> <docid> 0x00 <n>   a row: {"id", "key", "value"} as queries answer it
 *                                (view: the view's number, one byte below 255, view-keys.ts)
 *                                (n: the row's rank among its document's rows of one key, row-numbers.ts;
 *                                two bytes, or 0xFFFF and four more from 0xFFFF on: see rowKeyOf)
 *   <0x30+level> <view> <row key suffix>     a segment's count and reduction (reductions.ts)
 *   b <docid>                    the row keys a document emitted (to replace them when it changes)
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../errors.js';
import { MAX_KEY_BYTES, type Bytes, type KeyValueStore, type ReadView, type WriteOp } from '../storage/types.js';
import type { ChangeRow, Database } from '../core/database.js';
import { PackedJsonWriter } from '../core/packed-json.js';
import type { TaskFields, TaskHandle } from '../core/tasks.js';
import { COLLATION_VERSION, collate, collateRaw, sortKey } from './collation.js';
import { TagAssigner, longKeyBounds } from './long-keys.js';
import type { ViewProgram } from '../js/query-server.js';
import { ViewReductions, type ChangedRow, type ReductionsAt } from './reductions.js';
import { reducerFor, type Reducer } from './reducer.js';
import { builtinNamed } from './builtin-reduce.js';
import { MapRowsReader, SORT_KEY_MAX, type EncodedRow, type MapRowsContext } from './map-rows.js';
import { MAX_VIEWS, ROW, suffixStart, viewOf, viewPrefix } from './view-keys.js';

export interface ViewDefinition {
  map: string;
  reduce?: string;
  /** CouchDB 1.6 reads `collation: "raw"` from a view's own options. */
  options?: { collation?: string };
}

/**
 * A view's reduce source, as written, when it has one: a string that is not blank (anything
 * else, `null` included, makes a map-only view).
 */
export function reduceSource(definition: ViewDefinition | undefined): string | undefined {
  const reduce: unknown = definition?.reduce;
  return typeof reduce === 'string' && reduce.trim() !== '' ? reduce : undefined;
}

export interface DesignDoc {
  _id: string;
  language?: string;
  views?: Record<string, ViewDefinition>;
  options?: { local_seq?: boolean; include_design?: boolean; collation?: string };
  [field: string]: unknown;
}

/** Mango's `query` design documents: their maps are index definitions (objects), run natively. */
const OBJECT_MAP_LANGUAGE = 'query';

/**
 * The views of a design document, sorted: members of `views` with a map function (CouchDB 1.6
 * ignores the others) or, in a `query` design document, a map object; `lib` (CommonJS modules)
 * excepted.
 */
export function viewNames(ddoc: DesignDoc): string[] {
  const views = ddoc.views !== null && typeof ddoc.views === 'object' && !Array.isArray(ddoc.views) ? ddoc.views : {};
  const objectMaps = ddoc.language === OBJECT_MAP_LANGUAGE;
  return Object.keys(views).filter((name) => {
    const view = views[name] as unknown;
    if (name === 'lib' || view === null || typeof view !== 'object') return false;
    const map = (view as { map?: unknown }).map;
    return typeof map === 'string' || (objectMaps && map !== null && typeof map === 'object' && !Array.isArray(map));
  }).sort();
}

/** JSON with object keys sorted, so equal definitions always serialise identically. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj).filter((k) => obj[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** MD5 of what determines a design document's index: views, language, options, views.lib. */
export function viewSignature(ddoc: DesignDoc): string {
  const views = Object.fromEntries(Object.entries(ddoc.views ?? {}).filter(([name]) => name !== 'lib'));
  const material = canonicalJson({
    language: ddoc.language ?? 'javascript',
    views,
    lib: (ddoc.views as Record<string, unknown> | undefined)?.['lib'] ?? null,
    options: ddoc.options ?? {},
  });
  return createHash('md5').update(material).digest('hex');
}

interface IndexInfo {
  signature: string;
  collation: string;
  seq: number;
  purgeSeq: number;
  /** Rows per view, in `names` order. */
  counts: number[];
  /** Whether the stored partial reductions match the rows (false while a bulk update runs). */
  reductionsValid?: boolean;
  /** The layout of rows (ROW_FORMAT); an index of another layout is rebuilt. */
  rowFormat?: number;
  /** The layout of the partial-reduction records (REDUCTIONS_FORMAT); others are rebuilt. */
  reductionsFormat?: number;
  /** Changes whenever the partial reductions do (names their state for in-memory caches). */
  generation?: number;
  /** Views whose reduce failed while the index stored partials: they keep counts only. */
  unstoredReduces?: number[];
  /** Per view, the update sequence at which its rows last changed (its answers' ETags). */
  viewSeqs?: number[];
  /** Per view, the purge sequence at which a purge last removed rows from it. */
  viewPurgeSeqs?: number[];
}

/** What a query reports of the index: its update sequence and row count per view, as committed. */
export interface CommittedIndex {
  seq: number;
  counts: readonly number[];
}

export interface UpdateOptions {
  /** `[query_server_config] reduce_limit` */
  reduceLimit?: boolean;
  /** Lists the update in `_active_tasks` (an `indexer` task: the caller adds what it indexes). */
  task?: (fields: TaskFields) => TaskHandle;
  /** The caller does not wait for the update (`stale=update_after`): not a waiting client. */
  background?: boolean;
}

export interface Row {
  id: string;
  key: unknown;
  value: unknown;
}

const META = Buffer.from('minfo');
const BACK = 0x62; // b
export { SORT_KEY_MAX } from './map-rows.js';
/** Documents mapped per batch while building. */
const MAP_BATCH = 500;
/** Batches mapped or written while the next is read. */
const MAP_AHEAD = 2;
/** Batch writes of a build submitted and not yet committed, at most (see ViewIndex.apply). */
const MAX_UNSETTLED_WRITES = 4;
/**
 * An update touching more documents than this share of the index's rows rebuilds the partial
 * reductions in one pass at the end instead of maintaining them batch by batch.
 */
const BULK_SHARE = 1 / 8;
/** Version of the partial-reduction records' layout (2: heads at every level). */
const REDUCTIONS_FORMAT = 2;
/** Version of the rows' layout (2: rows stored as the JSON objects queries answer). */
const ROW_FORMAT = 2;

export class ViewIndex {
  readonly names: string[];
  private info!: IndexInfo;
  private updating: Promise<void> | undefined;
  /** Callers awaiting `updating` (see update). */
  private waiting = 0;
  /** Per view (by number): whether it collates raw (by bytes) instead of by ICU. */
  private readonly rawViews: boolean[];
  private reductions: ViewReductions[] = [];
  /** Set while the view service compacts this index's store (`_info`'s compact_running). */
  compacting = false;

  private constructor(readonly store: KeyValueStore, readonly ddoc: DesignDoc, readonly signature: string) {
    this.names = viewNames(ddoc);
    const allRaw = ddoc.options?.collation === 'raw';
    this.rawViews = this.names.map((name) => allRaw || ddoc.views?.[name]?.options?.collation === 'raw');
  }

  /**
   * `dbPurgeSeq`: the database's purge sequence, which a fresh (or reset) index starts at, as
   * couch_mrview_util:init_state gives a new index's header the database's purge_seq (`_info`
   * reports it before the first build).
   */
  static async open(store: KeyValueStore, ddoc: DesignDoc, signature: string, dbPurgeSeq = 0): Promise<ViewIndex> {
    const index = new ViewIndex(store, ddoc, signature);
    if (index.names.length > MAX_VIEWS) throw badRequest(`A design document may hold at most ${MAX_VIEWS} views`);
    const stored = await store.get(META);
    const info = stored ? (JSON.parse(Buffer.from(stored).toString('utf8')) as IndexInfo) : undefined;
    if (info && info.signature === signature && info.collation === COLLATION_VERSION && info.rowFormat === ROW_FORMAT && info.counts.length === index.names.length) {
      index.info = info;
    } else {
      await index.reset(dbPurgeSeq);
    }
    index.reductions = index.names.map((_, view) => new ViewReductions(store, view, index.storesReduceValues(view)));
    return index;
  }

  /** A view whose reduce results combine exactly (and have not failed) keeps them in its segments. */
  private storesReduceValues(view: number): boolean {
    const source = reduceSource(this.ddoc.views?.[this.names[view]!]);
    return source !== undefined && builtinNamed(source) !== '_approx_count_distinct' && !(this.info.unstoredReduces ?? []).includes(view);
  }

  /**
   * The partial reductions of `view` as `read` (a snapshot of this index's store) sees them, or
   * undefined while they are being rebuilt (queries then scan rows).
   */
  async reductionsIn(read: ReadView, view: number): Promise<ReductionsAt | undefined> {
    const stored = await read.get(META);
    if (!stored) return undefined;
    const info = this.parsedMeta(stored);
    if (!this.reductionsCurrent(info) || (info.unstoredReduces ?? []).includes(view)) return undefined;
    return this.reductions[view]!.at(read, info.generation ?? 0, info.counts[view] ?? 0);
  }

  /** The last META record read, parsed: queries between two updates all read the same one. */
  private lastMeta: { bytes: Buffer; info: IndexInfo } | undefined;

  private parsedMeta(stored: Bytes): IndexInfo {
    if (this.lastMeta && Buffer.compare(this.lastMeta.bytes, stored) === 0) return this.lastMeta.info;
    const bytes = Buffer.from(stored);
    const info = JSON.parse(bytes.toString('utf8')) as IndexInfo;
    this.lastMeta = { bytes, info };
    return info;
  }

  /**
   * The index as its last commit left it (or as `read`, a snapshot, sees it): the update sequence
   * and row counts that go with the rows a query reads. The in-memory state runs ahead of them
   * while an update's batch is being written.
   */
  async committed(read: ReadView = this.store): Promise<CommittedIndex> {
    const stored = await read.get(META);
    return stored ? this.parsedMeta(stored) : { seq: 0, counts: this.names.map(() => 0) };
  }

  /** The sequence this index has reached in memory (its update's progress). */
  get seq(): number {
    return this.info.seq;
  }

  get purgeSeq(): number {
    return this.info.purgeSeq;
  }

  get isUpdating(): boolean {
    return this.updating !== undefined;
  }

  /** Rows in all of this index's views. */
  get rowCount(): number {
    return this.info.counts.reduce((sum, n) => sum + n, 0);
  }

  /** Whether `view` collates raw (its view options, or the design document's, say so). */
  isRaw(view: number): boolean {
    return this.rawViews[view] ?? false;
  }

  viewNumber(name: string): number {
    return this.names.indexOf(name);
  }

  /** When `view`'s rows last changed: [update sequence, purge sequence] (CouchDB's per-view seqs). */
  viewVersion(view: number): [number, number] {
    return [this.info.viewSeqs?.[view] ?? 0, this.info.viewPurgeSeqs?.[view] ?? 0];
  }

  /** Empties the index (signature or collation changed, or a purge it cannot follow). */
  private async reset(purgeSeq = 0): Promise<void> {
    const ops: WriteOp[] = [];
    for await (const entries of this.store.rangeChunks({}, 1024)) {
      for (const { key } of entries) ops.push({ type: 'del', key: Buffer.from(key) });
      if (ops.length >= 4096) await this.store.write(ops.splice(0), { durable: false });
    }
    this.info = {
      signature: this.signature, collation: COLLATION_VERSION, seq: 0, purgeSeq, counts: this.names.map(() => 0),
      reductionsValid: false, rowFormat: ROW_FORMAT, generation: (this.info?.generation ?? 0) + 1,
    };
    ops.push({ type: 'put', key: META, value: Buffer.from(JSON.stringify(this.info)) });
    await this.store.write(ops, { durable: false });
  }

  /**
   * Brings the index up to the database's current sequence. Concurrent callers share one
   * update; `program` runs the map functions.
   */
  update(db: Database, program: () => Promise<ViewProgram>, options: UpdateOptions = {}): Promise<void> {
    const updated = this.updateTo(db.updateSeq, db, program, options);
    if (options.background || !this.updating) return updated;
    this.waiting++;
    return updated.finally(() => { this.waiting--; });
  }

  /** Callers waiting for an update of this index (`_info`'s waiting_clients). */
  get waitingClients(): number {
    return this.waiting;
  }

  /**
   * Brings the index to at least `target`. An update already running may have started before
   * the writes up to `target` (a `stale=update_after` one, say): it is waited for, and then the
   * index catches up, as couch_index waits for the sequence the query saw.
   */
  private updateTo(target: number, db: Database, program: () => Promise<ViewProgram>, options: UpdateOptions): Promise<void> {
    if (this.updating) return this.updating.then(() => this.updateTo(target, db, program, options));
    if (this.info.seq >= target && this.info.purgeSeq === db.purgeSeq && this.reductionsCurrent(this.info)) return Promise.resolve();
    this.updating = this.runUpdate(db, program, options).finally(() => { this.updating = undefined; });
    return this.updating;
  }

  private async runUpdate(db: Database, programOf: () => Promise<ViewProgram>, options: UpdateOptions): Promise<void> {
    const reducers = this.names.map((name) => {
      const source = reduceSource(this.ddoc.views?.[name]);
      return source !== undefined ? reducerFor(source, name, programOf, options.reduceLimit ?? true) : undefined;
    });
    this.maintain = reducers;
    if (db.purgeSeq !== this.info.purgeSeq) await this.followPurges(db);
    // Many changes: rows first, partial reductions rebuilt in one pass at the end.
    const rows = Math.max(0, ...this.info.counts);
    const bulk = !this.reductionsCurrent(this.info) || this.info.seq === 0 || db.updateSeq - this.info.seq > rows * BULK_SHARE;
    if (bulk) this.info.reductionsValid = false;
    this.maintain = bulk ? undefined : reducers;
    // Progress in documents indexed, of those changed when the update began (as CouchDB counts
    // them; documents changed meanwhile come on top, so `done` stops at the total).
    const total = options.task ? await db.changeCount(this.info.seq) : 0;
    const task = options.task?.({ changes_done: 0, total_changes: total, progress: 0 });
    let indexed = 0;
    const reached = (count: number) => {
      indexed += count;
      const done = Math.min(total, indexed);
      task?.update({ changes_done: done, progress: total > 0 ? Math.floor((done * 100) / total) : 0 });
    };
    // The task lasts as long as the update, partial reductions rebuilt at the end included.
    try {
      try {
        await this.mapChanges(db, programOf, reached);
      } finally {
        this.maintain = undefined;
      }
      if (bulk) {
        for (let view = 0; view < this.names.length; view++) {
          await this.withReducer(view, reducers[view], (reductions, reducer) => reductions.rebuild(reducer));
        }
        this.info.reductionsValid = true;
        this.info.reductionsFormat = REDUCTIONS_FORMAT;
        this.info.generation = (this.info.generation ?? 0) + 1;
        await this.store.write([{ type: 'put', key: META, value: Buffer.from(JSON.stringify(this.info)) }], { durable: false });
      }
    } finally {
      task?.done();
    }
  }

  private reductionsCurrent(info: IndexInfo): boolean {
    return info.reductionsValid === true && info.reductionsFormat === REDUCTIONS_FORMAT;
  }

  /** Reducers of views whose partial reductions are maintained batch by batch (not in bulk mode). */
  private maintain: (Reducer | undefined)[] | undefined;

  /**
   * Row writes of a build that were submitted but not waited for (see `apply`): the store
   * applies writes in the order they were made, so a batch of new documents need not wait for
   * the one before it to commit. Anything that reads the index's rows settles them first.
   */
  private readonly unsettledWrites: Promise<void>[] = [];
  /** The first unsettled write that failed, until settleWrites throws it (the next batch does). */
  private unsettledWriteFailure: { error: unknown } | undefined;

  /** Waits for the unsettled row writes; throws the first failure among them. */
  private async settleWrites(): Promise<void> {
    await Promise.allSettled(this.unsettledWrites.splice(0));
    const failure = this.unsettledWriteFailure;
    this.unsettledWriteFailure = undefined;
    if (failure) throw failure.error;
  }

  /**
   * Runs a rebuild or update of one view's partial reductions; a reduce that fails leaves the
   * view with counts only (its queries then reduce rows and report the error).
   */
  private async withReducer(view: number, reducer: Reducer | undefined, run: (r: ViewReductions, reducer: Reducer | undefined) => Promise<void>): Promise<void> {
    try {
      await run(this.reductions[view]!, reducer);
    } catch {
      this.info.unstoredReduces = [...(this.info.unstoredReduces ?? []), view];
      this.reductions[view] = new ViewReductions(this.store, view, false);
      await this.reductions[view]!.rebuild(undefined);
    }
  }

  private async mapChanges(db: Database, programOf: () => Promise<ViewProgram>, reached: (documents: number) => void): Promise<void> {
    const program = await programOf();
    const includeDesign = this.ddoc.options?.include_design === true;
    const localSeq = this.ddoc.options?.local_seq === true;
    // `mapped`: whether the change is a document the maps see (its JSON is in `packed`).
    type Pending = { id: string; seq: number; mapped: boolean };
    let batch: Pending[] = [];
    const packed = new PackedJsonWriter();
    // Building from nothing, a change at or below the database's sequence at the start is a
    // document's only one (the by-sequence index has one entry per document; one updated
    // meanwhile comes again above it): it has no earlier rows to look up.
    const freshUntil = this.info.seq === 0 ? db.updateSeq : 0;
    // A pipeline: while the sandbox's workers map one batch, the next is read and the one before
    // is written, so no stage waits for another to finish. Batches are written in order; at most
    // MAP_AHEAD are in flight. A batch of new documents does not wait for the write before it to
    // commit (see apply). A failure anywhere stops reading and is thrown below.
    let writing: Promise<void> = Promise.resolve();
    const inFlight: Promise<void>[] = [];
    let failure: { error: unknown } | undefined;
    const flush = async () => {
      if (batch.length === 0) return;
      const docs = batch;
      batch = [];
      const texts = packed.finish();
      const live = docs.filter((d) => d.mapped);
      // The workers compute sort keys and stored rows too (map-rows.ts).
      const context = (maps: number[], start: number, end: number): MapRowsContext => ({
        ids: live.slice(start, end).map((d) => d.id),
        views: maps.map((map, view) => ({ map, raw: this.isRaw(view) })),
      });
      const mapped = live.length > 0 ? program.mapEncoded(texts, this.names, context) : Promise.resolve([]);
      const previous = writing;
      writing = (async () => {
        // Settles only after the batch before it has (written or failed), whatever this batch's
        // mapping does: no write of this update can still run once the update has failed.
        const [results, before] = await Promise.allSettled([mapped, previous]);
        if (before.status === 'rejected') throw before.reason;
        if (results.status === 'rejected') throw results.reason;
        const reader = new MapRowsReader(results.value);
        const emitted = new Map<string, EncodedRow[]>();
        for (const d of live) emitted.set(d.id, reader.nextDocument());
        await this.apply(docs.map((d) => ({ id: d.id, rows: emitted.get(d.id), fresh: d.seq <= freshUntil })), docs[docs.length - 1]!.seq, undefined, true);
        reached(docs.length);
      })();
      // Observed at once, so a failure is never an unhandled rejection while reading goes on.
      writing.catch((error: unknown) => { failure ??= { error }; });
      inFlight.push(writing);
      if (inFlight.length > MAP_AHEAD) await inFlight.shift();
    };
    // The changes are read from a snapshot taken after this: every sequence up to here is in it.
    const readUpTo = db.updateSeq;
    const readChanges = async () => {
      for await (const changes of db.changes(this.info.seq)) {
        for (let at = 0; at < changes.length;) {
          const part = changes.slice(at, at + MAP_BATCH - batch.length);
          at += part.length;
          const mapped = await packMapInputs(db, part, includeDesign, localSeq, packed);
          for (let i = 0; i < part.length; i++) batch.push({ id: part[i]!.id, seq: part[i]!.seq, mapped: mapped[i]! });
          if (batch.length >= MAP_BATCH) await flush();
        }
        if (failure) return;
      }
      await flush();
    };
    try {
      await readChanges();
    } finally {
      // Whatever failed, no batch of this update is still being written when it ends.
      await writing.catch(() => undefined);
      await this.settleWritesOrReset();
    }
    await writing;
    if (this.info.seq < readUpTo) {
      // Sequences with no change left (superseded, purged): the index is current up to there.
      // Not to the database's sequence now: writes made during the build are the next update's.
      this.info.seq = readUpTo;
      await this.store.write([{ type: 'put', key: META, value: Buffer.from(JSON.stringify(this.info)) }], { durable: false });
    }
  }

  /**
   * Settles the build's unsettled writes. If one failed, writes after it may still have
   * committed, each claiming the index is current up to its batch: the index is emptied (the
   * next update rebuilds it) rather than left missing that batch's rows.
   */
  private async settleWritesOrReset(): Promise<void> {
    try {
      await this.settleWrites();
    } catch (err) {
      await this.reset();
      throw err;
    }
  }

  /** A purge moved by one is followed document by document; more than one rebuilds. */
  private async followPurges(db: Database): Promise<void> {
    if (db.purgeSeq !== this.info.purgeSeq + 1) {
      await this.reset();
      this.info.purgeSeq = db.purgeSeq;
      return;
    }
    for await (const { purged } of db.purgesSince(this.info.purgeSeq)) {
      const docs = await Promise.all(Object.keys(purged).map(async (id) => ({
        id,
        rows: undefined as EncodedRow[] | undefined,
        stillThere: (await db.docInfo(id)) !== undefined,
      })));
      // Purged documents lose their rows; survivors are re-mapped by the normal update.
      await this.apply(docs.filter((d) => !d.stillThere), this.info.seq, db.purgeSeq);
    }
    this.info.purgeSeq = db.purgeSeq;
  }

  /**
   * Replaces each document's rows (undefined rows: the document is gone or not indexed).
   * `pipelined`: when nothing else has to be read or written after the rows (new documents, no
   * partial reductions to maintain), the rows' write is submitted and left unsettled, so that
   * the next batch is prepared while this one commits.
   */
  private async apply(docs: { id: string; rows: EncodedRow[] | undefined; fresh?: boolean }[], seq: number, purgeSeq?: number, pipelined = false): Promise<void> {
    if (this.unsettledWriteFailure) await this.settleWrites();
    const idBytes = docs.map((d) => Buffer.from(d.id, 'utf8'));
    const backKeys = idBytes.map(backKey);
    // Documents known to have no rows yet (`fresh`) need no lookup.
    const lookups = docs.some((d) => d.fresh) ? backKeys.filter((_, i) => !docs[i]!.fresh) : backKeys;
    if (lookups.length > 0) await this.settleWrites();
    const found = lookups.length > 0 ? await this.store.decodeMany(lookups, (bytes) => (bytes ? decodeBack(bytes) : undefined)) : [];
    let at = 0;
    const previous = lookups === backKeys ? found : docs.map((d) => (d.fresh ? undefined : found[at++]));
    const maintain = this.maintain;
    // The final state of each changed row, per view, for the partial reductions.
    const changed = maintain ? this.names.map(() => new Map<string, ChangedRow>()) : undefined;
    const viewSeqs = this.info.viewSeqs ??= this.names.map(() => 0);
    const viewPurgeSeqs = this.info.viewPurgeSeqs ??= this.names.map(() => 0);
    const note = (rowKey: Buffer, view: number, present: boolean) => {
      if (purgeSeq === undefined) viewSeqs[view] = seq;
      else viewPurgeSeqs[view] = purgeSeq;
      if (!changed) return;
      const suffix = rowKey.subarray(suffixStart(rowKey));
      changed[view]!.set(suffix.toString('latin1'), { suffix, present });
    };
    const sortKeys = await this.storedSortKeys(docs);
    const ops = this.rowOps(docs, previous, idBytes, backKeys, sortKeys, note);
    this.info.seq = Math.max(this.info.seq, seq);
    const touched = changed?.some((rows) => rows.size > 0) ?? false;
    // Rows and reductions are written separately; a crash between them leaves the reductions
    // marked invalid, to be rebuilt by the next update.
    if (touched) this.info.reductionsValid = false;
    ops.push({ type: 'put', key: META, value: Buffer.from(JSON.stringify(this.info)) });
    if (pipelined && !touched) {
      // Writes commit in order and each carries the index's state up to its batch, so a crash
      // leaves a consistent index; a failed one stops the build (settleWritesOrReset).
      const written = this.store.write(ops, { durable: false });
      // Recorded here (no unhandled rejection meanwhile); thrown by settleWrites.
      written.catch((error: unknown) => { this.unsettledWriteFailure ??= { error }; });
      this.unsettledWrites.push(written);
      // A bounded queue: a store slower than the workers holds the build back here.
      if (this.unsettledWrites.length > MAX_UNSETTLED_WRITES) await this.unsettledWrites.shift()!.catch(() => undefined);
      return;
    }
    await this.settleWrites();
    await this.store.write(ops, { durable: false });
    if (!touched) return;
    for (let view = 0; view < this.names.length; view++) {
      const rows = [...changed![view]!.values()];
      if (rows.length > 0) await this.withReducer(view, maintain![view], (reductions, reducer) => reductions.update(rows, reducer));
    }
    this.info.reductionsValid = true;
    this.info.generation = (this.info.generation ?? 0) + 1;
    await this.store.write([{ type: 'put', key: META, value: Buffer.from(JSON.stringify(this.info)) }], { durable: false });
  }

  /**
   * The sort keys rows are stored under, where they differ from the rows' own: a key longer than
   * SORT_KEY_MAX is stored as its group's prefix and an order tag (long-keys.ts), assigned from
   * the rows already stored. Undefined when no row has a long key (almost always).
   */
  private async storedSortKeys(docs: readonly { rows: EncodedRow[] | undefined }[]): Promise<Map<EncodedRow, Buffer> | undefined> {
    let stored: Map<EncodedRow, Buffer> | undefined;
    const tags: (TagAssigner | undefined)[] = [undefined, undefined];
    for (const doc of docs) {
      for (const row of doc.rows ?? []) {
        const sk = row.sortKey;
        if (sk.length <= SORT_KEY_MAX) continue;
        const raw = this.isRaw(row.view);
        const group = Buffer.concat([viewPrefix(ROW, row.view), sk.subarray(0, SORT_KEY_MAX)]);
        await this.settleWrites();
        const assigner = tags[raw ? 1 : 0] ??= new TagAssigner(this.store, raw ? collateRaw : collate);
        stored ??= new Map();
        stored.set(row, Buffer.concat([sk.subarray(0, SORT_KEY_MAX), await assigner.tagFor(group, row.key), Buffer.of(0x00)]));
      }
    }
    return stored;
  }

  /**
   * The writes that replace each document's previous rows (`previous[i]`, their row keys) by its
   * new ones. Synchronous and kept apart from apply's awaits: this loop is the build's hot path.
   */
  private rowOps(
    docs: readonly { rows: EncodedRow[] | undefined }[], previous: readonly (Buffer[] | undefined)[], idBytes: readonly Buffer[],
    backKeys: readonly Buffer[], sortKeys: Map<EncodedRow, Buffer> | undefined, note: (rowKey: Buffer, view: number, present: boolean) => void,
  ): WriteOp[] {
    const ops: WriteOp[] = [];
    const counts = this.info.counts;
    for (let i = 0; i < docs.length; i++) {
      const old = previous[i];
      if (old) {
        for (const rowKey of old) {
          const view = viewOf(rowKey);
          ops.push({ type: 'del', key: rowKey });
          counts[view]!--;
          note(rowKey, view, false);
        }
      }
      const rows = docs[i]!.rows;
      if (rows && rows.length > 0) {
        const added: Buffer[] = [];
        for (const row of rows) {
          // The value is the row a map query answers, so queries splice it without re-encoding.
          const rowKey = rowKeyOf(row.view, sortKeys?.get(row) ?? row.sortKey, idBytes[i]!, row.n);
          ops.push({ type: 'put', key: rowKey, value: row.value });
          added.push(rowKey);
          counts[row.view]!++;
          note(rowKey, row.view, true);
        }
        ops.push({ type: 'put', key: backKeys[i]!, value: encodeBack(added) });
      } else if (old) {
        ops.push({ type: 'del', key: backKeys[i]! });
      }
    }
    return ops;
  }

  /**
   * Where the rows of `key` lie in `view`: `start` before them (and after every smaller key),
   * `end` after them, and `rows` the prefix their document ids follow (undefined if no row
   * has the key; only known without a read for keys of ordinary length).
   */
  async keyBounds(view: number, key: unknown): Promise<{ start: Buffer; end: Buffer; rows: Buffer | undefined }> {
    const raw = this.isRaw(view);
    const sk = sortKey(key, raw);
    const prefix = viewPrefix(ROW, view);
    if (sk.length > SORT_KEY_MAX) {
      return longKeyBounds(this.store, Buffer.concat([prefix, sk.subarray(0, SORT_KEY_MAX)]), key, raw ? collateRaw : collate);
    }
    const rows = Buffer.concat([prefix, sk]);
    return { start: rows, end: Buffer.concat([rows, Buffer.of(0xff)]), rows };
  }
}

/**
 * Packs what the map functions see of each change into `out`: the document's JSON as stored,
 * with _conflicts, _deleted_conflicts and _local_seq spliced in (as CouchDB's see them). Says
 * for each change whether it was packed: not a deletion, nor a design document the index
 * leaves out.
 */
async function packMapInputs(db: Database, changes: readonly ChangeRow[], includeDesign: boolean, localSeq: boolean, out: PackedJsonWriter): Promise<boolean[]> {
  const wanted = changes.filter((c) => !c.deleted && (includeDesign || !c.id.startsWith('_design/')));
  const members = wanted.map((c) => (localSeq ? `,"_local_seq":${c.seq}` : ''));
  for (let i = 0; i < wanted.length; i++) {
    if (wanted[i]!.others.length > 0) members[i] = `${await db.conflictMembers(wanted[i]!.id, true)}${members[i]!}`;
  }
  const found = await db.packKnownMany(wanted, out, (i) => members[i]!);
  const packed = new Array<boolean>(changes.length).fill(false);
  for (let i = 0, at = 0; i < changes.length && at < wanted.length; i++) {
    if (changes[i] === wanted[at]) packed[i] = found[at++]!;
  }
  return packed;
}

/**
 * `k <view> <sort key> <docid> 0x00 <n>` (the view number as view-keys.ts writes it), n in two
 * bytes below 0xFFFF, else 0xFFFF and four more bytes of n - 0xFFFF: byte order stays n's order,
 * and a document may emit any number of rows with one key.
 */
function rowKeyOf(view: number, sk: Buffer, id: Buffer, n: number): Buffer {
  const prefix = viewPrefix(ROW, view);
  const nBytes = n < 0xffff ? 2 : 6;
  const idBytes = idBytesWithin(id, MAX_KEY_BYTES - prefix.length - sk.length - 1 - nBytes);
  const out = Buffer.allocUnsafe(prefix.length + sk.length + idBytes.length + 1 + nBytes);
  prefix.copy(out, 0);
  sk.copy(out, prefix.length);
  idBytes.copy(out, prefix.length + sk.length);
  const at = prefix.length + sk.length + idBytes.length;
  out[at] = 0;
  if (n < 0xffff) {
    out.writeUInt16BE(n, at + 1);
  } else {
    out.writeUInt16BE(0xffff, at + 1);
    out.writeUInt32BE(n - 0xffff, at + 3);
  }
  return out;
}

/** `b <docid>` (the document id's UTF-8 bytes) */
function backKey(id: Buffer): Buffer {
  const idBytes = idBytesWithin(id, MAX_KEY_BYTES - 1);
  const out = Buffer.allocUnsafe(1 + idBytes.length);
  out[0] = BACK;
  idBytes.copy(out, 1);
  return out;
}

/**
 * A document id's UTF-8 bytes in at most `room` bytes: ids too long for the store's key limit keep
 * their start and a hash of the whole id, so they stay distinct and nearly in order.
 */
function idBytesWithin(bytes: Buffer, room: number): Buffer {
  if (bytes.length <= room) return bytes;
  const hash = createHash('md5').update(bytes).digest('hex').slice(0, 16);
  return Buffer.concat([bytes.subarray(0, Math.max(0, room - hash.length)), Buffer.from(hash, 'latin1')]);
}

/** The row keys a document emitted: each as `<length:2> <key>`. */
function encodeBack(keys: Buffer[]): Buffer {
  let length = 0;
  for (const key of keys) length += 2 + key.length;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const key of keys) {
    out.writeUInt16BE(key.length, at);
    key.copy(out, at + 2);
    at += 2 + key.length;
  }
  return out;
}

function decodeBack(bytes: Uint8Array): Buffer[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Buffer[] = [];
  for (let pos = 0; pos < buf.length;) {
    const len = buf.readUInt16BE(pos);
    out.push(Buffer.from(buf.subarray(pos + 2, pos + 2 + len)));
    pos += 2 + len;
  }
  return out;
}

export function decodeRow(value: Uint8Array): Row {
  return JSON.parse(rowText(value)) as Row;
}

/** A stored row's JSON text: `{"id":…,"key":…,"value":…}`, as a map query answers it. */
export function rowText(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
}
