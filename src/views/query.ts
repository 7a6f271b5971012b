/**
 * Queries over a view index: map rows by key range (startkey/endkey with *_docid refinement,
 * inclusive_end, descending, skip, limit, keys) and reductions, grouped or not.
 *
 * Row keys are `k <view> <sortKey> <docid> 0x00 <n>` (n in 2 or 6 bytes); sort keys are prefix-free
 * and UTF-8 never contains 0xFF, so "every row of key K" is the byte range [K, K 0xFF), and "every
 * row of key K and id D" is [K D, K D 0x00 0xFF×6].
 */
import { CouchError } from '../errors.js';
import type { Entry, RangeOptions, ReadView } from '../storage/types.js';
import { skipAndLimit } from '../storage/slice.js';
import { decodeRow, rowText, SORT_KEY_MAX, type CommittedIndex, type ViewIndex } from './view-index.js';
import { collate, collateRaw, sortKey } from './collation.js';
import type { Reducer, RowsToReduce } from './reducer.js';
import type { Aggregate, ReductionsAt } from './reductions.js';
import { ROW, viewEnd, viewPrefix } from './view-keys.js';

export interface RangeQuery {
  startKey?: { key: unknown };
  endKey?: { key: unknown };
  startDocId?: string;
  endDocId?: string;
  inclusiveEnd: boolean;
  descending: boolean;
}

const FF = Buffer.of(0xff);
const ZERO = Buffer.of(0x00);
const ROW_END = Buffer.of(0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);

/** The store range of a query's rows. */
export async function rowRange(index: ViewIndex, view: number, q: RangeQuery): Promise<RangeOptions> {
  const prefix = viewPrefix(ROW, view);
  const next = viewEnd(ROW, view);
  const start = q.startKey ? await index.keyBounds(view, q.startKey.key) : undefined;
  const end = q.endKey ? await index.keyBounds(view, q.endKey.key) : undefined;
  // Bounds refined by document id exist only where the key has rows.
  const withId = (b: { rows: Buffer | undefined }, docId: string | undefined, after: boolean): Buffer | undefined =>
    docId === undefined || !b.rows ? undefined : Buffer.concat([b.rows, Buffer.from(docId, 'utf8'), ...(after ? [ROW_END] : [])]);
  const range: RangeOptions = { reverse: q.descending };
  if (!q.descending) {
    range.gte = start ? withId(start, q.startDocId, false) ?? start.start : prefix;
    if (!end) range.lt = next;
    else if (q.inclusiveEnd) range.lte = withId(end, q.endDocId, true) ?? end.end;
    else range.lt = withId(end, q.endDocId, false) ?? end.start;
  } else {
    if (!start) range.lt = next;
    else range.lte = withId(start, q.startDocId, true) ?? start.end;
    if (!end) range.gte = prefix;
    else if (q.inclusiveEnd) range.gte = withId(end, q.endDocId, false) ?? end.start;
    else range.gt = withId(end, q.endDocId, true) ?? end.end;
  }
  return range;
}

/**
 * The store range of rows whose keys are arrays, from the first that begins with `low` through
 * the last that begins with `high` (both compared as prefixes; `high` undefined: to the view's
 * end): the key ranges of Mango's index scans. An array's sort key is its elements' followed by
 * an end byte below every element's tag, so the arrays beginning with P are the byte range from
 * P's sort key without its end byte through that followed by 0xFF. Sort keys cut at SORT_KEY_MAX,
 * as the index stores them, can only widen the range.
 */
export function arrayPrefixRange(index: ViewIndex, view: number, low: readonly unknown[], high: readonly unknown[] | undefined, descending: boolean): RangeOptions {
  const prefix = viewPrefix(ROW, view);
  const open = (key: readonly unknown[]): Buffer => {
    const sk = sortKey(key, index.isRaw(view));
    return sk.subarray(0, Math.min(sk.length - 1, SORT_KEY_MAX));
  };
  const gte = Buffer.concat([prefix, open(low)]);
  const end = high === undefined ? { lt: viewEnd(ROW, view) } : { lte: Buffer.concat([prefix, open(high), FF]) };
  return { gte, ...end, reverse: descending };
}

/** Rows before the range's first row in the direction of the query (the `offset`). */
export async function rowsBefore(index: ViewIndex, view: number, range: RangeOptions): Promise<number> {
  const snapshot = await index.store.snapshot();
  try {
    return await rowsBeforeIn(index, view, snapshot, range, await index.reductionsIn(snapshot, view));
  } finally {
    snapshot.release();
  }
}

