/**
 * Deterministic revision ids, computed as CouchDB computes them: the MD5 of Erlang's external
 * term format (`term_to_binary`, minor version 1) of `[Deleted, ParentPos, ParentRev, Body,
 * Atts]`, where Body is the document's own fields as CouchDB's JSON terms (`{[{Key, Value}]}`)
 * and Atts is `[{Name, Type, Md5}]` per attachment. The same edit made on CouchDB and on Settee
 * (or on two Settee replicas) gets the same revision id.
 *
 * JSON numbers are told apart as CouchDB's parser does only as far as JavaScript can: an
 * integral value is an integer, anything else a float (CouchDB also reads `1.0` as a float), and
 * integers past 2^53 arrive here already rounded.
 */
import { hash } from 'node:crypto';
import { withRoom, writeUtf8 } from './bytes.js';

/** An attachment as a revision id counts it: name, content type and `md5-<base64>` digest. */
export interface RevAttachment {
  name: string;
  contentType: string;
  digest: string;
}

const VERSION = 131;
const NEW_FLOAT_EXT = 70;
const SMALL_INTEGER_EXT = 97;
const INTEGER_EXT = 98;
const ATOM_EXT = 100;
const SMALL_TUPLE_EXT = 104;
const NIL_EXT = 106;
const STRING_EXT = 107;
const LIST_EXT = 108;
const BINARY_EXT = 109;
const SMALL_BIG_EXT = 110;
const LARGE_BIG_EXT = 111;

/** The term being written; reused from one revision to the next. */
let out = Buffer.allocUnsafeSlow(4096);
let pos = 0;

function room(bytes: number): void {
  if (pos + bytes > out.length) out = withRoom(out, pos, pos + bytes);
}

function byte(value: number): void {
  room(1);
  out[pos++] = value;
}

function u32(value: number): void {
  room(4);
  out.writeUInt32BE(value, pos);
  pos += 4;
}

function atom(name: 'true' | 'false' | 'null'): void {
  room(3 + name.length);
  out[pos++] = ATOM_EXT;
  out.writeUInt16BE(name.length, pos);
  pos += 2;
  for (let i = 0; i < name.length; i++) out[pos++] = name.charCodeAt(i);
}

function binary(text: string): void {
  const n = text.length;
  room(5 + n * 3);
  out[pos] = BINARY_EXT;
  const at = pos + 5;
  const length = writeUtf8(out, at, text, 64);
  out[pos + 1] = length >>> 24;
  out[pos + 2] = (length >>> 16) & 0xff;
  out[pos + 3] = (length >>> 8) & 0xff;
  out[pos + 4] = length & 0xff;
  pos = at + length;
}

function bytes(value: Uint8Array): void {
  byte(BINARY_EXT);
  u32(value.length);
  room(value.length);
  out.set(value, pos);
  pos += value.length;
}

function integer(value: number): void {
  if (value >= 0 && value <= 255) {
    byte(SMALL_INTEGER_EXT);
    byte(value);
  } else if (value >= -0x80000000 && value <= 0x7fffffff) {
    byte(INTEGER_EXT);
    room(4);
    out.writeInt32BE(value, pos);
    pos += 4;
  } else {
    // A bignum: its magnitude's bytes, least significant first.
    let magnitude = BigInt(Math.abs(value));
    const digits: number[] = [];
    while (magnitude > 0n) {
      digits.push(Number(magnitude & 0xffn));
      magnitude >>= 8n;
    }
    if (digits.length <= 255) {
      byte(SMALL_BIG_EXT);
      byte(digits.length);
    } else {
      byte(LARGE_BIG_EXT);
      u32(digits.length);
    }
    byte(value < 0 ? 1 : 0);
    for (const d of digits) byte(d);
  }
}

function float(value: number): void {
  byte(NEW_FLOAT_EXT);
  room(8);
  out.writeDoubleBE(value, pos);
  pos += 8;
}

