/**
 * A map batch's rows as the index stores them, encoded where they were mapped: the sandbox's
 * workers load this module (QueryServer's `mapEncoder`), so sort keys, row numbers and the stored
 * row texts are computed beside the map functions, off the server's thread, and the rows travel
 * back as one buffer instead of JSON to parse and serialise again.
 *
 * Per document (in batch order): u32 row count; per row:
 *   u32 view, u8 long, u32 n, u32 sort key length, sort key, u32 value length, value
 *   and, when `long` is 1 (a sort key past SORT_KEY_MAX, which the index shortens and tags),
 *   u32 key JSON length, key JSON.
 * The value is the stored row `{"id":…,"key":…,"value":…}`; `n` orders a document's rows of one key
 * (row-numbers.ts).
 */
import { sortKey } from './collation.js';
import { rowNumbers } from './row-numbers.js';

/** Longest sort key kept whole; longer ones keep this much and an order tag (long-keys.ts). */
export const SORT_KEY_MAX = 1400;

type Row = readonly [key: unknown, value: unknown];

export interface MapRowsContext {
  /** The documents' ids, in batch order. */
  ids: string[];
  /** Per view of the index, in its order: the map function whose rows it takes (-1: none) and whether it collates raw. */
  views: { map: number; raw: boolean }[];
}

/** `results[d][m]`: the rows map function `m` emitted for document `d`. */
export function encodeMapRows(results: readonly (readonly (readonly Row[])[])[], context: MapRowsContext): Uint8Array {
  const out = new Writer();
  for (let d = 0; d < results.length; d++) {
    const perMap = results[d]!;
    const countAt = out.reserveU32();
    let count = 0;
    const idJson = JSON.stringify(context.ids[d] ?? '');
    for (let view = 0; view < context.views.length; view++) {
      const { map, raw } = context.views[view]!;
      const rows = map >= 0 ? perMap[map] ?? [] : [];
      if (rows.length === 0) continue;
      const sortKeys = rows.map(([key]) => sortKey(key, raw));
      const numbers = rowNumbers(sortKeys, rows);
      for (let e = 0; e < rows.length; e++) {
        const [key, value] = rows[e]!;
        const sk = sortKeys[e]!;
        const long = sk.length > SORT_KEY_MAX;
        const keyJson = JSON.stringify(key ?? null);
        out.u32(view);
        out.u8(long ? 1 : 0);
        out.u32(numbers?.[e] ?? 0);
        out.u32(sk.length);
        out.bytes(sk);
        out.text32(`{"id":${idJson},"key":${keyJson},"value":${JSON.stringify(value ?? null)}}`);
        if (long) out.text32(keyJson);
        count++;
      }
    }
    out.setU32(countAt, count);
  }
  return out.finish();
}

/** One row read back (its buffers are views into the batch's). */
export interface EncodedRow {
  view: number;
  n: number;
  sortKey: Buffer;
  value: Buffer;
  /** The key, for a sort key past SORT_KEY_MAX. */
  key?: unknown;
}

/** Reads the documents of consecutive batches, in order. */
export class MapRowsReader {
  private batch = 0;
  private buffer: Buffer | undefined;
  private at = 0;

  constructor(private readonly batches: readonly Uint8Array[]) {}

  /** The next document's rows. */
  nextDocument(): EncodedRow[] {
    const buf = this.current();
    const count = buf.readUInt32LE(this.at);
    this.at += 4;
    const rows = new Array<EncodedRow>(count);
    for (let i = 0; i < count; i++) {
      const view = buf.readUInt32LE(this.at);
      const long = buf[this.at + 4] === 1;
      const n = buf.readUInt32LE(this.at + 5);
      const skLength = buf.readUInt32LE(this.at + 9);
      this.at += 13;
      const sk = buf.subarray(this.at, this.at + skLength);
      this.at += skLength;
      const valueLength = buf.readUInt32LE(this.at);
      this.at += 4;
      const value = buf.subarray(this.at, this.at + valueLength);
      this.at += valueLength;
      const row: EncodedRow = { view, n, sortKey: sk, value };
      if (long) {
        const keyLength = buf.readUInt32LE(this.at);
        this.at += 4;
        row.key = JSON.parse(buf.toString('utf8', this.at, this.at + keyLength));
        this.at += keyLength;
      }
      rows[i] = row;
    }
    return rows;
  }

  private current(): Buffer {
    while (!this.buffer || this.at >= this.buffer.length) {
      const next = this.batches[this.batch++];
      if (!next) throw new Error('map rows: read past the last batch');
      this.buffer = Buffer.from(next.buffer, next.byteOffset, next.byteLength);
      this.at = 0;
    }
    return this.buffer;
  }
}

class Writer {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private length = 0;

  u8(value: number): void {
    this.room(1);
    this.buffer[this.length++] = value;
  }

  u32(value: number): void {
    this.room(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }

  reserveU32(): number {
    this.room(4);
    this.length += 4;
    return this.length - 4;
  }

  setU32(at: number, value: number): void {
    this.buffer.writeUInt32LE(value, at);
  }

  bytes(value: Uint8Array): void {
    this.room(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
  }

  /** UTF-8 text after its u32 byte length. */
  text32(value: string): void {
    this.room(4 + value.length * 3);
    const written = this.buffer.write(value, this.length + 4, 'utf8');
    this.buffer.writeUInt32LE(written, this.length);
    this.length += 4 + written;
  }

  /** The bytes written, in a buffer of their own (it travels between threads). */
  finish(): Uint8Array {
    return new Uint8Array(this.buffer.subarray(0, this.length));
  }

  private room(more: number): void {
    if (this.length + more <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + more));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
