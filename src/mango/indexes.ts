/**
 * Mango index definitions: the special `_all_docs` index every database has, and JSON indexes
 * kept in design documents with `"language": "query"` exactly as CouchDB 2/3 writes them:
 *
 *   {"_id": "_design/<ddoc>", "language": "query", "views": {"<name>": {
 *      "map": {"fields": {"a": "asc"}, "partial_filter_selector": {...normalized...}},
 *      "reduce": "_count", "options": {"def": <the index as the client gave it>}}}}
 *
 * (mango_idx, mango_idx_view, mango_idx_special). Reading, adding and removing them here is
 * pure; the engine (find.ts) reads and writes the design documents.
 */
import { createHash } from 'node:crypto';
import { compareUtf8 } from '../views/erlang-term-order.js';
import { mangoError } from './errors.js';
import { erlangTerm } from '../erlang-terms.js';
import { isObject, normalize, type JsonObject, type Selector } from './selector.js';
import { validateIndexDef, validateSort, type Direction, type IndexCreateOptions } from './options.js';

export const QUERY_LANGUAGE = 'query';

export interface MangoIndex {
  /** `_design/...`; null for `_all_docs`. */
  ddoc: string | null;
  name: string;
  type: 'special' | 'json';
  /** The indexed fields, in key order. */
  columns: string[];
  directions: Direction[];
  /** The definition as GET `_index` lists it. */
  def: JsonObject;
  /** Only documents matching it are in the index. */
  partialFilter: Selector | undefined;
}

export const ALL_DOCS_INDEX: MangoIndex = {
  ddoc: null,
  name: '_all_docs',
  type: 'special',
  columns: ['_id'],
  directions: ['asc'],
  def: { fields: [{ _id: 'asc' }] },
  partialFilter: undefined,
};

/** An index as `GET _index` and `_explain` show it. */
export function indexJson(idx: MangoIndex): JsonObject {
  if (idx.type === 'special') return { ddoc: null, name: idx.name, type: 'special', def: idx.def };
  return { ddoc: idx.ddoc, name: idx.name, type: idx.type, partitioned: false, def: idx.def };
}

/** CouchDB's order of index records: `_all_docs` first, then by design document id and name. */
export function compareIndexes(a: MangoIndex, b: MangoIndex): number {
  if (a.ddoc === null || b.ddoc === null) return a.ddoc === b.ddoc ? 0 : a.ddoc === null ? -1 : 1;
  return compareUtf8(a.ddoc, b.ddoc) || compareUtf8(a.name, b.name);
}

/** The JSON indexes of a design document; views that are not valid index definitions are skipped. */
export function indexesOfDesignDoc(ddoc: JsonObject): MangoIndex[] {
  if (ddoc['language'] !== QUERY_LANGUAGE || typeof ddoc['_id'] !== 'string') return [];
  const views = ddoc['views'];
  if (!isObject(views)) return [];
  const out: MangoIndex[] = [];
  for (const [name, view] of Object.entries(views)) {
    const idx = isObject(view) ? indexOfView(ddoc['_id'], name, view) : undefined;
    if (idx) out.push(idx);
  }
  return out;
}

function indexOfView(ddocId: string, name: string, view: JsonObject): MangoIndex | undefined {
  const map = view['map'];
  if (!isObject(map) || !isObject(view['options']) || !isObject(map['fields'])) return undefined;
  const fieldsObj = map['fields'];
  let columns = Object.keys(fieldsObj);
  // JavaScript objects put integer-like keys first: the definition's list keeps the order given.
  const given = (view['options'] as JsonObject)['def'];
  if (isObject(given) && Array.isArray(given['fields'])) {
    try {
      const ordered = validateSort(given['fields']).map((s) => s.field);
      if (ordered.length === columns.length && ordered.every((f) => Object.prototype.hasOwnProperty.call(fieldsObj, f))) columns = ordered;
    } catch {
      // keep the map's order
    }
  }
  const directions = columns.map((c) => (fieldsObj[c] === 'desc' ? 'desc' : 'asc') as Direction);
  let partialFilter: Selector | undefined;
  const stored = isObject(map['partial_filter_selector']) && Object.keys(map['partial_filter_selector']).length > 0
    ? map['partial_filter_selector']
    : isObject(map['selector']) && Object.keys(map['selector']).length > 0 ? map['selector'] : undefined;
  if (stored) {
    try {
      partialFilter = normalize(stored);
    } catch {
      return undefined;
    }
  }
  const def: JsonObject = {};
  for (const [key, value] of Object.entries(map)) {
    if (key === 'fields') def['fields'] = columns.map((c, i) => ({ [c]: directions[i]! }));
    else if (key === 'partial_filter_selector' && isObject(value) && Object.keys(value).length === 0) continue;
    else def[key] = value;
  }
  return { ddoc: ddocId, name, type: 'json', columns, directions, def, partialFilter };
}

