/**
 * CouchDB 1.6's `rewrites` rules (couch_httpd_rewrite), as a pure function from a request (path
 * after `_rewrite`, method, query) to the path and query it is routed to, relative to the design
 * document.
 *
 * A rule is `{from, to, method, query, formats}`. `from` is matched segment by segment: `:name`
 * binds one segment, a final `*` binds the rest, anything else must be equal. Bindings are the
 * path variables plus the request's query parameters; `to` and the rule's `query` values are
 * filled from them (`:name`, `*`). The view parameters that hold JSON (`key`, `startkey`,
 * `endkey`, `keys` ...) are JSON-encoded whatever they hold (and read as JSON when they come from
 * the request), so `"key": [":a", ":b"]` becomes `key=["x","y"]` and `"key": ":a"` `key="x"`;
 * other values are JSON-encoded unless they are strings. The request's other parameters and the
 * path variables are passed on in the query string too, as CouchDB does.
 */
import { CouchError, invalidJson } from '../errors.js';

export interface RewriteRule {
  from?: unknown;
  to?: unknown;
  method?: unknown;
  query?: unknown;
  formats?: unknown;
}

export interface RewriteTarget {
  /** Path segments (decoded) relative to the design document; may hold `..` and `.`. */
  path: string[];
  /** The query string's parameters, in order. */
  query: [string, string][];
}

type Binding = string | string[] | unknown;

const CATCH_ALL = '*';
/** Query parameters CouchDB's rewriter treats as JSON (couch_httpd_rewrite: maybe_json, decode_query_value). */
const JSON_PARAMS = new Set(['key', 'startkey', 'start_key', 'endkey', 'end_key', 'keys']);

function encodeParam(key: string, value: unknown): string {
  return typeof value === 'string' && !JSON_PARAMS.has(key) ? value : JSON.stringify(value);
}

/**
 * A request parameter as a binding: the JSON ones decoded, and no JSON there is a 400
 * `bad_request` `invalid_json` (decode_query_value's ?JSON_DECODE throws it), not a string.
 */
function decodeParam(key: string, value: string): unknown {
  if (!JSON_PARAMS.has(key)) return value;
  try {
    return JSON.parse(value);
  } catch {
    throw invalidJson();
  }
}

/**
 * Decodes the request's JSON parameters (`key`, `startkey` ...) as couch_httpd_rewrite does
 * first of all, whether or not a rule matches: one that is no JSON fails the request (decodeParam).
 */
export function checkQuery(query: readonly [string, string][]): void {
  for (const [k, v] of query) decodeParam(k, v);
}

function segmentsOf(value: unknown): string[] {
  return (typeof value === 'string' ? value : '').split('/').filter((s) => s !== '');
}

/**
 * Checks every rule, matching or not, before any is matched, as couch_httpd_rewrite turns the
 * whole list into its dispatch list (make_rule) first: a rule without a `to` fails the request,
 * a 500 `{"error":"error","reason":"invalid_rewrite_target"}` (the `{error, invalid_rewrite_target}`
 * it throws); with `secure` (`[httpd] secure_rewrites`), so does a `from` or `to` of more than
 * two `..` segments, wherever they stand (path_to_list counts them): a 500
 * `insecure_rewrite_rule`. Members that are not objects are skipped, as its list comprehension
 * skips them.
 */
export function checkRules(rules: readonly RewriteRule[], secure: boolean): void {
  for (const rule of rules) {
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) continue;
    if (secure && typeof rule.from === 'string') checkDotDots(rule.from);
    if (typeof rule.to !== 'string') throw new CouchError(500, 'error', 'invalid_rewrite_target');
    if (secure) checkDotDots(rule.to);
  }
}

function checkDotDots(path: string): void {
  if (segmentsOf(path).filter((s) => s === '..').length > 2) throw new CouchError(500, 'insecure_rewrite_rule', 'too many ../.. segments');
}

