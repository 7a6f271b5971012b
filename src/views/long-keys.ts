/**
 * Keys whose sort key is longer than the store's key limit allows. Such a row is stored under
 * the first SORT_KEY_MAX bytes of its sort key (its "group": every key sharing those bytes)
 * followed by an order tag, then 0x00 and the document id:
 *
 *   k <view> <sort key prefix> <tag> 0x00 <docid> 0x00 <n>
 *
 * Tags are strings of bytes 0x01..0xFE, chosen when a key first appears in its group so that
 * their byte order is the keys' collation order (a fraction between its neighbours' tags, so
 * no other row ever moves); rows with equal keys share a tag and sort by document id. Byte
 * order therefore stays collation order for every row, and ranges, counts and partial
 * reductions need no special case. Only placing a new long key, or a query bound that is a long
 * key, reads the rows of its group.
 */
import type { ReadView } from '../storage/types.js';
import { decodeRow } from './view-index.js';

const MIN_DIGIT = 0x01;
const MAX_DIGIT = 0xfe;
const FF = Buffer.of(0xff);

/**
 * A tag strictly between `low` and `high` (undefined: unbounded), never ending in MIN_DIGIT so
 * that a smaller one can always be made later.
 */
export function tagBetween(low: Uint8Array | undefined, high: Uint8Array | undefined): Buffer {
  // Keys often arrive in order: appending or prepending steps by one digit value, so a digit
  // serves ~250 such keys (halving the gap would serve 8).
  if (low && low.length > 0 && !high) {
    const i = low.findIndex((d) => d < MAX_DIGIT);
    return i === -1 ? Buffer.from([...low, (MAX_DIGIT + 1) >> 1]) : Buffer.from([...low.subarray(0, i), low[i]! + 1]);
  }
  if (high && high.length > 0 && !low) {
    const i = high.findIndex((d) => d > MIN_DIGIT + 1);
    if (i !== -1) return Buffer.from([...high.subarray(0, i), high[i]! - 1]);
  }
  const out: number[] = [];
  const a = low ?? new Uint8Array(0);
  let b = high;
  let i = 0;
  // Shared leading digits stay.
  if (b) {
    while (i < b.length && (a[i] ?? 0) === b[i]) out.push(b[i++]!);
  }
  for (;;) {
    const da = a[i] ?? 0;
    const db = b && i < b.length ? b[i]! : MAX_DIGIT + 1;
    if (db - da > 1) {
      const mid = (da + db) >> 1;
      if (mid > MIN_DIGIT) {
        out.push(mid);
        return Buffer.from(out);
      }
      // Only MIN_DIGIT fits: take it and go one digit deeper, unbounded above.
      out.push(MIN_DIGIT);
      b = undefined;
      i++;
      continue;
    }
    if (da >= MIN_DIGIT) {
      // Adjacent digits: keep `low`'s and find a tag above the rest of it.
      out.push(da);
      b = undefined;
      i++;
      continue;
    }
    // `low` has ended and `high`'s digit is MIN_DIGIT: keep it and go below the rest of `high`.
    out.push(db);
    i++;
  }
}

/** The tag of a long-key row key (after the group's sort-key prefix). */
export function tagOf(rowKey: Uint8Array, groupEnd: number): Buffer {
  const end = rowKey.indexOf(0x00, groupEnd);
  return Buffer.from(rowKey.subarray(groupEnd, end));
}

interface Placed {
  tag: Buffer;
  key: unknown;
}

/** The rows of one group, in order, one entry per distinct key. */
async function readGroup(read: ReadView, group: Buffer): Promise<Placed[]> {
  const placed: Placed[] = [];
  for await (const entries of read.rangeChunks({ gte: group, lt: Buffer.concat([group, FF]) }, 256)) {
    for (const entry of entries) {
      const tag = tagOf(entry.key, group.length);
      const last = placed[placed.length - 1];
      if (last && last.tag.equals(tag)) continue;
      placed.push({ tag, key: decodeRow(entry.value).key });
    }
  }
  return placed;
}

/** Index of the first placed key ≥ key, and whether it is equal. */
function search(placed: readonly Placed[], key: unknown, compare: (a: unknown, b: unknown) => number): { at: number; equal: boolean } {
  let lo = 0;
  let hi = placed.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(placed[mid]!.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return { at: lo, equal: lo < placed.length && compare(placed[lo]!.key, key) === 0 };
}

/**
 * Tags for the long keys of one index update: each group is read once, and keys placed earlier
 * in the same update (not yet written) are seen by later ones.
 */
export class TagAssigner {
  private readonly groups = new Map<string, Placed[]>();

  constructor(private readonly read: ReadView, private readonly compare: (a: unknown, b: unknown) => number) {}

  /** The tag of `key` in `group` (the row-key bytes up to the tag): its existing one, or a new one in order. */
  async tagFor(group: Buffer, key: unknown): Promise<Buffer> {
    const id = group.toString('latin1');
    let placed = this.groups.get(id);
    if (!placed) {
      placed = await readGroup(this.read, group);
      this.groups.set(id, placed);
    }
    const { at, equal } = search(placed, key, this.compare);
    if (equal) return placed[at]!.tag;
    const tag = tagBetween(placed[at - 1]?.tag, placed[at]?.tag);
    placed.splice(at, 0, { tag, key });
    return tag;
  }
}

/**
 * Row-key bounds around a long key in a query: `start` is before every row of the key (and after
 * every smaller key), `end` after every row of the key; `rows` is the prefix of the key's own rows
 * (to which a document id is appended), or undefined if no row has this key.
 */
export async function longKeyBounds(
  read: ReadView, group: Buffer, key: unknown, compare: (a: unknown, b: unknown) => number,
): Promise<{ start: Buffer; end: Buffer; rows: Buffer | undefined }> {
  const placed = await readGroup(read, group);
  const { at, equal } = search(placed, key, compare);
  if (equal) {
    const rows = Buffer.concat([group, placed[at]!.tag, Buffer.of(0x00)]);
    return { start: rows, end: Buffer.concat([rows, FF]), rows };
  }
  const next = placed[at];
  const between = next ? Buffer.concat([group, next.tag]) : Buffer.concat([group, FF]);
  return { start: between, end: between, rows: undefined };
}
