/**
 * How a map function's output becomes stored view rows: row keys (`k <view> <sort key> <docid>
 * 0x00 <n:2>`) and row values (the JSON object a map query answers).
 *
 * During an index build the sandbox's worker threads run `encodeMapOutput` on what the map
 * functions emitted (they load this module at start-up), so collation and JSON encoding happen
 * beside the map functions, not on the server's main thread; the main thread reads the packed
 * result with `readMapOutput` and writes it as it is.
 *
 * Packed layout, per document, per view (in index order): u32 row count, then per row either
 * u16 key length, the row key and u32 value length, the value; or, for a key whose sort key is
 * longer than SORT_KEY_MAX (its row key needs an order tag from the store), u16 0xFFFF, u32
 * length and the key as JSON, then the value as before.
 */
import { createHash } from 'node:crypto';
import { MAX_KEY_BYTES } from '../storage/types.js';
import { sortKey } from './collation.js';

export const ROW = 0x6b; // k
/** Longest sort key kept whole; longer ones keep this much and an order tag (long-keys.ts). */
export const SORT_KEY_MAX = 1400;
const LONG_KEY = 0xffff;

/** What the workers need to encode one batch: the documents' ids and, per view, its map function and collation. */
export interface RowEncodingContext {
  ids: string[];
  views: { map: number; raw: boolean }[];
}

/** `k <view> <sort key> <docid> 0x00 <n:2>` */
export function rowKeyOf(view: number, sk: Buffer, id: string, n: number): Buffer {
  const idBytes = idBytesWithin(id, MAX_KEY_BYTES - 2 - sk.length - 3);
  const out = Buffer.allocUnsafe(2 + sk.length + idBytes.length + 3);
  out[0] = ROW;
  out[1] = view;
  sk.copy(out, 2);
  idBytes.copy(out, 2 + sk.length);
  out[2 + sk.length + idBytes.length] = 0;
  out.writeUInt16BE(n, 3 + sk.length + idBytes.length);
  return out;
}

/**
 * A document id's bytes in at most `room` bytes: ids too long for the store's key limit keep
 * their start and a hash of the whole id, so they stay distinct and nearly in order.
 */
export function idBytesWithin(id: string, room: number): Buffer {
  const bytes = Buffer.from(id, 'utf8');
  if (bytes.length <= room) return bytes;
  const hash = createHash('md5').update(bytes).digest('hex').slice(0, 16);
  return Buffer.concat([bytes.subarray(0, Math.max(0, room - hash.length)), Buffer.from(hash, 'latin1')]);
}

/** The stored row: `{"id":…,"key":…,"value":…}` (value last: reductions read it from the end). */
export function rowValueText(idJson: string, key: unknown, value: unknown): string {
  return `{"id":${idJson},"key":${JSON.stringify(key ?? null)},"value":${JSON.stringify(value ?? null)}}`;
}

/** Thrown when the sandbox's output does not have the shape of map results. */
export class MalformedMapOutput extends Error {}

/**
 * Encodes map results (per document, per map function: `[key, value]` rows) for the views of
 * `context`. Runs in the sandbox's worker threads; the output is checked, as it comes from
 * the sandbox.
 */
export function encodeMapOutput(results: unknown, context: RowEncodingContext): Uint8Array {
  if (!Array.isArray(results) || results.length !== context.ids.length) throw new MalformedMapOutput();
  const out = new PackedWriter();
  for (let i = 0; i < results.length; i++) {
    const perMap = results[i] as unknown;
    if (!Array.isArray(perMap)) throw new MalformedMapOutput();
    const id = context.ids[i]!;
    const idJson = JSON.stringify(id);
    for (let view = 0; view < context.views.length; view++) {
      const { map, raw } = context.views[view]!;
      const rows = perMap[map] as unknown;
      if (!Array.isArray(rows)) throw new MalformedMapOutput();
      out.u32(rows.length);
      for (let n = 0; n < rows.length; n++) {
        const row = rows[n] as unknown;
        if (!Array.isArray(row) || row.length !== 2) throw new MalformedMapOutput();
        const [key, value] = row as [unknown, unknown];
        const sk = sortKey(key, raw);
        if (sk.length > SORT_KEY_MAX) {
          out.u16(LONG_KEY);
          out.text(JSON.stringify(key ?? null));
        } else {
          const rowKey = rowKeyOf(view, sk, id, n);
          out.u16(rowKey.length);
          out.bytes(rowKey);
        }
        out.text(rowValueText(idJson, key, value));
      }
    }
  }
  return out.done();
}

/** Appends to one growing buffer. */
class PackedWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  u16(n: number): void {
    this.room(2);
    this.pos = this.buf.writeUInt16BE(n, this.pos);
  }

  u32(n: number): void {
    this.room(4);
    this.pos = this.buf.writeUInt32BE(n, this.pos);
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    this.pos += b.copy(this.buf, this.pos);
  }

  /** u32 byte length, then the UTF-8 text. */
  text(s: string): void {
    const max = s.length * 3;
    this.room(4 + max);
    const n = this.buf.write(s, this.pos + 4, 'utf8');
    this.buf.writeUInt32BE(n, this.pos);
    this.pos += 4 + n;
  }

  /** The bytes written, in a buffer of their own (to be transferred). */
  done(): Uint8Array {
    return new Uint8Array(this.buf.buffer.slice(this.buf.byteOffset, this.buf.byteOffset + this.pos));
  }
}

/** One row read back from packed map output: its row key, or (long keys) the key itself. */
export type PackedRow = { rowKey: Buffer; key?: undefined; value: Buffer } | { rowKey?: undefined; key: unknown; value: Buffer };

/**
 * Reads packed map output (see encodeMapOutput): per document, per view, its rows. The buffers
 * returned are views into `packed`.
 */
export function readMapOutput(packed: Uint8Array, docs: number, views: number): PackedRow[][][] {
  const buf = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  let pos = 0;
  const out: PackedRow[][][] = [];
  for (let i = 0; i < docs; i++) {
    const perView: PackedRow[][] = [];
    for (let view = 0; view < views; view++) {
      const count = buf.readUInt32BE(pos);
      pos += 4;
      const rows: PackedRow[] = [];
      for (let n = 0; n < count; n++) {
        const keyLength = buf.readUInt16BE(pos);
        pos += 2;
        let key: unknown;
        let rowKey: Buffer | undefined;
        if (keyLength === LONG_KEY) {
          const length = buf.readUInt32BE(pos);
          key = JSON.parse(buf.toString('utf8', pos + 4, pos + 4 + length));
          pos += 4 + length;
        } else {
          rowKey = buf.subarray(pos, pos + keyLength);
          pos += keyLength;
        }
        const valueLength = buf.readUInt32BE(pos);
        const value = buf.subarray(pos + 4, pos + 4 + valueLength);
        pos += 4 + valueLength;
        rows.push(rowKey ? { rowKey, value } : { key, value });
      }
      perView.push(rows);
    }
    out.push(perView);
  }
  if (pos !== buf.length) throw new MalformedMapOutput();
  return out;
}

/** This module's URL: what the query server's workers load as their map encoder. */
export const MAP_ENCODER_URL = import.meta.url;
