/**
 * Query planning as CouchDB 3 does it (mango_idx:get_usable_indexes, mango_cursor:create,
 * mango_cursor_view:choose_best_index, mango_cursor_special): which indexes can answer a
 * selector and sort, which one answers it, the key range it would scan, and the warnings.
 */
import { compareUtf8 } from '../views/erlang-term-order.js';
import { noUsableIndex, noUsableSortIndex } from './errors.js';
import { compareIndexes, indexJson, type MangoIndex } from './indexes.js';
import { fieldRanges, hasRequiredFields, indexableFields, isConstantField, selectorFields, isNoopSelector, MAX, MIN, type Bound, type FieldRange, type Json, type JsonObject, type Selector } from './selector.js';
import type { FindOptions } from './options.js';

export interface QueryPlan {
  index: MangoIndex;
  /** The ranges of the index's leading columns; 'empty' when nothing can match. */
  ranges: FieldRange[] | 'empty';
  direction: 'fwd' | 'rev';
  selector: Selector;
  options: FindOptions;
}

/** The plan for a query over the database's indexes (which include `_all_docs`). */
export function plan(indexes: readonly MangoIndex[], options: FindOptions): QueryPlan {
  const { selector } = options;
  const sortFields = options.sort.map((s) => s.field);
  const pool = consideredIndexes(indexes, options.useIndex).sort(compareIndexes);
  const usable = pool.filter((i) => isUsable(i, selector, sortFields));
  if (usable.length === 0) throw noUsableSortIndex();
  const requested = byUseIndex(usable, options.useIndex);
  // Without fallback, an index named in use_index must serve, and so must a JSON index when none is named.
  if (!options.allowFallback && (options.useIndex.length > 0 ? requested.length === 0 : !usable.some((i) => i.type === 'json'))) {
    throw noUsableIndex();
  }
  const candidates = requested.length > 0 ? requested : usable;
  const json = candidates.filter((i) => i.type === 'json');
  const ranges = fieldRanges(selector);
  let index: MangoIndex;
  let prefix: FieldRange[];
  if (json.length > 0) {
    [index, prefix] = bestIndex(json, ranges, (idx) => covers(idx, options.fields, selector));
  } else {
    // The special index's catch-all range comes after any range the selector gives `_id`.
    const idRange = ranges.find(([f]) => f === '_id');
    index = candidates[0]!;
    prefix = [idRange ? idRange[1] : { lowOp: '$gt', low: null, highOp: '$lt', high: MAX }];
  }
  const empty = prefix.includes('empty') || isNoopSelector(selector);
  return {
    index,
    ranges: empty ? 'empty' : prefix,
    direction: options.sort[0]?.dir === 'desc' ? 'rev' : 'fwd',
    selector,
    options,
  };
}

/** The indexes a query considers: those without a partial filter, and any named in use_index. */
function consideredIndexes(indexes: readonly MangoIndex[], useIndex: readonly string[]): MangoIndex[] {
  const global = indexes.filter((i) => i.partialFilter === undefined);
  return [...new Set([...global, ...byUseIndex(indexes, useIndex)])];
}

function byUseIndex(indexes: readonly MangoIndex[], useIndex: readonly string[]): MangoIndex[] {
  if (useIndex.length === 0) return [];
  const ddoc = useIndex[0]!.startsWith('_design/') ? useIndex[0]! : `_design/${useIndex[0]}`;
  return indexes.filter((i) => i.ddoc === ddoc && (useIndex.length === 1 || i.name === useIndex[1]));
}

function isUsable(idx: MangoIndex, selector: Selector, sortFields: readonly string[]): boolean {
  return usability(idx, selector, sortFields) === 'usable';
}

/** Whether an index can serve a query, or why not (mango_idx's reasons). */
function usability(idx: MangoIndex, selector: Selector, sortFields: readonly string[]): 'usable' | 'field_mismatch' | 'sort_order_mismatch' {
  // _all_docs serves a sort on _id only for a selector that restricts _id (mango_idx_special).
  if (idx.type === 'special') {
    if (sortFields.length === 0) return 'usable';
    if (!indexableFields(selector).includes('_id')) return 'field_mismatch';
    return sortFields.length === 1 && sortFields[0] === '_id' ? 'usable' : 'sort_order_mismatch';
  }
  const sorted = new Set(sortFields);
  const required = [...new Set(idx.columns)].sort(compareUtf8).filter((c) => !sorted.has(c) && c !== '_id' && c !== '_rev');
  if (!hasRequiredFields(selector, required)) return 'field_mismatch';
  return canUseSort(idx.columns, sortFields, selector) ? 'usable' : 'sort_order_mismatch';
}

/**
 * `_explain`'s `index_candidates` (CouchDB 3.5): every index the query could have considered
 * but the chosen one, in reverse design-document order with `_all_docs` last, each with whether
 * it could serve, why it was not taken, its rank among those that could, and whether it covers.
 */
