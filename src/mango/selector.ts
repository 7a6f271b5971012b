/**
 * Mango selectors as CouchDB 3's mango_selector handles them (pure; unit-tested alone):
 *
 *   normalize  operators checked and made explicit (`{"a": 1}` → `{"a": {"$eq": 1}}`, several
 *              members → `$and`), field names pushed down to the conditions as dotted paths
 *              (`{"a": {"b": {"$gt": 1}}}` → `{"a.b": {"$gt": 1}}`), negations pushed to the
 *              leaves (`$not`, `$nor`, De Morgan). The normal form is JSON whose every object
 *              has one member, so it is echoed back (`_explain`) and stored (partial indexes) as is.
 *   match      a document against a normal selector; comparisons use CouchDB's view collation,
 *              except under `_id`, which compares in Erlang's term order (raw).
 *   planning   which fields a selector requires, holds constant, or bounds to a range (what an
 *              index needs to know).
 */
import { badRequest, CouchError } from '../errors.js';
import { collate } from '../views/collation.js';
import { compareErlangTerms, compareUtf8 } from '../views/erlang-term-order.js';
import { badArg, invalidFieldName, mangoError } from './errors.js';
import { erlangTerm } from '../erlang-terms.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
/** A normalized selector: `{}` or an object of exactly one member. */
export type Selector = JsonObject;

export const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The one member of a normal-form object (`undefined` for `{}`). */
export function single(sel: JsonObject): [string, Json] | undefined {
  for (const key in sel) return [key, sel[key]!];
  return undefined;
}

// ------------------------------------------------------------------------------- field paths

/** `a.b\.c` → ["a", "b.c"]: dots split, a backslash escapes the next character; no empty part. */
export function parseField(field: string): string[] {
  if (!field.includes('\\')) {
    const parts = field.split('.');
    if (parts.includes('')) throw invalidFieldName(field);
    return parts;
  }
  const parts = field.split(/(?<!\\)\./);
  if (parts.includes('')) throw invalidFieldName(field);
  return parts.map((p) => p.replace(/\\/g, ''));
}

export type FieldValue = { value: Json } | 'not_found' | 'bad_path';

/** A value by path: object members by name, array elements by decimal index (mango_doc:get_field). */
export function getField(doc: Json, path: readonly string[]): FieldValue {
  let value: Json = doc;
  for (const name of path) {
    if (isObject(value)) {
      if (!Object.prototype.hasOwnProperty.call(value, name)) return 'not_found';
      value = value[name]!;
    } else if (Array.isArray(value)) {
      if (!/^[+-]?\d+$/.test(name)) return 'bad_path';
      const pos = Number.parseInt(name, 10);
      if (pos < 0 || pos >= value.length) return 'bad_path';
      value = value[pos]!;
    } else {
      return 'bad_path';
    }
  }
  return { value };
}

const pathCache = new Map<string, string[]>();

function cachedPath(field: string): string[] {
  let path = pathCache.get(field);
  if (!path) {
    path = parseField(field);
    if (pathCache.size > 10000) pathCache.clear();
    pathCache.set(field, path);
  }
  return path;
}

// ------------------------------------------------------------------------------- normalizing

const COMPARISONS = new Set(['$lt', '$lte', '$eq', '$ne', '$gte', '$gt']);
const UNSUPPORTED = new Set(['$where', '$geoWithin', '$geoIntersects', '$near', '$nearSphere', '$text']);

/** Checks and normalizes a selector; throws CouchDB's 400s for bad operators and arguments. */
export function normalize(selector: JsonObject): Selector {
  if (Object.keys(selector).length === 0) return {};
  const normal = normNegations(normFields(normOps(selector), ''));
  if (Object.prototype.hasOwnProperty.call(normal, '')) {
    throw mangoError(400, 'invalid_selector', 'One or more conditions is missing a field name.');
  }
  return normal;
}

/**
 * As `normalize`, with Mango's errors as plain 400 bad_request: how `_changes` and the
 * replicator report a bad selector, where `_find` has its own error names.
 */
export function normalizeOrBadRequest(selector: JsonObject): Selector {
  try {
    return normalize(selector);
  } catch (err) {
    if (err instanceof CouchError && err.status === 400) throw badRequest(err.reason);
    throw err;
  }
}

