/**
 * Partial reductions of one view, stored beside its rows so that reducing any key range reads
 * O(log N) records instead of every row (CouchDB keeps them in its B-tree's inner nodes; in an
 * ordered key-value store a skip list of segment aggregates does the same job).
 *
 * Every row is given a level from a hash of its row key: level ≥ l with probability 16^-l.
 * A row of level ≥ l is a "boundary" at level l, and starts a segment there that runs to the
 * next boundary of that level. Each segment is stored as one record `<0x30+l> <view> <suffix>`
 * (suffix = the row key after `k <view>`, so records sort exactly as their first rows) holding
 * the segment's row count and reduction. A level-l segment is the union of the level-(l-1)
 * segments that start inside it, so its reduction is the rereduce of theirs (level 1: the
 * reduce of its rows). The view's start is a boundary at every level (the "head", suffix
 * empty), so every row is in one segment per level and the levels form a tree.
 *
 * Reducing a range walks up from its first row (rows, then ever longer segments) and back down
 * before its end: at most ~16 reads per level either way. Levels are a function of the row key
 * alone, so the structure is the same however the rows arrived, and an update only recomputes
 * the segments that contain changed rows.
 */
import type { Entry, KeyValueStore, RangeOptions, ReadView, WriteOp } from '../storage/types.js';
import type { Reducer, RowsToReduce } from './reducer.js';
import { decodeRow } from './view-index.js';
import { ROW, viewEnd, viewPrefix } from './view-keys.js';

export const MAX_LEVEL = 6;
const LEVEL_BASE = 0x30;
const COUNT_BYTES = 6;
/** The suffix of every level's first segment: the view's start. */
const HEAD = Buffer.alloc(0);
/** Segments computed per batch (one sandbox round trip for JavaScript reduces). */
const SEGMENT_BATCH = 256;

/**
 * The level of a row key suffix (the bytes of `key` from `offset`): trailing zero nibbles of
 * its hash, at most MAX_LEVEL.
 */
