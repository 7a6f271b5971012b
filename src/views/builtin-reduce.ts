/**
 * CouchDB's built-in reduce functions, computed natively (no sandbox): `_sum` (numbers, and
 * arrays of numbers element-wise), `_count`, `_stats` and `_approx_count_distinct`. Each works
 * on values (reduce) and on its own earlier results (rereduce), so partial reductions combine.
 */
import { CouchError } from '../errors.js';

export type BuiltinReduce = '_sum' | '_count' | '_stats' | '_approx_count_distinct';

export function isBuiltin(source: string): source is BuiltinReduce {
  return source === '_sum' || source === '_count' || source === '_stats' || source === '_approx_count_distinct';
}

/**
 * The builtin a reduce source names, matched by prefix as CouchDB 1.6 does ("_sum\n" and
 * "_statsorama" are `_sum` and `_stats`); undefined for JavaScript and unknown builtins.
 */
export function builtinNamed(source: string): BuiltinReduce | undefined {
  const trimmed = source.trimStart();
  for (const name of ['_approx_count_distinct', '_count', '_stats', '_sum'] as const) {
    if (trimmed.startsWith(name)) return name;
  }
  return undefined;
}

export interface Stats {
  sum: number;
  count: number;
  min: number;
  max: number;
  sumsqr: number;
}

/**
 * A value a builtin cannot reduce: CouchDB 1.6's couch_query_servers throws
 * `{invalid_value, Reason}` (builtin_sum_rows, sum_terms, builtin_stats), which couch_httpd
 * answers as a 500 with that id and reason.
 */
const SUM_ERROR = 'builtin _sum function requires map values to be numbers or lists of numbers';
const STATS_ERROR = 'builtin _stats function requires map values to be numbers';
const invalid = (reason: string): CouchError => new CouchError(500, 'invalid_value', reason);

/** Reduces rows' values (`keys` are the rows' [key, id] and matter only for distinct counts). */
export function reduceBuiltin(name: BuiltinReduce, keys: readonly unknown[], values: readonly unknown[]): unknown {
  switch (name) {
    case '_count':
      return values.length;
    case '_sum':
      return values.reduce<unknown>((acc, v) => addSums(acc, v), 0);
    case '_stats':
      return values.reduce<Stats | undefined>((acc, v) => mergeStats(acc, statsOf(v)), undefined) ?? emptyStats();
    case '_approx_count_distinct':
      // Distinct emitted keys (rows come as [key, docid]), counted exactly.
      return new Set(keys.map((k) => JSON.stringify(Array.isArray(k) ? k[0] : k))).size;
  }
}

/** Combines earlier results of the same builtin. */
export function rereduceBuiltin(name: BuiltinReduce, partials: readonly unknown[]): unknown {
  switch (name) {
    case '_count':
      return partials.reduce<number>((acc, v) => acc + (v as number), 0);
    case '_sum':
      return partials.reduce<unknown>((acc, v) => addSums(acc, v), 0);
    case '_stats':
      return partials.reduce<Stats | undefined>((acc, v) => mergeStats(acc, v as Stats), undefined) ?? emptyStats();
    case '_approx_count_distinct':
      // Exact counts of disjoint ranges cannot be merged without the keys: sum them, an upper
      // bound, which is what "approx" allows for ranges split across partial reductions.
      return partials.reduce<number>((acc, v) => acc + (v as number), 0);
  }
}

/**
 * `_sum`: numbers add; arrays add element-wise, the shorter padded with zeros; a number added to
 * an array adds to its first element. The sum starts at 0, so an array's sum is at least `[0]`
 * (CouchDB 1.6's builtin_sum_rows and sum_terms: `[]` sums to `[0]`).
 */
function addSums(acc: unknown, value: unknown): unknown {
  if (typeof value === 'number') {
    if (typeof acc === 'number') return acc + value;
    if (Array.isArray(acc)) return addArrays(acc, [value]);
  }
  if (Array.isArray(value)) {
    if (!value.every((v) => typeof v === 'number')) throw invalid(SUM_ERROR);
    if (typeof acc === 'number') return addArrays([acc], value as number[]);
    if (Array.isArray(acc)) return addArrays(acc as number[], value as number[]);
  }
  throw invalid(SUM_ERROR);
}

function addArrays(a: readonly number[], b: readonly number[]): number[] {
  const out = new Array<number>(Math.max(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = (a[i] ?? 0) + (b[i] ?? 0);
  return out;
}

function emptyStats(): Stats {
  return { sum: 0, count: 0, min: 0, max: 0, sumsqr: 0 };
}

/** A map value as `_stats` input: a number, or an already-computed stats object. */
function statsOf(value: unknown): Stats {
  if (typeof value === 'number') return { sum: value, count: 1, min: value, max: value, sumsqr: value * value };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const v = value as Partial<Stats>;
    if (typeof v.sum === 'number' && typeof v.count === 'number' && typeof v.min === 'number' && typeof v.max === 'number' && typeof v.sumsqr === 'number') {
      return v as Stats;
    }
  }
  throw invalid(STATS_ERROR);
}

function mergeStats(acc: Stats | undefined, s: Stats): Stats {
  if (!acc) return { ...s };
  return {
    sum: acc.sum + s.sum,
    count: acc.count + s.count,
    min: Math.min(acc.min, s.min),
    max: Math.max(acc.max, s.max),
    sumsqr: acc.sumsqr + s.sumsqr,
  };
}