function normOps(value: Json): JsonObject {
  if (!isObject(value)) return { $eq: value };
  const keys = Object.keys(value);
  if (keys.length === 0) return { $eq: value };
  if (keys.length > 1) return { $and: keys.map((k) => normOps({ [k]: value[k]! })) };
  const key = keys[0]!;
  const arg = value[key]!;
  switch (key) {
    case '$and': case '$or': case '$nor':
      if (!Array.isArray(arg)) throw badArg(key, arg);
      return { [key]: arg.map(normOps) };
    case '$not': case '$elemMatch': case '$allMatch': case '$keyMapMatch':
      if (!isObject(arg)) throw badArg(key, arg);
      return { [key]: normOps(arg) };
    case '$in': case '$nin': case '$all':
      if (!Array.isArray(arg)) throw badArg(key, arg);
      return value;
    case '$exists':
      if (typeof arg !== 'boolean') throw badArg(key, arg);
      return value;
    case '$type':
      if (typeof arg !== 'string') throw badArg(key, arg);
      return value;
    case '$mod':
      // A zero divisor would fail every match (Erlang's rem raises): refused up front.
      if (!Array.isArray(arg) || arg.length !== 2 || !Number.isInteger(arg[0]) || !Number.isInteger(arg[1]) || arg[0] === 0) throw badArg(key, arg);
      return value;
    case '$regex':
      if (typeof arg !== 'string' || compileRegex(arg) === undefined) throw badArg(key, arg);
      return value;
    case '$beginsWith':
      // mango_selector takes only a string here; anything else falls to the unknown operator.
      if (typeof arg !== 'string') throw mangoError(400, 'invalid_operator', `Invalid operator: ${key}`);
      return value;
    case '$size':
      if (!Number.isInteger(arg) || (arg as number) < 0) throw badArg(key, arg);
      return value;
    default:
      if (COMPARISONS.has(key)) return value;
      if (UNSUPPORTED.has(key)) throw mangoError(400, 'not_supported', `Unsupported operator: ${key}`);
      if (key.startsWith('$')) throw mangoError(400, 'invalid_operator', `Invalid operator: ${key}`);
      return { [key]: normOps(arg) };
  }
}

function normFields(sel: Json, path: string): JsonObject {
  const member = isObject(sel) ? single(sel) : undefined;
  if (!member || Object.keys(sel as JsonObject).length !== 1) {
    throw mangoError(400, 'bad_field', `Invalid field normalization on selector: ${erlangTerm(sel)}`);
  }
  const [key, arg] = member;
  switch (key) {
    case '$and': case '$or': case '$nor':
      return { [key]: (arg as Json[]).map((a) => normFields(a, path)) };
    case '$not':
      return { $not: normFields(arg, path) };
    case '$elemMatch': case '$allMatch': case '$keyMapMatch':
      return { [path]: { [key]: isObject(arg) && Object.keys(arg).length === 0 ? {} : normFields(arg, '') } };
    default:
      if (key.startsWith('$')) return { [path]: sel as JsonObject };
      return normFields(arg, path === '' ? key : `${path}.${key}`);
  }
}

function normNegations(sel: JsonObject): JsonObject {
  const member = single(sel);
  if (!member) return sel;
  const [key, arg] = member;
  switch (key) {
    case '$not': return negate(arg as JsonObject);
    case '$nor': return { $and: (arg as JsonObject[]).map(negate) };
    case '$and': case '$or': return { [key]: (arg as JsonObject[]).map(normNegations) };
    case '$elemMatch': case '$allMatch': case '$keyMapMatch': return { [key]: normNegations(arg as JsonObject) };
    default: return sel;
  }
}

const NEGATED: Record<string, string> = { $lt: '$gte', $lte: '$gt', $eq: '$ne', $ne: '$eq', $gte: '$lt', $gt: '$lte', $in: '$nin', $nin: '$in' };

