/**
 * The server's databases: creating, opening (behind an LRU bounded by `max_dbs_open`), deleting
 * and listing them, and telling `_db_updates` listeners about each event.
 */
import { CouchError, notFound, serverStopping } from '../errors.js';
import type { StorageBackend } from '../storage/types.js';
import { Database } from './database.js';
import type { AttachmentSettings } from './attachments.js';
import { validateDbName } from './names.js';

/** A database just opened is left alone this long, so its first request can hold it. */
const EVICT_QUIET_MS = 1000;
/** How often databases beyond `max_dbs_open` are looked for once a burst is over. */
const SWEEP_MS = 2000;

export type DbEventType = 'created' | 'deleted' | 'updated' | 'compacted';

export interface RegistrySettings {
  maxDbsOpen: number;
  /**
   * The system databases (the authentication and replicator databases): as CouchDB 1.6's
   * couch_server, they count neither in `open_databases` nor against `max_dbs_open`, and are
   * never closed to make room.
   */
  systemDbs?: readonly string[];
  revsLimit: number;
  attachments: AttachmentSettings;
}

export class DatabaseRegistry {
  /** Open databases in least-recently-used order (Map keeps insertion order). */
  private readonly open = new Map<string, Promise<Database>>();
  private readonly lastUsed = new Map<string, number>();
  private readonly creating = new Set<string>();
  /**
   * Deletions under way, which opens and later deletions of the same name wait for (settled,
   * never rejecting).
   */
  private readonly deleting = new Map<string, Promise<void>>();
  private readonly listeners = new Set<(name: string, type: DbEventType) => unknown>();
  /**
   * Set by closeAll. A request still under way when the server restarts holds the old registry:
   * it must not open a database beside the new registry's copy of it.
   */
  private closed = false;

  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly backend: StorageBackend, private readonly settings: () => RegistrySettings) {
    this.sweeper = setInterval(() => this.evict(), SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * Calls `listener` on every database event. For a deletion, a promise it returns is awaited
   * before the deletion answers (the users database is recreated so, as CouchDB's is).
   */
  onEvent(listener: (name: string, type: DbEventType) => unknown): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener; resolves when the work they returned is done (failed or not). */
  private async emit(name: string, type: DbEventType): Promise<void> {
    const pending: unknown[] = [];
    for (const listener of [...this.listeners]) {
      try {
        pending.push(listener(name, type));
      } catch {
        // A failing listener must not fail the change it hears about.
      }
    }
    await Promise.allSettled(pending);
  }

  async exists(name: string): Promise<boolean> {
    const pending = this.open.get(name);
    // An open under way counts once it has succeeded: one of a missing name fails.
    if (pending) return pending.then(() => true, () => this.backend.exists(name));
    return this.backend.exists(name);
  }

  async create(name: string): Promise<Database> {
    validateDbName(name);
    const exists = await this.exists(name);
    // The check and the claim are one synchronous step, so of concurrent creators one wins.
    if (exists || this.creating.has(name)) {
      throw new CouchError(412, 'file_exists', 'The database could not be created, the file already exists.');
    }
    this.creating.add(name);
    try {
      // A concurrent open of the missing database (one that does not create) may be under way;
      // its failure must not be this creation's: once it has failed, open again, creating.
      const db = await this.load(name, true).catch((err: unknown) => {
        if (err instanceof CouchError && err.status === 404) return this.load(name, true);
        throw err;
      });
      void this.emit(name, 'created');
      return db;
    } finally {
      this.creating.delete(name);
    }
  }

  /** Opens an existing database; 404 when there is none. */
  async get(name: string): Promise<Database> {
    validateDbName(name);
    return this.load(name, false);
  }

  /** Opens a database, creating it when missing (system databases such as _users). */
  async ensure(name: string): Promise<Database> {
    if (await this.exists(name)) return this.get(name);
    try {
      return await this.create(name);
    } catch (err) {
      if (err instanceof CouchError && err.status === 412) return this.get(name);
      throw err;
    }
  }

  private load(name: string, create: boolean): Promise<Database> {
    if (this.closed) return Promise.reject(serverStopping());
    // An open racing a deletion (a background job's, say) could find the store half gone, or
    // bring its directory back: it waits for the deletion, and then finds no store. It waits
    // outside `open`, where a deletion queued behind the current one would wait for it in turn.
    const deletion = this.deleting.get(name);
    if (deletion) return deletion.then(() => this.load(name, create));
    this.lastUsed.set(name, Date.now());
    const cached = this.open.get(name);
    if (cached) {
      // Refresh its place in the LRU.
      this.open.delete(name);
      this.open.set(name, cached);
      return cached;
    }
    const opening = (async () => {
      const store = await this.backend.open(name, { create });
      if (!store) throw notFound('no_db_file');
      const settings = this.settings();
      const db = await Database.open(name, store, {
        revsLimit: settings.revsLimit,
        attachments: () => this.settings().attachments,
        system: (settings.systemDbs ?? []).includes(name),
      });
      // Closing wakes the listeners too; that is no update.
      db.onUpdate(() => { if (!db.isClosed) void this.emit(name, 'updated'); });
      db.onCompacted(() => { if (!db.isClosed) void this.emit(name, 'compacted'); });
      return db;
    })();
    this.open.set(name, opening);
    // Both continuations handle rejection: an unhandled one would take the process down.
    opening.then(() => this.evict(), () => {
      if (this.open.get(name) === opening) this.open.delete(name);
    });
    return opening;
  }

  /**
   * Closes the least recently used databases beyond `max_dbs_open`. Only idle ones are closed
   * (no request, feed or write holds them: see Database.retain), so a request never finds its
   * database closed under it; when every database is busy the limit is exceeded for a moment
   * rather than failing requests, and a periodic sweep catches up after the burst.
   */
  private evict(): void {
    const max = this.settings().maxDbsOpen;
    if (this.openCount <= max) return;
    const system = this.settings().systemDbs ?? [];
    const quietSince = Date.now() - EVICT_QUIET_MS;
    let open = this.openCount;
    for (const [name, pending] of this.open) {
      if (open <= max) break;
      if (system.includes(name) || (this.lastUsed.get(name) ?? 0) > quietSince) continue;
      open--;
      void pending.then((db) => {
        if (db.isIdle && this.open.get(name) === pending) {
          this.open.delete(name);
          this.lastUsed.delete(name);
          void db.close();
        }
      }, () => undefined);
    }
  }

  async delete(name: string): Promise<void> {
    validateDbName(name);
    if (this.closed) throw serverStopping();
    // Deletions of one name take turns: the second finds the store gone (404), rather than
    // racing the first to rename it.
    const before = this.deleting.get(name);
    const deletion = before ? before.then(() => this.remove(name)) : this.remove(name);
    const settled = deletion.then(() => undefined, () => undefined);
    this.deleting.set(name, settled);
    try {
      await deletion;
    } finally {
      if (this.deleting.get(name) === settled) this.deleting.delete(name);
    }
    // After the deletion is over: a listener may open the name again (the users database).
    await this.emit(name, 'deleted');
  }

  /** Closes the database if open and removes its store; 404 when there is none. */
  private async remove(name: string): Promise<void> {
    const pending = this.open.get(name);
    this.open.delete(name);
    if (pending) {
      try {
        await (await pending).close({ deleted: true });
      } catch {
        // A database that failed to open has nothing to close.
      }
    }
    if (!(await this.backend.destroy(name))) throw notFound('missing');
  }

  list(): Promise<string[]> {
    return this.backend.list();
  }

  /** Open databases, system databases not counted (CouchDB's `open_databases`). */
  get openCount(): number {
    const system = this.settings().systemDbs ?? [];
    let count = this.open.size;
    for (const name of system) if (this.open.has(name)) count--;
    return count;
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }
}
