import type { IncomingMessage } from 'node:http';
import { badRequest, CouchError, invalidJson, queryParseError, tooLarge, badContentType } from '../errors.js';
import { adminPartyContext, type UserContext } from '../auth/user-context.js';
import type { HeaderMap } from './reply.js';
import { randomBytes } from 'node:crypto';
import { HEADER_REQUEST_ID, HEADER_REQUESTED_PATH, HEADER_VHOST_PATH } from '../couchdb-names.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes one URL path segment as CouchDB does (mochiweb's unquote): `%XX` escapes, and `+`
 * stands for a space, so a literal plus must be sent as `%2B`. Malformed percent-encoding is a
 * 400, not a crash.
 */
export function decodeSegment(segment: string, plusIsSpace = true): string {
  try {
    return decodeURIComponent(plusIsSpace ? segment.replace(/\+/g, ' ') : segment);
  } catch {
    throw badRequest(`Invalid URL encoding in path segment: ${segment}`);
  }
}

/** The verbs `X-HTTP-Method-Override` may name (couch_httpd's list, matched exactly). */
const METHOD_OVERRIDES = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'TRACE', 'CONNECT', 'COPY']);

/** How a caller may see a document a listing embeds (see Request.docView). */
export type DocView = (doc: Record<string, unknown>) => Record<string, unknown>;

/** An embedded document's JSON as `view` shows it; as stored without one. */
export function viewedDocJson(view: DocView | undefined, json: string): string {
  return view ? JSON.stringify(view(JSON.parse(json) as Record<string, unknown>)) : json;
}

/**
 * An incoming request with CouchDB's ways of reading it: raw path segments (so `%2F` in a
 * database name or document id survives routing), typed query parameters and bounded bodies.
 */
export class Request {
  readonly raw: IncomingMessage;
  readonly method: string;
  /** Path segments before percent-decoding, without the empty leading one. */
  readonly rawSegments: string[];
  readonly rawPath: string;
  /** Whether the request came over TLS. */
  readonly secure: boolean;
  readonly query: URLSearchParams;
  /** Created on first use: most requests never need one, and each costs an allocation burst. */
  private abort: AbortController | undefined;
  private gone = false;
  /** Set when the query string had malformed percent-encoding. */
  readonly badQuery: boolean = false;
  private bodyCache: Buffer | undefined;
  /** The request id answers carry (HEADER_REQUEST_ID): the client's, else ten random hex digits. */
  readonly requestId: string;
  /** How long reading the body took, in ms (0 while not read). */
  private bodyMs = 0;
  /** Who is asking; set by authentication before the handler runs. */
  userCtx: UserContext = adminPartyContext();
  /** The authentication handler that established `userCtx` (`_session` reports it). */
  authMethod: string | undefined;
  /** Headers the transport adds to whatever reply this request gets (refreshed cookie, CORS). */
  extraHeaders: HeaderMap | undefined;
  /**
   * How the caller may see each document a listing embeds, set by authorization (another
   * user's replication document without its credentials); undefined: as stored.
   */
  docView: DocView | undefined;

  /** The path and query string handled (after a `_rewrite`, the rewritten one). */
  readonly url: string;
  /** The raw path the client asked for (before any `_rewrite`). */
  readonly requestedPath: string;
  /**
   * `x-couchdb-requested-path` as `_rewrite` sets it when the client sent none: the URL first
   * asked for (CouchDB sets it only when absent, so chained rewrites keep the first URL).
   */
  private readonly requestedPathHeader: string | undefined;

  /** The path asked for under a virtual host (`x-couchdb-vhost-path`), when one routed the request. */
  private readonly vhostPath: string | undefined;

