/**
 * CouchDB's view collation, and order-preserving binary sort keys for it.
 *
 * `collate` is the comparator: JSON types in CouchDB's order (null < false < true < numbers <
 * strings < arrays < objects), strings by ICU's root collation at tertiary strength, which in
 * Node is `new Intl.Collator('en')` with default options (the ICU root collator CouchDB uses;
 * never 'und', which Node resolves to the system locale). `collateRaw` is the
 * `options.collation: "raw"` variant: the same type order, strings by code point.
 *
 * `sortKey` turns a JSON value into bytes whose unsigned byte order (Buffer.compare) is the
 * comparator's order, so view indexes can live in an ordered key-value store. Strings are keyed
 * by a pure-TypeScript Unicode Collation Algorithm (UTS #10): NFD (Intl.Collator treats
 * canonically equivalent strings as equal), collation elements from the DUCET (allkeys.txt,
 * packed into ./collation-data.ts by scripts/gen-collation-data.mjs), non-ignorable variable
 * weighting as in CLDR's root, contiguous and discontiguous contractions, Hangul syllables by
 * their jamo, implicit weights for unassigned code points.
 *
 * The DUCET is not exactly what ICU uses: CLDR's root tailors it, Unicode has moved on since the
 * table's version, and CLDR sorts Han ideographs by radical and stroke. So the table is
 * calibrated against `Intl.Collator('en')` (see `calibrate`):
 *   1. the table's single code points, in DUCET order, are compared pairwise with ICU; where a
 *      neighbouring pair disagrees, the smaller block of misplaced characters is taken out;
 *   2. those, and every code point the running Unicode assigns that the table lacks (Han
 *      ideographs aside), are sorted with ICU and swept against the table's characters with
 *      primary-, secondary- and tertiary-strength collators: a character equal to a table
 *      character gets its weights; one between table characters with the same primaries gets
 *      weights between theirs; an expansion is found by probing "representative + U+FFFF";
 *      one between two table primaries gets a new primary, in ICU's order;
 *   3. Han ideographs get primaries by their rank in ICU's order (and their variants, which
 *      have a Han primary, are placed against that order).
 * Calibrating costs ~100k ICU comparisons plus a Han sort (about half a second here), so the
 * result for one ICU version is stored in ./collation-icu.ts (by the generator's --snapshot
 * step, which also checks every code point's key order against ICU and re-places the characters
 * of any disagreeing pair until none is left). A server whose ICU, Unicode and table match the
 * snapshot's unpacks it (~15-20 ms) after checking a sample of keys against ICU; any other ICU
 * is calibrated on the first string key. COLLATION_VERSION names the table, this algorithm and
 * the ICU and Unicode versions, so indexes rebuild when any of them changes.
 *
 * Key format (self-delimiting: no key is a proper prefix of a differently collating key, so a
 * document id may follow it):
 *   null 02 · false 03 · true 04 · negative number 05 · zero 06 · positive number 07 ·
 *   string 08 · array 09 elements… 00 · object 0A (key-string value)… 00
 *   number: the 63 low bits of the IEEE double (sign dropped) in 7-bit groups, high first, each
 *     byte = group<<1 | more-follows, trailing zero groups dropped; inverted for negatives.
 *   string: primaries 01 secondaries 01 tertiaries 00. Primaries are 1 byte for the most common
 *     (ASCII letters, digits, space, a few punctuation marks), 2 bytes for the rest of the
 *     table, 3 for Han, 4 for unassigned code points. Secondaries and tertiaries are 1 byte,
 *     with runs of the common weight compressed into one byte as ICU's sort keys do.
 *   raw string: UTF-8 (lone surrogates as 3-byte sequences), 00 → 01 01, 01 → 01 02, then 00.
 * Objects are compared as their Object.keys order (note that JavaScript puts integer-like keys
 * first, whatever the JSON text's order).
 */
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { CCC_UNICODE_VERSION, DUCET_PACKED, DUCET_VERSION } from './collation-data.js';
import { ICU_SNAPSHOT } from './collation-icu.js';

/** Bump whenever the key format or the calibration changes. */
const ALGORITHM_VERSION = 1;
/** Version of raw mode's type order (2: Erlang term order, as CouchDB). */
const RAW_ORDER_VERSION = 2;

/** Changes whenever sort keys would change (table or algorithm version): indexes record it and rebuild when it differs. */
export const COLLATION_VERSION: string =
  `settee-uca-${ALGORITHM_VERSION};raw-${RAW_ORDER_VERSION};ducet-${DUCET_VERSION};ccc-${CCC_UNICODE_VERSION};` +
  `icu-${process.versions.icu ?? 'none'};unicode-${process.versions.unicode ?? 'none'};` +
  `calibration-${snapshotUsable() ? (ICU_SNAPSHOT as IcuSnapshot).digest : 'runtime'}`;

// ---------------------------------------------------------------------------------------------
// The comparators

const icu = new Intl.Collator('en');
const icuCompare = icu.compare;

function typeRank(v: unknown): number {
  if (v === null || v === undefined) return 0;
  switch (typeof v) {
    case 'boolean':
      return v ? 2 : 1;
    case 'number':
      return 3;
    case 'string':
      return 4;
    case 'object':
      return Array.isArray(v) ? 5 : 6;
    default:
      throw new TypeError(`cannot collate a ${typeof v}`);
  }
}

function compareNumbers(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  // NaN (not JSON, but keep the order total): after every number.
  const na = Number.isNaN(a);
  const nb = Number.isNaN(b);
  return na === nb ? 0 : na ? 1 : -1;
}

/** Unicode code point order of two JS strings (lone surrogates as their own code points). */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
  // Back up to the start of a surrogate pair split at i.
  if (i > 0) {
    const h = a.charCodeAt(i - 1);
    if (h >= 0xd800 && h < 0xdc00 && ((x >= 0xdc00 && x < 0xe000) || (y >= 0xdc00 && y < 0xe000))) i--;
  }
  const cx = a.codePointAt(i) as number;
  const cy = b.codePointAt(i) as number;
  return cx < cy ? -1 : cx > cy ? 1 : 0;
}

/**
 * `collation: raw` orders types as Erlang orders CouchDB's terms: numbers < false < null < true
 * < objects < arrays < strings (CouchDB's docs: 1, false, null, true, {"a":"a"}, ["a"], "a").
 */
function rawTypeOrder(rank: number): number {
  return RAW_TYPE_ORDER[rank]!;
}
// Indexed by typeRank: null 0, false 1, true 2, number 3, string 4, array 5, object 6.
const RAW_TYPE_ORDER = [2, 1, 3, 0, 6, 5, 4];

function compareValues(a: unknown, b: unknown, strings: (x: string, y: string) => number): number {
  const raw = strings === compareCodePoints;
  const ta = typeRank(a);
  const tb = typeRank(b);
  if (ta !== tb) {
    const [oa, ob] = raw ? [rawTypeOrder(ta), rawTypeOrder(tb)] : [ta, tb];
    return oa < ob ? -1 : 1;
  }
  switch (ta) {
    case 3:
      return compareNumbers(a as number, b as number);
    case 4: {
      const c = strings(a as string, b as string);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    case 5: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i], y[i], strings);
        if (c !== 0) return c;
      }
      return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
    }
    case 6: {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const kx = Object.keys(x);
      const ky = Object.keys(y);
      const n = Math.min(kx.length, ky.length);
      for (let i = 0; i < n; i++) {
        let c = strings(kx[i] as string, ky[i] as string);
        if (c !== 0) return c < 0 ? -1 : 1;
        c = compareValues(x[kx[i] as string], y[ky[i] as string], strings);
        if (c !== 0) return c;
      }
      return kx.length === ky.length ? 0 : kx.length < ky.length ? -1 : 1;
    }
    default:
      return 0;
  }
}

/** CouchDB's default view collation: null < false < true < numbers < strings < arrays < objects; strings by ICU root order as `new Intl.Collator('en')` with default options gives (never 'und'); arrays element by element (shorter prefix first); objects compared as lists of [key, value] pairs in their order. */
export function collate(a: unknown, b: unknown): number {
  return compareValues(a, b, icuCompare);
}

/** `collation: "raw"`: types in Erlang term order (numbers < false < null < true < objects < arrays < strings), strings by Unicode code point (UTF-8 byte) order. */
export function collateRaw(a: unknown, b: unknown): number {
  return compareValues(a, b, compareCodePoints);
}

// ---------------------------------------------------------------------------------------------
// Tables

/** Trie value: not in the table (Han ideograph or unassigned: implicit weights). */
const CODE_IMPLICIT = -1;
/** Trie value: a precomposed Hangul syllable (decomposed arithmetically into jamo). */
const CODE_HANGUL = -2;
/** Trie values ≤ this are expansions: offset = CODE_EXPANSION - value into `expansions`. */
const CODE_EXPANSION = -16;
/** Trie values ≤ this are contraction starters: index = CODE_CONTRACTION - value. */
const CODE_CONTRACTION = -0x10000000;
// Values > 0 are one collation element: primary << 15 | secondary << 6 | tertiary (weight ids).
// 0 is a completely ignorable character.

interface Contraction {
  /** The starter alone. */
  single: number;
  /** Suffix (the code points after the starter, as a string) → code. */
  entries: Map<string, number>;
  /** Proper prefixes of the suffixes. */
  prefixes: Set<string>;
  maxSuffix: number;
  /** Some suffix ends with a non-starter: discontiguous matches are possible. */
  discontiguous: boolean;
}

interface Tables {
  stage1: Uint16Array;
  stage2: Int32Array;
  expansions: Int32Array;
  contractions: Contraction[];
  /** Contraction starter code point → its contractions (also reachable from the trie). */
  starters: Map<number, Contraction>;
  ccc: Map<number, number>;
  /** Primary id → first byte of its code. */
  pLead: Uint8Array;
  /** Primary id → second byte, or 0 for one-byte codes. */
  pTrail: Uint8Array;
  /** Secondary id → its rank in weight order (1: common). */
  sRank: Uint16Array;
  /** Tertiary id → its rank in weight order (1: common). */
  tRank: Uint16Array;
  stats: CollationStats;
}

/** What calibration found and cost; for tests and diagnostics. */
export interface CollationStats {
  /** Where the calibration came from: the stored snapshot (same ICU, checked on a sample) or ICU now. */
  source: 'snapshot' | 'calibrated';
  /** Identifies the lookup tables: equal digests, equal keys. */
  digest: string;
  ducetVersion: string;
  icuVersion: string;
  tableEntries: number;
  tableBuildMs: number;
  /** Table characters ICU orders differently from the DUCET, re-placed by probing. */
  displaced: number;
  /** Characters the running Unicode assigns but the table lacks, placed by probing. */
  added: number;
  /** Placed characters neither equal to nor between table characters: weights partly guessed. */
  approximate: number;
  /** Contractions added for canonical decompositions of added characters. */
  addedContractions: number;
  primaries: number;
  oneBytePrimaries: number;
  primaryLeadBytes: number;
  secondaries: number;
  tertiaries: number;
  /** ICU comparisons calibration made (for a snapshot: when it was generated). */
  icuComparisons: number;
  hanIdeographs: number;
  hanCalibrationMs: number;
  /** Bytes held by the lookup structures (typed arrays; Maps estimated). */
  memoryBytes: number;
}

const TRIE_SHIFT = 7;
const TRIE_BLOCK = 1 << TRIE_SHIFT;
const HAN_FIRST = 0x3400;
const HAN_END = 0x40000;
const HAN_RANGES: readonly (readonly [number, number])[] = [
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xf900, 0xfaff],
  [0x20000, 0x3ffff],
];