/** rowsBefore within a snapshot, given the view's partial reductions in it (if valid). */
async function rowsBeforeIn(index: ViewIndex, view: number, snapshot: ReadView, range: RangeOptions, tree: ReductionsAt | undefined): Promise<number> {
  if (tree) {
    const { lo, hi } = windowOf(view, range);
    const before = range.reverse ? (hi === undefined ? 0 : await tree.rank(hi)) : await tree.rank(lo);
    if (before !== undefined) return range.reverse && hi !== undefined ? tree.total - before : before;
  }
  return await countBefore(index, view, snapshot, range);
}

/** Rows read at once by `smallMapQuery`: answers up to this size are read whole. */
const SMALL_ROWS = 256;

/**
 * A map query read whole from one snapshot, when it is small (at most SMALL_ROWS rows after a
 * small `skip`): its offset and rows as stored, with the index's committed state in that same
 * snapshot. Undefined when it is larger (stream it instead).
 */
export async function smallMapQuery(
  index: ViewIndex, view: number, range: RangeOptions, skip: number, limit: number,
): Promise<{ offset: number; rows: string[]; committed: CommittedIndex } | undefined> {
  if (skip > SMALL_ROWS) return undefined;
  const wanted = Math.min(limit, SMALL_ROWS);
  const snapshot = await index.store.snapshot();
  try {
    // The offset comes from the partial reductions: an anchor at most a level-1 segment before
    // the range, whose rows up to the range are counted by the same scan that reads the range.
    const tree = await index.reductionsIn(snapshot, view);
    // (Only where the range does not end before it starts: the scan must reach `start`.)
    const end = range.lt ?? range.lte;
    const start = range.reverse || (end && range.gte && Buffer.compare(end, range.gte) < 0) ? undefined : range.gte;
    const anchor = start && tree ? await tree.anchor(windowOf(view, range).lo) : undefined;
    let offset = anchor ? anchor.before : await rowsBeforeIn(index, view, snapshot, range, tree);
    const scan = anchor && Buffer.compare(anchor.rowKey, start!) < 0 ? { ...range, gte: anchor.rowKey } : range;
    let toSkip = skip;
    const rows: string[] = [];
    let more = false;
    scanning: for await (const chunk of snapshot.rangeChunks(scan, 64)) {
      for (const { key, value } of chunk) {
        if (scan !== range && Buffer.compare(key, start!) < 0) {
          offset++;
        } else if (toSkip > 0) {
          toSkip--;
          offset++;
        } else if (rows.length < wanted) {
          rows.push(rowText(value));
        } else {
          more = true;
          break scanning;
        }
      }
    }
    // More rows than a small answer holds, and no limit ending it there: stream it instead.
    if (more && limit > wanted) return undefined;
    return { offset, rows, committed: await index.committed(snapshot) };
  } finally {
    snapshot.release();
  }
}

/** Rows inside a range. */
export async function rowsWithin(index: ViewIndex, view: number, range: RangeOptions): Promise<number> {
  const snapshot = await index.store.snapshot();
  try {
    const tree = await index.reductionsIn(snapshot, view);
    if (tree) {
      const { lo, hi } = windowOf(view, range);
      const start = await tree.rank(lo);
      const end = hi === undefined ? tree.total : await tree.rank(hi);
      if (start !== undefined && end !== undefined) return Math.max(0, end - start);
    }
    const before = await countBefore(index, view, snapshot, { ...range, reverse: false });
    const after = await countBefore(index, view, snapshot, { ...range, reverse: true });
    return Math.max(0, ((await index.committed(snapshot)).counts[view] ?? 0) - before - after);
  } finally {
    snapshot.release();
  }
}

/** rowsBefore by counting keys in the store (no partial reductions to use). */
async function countBefore(index: ViewIndex, view: number, snapshot: ReadView, range: RangeOptions): Promise<number> {
  const prefix = viewPrefix(ROW, view);
  const next = viewEnd(ROW, view);
  if (!range.reverse) {
    const start = range.gte ?? range.gt;
    if (!start || Buffer.compare(start, prefix) <= 0) return 0;
    return await snapshot.count(range.gt ? { gte: prefix, lte: range.gt } : { gte: prefix, lt: start });
  }
  if (range.lt && Buffer.compare(range.lt, next) >= 0) return 0;
  return await snapshot.count(range.lte ? { gt: range.lte, lt: next } : { gte: range.lt!, lt: next });
}

/**
 * A store range of view rows as row-key suffixes (after `k <view>`): [lo, hi), hi undefined
 * meaning the view's end.
 */