function negate(sel: JsonObject): JsonObject {
  const member = single(sel);
  if (!member) return { $not: sel };
  const [key, arg] = member;
  switch (key) {
    case '$not': return normNegations(arg as JsonObject);
    case '$nor': return { $or: (arg as JsonObject[]).map(normNegations) };
    case '$and': return { $or: (arg as JsonObject[]).map(negate) };
    case '$or': return { $and: (arg as JsonObject[]).map(negate) };
    case '$exists': return { $exists: !arg };
    default:
      if (NEGATED[key]) return { [NEGATED[key]!]: arg };
      if (key.startsWith('$')) return { $not: sel };
      return { [key]: negate(arg as JsonObject) };
  }
}

// ------------------------------------------------------------------------------- matching

type Compare = (a: unknown, b: unknown) => number;

/** Whether `doc` matches the normalized `selector`. */
export function matches(selector: Selector, doc: Json): boolean {
  if (single(selector) === undefined) return true;
  return match(selector, doc, collate);
}

function match(sel: JsonObject, value: Json | undefined, cmp: Compare): boolean {
  const member = single(sel);
  if (!member) return true;
  const [key, arg] = member;
  switch (key) {
    case '$and': return (arg as JsonObject[]).every((s) => match(s, value, cmp));
    case '$or': return (arg as JsonObject[]).length === 0 || (arg as JsonObject[]).some((s) => match(s, value, cmp));
    case '$not': return !match(arg as JsonObject, value, cmp);
    case '$all': {
      const args = arg as Json[];
      if (args.length === 0) return false;
      if (!Array.isArray(value)) return false;
      if (args.length === 1 && Array.isArray(args[0]) && compareErlangTerms(args[0], value) === 0) return true;
      return args.every((a) => value.some((v) => compareErlangTerms(v, a) === 0));
    }
    case '': return match(arg as JsonObject, value, cmp);
    case '$elemMatch':
      return Array.isArray(value) && value.some((v) => match(arg as JsonObject, v, cmp));
    case '$allMatch':
      return Array.isArray(value) && value.length > 0 && value.every((v) => match(arg as JsonObject, v, cmp));
    case '$keyMapMatch':
      return isObject(value) && Object.keys(value).some((k) => match(arg as JsonObject, k, cmp));
    case '$lt': return value !== undefined && cmp(value, arg) < 0;
    case '$lte': return value !== undefined && cmp(value, arg) <= 0;
    case '$eq': return value !== undefined && cmp(value, arg) === 0;
    case '$ne': return value !== undefined && cmp(value, arg) !== 0;
    case '$gte': return value !== undefined && cmp(value, arg) >= 0;
    case '$gt': return value !== undefined && cmp(value, arg) > 0;
    case '$in': {
      const args = arg as Json[];
      if (Array.isArray(value)) return args.some((a) => value.some((v) => cmp(v, a) === 0));
      return args.some((a) => cmp(value, a) === 0);
    }
    case '$nin': {
      const args = arg as Json[];
      if (Array.isArray(value)) return args.every((a) => value.every((v) => cmp(v, a) !== 0));
      return args.every((a) => cmp(value, a) !== 0);
    }
    case '$exists': return (value !== undefined) === arg;
    case '$type': return value !== undefined && typeName(value) === arg;
    case '$mod': {
      const [d, r] = arg as [number, number];
      return Number.isInteger(value) && (value as number) % d === r;
    }
    case '$beginsWith': return typeof value === 'string' && value.startsWith(arg as string);
    case '$regex': return typeof value === 'string' && compileRegex(arg as string)!.test(value);
    case '$size': return Array.isArray(value) && value.length === arg;
    default: {
      if (key.startsWith('$')) throw mangoError(400, 'invalid_operator', `Invalid operator: ${key}`);
      const cond = arg as JsonObject;
      const found = value === undefined ? 'not_found' : getField(value, cachedPath(key));
      if (found === 'not_found') {
        const only = single(cond);
        return only !== undefined && only[0] === '$exists' && only[1] === false && Object.keys(cond).length === 1;
      }
      if (found === 'bad_path') return false;
      return match(cond, found.value, key === '_id' ? compareErlangTerms : cmp);
    }
  }
}

/** CouchDB's type names for `$type`. */
export function typeName(value: Json): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'string';
  return Array.isArray(value) ? 'array' : 'object';
}

const regexCache = new Map<string, RegExp | null>();