  /**
   * `rewrite`: the URL a design document's `_rewrite` routed this request to (see rewritten());
   * `vhost`: where a virtual host routed it (`[vhosts]`, see http/vhosts.ts).
   */
  constructor(raw: IncomingMessage, secure = false, rewrite?: { url: string; method: string; from: Request }, vhost?: { url: string; vhostPath: string }) {
    this.raw = raw;
    this.secure = rewrite?.from.secure ?? secure;
    const method = (raw.method ?? 'GET').toUpperCase();
    // As CouchDB: a POST may stand for another verb through X-HTTP-Method-Override (for clients
    // that cannot send it); the header is ignored on any other method.
    const override = raw.headers['x-http-method-override'];
    this.method = rewrite?.method ?? (method === 'POST' && typeof override === 'string' && METHOD_OVERRIDES.has(override) ? override : method);
    const url = rewrite?.url ?? vhost?.url ?? raw.url ?? '/';
    this.url = url;
    const q = url.indexOf('?');
    this.rawPath = q === -1 ? url : url.slice(0, q);
    let search = q === -1 ? '' : url.slice(q + 1);
    try {
      // URLSearchParams decodes leniently; check percent-encoding ourselves for a clear error.
      decodeURIComponent(search.replace(/\+/g, ' '));
    } catch {
      search = '';
      this.badQuery = true;
    }
    this.query = new URLSearchParams(search);
    this.vhostPath = rewrite?.from.vhostPath ?? vhost?.vhostPath;
    // CouchDB's requested path is the virtual host's path when there is one.
    this.requestedPath = rewrite?.from.requestedPath ?? (this.vhostPath !== undefined ? this.vhostPath.split('?')[0]! : this.rawPath);
    if (rewrite) {
      // The same exchange: body, user, completion and disconnection are the original's.
      this.userCtx = rewrite.from.userCtx;
      this.authMethod = rewrite.from.authMethod;
      // What the caller may see of embedded documents holds for every form of the request
      // (view parameters folded, a POST body's parameters added, a rewrite).
      this.docView = rewrite.from.docView;
      this.bodyCache = rewrite.from.bodyCache;
      this.parent = rewrite.from;
      this.requestedPathHeader = rewrite.from.header(HEADER_REQUESTED_PATH) ?? rewrite.from.url;
    }
    const givenId = raw.headers[HEADER_REQUEST_ID.toLowerCase()];
    this.requestId = rewrite?.from.requestId ?? (typeof givenId === 'string' && givenId !== '' ? givenId : newRequestId());
    this.rawSegments = this.rawPath.split('/').slice(1);
    if (this.rawSegments.length > 0 && this.rawSegments[this.rawSegments.length - 1] === '' && this.rawSegments.length > 1) {
      // A trailing slash (`/db/`) names the same resource as without it.
      this.rawSegments.pop();
    }
  }

  /** Adds headers to the reply, whatever it turns out to be. */
  addReplyHeaders(headers: HeaderMap): void {
    if (this.parent) {
      this.parent.addReplyHeaders(headers);
      return;
    }
    this.extraHeaders = { ...this.extraHeaders, ...headers };
  }

  /** The request this one was rewritten from. */
  private parent: Request | undefined;

  /** How many times this request was rewritten (a `_rewrite` loop is stopped by it). */
  get rewriteDepth(): number {
    return this.parent ? this.parent.rewriteDepth + 1 : 0;
  }

  /**
   * This request routed to another URL (and method) of the server, by `_rewrite`; a rewrite
   * function may also give it other headers (added to the client's) and another body.
   */
  rewritten(url: string, method: string, replace: { headers?: Record<string, string>; body?: Buffer } = {}): Request {
    const routed = new Request(this.raw, this.secure, { url, method, from: this });
    if (replace.headers) {
      routed.headerOverrides = { ...this.headerOverrides };
      for (const [name, value] of Object.entries(replace.headers)) routed.headerOverrides[name.toLowerCase()] = value;
    } else {
      routed.headerOverrides = this.headerOverrides;
    }
    if (replace.body) routed.bodyCache = replace.body;
    return routed;
  }

  /** Headers a rewrite function set, by lower-case name, over the client's. */
  private headerOverrides: Record<string, string> | undefined;

  /** Aborted when the client goes away, so long-running feeds can stop waiting. */
  get signal(): AbortSignal {
    if (this.parent) return this.parent.signal;
    if (!this.abort) {
      this.abort = new AbortController();
      if (this.gone) this.abort.abort();
    }
    return this.abort.signal;
  }

  private finishers: (() => void)[] | undefined;

  /** Runs `fn` once the response to this request is complete (or abandoned). */
  onFinish(fn: () => void): void {
    if (this.parent) return this.parent.onFinish(fn);
    (this.finishers ??= []).push(fn);
  }

  /** Called by the transport once the response is complete. */
  finished(): void {
    const fns = this.finishers;
    this.finishers = undefined;
    fns?.forEach((fn) => fn());
  }