// Key bytes.
const TAG_NULL = 0x02;
const TAG_FALSE = 0x03;
const TAG_TRUE = 0x04;
const TAG_NEGATIVE = 0x05;
const TAG_ZERO = 0x06;
const TAG_POSITIVE = 0x07;
const TAG_STRING = 0x08;
const TAG_ARRAY = 0x09;
const TAG_OBJECT = 0x0a;
const END = 0x00;
const LEVEL_SEPARATOR = 0x01;
// Primary lead bytes.
const TABLE_LEAD_LAST = 0xfa;
const HAN_LEAD = 0xfb; // 0xfb..0xfd: 3 × 254² Han ranks
const IMPLICIT_LEAD = 0xfe; // + 3 bytes of the code point
const TOP_LEAD = 0xff; // U+FFFF and anything ICU sorts after every implicit weight
// Secondary/tertiary bytes: runs of the common weight, then the other weights.
const COMMON_LOW = 0x02;
const COMMON_MAX_COUNT = 32;
const COMMON_MIDDLE = COMMON_LOW + COMMON_MAX_COUNT - 1; // 0x21
const COMMON_HIGH = COMMON_MIDDLE + COMMON_MAX_COUNT - 1; // 0x40
const WEIGHT_FIRST = COMMON_HIGH + 1; // 0x41
const WEIGHT_ONE_BYTE = 180; // 0x41..0xf4; then 2 bytes, leads 0xf5..0xff

/** During calibration, the primary of the characters after every implicit weight (U+FFFD, U+FFFF). */
const P_TOP = 2 ** 40;

// Characters whose primaries get one-byte codes, most important first (dropped from the end if
// the lead bytes run out).
const ONE_BYTE_CHARS = 'etaoinsrhldcumfpgwybvkxjqz0123456789 -_.,:/@\'"()#+&*=!?;[]{}<>|~$%^\\`';

let tables: Tables | undefined;
let hanRank: Uint32Array | undefined; // cp - HAN_FIRST → rank + 1 (0: not a Han ideograph)

function getTables(): Tables {
  if (tables === undefined) tables = buildTables();
  return tables;
}

/** Builds and calibrates the tables now (otherwise done on the first string key), and the Han ranks. */
export function warmUpCollation(): CollationStats {
  const t = getTables();
  ensureHan();
  return { ...t.stats };
}

/** Statistics of the calibration (builds the tables if not built yet; Han only if already used). */
export function collationStats(): CollationStats {
  const t = getTables();
  const stats = t.stats;
  // Hashing the tables takes a thread as long as unpacking them: done when asked, not at start-up.
  if (stats.digest === '') stats.digest = tablesDigest(t);
  if (hanRank !== undefined && stats.hanIdeographs === 0) {
    for (let i = 0; i < hanRank.length; i++) if (hanRank[i] !== 0) stats.hanIdeographs++;
  }
  return { ...stats };
}

// ---- decoding the packed DUCET ----

/** A collation element as calibration handles it: weight ids (fractional: to be inserted). */
interface CE {
  p: number;
  s: number;
  t: number;
  /** A Han ideograph's implicit primary: its code point; -1 otherwise. */
  han: number;
}

interface Decoded {
  /** Entries [0, ordered) are single code points without Han weights, in DUCET order. */
  ordered: number;
  /** Entries [0, singles) are single code points; the rest contractions. */
  singles: number;
  first: Int32Array;
  codes: Int32Array;
  /** Contraction (entry - singles) → its code points after the first. */
  extra: number[][];
  expansions: Int32Array;
  ccc: Map<number, number>;
  /** For the ordered singles: 1 where the DUCET collates the entry equal to the previous one. */
  equalToPrevious: Uint8Array;
  /** How many distinct weights the table has on each level (their ids are 1..n). */
  primaries: number;
  secondaries: number;
  tertiaries: number;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decodePacked(): Decoded {
  const buf = inflateRawSync(Buffer.from(DUCET_PACKED, 'base64'));
  if (buf.toString('latin1', 0, 4) !== 'UCA4') throw new Error('collation data: unknown format');
  const h = (i: number): number => buf.readUInt32LE(4 + i * 4);
  const ordered = h(0);
  const singles = ordered + h(1);
  const entries = singles + h(2);
  const cols: Buffer[] = [];
  let off = 4 + 8 * 4;
  for (let i = 0; i < 8; i++) {
    const len = buf.readUInt32LE(off);
    cols.push(buf.subarray(off + 4, off + 4 + len));
    off += 4 + len;
  }
  const col = (i: number): Buffer => cols[i] as Buffer;
  const aligned = (b: Buffer): ArrayBuffer => {
    const copy = Buffer.from(b);
    if (!LITTLE_ENDIAN) copy.swap32();
    return copy.buffer.slice(copy.byteOffset, copy.byteOffset + copy.length);
  };
  const first = new Int32Array(entries);
  readDeltas(col(0), 0, first);
  const codes = new Int32Array(entries);
  readDeltas(col(1), 0, codes);
  const keyLens = col(2);
  const extraCps = new Uint32Array(aligned(col(3)));
  const extra: number[][] = [];
  for (let c = 0, at = 0; c < entries - singles; c++) {
    const n = (keyLens[c] as number) - 1;
    extra.push(Array.from(extraCps.subarray(at, at + n)));
    at += n;
  }
  const cccCps = new Uint32Array(aligned(col(5)));
  const cccValues = col(6);
  const ccc = new Map<number, number>();
  for (let i = 0; i < cccCps.length; i++) ccc.set(cccCps[i] as number, cccValues[i] as number);
  return {
    ordered,
    singles,
    first,
    codes,
    extra,
    expansions: new Int32Array(aligned(col(4))),
    ccc,
    equalToPrevious: col(7),
    primaries: h(5),
    secondaries: h(6),
    tertiaries: h(7),
  };
}

// ---- calibration ----

const icuBase = new Intl.Collator('en', { sensitivity: 'base' });
const icuAccent = new Intl.Collator('en', { sensitivity: 'accent' });

interface Mark {
  s: number;
  t: number;
  str: string;
}

class Calibrator {
  comparisons = 0;
  approximate = 0;
  /** The trusted table primaries that have a representative character, ascending. */
  repP: number[] = [];
  /** Their representatives: characters whose only primary is repP[i], lowest first. */
  repS: string[] = [];
  /** For each representative: the trusted characters with one CE [p, common, t], ascending t. */
  variants: { t: number; str: string }[][] = [];
  /** Trusted primary-ignorable characters with one CE [0, s, t], ascending (s, t). */
  marks: Mark[] = [];
  /** The trusted table characters, in (ICU's and the DUCET's) order. */
  trusted: string[] = [];
  /** Characters placed next to table characters so far, in ICU's order (the sweep's). */
  placedSorted: string[] = [];
  cesOf: (s: string) => CE[];
  /** How many tertiary weights the table has. */
  tertiaries: number;

  constructor(cesOf: (s: string) => CE[], tertiaries: number) {
    this.cesOf = cesOf;
    this.tertiaries = tertiaries;
  }

  full(a: string, b: string): number {
    this.comparisons++;
    return icuCompare(a, b);
  }
  base(a: string, b: string): number {
    this.comparisons++;
    return icuBase.compare(a, b);
  }
  accent(a: string, b: string): number {
    this.comparisons++;
    return icuAccent.compare(a, b);
  }

  /** Largest i with base(prefix + repS[i], x) <= 0, or -1. */
  searchPrimary(prefix: string, x: string): number {
    let lo = -1;
    let hi = this.repS.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.base(prefix + (this.repS[mid] as string), x) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** A trusted table character or a placed one that ICU collates equal to x, if any. */
  findEqual(x: string): string | undefined {
    for (const list of [this.trusted, this.placedSorted]) {
      let lo = 0;
      let hi = list.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.full(list[mid] as string, x) < 0) lo = mid + 1;
        else hi = mid;
      }
      const y = list[lo];
      if (y !== undefined && this.full(y, x) === 0) return y;
    }
    return undefined;
  }

  /**
   * Weights for x from its neighbours among the trusted table characters that equal it one level
   * up (same primaries for level 's', same primaries and secondaries for level 't'): the lower
   * neighbour's collation elements with the level's weight sequence raised to just past it (or
   * the upper one's lowered) where the two neighbours first differ. Undefined if no table
   * character is that close.
   */
  weightsBetween(x: string, level: 's' | 't'): CE[] | undefined {
    const coarse = level === 's' ? (a: string, b: string) => this.base(a, b) : (a: string, b: string) => this.accent(a, b);
    const fine = level === 's' ? (a: string, b: string) => this.accent(a, b) : (a: string, b: string) => this.full(a, b);
    const first = (list: string[], lo: number, hi: number, pred: (y: string) => boolean): number => {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (pred(list[mid] as string)) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    // The neighbours of x in each list, among those equal to it one level up.
    let lowerStr: string | undefined;
    let upperStr: string | undefined;
    for (const list of [this.trusted, this.placedSorted]) {
      const lo = first(list, 0, list.length, (y) => coarse(y, x) >= 0);
      const hi = first(list, lo, list.length, (y) => coarse(y, x) > 0);
      if (lo >= hi) continue;
      const k = first(list, lo, hi, (y) => fine(y, x) > 0);
      if (k > lo) {
        const y = list[k - 1] as string;
        if (fine(y, x) === 0) return undefined; // equal at this level
        if (lowerStr === undefined || this.full(lowerStr, y) < 0) lowerStr = y;
      }
      if (k < hi) {
        const y = list[k] as string;
        if (upperStr === undefined || this.full(y, upperStr) < 0) upperStr = y;
      }
    }
    if (lowerStr === undefined && upperStr === undefined) return undefined;
    const below = lowerStr !== undefined ? this.cesOf(lowerStr) : undefined;
    const above = upperStr !== undefined ? this.cesOf(upperStr) : undefined;
    const at = (ces: CE[]): number[] => {
      const r: number[] = [];
      ces.forEach((c, i) => c[level] !== 0 && r.push(i));
      return r;
    };
    if (below) {
      const result = below.map((c) => ({ ...c }));
      const bi = at(below);
      const ai = above ? at(above) : [];
      let j = 0;
      while (j < bi.length && j < ai.length && (below[bi[j] as number] as CE)[level] === ((above as CE[])[ai[j] as number] as CE)[level]) j++;
      if (j < bi.length) {
        const c = result[bi[j] as number] as CE;
        const ceiling = j < ai.length ? ((above as CE[])[ai[j] as number] as CE)[level] : Infinity;
        c[level] = c[level] + 0.5 < ceiling ? c[level] + 0.5 : (c[level] + ceiling) / 2;
        return result;
      }
      // The lower neighbour's sequence is a prefix of the upper one's: append a common weight.
      if (j < ai.length && ((above as CE[])[ai[j] as number] as CE)[level] > COMMON) {
        result.push(level === 's' ? { p: 0, s: COMMON, t: COMMON, han: -1 } : { p: 0, s: 0, t: COMMON, han: -1 });
        return result;
      }
      return undefined;
    }
    const result = (above as CE[]).map((c) => ({ ...c }));
    const ai = at(result);
    const c = result[ai[ai.length - 1] as number] as CE | undefined;
    if (!c || c[level] - 0.5 < COMMON) return undefined;
    c[level] -= 0.5;
    return result;
  }

  /** Largest j >= i with base(repS[j], x) <= 0 (galloping from i). */
  advance(i: number, x: string): number {
    const n = this.repS.length;
    if (i + 1 >= n || this.base(this.repS[i + 1] as string, x) > 0) return i;
    let lo = i + 1;
    let step = 1;
    while (lo + step < n && this.base(this.repS[lo + step] as string, x) <= 0) {
      lo += step;
      step *= 2;
    }
    let hi = Math.min(lo + step, n) - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.base(this.repS[mid] as string, x) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * The collation elements of x, whose primaries are a sequence of two or more table primaries
   * (an expansion): each found by binary search on prefix + rep, continuing while
   * prefix + rep + U+FFFF (the highest primary) still sorts after x.
   */
  probeExpansion(x: string): CE[] {
    let prefix = '';
    const found: CE[] = [];
    for (let depth = 0; depth < 8; depth++) {
      const i = this.searchPrimary(prefix, x);
      if (i < 0) break;
      const rep = this.repS[i] as string;
      if (this.base(prefix + rep, x) === 0) return this.refine(x, prefix + rep, [...found, ...this.cesOf(rep)]);
      if (this.base(prefix + rep + '\uffff', x) < 0) break;
      prefix += rep;
      found.push(...this.cesOf(rep));
    }
    // Ends in a primary the table lacks: a new one just after the representative below it (after
    // the new primaries of that gap, whose order against it is not known).
    this.approximate++;
    const i = this.searchPrimary(prefix, x);
    const low = i >= 0 ? (this.repP[i] as number) : (this.repP[0] as number) - 1;
    return [...found, { p: low + 0.75, s: COMMON, t: COMMON, han: -1 }];
  }

  /** Secondary and tertiary weights of x, whose primaries equal those of `prefix` (CEs `found`). */
  refine(x: string, prefix: string, found: CE[]): CE[] {
    if (this.accent(prefix, x) === 0) {
      if (this.full(prefix, x) === 0) return found;
      const first = found.find((c) => c.p !== 0 || c.han >= 0) as CE;
      const t = this.probeTertiary(x, first.p);
      return found.map((c) => (c.p !== 0 || c.han >= 0 ? { ...c, t } : c));
    }
    // The secondaries differ: is x prefix + a mark?
    const m = this.searchMark((mk) => this.accent(prefix + mk, x));
    if (m.equal) {
      const mark = this.marks[m.index] as Mark;
      if (this.full(prefix + mark.str, x) !== 0) this.approximate++;
      return [...found, { p: 0, s: mark.s, t: mark.t, han: -1 }];
    }
    this.approximate++;
    return [...found, { p: 0, s: m.between, t: COMMON, han: -1 }];
  }

  /** The tertiary weight of x among the table's characters with x's (single) primary p. */
  probeTertiary(x: string, p: number): number {
    let r = 0;
    let h = this.repP.length - 1;
    while (r < h) {
      const mid = (r + h) >> 1;
      if ((this.repP[mid] as number) < p) r = mid + 1;
      else h = mid;
    }
    const vs = this.repP[r] === p ? this.variants[r] : undefined;
    if (!vs || vs.length === 0) {
      this.approximate++;
      return COMMON + 0.5;
    }
    let lo = -1;
    let hi = vs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.full((vs[mid] as { str: string }).str, x) <= 0) lo = mid;
      else hi = mid - 1;
    }
    if (lo >= 0 && this.full((vs[lo] as { str: string }).str, x) === 0) return (vs[lo] as { t: number }).t;
    const below = lo >= 0 ? (vs[lo] as { t: number }).t : 0;
    const above = lo + 1 < vs.length ? (vs[lo + 1] as { t: number }).t : this.tertiaries + 1;
    return (below + above) / 2;
  }

