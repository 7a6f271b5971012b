/**
 * Streaming MIME multipart (RFC 2046) for CouchDB's attachment protocols: `multipart/related`
 * document PUTs whose attachments say `follows: true`, `multipart/related` document GETs, and
 * `multipart/mixed` `open_revs` responses whose parts are themselves `multipart/related`.
 *
 * Parsing is pull-based and bounded: the parser reads the source only as fast as the consumer
 * reads part bodies, holds at most one source chunk plus a delimiter's worth of bytes, and never
 * buffers a part body unless `buffer(limit)` asks it to. Part bodies are delimited by boundaries
 * only; a part's Content-Length header is informative and ignored.
 */
import { randomBytes } from 'node:crypto';
import { badRequest, tooLarge } from '../errors.js';

export interface MultipartPart {
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The part's body, streamed. Must be consumed (or `skip()`ped) before asking for the next part. */
  body: AsyncIterable<Buffer>;
  /**
   * Reads the whole body into one Buffer, failing with a CouchError 413 past `limit` bytes
   * (`reason` overrides its message) or 400 when the multipart body is malformed.
   */
  buffer(limit: number, reason?: string): Promise<Buffer>;
  /** Discards the rest of the body. */
  skip(): Promise<void>;
}

export interface OutgoingPart {
  headers: Record<string, string>;
  body: string | Buffer | AsyncIterable<Buffer | string>;
}

const CR = 13;
const LF = 10;
const SP = 32;
const HTAB = 9;
const DASH = 45;
/** RFC 2046 allows 70; be lenient with clients that exceed it. */
const MAX_BOUNDARY = 200;
/** A part's header block past this is refused (400), so headers cannot exhaust memory. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Transport padding (whitespace) allowed after a delimiter. */
const MAX_PADDING = 1024;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A random boundary: 32 hex digits, so no body contains it by chance. */
export function newBoundary(): string {
  return randomBytes(16).toString('hex');
}

/** Sets a property even when its name is `__proto__`. */
function setOwn(target: Record<string, string>, name: string, value: string): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Why `boundary` is not usable, or undefined when it is. */
function boundaryProblem(boundary: string): string | undefined {
  if (boundary.length === 0) return 'Multipart boundary is empty';
  if (boundary.length > MAX_BOUNDARY) return `Multipart boundary is longer than ${MAX_BOUNDARY} characters`;
  // Printable ASCII (space allowed, but not last): anything else cannot survive a header line.
  if (!/^[\x20-\x7e]*[\x21-\x7e]$/.test(boundary)) return 'Malformed multipart boundary';
  return undefined;
}

/**
 * Splits a header value such as a Content-Type or Content-Disposition into its main value
 * (trimmed, lower-cased) and its parameters (names lower-cased; quoted strings unquoted, the
 * first occurrence of a name wins). An unterminated quoted string is a CouchError 400.
 */
export function parseHeaderValue(header: string): { value: string; params: Record<string, string> } {
  const params: Record<string, string> = {};
  let i = header.indexOf(';');
  const value = (i === -1 ? header : header.slice(0, i)).trim().toLowerCase();
  while (i !== -1 && i < header.length) {
    i++; // past ';'
    const eq = header.indexOf('=', i);
    const semi = header.indexOf(';', i);
    if (eq === -1 || (semi !== -1 && semi < eq)) {
      i = semi; // a parameter without a value: ignored
      continue;
    }
    const name = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (i < header.length && (header[i] === ' ' || header[i] === '\t')) i++;
    let paramValue: string;
    if (header[i] === '"') {
      let text = '';
      let j = i + 1;
      for (;;) {
        if (j >= header.length) throw badRequest(`Unterminated quoted string in header: ${header}`);
        const c = header[j]!;
        if (c === '"') break;
        if (c === '\\' && j + 1 < header.length) {
          text += header[j + 1];
          j += 2;
        } else {
          text += c;
          j++;
        }
      }
      paramValue = text;
      i = header.indexOf(';', j + 1);
    } else {
      const end = header.indexOf(';', i);
      paramValue = (end === -1 ? header.slice(i) : header.slice(i, end)).trim();
      i = end;
    }
    if (name !== '' && !Object.prototype.hasOwnProperty.call(params, name)) setOwn(params, name, paramValue);
  }
  return { value, params };
}