/**
 * A PCRE pattern (what Erlang's `re` runs) as a JavaScript RegExp: leading inline flags
 * (`(?i)`, `(?s)`, `(?m)`) become flags; `undefined` if it does not compile.
 */
export function compileRegex(pattern: string): RegExp | undefined {
  let cached = regexCache.get(pattern);
  if (cached === undefined) {
    let source = pattern;
    let flags = '';
    const inline = /^\(\?([ims]+)\)/.exec(source);
    if (inline) {
      flags = [...new Set(inline[1]!)].join('');
      source = source.slice(inline[0].length);
    }
    cached = null;
    for (const f of [`${flags}u`, flags]) {
      try {
        cached = new RegExp(source, f);
        break;
      } catch {
        // try without the unicode flag, then give up
      }
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, cached);
  }
  return cached ?? undefined;
}

// ------------------------------------------------------------------------------- planning

/**
 * Whether every document the selector matches has every field of `required` (the columns an
 * index needs): seen through `$and`, and through `$or` when each branch requires the field;
 * `$exists: false` requires nothing.
 */
export function hasRequiredFields(selector: Selector, required: readonly string[]): boolean {
  return remainingFields(selector, [...required]).length === 0;
}

function remainingFields(sel: JsonObject | JsonObject[], remainder: string[]): string[] {
  if (!Array.isArray(sel)) {
    if (single(sel) === undefined) return remainder;
    sel = [sel];
  }
  if (remainder.length === 0) return [];
  if (sel.length === 0) return remainder;
  const [first, ...rest] = sel;
  const member = single(first!);
  if (!member) return remainingFields(rest, remainder);
  const [key, arg] = member;
  if (key === '$and' && Array.isArray(arg)) {
    if (rest.length === 0) return remainingFields(arg as JsonObject[], remainder);
    return remainingFields(rest, remainingFields(arg as JsonObject[], remainder));
  }
  if (key === '$or' && Array.isArray(arg)) {
    const left = new Set<string>();
    for (const branch of arg as JsonObject[]) for (const f of remainingFields(branch, remainder)) left.add(f);
    return remainingFields(rest, [...left].sort(compareUtf8));
  }
  const cond = arg as JsonObject;
  const only = isObject(cond) ? single(cond) : undefined;
  if (only && only[0] === '$exists' && only[1] === false) return remainingFields(rest, remainder);
  const i = remainder.indexOf(key);
  return remainingFields(rest, i === -1 ? remainder : [...remainder.slice(0, i), ...remainder.slice(i + 1)]);
}

/** Whether the selector holds `field` to one value (`$eq`), seen through a top-level `$and`. */
export function isConstantField(selector: Selector, field: string): boolean {
  return constantIn([selector], field);
}

function constantIn(list: JsonObject[], field: string): boolean {
  if (list.length === 0) return false;
  const [first, ...rest] = list;
  const member = single(first!);
  if (!member) return false;
  const [key, arg] = member;
  if (list.length === 1 && key === '$and' && Array.isArray(arg)) return (arg as JsonObject[]).some((a) => constantIn([a], field));
  if (key === field && isObject(arg)) return single(arg)?.[0] === '$eq';
  return constantIn(rest, field);
}

const INDEXABLE = new Set(['$lt', '$lte', '$eq', '$gt', '$gte', '$beginsWith']);

/** The fields a JSON index could restrict: those under `$and` with a comparison or `$beginsWith` (sorted). */
export function indexableFields(selector: Selector): string[] {
  const out = new Set<string>();
  const walk = (sel: JsonObject): void => {
    const member = single(sel);
    if (!member) return;
    const [key, arg] = member;
    if (key === '$and') (arg as JsonObject[]).forEach(walk);
    else if (!key.startsWith('$') && isObject(arg) && INDEXABLE.has(single(arg)?.[0] ?? '')) out.add(key);
  };
  walk(selector);
  return [...out].sort(compareUtf8);
}

/** Below and above every JSON value (mango_json's min and max). */
export const MIN = Symbol('min');
export const MAX = Symbol('max');
export type Bound = Json | typeof MIN | typeof MAX;
export interface Range { lowOp: '$gt' | '$gte' | '$eq'; low: Bound; highOp: '$lt' | '$lte' | '$eq'; high: Bound }
export type FieldRange = Range | 'empty';