/**
 * Why a design document in the `query` language cannot be saved, or undefined: its views must
 * be objects whose maps are index definitions (objects), as CouchDB 3's couch_mrview checks.
 * Design documents in other languages are left as CouchDB 1.6 leaves them.
 */
export function queryDesignDocProblem(body: Readonly<Record<string, unknown>>): string | undefined {
  if (body['language'] !== QUERY_LANGUAGE || body['views'] === undefined) return undefined;
  const views = body['views'];
  if (!isObject(views)) return '`views` field must have object type';
  for (const [name, view] of Object.entries(views)) {
    if (!isObject(view)) return `\`views.${name}\` field must have object type`;
    if (name === 'lib') continue;
    if (view['map'] === undefined) return `View \`${name}\` must contain map function`;
    if (!isObject(view['map'])) return `\`views.${name}.map\` field must have object type`;
  }
  return undefined;
}

/** A new JSON index from a `POST _index` body: its design document id, name and view. */
export interface NewIndex { ddoc: string; name: string; view: JsonObject }

export function newIndex(opts: IndexCreateOptions): NewIndex {
  if (opts.type === 'text') throw mangoError(503, 'required index service unavailable', 'text');
  if (opts.type !== 'json') throw mangoError(400, 'invalid_index', `Invalid type for index: ${opts.type}`);
  const { fields, partialFilter } = validateIndexDef(opts.def);
  // CouchDB names an unnamed index (and its design document) by a SHA-1 of its definition and
  // options; the same request gives the same name, so repeating it finds the index it made.
  const generated = createHash('sha1').update(JSON.stringify([opts.def, opts.type, opts.name ?? null, opts.ddoc ?? null])).digest('hex');
  const name = opts.name ?? generated;
  const ddoc = opts.ddoc === undefined ? `_design/${generated}` : opts.ddoc.startsWith('_design/') ? opts.ddoc : `_design/${opts.ddoc}`;
  const view: JsonObject = {
    map: { fields: Object.fromEntries(fields.map((f) => [f.field, f.dir])), partial_filter_selector: partialFilter },
    reduce: '_count',
    options: { def: opts.def },
  };
  return { ddoc, name, view };
}

/**
 * The design document with the index added (or replaced); `undefined` when it is already there
 * as given (`"result": "exists"`). `existing` is the current body, or undefined for a new one.
 */
export function withIndex(existing: JsonObject | undefined, idx: NewIndex): JsonObject | undefined {
  if (existing && existing['language'] !== QUERY_LANGUAGE) {
    // mango_util:check_lang reports what lists:keyfind found: the {<<"language">>, Value} pair, or false.
    const found = Object.prototype.hasOwnProperty.call(existing, 'language') ? `{${erlangTerm('language')},${erlangTerm(existing['language'])}}` : 'false';
    throw mangoError(400, 'invalid_ddoc_lang', `Existing design doc has an invalid language: ${found}`);
  }
  const body: JsonObject = existing ? structuredClone(existing) : { _id: idx.ddoc, language: QUERY_LANGUAGE };
  const views = isObject(body['views']) ? body['views'] : {};
  if (existing && JSON.stringify(views[idx.name]) === JSON.stringify(idx.view)) return undefined;
  views[idx.name] = idx.view;
  body['views'] = views;
  return body;
}

/**
 * The design document without the index `name`: the remaining body, or `null` when nothing but
 * the language would remain (the design document is then deleted, as CouchDB does).
 */
export function withoutIndex(existing: JsonObject, name: string): JsonObject | null {
  const body = structuredClone(existing);
  const views = body['views'];
  if (!isObject(views) || !Object.prototype.hasOwnProperty.call(views, name)) {
    throw mangoError(404, 'invalid_index', `JSON index ${name} not found in this design doc.`);
  }
  delete views[name];
  if (Object.keys(views).length === 0) delete body['views'];
  const rest = Object.keys(body).filter((k) => k !== '_id' && k !== '_rev');
  return rest.length === 1 && rest[0] === 'language' && body['language'] === QUERY_LANGUAGE ? null : body;
}