  /**
   * The client's address as mochiweb's `get(peer)` gives it to CouchDB: a request from this
   * machine or a 10.x network (a proxy) is from the last X-Forwarded-For hop, when there is one.
   */
  get peer(): string {
    const address = (this.raw.socket?.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    if (address !== '127.0.0.1' && !address.startsWith('10.')) return address;
    const forwarded = this.header('x-forwarded-for');
    const last = forwarded?.split(',').pop()?.trim();
    return last ? last : address;
  }

  /** Called by the transport when the connection of this request closes. */
  clientGone(): void {
    this.gone = true;
    this.abort?.abort();
  }

  header(name: string): string | undefined {
    const lower = name.toLowerCase();
    const given = this.headerOverrides?.[lower];
    if (given !== undefined) return given;
    const value = this.raw.headers[lower];
    if (value === undefined && lower === HEADER_REQUESTED_PATH) return this.requestedPathHeader;
    if (value === undefined && lower === HEADER_VHOST_PATH) return this.vhostPath;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** Every header as [name, value], names as the client wrote them, with what a `_rewrite` added. */
  headerList(): [string, string][] {
    const raw = this.raw.rawHeaders;
    const headers: [string, string][] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
    if (this.requestedPathHeader !== undefined && this.raw.headers[HEADER_REQUESTED_PATH] === undefined) {
      headers.push([HEADER_REQUESTED_PATH, this.requestedPathHeader]);
    }
    if (this.vhostPath !== undefined && this.raw.headers[HEADER_VHOST_PATH] === undefined) headers.push([HEADER_VHOST_PATH, this.vhostPath]);
    return headers;
  }

  /** The media type of the body, lower-cased, without parameters. */
  contentType(): string {
    return (this.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  }

  /**
   * Refuses a body not declared JSON, as couch_httpd:validate_ctype does in CouchDB 1.6: the
   * header cut at every `;` (empty pieces dropped) must be `application/json`, spelled exactly so
   * in lower case, with at most one parameter after it.
   */
  requireJsonContentType(): void {
    const pieces = (this.header('content-type') ?? '').split(';').filter((piece) => piece !== '');
    if (pieces[0] !== 'application/json' || pieces.length > 2) throw badContentType();
  }

  has(name: string): boolean {
    return this.query.has(name);
  }

  string(name: string): string | undefined {
    return this.query.get(name) ?? undefined;
  }

  /** A boolean of a view-style query (couch_mrview's parse_boolean): true or false in any case. */
  bool(name: string, fallback = false): boolean {
    const value = this.query.get(name);
    return value === null ? fallback : parseViewBoolean(value);
  }

  /**
   * A flag of a document or `_changes` query, as CouchDB 1.6 reads them: exactly `true` or
   * `false` sets it; any other value is ignored.
   */
  flag(name: string, fallback = false): boolean {
    const value = this.query.get(name);
    return value === 'true' ? true : value === 'false' ? false : fallback;
  }

  int(name: string, fallback: number): number;
  int(name: string): number | undefined;
  int(name: string, fallback?: number): number | undefined {
    const value = this.query.get(name);
    if (value === null) return fallback;
    if (!/^-?\d+$/.test(value.trim())) throw queryParseError(`Invalid integer parameter: "${name}" = ${JSON.stringify(value)}`);
    return Number.parseInt(value, 10);
  }

  /**
   * An integer parameter that CouchDB 1.6 reads with list_to_integer itself (`_uuids` count,
   * `_log` bytes and offset, `_stats` range): a sign and digits, nothing around them. Anything
   * else is an invalid parameter, a 400 (1.6 crashes there with a 500 badarg; CouchDB 3 answers
   * `_uuids` with a 400). `reason` is that 400's.
   */
  strictInt(name: string, fallback: number, reason = `${name} must be an integer`): number {
    const value = this.query.get(name);
    if (value === null) return fallback;
    if (!/^[+-]?\d+$/.test(value)) throw badRequest(reason);
    return Number.parseInt(value, 10);
  }

  /** A JSON-encoded query parameter (keys, startkey, open_revs ...). */
  json(name: string): unknown {
    const value = this.query.get(name);
    if (value === null) return undefined;
    try {
      return JSON.parse(value);
    } catch {
      throw queryParseError(`Invalid JSON in query parameter "${name}": ${value}`);
    }
  }

  /**
   * Whether the client takes `type` (`main/sub`), as mochiweb's accepts_content_type decides it
   * for CouchDB: no Accept header is `*\/*`; `*\/*`, `main/*` or the type itself with a q above
   * 0 accept it, unless the type or `main/*` is listed with q=0.
   */
  acceptsContentType(type: string): boolean {
    const wanted = type.toLowerCase();
    const superType = `${wanted.split('/')[0]}/*`;
    let accepted = false;
    for (const part of (this.header('accept') ?? '*/*').split(',')) {
      const [name = '', ...params] = part.split(';');
      const t = name.trim().toLowerCase();
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      if (Number.isNaN(q)) return false;
      if (q <= 0 && (t === wanted || t === superType)) return false;
      if (q > 0 && (t === '*/*' || t === wanted || t === superType)) accepted = true;
    }
    return accepted;
  }

  /**
   * The encodings of `supported` the client takes, best first, as mochiweb's accepted_encodings
   * reads Accept-Encoding for CouchDB: a malformed q-value is 400 bad_request and a header that
   * refuses every supported encoding (e.g. `*;q=0`) is 406 not_acceptable.
   */
  acceptedEncodings(supported: readonly string[]): string[] {
    const picked = pickAcceptedEncodings(this.header('accept-encoding') ?? '', supported);
    if (picked === 'invalid') throw new CouchError(400, 'bad_request', ''); // CouchDB's bare bad_request
    if (picked.length === 0) throw new CouchError(406, 'not_acceptable', 'unsupported encoding');
    return picked;
  }

  accepts(type: string): boolean {
    const accept = this.header('accept');
    if (!accept) return false;
    return accept.split(',').some((part) => {
      const t = part.split(';')[0]!.trim().toLowerCase();
      return t === type || t === '*/*' || (t.endsWith('/*') && type.startsWith(t.slice(0, -1)));
    });
  }

  /** Reads the whole body, failing with 413 past `limit` bytes. */
  async body(limit: number): Promise<Buffer> {
    if (this.bodyCache) return this.bodyCache;
    if (this.parent) return this.parent.body(limit);
    const declared = Number(this.header('content-length') ?? 0);
    if (declared > limit) {
      this.raw.resume();
      throw tooLarge('Request body is too large');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const started = performance.now();
    for await (const chunk of this.raw) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) {
        this.raw.resume();
        throw tooLarge('Request body is too large');
      }
      chunks.push(buf);
    }
    this.bodyCache = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    this.bodyMs = performance.now() - started;
    return this.bodyCache;
  }

  /** Milliseconds spent reading the body (HEADER_BODY_TIME), whole. */
  get bodyTime(): number {
    return this.parent ? this.parent.bodyTime : Math.round(this.bodyMs);
  }

  async text(limit: number): Promise<string> {
    const buf = await this.body(limit);
    try {
      return utf8.decode(buf);
    } catch {
      throw badRequest('Invalid UTF-8 in request body');
    }
  }

  /** Parses the body as JSON; an empty body is `undefined`. */
  async jsonBody(limit: number): Promise<unknown> {
    const text = await this.text(limit);
    if (text.trim() === '') return undefined;
    return parseJson(text);
  }
}

/** A boolean of a view-style query as couch_mrview_http:parse_boolean reads it: true or false in any case. */
export function parseViewBoolean(value: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw queryParseError(`Invalid boolean parameter: ${JSON.stringify(value)}`);
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof RangeError) throw badRequest('JSON is nested too deeply');
    throw invalidJson();
  }
}