/** The first rule matching `method` and `path`, applied (rules checked by checkRules); undefined when none matches. */
export function applyRewrites(rules: readonly RewriteRule[], method: string, path: readonly string[], query: readonly [string, string][]): RewriteTarget | undefined {
  for (const rule of rules) {
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule)) continue;
    // The method is compared as written (bind_method): `get` matches no request.
    const ruleMethod = typeof rule.method === 'string' ? rule.method : CATCH_ALL;
    if (ruleMethod !== CATCH_ALL && ruleMethod !== method) continue;
    const bound = bindPath(segmentsOf(rule.from ?? CATCH_ALL), path);
    if (!bound) continue;
    const formats = rule.formats !== null && typeof rule.formats === 'object' ? (rule.formats as Record<string, unknown>) : {};
    const bindings = new Map<string, Binding>();
    for (const [k, v] of bound.vars) bindings.set(k, format(v, formats[k]));
    for (const [k, v] of query) if (!bindings.has(k)) bindings.set(k, JSON_PARAMS.has(k) ? decodeParam(k, v) : format(v, formats[k]));
    const ruleQuery: [string, string][] = [];
    if (rule.query !== null && typeof rule.query === 'object' && !Array.isArray(rule.query)) {
      for (const [k, v] of Object.entries(rule.query as Record<string, unknown>)) {
        const filled = fill(v, bindings, bound.star);
        if (filled === undefined) continue;
        ruleQuery.push([k, encodeParam(k, filled)]);
      }
    }
    const taken = new Set(ruleQuery.map(([k]) => k));
    const passed: [string, string][] = [];
    for (const [k, v] of bindings) {
      if (taken.has(k)) continue;
      passed.push([k, encodeParam(k, v)]);
    }
    const out: string[] = [];
    for (const part of segmentsOf(rule.to)) {
      if (part === CATCH_ALL) {
        out.push(...bound.rest);
      } else if (part.startsWith(':')) {
        // An unbound variable is the word `undefined`, as make_new_path writes it.
        const v = bindings.has(part.slice(1)) ? bindings.get(part.slice(1)) : 'undefined';
        out.push(...(Array.isArray(v) ? v.map(String) : [typeof v === 'string' ? v : JSON.stringify(v)]));
      } else {
        out.push(part);
      }
    }
    return { path: out, query: [...passed, ...ruleQuery] };
  }
  return undefined;
}

/**
 * Matches a rule's `from` against the path, as couch_httpd_rewrite:bind_path: `:name` binds a
 * segment, and so does `*` (it is a variable there); a `*` at the end also takes the rest of the
 * path, of which there must be at least one segment.
 */
function bindPath(from: readonly string[], path: readonly string[]): { vars: [string, string][]; star: string | undefined; rest: string[] } | undefined {
  const vars: [string, string][] = [];
  let star: string | undefined;
  for (let i = 0; i < from.length; i++) {
    const part = from[i]!;
    if (i >= path.length) return undefined;
    if (part === CATCH_ALL) {
      star = path[i]!;
      if (i === from.length - 1) return { vars, star, rest: path.slice(i) };
    } else if (part.startsWith(':')) {
      vars.push([part.slice(1), path[i]!]);
    } else if (part !== path[i]) {
      return undefined;
    }
  }
  return from.length === path.length ? { vars, star, rest: [] } : undefined;
}

/** A binding as a rule's `formats` says (`int`, `bool`), else the string it is. */
function format(value: string, kind: unknown): Binding {
  if (kind === 'int' && /^-?\d+$/.test(value)) return Number.parseInt(value, 10);
  if (kind === 'bool' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** A rule query value with `:name` and `*` (the segment it bound) filled in; undefined drops the parameter. */
function fill(value: unknown, bindings: Map<string, Binding>, star: string | undefined): unknown {
  if (typeof value === 'string') {
    if (value === CATCH_ALL) return star ?? value;
    if (value.startsWith(':')) return bindings.has(value.slice(1)) ? bindings.get(value.slice(1)) : value;
    return value;
  }
  // In a list only `:name` members are filled; objects go as they are (make_query_list).
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' && v.startsWith(':') ? fill(v, bindings, star) : v));
  return value;
}

/**
 * Resolves `.` and `..` in `base` + `relative` (segment lists). Returns undefined when `..`
 * climbs above the root.
 */
export function resolveSegments(base: readonly string[], relative: readonly string[]): string[] | undefined {
  const out = [...base];
  for (const part of relative) {
    if (part === '.' || part === '') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else {
      out.push(part);
    }
  }
  return out;
}