/** A header parameter value as a quoted string (`"a \"b\""`), for Content-Disposition filenames. */
export function quoteHeaderParam(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** The boundary parameter of a multipart Content-Type; a CouchError 400 when absent or malformed. */
export function boundaryOf(contentType: string): string {
  const { value, params } = parseHeaderValue(contentType);
  if (!value.startsWith('multipart/')) throw badRequest(`Content-Type is not multipart: ${contentType}`);
  const boundary = params['boundary'];
  if (boundary === undefined || boundary === '') throw badRequest('Multipart Content-Type has no boundary');
  const problem = boundaryProblem(boundary);
  if (problem) throw badRequest(problem);
  return boundary;
}

function toBuffer(chunk: Buffer | Uint8Array | string): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * The parser's state machine over one source. `pending` holds the unconsumed bytes; everything
 * before it has been handed out or discarded. Between source reads it holds at most one source
 * chunk plus the few bytes that might start a delimiter.
 */
class Reader {
  private readonly body: AsyncIterable<Buffer | Uint8Array | string>;
  private source: AsyncIterator<Buffer | Uint8Array | string> | undefined;
  /** CRLF `--` boundary. */
  private readonly delim: Buffer;
  /** A virtual CRLF lets the first delimiter sit at the very start of the body. */
  private pending: Buffer = Buffer.from('\r\n');
  private ended = false;
  private failure: unknown;
  private busy = false;
  current: Part | undefined;
  private partEnded = false;

  constructor(body: AsyncIterable<Buffer | Uint8Array | string>, boundary: string) {
    this.body = body;
    this.delim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** Appends the next non-empty source chunk to `pending`; false at the end of the source. */
  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    this.source ??= this.body[Symbol.asyncIterator]();
    for (;;) {
      const r = await this.source.next();
      if (r.done) {
        this.ended = true;
        return false;
      }
      const chunk = toBuffer(r.value);
      if (chunk.length === 0) continue;
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      return true;
    }
  }

  /** Runs a step, remembering a failure so every later call fails the same way. */
  private async guard<T>(step: () => Promise<T>): Promise<T> {
    if (this.failure !== undefined) throw this.failure;
    if (this.busy) throw new Error('Multipart part body read concurrently with another read');
    this.busy = true;
    try {
      return await step();
    } catch (err) {
      this.failure = err;
      throw err;
    } finally {
      this.busy = false;
    }
  }

  /**
   * The next bytes before the next delimiter, or null once the delimiter has been consumed
   * (`pending` then starts right after `--boundary`). At the end of the source, throws a 400
   * with `truncated` as its reason.
   */
  private async scan(truncated: string): Promise<Buffer | null> {
    const delim = this.delim;
    let from = 0;
    for (;;) {
      const p = this.pending;
      const at = p.indexOf(delim, from);
      if (at !== -1) {
        const verdict = delimiterEnd(p, at + delim.length);
        if (verdict === NOT_DELIMITER) {
          from = at + 1; // boundary text followed by something else: data
          continue;
        }
        if (at > 0) {
          this.pending = p.subarray(at); // the next call decides on the delimiter
          return p.subarray(0, at);
        }
        if (verdict === DELIMITER) {
          this.pending = p.subarray(delim.length);
          return null;
        }
        if (!(await this.fill())) throw badRequest('Multipart body ended without a closing boundary');
        from = 0;
        continue;
      }
      // Hold back only a suffix that could begin a delimiter split across chunks.
      let keep = p.length;
      let cr = p.indexOf(CR, Math.max(from, p.length - (delim.length - 1)));
      while (cr !== -1) {
        if (delim.compare(p, cr, p.length, 0, p.length - cr) === 0) {
          keep = cr;
          break;
        }
        cr = p.indexOf(CR, cr + 1);
      }
      if (keep > 0) {
        this.pending = p.subarray(keep);
        return p.subarray(0, keep);
      }
      if (!(await this.fill())) throw badRequest(truncated);
      from = 0;
    }
  }

  /** Skips everything up to and including the first delimiter. */
  preamble(boundary: string): Promise<void> {
    return this.guard(async () => {
      const reason = `Multipart body does not contain its boundary "${boundary}"`;
      while ((await this.scan(reason)) !== null) {
        // the preamble is ignored
      }
    });
  }

  /**
   * After a delimiter: the next part's headers, or null at the closing delimiter (after which
   * the epilogue is read and discarded).
   */
  head(): Promise<Record<string, string> | null> {
    return this.guard(async () => {
      if (this.pending[0] === DASH && this.pending[1] === DASH) {
        // The closing delimiter; the epilogue is ignored, but read so the source completes.
        this.pending = Buffer.alloc(0);
        while (await this.fill()) this.pending = Buffer.alloc(0);
        return null;
      }
      // Transport padding, then a line end: `scan` has checked they are all there.
      const i = this.pending.indexOf(LF);
      this.pending = this.pending.subarray(i + 1);
      return this.headers();
    });
  }

  /** Reads a header block up to its blank line, accepting CRLF or bare LF line ends. */
  private async headers(): Promise<Record<string, string>> {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const p = this.pending;
      const lf = p.indexOf(LF, start);
      if (lf === -1) {
        if (p.length > MAX_HEADER_BYTES) throw badRequest('Multipart part headers are too large');
        if (!(await this.fill())) throw badRequest('Multipart body ended inside part headers');
        continue;
      }
      if (lf > MAX_HEADER_BYTES) throw badRequest('Multipart part headers are too large');
      const end = lf > start && p[lf - 1] === CR ? lf - 1 : lf;
      if (end === start) {
        this.pending = p.subarray(lf + 1);
        break;
      }
      lines.push(p.toString('utf8', start, end));
      start = lf + 1;
    }
    return parseHeaderLines(lines);
  }

  /** Starts `part` as the current part. */
  begin(part: Part): void {
    this.current = part;
    this.partEnded = false;
  }

  /** The next chunk of `part`'s body, or null at its end. */
  read(part: Part): Promise<Buffer | null> {
    if (part !== this.current) {
      return Promise.reject(new Error('Multipart part body read after the parser moved to the next part'));
    }
    if (this.partEnded && this.failure === undefined) return Promise.resolve(null);
    return this.guard(async () => {
      const chunk = await this.scan('Multipart body ended inside a part, without a closing boundary');
      if (chunk === null) this.partEnded = true;
      return chunk;
    });
  }

  /** Discards whatever the consumer left of the current part's body. */
  async finish(part: Part): Promise<void> {
    if (this.busy) throw new Error('Next multipart part requested while a part body is being read');
    while ((await this.read(part)) !== null) {
      // skipped
    }
    this.current = undefined;
  }

  /** Releases the source when parsing stops before its end. */
  async release(): Promise<void> {
    this.current = undefined;
    if (this.ended || !this.source) return;
    this.ended = true;
    try {
      await this.source.return?.();
    } catch {
      // the source is being abandoned anyway
    }
  }
}

