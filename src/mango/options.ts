/**
 * The bodies of `_find`/`_explain` and `POST _index`, checked as CouchDB 3's mango_opts checks
 * them (in its order, so the first bad member is the one reported), plus sort specs
 * (mango_sort) and field lists (mango_fields) with the projection of a document onto them.
 */
import { invalidKey, mangoError, missingRequiredKey } from './errors.js';
import { erlangPretty, erlangTerm } from '../erlang-terms.js';
import { getField, isObject, normalize, parseField, type Json, type JsonObject, type Selector } from './selector.js';

export type Direction = 'asc' | 'desc';
export interface SortField { field: string; dir: Direction }

export interface FindOptions {
  selector: Selector;
  /** [] (none), [ddoc] or [ddoc, name]. */
  useIndex: string[];
  bookmark: string | null;
  limit: number;
  skip: number;
  sort: SortField[];
  /** Empty: whole documents. */
  fields: string[];
  partition: string;
  r: number;
  conflicts: boolean;
  stale: 'ok' | false;
  update: boolean;
  stable: boolean;
  executionStats: boolean;
  /** CouchDB 3.4's `allow_fallback`: false refuses a query no index chosen or named can serve. */
  allowFallback: boolean;
}

export const DEFAULT_LIMIT = 25;

type Check = (value: Json) => unknown;
interface OptionSpec { key: string; required?: boolean; fallback?: unknown; check?: Check }

/** Validates `body` against `specs` in order; unknown members are `invalid_key`. */
function validate(body: JsonObject, specs: OptionSpec[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const spec of specs) {
    seen.add(spec.key);
    const value = body[spec.key];
    if (value === undefined) {
      if (spec.required) throw missingRequiredKey(spec.key);
      out[spec.key] = spec.fallback;
      continue;
    }
    out[spec.key] = spec.check ? spec.check(value) : value;
  }
  const unknown = Object.keys(body).find((k) => !seen.has(k));
  if (unknown !== undefined) throw invalidKey(unknown);
  return out;
}

const unknownError = (term: string): never => {
  throw mangoError(500, 'unknown_error', `Unknown Error: mango_opts :: ${term}`);
};

export const isString: Check = (v) => {
  if (typeof v !== 'string') throw mangoError(400, 'invalid_string', `Invalid string: ${erlangTerm(v)}`);
  return v;
};
const isBoolean: Check = (v) => {
  if (typeof v !== 'boolean') throw mangoError(400, 'invalid_boolean', `Invalid boolean value: ${erlangTerm(v)}`);
  return v;
};
export const isPosInteger: Check = (v) => {
  if (!Number.isInteger(v) || (v as number) <= 0) throw mangoError(400, 'invalid_pos_integer', `${erlangTerm(v)} is not an integer greater than zero`);
  return v;
};
const isNonNegInteger: Check = (v) => {
  if (!Number.isInteger(v) || (v as number) < 0) throw mangoError(400, 'invalid_non_neg_integer', `${erlangTerm(v)} is not an integer greater than or equal to zero`);
  return v;
};

export function validateSelector(v: Json): Selector {
  if (!isObject(v)) throw mangoError(400, 'invalid_selector_json', `Selector must be a JSON object, not: ${erlangTerm(v)}`);
  return normalize(v);
}

/** `use_index`: "ddoc", "_design/ddoc", "ddoc/name", "_design/ddoc/name", or [ddoc] / [ddoc, name]. */
export function validateUseIndex(v: Json): string[] {
  if (v === null) return [];
  if (typeof v === 'string') {
    const parts = v.split('/');
    if (parts.length === 1) return parts;
    if (parts[0] === '_design' && (parts.length === 2 || parts.length === 3)) return parts.slice(1);
    if (parts.length === 2) return parts;
  } else if (Array.isArray(v) && v.length <= 2 && v.every((x) => typeof x === 'string')) {
    return v as string[];
  }
  throw mangoError(400, 'invalid_index_name', `Invalid index name: ${erlangTerm(v)}`);
}