  /** Binary search over the marks with cmp(mark string) = its order against x. */
  searchMark(cmp: (mark: string) => number): { equal: boolean; index: number; between: number } {
    let lo = -1;
    let hi = this.marks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (cmp((this.marks[mid] as Mark).str) <= 0) lo = mid;
      else hi = mid - 1;
    }
    if (lo >= 0 && cmp((this.marks[lo] as Mark).str) === 0) return { equal: true, index: lo, between: 0 };
    const below = lo >= 0 ? (this.marks[lo] as Mark).s : COMMON;
    const above = lo + 1 < this.marks.length ? (this.marks[lo + 1] as Mark).s : below + 1;
    return { equal: false, index: lo, between: (below + above) / 2 };
  }

  /** A primary-ignorable character: its secondary and tertiary, found after "a". */
  probeMark(x: string): CE {
    const a = 'a';
    if (this.accent(a + x, a) === 0) {
      // Tertiary-only.
      this.approximate++;
      return { p: 0, s: 0, t: COMMON, han: -1 };
    }
    const m = this.searchMark((mk) => this.accent(a + mk, a + x));
    if (!m.equal) {
      this.approximate++;
      return { p: 0, s: m.between, t: COMMON, han: -1 };
    }
    // The secondary of marks[m.index]: the tertiary among the marks with that secondary.
    const s = (this.marks[m.index] as Mark).s;
    let first = m.index;
    while (first > 0 && (this.marks[first - 1] as Mark).s === s) first--;
    let prevT = 0;
    for (let k = first; k < this.marks.length && (this.marks[k] as Mark).s === s; k++) {
      const mk = this.marks[k] as Mark;
      const c = this.full(a + mk.str, a + x);
      if (c === 0) return { p: 0, s, t: mk.t, han: -1 };
      if (c > 0) return { p: 0, s, t: (prevT + mk.t) / 2, han: -1 };
      prevT = mk.t;
    }
    return { p: 0, s, t: prevT + 0.5, han: -1 };
  }

  /**
   * Places the given code points: sorted with ICU once, then swept against the representatives
   * (the primary position only moves forward), so each costs a few comparisons. Characters
   * between two representatives get new primaries, one per class of characters equal at
   * primary strength, in ICU's order.
   */
  placeAll(cps: number[], maxTableP: number, place: (cp: number, ces: CE[]) => void): { top: number[]; hanLike: string[] } {
    const top: number[] = [];
    const hanLike: string[] = [];
    const strs = [...cps].sort((a, b) => a - b).map((cp) => String.fromCodePoint(cp));
    strs.sort((a, b) => this.full(a, b));
    const cpOf = (x: string): number => x.codePointAt(0) as number;
    const n = this.repS.length;
    let i = -1;
    let primary = false;
    let gap = Number.NaN;
    let classes: string[][] = [];
    let prevInGap = false;
    const flush = (): void => {
      if (classes.length > 0) this.assignGap(gap, classes, maxTableP, place);
      classes = [];
    };
    // Characters placed next to table characters: where one's weights do not rise above the
    // previous one's (same primaries) as ICU's order says they should, they become the previous
    // one's with the last secondary or tertiary raised a little (or the same, if ICU says equal).
    let prevX: string | undefined;
    let prevCEs: CE[] = [];
    const placeNear = (x: string, ces: CE[]): void => {
      let mine = ces;
      if (prevX !== undefined && compareCEs(prevCEs, mine) >= 0 && this.base(prevX, x) === 0) {
        const c = this.full(prevX, x);
        if (c === 0) mine = prevCEs;
        else if (c < 0) mine = bumpWeight(prevCEs, this.accent(prevX, x) !== 0 ? 's' : 't');
      }
      place(cpOf(x), mine);
      this.placedSorted.push(x);
      prevX = x;
      prevCEs = mine;
    };
    for (const x of strs) {
      if (!primary) {
        if (this.full(x, '') === 0) {
          place(cpOf(x), []);
          continue;
        }
        if (this.base(x, '') === 0) {
          const y = this.findEqual(x);
          placeNear(x, y !== undefined ? this.cesOf(y) : [this.probeMark(x)]);
          continue;
        }
        primary = true;
      }
      const last = classes[classes.length - 1];
      if (prevInGap && last && this.base(last[last.length - 1] as string, x) === 0) {
        last.push(x);
        continue;
      }
      const moved = this.advance(i, x);
      const stay = moved === i && prevInGap;
      i = moved;
      prevInGap = false;
      const rep = i >= 0 ? (this.repS[i] as string) : undefined;
      if (!stay) {
        // Not known to lie beyond every character of the gap so far: check rep and expansions,
        // first for a table character equal to x.
        const equal = rep !== undefined && this.base(rep, x) === 0;
        if (equal || (rep !== undefined && this.base(rep + '\uffff', x) > 0)) {
          const y = this.findEqual(x);
          if (y !== undefined) placeNear(x, this.cesOf(y));
          else {
            placeNear(
              x,
              this.weightsBetween(x, 't') ??
                this.weightsBetween(x, 's') ??
                (equal ? this.refine(x, rep, this.cesOf(rep)) : this.probeExpansion(x)),
            );
          }
          continue;
        }
      }
      if (i === n - 1 && this.base(x, '\u{10fffd}') > 0) {
        top.push(cpOf(x));
        continue;
      }
      if (i === n - 1 && this.base(x, '\u4e00') >= 0) {
        // Among the Han ideographs (a variant of one, say): placed against ICU's Han order.
        hanLike.push(x);
        continue;
      }
      if (i !== gap) {
        flush();
        gap = i;
      }
      classes.push([x]);
      prevInGap = true;
    }
    flush();
    return { top, hanLike };
  }

  /**
   * New primaries just after repP[gap] (or after every table primary for the last gap), one per
   * class; within a class, the secondary or tertiary rises wherever ICU sees a difference.
   */
  assignGap(gap: number, classes: string[][], maxTableP: number, place: (cp: number, ces: CE[]) => void): void {
    const low = gap < 0 ? (this.repP[0] as number) - 1 : gap === this.repP.length - 1 ? maxTableP : (this.repP[gap] as number);
    for (let k = 0; k < classes.length; k++) {
      const members = classes[k] as string[];
      const p = low + ((k + 1) / (classes.length + 1)) * 0.5;
      let s = COMMON;
      let t = COMMON;
      let prev = members[0] as string;
      for (let j = 0; j < members.length; j++) {
        const m = members[j] as string;
        if (j > 0) {
          if (this.accent(prev, m) !== 0) {
            s += 1 / 64;
            t = COMMON;
          } else if (this.full(prev, m) !== 0) {
            t += 0.5;
          }
        }
        place(m.codePointAt(0) as number, [{ p, s, t, han: -1 }]);
        prev = m;
      }
    }
  }
}

/**
 * The table characters the running ICU orders differently from the DUCET: indexes into `strs`,
 * which is in DUCET order (group[i] === group[j] where the DUCET collates them equal). Where a
 * neighbouring pair disagrees with ICU, either the block before the break belongs later or the
 * block after it belongs earlier: the smaller of the two is taken out (both found by binary
 * search, the list being ICU-ordered between breaks). Repeats on the new neighbours.
 */
function findDisplaced(strs: readonly string[], group: Int32Array, cal: Calibrator): Uint8Array {
  const removed = new Uint8Array(strs.length);
  const ours = (i: number, j: number): number => (group[i] === group[j] ? 0 : i < j ? -1 : 1);
  let cur: number[] = Array.from(strs, (_, i) => i);
  let dirty: Set<number> | undefined; // pair positions to check; undefined: all
  for (let round = 0; round < 50; round++) {
    const breaks: number[] = [];
    let changed = false;
    for (let k = 0; k + 1 < cur.length; k++) {
      if (dirty && !dirty.has(k)) continue;
      const a = cur[k] as number;
      const b = cur[k + 1] as number;
      const o = ours(a, b);
      const c = cal.full(strs[a] as string, strs[b] as string);
      const t = c < 0 ? -1 : c > 0 ? 1 : 0;
      if (o === t) continue;
      if (t > 0) {
        breaks.push(k);
      } else {
        // Equal for one side only.
        removed[a] = removed[b] = 1;
        changed = true;
      }
    }
    for (let k = 0; k < breaks.length; k++) {
      const b = breaks[k] as number;
      const lo = k > 0 ? (breaks[k - 1] as number) + 1 : 0;
      const hi = k + 1 < breaks.length ? (breaks[k + 1] as number) : cur.length - 1;
      const after = strs[cur[b + 1] as number] as string;
      const before = strs[cur[b] as number] as string;
      // First position in [lo, b] that ICU puts after cur[b+1].
      let x = lo;
      let y = b;
      while (x < y) {
        const mid = (x + y) >> 1;
        if (cal.full(strs[cur[mid] as number] as string, after) > 0) y = mid;
        else x = mid + 1;
      }
      const first = x;
      // Last position in [b+1, hi] that ICU puts before cur[b].
      x = b + 1;
      y = hi;
      while (x < y) {
        const mid = (x + y + 1) >> 1;
        if (cal.full(strs[cur[mid] as number] as string, before) < 0) x = mid;
        else y = mid - 1;
      }
      const last = x;
      if (b - first + 1 <= last - b) for (let j = first; j <= b; j++) removed[cur[j] as number] = 1;
      else for (let j = b + 1; j <= last; j++) removed[cur[j] as number] = 1;
      changed = true;
    }
    if (!changed) break;
    const next: number[] = [];
    dirty = new Set<number>();
    let prev = -2;
    for (let k = 0; k < cur.length; k++) {
      const i = cur[k] as number;
      if (removed[i]) continue;
      if (next.length > 0 && k !== prev + 1) dirty.add(next.length - 1);
      next.push(i);
      prev = k;
    }
    cur = next;
  }
  return removed;
}


