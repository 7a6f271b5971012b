/**
 * Automatic compaction, as CouchDB 1.6's couch_compaction_daemon does it: every
 * `[compaction_daemon] check_interval` seconds, each database with a rule in `[compactions]`
 * (its own, else `_default`) is compacted when its fragmentation reaches `db_fragmentation`, then
 * its design documents' indexes when theirs reach `view_fragmentation` — only inside the rule's
 * `from`–`to` window (local time), only for files of at least `[compaction_daemon]
 * min_file_size` bytes, and only when the disk has twice the live data free.
 *
 *   [compactions]
 *   _default = [{db_fragmentation, "70%"}, {view_fragmentation, "60%"}, {from, "23:00"}, {to, "04:00"}]
 *
 * `parallel_view_compaction` compacts the indexes while the database compacts. With
 * `strict_window`, no compaction starts once the window has closed; one already running finishes
 * (a compaction here cannot be stopped half-way, where CouchDB's is cancelled).
 */
import { statfs } from 'node:fs/promises';
import type { Config } from '../config/config.js';
import { parseErlangTerm, termText } from '../config/erlang-term.js';
import type { Logger } from '../log/logger.js';
import type { Database } from './database.js';
import type { DatabaseRegistry } from './registry.js';
import type { TaskRegistry } from './tasks.js';

export interface CompactionRule {
  /** Least fragmentation (%) that compacts the database; undefined: any. */
  dbFragmentation?: number;
  /** Least fragmentation (%) that compacts an index; undefined: any. */
  viewFragmentation?: number;
  /** The daily window, [hours, minutes] local time; undefined: always. */
  period?: { from: [number, number]; to: [number, number] };
  strictWindow: boolean;
  parallelViewCompaction: boolean;
}

/** An index the daemon may compact, with its sizes. */
export interface IndexSizes {
  ddocId: string;
  diskSize: number;
  dataSize: number;
  updating: boolean;
}

/** What the daemon asks of the view engine (which lives above this layer). */
export interface IndexCompaction {
  indexes(db: Database): Promise<IndexSizes[]>;
  compact(db: Database, ddocId: string): Promise<void>;
}

/** A `[compactions]` value parsed, or why it is refused (CouchDB logs and ignores such a rule). */
export function parseCompactionRule(text: string): CompactionRule | { invalid: string } {
  const term = parseErlangTerm(text);
  if (term?.t !== 'list') return { invalid: 'not a list of {Name, Value} pairs' };
  const rule: CompactionRule = { strictWindow: false, parallelViewCompaction: false };
  let from: [number, number] | undefined;
  let to: [number, number] | undefined;
  for (const item of term.items) {
    if (item.t !== 'tuple' || item.items.length !== 2) return { invalid: 'not a list of {Name, Value} pairs' };
    const name = termText(item.items[0]);
    const value = termText(item.items[1]);
    if (value === undefined) return { invalid: `bad value for ${name}` };
    switch (name) {
      case 'db_fragmentation':
      case 'view_fragmentation': {
        const percent = /^\s*(\d+)\s*%?\s*$/.exec(value);
        if (!percent) return { invalid: `bad value for ${name}` };
        if (name === 'db_fragmentation') rule.dbFragmentation = Number(percent[1]);
        else rule.viewFragmentation = Number(percent[1]);
        break;
      }
      case 'from':
      case 'to': {
        const time = /^(\d+):(\d+)$/.exec(value);
        if (!time) return { invalid: `bad value for ${name}` };
        const hm: [number, number] = [Number(time[1]), Number(time[2])];
        if (name === 'from') from = hm;
        else to = hm;
        break;
      }
      case 'strict_window':
      case 'parallel_view_compaction':
        if (value !== 'true' && value !== 'false') return { invalid: `bad value for ${name}` };
        if (name === 'strict_window') rule.strictWindow = value === 'true';
        else rule.parallelViewCompaction = value === 'true';
        break;
      default:
        return { invalid: `unknown setting ${name}` };
    }
  }
  if ((from === undefined) !== (to === undefined)) return { invalid: "incomplete period ('to' or 'from' missing)" };
  if (from && to) rule.period = { from, to };
  return rule;
}

/** Whether `now` (local time) is inside the rule's window; a window may span midnight. */
export function inWindow(rule: CompactionRule, now: Date): boolean {
  if (!rule.period) return true;
  const at = now.getHours() * 60 + now.getMinutes();
  const from = rule.period.from[0] * 60 + rule.period.from[1];
  const to = rule.period.to[0] * 60 + rule.period.to[1];
  return from < to ? at >= from && at < to : at >= from || at < to;
}

/** Fragmentation (%) of a file and the space a compaction of it needs, as CouchDB estimates them. */
export function fragmentation(diskSize: number, dataSize: number | null, minFileSize: number): { percent: number; spaceRequired: number } {
  if (diskSize < minFileSize) return { percent: 0, spaceRequired: diskSize };
  if (dataSize === null) return { percent: 100, spaceRequired: diskSize };
  if (dataSize === 0) return { percent: 0, spaceRequired: diskSize };
  return { percent: Math.round(((diskSize - dataSize) / diskSize) * 100), spaceRequired: Math.round(dataSize * 2) };
}