function windowOf(view: number, range: RangeOptions): { lo: Buffer; hi: Buffer | undefined } {
  const prefix = viewPrefix(ROW, view);
  const next = viewEnd(ROW, view);
  const suffix = (bound: Uint8Array): Buffer | undefined => {
    if (Buffer.compare(bound, prefix) <= 0) return Buffer.alloc(0);
    if (Buffer.compare(bound, next) >= 0) return undefined;
    return Buffer.from(bound.subarray(prefix.length));
  };
  const lo = range.gte ? suffix(range.gte) : range.gt ? suffix(Buffer.concat([range.gt, ZERO])) : Buffer.alloc(0);
  const hi = range.lt ? suffix(range.lt) : range.lte ? suffix(Buffer.concat([range.lte, ZERO])) : undefined;
  // A lower bound past the view's end leaves nothing: an empty window at the end.
  return lo === undefined ? { lo: Buffer.of(0xff), hi: Buffer.of(0xff) } : { lo, hi };
}

/** Map rows of a range as stored (their JSON text), in chunks, after `skip`, at most `limit`. */
export async function* mapRows(index: ViewIndex, range: RangeOptions, skip: number, limit: number): AsyncIterable<string[]> {
  const snapshot = await index.store.snapshot();
  try {
    for await (const entries of skipAndLimit(snapshot.rangeChunks(range, 256), skip, limit)) {
      yield entries.map((e: Entry) => rowText(e.value));
    }
  } finally {
    snapshot.release();
  }
}

/**
 * Reduces a range, grouped by whole key (`groupLevel` Infinity), by array prefix (`groupLevel` n)
 * or not at all (`groupLevel` 0: one row, key null). Yields [key, value] per group in the range's
 * order. With the view's partial reductions each group costs O(log N) reads, not one per row.
 */
export async function* reduceRows(
  index: ViewIndex, view: number, range: RangeOptions, groupLevel: number, reducer: Reducer, skip: number, limit: number,
): AsyncIterable<[unknown, unknown]> {
  if (limit <= 0) return;
  const snapshot = await index.store.snapshot();
  try {
    const tree = reducer.combinable ? await index.reductionsIn(snapshot, view) : undefined;
    if (!tree) {
      yield* scanReduce(index, view, snapshot, range, groupLevel, reducer, skip, limit);
      return;
    }
    let { lo, hi } = windowOf(view, range);
    if (groupLevel === 0) {
      const whole = await tree.aggregate(lo, hi, true, reducer.reads);
      if (!whole) {
        yield* scanReduce(index, view, snapshot, range, groupLevel, reducer, skip, limit);
        return;
      }
      if (whole.count > 0 && skip === 0) yield [null, await finish(whole, reducer)];
      return;
    }
    const groupKey = (key: unknown): unknown => groupLevel !== Infinity && Array.isArray(key) ? key.slice(0, groupLevel) : key;
    const rowKeyOf = (suffix: Buffer) => Buffer.concat([viewPrefix(ROW, view), suffix]);
    const rowsEnd = viewEnd(ROW, view);
    let produced = 0;
    // Groups of few rows are reduced together, one batch per sandbox round trip.
    let pending: { key: unknown; rows?: RowsToReduce; whole?: Aggregate }[] = [];
    const flush = async function* (): AsyncIterable<[unknown, unknown]> {
      const small = pending.filter((g) => g.rows);
      const reduced = await reducer.reduce(small.map((g) => g.rows!));
      let n = 0;
      for (const g of pending) {
        yield [g.key, g.rows ? reduced[n++] : await finish(g.whole!, reducer)];
      }
      pending = [];
    };
    for (;;) {
      if (hi !== undefined && Buffer.compare(lo, hi) >= 0) break;
      // The next row in the query's direction starts the next group.
      const [edge] = await firstEntries(snapshot.rangeChunks({ gte: rowKeyOf(lo), lt: hi ? rowKeyOf(hi) : rowsEnd, reverse: range.reverse === true, limit: 1 }, 1));
      if (!edge) break;
      const row = decodeRow(edge.value);
      const key = groupKey(row.key);
      const prefix = groupPrefix(key, row.key, groupLevel, index.isRaw(view));
      // Keys beyond the sort-key limit share cut prefixes: their group spans the cut prefix.
      const start = prefix ?? Buffer.from(edge.key.subarray(2, 2 + SORT_KEY_MAX));
      const gLo = Buffer.compare(start, lo) > 0 ? start : lo;
      const startEnd = Buffer.concat([start, FF]);
      const gHi = hi !== undefined && Buffer.compare(hi, startEnd) < 0 ? hi : startEnd;
      if (!prefix) {
        // Long keys: grouped row by row by the comparator, within the cut prefix.
        const sub: RangeOptions = { gte: rowKeyOf(gLo), lt: rowKeyOf(gHi), reverse: range.reverse === true };
        yield* flush();
        for await (const group of scanReduce(index, view, snapshot, sub, groupLevel, reducer, 0, Infinity)) {
          if (skip > 0) { skip--; continue; }
          yield group;
          if (++produced >= limit) return;
        }
      } else if (skip > 0) {
        skip--;
      } else {
        const few = await firstEntries(snapshot.rangeChunks({ gte: rowKeyOf(gLo), lt: rowKeyOf(gHi), limit: SMALL_GROUP + 1 }, SMALL_GROUP + 1));
        if (few.length <= SMALL_GROUP) {
          const rows: RowsToReduce = { keys: [], values: [] };
          for (const entry of range.reverse ? few.reverse() : few) {
            const r = decodeRow(entry.value);
            rows.keys.push([r.key, r.id]);
            rows.values.push(r.value ?? null);
          }
          pending.push({ key, rows });
        } else {
          const whole = await tree.aggregate(gLo, gHi, true, reducer.reads);
          if (!whole) throw new CouchError(500, 'view_error', 'partial reductions disagree with the rows');
          pending.push({ key, whole });
        }
        produced++;
        if (pending.length >= GROUP_BATCH || produced >= limit) yield* flush();
        if (produced >= limit) return;
      }
      if (range.reverse) hi = gLo;
      else lo = gHi;
    }
    yield* flush();
  } finally {
    snapshot.release();
  }
}