/** Code points the running Unicode may assign that the table lacks: all but Han and private use. */
const SCAN_RANGES: readonly (readonly [number, number])[] = [
  [0x0000, 0x33ff],
  [0x4dc0, 0x4dff],
  [0xa000, 0xabff],
  [0xf900, 0x1ffff],
  [0x2f800, 0x2ffff],
  [0xe0000, 0xe0fff],
];

/**
 * Calibration indexes the code points of planes 0-3 and the first 4096 of plane 14: all the
 * table has, and all the running Unicode may assign outside Han ideographs and private use.
 */
const CAL_SIZE = 0x41000;
function calIndex(cp: number): number {
  return cp < 0x40000 ? cp : cp >= 0xe0000 && cp < 0xe1000 ? cp - 0xa0000 : -1;
}

/** The id of the common secondary and tertiary weights (the lowest of their levels). */
const COMMON = 1;

/** Fractional weight ids inserted by calibration → new integral ids after the table's. */
class NewIds {
  vals: Float64Array;
  constructor(values: number[], readonly base: number) {
    const a = Float64Array.from(values).sort();
    let n = 0;
    for (let i = 0; i < a.length; i++) if (n === 0 || a[i] !== a[n - 1]) a[n++] = a[i] as number;
    this.vals = a.slice(0, n);
  }
  get count(): number {
    return this.vals.length;
  }
  id(v: number): number {
    if (v <= this.base && v === Math.floor(v)) return v;
    let lo = 0;
    let hi = this.vals.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.vals[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    return this.base + 1 + lo;
  }
  /** Every id, in weight order. */
  order(): Int32Array {
    const out = new Int32Array(this.base + this.vals.length);
    let k = 0;
    let f = 0;
    for (let v = 1; v <= this.base; v++) {
      while (f < this.vals.length && (this.vals[f] as number) < v) out[k++] = this.base + 1 + f++;
      out[k++] = v;
    }
    while (f < this.vals.length) out[k++] = this.base + 1 + f++;
    return out;
  }
}

/** Each code point's code (by calIndex) as the table gives it. */
function tableValues(d: Decoded): Int32Array {
  const values = new Int32Array(CAL_SIZE).fill(CODE_IMPLICIT);
  values.fill(CODE_HANGUL, 0xac00, 0xd7a4);
  const first = d.first;
  const codes = d.codes;
  for (let e = 0; e < d.singles; e++) {
    const i = calIndex(first[e] as number);
    if (i < 0) throw new Error('collation data: a code point outside the calibrated planes');
    values[i] = codes[e] as number;
  }
  return values;
}

/** The collation elements of a code (table ids). */
function cesOfCode(code: number, ex: Int32Array, into: CE[]): void {
  if (code > 0) {
    into.push({ p: code >>> 15, s: (code >>> 6) & 0x1ff, t: code & 0x3f, han: -1 });
  } else if (code <= CODE_EXPANSION && code > CODE_CONTRACTION) {
    let at = CODE_EXPANSION - code;
    const n = ex[at++] as number;
    for (let k = 0; k < n; k++) {
      const v = ex[at++] as number;
      if (v < 0) {
        const st = ex[at++] as number;
        into.push({ p: 0, s: (st >>> 6) & 0x1ff, t: st & 0x3f, han: -1 - v });
      } else if (v > 0) {
        into.push({ p: v >>> 15, s: (v >>> 6) & 0x1ff, t: v & 0x3f, han: -1 });
      }
    }
  }
}

/** The ordered singles as strings, and their DUCET equality groups. */
function orderedStrings(d: Decoded): { strs: string[]; group: Int32Array } {
  const n = d.ordered;
  const strs: string[] = new Array<string>(n);
  const group = new Int32Array(n);
  const first = d.first;
  const eq = d.equalToPrevious;
  for (let i = 0, g = 0; i < n; i++) {
    strs[i] = String.fromCodePoint(first[i] as number);
    if (i > 0 && eq[i] === 0) g++;
    group[i] = g;
  }
  return { strs, group };
}

/** Representatives of the trusted primaries, their tertiary variants, and the marks. */
function collectRepresentatives(d: Decoded, strs: readonly string[], displaced: Uint8Array, cal: Calibrator): void {
  let prevRep = -1;
  let prevMark = -1;
  const ces: CE[] = [];
  const codes = d.codes;
  for (let i = 0; i < d.ordered; i++) {
    if (displaced[i]) continue;
    cal.trusted.push(strs[i] as string);
    const code = codes[i] as number;
    let primaryCount = 0;
    let p = 0;
    if (code > 0) {
      p = code >>> 15;
      primaryCount = p === 0 ? 0 : 1;
    } else if (code <= CODE_EXPANSION) {
      ces.length = 0;
      cesOfCode(code, d.expansions, ces);
      for (const c of ces) {
        if (c.p !== 0 || c.han >= 0) {
          primaryCount++;
          p = c.p;
        }
      }
    }
    if (primaryCount === 1) {
      if (p !== prevRep) {
        cal.repP.push(p);
        cal.repS.push(strs[i] as string);
        cal.variants.push([]);
        prevRep = p;
      }
      if (code > 0 && ((code >>> 6) & 0x1ff) === COMMON) {
        (cal.variants[cal.variants.length - 1] as { t: number; str: string }[]).push({ t: code & 0x3f, str: strs[i] as string });
      }
    } else if (primaryCount === 0 && code > 0 && ((code >>> 6) & 0x1ff) !== 0) {
      const st = code & 0x7fff;
      if (st !== prevMark) cal.marks.push({ s: st >>> 6, t: st & 0x3f, str: strs[i] as string });
      prevMark = st;
    }
  }
}

/** The code points the running Unicode assigns and the table lacks (but Han ideographs). */
function unknownAssigned(values: Int32Array): number[] {
  let units = 0;
  for (const [from, to] of SCAN_RANGES) units += (to - from + 1) * 2;
  const u16 = new Uint16Array(units);
  let u = 0;
  for (const [from, to] of SCAN_RANGES) {
    for (let cp = from; cp <= to; cp++) {
      if (values[calIndex(cp)] !== CODE_IMPLICIT || (cp >= 0xd800 && cp <= 0xf8ff)) continue; // surrogates, private use
      if (cp < 0x10000) {
        u16[u++] = cp;
      } else {
        u16[u++] = 0xd800 + ((cp - 0x10000) >> 10);
        u16[u++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      }
    }
  }
  const units16 = Buffer.from(u16.buffer, 0, u * 2);
  if (!LITTLE_ENDIAN) units16.swap16();
  const found: number[] = [];
  for (const m of units16.toString('utf16le').matchAll(/[^\P{Assigned}\p{Unified_Ideograph}]/gu)) {
    found.push(m[0].codePointAt(0) as number);
  }
  return found;
}

/** The two-stage trie over all code points; identical blocks shared (block 0: all implicit). */
function buildTrie(values: Int32Array): { stage1: Uint16Array; stage2: Int32Array } {
  const stage1 = new Uint16Array(0x110000 >> TRIE_SHIFT);
  const blocks: number[] = [-1]; // block id → its offset in `values`
  const byHash = new Map<number, number[]>();
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
  const blockBytes = TRIE_BLOCK * 4;
  for (let b = 0; b < CAL_SIZE >> TRIE_SHIFT; b++) {
    const off = b << TRIE_SHIFT;
    let h = 0;
    let plain = true;
    for (let i = off; i < off + TRIE_BLOCK; i++) {
      const v = values[i] as number;
      if (v !== CODE_IMPLICIT) plain = false;
      h = (Math.imul(h, 31) + v) | 0;
    }
    if (plain) continue;
    const same = byHash.get(h);
    let id = -1;
    if (same) {
      for (const o of same) {
        const x = (blocks[o] as number) * 4;
        if (bytes.compare(bytes, x, x + blockBytes, off * 4, off * 4 + blockBytes) === 0) id = o;
      }
    }
    if (id < 0) {
      id = blocks.length;
      blocks.push(off);
      if (same) same.push(id);
      else byHash.set(h, [id]);
    }
    stage1[(b < 0x40000 >> TRIE_SHIFT ? off : off + 0xa0000) >> TRIE_SHIFT] = id;
  }
  const stage2 = new Int32Array(blocks.length * TRIE_BLOCK);
  stage2.fill(CODE_IMPLICIT, 0, TRIE_BLOCK);
  for (let id = 1; id < blocks.length; id++) {
    const off = blocks[id] as number;
    stage2.set(values.subarray(off, off + TRIE_BLOCK), id * TRIE_BLOCK);
  }
  return { stage1, stage2 };
}

/**
 * Byte codes of the primaries, in weight order: one byte for those in `oneByteOrder` (as many
 * as the lead bytes allow, most important first), two for the rest; the ids from `topFrom` on
 * (U+FFFD, U+FFFF: after every implicit weight) get TOP_LEAD and a second byte.
 */
function primaryCodes(
  order: Int32Array,
  oneByteOrder: readonly number[],
  topFrom: number,
): { pLead: Uint8Array; pTrail: Uint8Array; oneByte: number; leads: number } {
  const n = order.length;
  const pLead = new Uint8Array(n + 1);
  const pTrail = new Uint8Array(n + 1);
  const ones = new Uint8Array(n + 1);
  /** Allocates with the first `oneByte` one-byte primaries; the last lead byte used. */
  const allocate = (oneByte: number): number => {
    ones.fill(0);
    for (let k = 0; k < oneByte; k++) ones[oneByteOrder[k] as number] = 1;
    let lead = 1;
    let trail = 256;
    for (let k = 0; k < n; k++) {
      const id = order[k] as number;
      if (id >= topFrom) continue;
      if (ones[id]) {
        pLead[id] = ++lead;
        pTrail[id] = 0;
        trail = 256;
      } else {
        if (trail > 255) {
          lead++;
          trail = 2;
        }
        pLead[id] = lead;
        pTrail[id] = trail++;
      }
    }
    return lead;
  };
  // The most one-byte primaries that fit (more of them never need fewer lead bytes).
  let lo = 0;
  let hi = oneByteOrder.length;
  if (allocate(0) > TABLE_LEAD_LAST) throw new Error('collation: too many primaries for the key format');
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (allocate(mid) <= TABLE_LEAD_LAST) lo = mid;
    else hi = mid - 1;
  }
  const lead = allocate(lo);
  for (let id = topFrom; id <= n; id++) {
    pLead[id] = TOP_LEAD;
    pTrail[id] = 2 + id - topFrom;
  }
  return { pLead, pTrail, oneByte: lo, leads: lead - 1 };
}

/** The collation elements with the last non-zero weight of a level raised to just below the next integral id. */
function bumpWeight(ces: readonly CE[], level: 's' | 't'): CE[] {
  const out = ces.map((c) => ({ ...c }));
  let at = out.length - 1;
  while (at >= 0 && (out[at] as CE)[level] === 0) at--;
  if (at < 0) return level === 's' ? bumpWeight(ces, 't') : out;
  const c = out[at] as CE;
  const v = c[level];
  c[level] = Number.isInteger(v) ? v + 0.5 : (v + Math.ceil(v)) / 2;
  return out;
}

/** UCA comparison of two collation element lists (Han primaries after all others). */
function compareCEs(a: readonly CE[], b: readonly CE[]): number {
  for (const level of ['p', 's', 't'] as const) {
    const x = a.filter((c) => c[level] !== 0 || (level === 'p' && c.han >= 0)).map((c) => (level === 'p' && c.han >= 0 ? 1e9 + c.han : c[level]));
    const y = b.filter((c) => c[level] !== 0 || (level === 'p' && c.han >= 0)).map((c) => (level === 'p' && c.han >= 0 ? 1e9 + c.han : c[level]));
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) < (y[i] as number) ? -1 : 1;
    if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  }
  return 0;
}