/** A list whose elements are all bytes, which Erlang writes as a string. */
function isByteList(list: readonly unknown[]): boolean {
  if (list.length >= 0x10000) return false;
  for (const v of list) if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) return false;
  return true;
}

function value(v: unknown): void {
  if (v === null || v === undefined) return atom('null');
  switch (typeof v) {
    case 'boolean':
      return atom(v ? 'true' : 'false');
    case 'number':
      return Number.isInteger(v) ? integer(v === 0 ? 0 : v) : float(v);
    case 'string':
      return binary(v);
    case 'object':
      if (Array.isArray(v)) return list(v);
      return object(v as Record<string, unknown>);
    default:
      return atom('null');
  }
}

function list(items: readonly unknown[]): void {
  if (items.length === 0) return byte(NIL_EXT);
  if (isByteList(items)) {
    room(3 + items.length);
    out[pos++] = STRING_EXT;
    out.writeUInt16BE(items.length, pos);
    pos += 2;
    for (const b of items as number[]) out[pos++] = b;
    return;
  }
  byte(LIST_EXT);
  u32(items.length);
  for (const item of items) value(item);
  byte(NIL_EXT);
}

/** `{[{Key, Value}, ...]}` */
function object(obj: Record<string, unknown>): void {
  byte(SMALL_TUPLE_EXT);
  byte(1);
  const start = pos;
  room(5);
  out[pos] = LIST_EXT;
  pos += 5;
  let count = 0;
  for (const key in obj) {
    const v = obj[key];
    if (v === undefined || !Object.hasOwn(obj, key)) continue;
    room(2);
    out[pos++] = SMALL_TUPLE_EXT;
    out[pos++] = 2;
    binary(key);
    value(v);
    count++;
  }
  if (count === 0) {
    // {[]}: the empty list is NIL_EXT alone.
    pos = start;
    return byte(NIL_EXT);
  }
  out.writeUInt32BE(count, start + 1);
  byte(NIL_EXT);
}

/** A revision hash as CouchDB keeps it: 32 hex digits are 16 bytes, anything else its text. */
function revisionHash(text: string): Uint8Array {
  return /^[0-9a-fA-F]{32}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'utf8');
}

/** The 16 bytes of an `md5-<base64>` digest, or undefined for any other digest. */
function md5Of(digest: string): Uint8Array | undefined {
  if (!digest.startsWith('md5-')) return undefined;
  const raw = Buffer.from(digest.slice(4), 'base64');
  return raw.length === 16 ? raw : undefined;
}

/**
 * The hash part of a new revision: `parentRev` is the revision edited (`N-hash`), or null for a
 * document's first; `body` the document's fields without the `_` members.
 */
export function newRevHash(deleted: boolean, parentRev: string | null, body: Readonly<Record<string, unknown>>, attachments: readonly RevAttachment[] = []): string {
  pos = 0;
  byte(VERSION);
  byte(LIST_EXT);
  u32(5);
  atom(deleted ? 'true' : 'false');
  const dash = parentRev === null ? -1 : parentRev.indexOf('-');
  if (parentRev === null || dash < 0) {
    integer(0);
    integer(0);
  } else {
    integer(Number(parentRev.slice(0, dash)));
    bytes(revisionHash(parentRev.slice(dash + 1)));
  }
  object(body as Record<string, unknown>);
  const counted = attachments.flatMap((a) => {
    const md5 = md5Of(a.digest);
    return md5 ? [{ ...a, md5 }] : [];
  });
  if (counted.length === 0) byte(NIL_EXT);
  else {
    byte(LIST_EXT);
    u32(counted.length);
    for (const a of counted) {
      byte(SMALL_TUPLE_EXT);
      byte(3);
      binary(a.name);
      binary(a.contentType);
      bytes(a.md5);
    }
    byte(NIL_EXT);
  }
  byte(NIL_EXT);
  return hash('md5', out.subarray(0, pos), 'hex');
}
