/**
 * The view engine of a server: finds or builds the index of a design document (by signature,
 * so identical design documents share one), compiles its code once in the sandbox, and removes
 * indexes no design document uses. Indexes live in their own stores, apart from databases.
 */
import { notFound, serverStopping, CouchError } from '../errors.js';
import type { StorageBackend } from '../storage/types.js';
import type { Database } from '../core/database.js';
import * as revtree from '../core/revtree.js';
import { languageOf, type QueryServer, type ViewProgram } from '../js/query-server.js';
import { ViewIndex, viewNames, viewSignature, type DesignDoc, type UpdateOptions } from './view-index.js';
import type { TaskFields, TaskRegistry } from '../core/tasks.js';

export interface OpenedView {
  ddoc: DesignDoc;
  index: ViewIndex;
  /** The design document's compiled code (compiled on first use). */
  program: () => Promise<ViewProgram>;
  /** Brings the index up to date, listed in `_active_tasks` meanwhile. */
  update: (options?: UpdateOptions) => Promise<void>;
}

/** A design-document language whose maps run natively, not in the sandbox (Mango's `query`). */
export type NativeProgram = (ddoc: DesignDoc) => ViewProgram;

export class ViewService {
  private readonly indexes = new Map<string, Promise<ViewIndex>>();
  private readonly programs = new Map<string, Promise<ViewProgram>>();
  /** The last opening of each design document, by database and id, with its revision. */
  private readonly recent = new Map<string, { rev: string; seq: number; purgeSeq: number; view: OpenedView }>();
  private closed = false;

  constructor(
    private readonly backend: StorageBackend,
    private readonly queryServer: () => Promise<QueryServer>,
    private readonly native: ReadonlyMap<string, NativeProgram> = new Map(),
    private readonly tasks?: TaskRegistry,
  ) {}

  /** The native program of the design document's language, if its maps run natively. */
  private nativeProgram(ddoc: DesignDoc): NativeProgram | undefined {
    return typeof ddoc.language === 'string' ? this.native.get(ddoc.language) : undefined;
  }

  /** Checks that the design document's code can run: JavaScript (or CoffeeScript) in the sandbox, or a native language. */
  private requireCode(ddoc: DesignDoc): void {
    if (!this.nativeProgram(ddoc)) languageOf(ddoc.language);
  }

  /**
   * The design document `ddocId` of `db`, its index, and its code. `requireCode: false` opens
   * the index of a design document in any language (its `_info`, compaction): only running its
   * code needs JavaScript.
   */
  async open(db: Database, ddocId: string, requireCode = true): Promise<OpenedView> {
    const view = await this.openCached(db, ddocId);
    if (requireCode) this.requireCode(view.ddoc);
    return view;
  }

  private async openCached(db: Database, ddocId: string): Promise<OpenedView> {
    // Queries come far more often than design documents change: reuse what this revision gave,
    // without a read while the database has not changed, else knowing the revision from the
    // document's info alone.
    const cacheKey = `${db.name}\u0000${db.instanceStartTime}\u0000${ddocId}`;
    const cached = this.recent.get(cacheKey);
    const seq = db.updateSeq;
    const purgeSeq = db.purgeSeq;
    if (cached && cached.seq === seq && cached.purgeSeq === purgeSeq) return cached.view;
    const info = await db.docInfo(ddocId);
    const winner = info ? revtree.winner(info.tree) : undefined;
    if (!info || !winner) throw notFound('missing');
    if (winner.deleted) throw notFound('deleted');
    if (cached && cached.rev === winner.rev) {
      cached.seq = seq;
      cached.purgeSeq = purgeSeq;
      return cached.view;
    }
    const opened = await db.openFromInfo(info).catch((err: unknown) => {
      if (err instanceof CouchError && err.status === 404) throw notFound('missing');
      throw err;
    });
    const ddoc = JSON.parse(opened.json) as DesignDoc;
    const view = await this.openDesign(db, ddoc, false);
    this.recent.set(cacheKey, { rev: opened.rev, seq, purgeSeq, view });
    if (this.recent.size > 1000) this.recent.delete(this.recent.keys().next().value!);
    return view;
  }