function sameCEs(a: readonly CE[], b: readonly CE[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as CE;
    const y = b[i] as CE;
    if (x.p !== y.p || x.s !== y.s || x.t !== y.t || x.han !== y.han) return false;
  }
  return true;
}

/** Calibrating the table against one ICU gives everything the tables need beyond the DUCET. */
interface Calibration {
  /** The characters placed by probing (displaced or added), and their codes. */
  placedCps: Int32Array;
  placedCodes: Int32Array;
  /** Expansions of the placed characters, after the table's. */
  moreExpansions: Int32Array;
  /** Contractions added: their lengths, code points and codes. */
  contractionLens: Int32Array;
  contractionCps: Int32Array;
  contractionCodes: Int32Array;
  /** Every weight id in weight order, per level: the table's (1..n) and the inserted ones. */
  pOrder: Int32Array;
  sOrder: Int32Array;
  tOrder: Int32Array;
  /** The id of the top primary (U+FFFF), or -1. */
  /** The primary ids from this one on are the top ones (U+FFFD, U+FFFF). */
  topFrom: number;
  /** Combining classes of non-starters newer than the table's: code points, classes. */
  cccCps: Int32Array;
  cccClasses: Float64Array;
  displaced: number;
  added: number;
  approximate: number;
  comparisons: number;
}

/** Calibrates the DUCET against the running ICU (see the module comment). */
function calibrate(d: Decoded, values: Int32Array, alsoDisplaced: ReadonlySet<number> = new Set()): Calibration {
  const ex = d.expansions;
  /** Characters calibration places (re-placed or added), with their collation elements. */
  const placed = new Map<number, CE[]>();
  const cesOfCp = (cp: number, into: CE[]): void => {
    const mine = placed.get(cp);
    if (mine) {
      into.push(...mine);
    } else if (cp >= 0xac00 && cp <= 0xd7a3) {
      for (const j of hangulJamo(cp)) cesOfCp(j, into);
    } else {
      const i = calIndex(cp);
      if (i >= 0) cesOfCode(values[i] as number, ex, into);
    }
  };
  const cesOfString = (s: string): CE[] => {
    const r: CE[] = [];
    for (const ch of s) cesOfCp(ch.codePointAt(0) as number, r);
    return r;
  };
  const cal = new Calibrator(cesOfString, d.tertiaries);

  // 1. The table's characters in DUCET order, neighbours compared with ICU.
  const { strs, group } = orderedStrings(d);
  const displaced = findDisplaced(strs, group, cal);
  // U+FFFD is the DUCET's last primary, but CLDR's root puts it after every implicit weight.
  const fffd = strs.indexOf('\ufffd');
  if (fffd >= 0) displaced[fffd] = 1;
  for (let i = 0; i < d.ordered; i++) if (alsoDisplaced.has(d.first[i] as number)) displaced[i] = 1;
  collectRepresentatives(d, strs, displaced, cal);

  // 2. Placed by probing: the displaced; the code points the running Unicode assigns and the
  // table lacks (Han ideographs are done apart); U+FFFE and U+FFFF.
  const probes: number[] = [];
  for (let i = 0; i < d.ordered; i++) if (displaced[i]) probes.push(d.first[i] as number);
  const nDisplaced = probes.length;
  probes.push(...unknownAssigned(values), 0xfffe, 0xffff);
  const { top, hanLike } = cal.placeAll(probes, d.primaries, (cp, list) => placed.set(cp, list));
  if (hanLike.length > 0) {
    // Characters with a Han ideograph's primary: found by binary search in ICU's Han order.
    hanRank ??= sortHan();
    const byRank: number[] = [];
    hanRank.forEach((r, i) => {
      if (r !== 0) byRank[r - 1] = i + HAN_FIRST;
    });
    for (const x of hanLike) {
      let lo = 0;
      let hi = byRank.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cal.base(String.fromCodePoint(byRank[mid] as number), x) < 0) lo = mid + 1;
        else hi = mid;
      }
      const hanCp = byRank[lo] as number;
      const h = String.fromCodePoint(hanCp);
      // Equal to a table character with that primary (a radical, a compatibility ideograph)?
      let ces: CE[] | undefined;
      for (let e = d.ordered; e < d.singles && !ces; e++) {
        const list: CE[] = [];
        cesOfCode(d.codes[e] as number, ex, list);
        const y = String.fromCodePoint(d.first[e] as number);
        if (list.length === 1 && (list[0] as CE).han === hanCp && cal.full(y, x) === 0) ces = list;
      }
      if (!ces) {
        const ce: CE = { p: 0, s: COMMON, t: COMMON, han: hanCp };
        if (cal.base(h, x) !== 0) cal.approximate++;
        else if (cal.accent(h, x) < 0) ce.s += 0.5;
        else if (cal.full(h, x) < 0) ce.t += 0.5;
        else if (cal.full(h, x) > 0) cal.approximate++;
        ces = [ce];
      }
      placed.set(x.codePointAt(0) as number, ces);
    }
  }
  // Above every implicit weight (U+FFFD, U+FFFF in CLDR's root), in ICU's order.
  top.forEach((cp, k) => {
    const prev = top[k - 1];
    const p = prev === undefined ? P_TOP : ((placed.get(prev) as CE[])[0] as CE).p + (cal.base(String.fromCodePoint(prev), String.fromCodePoint(cp)) === 0 ? 0 : 1);
    placed.set(cp, [{ p, s: COMMON, t: COMMON, han: -1 }]);
  });

  // Canonical decompositions of placed characters that ICU collates as the character itself
  // (its canonical closure) where plain lookup would not: added as contractions.
  const placedCps = [...placed.keys()];
  const placedStrs = placedCps.map((cp) => String.fromCodePoint(cp));
  const nfds = placedStrs.join('\0').normalize('NFD').split('\0');
  const added: { cps: number[]; ces: CE[] }[] = [];
  for (let k = 0; k < placedStrs.length; k++) {
    const s = placedStrs[k] as string;
    const nfd = nfds[k] as string;
    if (nfd === s || nfd.length < 2) continue;
    const mine = placed.get(placedCps[k] as number) as CE[];
    if (sameCEs(mine, cesOfString(nfd)) || cal.full(s, nfd) !== 0) continue;
    added.push({ cps: Array.from(nfd, (c) => c.codePointAt(0) as number), ces: mine });
  }

  // 3. Ids for the inserted weights, after the table's; codes for the placed characters.
  const fp: number[] = [];
  const fs: number[] = [];
  const ft: number[] = [];
  for (const list of placed.values()) {
    for (const c of list) {
      if (c.p !== Math.floor(c.p) || c.p > d.primaries) fp.push(c.p);
      if (c.s !== Math.floor(c.s)) fs.push(c.s);
      if (c.t !== Math.floor(c.t)) ft.push(c.t);
    }
  }
  const P = new NewIds(fp, d.primaries);
  const S = new NewIds(fs, d.secondaries);
  const T = new NewIds(ft, d.tertiaries);
  if (P.base + P.count > 0xffff || S.base + S.count > 0x1ff || T.base + T.count > 0x3f) throw new Error('collation: too many weights');
  const pack = (c: CE): number => ((c.p === 0 ? 0 : P.id(c.p)) << 15) | ((c.s === 0 ? 0 : S.id(c.s)) << 6) | (c.t === 0 ? 0 : T.id(c.t));
  const moreExpansions: number[] = [];
  const codeOf = (list: CE[]): number => {
    if (list.length === 0) return 0;
    if (list.length === 1 && (list[0] as CE).han < 0) return pack(list[0] as CE);
    const at = ex.length + moreExpansions.length;
    moreExpansions.push(list.length);
    for (const c of list) {
      if (c.han >= 0) moreExpansions.push(-1 - c.han);
      moreExpansions.push(pack(c));
    }
    return CODE_EXPANSION - at;
  };
  const placedCodes = placedCps.map((cp) => codeOf(placed.get(cp) as CE[]));
  const contractionCodes = added.map((a) => codeOf(a.ces));
  const newCcc = combiningClasses(probes, d.ccc);
  return {
    placedCps: Int32Array.from(placedCps),
    placedCodes: Int32Array.from(placedCodes),
    moreExpansions: Int32Array.from(moreExpansions),
    contractionLens: Int32Array.from(added, (a) => a.cps.length),
    contractionCps: Int32Array.from(added.flatMap((a) => a.cps)),
    contractionCodes: Int32Array.from(contractionCodes),
    pOrder: P.order(),
    sOrder: S.order(),
    tOrder: T.order(),
    topFrom: top.length > 0 ? P.id(P_TOP) : P.base + P.count + 1,
    cccCps: Int32Array.from(newCcc.keys()),
    cccClasses: Float64Array.from(newCcc.values()),
    displaced: nDisplaced,
    added: probes.length - nDisplaced,
    approximate: cal.approximate,
    comparisons: cal.comparisons,
  };
}

/**
 * Canonical combining classes of the given code points that are marks the class table (an older
 * Unicode's) lacks, found from how NFD reorders them against one mark of each known class. Only
 * their order and whether they are zero matter (for discontiguous contractions), so a class
 * between two known ones is fractional.
 */
function combiningClasses(cps: readonly number[], known: ReadonlyMap<number, number>): Map<number, number> {
  const refs: { cls: number; str: string }[] = [];
  const seen = new Set<number>();
  for (const [cp, cls] of [...known].sort((a, b) => a[1] - b[1] || a[0] - b[0])) {
    const str = String.fromCodePoint(cp);
    if (seen.has(cls) || str.normalize('NFD') !== str) continue;
    seen.add(cls);
    refs.push({ cls, str });
  }
  const found = new Map<number, number>();
  if (refs.length === 0) return found;
  const moves = (s: string): boolean => s.normalize('NFD') !== s;
  for (const cp of cps) {
    const x = String.fromCodePoint(cp);
    if (known.has(cp) || !/\p{M}/u.test(x) || x.normalize('NFD') !== x) continue;
    // NFD puts a mark of a lower (non-zero) class before x, and x before one of a higher class;
    // a starter (class 0) never moves.
    const lowerGoesFirst = (r: { str: string }): boolean => moves(`a${x}${r.str}`);
    const xGoesFirst = (r: { str: string }): boolean => moves(`a${r.str}${x}`);
    if (!lowerGoesFirst(refs[0] as { str: string }) && !xGoesFirst(refs[refs.length - 1] as { str: string })) continue;
    // The first reference whose class is not below x's.
    let lo = 0;
    let hi = refs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (lowerGoesFirst(refs[mid] as { str: string })) lo = mid + 1;
      else hi = mid;
    }
    const at = refs[lo];
    if (at && !xGoesFirst(at)) found.set(cp, at.cls);
    else found.set(cp, ((lo > 0 ? (refs[lo - 1] as { cls: number }).cls : 0) + (at ? at.cls : 256)) / 2);
  }
  return found;
}