const DELIMITER = 0;
const NOT_DELIMITER = 1;
const UNDECIDED = 2;

/**
 * Whether `\r\n--boundary` found in `p` ending at `i` is a delimiter: one followed by `--` (the
 * close) or by optional whitespace and a line end. Anything else is body data (as in Go's
 * mime/multipart), so a body may contain the boundary text followed by other characters.
 * UNDECIDED when `p` ends before the answer is known.
 */
function delimiterEnd(p: Buffer, i: number): number {
  if (i >= p.length) return UNDECIDED;
  if (p[i] === DASH) {
    if (i + 1 >= p.length) return UNDECIDED;
    return p[i + 1] === DASH ? DELIMITER : NOT_DELIMITER;
  }
  let j = i;
  while (j < p.length && (p[j] === SP || p[j] === HTAB)) if (++j - i > MAX_PADDING) return NOT_DELIMITER;
  if (j >= p.length) return UNDECIDED;
  if (p[j] === LF) return DELIMITER;
  if (p[j] !== CR) return NOT_DELIMITER;
  if (j + 1 >= p.length) return UNDECIDED;
  return p[j + 1] === LF ? DELIMITER : NOT_DELIMITER;
}

function parseHeaderLines(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  let last: string | undefined;
  for (const line of lines) {
    const first = line.charCodeAt(0);
    if (first === SP || first === HTAB) {
      // A folded continuation of the previous header's value.
      if (last === undefined) throw badRequest(`Malformed multipart part header: ${JSON.stringify(line.slice(0, 100))}`);
      const folded = line.trim();
      if (folded !== '') setOwn(headers, last, headers[last] === '' ? folded : `${headers[last]} ${folded}`);
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim().toLowerCase();
    if (!TOKEN.test(name)) throw badRequest(`Malformed multipart part header: ${JSON.stringify(line.slice(0, 100))}`);
    const value = line.slice(colon + 1).trim();
    const previous = Object.prototype.hasOwnProperty.call(headers, name) ? headers[name] : undefined;
    setOwn(headers, name, previous === undefined ? value : `${previous}, ${value}`);
    last = name;
  }
  return headers;
}

class Part implements MultipartPart {
  readonly headers: Record<string, string>;
  readonly body: AsyncIterable<Buffer>;
  private readonly reader: Reader;

  constructor(reader: Reader, headers: Record<string, string>) {
    this.reader = reader;
    this.headers = headers;
    this.body = { [Symbol.asyncIterator]: () => this.chunks() };
  }

  private async *chunks(): AsyncGenerator<Buffer> {
    for (let c = await this.reader.read(this); c !== null; c = await this.reader.read(this)) yield c;
  }

  async buffer(limit: number, reason?: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for (let c = await this.reader.read(this); c !== null; c = await this.reader.read(this)) {
      size += c.length;
      if (size > limit) throw tooLarge(reason ?? `Multipart part is larger than ${limit} bytes`);
      chunks.push(c);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  }

  async skip(): Promise<void> {
    if (this.reader.current !== this) return;
    while ((await this.reader.read(this)) !== null) {
      // discarded
    }
  }
}

async function* parts(reader: Reader, boundary: string): AsyncGenerator<MultipartPart> {
  try {
    await reader.preamble(boundary);
    for (;;) {
      const headers = await reader.head();
      if (headers === null) return;
      const part = new Part(reader, headers);
      reader.begin(part);
      yield part;
      await reader.finish(part);
    }
  } finally {
    await reader.release();
  }
}

/**
 * Parses a multipart body from a byte stream; yields parts in order. Malformed input (missing
 * boundary, truncated body, no closing delimiter, bad part headers) throws a CouchError 400.
 * The preamble and epilogue are ignored (the epilogue is read to the end of the source).
 *
 * Pull-based: asking for the next part discards what the consumer left unread of the previous
 * one. When parsing stops early (an error, or the consumer breaking out of its loop) the source
 * iterator's `return()` is called, which destroys a Node stream; pass
 * `stream.iterator({ destroyOnReturn: false })` to keep it.
 */
export function parseMultipart(
  body: AsyncIterable<Buffer | Uint8Array | string>,
  boundary: string,
): AsyncIterable<MultipartPart> {
  const problem = boundaryProblem(boundary);
  if (problem) throw badRequest(problem);
  return parts(new Reader(body, boundary), boundary);
}

function checkHeaders(headers: Record<string, string>): string {
  let text = '';
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) throw new Error(`Invalid multipart header name: ${JSON.stringify(name)}`);
    if (/[\r\n\0]/.test(value)) throw new Error(`Invalid multipart header value for ${name}: ${JSON.stringify(value)}`);
    text += `${name}: ${value}\r\n`;
  }
  return text;
}