/** A sort: an array of "field" or {"field": "asc"|"desc"}, all in one direction. */
export function validateSort(v: Json): SortField[] {
  if (!Array.isArray(v)) throw mangoError(400, 'invalid_sort_json', `Sort must be an array of sort specs, not: ${erlangPretty(v)}`);
  const sort = v.map((spec): SortField => {
    if (spec === '') throw mangoError(400, 'invalid_sort_field', 'Invalid sort field: <<>>');
    if (typeof spec === 'string') return { field: spec, dir: 'asc' };
    if (isObject(spec)) {
      const keys = Object.keys(spec);
      const dir = keys.length === 1 ? spec[keys[0]!] : undefined;
      if (dir === 'asc' || dir === 'desc') return { field: keys[0]!, dir };
    }
    throw mangoError(400, 'invalid_sort_field', `Invalid sort field: ${erlangPretty(spec)}`);
  });
  if (new Set(sort.map((s) => s.dir)).size > 1) {
    throw mangoError(400, 'unsupported_mixed_sort', 'Sorts currently only support a single direction for all fields.');
  }
  return sort;
}

function validateFields(v: Json): string[] {
  if (!Array.isArray(v)) throw mangoError(400, 'invalid_fields', `Fields must be an array of strings, not: ${erlangTerm(v)}`);
  for (const f of v) {
    if (typeof f !== 'string' && !isObject(f)) throw mangoError(400, 'invalid_field', `Invalid JSON for field spec: ${erlangTerm(f)}`);
  }
  // Object specs only mean something to text indexes, which Settee does not have.
  return v.filter((f): f is string => typeof f === 'string');
}

/** The body of `_find` and `_explain`. */
export function validateFind(body: JsonObject): FindOptions {
  const o = validate(body, [
    { key: 'selector', required: true, check: validateSelector },
    { key: 'use_index', fallback: [], check: validateUseIndex },
    {
      key: 'bookmark', fallback: null,
      check: (v) => (v === null || v === '' ? null : typeof v === 'string' ? v : unknownError(`{invalid_bookmark,${erlangTerm(v)}}`)),
    },
    { key: 'limit', fallback: DEFAULT_LIMIT, check: isNonNegInteger },
    { key: 'skip', fallback: 0, check: isNonNegInteger },
    { key: 'sort', fallback: [], check: validateSort },
    { key: 'fields', fallback: [], check: validateFields },
    {
      key: 'partition', fallback: '',
      check: (v) => {
        if (v === '') return '';
        throw mangoError(400, 'bad_request', '`partition` parameter is not supported in this db');
      },
    },
    { key: 'r', fallback: 1, check: isPosInteger },
    { key: 'conflicts', fallback: false, check: isBoolean },
    {
      key: 'stale', fallback: false,
      check: (v) => (v === 'ok' ? 'ok' : v === false || v === 'false' ? false : unknownError(`{invalid_ok_or_false_value,${erlangTerm(v)}}`)),
    },
    { key: 'update', fallback: true, check: isBoolean },
    { key: 'stable', fallback: false, check: isBoolean },
    { key: 'execution_stats', fallback: false, check: isBoolean },
    { key: 'allow_fallback', fallback: true, check: isBoolean },
  ]);
  return {
    selector: o['selector'] as Selector,
    useIndex: o['use_index'] as string[],
    bookmark: o['bookmark'] as string | null,
    limit: o['limit'] as number,
    skip: o['skip'] as number,
    sort: o['sort'] as SortField[],
    fields: o['fields'] as string[],
    partition: o['partition'] as string,
    r: o['r'] as number,
    conflicts: o['conflicts'] as boolean,
    stale: o['stale'] as 'ok' | false,
    update: o['update'] as boolean,
    stable: o['stable'] as boolean,
    executionStats: o['execution_stats'] as boolean,
    allowFallback: o['allow_fallback'] as boolean,
  };
}

/** The options as `_explain` echoes them (mango_opts' names and order). */
export function optionsJson(o: FindOptions): JsonObject {
  return {
    use_index: o.useIndex,
    bookmark: o.bookmark ?? 'nil',
    limit: o.limit,
    skip: o.skip,
    sort: Object.fromEntries(o.sort.map((s) => [s.field, s.dir])),
    fields: o.fields,
    partition: o.partition,
    r: o.r,
    conflicts: o.conflicts,
    stale: o.stale,
    update: o.update,
    stable: o.stable,
    execution_stats: o.executionStats,
    allow_fallback: o.allowFallback,
  };
}