/** The lookup tables from the table and a calibration. */
function assemble(d: Decoded, values: Int32Array, cal: Calibration, source: CollationStats['source'], started: number): Tables {
  const ccc = new Map(d.ccc);
  cal.cccCps.forEach((cp, k) => ccc.set(cp, cal.cccClasses[k] as number));
  for (let k = 0; k < cal.placedCps.length; k++) values[calIndex(cal.placedCps[k] as number)] = cal.placedCodes[k] as number;
  const expansions = new Int32Array(d.expansions.length + cal.moreExpansions.length);
  expansions.set(d.expansions);
  expansions.set(cal.moreExpansions, d.expansions.length);

  const contractions: Contraction[] = [];
  const byStarter = new Map<number, Contraction>();
  const addContraction = (cps: readonly number[], code: number): void => {
    const starter = cps[0] as number;
    const si = calIndex(starter);
    let c = byStarter.get(starter);
    if (!c) {
      c = { single: values[si] as number, entries: new Map(), prefixes: new Set(), maxSuffix: 0, discontiguous: false };
      byStarter.set(starter, c);
      values[si] = CODE_CONTRACTION - contractions.length;
      contractions.push(c);
    }
    c.entries.set(String.fromCodePoint(...cps.slice(1)), code);
    for (let k = 2; k < cps.length; k++) c.prefixes.add(String.fromCodePoint(...cps.slice(1, k)));
    c.maxSuffix = Math.max(c.maxSuffix, cps.length - 1);
    if ((ccc.get(cps[cps.length - 1] as number) ?? 0) !== 0) c.discontiguous = true;
  };
  for (let e = d.singles; e < d.first.length; e++) addContraction([d.first[e] as number, ...(d.extra[e - d.singles] as number[])], d.codes[e] as number);
  for (let k = 0, at = 0; k < cal.contractionLens.length; k++) {
    const n = cal.contractionLens[k] as number;
    addContraction(Array.from(cal.contractionCps.subarray(at, at + n)), cal.contractionCodes[k] as number);
    at += n;
  }

  const { stage1, stage2 } = buildTrie(values);
  const oneByteOrder: number[] = [];
  for (const ch of ONE_BYTE_CHARS) {
    let v = values[ch.charCodeAt(0)] as number;
    if (v <= CODE_CONTRACTION) v = (contractions[CODE_CONTRACTION - v] as Contraction).single;
    if (v > 0 && v >>> 15 !== 0 && !oneByteOrder.includes(v >>> 15)) oneByteOrder.push(v >>> 15);
  }
  const { pLead, pTrail, oneByte, leads } = primaryCodes(cal.pOrder, oneByteOrder, cal.topFrom);
  const sRank = rankOf(cal.sOrder);
  const tRank = rankOf(cal.tOrder);
  if (sRank[COMMON] !== 1 || tRank[COMMON] !== 1) throw new Error('collation: a weight below the common weight');

  const stats: CollationStats = {
    source,
    digest: '',
    ducetVersion: DUCET_VERSION,
    icuVersion: process.versions.icu ?? 'none',
    tableEntries: d.first.length,
    tableBuildMs: 0,
    displaced: cal.displaced,
    added: cal.added,
    approximate: cal.approximate,
    addedContractions: cal.contractionLens.length,
    primaries: cal.pOrder.length,
    oneBytePrimaries: oneByte,
    primaryLeadBytes: leads,
    secondaries: sRank.length - 1,
    tertiaries: tRank.length - 1,
    icuComparisons: cal.comparisons,
    hanIdeographs: 0,
    hanCalibrationMs: 0,
    memoryBytes: 0,
  };
  const t: Tables = { stage1, stage2, expansions, contractions, starters: byStarter, ccc, pLead, pTrail, sRank, tRank, stats };
  finishStats(t, started);
  return t;
}

function finishStats(t: Tables, started: number): void {
  let mapBytes = 0;
  for (const c of t.contractions) mapBytes += 64 + (c.entries.size + c.prefixes.size) * 48;
  t.stats.memoryBytes =
    t.stage1.byteLength + t.stage2.byteLength + t.expansions.byteLength + t.pLead.byteLength * 2 + t.sRank.byteLength +
    t.tRank.byteLength + mapBytes + t.ccc.size * 40;
  t.stats.tableBuildMs = performance.now() - started;
}

function rankOf(order: Int32Array): Uint16Array {
  const r = new Uint16Array(order.length + 1);
  for (let k = 0; k < order.length; k++) r[order[k] as number] = k + 1;
  return r;
}

// ---- the calibration snapshot ----

/** Identifies the table and this algorithm: a snapshot is only used for the same. */
function dataDigest(): string {
  return createHash('sha256').update(`${ALGORITHM_VERSION}\n${DUCET_PACKED}`).digest('hex').slice(0, 16);
}

function snapshotUsable(): boolean {
  return (
    ICU_SNAPSHOT !== undefined &&
    ICU_SNAPSHOT.icu === process.versions.icu &&
    ICU_SNAPSHOT.unicode === process.versions.unicode &&
    ICU_SNAPSHOT.data === dataDigest()
  );
}

type Packable = Int32Array | Uint8Array | Uint16Array;

/**
 * Typed arrays, deflated: Int32Arrays as zigzag deltas (LEB128), Uint8Arrays and Uint16Arrays
 * (little-endian) as they are; each preceded by its kind and length.
 */
function packArrays(arrays: readonly Packable[]): string {
  const parts: Buffer[] = [];
  for (const a of arrays) {
    const head = Buffer.alloc(5);
    head.writeUInt32LE(a.length, 1);
    if (a instanceof Int32Array) {
      const bytes: number[] = [];
      let prev = 0;
      for (let i = 0; i < a.length; i++) {
        const d = (a[i] as number) - prev;
        prev = a[i] as number;
        let z = d >= 0 ? d * 2 : -d * 2 - 1;
        while (z >= 0x80) {
          bytes.push((z & 0x7f) | 0x80);
          z = Math.floor(z / 128);
        }
        bytes.push(z);
      }
      head[0] = 0;
      parts.push(head, Buffer.from(bytes));
    } else if (a instanceof Uint8Array) {
      head[0] = 1;
      parts.push(head, Buffer.from(a));
    } else {
      head[0] = 2;
      const b = Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      if (!LITTLE_ENDIAN) b.swap16();
      parts.push(head, b);
    }
  }
  return deflateRawSync(Buffer.concat(parts), { level: 9 }).toString('base64');
}

/**
 * Fills `into` from zigzag-encoded LEB128 deltas starting at `at` in `b`; returns the position
 * after them.
 */
function readDeltas(b: Buffer, at: number, into: Int32Array): number {
  let v = 0;
  for (let i = 0; i < into.length; i++) {
    let z = 0;
    let shift = 0;
    let x: number;
    do {
      x = b[at++] as number;
      z |= (x & 0x7f) << shift;
      shift += 7;
    } while (x >= 0x80);
    v += (z >>> 1) ^ -(z & 1);
    into[i] = v;
  }
  return at;
}

function unpackArrays(packed: string): Packable[] {
  const b = inflateRawSync(Buffer.from(packed, 'base64'));
  const out: Packable[] = [];
  let at = 0;
  while (at < b.length) {
    const kind = b[at] as number;
    const n = b.readUInt32LE(at + 1);
    at += 5;
    if (kind === 0) {
      const a = new Int32Array(n);
      at = readDeltas(b, at, a);
      out.push(a);
    } else if (kind === 1) {
      out.push(new Uint8Array(b.subarray(at, at + n)));
      at += n;
    } else {
      const copy = Buffer.from(b.subarray(at, at + n * 2));
      if (!LITTLE_ENDIAN) copy.swap16();
      out.push(new Uint16Array(copy.buffer, copy.byteOffset, n));
      at += n * 2;
    }
  }
  return out;
}

const STAT_FIELDS = [
  'tableEntries', 'displaced', 'added', 'approximate', 'addedContractions', 'primaries', 'oneBytePrimaries',
  'primaryLeadBytes', 'secondaries', 'tertiaries', 'icuComparisons',
] as const;

/** The lookup tables, packed for collation-icu.ts. */
function packTables(t: Tables): string {
  const starters: number[] = [];
  const singles: number[] = [];
  const flags: number[] = [];
  const sizes: number[] = [];
  const suffixLens: number[] = [];
  const suffixCps: number[] = [];
  const codes: number[] = [];
  for (const [starter, c] of t.starters) {
    starters.push(starter);
    singles.push(c.single);
    flags.push(c.discontiguous ? 1 : 0);
    sizes.push(c.entries.size);
    for (const [suffix, code] of c.entries) {
      const cps = Array.from(suffix, (ch) => ch.codePointAt(0) as number);
      suffixLens.push(cps.length);
      suffixCps.push(...cps);
      codes.push(code);
    }
  }
  return packArrays([
    t.stage1, Int32Array.from(t.stage2), Int32Array.from(t.expansions), t.pLead, t.pTrail, t.sRank, t.tRank,
    Int32Array.from(starters), Int32Array.from(singles), Uint8Array.from(flags), Int32Array.from(sizes),
    Uint8Array.from(suffixLens), Int32Array.from(suffixCps), Int32Array.from(codes),
    Int32Array.from(t.ccc.keys()), Int32Array.from(t.ccc.values(), (c) => c * 2), // classes may be halves
    Int32Array.from(STAT_FIELDS, (f) => t.stats[f]),
  ]);
}

function unpackTables(packed: string, started: number): Tables {
  const a = unpackArrays(packed);
  const i32 = (i: number): Int32Array => a[i] as Int32Array;
  const u8 = (i: number): Uint8Array => a[i] as Uint8Array;
  const u16 = (i: number): Uint16Array => a[i] as Uint16Array;
  const contractions: Contraction[] = [];
  const starterMap = new Map<number, Contraction>();
  const [starters, singles, flags, sizes, suffixLens, suffixCps, codes] = [i32(7), i32(8), u8(9), i32(10), u8(11), i32(12), i32(13)];
  let e = 0;
  let at = 0;
  for (let k = 0; k < starters.length; k++) {
    const c: Contraction = { single: singles[k] as number, entries: new Map(), prefixes: new Set(), maxSuffix: 0, discontiguous: flags[k] === 1 };
    for (let j = 0; j < (sizes[k] as number); j++, e++) {
      const n = suffixLens[e] as number;
      const cps = Array.from(suffixCps.subarray(at, at + n));
      at += n;
      c.entries.set(String.fromCodePoint(...cps), codes[e] as number);
      for (let m = 1; m < n; m++) c.prefixes.add(String.fromCodePoint(...cps.slice(0, m)));
      c.maxSuffix = Math.max(c.maxSuffix, n);
    }
    contractions.push(c);
    starterMap.set(starters[k] as number, c);
  }
  const cccCps = i32(14);
  const cccValues = i32(15);
  const ccc = new Map<number, number>();
  for (let k = 0; k < cccCps.length; k++) ccc.set(cccCps[k] as number, (cccValues[k] as number) / 2);
  const numbers = i32(16);
  const stats: CollationStats = {
    source: 'snapshot',
    digest: '',
    ducetVersion: DUCET_VERSION,
    icuVersion: process.versions.icu ?? 'none',
    tableEntries: 0,
    tableBuildMs: 0,
    displaced: 0,
    added: 0,
    approximate: 0,
    addedContractions: 0,
    primaries: 0,
    oneBytePrimaries: 0,
    primaryLeadBytes: 0,
    secondaries: 0,
    tertiaries: 0,
    icuComparisons: 0,
    hanIdeographs: 0,
    hanCalibrationMs: 0,
    memoryBytes: 0,
  };
  STAT_FIELDS.forEach((f, k) => (stats[f] = numbers[k] as number));
  const t: Tables = {
    stage1: u16(0),
    stage2: i32(1),
    expansions: i32(2),
    contractions,
    starters: starterMap,
    ccc,
    pLead: u8(3),
    pTrail: u8(4),
    sRank: u16(5),
    tRank: u16(6),
    stats,
  };
  finishStats(t, started);
  return t;
}

