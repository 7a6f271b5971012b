/**
 * A growable byte writer and its reader, for the binary record formats (records.ts): unsigned
 * LEB128 varints, length-prefixed UTF-8 strings and 16-byte MD5 digests. Hand-written because
 * these records are encoded once per document write and decoded on every read of them, where
 * JSON text cost several times more.
 */

/**
 * Writes `s` as UTF-8 into `buf` at `at` (the caller has made room for 3 bytes per UTF-16 unit)
 * and answers the bytes written. ASCII strings of up to `asciiMax` units are copied byte by
 * byte: for short ids, revisions and field names that is cheaper than a call into the codec.
 */
export function writeUtf8(buf: Buffer, at: number, s: string, asciiMax: number): number {
  if (s.length <= asciiMax) {
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    if (i === s.length) return i;
  }
  return buf.write(s, at, 'utf8');
}

/** `buf` if it has room for `need` bytes, else a buffer at least twice as large holding its first `used` bytes. */
export function withRoom(buf: Buffer<ArrayBuffer>, used: number, need: number): Buffer<ArrayBuffer> {
  if (need <= buf.length) return buf;
  const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, need));
  buf.copy(grown, 0, 0, used);
  return grown;
}

/** Writes into one scratch buffer, reused across records; `finish` copies the record out. */
export class ByteWriter {
  private buf = Buffer.allocUnsafe(4096);
  private at = 0;

  reset(): this {
    this.at = 0;
    return this;
  }

  private room(n: number): void {
    if (this.at + n > this.buf.length) this.buf = withRoom(this.buf, this.at, this.at + n);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  /** A non-negative safe integer. */
  varint(n: number): void {
    this.room(8);
    while (n >= 0x80) {
      this.buf[this.at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.at++] = n;
  }

  /**
   * A string as `varint (byteLength × 2 + escaped)` and its UTF-8 bytes. UTF-8 cannot carry a
   * lone surrogate (ids and revisions may hold one), so such a string is stored as its JSON text
   * (which escapes them) and flagged: every string reads back exactly as written.
   */
  string(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 unit; JSON escapes at most 6.
    this.room(s.length * 6 + 16);
    const buf = this.buf;
    // Short ASCII strings (ids, revisions) byte by byte: cheaper than a call into the codec.
    if (s.length < 0x40) {
      const start = this.at + 1;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[start + i] = c;
      }
      if (i === s.length) {
        buf[this.at] = i * 2;
        this.at = start + i;
        return;
      }
    }
    const escaped = !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
    const text = escaped ? JSON.stringify(s) : s;
    const bytes = Buffer.byteLength(text, 'utf8');
    this.varint(bytes * 2 + (escaped ? 1 : 0));
    this.room(bytes);
    this.at += this.buf.write(text, this.at, 'utf8');
  }

  /** 32 lowercase hex digits as their 16 bytes. The caller checks with `isMd5Hex`. */
  md5(hex: string): void {
    this.room(16);
    const buf = this.buf;
    for (let i = 0; i < 16; i++) buf[this.at + i] = (hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1));
    this.at += 16;
  }

  /** The record written since `reset`, as its own buffer. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.at);
    if (this.at <= 64) for (let i = 0; i < this.at; i++) out[i] = this.buf[i]!;
    else this.buf.copy(out, 0, 0, this.at);
    return out;
  }
}

export class ByteReader {
  private at: number;

  constructor(private readonly buf: Buffer, start = 0) {
    this.at = start;
  }

  get done(): boolean {
    return this.at >= this.buf.length;
  }

  byte(): number {
    if (this.at >= this.buf.length) throw new RangeError('record ends early');
    return this.buf[this.at++]!;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  }

  string(): string {
    const header = this.varint();
    const end = this.at + Math.floor(header / 2);
    if (end > this.buf.length) throw new RangeError('record ends early');
    const text = this.buf.toString('utf8', this.at, end);
    this.at = end;
    return header % 2 === 1 ? (JSON.parse(text) as string) : text;
  }

  md5(): string {
    const end = this.at + 16;
    if (end > this.buf.length) throw new RangeError('record ends early');
    let s = '';
    for (let i = this.at; i < end; i++) s += HEX_PAIRS[this.buf[i]!];
    this.at = end;
    return s;
  }
}

/** Whether `s` is 32 lowercase hex digits (CouchDB's MD5 revision hashes), which pack to 16 bytes. */
export function isMd5Hex(s: string): boolean {
  if (s.length !== 32) return false;
  for (let i = 0; i < 32; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

const hexValue = (c: number): number => (c <= 0x39 ? c - 0x30 : c - 0x57);

const HEX_PAIRS: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
