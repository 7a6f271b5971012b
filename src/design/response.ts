/**
 * A show, list or update function's response object made into an HTTP response, as CouchDB 1.6
 * does (couch_httpd_external): `code` (default 200), `headers`, and the last of `json`
 * (application/json, sent as JSON replies are), `base64` (decoded, application/binary) or `body`
 * (text/html; charset=utf-8), or none (application/json), each default content type applying
 * only when the function set no Content-Type; any other member is an error.
 */
import { CouchError } from '../errors.js';
import { erlangPretty } from '../erlang-terms.js';
import type { RenderResponse } from '../js/design-function.js';

export interface ShapedResponse {
  status: number;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
  /** The body is the response's `json` member, which CouchDB sends with couch_httpd:send_json. */
  json?: boolean;
}

/**
 * A response object's members as couch_httpd_external:parse_external_response folds them, in
 * order: `code`, `headers` (an object), `stop: true`, and `json`, `body` or `base64`, the last of
 * which says what the body is. Any other member, or `headers` that is no object, fails the
 * response with CouchDB's 500 external_response_error.
 */
function foldResponse(resp: RenderResponse): { code: unknown; headers: unknown; data: { key: 'json' | 'body' | 'base64'; value: unknown } | undefined } {
  let code: unknown;
  let headers: unknown;
  let data: { key: 'json' | 'body' | 'base64'; value: unknown } | undefined;
  for (const [key, value] of Object.entries(resp)) {
    if (value === undefined || key === '') continue;
    if (key === 'code') code = value;
    else if (key === 'json' || key === 'body' || key === 'base64') data = { key, value };
    else if (key === 'headers' && value !== null && typeof value === 'object' && !Array.isArray(value)) headers = value;
    else if (!(key === 'stop' && value === true)) {
      throw new CouchError(500, 'external_response_error', `Invalid data from external server: {${erlangPretty(key)},${erlangPretty(value)}}`);
    }
  }
  return { code, headers, data };
}

/** The status, headers and content type of a response object (a list's start() has only these). */
export function responseHead(resp: RenderResponse, defaultType: string, defaultStatus = 200): Omit<ShapedResponse, 'body'> {
  return headOf(foldResponse(resp), defaultType, defaultStatus);
}

function headOf(folded: { code: unknown; headers: unknown }, defaultType: string, defaultStatus: number): Omit<ShapedResponse, 'body'> {
  const headers = headersOf(folded.headers);
  let status = defaultStatus;
  if (folded.code !== undefined && folded.code !== null) {
    const code = Number(folded.code);
    if (!Number.isInteger(code) || code < 100 || code > 999) throw new CouchError(500, 'render_error', `invalid response code ${JSON.stringify(folded.code)}`);
    status = code;
  }
  const typeKey = Object.keys(headers).find((k) => k.toLowerCase() === 'content-type');
  const contentType = typeKey ? headers[typeKey]! : defaultType;
  if (typeKey) delete headers[typeKey];
  return { status, headers, contentType };
}

export function shapeResponse(resp: RenderResponse, defaultStatus = 200): ShapedResponse {
  const folded = foldResponse(resp);
  const data = folded.data;
  if (data?.key === 'json') {
    const body = Buffer.from(JSON.stringify(data.value) ?? 'null');
    return { ...headOf(folded, 'application/json', defaultStatus), body, json: true };
  }
  if (data?.key === 'base64') return { ...headOf(folded, 'application/binary', defaultStatus), body: Buffer.from(String(data.value), 'base64') };
  if (data?.key === 'body' && data.value !== null) return { ...headOf(folded, 'text/html; charset=utf-8', defaultStatus), body: Buffer.from(String(data.value)) };
  // No body at all: couch_httpd_external's own default type.
  return { ...headOf(folded, 'application/json', defaultStatus), body: Buffer.alloc(0) };
}

/**
 * A function's `headers` member as header strings. A value that is no string fails the response
 * as couch_httpd_external's binary_to_list fails on it: CouchDB's 500 `unknown_error` `badarg`.
 * Names that are no HTTP token are left out (CouchDB would write them raw).
 */
function headersOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new CouchError(500, 'unknown_error', 'badarg');
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) continue;
    // Header values cannot carry line breaks (response splitting).
    out[k] = v.replace(/[\r\n]+/g, ' ');
  }
  return out;
}