/**
 * Where CouchDB's multipart writers frame a body differently. The default is couch_doc's
 * (`--b CRLF ... CRLF --b--`); chttpd_db's `_bulk_get` writer (bulk_get_ret_multipart) starts
 * every part with CRLF, the first too, ends with CRLF, and writes nothing for no parts.
 */
export interface MultipartFraming {
  /** A CRLF before the first delimiter as before every other one. */
  crlfBeforeFirst?: boolean;
  /** A CRLF after the closing delimiter. */
  crlfAfterClose?: boolean;
  /** No parts: an empty body, without even the closing delimiter. */
  emptyWithoutParts?: boolean;
}

/** The bytes before a part's body: its delimiter (no CRLF before the first unless framed so), headers and blank line. */
function partHead(boundary: string, headers: Record<string, string>, first: boolean, framing: MultipartFraming): string {
  return `${first && !framing.crlfBeforeFirst ? '' : '\r\n'}--${boundary}\r\n${checkHeaders(headers)}\r\n`;
}

function closing(boundary: string, empty: boolean, framing: MultipartFraming): string {
  if (empty && framing.emptyWithoutParts) return '';
  return `${empty && !framing.crlfBeforeFirst ? '' : '\r\n'}--${boundary}--${framing.crlfAfterClose ? '\r\n' : ''}`;
}

/**
 * Writes a multipart body as CouchDB does: `--b CRLF headers CRLF body CRLF --b ... --b--`, no
 * trailing CRLF, unless `framing` says otherwise. String bodies are UTF-8; iterable bodies are
 * streamed through chunk by chunk (a nested `writeMultipart` works as a body). Header names must
 * be tokens and values must not contain line breaks (an Error otherwise: quote parameters with
 * `quoteHeaderParam`).
 */
export async function* writeMultipart(
  boundary: string,
  parts: AsyncIterable<OutgoingPart> | Iterable<OutgoingPart>,
  framing: MultipartFraming = {},
): AsyncGenerator<Buffer | string> {
  const problem = boundaryProblem(boundary);
  if (problem) throw new Error(problem);
  let first = true;
  for await (const part of parts) {
    const head = partHead(boundary, part.headers, first, framing);
    first = false;
    const body = part.body;
    if (typeof body === 'string') {
      yield head + body;
    } else if (body instanceof Uint8Array) {
      yield head;
      if (body.length > 0) yield toBuffer(body);
    } else {
      yield head;
      for await (const chunk of body) if (chunk.length > 0) yield chunk;
    }
  }
  const close = closing(boundary, first, framing);
  if (close !== '') yield close;
}

/**
 * The exact byte length `writeMultipart` produces for parts of the given body lengths, for a
 * Content-Length header on a streamed response.
 */
export function multipartLength(
  boundary: string,
  parts: Iterable<{ headers: Record<string, string>; length: number }>,
): number {
  let total = 0;
  let first = true;
  for (const part of parts) {
    total += Buffer.byteLength(partHead(boundary, part.headers, first, {})) + part.length;
    first = false;
  }
  return total + Buffer.byteLength(closing(boundary, first, {}));
}
