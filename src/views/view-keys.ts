/**
 * The view number inside an index's keys (`<kind> <view> …`, kind being the rows' `k` or a
 * reductions level): one byte for views 0–254, and 0xFF with two more bytes (view - 255) from
 * 255 on. The encoding is order-preserving and prefix-free, so every key of view v lies in
 * [viewPrefix(kind, v), viewPrefix(kind, v + 1)), and indexes of design documents with fewer
 * than 255 views keep the one-byte keys they always had.
 */

/** The kind byte of view rows (`k`); reductions.ts keeps its levels' kinds. */
export const ROW = 0x6b;

/**
 * Views one design document may hold: 255 one-byte numbers and 65,535 three-byte ones (the
 * 65,536th three-byte number is the end of the last view).
 */
export const MAX_VIEWS = 255 + 0xffff;

const WIDE = 0xff;

/** One-byte prefixes, made once: every row written and every query asks for them. */
const shortPrefixes = new Map<number, Buffer>();

/**
 * `<kind> <view>`: the start of every key of `view` of that kind. Shared: callers read it
 * (concatenate, compare, bound a range) and never write into it.
 */
export function viewPrefix(kind: number, view: number): Buffer {
  if (view < WIDE) {
    const id = (kind << 8) | view;
    let prefix = shortPrefixes.get(id);
    if (!prefix) {
      prefix = Buffer.of(kind, view);
      shortPrefixes.set(id, prefix);
    }
    return prefix;
  }
  const out = Buffer.allocUnsafe(4);
  out[0] = kind;
  out[1] = WIDE;
  out.writeUInt16BE(view - WIDE, 2);
  return out;
}

/** The first key past every key of `view` of that kind. */
export function viewEnd(kind: number, view: number): Buffer {
  return viewPrefix(kind, view + 1);
}

/** Where the part after `<kind> <view>` starts in a key of that layout. */
export function suffixStart(key: Uint8Array): number {
  return key[1] === WIDE ? 4 : 2;
}

/** The view number of a key of that layout. */
export function viewOf(key: Uint8Array): number {
  return key[1] === WIDE ? WIDE + ((key[2]! << 8) | key[3]!) : key[1]!;
}