/**
 * Checks tables against ICU on a sample: keys for every 257th code point of planes 0-1 that has
 * weights (and a few strings), sorted, each neighbouring pair compared with ICU.
 */
function spotCheck(t: Tables): boolean {
  const sample: string[] = ['', 'a', 'A', 'á', 'Å', 'ß', 'ss', 'æ', 'ae', 'l·l', 'й', 'й', 'й̣', '가', '각', 'ค่า'];
  for (let cp = 0; cp < 0x20000; cp += 257) {
    const code = lookup(t, cp);
    if (code === CODE_IMPLICIT || (cp >= 0xd800 && cp < 0xe000) || hasHanWeights(t, code)) continue;
    sample.push(String.fromCodePoint(cp));
  }
  const keyed = sample.map((s) => ({ s, k: stringKey(t, s) }));
  keyed.sort((x, y) => Buffer.compare(x.k, y.k));
  for (let i = 1; i < keyed.length; i++) {
    const x = keyed[i - 1] as { s: string; k: Buffer };
    const y = keyed[i] as { s: string; k: Buffer };
    if (Math.sign(icuCompare(x.s, y.s)) !== Math.sign(Buffer.compare(x.k, y.k))) return false;
  }
  return true;
}

/** Whether a code refers to Han ideographs' weights (which need the Han ranks). */
function hasHanWeights(t: Tables, code: number): boolean {
  if (code <= CODE_CONTRACTION) return hasHanWeights(t, (t.contractions[CODE_CONTRACTION - code] as Contraction).single);
  if (code > CODE_EXPANSION) return false;
  const ex = t.expansions;
  let at = CODE_EXPANSION - code;
  const n = ex[at++] as number;
  for (let k = 0; k < n; k++) {
    if ((ex[at++] as number) < 0) return true;
  }
  return false;
}

/** The collation key of one string with the given tables (no type tag). */
function stringKey(t: Tables, s: string): Buffer {
  pos = 0;
  encodeCollatedString(t, s);
  return Buffer.from(out.subarray(0, pos));
}

function buildTables(fresh = false): Tables {
  const started = performance.now();
  if (!fresh && snapshotUsable()) {
    const t = unpackTables((ICU_SNAPSHOT as IcuSnapshot).tables, started);
    if (spotCheck(t)) return t;
  }
  const d = decodePacked();
  const values = tableValues(d);
  return assemble(d, values, calibrate(d, values.slice()), 'calibrated', started);
}

function hangulJamo(cp: number): number[] {
  const s = cp - 0xac00;
  const l = 0x1100 + Math.floor(s / 588);
  const v = 0x1161 + Math.floor((s % 588) / 28);
  const t = s % 28;
  return t === 0 ? [l, v] : [l, v, 0x11a7 + t];
}

/** The Han ideographs of the running Unicode, in code point order, as ranges. */
function hanIdeographs(): { ranges: [number, number][]; count: number } {
  const ranges: [number, number][] = [];
  let count = 0;
  const re = /\p{Unified_Ideograph}+/gu;
  for (const [lo, hi] of HAN_RANGES) {
    const units = new Uint16Array((hi - lo + 1) * 2);
    let u = 0;
    for (let cp = lo; cp <= hi; cp++) {
      if (cp < 0x10000) {
        units[u++] = cp;
      } else {
        units[u++] = 0xd800 + ((cp - 0x10000) >> 10);
        units[u++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      }
    }
    const b = Buffer.from(units.buffer, 0, u * 2);
    if (!LITTLE_ENDIAN) b.swap16();
    const str = b.toString('utf16le');
    for (const m of str.matchAll(re)) {
      const first = m[0].codePointAt(0) as number;
      const n = lo < 0x10000 ? m[0].length : m[0].length / 2;
      ranges.push([first, first + n - 1]);
      count += n;
    }
  }
  return { ranges, count };
}

/** Han ideographs sorted with ICU: rank + 1 by code point (index cp - HAN_FIRST). */
function sortHan(): Uint32Array {
  const { ranges, count } = hanIdeographs();
  const han: string[] = new Array<string>(count);
  let k = 0;
  for (const [lo, hi] of ranges) for (let cp = lo; cp <= hi; cp++) han[k++] = String.fromCodePoint(cp);
  han.sort(icuCompare);
  const ranks = new Uint32Array(HAN_END - HAN_FIRST);
  // Every unified ideograph has its own primary in ICU's root collation.
  for (let i = 0; i < han.length; i++) ranks[((han[i] as string).codePointAt(0) as number) - HAN_FIRST] = i + 1;
  return ranks;
}

/** The Han ranks: from the snapshot (checked on a sample), else sorted with ICU. */
function ensureHan(): Uint32Array {
  if (hanRank !== undefined) return hanRank;
  const started = performance.now();
  const t = getTables();
  let ranks: Uint32Array | undefined;
  let count = 0;
  if (t.stats.source === 'snapshot' && ICU_SNAPSHOT) {
    // Same Unicode version, so the same ideographs; ICU's order checked on a sample.
    const [ranges, order] = unpackArrays(ICU_SNAPSHOT.han) as [Int32Array, Int32Array];
    ranks = new Uint32Array(HAN_END - HAN_FIRST);
    for (let r = 0; r < ranges.length; r += 2) {
      for (let cp = ranges[r] as number; cp <= (ranges[r + 1] as number); cp++) ranks[cp - HAN_FIRST] = (order[count++] as number) + 1;
    }
    for (let r = 0; r < ranges.length && ranks; r += 2) {
      for (let cp = ranges[r] as number; cp < (ranges[r + 1] as number); cp += 97) {
        const ours = Math.sign((ranks[cp - HAN_FIRST] as number) - (ranks[cp + 1 - HAN_FIRST] as number));
        if (Math.sign(icuCompare(String.fromCodePoint(cp), String.fromCodePoint(cp + 1))) !== ours) {
          ranks = undefined;
          break;
        }
      }
    }
  }
  if (!ranks) {
    ranks = sortHan();
    count = 0;
    for (let i = 0; i < ranks.length; i++) if (ranks[i] !== 0) count++;
  }
  hanRank = ranks;
  t.stats.hanIdeographs = count;
  t.stats.hanCalibrationMs = performance.now() - started;
  t.stats.memoryBytes += ranks.byteLength;
  return ranks;
}

/** The Han order as a snapshot: the ideographs' ranges and their ranks, by code point. */
function hanSnapshot(ranks: Uint32Array): string {
  const { ranges } = hanIdeographs();
  const order: number[] = [];
  for (const [lo, hi] of ranges) for (let cp = lo; cp <= hi; cp++) order.push((ranks[cp - HAN_FIRST] as number) - 1);
  return packArrays([Int32Array.from(ranges.flat()), Int32Array.from(order)]);
}

/** What scripts/gen-collation-data.mjs stores in collation-icu.ts. */
export interface IcuSnapshot {
  icu: string;
  unicode: string;
  /** The table and algorithm it was made from (see dataDigest). */
  data: string;
  /** The lookup tables (packArrays). */
  tables: string;
  /** ICU's order of the Han ideographs (packArrays: code point ranges, ranks). */
  han: string;
  /** The digest of the tables (part of COLLATION_VERSION). */
  digest: string;
}

/**
 * Calibrates afresh against the running ICU (ignoring any snapshot), for the generator to store
 * as src/views/collation-icu.ts; `digest` identifies the resulting tables.
 */
export function buildCollationSnapshot(): IcuSnapshot & { stats: CollationStats } {
  const started = performance.now();
  const d = decodePacked();
  const values = tableValues(d);
  // Calibrate, then check every single code point's key order against ICU; characters in a
  // disagreeing pair are re-placed by probing, until none disagree (or a few rounds).
  const alsoDisplaced = new Set<number>();
  let t: Tables;
  for (let round = 0; ; round++) {
    const cal = calibrate(d, values.slice(), alsoDisplaced);
    t = assemble(d, values.slice(), cal, 'calibrated', started);
    const bad = disagreements(t);
    if (bad.length === 0 || round === 4) break;
    for (const cp of bad) alsoDisplaced.add(cp);
  }
  return {
    icu: process.versions.icu ?? 'none',
    unicode: process.versions.unicode ?? 'none',
    data: dataDigest(),
    tables: packTables(t),
    han: hanSnapshot(sortHan()),
    digest: tablesDigest(t),
    stats: t.stats,
  };
}

/**
 * The code points (of the calibrated planes, Han ideographs aside) in neighbouring pairs whose
 * key order differs from ICU's.
 */
function disagreements(t: Tables): number[] {
  hanRank ??= sortHan(); // the same as ensureHan() would give, without the module's tables
  const items: { cp: number; s: string; k: Buffer }[] = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp === 0x40000) cp = 0xe0000;
    if (cp === 0xe1000) break;
    if ((cp >= 0xd800 && cp < 0xe000) || lookup(t, cp) === CODE_IMPLICIT) continue;
    const s = String.fromCodePoint(cp);
    items.push({ cp, s, k: stringKey(t, s) });
  }
  items.sort((a, b) => Buffer.compare(a.k, b.k));
  const bad = new Set<number>();
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1] as { cp: number; s: string; k: Buffer };
    const b = items[i] as { cp: number; s: string; k: Buffer };
    if (Math.sign(Buffer.compare(a.k, b.k)) !== Math.sign(icuCompare(a.s, b.s))) {
      bad.add(a.cp);
      bad.add(b.cp);
    }
  }
  return [...bad];
}