/** Random bytes drawn in bulk: ids are made for every request. */
let idBytes = Buffer.alloc(0);
let idAt = 0;

/** Ten random hex digits, as CouchDB makes a request id (five random bytes). */
function newRequestId(): string {
  if (idAt + 5 > idBytes.length) {
    idBytes = randomBytes(5 * 1024);
    idAt = 0;
  }
  idAt += 5;
  return idBytes.toString('hex', idAt - 5, idAt);
}

/**
 * mochiweb_util's parse_qvalues and pick_accepted_encodings: the `supported` encodings an
 * Accept-Encoding header allows, by descending q (stable), with `identity` last unless refused;
 * `*` stands for every supported encoding not named otherwise. 'invalid' for a bad q-value.
 */
export function pickAcceptedEncodings(header: string, supported: readonly string[], fallback = 'identity'): string[] | 'invalid' {
  const qualities: [string, number][] = [];
  for (const item of header.toLowerCase().split(',')) {
    if (item.trim() === '') continue;
    const [name = '', ...params] = item.split(';').filter((token) => token !== '');
    // Parameters other than q stay part of the name (so `gzip;level=1` is not gzip).
    const others: string[] = [];
    let q = 1;
    for (const [at, param] of params.map((p) => p.replace(/\s/g, '')).entries()) {
      const kv = /^([^=]+)=([^=]+)$/.exec(param);
      if (!kv) return 'invalid';
      if (kv[1] !== 'q') {
        others.push(param);
        continue;
      }
      if (!/^[01](\.\d{1,3})?$/.test(kv[2]!)) return 'invalid';
      q = Number(kv[2]);
      if (q > 1) return 'invalid';
      others.push(...params.slice(at + 1));
      break;
    }
    qualities.push([[name.trim(), ...others].join(';'), q]);
  }
  const sorted = qualities.map((entry, i) => ({ entry, i })).sort((a, b) => b.entry[1] - a.entry[1] || a.i - b.i).map((x) => x.entry);
  const accepted = sorted.filter(([, q]) => q > 0).map(([e]) => e);
  const refusedNamed = sorted.filter(([, q]) => q <= 0).map(([e]) => e);
  const refused = refusedNamed.flatMap((e) => (e === '*' ? supported.filter((s) => !accepted.includes(s)) : [e]));
  const chosen = accepted.flatMap((e) => (e === '*' ? supported.filter((s) => !accepted.includes(s) && !refused.includes(s)) : [e]));
  if (!chosen.includes(fallback)) chosen.push(fallback);
  return chosen.filter((e) => supported.includes(e) && !refused.includes(e));
}