  /** Index and code of a design document given as is (also `_temp_view`). */
  async openDesign(db: Database, ddoc: DesignDoc, requireCode = true): Promise<OpenedView> {
    if (requireCode) this.requireCode(ddoc);
    const signature = viewSignature(ddoc);
    const name = `${db.name}$${signature}`;
    // A request under way when the server restarted holds this closed service: an index opened
    // here would have two writers, this one and the new service's.
    if (this.closed) throw serverStopping();
    let index = this.indexes.get(name);
    if (!index) {
      index = (async () => {
        const store = await this.backend.open(name, { create: true });
        return ViewIndex.open(store!, ddoc, signature, db.purgeSeq);
      })();
      this.indexes.set(name, index);
      index.catch(() => this.indexes.delete(name));
    }
    const opened = await index;
    // A request that began before its database was deleted must not leave an index behind
    // (its deletion dropped those it found): a database created under the name later would
    // take it for its own.
    if (db.isDeleted) {
      await this.drop(name);
      throw notFound('no_db_file');
    }
    const program = () => {
      let compiled = this.programs.get(signature);
      if (!compiled) {
        const native = this.nativeProgram(ddoc);
        compiled = native ? Promise.resolve(native(ddoc)) : this.queryServer().then((qs) => qs.views({
          id: ddoc._id,
          language: ddoc.language,
          views: Object.fromEntries(viewNames(ddoc).map((n) => [n, ddoc.views![n]!])),
          lib: (ddoc.views as Record<string, unknown> | undefined)?.['lib'],
          options: ddoc.options,
        }));
        this.programs.set(signature, compiled);
        compiled.catch(() => this.programs.delete(signature));
      }
      return compiled;
    };
    const task = this.tasks
      ? (fields: TaskFields) => this.tasks!.start('indexer', { database: db.name, design_document: ddoc._id, ...fields })
      : undefined;
    return { ddoc, index: opened, program, update: (options = {}) => opened.update(db, program, { task, ...options }) };
  }

  /** Removes the indexes of `db` that no current design document uses (`_view_cleanup`). */
  async cleanup(db: Database, liveSignatures: ReadonlySet<string>): Promise<void> {
    const prefix = `${db.name}$`;
    for (const name of await this.backend.list()) {
      if (!name.startsWith(prefix) || liveSignatures.has(name.slice(prefix.length))) continue;
      await this.drop(name);
    }
  }

  /** Removes every index of a database (it was deleted). */
  async dropDatabase(dbName: string): Promise<void> {
    const prefix = `${dbName}$`;
    for (const name of await this.backend.list()) {
      if (name.startsWith(prefix) && !name.slice(prefix.length).includes('$')) await this.drop(name);
    }
  }

  /** Compacts the index store of a design document. */
  async compact(db: Database, ddocId: string): Promise<void> {
    const { index } = await this.open(db, ddocId, false);
    if (index.compacting) return;
    index.compacting = true;
    // The store is rewritten in one step: the task says what it copies, then that it is done.
    const total = index.rowCount;
    const task = this.tasks?.start('view_compaction', { database: db.name, design_document: ddocId, changes_done: 0, total_changes: total, progress: 0 });
    try {
      await index.store.compact();
      task?.update({ changes_done: total, progress: 100 });
    } finally {
      index.compacting = false;
      task?.done();
    }
  }

  private async drop(name: string): Promise<void> {
    this.recent.clear();
    const pending = this.indexes.get(name);
    this.indexes.delete(name);
    if (pending) await (await pending.catch(() => undefined))?.store.close({ deleted: true });
    await this.backend.destroy(name);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.recent.clear();
    for (const pending of this.indexes.values()) await (await pending.catch(() => undefined))?.store.close();
    this.indexes.clear();
    for (const program of this.programs.values()) (await program.catch(() => undefined))?.dispose();
    this.programs.clear();
  }
}
