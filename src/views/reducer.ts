/**
 * The reduce function of a view, as the index and queries call it: a builtin computed natively,
 * or JavaScript in the sandbox. Calls come in batches so that reducing many segments or groups
 * costs one round trip to the sandbox, not one each.
 */
import { CouchError } from '../errors.js';
import { builtinNamed, reduceBuiltin, rereduceBuiltin } from './builtin-reduce.js';
import type { ViewProgram } from '../js/query-server.js';

export interface RowsToReduce {
  /** The rows' [key, docid] pairs. */
  keys: [unknown, string][];
  values: unknown[];
}

export interface Reducer {
  /** reduce(keys, values) of each call, in order. */
  reduce(calls: readonly RowsToReduce[]): Promise<unknown[]>;
  /** rereduce(partials) of each call, in order. */
  rereduce(calls: readonly (readonly unknown[])[]): Promise<unknown[]>;
  /**
   * Whether partial results of disjoint ranges combine exactly, so the index may store them.
   * False for `_approx_count_distinct`, whose exact distinct counts cannot be merged.
   */
  readonly combinable: boolean;
  /**
   * What of each row the reduce reads: only how many there are (`_count`), their values
   * (the other builtins), or keys and values (JavaScript). Rows are decoded no further.
   */
  readonly reads: 'count' | 'values' | 'rows';
}

/** The reducer of view `name` whose reduce source is `source`. */
export function reducerFor(source: string, name: string, program: () => Promise<ViewProgram>, reduceLimit: boolean): Reducer {
  const trimmed = builtinNamed(source);
  if (trimmed) {
    return {
      reduce: async (calls) => calls.map((c) => reduceBuiltin(trimmed, c.keys, c.values)),
      rereduce: async (calls) => calls.map((partials) => rereduceBuiltin(trimmed, partials)),
      combinable: trimmed !== '_approx_count_distinct',
      reads: trimmed === '_count' ? 'count' : trimmed === '_approx_count_distinct' ? 'rows' : 'values',
    };
  }
  if (source.trimStart().startsWith('_')) {
    // A builtin CouchDB does not have. CouchDB 1.6 saves the design document and then crashes
    // in couch_query_servers:builtin_reduce (a 500); CouchDB 2+'s couch_mrview:validate refuses
    // it as this 400, which a query of such a view answers here.
    const unsupported = async (calls: readonly unknown[]): Promise<unknown[]> => {
      if (calls.length === 0) return [];
      throw new CouchError(400, 'invalid_design_doc', `\`${source}\` is not a supported reduce function.`);
    };
    return { reduce: unsupported, rereduce: unsupported, combinable: true, reads: 'count' };
  }
  // CouchDB's reduce_limit: a reduce whose output does not shrink its input is a mistake. As in
  // CouchDB 1.6's views.js runReduce, the output is the reply line's array of reductions
  // (`[result]`, brackets included in its length and preview) and the input the query server's
  // whole line: `["reduce",[source],rows]` (rows as [[key, id], value] pairs) or
  // `["rereduce",[source],values]`.
  const checked = (inputLength: () => number, output: unknown): unknown => {
    if (reduceLimit) {
      const reduceLine = JSON.stringify([output]);
      if (reduceLine.length > 200 && reduceLine.length * 2 > inputLength()) {
        throw new CouchError(500, 'reduce_overflow_error', `Reduce output must shrink more rapidly: Current output: '${reduceLine.slice(0, 100)}'... (first 100 of ${reduceLine.length} bytes)`);
      }
    }
    return output;
  };
  // `["` + command + `",[` + source + `],` + rows + `]`: the command's quotes and the brackets and commas around.
  const lineLength = (command: string, rows: string): number => command.length + JSON.stringify(source).length + rows.length + 8;
  return {
    reduce: async (calls) => {
      if (calls.length === 0) return [];
      const results = await (await program()).reduceMany(name, calls.map((c) => ({ keys: c.keys, values: c.values, rereduce: false })));
      return results.map((r, i) => checked(() => {
        const { keys, values } = calls[i]!;
        return lineLength('reduce', JSON.stringify(keys.map((key, n) => [key, values[n]])));
      }, r));
    },
    rereduce: async (calls) => {
      if (calls.length === 0) return [];
      const results = await (await program()).reduceMany(name, calls.map((values) => ({ keys: null, values: [...values], rereduce: true })));
      return results.map((r, i) => checked(() => lineLength('rereduce', JSON.stringify(calls[i]!)), r));
    },
    combinable: true,
    reads: 'rows',
  };
}
