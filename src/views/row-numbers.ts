/**
 * The row numbers (`n`) of the rows one document emits in one view. A row's store key ends
 * with its document id and `n`, so `n` orders rows of the same key and document. CouchDB 1.6
 * sorts a document's rows (`lists:sort` over `{Key, Value}`) before storing duplicates, so rows
 * sharing a key follow each other in Erlang term order of their values, not in emit order.
 */
import { compareErlangTerms } from './erlang-term-order.js';

/**
 * Each row's `n`, given the rows' sort keys: its rank among the rows of its sort key, in the term
 * order of their keys and values (stable, so equal rows keep emit order). Only rows of one key
 * need telling apart, so a document may emit any number of rows. Undefined when no sort key
 * repeats: every `n` is 0, which is the common case and costs one pass over the keys.
 */
export function rowNumbers(sortKeys: readonly Buffer[], rows: readonly (readonly [key: unknown, value: unknown])[]): number[] | undefined {
  if (sortKeys.length < 2) return undefined;
  if (sortKeys.length === 2) {
    if (!sortKeys[0]!.equals(sortKeys[1]!)) return undefined;
    return compareRows(rows[1]!, rows[0]!) < 0 ? [1, 0] : [0, 1];
  }
  // Rows by sort key, in emit order; only keys emitted more than once get a list.
  const first = new Map<string, number>();
  let repeated: Map<number, number[]> | undefined;
  for (let i = 0; i < sortKeys.length; i++) {
    const id = sortKeys[i]!.toString('latin1');
    const at = first.get(id);
    if (at === undefined) {
      first.set(id, i);
      continue;
    }
    repeated ??= new Map();
    const group = repeated.get(at);
    if (group) group.push(i);
    else repeated.set(at, [at, i]);
  }
  if (!repeated) return undefined;
  const numbers = new Array<number>(sortKeys.length).fill(0);
  for (const emitted of repeated.values()) {
    // Array.prototype.sort is stable: equal rows (values 1 and 1.0) keep emit order.
    emitted.sort((a, b) => compareRows(rows[a]!, rows[b]!)).forEach((row, rank) => { numbers[row] = rank; });
  }
  return numbers;
}

/**
 * Rows as the tuples `{Key, Value}` CouchDB sorts: by key, then by value. Keys with one sort
 * key are nearly always the same term; the few that are not (strings collation finds equal)
 * come in the order of their bytes, as in CouchDB.
 */
function compareRows(a: readonly [unknown, unknown], b: readonly [unknown, unknown]): number {
  return compareErlangTerms(a[0], b[0]) || compareErlangTerms(a[1], b[1]);
}
