/**
 * Queries over a view index: map rows by key range (startkey/endkey with *_docid refinement,
 * inclusive_end, descending, skip, limit, keys) and reductions, grouped or not.
 *
 * Row keys are `k <view> <sortKey> <docid> 0x00 <n:2>`; sort keys are prefix-free and UTF-8 never
 * contains 0xFF, so "every row of key K" is the byte range [K, K 0xFF), and "every row of key K
 * and id D" is [K D, K D 0x00 0xFF 0xFF].
 */
import { CouchError } from '../errors.js';
import type { Entry, RangeOptions } from '../storage/types.js';
import { skipAndLimit } from '../storage/slice.js';
import { decodeRow, type Row, type ViewIndex } from './view-index.js';
import { collate, collateRaw } from './collation.js';
import { isBuiltin, reduceBuiltin, rereduceBuiltin } from './builtin-reduce.js';
import type { ViewProgram } from '../js/query-server.js';

export interface RangeQuery {
  startKey?: { key: unknown };
  endKey?: { key: unknown };
  startDocId?: string;
  endDocId?: string;
  inclusiveEnd: boolean;
  descending: boolean;
}

const FF = Buffer.of(0xff);
const ROW_END = Buffer.of(0x00, 0xff, 0xff);

/** The store range of a query's rows. */
export function rowRange(index: ViewIndex, view: number, q: RangeQuery): RangeOptions {
  const prefix = index.viewPrefix(view);
  const next = Buffer.of(prefix[0]!, view + 1);
  const at = (key: unknown, docId?: string) =>
    Buffer.concat([prefix, index.sortKeyOf(key), ...(docId !== undefined ? [Buffer.from(docId, 'utf8')] : [])]);
  const range: RangeOptions = { reverse: q.descending };
  if (!q.descending) {
    range.gte = q.startKey ? at(q.startKey.key, q.startDocId) : prefix;
    if (!q.endKey) range.lt = next;
    else if (q.inclusiveEnd) range.lte = q.endDocId !== undefined ? Buffer.concat([at(q.endKey.key, q.endDocId), ROW_END]) : Buffer.concat([at(q.endKey.key), FF]);
    else range.lt = at(q.endKey.key, q.endDocId);
  } else {
    if (!q.startKey) range.lt = next;
    else range.lte = q.startDocId !== undefined ? Buffer.concat([at(q.startKey.key, q.startDocId), ROW_END]) : Buffer.concat([at(q.startKey.key), FF]);
    if (!q.endKey) range.gte = prefix;
    else if (q.inclusiveEnd) range.gte = at(q.endKey.key, q.endDocId);
    else range.gt = q.endDocId !== undefined ? Buffer.concat([at(q.endKey.key, q.endDocId), ROW_END]) : Buffer.concat([at(q.endKey.key), FF]);
  }
  return range;
}

/** Rows before the range's first row in the direction of the query (the `offset`). */
export async function rowsBefore(index: ViewIndex, view: number, range: RangeOptions): Promise<number> {
  const prefix = index.viewPrefix(view);
  const next = Buffer.of(prefix[0]!, view + 1);
  if (!range.reverse) {
    const start = range.gte ?? range.gt;
    if (!start || Buffer.compare(start, prefix) <= 0) return 0;
    return index.store.count(range.gt ? { gte: prefix, lte: range.gt } : { gte: prefix, lt: start });
  }
  if (range.lt && Buffer.compare(range.lt, next) >= 0) return 0;
  return index.store.count(range.lte ? { gt: range.lte, lt: next } : { gte: range.lt!, lt: next });
}

/** Map rows of a range, in chunks, after `skip`, at most `limit`. */
export async function* mapRows(index: ViewIndex, range: RangeOptions, skip: number, limit: number): AsyncIterable<Row[]> {
  const snapshot = await index.store.snapshot();
  try {
    for await (const entries of skipAndLimit(snapshot.rangeChunks(range, 256), skip, limit)) {
      yield entries.map((e: Entry) => decodeRow(e.value));
    }
  } finally {
    snapshot.release();
  }
}

export interface Reducer {
  reduce(keys: [unknown, string][], values: unknown[]): Promise<unknown>;
  rereduce(values: unknown[]): Promise<unknown>;
}

/** The reduce of a view: a builtin computed natively, or its JavaScript in the sandbox. */
export function reducerFor(source: string, name: string, program: () => Promise<ViewProgram>, reduceLimit: boolean): Reducer {
  const trimmed = source.trim();
  if (isBuiltin(trimmed)) {
    return {
      reduce: async (keys, values) => reduceBuiltin(trimmed, keys, values),
      rereduce: async (values) => rereduceBuiltin(trimmed, values),
    };
  }
  const checked = (input: unknown[], output: unknown): unknown => {
    // CouchDB's reduce_limit: a reduce whose output does not shrink its input is a mistake.
    if (reduceLimit) {
      const outLen = JSON.stringify(output ?? null).length;
      if (outLen > 200 && outLen * 2 > JSON.stringify(input).length) {
        throw new CouchError(500, 'reduce_overflow_error', `Reduce output must shrink more rapidly: Current output: '${JSON.stringify(output).slice(0, 100)}'... (first 100 of ${outLen} bytes)`);
      }
    }
    return output;
  };
  return {
    reduce: async (keys, values) => checked(values, await (await program()).reduce(name, keys, values, false)),
    rereduce: async (values) => checked(values, await (await program()).reduce(name, null, values, true)),
  };
}

/** Values reduced per batch before rereducing. */
const REDUCE_BATCH = 1000;

/**
 * Reduces a range, grouped by whole key (`groupLevel` Infinity), by array prefix (`groupLevel` n)
 * or not at all (`groupLevel` 0: one row, key null). Yields [key, value] per group in order.
 */
export async function* reduceRows(
  index: ViewIndex, range: RangeOptions, groupLevel: number, reducer: Reducer, skip: number, limit: number,
): AsyncIterable<[unknown, unknown]> {
  const compare = index.raw ? collateRaw : collate;
  const groupKey = (key: unknown): unknown => groupLevel === Infinity ? key
    : groupLevel === 0 ? null
    : Array.isArray(key) ? key.slice(0, groupLevel) : key;
  let current: { key: unknown; keys: [unknown, string][]; values: unknown[]; partials: unknown[] } | undefined;
  let produced = 0;
  const finish = async (): Promise<[unknown, unknown] | undefined> => {
    if (!current) return undefined;
    if (current.values.length > 0) current.partials.push(await reducer.reduce(current.keys, current.values));
    const value = current.partials.length === 1 ? current.partials[0] : await reducer.rereduce(current.partials);
    return [current.key, value];
  };
  const snapshot = await index.store.snapshot();
  try {
    for await (const entries of snapshot.rangeChunks(range, 256)) {
      for (const entry of entries) {
        const row = decodeRow(entry.value);
        const key = groupKey(row.key);
        if (!current || compare(current.key, key) !== 0) {
          const done = await finish();
          if (done) {
            if (skip > 0) skip--;
            else {
              yield done;
              if (++produced >= limit) return;
            }
          }
          current = { key, keys: [], values: [], partials: [] };
        }
        current.keys.push([row.key, row.id]);
        current.values.push(row.value);
        if (current.values.length >= REDUCE_BATCH) {
          current.partials.push(await reducer.reduce(current.keys, current.values));
          current.keys = [];
          current.values = [];
        }
      }
    }
    const done = await finish();
    if (done && skip === 0 && produced < limit) yield done;
  } finally {
    snapshot.release();
  }
}