/** Compacts a database, reported in `_active_tasks` (as `POST /{db}/_compact` and the daemon start it). */
export function compactDatabase(db: Database, tasks: TaskRegistry): Promise<void> {
  if (db.isCompacting) return Promise.resolve();
  const task = tasks.start('database_compaction', { database: db.name, changes_done: 0, total_changes: db.docCount, progress: 0 });
  return db.compact((done, total) => task.update({
    changes_done: done, total_changes: total, progress: total > 0 ? Math.min(100, Math.floor((done * 100) / total)) : 0,
  })).finally(() => task.done());
}

export interface CompactionDaemonDeps {
  config: Config;
  dbs: DatabaseRegistry;
  tasks: TaskRegistry;
  log: Logger;
  indexes: IndexCompaction;
  /** Where databases and indexes live, for the free-space check. */
  databaseDir: string;
  viewIndexDir: string;
}

export class CompactionDaemon {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private unwatch: (() => void) | undefined;
  /** Rules by their text, parsed once (an invalid one is logged once). */
  private readonly parsed = new Map<string, CompactionRule | undefined>();

  constructor(private readonly deps: CompactionDaemonDeps) {}

  start(): void {
    // A rule added while none were set is acted on at once, as CouchDB's loop wakes for it.
    this.unwatch = this.deps.config.onChange((section) => {
      if (section === 'compactions' && !this.running) this.schedule(0);
    });
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((err: unknown) => this.deps.log.error(`Compaction daemon: ${String(err)}`))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.deps.config.getInt('compaction_daemon', 'check_interval', 300) * 1000);
        });
    }, delayMs);
    this.timer.unref();
  }

  private rules(): Map<string, CompactionRule> {
    const rules = new Map<string, CompactionRule>();
    for (const [name, text] of Object.entries(this.deps.config.section('compactions'))) {
      if (!this.parsed.has(text)) {
        const rule = parseCompactionRule(text);
        if ('invalid' in rule) this.deps.log.error(`Invalid compaction configuration for database \`${name}\`: \`${text}\` (${rule.invalid})`);
        this.parsed.set(text, 'invalid' in rule ? undefined : rule);
      }
      const rule = this.parsed.get(text);
      if (rule) rules.set(name, rule);
    }
    return rules;
  }

  /** One look at every database. */
  private async pass(): Promise<void> {
    for (const name of await this.deps.dbs.list()) {
      const rules = this.rules();
      if (rules.size === 0 || this.stopped) return;
      const rule = rules.get(name) ?? rules.get('_default');
      if (!rule || !inWindow(rule, new Date())) continue;
      let db: Database;
      try {
        db = await this.deps.dbs.get(name);
      } catch {
        continue; // deleted meanwhile
      }
      const release = db.retain();
      try {
        await this.compactDatabase(db, rule);
      } finally {
        release();
      }
    }
  }

  private async compactDatabase(db: Database, rule: CompactionRule): Promise<void> {
    const info = await db.info();
    const { percent, spaceRequired } = fragmentation(info.disk_size, info.data_size, this.minFileSize());
    const due = (rule.dbFragmentation === undefined || percent >= rule.dbFragmentation) && await this.roomFor(spaceRequired, this.deps.databaseDir, `database \`${db.name}\``);
    if (!due) return this.compactIndexes(db, rule);
    this.deps.log.info(`Compaction daemon: compacting database \`${db.name}\` (fragmentation ${percent}%)`);
    const views = rule.parallelViewCompaction ? this.compactIndexes(db, rule) : undefined;
    try {
      await compactDatabase(db, this.deps.tasks);
    } catch (err) {
      this.deps.log.error(`Compaction daemon - an error occurred while compacting the database \`${db.name}\`: ${String(err)}`);
      await views;
      return;
    }
    await (views ?? this.compactIndexes(db, rule));
  }

  private async compactIndexes(db: Database, rule: CompactionRule): Promise<void> {
    let indexes: IndexSizes[];
    try {
      indexes = await this.deps.indexes.indexes(db);
    } catch (err) {
      this.deps.log.error(`Compaction daemon: reading the indexes of \`${db.name}\`: ${String(err)}`);
      return;
    }
    for (const index of indexes) {
      if (this.stopped || !inWindow(rule, new Date())) return;
      if (index.updating) continue;
      const { percent, spaceRequired } = fragmentation(index.diskSize, index.dataSize, this.minFileSize());
      if (rule.viewFragmentation !== undefined && percent < rule.viewFragmentation) continue;
      if (!(await this.roomFor(spaceRequired, this.deps.viewIndexDir, `view group \`${index.ddocId}\` of \`${db.name}\``))) continue;
      this.deps.log.info(`Compaction daemon: compacting the index of \`${index.ddocId}\` in \`${db.name}\` (fragmentation ${percent}%)`);
      try {
        await this.deps.indexes.compact(db, index.ddocId);
      } catch (err) {
        this.deps.log.error(`Compaction daemon - an error occurred while compacting the view group \`${index.ddocId}\` from database \`${db.name}\`: ${String(err)}`);
      }
    }
  }

  private minFileSize(): number {
    return this.deps.config.getInt('compaction_daemon', 'min_file_size', 131072);
  }

  private async roomFor(bytes: number, dir: string, what: string): Promise<boolean> {
    const free = await statfs(dir).then((s) => s.bavail * s.bsize, () => Infinity);
    if (free >= bytes) return true;
    this.deps.log.info(`Compaction daemon - skipping ${what} compaction: the estimated necessary disk space is about ${bytes} bytes but the currently available disk space is ${free} bytes.`);
    return false;
  }
}