/** Groups with at most this many rows are reduced from their rows directly. */
const SMALL_GROUP = 16;
/** Groups reduced per batch. */
const GROUP_BATCH = 64;

/** The first chunk of a chunked range (the range has a limit that fits one chunk). */
async function firstEntries(chunks: AsyncIterable<Entry[]>): Promise<Entry[]> {
  for await (const entries of chunks) return entries;
  return [];
}

/**
 * The sort-key prefix every row of a group starts with: a whole key's sort key, or for an array
 * prefix (group_level) the array's sort key without its end marker. Undefined when that would
 * exceed the stored sort-key length.
 */
function groupPrefix(group: unknown, key: unknown, groupLevel: number, raw: boolean): Buffer | undefined {
  const truncated = groupLevel !== Infinity && Array.isArray(key) && Array.isArray(group) && key.length >= groupLevel;
  const sk = sortKey(group, raw);
  const prefix = truncated ? sk.subarray(0, sk.length - 1) : sk;
  return prefix.length < SORT_KEY_MAX ? prefix : undefined;
}

/** The value of an aggregate: its loose rows reduced, then everything rereduced. */
async function finish(whole: Aggregate, reducer: Reducer): Promise<unknown> {
  const pieces = [...whole.partials];
  if (whole.rows.values.length > 0) pieces.unshift((await reducer.reduce([whole.rows]))[0]);
  if (pieces.length === 1) return pieces[0];
  return (await reducer.rereduce([pieces]))[0];
}

/** Values reduced per batch before rereducing. */
const REDUCE_BATCH = 1000;

/** Reduces a range by reading every row (views without stored reductions, and long keys). */
async function* scanReduce(
  index: ViewIndex, view: number, read: ReadView, range: RangeOptions, groupLevel: number, reducer: Reducer, skip: number, limit: number,
): AsyncIterable<[unknown, unknown]> {
  const compare = index.isRaw(view) ? collateRaw : collate;
  const groupKey = (key: unknown): unknown => groupLevel === Infinity ? key
    : groupLevel === 0 ? null
    : Array.isArray(key) ? key.slice(0, groupLevel) : key;
  let current: { key: unknown; rows: RowsToReduce; partials: unknown[] } | undefined;
  let produced = 0;
  const finishGroup = async (): Promise<[unknown, unknown] | undefined> => {
    if (!current) return undefined;
    if (current.rows.values.length > 0) current.partials.push((await reducer.reduce([current.rows]))[0]);
    const value = current.partials.length === 1 ? current.partials[0] : (await reducer.rereduce([current.partials]))[0];
    return [current.key, value];
  };
  for await (const entries of read.rangeChunks(range, 256)) {
    for (const entry of entries) {
      const row = decodeRow(entry.value);
      const key = groupKey(row.key);
      if (!current || compare(current.key, key) !== 0) {
        const done = await finishGroup();
        if (done) {
          if (skip > 0) skip--;
          else {
            yield done;
            if (++produced >= limit) return;
          }
        }
        current = { key, rows: { keys: [], values: [] }, partials: [] };
      }
      current.rows.keys.push([row.key, row.id]);
      current.rows.values.push(row.value);
      if (current.rows.values.length >= REDUCE_BATCH) {
        current.partials.push((await reducer.reduce([current.rows]))[0]);
        current.rows = { keys: [], values: [] };
      }
    }
  }
  const done = await finishGroup();
  if (done && skip === 0 && produced < limit) yield done;
}