export function indexCandidates(indexes: readonly MangoIndex[], options: FindOptions, chosen: MangoIndex | undefined): JsonObject[] {
  const { selector } = options;
  const sortFields = options.sort.map((s) => s.field);
  const pool = consideredIndexes(indexes, options.useIndex).filter((i) => i !== chosen);
  const covering = (idx: MangoIndex): boolean => covers(idx, options.fields, selector);
  const usable = pool.filter((i) => isUsable(i, selector, sortFields));
  const json = usable.filter((i) => i.type === 'json');
  const ranked = [...(json.length > 0 ? rankIndexes(json, fieldRanges(selector), covering).map((r) => r.idx) : []), ...usable.filter((i) => i.type === 'special')];
  const rank = new Map(ranked.map((idx, i) => [idx, i + 1]));
  const order = [...pool].sort((a, b) => Number(a.type === 'special') - Number(b.type === 'special') || compareIndexes(b, a));
  return order.map((idx) => {
    const usableRank = rank.get(idx);
    const reason = usableRank === undefined ? usability(idx, selector, sortFields) : idx.type === 'special' ? 'unfavored_type' : 'less_overlap';
    return {
      index: indexJson(idx),
      analysis: { usable: usableRank !== undefined, reasons: [{ name: reason }], ranking: usableRank ?? ranked.length + 1, covering: idx.type === 'special' ? null : covering(idx) },
    };
  });
}

/** `_explain`'s `selector_hints`: which of the selector's fields a JSON index could restrict. */
export function selectorHints(selector: Selector): JsonObject[] {
  const indexable = indexableFields(selector);
  const unindexable = [...new Set(selectorFields(selector))].filter((f) => !indexable.includes(f)).sort(compareUtf8);
  return [{ type: 'json', indexable_fields: indexable, unindexable_fields: unindexable }];
}

function canUseSort(columns: readonly string[], sortFields: readonly string[], selector: Selector): boolean {
  if (sortFields.length === 0) return true;
  if (columns.length === 0) return false;
  if (columns[0] === sortFields[0]) return sortFields.every((f, i) => columns[i] === f);
  return isConstantField(selector, columns[0]!) && canUseSort(columns.slice(1), sortFields, selector);
}

/** The best index for the selector's ranges, with the key prefix they give it. */
function bestIndex(indexes: readonly MangoIndex[], ranges: [string, FieldRange][], covering: (idx: MangoIndex) => boolean): [MangoIndex, FieldRange[]] {
  const best = rankIndexes(indexes, ranges, covering)[0]!;
  return [best.idx, best.prefix];
}

/** Covering indexes first, then fewest selector ranges left out of the key prefix, then fewest columns, then by id. */
function rankIndexes(indexes: readonly MangoIndex[], ranges: [string, FieldRange][], covering: (idx: MangoIndex) => boolean): { idx: MangoIndex; prefix: FieldRange[] }[] {
  const scored = indexes.map((idx) => {
    const prefix: FieldRange[] = [];
    for (const col of idx.columns) {
      const found = ranges.find(([f]) => f === col);
      if (!found) break;
      prefix.push(found[1]);
    }
    return { idx, prefix, difference: ranges.length - prefix.length, covers: covering(idx) ? 0 : 1 };
  });
  scored.sort((a, b) => a.covers - b.covers || a.difference - b.difference || a.idx.columns.length - b.idx.columns.length || compareIndexes(a.idx, b.idx));
  return scored;
}

/**
 * Whether a JSON index holds every field the query needs, the selector's and the requested ones
 * (mango_idx_view:covers): CouchDB 3.4 then answers from the index alone.
 */
export function covers(index: MangoIndex, fields: readonly string[], selector: Selector): boolean {
  if (index.type !== 'json' || fields.length === 0) return false;
  const available = new Set(['_id', ...index.columns]);
  return [...fields, ...selectorFields(selector)].every((f) => available.has(f));
}

const MAX_MARK = '<MAX>';

/** A bound as `_explain` prints it. */
function boundJson(b: Bound): Json {
  return b === MAX ? MAX_MARK : b === MIN ? null : b;
}

/** The start and end keys the plan's index scan would use, as `_explain` shows them. */
export function scanKeys(p: QueryPlan): { start: Json; end: Json } {
  if (p.ranges === 'empty') return { start: null, end: null };
  let start: Json;
  let end: Json;
  if (p.index.type === 'special') {
    const r = p.ranges[0] as Exclude<FieldRange, 'empty'>;
    start = r.low === MIN ? '' : boundJson(r.low);
    end = r.high === MAX ? MAX_MARK : boundJson(r.high);
  } else {
    const startKey: Json[] = [];
    for (const r of p.ranges as Exclude<FieldRange, 'empty'>[]) {
      if (r.low === MIN) break;
      startKey.push(boundJson(r.low));
    }
    const endKey: Json[] = [];
    let closed = false;
    for (const r of p.ranges as Exclude<FieldRange, 'empty'>[]) {
      if (r.high === MAX) {
        endKey.push(MAX_MARK);
        closed = true;
        break;
      }
      endKey.push(boundJson(r.high));
    }
    if (!closed) endKey.push(MAX_MARK);
    start = startKey;
    end = endKey;
  }
  return p.direction === 'rev' ? { start: end, end: start } : { start, end };
}

/** The warnings a `_find` answer carries (mango_cursor:maybe_add_warning), joined by newlines. */
export function warnings(p: QueryPlan, docsExamined: number, resultsReturned: number): string | undefined {
  const out: string[] = [];
  const use = p.options.useIndex;
  if (use.length > 0 && byUseIndex([p.index], use).length === 0) {
    const name = use[0]!.replace(/^_design\//, '');
    out.push(use.length === 1
      ? `_design/${name} was not used because it does not contain a valid index for this query.`
      : `_design/${name}, ${use[1]} was not used because it is not a valid index for this query.`);
  }
  if (p.index.type === 'special') out.push('No matching index found, create an index to optimize query time.');
  const ratio = resultsReturned === 0 ? docsExamined : docsExamined / resultsReturned;
  if (ratio > 10) {
    out.push('The number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this.');
  }
  return out.length > 0 ? out.join('\n') : undefined;
}