export function levelOf(key: Uint8Array, offset = 0): number {
  let h = 0x811c9dc5;
  for (let i = offset; i < key.length; i++) {
    h ^= key[i]!;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  let level = 0;
  while (level < MAX_LEVEL && (h & 0xf) === 0) {
    level++;
    h >>>= 4;
  }
  return level;
}

/** What a range reduces to: rows not covered by a stored segment, and the segments' results. */
export interface Aggregate {
  count: number;
  rows: RowsToReduce;
  partials: unknown[];
}

/** A changed row of this view: its key suffix and whether it exists after the change. */
export interface ChangedRow {
  suffix: Buffer;
  present: boolean;
}

interface Segment {
  suffix: Buffer;
  count: number;
  rows: RowsToReduce;
  partials: unknown[];
}

/**
 * A stored row's value alone. Rows are `{"id":…,"key":…,"value":…}` with the value last, so the
 * bytes after the last `"value":` are it (only they are decoded), unless the value itself holds
 * a `"value"` member: then that text has unbalanced brackets, does not parse, and the whole row
 * is decoded instead.
 */
export function rowValue(bytes: Uint8Array): unknown {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const number = numberValue(buf);
  if (number !== undefined) return number;
  const at = buf.lastIndexOf(VALUE_MEMBER);
  if (at > 0) {
    try {
      return JSON.parse(buf.toString('utf8', at + VALUE_MEMBER.length, buf.length - 1)) ?? null;
    } catch {
      // a nested "value" member: decode the row
    }
  }
  return decodeRow(bytes).value ?? null;
}

const VALUE_MEMBER = Buffer.from('"value":');

/**
 * The value of a row whose value is a plain number (what _sum and _stats mostly read), read
 * from the row's last bytes: `"value":<number>}`. A number nested in a value would be followed
 * by a bracket, so only the row's own value matches. Undefined for any other value.
 */
function numberValue(buf: Buffer): number | undefined {
  const end = buf.length - 1;
  let at = end - 1;
  while (at > 0 && NUMBER_BYTE[buf[at]!] === 1) at--;
  if (at === end - 1 || at < VALUE_MEMBER.length || buf[at] !== 0x3a) return undefined;
  for (let i = 0; i < VALUE_MEMBER.length - 1; i++) {
    if (buf[at - VALUE_MEMBER.length + 1 + i] !== VALUE_MEMBER[i]) return undefined;
  }
  const n = Number(buf.toString('latin1', at + 1, end));
  return Number.isNaN(n) ? undefined : n;
}

/** Bytes of a JSON number's text. */
const NUMBER_BYTE = new Uint8Array(256);
for (const c of '0123456789+-.eE') NUMBER_BYTE[c.charCodeAt(0)] = 1;

/** Adds a stored row to rows to reduce, decoding only what is read. */
function addRow(rows: RowsToReduce, value: Uint8Array, reads: Reducer['reads']): void {
  if (reads === 'count') {
    rows.values.push(null);
    return;
  }
  if (reads === 'values') {
    rows.values.push(rowValue(value));
    return;
  }
  const row = decodeRow(value);
  rows.values.push(row.value ?? null);
  rows.keys.push([row.key, row.id]);
}

export class ViewReductions {
  private reducer: Reducer | undefined;

  /** Where a row's or a record's suffix starts in its key (after `<kind> <view>`, view-keys.ts). */
  private readonly suffixAt: number;

  /**
   * `storesValues` false: the view has no reduce (or one whose partials cannot be stored);
   * segments then hold counts only, which still serve `offset`.
   */
  constructor(private readonly store: KeyValueStore, private readonly view: number, readonly storesValues: boolean) {
    this.suffixAt = viewPrefix(ROW, view).length;
  }

  private rowKey(suffix: Uint8Array): Buffer {
    return Buffer.concat([viewPrefix(ROW, this.view), suffix]);
  }

  private recordKey(level: number, suffix: Uint8Array): Buffer {
    return Buffer.concat([viewPrefix(LEVEL_BASE + level, this.view), suffix]);
  }

  private levelStart(level: number): Buffer {
    return viewPrefix(level === 0 ? ROW : LEVEL_BASE + level, this.view);
  }

  private levelEnd(level: number): Buffer {
    return viewEnd(level === 0 ? ROW : LEVEL_BASE + level, this.view);
  }

  /** Rewrites every segment of this view from its rows. */
  async rebuild(reducer: Reducer | undefined): Promise<void> {
    this.reducer = this.storesValues ? reducer : undefined;
    for (let level = 1; level <= MAX_LEVEL; level++) {
      const ops: WriteOp[] = [];
      for await (const entries of this.store.rangeChunks({ gte: this.levelStart(level), lt: this.levelEnd(level) }, 1024)) {
        for (const { key } of entries) ops.push({ type: 'del', key: Buffer.from(key) });
      }
      let pending: Segment[] = [];
      let current: Segment = { suffix: HEAD, count: 0, rows: { keys: [], values: [] }, partials: [] };
      const snapshot = await this.store.snapshot();
      try {
        for await (const entries of snapshot.rangeChunks({ gte: this.levelStart(level - 1), lt: this.levelEnd(level - 1) }, 1024)) {
          for (const entry of entries) {
            // The head of the level below belongs to this level's head.
            if (entry.key.length > this.suffixAt && levelOf(entry.key, this.suffixAt) >= level) {
              pending.push(current);
              current = { suffix: Buffer.from(entry.key.subarray(this.suffixAt)), count: 0, rows: { keys: [], values: [] }, partials: [] };
              if (pending.length >= SEGMENT_BATCH) {
                ops.push(...await this.records(level, pending));
                pending = [];
                if (ops.length >= 4096) await this.store.write(ops.splice(0), { durable: false });
              }
            }
            this.addChild(level, current, entry.value);
          }
        }
      } finally {
        snapshot.release();
      }
      pending.push(current);
      ops.push(...await this.records(level, pending));
      await this.store.write(ops, { durable: false });
    }
  }

  /** Recomputes the segments that contain changed rows; `changed` is the final state of each row. */
  async update(changed: readonly ChangedRow[], reducer: Reducer | undefined): Promise<void> {
    if (changed.length === 0) return;
    this.reducer = this.storesValues ? reducer : undefined;
    const rows = [...changed].sort((x, y) => Buffer.compare(x.suffix, y.suffix)).map((c) => ({ ...c, level: levelOf(c.suffix) }));
    for (let level = 1; level <= MAX_LEVEL; level++) {
      const deleted = new Set<string>();
      const added: Buffer[] = [];
      for (const c of rows) {
        if (c.level < level) continue;
        if (c.present) added.push(c.suffix);
        else deleted.add(c.suffix.toString('latin1'));
      }
      const boundaries = new BoundaryFinder(this.store, this.recordKey(level, Buffer.alloc(0)), this.levelEnd(level), deleted, added);
      // Segments (after the change) holding changed rows. Rows are sorted, so consecutive rows in
      // one segment need no lookup.
      const dirty = new Map<string, { start: Buffer; end: Buffer | undefined }>();
      let last: { start: Buffer | undefined; end: Buffer | undefined } | undefined;
      for (const c of rows) {
        const inLast = last && (last.start === undefined || Buffer.compare(last.start, c.suffix) <= 0)
          && (last.end === undefined || Buffer.compare(c.suffix, last.end) < 0);
        if (!inLast) last = { start: await boundaries.previous(c.suffix, true), end: await boundaries.next(c.suffix) };
        dirty.set(last!.start!.toString('latin1'), { start: last!.start!, end: last!.end });
        if (c.present && c.level >= level) {
          // A new boundary shortens the segment before it.
          const before = await boundaries.previous(c.suffix, false);
          if (before) dirty.set(before.toString('latin1'), { start: before, end: c.suffix });
        }
      }
      const ops: WriteOp[] = [...deleted].map((s) => ({ type: 'del', key: this.recordKey(level, Buffer.from(s, 'latin1')) }));
      const segments = [...dirty.values()];
      for (let at = 0; at < segments.length; at += SEGMENT_BATCH) {
        const batch: Segment[] = [];
        for (const { start, end } of segments.slice(at, at + SEGMENT_BATCH)) {
          const segment: Segment = { suffix: start, count: 0, rows: { keys: [], values: [] }, partials: [] };
          const range = { gte: Buffer.concat([this.levelStart(level - 1), start]), lt: end ? Buffer.concat([this.levelStart(level - 1), end]) : this.levelEnd(level - 1) };
          for await (const entries of this.store.rangeChunks(range, 64)) {
            for (const entry of entries) this.addChild(level, segment, entry.value);
          }
          batch.push(segment);
        }
        ops.push(...await this.records(level, batch));
      }
      await this.store.write(ops, { durable: false });
    }
  }

  private addChild(level: number, segment: Segment, value: Uint8Array): void {
    if (level === 1) {
      segment.count++;
      if (this.reducer) addRow(segment.rows, value, this.reducer.reads);
    } else {
      const [count, partial] = decodeRecord(value, this.reducer !== undefined);
      segment.count += count;
      if (this.reducer && count > 0) segment.partials.push(partial);
    }
  }

  private async records(level: number, segments: readonly Segment[]): Promise<WriteOp[]> {
    if (segments.length === 0) return [];
    const values = new Map<Segment, unknown>();
    if (this.reducer) {
      // An empty segment (a head) has no value: reduces never see empty input.
      const full = segments.filter((s) => s.count > 0);
      if (level === 1) {
        const results = await this.reducer.reduce(full.map((s) => s.rows));
        full.forEach((s, i) => values.set(s, results[i]));
      } else {
        // A lone partial is kept as it is, as CouchDB's B-tree keeps a lone reduction: a
        // JavaScript reduce then answers what reduce gave, not its rereduce.
        const several = full.filter((s) => s.partials.length > 1);
        const results = await this.reducer.rereduce(several.map((s) => s.partials));
        several.forEach((s, i) => values.set(s, results[i]));
        for (const s of full) if (s.partials.length === 1) values.set(s, s.partials[0]);
      }
    }
    return segments.map((s) => ({ type: 'put', key: this.recordKey(level, s.suffix), value: encodeRecord(s.count, values.has(s) ? values.get(s) : undefined) }));
  }

  /**
   * The reductions as `read` (a snapshot) holds them; `generation` names that state of the
   * records (it changes whenever they do), so the upper levels can be kept in memory.
   */
  at(read: ReadView, generation: number, total: number): ReductionsAt {
    return {
      total,
      aggregate: (lo, hi, withValues, reads) => this.aggregate(read, generation, lo, hi, withValues, reads),
      rank: (suffix) => this.rank(read, generation, suffix),
      anchor: async (suffix) => {
        const found = await this.anchor(read, generation, suffix);
        return found && { rowKey: this.rowKey(found.start), before: found.before };
      },
    };
  }

  private upper: { generation: number; levels: Entry[][]; ranks: OuterRanks } | undefined;

  /**
   * Records of the levels from CACHED_LEVEL up, read once per generation: they are few
   * (1/256 of the rows and less) and every walk passes through them.
   */
  private async upperLevels(read: ReadView, generation: number): Promise<{ levels: Entry[][]; ranks: OuterRanks }> {
    if (this.upper?.generation === generation) return this.upper;
    const levels: Entry[][] = [];
    for (let level = CACHED_LEVEL; level <= MAX_LEVEL; level++) {
      const entries: Entry[] = [];
      for await (const chunk of read.rangeChunks({ gte: this.levelStart(level), lt: this.levelEnd(level) }, 1024)) {
        for (const e of chunk) entries.push({ key: Buffer.from(e.key), value: Buffer.from(e.value) });
      }
      levels[level] = entries;
    }
    const ranks: OuterRanks = { starts: [], before: [], inner: new Map() };
    let rows = 0;
    for (const { key, value } of levels[CACHED_LEVEL]!) {
      ranks.starts.push(Buffer.from(key.subarray(this.suffixAt)));
      ranks.before.push(rows);
      rows += recordCount(value);
    }
    const cached = { generation, levels, ranks };
    if (!this.upper || this.upper.generation < generation) this.upper = cached;
    return cached;
  }

  /**
   * How many rows have key suffixes below `suffix` (a query's `offset`): the anchor's count plus
   * the rows between the anchor and `suffix`.
   */
  private async rank(read: ReadView, generation: number, suffix: Buffer): Promise<number | undefined> {
    if (suffix.length === 0) return 0;
    const anchor = await this.anchor(read, generation, suffix);
    if (!anchor) return undefined;
    return anchor.before + await read.count({ gte: this.rowKey(anchor.start), lt: this.rowKey(suffix) });
  }

  /**
   * The start of the level-1 segment holding `suffix` and the rows before it: a binary search
   * among the cached level's segments, then another among the level-1 segments inside the one
   * found (read once per generation).
   */
  private async anchor(read: ReadView, generation: number, suffix: Buffer): Promise<Anchor | undefined> {
    const { ranks } = await this.upperLevels(read, generation);
    const outer = lastAtOrBelow(ranks.starts, suffix);
    if (outer < 0) return undefined;
    let inner = ranks.inner.get(outer);
    if (!inner) {
      inner = await this.innerRanks(read, ranks.starts[outer]!, ranks.starts[outer + 1]);
      if (!inner) return undefined;
      ranks.inner.set(outer, inner);
    }
    const at = lastAtOrBelow(inner.starts, suffix);
    if (at < 0) return undefined;
    return { start: inner.starts[at]!, before: ranks.before[outer]! + inner.before[at]! };
  }

  /** The level-1 segments in [start, end) (a segment of the cached level), with the rows before each. */
  private async innerRanks(read: ReadView, start: Buffer, end: Buffer | undefined): Promise<RankTable | undefined> {
    const table: RankTable = { starts: [], before: [] };
    let rows = 0;
    const range = { gte: this.recordKey(1, start), lt: end ? this.recordKey(1, end) : this.levelEnd(1) };
    for await (const chunk of read.rangeChunks(range, 64)) {
      for (const { key, value } of chunk) {
        table.starts.push(Buffer.from(key.subarray(this.suffixAt)));
        table.before.push(rows);
        rows += recordCount(value);
      }
    }
    return table.starts.length > 0 && Buffer.compare(table.starts[0]!, start) === 0 ? table : undefined;
  }

  private async levelCursor(read: ReadView, generation: number, level: number, from: Buffer, chunk: number): Promise<EntryCursor> {
    if (level < CACHED_LEVEL) return new ChunkCursor(read, this.recordKey(level, from), this.levelEnd(level), chunk);
    const entries = (await this.upperLevels(read, generation)).levels[level]!;
    const key = this.recordKey(level, from);
    let i = partitionPoint(entries.length, (at) => Buffer.compare(entries[at]!.key, key) < 0);
    return { next: async () => entries[i++] };
  }

  private async aggregate(read: ReadView, generation: number, lo: Buffer, hi: Buffer | undefined, withValues: boolean, reads: Reducer['reads'] = 'rows'): Promise<Aggregate | undefined> {
    const out: Aggregate = { count: 0, rows: { keys: [], values: [] }, partials: [] };
    const values = withValues && this.storesValues;
    const fits = (end: Buffer | undefined): boolean => hi === undefined || (end !== undefined && Buffer.compare(end, hi) <= 0);
    const takeRow = (value: Uint8Array) => {
      out.count++;
      if (values) addRow(out.rows, value, reads);
    };
    const take = (value: Uint8Array) => {
      const [count, partial] = decodeRecord(value, values);
      out.count += count;
      if (values && count > 0) out.partials.push(partial);
    };
    const rowsFrom = (from: Buffer, chunk: number) => new ChunkCursor(read, this.rowKey(from), hi ? this.rowKey(hi) : this.levelEnd(0), chunk);

    // Up: single rows until the first boundary, then ever higher segments while they fit. From
    // the view's start, the head of the highest level is the first segment.
    let at: Buffer | undefined = lo.length === 0 ? HEAD : undefined;
    if (!at) {
      const first = rowsFrom(lo, LEVEL_CHUNK);
      for (let entry = await first.next(); entry; entry = await first.next()) {
        if (levelOf(entry.key, this.suffixAt) >= 1) {
          at = Buffer.from(entry.key.subarray(this.suffixAt));
          break;
        }
        takeRow(entry.value);
      }
    }
    if (!at) return out;
    let pos: Buffer = at;
    let level = pos.length === 0 ? MAX_LEVEL : 1;
    let descending = false;
    for (;;) {
      if (!descending && pos.length > 0) while (level < MAX_LEVEL && levelOf(pos) > level) level++;
      const records = await this.levelCursor(read, generation, level, pos, LEVEL_CHUNK);
      let current = await records.next();
      if (!current || Buffer.compare(current.key.subarray(this.suffixAt), pos) !== 0) return undefined;
      let climbed = false;
      for (;;) {
        const next = await records.next();
        const end: Buffer | undefined = next ? Buffer.from(next.key.subarray(this.suffixAt)) : undefined;
        if (!fits(end)) break;
        take(current.value);
        if (!end || !next) return out;
        pos = end;
        current = next;
        if (!descending && level < MAX_LEVEL && levelOf(pos) > level) {
          climbed = true;
          break;
        }
      }
      if (climbed) continue;
      // The segment at `pos` runs past the end: go down inside it.
      descending = true;
      level--;
      if (level === 0) {
        const last = rowsFrom(pos, 64);
        for (let entry = await last.next(); entry; entry = await last.next()) takeRow(entry.value);
        return out;
      }
    }
  }
}

/** Records read per step while walking a level (a segment has ~16 children). */
const LEVEL_CHUNK = 16;

/** Levels from this one up are kept in memory per generation of the records. */
const CACHED_LEVEL = 2;

interface EntryCursor {
  next(): Promise<Entry | undefined>;
}

/** A view's partial reductions as one snapshot holds them. */
export interface ReductionsAt {
  /** Rows in the view. */
  readonly total: number;
  /** How many rows have key suffixes below `suffix`; undefined if the records disagree with the rows. */
  rank(suffix: Buffer): Promise<number | undefined>;
  /**
   * A row key at or below the row of `suffix`, at most a level-1 segment before it, and the rows
   * below that key: rank(suffix) is `before` plus the rows from `rowKey` up to `suffix`.
   * Undefined if the records disagree with the rows.
   */
  anchor(suffix: Buffer): Promise<{ rowKey: Buffer; before: number } | undefined>;
  /**
   * What the rows with key suffixes in [lo, hi) reduce to (hi undefined: to the view's end).
   * Undefined if the stored segments disagree with the rows (never expected).
   */
  aggregate(lo: Buffer, hi: Buffer | undefined, withValues: boolean, reads?: Reducer['reads']): Promise<Aggregate | undefined>;
}

/** A row-key suffix at or below a wanted one, no more than a level-1 segment away, and the rows below it. */
interface Anchor {
  start: Buffer;
  before: number;
}

/** Segment starts of one level (row-key suffixes, ascending) and the rows before each. */
interface RankTable {
  starts: Buffer[];
  before: number[];
}

/** The cached level's segments, and the level-1 segments inside those queries have reached (by index). */
interface OuterRanks extends RankTable {
  inner: Map<number, RankTable>;
}

/**
 * Binary search over `count` ascending items: the first index whose item is not `before` the
 * sought place (`count` if every item is).
 */
function partitionPoint(count: number, before: (index: number) => boolean): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The index of the last of `sorted` at or below `key`, or -1. */
function lastAtOrBelow(sorted: readonly Buffer[], key: Buffer): number {
  return partitionPoint(sorted.length, (at) => Buffer.compare(sorted[at]!, key) <= 0) - 1;
}

/** Forward over a key range in small chunks: no more read than the walk needs, one await per chunk. */
class ChunkCursor implements EntryCursor {
  private buffer: Entry[] = [];
  private index = 0;
  private exhausted = false;
  private lastKey: Uint8Array | undefined;

  constructor(private readonly read: ReadView, private readonly gte: Buffer, private readonly lt: Buffer, private readonly chunk: number) {}

  async next(): Promise<Entry | undefined> {
    if (this.index < this.buffer.length) return this.buffer[this.index++];
    if (this.exhausted) return undefined;
    const range = this.lastKey ? { gt: this.lastKey, lt: this.lt, limit: this.chunk } : { gte: this.gte, lt: this.lt, limit: this.chunk };
    this.buffer = [];
    for await (const entries of this.read.rangeChunks(range, this.chunk)) this.buffer = entries;
    this.index = 0;
    if (this.buffer.length < this.chunk) this.exhausted = true;
    if (this.buffer.length === 0) return undefined;
    this.lastKey = this.buffer[this.buffer.length - 1]!.key;
    return this.buffer[this.index++];
  }
}

/** Finds the boundaries of one level as they are after an update: stored ones minus deleted plus added. */
class BoundaryFinder {
  constructor(
    private readonly store: ReadView,
    private readonly start: Buffer,
    private readonly end: Buffer,
    private readonly deleted: ReadonlySet<string>,
    private readonly added: readonly Buffer[],
  ) {}

  /** The greatest boundary ≤ suffix (or < suffix when not `inclusive`). */
  async previous(suffix: Buffer, inclusive: boolean): Promise<Buffer | undefined> {
    const bound = Buffer.concat([this.start, suffix]);
    const stored = await this.firstStored(inclusive ? { gte: this.start, lte: bound, reverse: true } : { gte: this.start, lt: bound, reverse: true });
    // Added boundaries up to `suffix` are those before this index.
    const upTo = this.countAddedBelow(suffix, inclusive);
    const fresh = upTo > 0 ? this.added[upTo - 1] : undefined;
    return stored && (!fresh || Buffer.compare(stored, fresh) >= 0) ? stored : fresh;
  }

  /** The smallest boundary > suffix. */
  async next(suffix: Buffer): Promise<Buffer | undefined> {
    const stored = await this.firstStored({ gt: Buffer.concat([this.start, suffix]), lt: this.end });
    const fresh = this.added[this.countAddedBelow(suffix, true)];
    return stored && (!fresh || Buffer.compare(stored, fresh) <= 0) ? stored : fresh;
  }

  /** The first stored boundary of a range that the update does not delete. */
  private async firstStored(range: RangeOptions): Promise<Buffer | undefined> {
    for await (const { key } of this.store.range(range)) {
      const s = Buffer.from(key.subarray(this.start.length));
      if (!this.deleted.has(s.toString('latin1'))) return s;
    }
    return undefined;
  }

  /** How many added boundaries are < suffix (or ≤ suffix when `inclusive`). */
  private countAddedBelow(suffix: Buffer, inclusive: boolean): number {
    let lo = 0;
    let hi = this.added.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = Buffer.compare(this.added[mid]!, suffix);
      if (c < 0 || (inclusive && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function encodeRecord(count: number, value: unknown): Buffer {
  const json = value === undefined ? '' : JSON.stringify(value ?? null);
  const out = Buffer.allocUnsafe(COUNT_BYTES + Buffer.byteLength(json));
  out.writeUIntBE(count, 0, COUNT_BYTES);
  out.write(json, COUNT_BYTES, 'utf8');
  return out;
}

/** A record's row count alone (COUNT_BYTES big-endian). */
function recordCount(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < COUNT_BYTES; i++) count = count * 256 + bytes[i]!;
  return count;
}

function decodeRecord(bytes: Uint8Array, withValue: boolean): [number, unknown] {
  const count = recordCount(bytes);
  if (!withValue || bytes.length === COUNT_BYTES) return [count, undefined];
  return [count, JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', COUNT_BYTES))];
}
