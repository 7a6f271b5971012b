/**
 * JSON texts written end to end as UTF-8 into one buffer, with each text's byte length: how the
 * view indexer hands a batch of documents to the sandbox's workers. Stored bytes are copied in
 * as they are, so the server's thread builds no string per document, and the batch crosses to
 * a worker as one block of bytes (a string assembled from parts must be flattened first, which
 * cost more than the copy).
 */
import { withRoom, writeUtf8 } from './bytes.js';

/** Texts end to end: text i is the `lengths[i]` bytes after those of the texts before it. */
export interface PackedJson {
  bytes: Uint8Array;
  lengths: number[];
}

const isJsonSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

export class PackedJsonWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private at = 0;
  private start = 0;
  private lengths: number[] = [];

  /** Texts ended so far. */
  get count(): number {
    return this.lengths.length;
  }

  /** Appends `s` to the text being written. */
  text(s: string): void {
    this.room(s.length * 3);
    this.at += writeUtf8(this.buf, this.at, s, 128);
  }

  /** Appends `bytes[from, to)`. */
  bytes(bytes: Uint8Array, from: number, to: number): void {
    this.room(to - from);
    this.buf.set(bytes.subarray(from, to), this.at);
    this.at += to - from;
  }

  /**
   * Appends the members of the JSON object `bytes[from, to)` (what lies between its braces,
   * without surrounding whitespace), after a comma; nothing for an empty object.
   */
  objectMembers(bytes: Uint8Array, from: number, to: number): void {
    let s = from + 1;
    let e = to - 1;
    while (s < e && isJsonSpace(bytes[s]!)) s++;
    while (e > s && isJsonSpace(bytes[e - 1]!)) e--;
    if (s >= e) return;
    this.text(',');
    this.bytes(bytes, s, e);
  }

  /** Ends the text being written. */
  endText(): void {
    this.lengths.push(this.at - this.start);
    this.start = this.at;
  }

  /** Drops what was written since the last text ended. */
  dropText(): void {
    this.at = this.start;
  }

  /** The texts ended so far, in bytes of their own; the writer starts afresh. */
  finish(): PackedJson {
    const out = { bytes: new Uint8Array(this.buf.subarray(0, this.start)), lengths: this.lengths };
    this.at = this.start = 0;
    this.lengths = [];
    return out;
  }

  private room(more: number): void {
    if (this.at + more > this.buf.length) this.buf = withRoom(this.buf, this.at, this.at + more);
  }
}