/** A digest of the lookup tables, to compare a snapshot's with a fresh calibration's. */
function tablesDigest(t: Tables): string {
  const h = createHash('sha256');
  for (const a of [t.stage1, t.stage2, t.expansions, t.pLead, t.pTrail, t.sRank, t.tRank]) {
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  for (const c of t.contractions) h.update(`${c.single}:${c.discontiguous}:${[...c.entries].join(',')}|`);
  h.update([...t.ccc].join(','));
  return h.digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Sort keys

let out = new Uint8Array(4096);
let pos = 0;
let secs = new Uint16Array(256);
let ters = new Uint8Array(256);
let nSec = 0;
let nTer = 0;
let cpBuf = new Int32Array(256);

function reserve(n: number): void {
  if (pos + n <= out.length) return;
  const bigger = new Uint8Array(Math.max(out.length * 2, pos + n));
  bigger.set(out.subarray(0, pos));
  out = bigger;
}

function reserveLevels(n: number): void {
  if (nSec + n > secs.length) {
    const b = new Uint16Array(Math.max(secs.length * 2, nSec + n));
    b.set(secs.subarray(0, nSec));
    secs = b;
  }
  if (nTer + n > ters.length) {
    const b = new Uint8Array(Math.max(ters.length * 2, nTer + n));
    b.set(ters.subarray(0, nTer));
    ters = b;
  }
}

/** An order-preserving binary sort key: Math.sign(collate(a, b)) === Math.sign(Buffer.compare(sortKey(a), sortKey(b))) for all JSON values a, b (and with `raw`, against collateRaw). Equal-collating values get equal keys. */
export function sortKey(value: unknown, raw = false): Buffer {
  if (tables === undefined && !raw) getTables(); // before using the buffer: building checks keys too
  pos = 0;
  encodeValue(value, raw);
  return Buffer.from(out.subarray(0, pos));
}

/** Type tags in raw mode, by default tag: Erlang's term order (see rawTypeOrder). */
const RAW_TAG: Record<number, number> = {
  [TAG_NEGATIVE]: 0x02, [TAG_ZERO]: 0x03, [TAG_POSITIVE]: 0x04,
  [TAG_FALSE]: 0x05, [TAG_NULL]: 0x06, [TAG_TRUE]: 0x07,
  [TAG_OBJECT]: 0x08, [TAG_ARRAY]: 0x09, [TAG_STRING]: 0x0a,
};

function encodeValue(v: unknown, raw: boolean): void {
  const at = pos;
  encodeTagged(v, raw);
  if (raw) out[at] = RAW_TAG[out[at]!]!;
}

function encodeTagged(v: unknown, raw: boolean): void {
  reserve(16);
  if (v === null || v === undefined) {
    out[pos++] = TAG_NULL;
    return;
  }
  switch (typeof v) {
    case 'boolean':
      out[pos++] = v ? TAG_TRUE : TAG_FALSE;
      return;
    case 'number':
      encodeNumber(v);
      return;
    case 'string':
      out[pos++] = TAG_STRING;
      if (raw) encodeRawString(v);
      else encodeCollatedString(tables ?? getTables(), v);
      return;
    case 'object':
      if (Array.isArray(v)) {
        out[pos++] = TAG_ARRAY;
        for (let i = 0; i < v.length; i++) encodeValue(v[i], raw);
      } else {
        out[pos++] = TAG_OBJECT;
        const o = v as Record<string, unknown>;
        for (const k of Object.keys(o)) {
          reserve(1);
          out[pos++] = TAG_STRING;
          if (raw) encodeRawString(k);
          else encodeCollatedString(tables ?? getTables(), k);
          encodeValue(o[k], raw);
        }
      }
      reserve(1);
      out[pos++] = END;
      return;
    default:
      throw new TypeError(`cannot make a sort key of a ${typeof v}`);
  }
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0; // little-endian: high word at [1]

function encodeNumber(x: number): void {
  if (x === 0) {
    out[pos++] = TAG_ZERO;
    return;
  }
  const negative = x < 0;
  f64[0] = Number.isNaN(x) ? NaN : negative ? -x : x;
  const hi = (u32[HI] as number) & 0x7fffffff; // bits 62..32
  const lo = u32[1 - HI] as number; // bits 31..0
  out[pos++] = negative ? TAG_NEGATIVE : TAG_POSITIVE;
  // 63 bits = 9 groups of 7, from bit 62 down.
  const groups = [
    hi >>> 24,
    (hi >>> 17) & 0x7f,
    (hi >>> 10) & 0x7f,
    (hi >>> 3) & 0x7f,
    ((hi & 0x7) << 4) | (lo >>> 28),
    (lo >>> 21) & 0x7f,
    (lo >>> 14) & 0x7f,
    (lo >>> 7) & 0x7f,
    lo & 0x7f,
  ];
  let last = 8;
  while (last > 0 && groups[last] === 0) last--;
  for (let g = 0; g <= last; g++) {
    const b = (((groups[g] as number) << 1) | (g < last ? 1 : 0)) & 0xff;
    out[pos++] = negative ? 255 - b : b;
  }
}

function encodeRawString(s: string): void {
  reserve(s.length * 3 + 1);
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c < 2) {
        out[pos++] = 0x01;
        out[pos++] = c + 1;
      } else {
        out[pos++] = c;
      }
    } else if (c < 0x800) {
      out[pos++] = 0xc0 | (c >> 6);
      out[pos++] = 0x80 | (c & 0x3f);
    } else {
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d < 0xe000) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          i++;
          out[pos++] = 0xf0 | (c >> 18);
          out[pos++] = 0x80 | ((c >> 12) & 0x3f);
          out[pos++] = 0x80 | ((c >> 6) & 0x3f);
          out[pos++] = 0x80 | (c & 0x3f);
          continue;
        }
      }
      out[pos++] = 0xe0 | (c >> 12);
      out[pos++] = 0x80 | ((c >> 6) & 0x3f);
      out[pos++] = 0x80 | (c & 0x3f);
    }
  }
  out[pos++] = END;
}

function encodeCollatedString(t: Tables, text: string): void {
  // Canonically equivalent strings collate equal (ICU as Intl.Collator sets it up normalizes):
  // the UCA on NFD. Text below U+00C0 is its own NFD.
  let s = text;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) >= 0xc0) {
      s = s.normalize('NFD');
      break;
    }
  }
  // Code points (lone surrogates as themselves).
  const len = s.length;
  if (cpBuf.length < len) cpBuf = new Int32Array(Math.max(len, cpBuf.length * 2));
  const cps = cpBuf;
  let n = 0;
  for (let i = 0; i < len; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    cps[n++] = c;
  }
  nSec = 0;
  nTer = 0;
  const { stage1, stage2 } = t;
  for (let i = 0; i < n; i++) {
    const cp = cps[i] as number;
    if (cp < 0) continue; // consumed by a contraction
    let code = stage2[((stage1[cp >> TRIE_SHIFT] as number) << TRIE_SHIFT) | (cp & (TRIE_BLOCK - 1))] as number;
    if (code <= CODE_CONTRACTION) code = matchContraction(t, t.contractions[CODE_CONTRACTION - code] as Contraction, cps, i, n);
    emit(t, code, cp);
  }
  // Levels.
  reserve(nSec * 2 + nTer * 2 + 4);
  out[pos++] = LEVEL_SEPARATOR;
  writeLevel(secs, nSec, t.sRank);
  out[pos++] = LEVEL_SEPARATOR;
  writeLevel(ters, nTer, t.tRank);
  out[pos++] = END;
}

function emit(t: Tables, code: number, cp: number): void {
  reserve(8);
  reserveLevels(2);
  if (code > 0) {
    const p = code >>> 15;
    if (p !== 0) {
      out[pos++] = t.pLead[p] as number;
      const tr = t.pTrail[p] as number;
      if (tr !== 0) out[pos++] = tr;
    }
    const s = (code >>> 6) & 0x1ff;
    if (s !== 0) secs[nSec++] = s;
    const w = code & 0x3f;
    if (w !== 0) ters[nTer++] = w;
  } else if (code === 0) {
    // completely ignorable
  } else if (code === CODE_IMPLICIT) {
    emitImplicit(cp, 1 << 6 | 1);
  } else if (code === CODE_HANGUL) {
    const s = cp - 0xac00;
    emit(t, lookup(t, 0x1100 + Math.floor(s / 588)), 0);
    emit(t, lookup(t, 0x1161 + Math.floor((s % 588) / 28)), 0);
    if (s % 28 !== 0) emit(t, lookup(t, 0x11a7 + (s % 28)), 0);
  } else if (code <= CODE_EXPANSION) {
    const ex = t.expansions;
    let at = CODE_EXPANSION - code;
    const count = ex[at++] as number;
    for (let k = 0; k < count; k++) {
      const v = ex[at++] as number;
      if (v < 0) emitImplicit(-1 - v, ex[at++] as number);
      else emit(t, v === 0 ? 0 : v, 0);
    }
  }
}

function lookup(t: Tables, cp: number): number {
  return t.stage2[((t.stage1[cp >> TRIE_SHIFT] as number) << TRIE_SHIFT) | (cp & (TRIE_BLOCK - 1))] as number;
}

/** Han ideographs (by ICU's radical-stroke rank) and unassigned code points (by code point). */
function emitImplicit(cp: number, st: number): void {
  reserve(8);
  reserveLevels(2);
  let rank = 0;
  if (cp >= HAN_FIRST && cp < HAN_END) {
    const ranks = hanRank ?? ensureHan();
    rank = ranks[cp - HAN_FIRST] as number;
  }
  if (rank !== 0) {
    const r = rank - 1;
    out[pos++] = HAN_LEAD + Math.floor(r / 64516);
    out[pos++] = 2 + Math.floor((r % 64516) / 254);
    out[pos++] = 2 + (r % 254);
  } else {
    out[pos++] = IMPLICIT_LEAD;
    out[pos++] = 2 + Math.floor(cp / 64516);
    out[pos++] = 2 + Math.floor((cp % 64516) / 254);
    out[pos++] = 2 + (cp % 254);
  }
  const s = st >>> 6;
  if (s !== 0) secs[nSec++] = s;
  const w = st & 0x3f;
  if (w !== 0) ters[nTer++] = w;
}

/**
 * The longest contiguous match at cps[i] (a contraction starter), then discontiguous matches
 * among the non-starters that follow (UTS #10 S2.1.1–S2.1.3, as ICU does them: a non-starter is
 * blocked when the last skipped one has a combining class ≥ its own). Consumed code points are
 * set to -1.
 */
function matchContraction(t: Tables, c: Contraction, cps: Int32Array, i: number, n: number): number {
  let code = c.single;
  let key = '';
  let matched = '';
  let lastMatchAt = i;
  const taken: number[] = [];
  let j = i + 1;
  for (let k = 0; k < c.maxSuffix; k++) {
    while (j < n && (cps[j] as number) < 0) j++;
    if (j >= n) break;
    key += String.fromCodePoint(cps[j] as number);
    taken.push(j);
    const v = c.entries.get(key);
    if (v !== undefined) {
      code = v;
      matched = key;
      lastMatchAt = j;
      for (const x of taken) cps[x] = -1;
      taken.length = 0;
    } else if (!c.prefixes.has(key)) {
      break;
    }
    j++;
  }
  if (!c.discontiguous) return code;
  // Discontiguous: the first code point after the match must be a non-starter; it is skipped.
  j = lastMatchAt + 1;
  while (j < n && (cps[j] as number) < 0) j++;
  if (j >= n) return code;
  let prevCC = t.ccc.get(cps[j] as number) ?? 0;
  if (prevCC === 0) return code;
  for (j++; j < n; j++) {
    const x = cps[j] as number;
    if (x < 0) continue;
    const cc = t.ccc.get(x) ?? 0;
    if (cc === 0) break;
    const candidate = matched + String.fromCodePoint(x);
    const v = prevCC < cc ? c.entries.get(candidate) : undefined;
    if (v !== undefined) {
      code = v;
      matched = candidate;
      cps[j] = -1;
    } else {
      prevCC = cc;
    }
  }
  return code;
}

/** One level's weights (ids, ranked by `rank`), runs of the common weight compressed. */
function writeLevel(w: Uint16Array | Uint8Array, n: number, rank: Uint16Array): void {
  let run = 0;
  for (let i = 0; i < n; i++) {
    const x = rank[w[i] as number] as number;
    if (x === 1) {
      run++;
      continue;
    }
    reserve(run / COMMON_MAX_COUNT + 4);
    if (run > 0) {
      while (run > COMMON_MAX_COUNT) {
        out[pos++] = COMMON_MIDDLE;
        run -= COMMON_MAX_COUNT;
      }
      out[pos++] = COMMON_HIGH - (run - 1);
      run = 0;
    }
    const r = x - 2;
    if (r < WEIGHT_ONE_BYTE) {
      out[pos++] = WEIGHT_FIRST + r;
    } else {
      out[pos++] = WEIGHT_FIRST + WEIGHT_ONE_BYTE + Math.floor((r - WEIGHT_ONE_BYTE) / 254);
      out[pos++] = 2 + ((r - WEIGHT_ONE_BYTE) % 254);
    }
  }
  if (run > 0) {
    reserve(run / COMMON_MAX_COUNT + 4);
    while (run > COMMON_MAX_COUNT) {
      out[pos++] = COMMON_MIDDLE;
      run -= COMMON_MAX_COUNT;
    }
    out[pos++] = COMMON_LOW + run - 1;
  }
}