function cmpBound(a: Bound, b: Bound): number {
  if (a === b) return 0;
  if (a === MIN || b === MAX) return -1;
  if (a === MAX || b === MIN) return 1;
  return collate(a, b);
}

/**
 * Each indexable field's range, the comparisons under `$and` intersected (mango_idx_view's
 * field_ranges); a field whose range is empty ends the list with `empty`.
 */
export function fieldRanges(selector: Selector): [string, FieldRange][] {
  const out: [string, FieldRange][] = [];
  for (const field of indexableFields(selector)) {
    const range = rangeOf(selector, field, { lowOp: '$gt', low: MIN, highOp: '$lt', high: MAX });
    if (range === 'empty') return [[field, 'empty']];
    out.push([field, range]);
  }
  return out;
}

function rangeOf(sel: JsonObject, field: string, range: FieldRange): FieldRange {
  if (range === 'empty') return range;
  const member = single(sel);
  if (!member) return range;
  const [key, arg] = member;
  if (key === '$and') return (arg as JsonObject[]).reduce<FieldRange>((r, a) => rangeOf(a, field, r), range);
  if (key !== field || !isObject(arg)) return range;
  const cond = single(arg);
  return cond ? narrow(cond[0], cond[1], range) : range;
}

function narrow(op: string, arg: Json, r: Range): FieldRange {
  const pos = ((): 'min' | 'low' | 'mid' | 'high' | 'max' => {
    const lo = cmpBound(arg, r.low);
    if (lo < 0) return 'min';
    if (lo === 0) return 'low';
    const hi = cmpBound(arg, r.high);
    return hi < 0 ? 'mid' : hi === 0 ? 'high' : 'max';
  })();
  const eq: Range = { lowOp: '$eq', low: arg, highOp: '$eq', high: arg };
  const lowClosed = r.lowOp === '$gte' || r.lowOp === '$eq';
  const highClosed = r.highOp === '$lte' || r.highOp === '$eq';
  switch (op) {
    case '$lt':
      return pos === 'min' || pos === 'low' ? 'empty' : pos === 'max' ? r : { ...r, highOp: '$lt', high: arg };
    case '$lte':
      if (pos === 'min') return 'empty';
      if (pos === 'low') return lowClosed ? eq : 'empty';
      return pos === 'mid' ? { ...r, highOp: '$lte', high: arg } : r;
    case '$eq':
      if (pos === 'min' || pos === 'max') return 'empty';
      if (pos === 'low') return lowClosed ? eq : 'empty';
      if (pos === 'high') return highClosed ? eq : 'empty';
      return eq;
    case '$gte':
      if (pos === 'min' || pos === 'low') return r;
      if (pos === 'mid') return { ...r, lowOp: '$gte', low: arg };
      return pos === 'high' && highClosed ? eq : 'empty';
    case '$gt':
      if (pos === 'min') return r;
      if (pos === 'low' || pos === 'mid') return { ...r, lowOp: '$gt', low: arg };
      return 'empty';
    case '$beginsWith': {
      // The prefix up to the prefix and U+FFFF, which collates after any text (mango_idx_view).
      const from = narrow('$gte', arg, r);
      return from === 'empty' ? from : narrow('$lte', `${arg as string}\uffff`, from);
    }
    default:
      return r;
  }
}

/** The fields a normalized selector tests (mango_selector:fields), in order, with repeats. */
export function selectorFields(selector: Selector): string[] {
  const member = single(selector);
  if (!member) return [];
  const [key, arg] = member;
  if (Array.isArray(arg) && (key === '$and' || key === '$or' || key === '$nor')) return (arg as JsonObject[]).flatMap(selectorFields);
  if (key === '$not' && isObject(arg)) return selectorFields(arg);
  return key.startsWith('$') ? [] : [key];
}

/** Whether the selector is one of the operators that, given `[]` alone, select nothing. */
export function isNoopSelector(selector: Selector): boolean {
  const member = single(selector);
  return member !== undefined && ['$all', '$and', '$or', '$in'].includes(member[0]) && Array.isArray(member[1]) && member[1].length === 0;
}