export interface IndexCreateOptions {
  /** The `index` member as given. */
  def: Json;
  type: string;
  name: string | undefined;
  ddoc: string | undefined;
  w: number;
}

/** The body of `POST _index`. */
export function validateIndexCreate(body: JsonObject): IndexCreateOptions {
  const o = validate(body, [
    { key: 'index', required: true },
    { key: 'type', fallback: 'json', check: isString },
    { key: 'name', fallback: undefined, check: isString },
    { key: 'ddoc', fallback: undefined, check: isString },
    { key: 'w', fallback: 2, check: isPosInteger },
    {
      key: 'partitioned', fallback: undefined,
      check: (v) => (typeof v === 'boolean' ? v : unknownError(`{invalid_partitioned_value,${erlangTerm(v)}}`)),
    },
  ]);
  // CouchDB 3.3 refuses empty names; a bare `_design/` is no document id.
  if (o['name'] === '' || o['ddoc'] === '') throw mangoError(400, 'invalid_empty_string', 'Index name/ddoc cannot be empty');
  if (o['ddoc'] === '_design/') throw mangoError(400, 'illegal_docid', 'Illegal document id `_design/`');
  if (o['partitioned'] === true) {
    throw mangoError(400, 'invalid_partitioned_option', 'Requested partitioned option does not match existing value on design document');
  }
  return { def: o['index'] as Json, type: o['type'] as string, name: o['name'] as string | undefined, ddoc: o['ddoc'] as string | undefined, w: o['w'] as number };
}

/**
 * The body of `POST _index/_bulk_delete` (mango_opts:validate_bulk_delete): `docids` required,
 * each checked as a `use_index` value (validate_bulk_docs); `w` a positive integer; nothing else.
 */
export function validateBulkDelete(body: JsonObject): { docids: string[] } {
  const o = validate(body, [
    {
      key: 'docids', required: true,
      check: (v) => {
        if (!Array.isArray(v)) throw mangoError(400, 'invalid_bulk_docs', `Bulk Delete requires an array of non-null docids. Docids: ${erlangTerm(v)}`);
        v.forEach(validateUseIndex);
        // What validate_use_index lets through besides strings (null, [ddoc], [ddoc, name]) names no
        // design document: CouchDB fails on it later with a 500; refused here as not a docid.
        if (!v.every((d) => typeof d === 'string')) {
          throw mangoError(400, 'invalid_bulk_docs', `Bulk Delete requires an array of non-null docids. Docids: ${erlangTerm(v)}`);
        }
        return v;
      },
    },
    { key: 'w', fallback: 2, check: isPosInteger },
  ]);
  return { docids: o['docids'] as string[] };
}

/** A JSON index definition: `fields` (a sort spec) and an optional `partial_filter_selector`. */
export function validateIndexDef(def: Json): { fields: SortField[]; partialFilter: Selector } {
  if (!isObject(def)) throw mangoError(400, 'invalid_index', `JSON indexes must be an object, not: ${erlangTerm(def)}`);
  const o = validate(def, [
    { key: 'fields', required: true, check: validateSort },
    { key: 'partial_filter_selector', fallback: {}, check: validateSelector },
  ]);
  return { fields: o['fields'] as SortField[], partialFilter: o['partial_filter_selector'] as Selector };
}

/** The document cut to `fields` (mango_fields:extract): each present field at its path. */
export function extractFields(doc: JsonObject, fields: readonly string[]): JsonObject {
  if (fields.length === 0) return doc;
  const out: JsonObject = {};
  for (const field of fields) {
    const path = parseField(field);
    const found = getField(doc, path);
    if (typeof found === 'string') continue;
    setField(out, path, found.value);
  }
  return out;
}

/** Sets the value at `path`, making objects on the way (an existing non-object member is left alone). */
export function setField(target: JsonObject, path: readonly string[], value: Json): void {
  const [name, ...rest] = path;
  if (rest.length === 0) {
    target[name!] = value;
    return;
  }
  const existing = target[name!];
  if (isObject(existing)) setField(existing, rest, value);
  else if (existing === undefined) target[name!] = nested(rest, value);
}

function nested(path: readonly string[], value: Json): Json {
  return path.length === 0 ? value : { [path[0]!]: nested(path.slice(1), value) };
}
