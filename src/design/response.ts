/**
 * A show, list or update function's response object made into an HTTP response, as CouchDB 1.6
 * does (couch_httpd_external): `code` (default 200), `headers`, and one of `json` (application/json,
 * sent as JSON replies are), `base64` (decoded, application/binary) or `body` (text/html; charset=utf-8),
 * or none (application/json), each default content type applying only when the function set no
 * Content-Type.
 */
import { CouchError } from '../errors.js';
import type { RenderResponse } from '../js/design-function.js';

export interface ShapedResponse {
  status: number;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
  /** The body is the response's `json` member, which CouchDB sends with couch_httpd:send_json. */
  json?: boolean;
}

/** The status, headers and content type of a response object (a list's start() has only these). */
export function responseHead(resp: RenderResponse, defaultType: string, defaultStatus = 200): Omit<ShapedResponse, 'body'> {
  const headers = headersOf(resp.headers);
  let status = defaultStatus;
  if (resp.code !== undefined && resp.code !== null) {
    const code = Number(resp.code);
    if (!Number.isInteger(code) || code < 100 || code > 999) throw new CouchError(500, 'render_error', `invalid response code ${JSON.stringify(resp.code)}`);
    status = code;
  }
  const typeKey = Object.keys(headers).find((k) => k.toLowerCase() === 'content-type');
  const contentType = typeKey ? headers[typeKey]! : defaultType;
  if (typeKey) delete headers[typeKey];
  return { status, headers, contentType };
}

export function shapeResponse(resp: RenderResponse, defaultStatus = 200): ShapedResponse {
  let body: Buffer;
  let defaultType: string;
  if (resp.json !== undefined) {
    body = Buffer.from(JSON.stringify(resp.json) ?? 'null');
    return { ...responseHead(resp, 'application/json', defaultStatus), body, json: true };
  } else if (resp.base64 !== undefined) {
    body = Buffer.from(String(resp.base64), 'base64');
    defaultType = 'application/binary';
  } else if (resp.body !== undefined && resp.body !== null) {
    body = Buffer.from(String(resp.body));
    defaultType = 'text/html; charset=utf-8';
  } else {
    // No body at all: couch_httpd_external's own default type.
    body = Buffer.alloc(0);
    defaultType = 'application/json';
  }
  return { ...responseHead(resp, defaultType, defaultStatus), body };
}

/** A function's `headers` member as header strings (anything else there is ignored). */
function headersOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || v === null || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) continue;
    const text = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
    // Header values cannot carry line breaks (response splitting).
    out[k] = text.replace(/[\r\n]+/g, ' ');
  }
  return out;
}
