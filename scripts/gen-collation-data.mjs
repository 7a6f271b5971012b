#!/usr/bin/env node
// Generates src/views/collation-data.ts: the DUCET (Unicode's Default Unicode Collation Element
// Table, allkeys.txt) and the canonical combining classes of the non-starters, packed into a
// compact binary table, deflated and base64-encoded into a TypeScript string constant, so the
// server needs no data file at run time and the build needs no copy step.
//
// Usage:
//   node scripts/gen-collation-data.mjs [allkeys.txt] [CombiningClass.pl]
//       writes src/views/collation-data.ts (and resets src/views/collation-icu.ts), then
//   npx tsc -p tsconfig.json --outDir .build/collation
//   node scripts/gen-collation-data.mjs --snapshot [.build/collation/src/views/collation.js]
//       calibrates the compiled module against this Node's ICU and stores the result in
//       src/views/collation-icu.ts, so servers on the same ICU version start without
//       calibrating (they check the snapshot on a sample; other ICU versions calibrate).
// Defaults are the copies Debian's Perl ships:
//   /usr/share/perl/<version>/Unicode/Collate/allkeys.txt
//   /usr/share/perl/<version>/unicore/CombiningClass.pl
// (any allkeys.txt from https://www.unicode.org/Public/UCA/ works; the combining classes can
// also come from UnicodeData.txt's field 3: pass that file instead and it is parsed as such).
//
// Packed layout (all integers little-endian; "zz" = zigzag delta from the previous value as an
// unsigned LEB128 varint), before deflate-raw:
//   "UCA4", then u32: orderedSingles, hanSingles, contractions, expansionLength, cccCount,
//   primaries, secondaries, tertiaries (how many distinct weights each level has); then eight
//   columns, each prefixed by its u32 byte length:
//   1. zz   the first code point of each entry
//   2. zz   each entry's code (see "weights → dense ranks" below)
//   3. u8   the number of code points of each contraction (the entries after the singles)
//   4. u32  the contractions' further code points
//   5. i32  the expansion array
//   6. u32  code points with a non-zero canonical combining class   7. u8 their classes
//   8. u8   for each ordered single: 1 if the DUCET collates it equal to the previous one
// Entries: the single code points without Han weights in DUCET collation order (ties by code
// point), then the single code points whose weights refer to Han ideographs, then contractions.
// Variable-weighting marks ("*") are dropped: CLDR's root collation (ICU's, CouchDB's) is
// non-ignorable. The --snapshot step's output format is described in src/views/collation.ts
// (packTables, hanSnapshot).

import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'src/views/collation-data.ts');

function perlFile(rel) {
  for (const base of ['/usr/share/perl', '/usr/lib/perl5', '/usr/share/perl5']) {
    if (!existsSync(base)) continue;
    for (const v of readdirSync(base).sort().reverse()) {
      const p = join(base, v, rel);
      if (existsSync(p)) return p;
    }
  }
  return undefined;
}

const snapshotOut = join(root, 'src/views/collation-icu.ts');
const chunked = (b64) => {
  const lines = [];
  for (let i = 0; i < b64.length; i += 100) lines.push(`    '${b64.slice(i, i + 100)}'`);
  return lines.join(' +\n');
};
const SNAPSHOT_HEAD = `// GENERATED FILE, do not edit: run \`node scripts/gen-collation-data.mjs --snapshot\` to regenerate.
//
// The calibration of src/views/collation-data.ts against one ICU version (see src/views/collation.ts):
// the characters ICU orders differently from the DUCET or that the DUCET lacks, with their weights,
// and ICU's order of the Han ideographs. Used when the running ICU, Unicode and table are the ones
// below (and a sample agrees with Intl.Collator); otherwise the server calibrates at start-up.
import type { IcuSnapshot } from './collation.js';
`;

if (process.argv[2] === '--snapshot') {
  const modulePath = process.argv[3] ?? join(root, '.build/collation/src/views/collation.js');
  const { buildCollationSnapshot } = await import(modulePath);
  const snap = buildCollationSnapshot();
  const ts = `${SNAPSHOT_HEAD}//
// ICU ${snap.icu}, Unicode ${snap.unicode}: ${snap.stats.displaced} characters re-placed, ${snap.stats.added} added
// (${snap.stats.approximate} approximately), ${snap.stats.addedContractions} contractions added; tables digest ${snap.digest}.

export const ICU_SNAPSHOT: IcuSnapshot | undefined = {
  icu: '${snap.icu}',
  unicode: '${snap.unicode}',
  data: '${snap.data}',
  tables:
${chunked(snap.tables)},
  han:
${chunked(snap.han)},
  digest: '${snap.digest}',
};
`;
  writeFileSync(snapshotOut, ts);
  console.log(`wrote ${snapshotOut}: ICU ${snap.icu}, Unicode ${snap.unicode}, ${ts.length} B, digest ${snap.digest}`);
  process.exit(0);
}

const allkeysPath = process.argv[2] ?? perlFile('Unicode/Collate/allkeys.txt');
const cccPath = process.argv[3] ?? perlFile('unicore/CombiningClass.pl');
if (!allkeysPath || !cccPath) {
  console.error('usage: node scripts/gen-collation-data.mjs allkeys.txt CombiningClass.pl|UnicodeData.txt');
  process.exit(2);
}

// ---- allkeys.txt ----
const allkeys = readFileSync(allkeysPath, 'latin1');
let ducetVersion = '';
const implicitRanges = [];
const entries = [];
for (const raw of allkeys.split('\n')) {
  const line = raw.replace(/#.*/, '').trim();
  if (!line) continue;
  let m = /^@version\s+(\S+)/.exec(line);
  if (m) { ducetVersion = m[1]; continue; }
  m = /^@implicitweights\s+([0-9A-F]+)\.\.([0-9A-F]+);\s*([0-9A-F]+)/.exec(line);
  if (m) { implicitRanges.push([parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16)]); continue; }
  if (line.startsWith('@')) continue;
  m = /^([0-9A-F ]+);\s*((?:\[[.*][0-9A-F]+\.[0-9A-F]+\.[0-9A-F]+(?:\.[0-9A-F]+)?\])+)$/.exec(line);
  if (!m) throw new Error(`unparsed allkeys line: ${raw}`);
  const cps = m[1].trim().split(/\s+/).map((h) => parseInt(h, 16));
  const ces = [...m[2].matchAll(/\[[.*]([0-9A-F]+)\.([0-9A-F]+)\.([0-9A-F]+)/g)].map((c) => [
    parseInt(c[1], 16), parseInt(c[2], 16), parseInt(c[3], 16),
  ]);
  for (const [p, s, t] of ces) {
    if (p > 0xffff || (s !== 0 && (s < 0x20 || s - 0x1f > 0xff)) || t > 0xff) throw new Error(`weight out of range: ${raw}`);
  }
  if (cps.length > 255 || ces.length > 255) throw new Error(`entry too long: ${raw}`);
  entries.push({ cps, ces });
}
if (!ducetVersion) throw new Error('no @version line in allkeys.txt');
// Order: first the single code points without Han implicit weights, in DUCET collation order
// (the order calibration checks against ICU, so the server need not sort them); then the single
// code points whose weights refer to Han ideographs; then the contractions.
const isHanPair = (ces, i) => ces[i][0] >= 0xfb40 && ces[i][0] < 0xfbc0 && i + 1 < ces.length && ces[i + 1][0] >= 0x8000 && ces[i + 1][1] === 0;
const group = (e) => (e.cps.length > 1 ? 2 : e.ces.some((_, i) => isHanPair(e.ces, i)) ? 1 : 0);
function compareCEs(a, b) {
  for (let level = 0; level < 3; level++) {
    const x = a.map((c) => c[level]).filter((w) => w !== 0);
    const y = b.map((c) => c[level]).filter((w) => w !== 0);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    if (x.length !== y.length) return x.length - y.length;
  }
  return 0;
}
function compareCps(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
entries.sort((a, b) => {
  const ga = group(a);
  const gb = group(b);
  if (ga !== gb) return ga - gb;
  if (ga === 0) return compareCEs(a.ces, b.ces) || compareCps(a.cps, b.cps);
  return compareCps(a.cps, b.cps);
});
const groupCounts = [0, 0, 0];
for (const e of entries) groupCounts[group(e)]++;

// ---- combining classes ----
const cccText = readFileSync(cccPath, 'latin1');
const ccc = new Map();
let cccVersion = '';
if (/UnicodeData/i.test(cccPath)) {
  for (const line of cccText.split('\n')) {
    const f = line.split(';');
    if (f.length < 4 || f[3] === '0') continue;
    ccc.set(parseInt(f[0], 16), parseInt(f[3], 10));
  }
  cccVersion = 'UnicodeData.txt';
} else {
  const v = /database, Version ([0-9]+\.[0-9]+\.[0-9]+)/.exec(cccText);
  cccVersion = v ? v[1] : 'unknown';
  const body = cccText.slice(cccText.indexOf("<<'END';") + 8, cccText.lastIndexOf('END'));
  for (const line of body.split('\n')) {
    const f = line.trim().split(/\t/);
    if (f.length < 3) continue;
    const lo = parseInt(f[0], 16);
    const hi = f[1] ? parseInt(f[1], 16) : lo;
    const cls = parseInt(f[2], 10);
    if (cls === 0) continue;
    for (let cp = lo; cp <= hi; cp++) ccc.set(cp, cls);
  }
}

// ---- weights → dense ranks, entries → codes ----
// The server's code for a character (src/views/collation.ts): 0 completely ignorable; > 0 one
// collation element packed as primary << 15 | secondary << 6 | tertiary, each the weight's rank
// among the DUCET's weights of its level (1 = the lowest; the common secondary 0x20 and tertiary
// 0x02 are rank 1); <= -16 an expansion at offset (-16 - code) of the expansion array: a count,
// then per element its packed value, or for a Han ideograph's implicit weights -(1 + code point)
// followed by the packed secondary and tertiary (the server ranks Han ideographs by ICU).
const levels = [new Set(), new Set(), new Set()];
for (const e of entries) {
  for (let i = 0; i < e.ces.length; i++) {
    const [p, s, t] = e.ces[i];
    if (isHanPair(e.ces, i)) {
      levels[1].add(s);
      levels[2].add(t);
      i++;
      continue;
    }
    levels[0].add(p);
    levels[1].add(s);
    levels[2].add(t);
  }
}
const rankMaps = levels.map((set) => {
  const sorted = [...set].filter((w) => w !== 0).sort((x, y) => x - y);
  return new Map(sorted.map((w, i) => [w, i + 1]));
});
const [pRank, sRank, tRank] = rankMaps;
if (sRank.get(0x20) !== 1 || tRank.get(0x02) !== 1) throw new Error('a secondary or tertiary weight below the common one');
if (pRank.size > 0xffff || sRank.size > 0x1ff || tRank.size > 0x3f) throw new Error('too many weights to pack');
const pack = (p, s, t) => ((p ? pRank.get(p) : 0) << 15) | ((s ? sRank.get(s) : 0) << 6) | (t ? tRank.get(t) : 0);
const expansions = [];
const codeOf = (ces) => {
  if (ces.length === 0) return 0;
  if (ces.length === 1) return pack(...ces[0]);
  const at = expansions.length;
  const items = [];
  for (let i = 0; i < ces.length; i++) {
    const [p, s, t] = ces[i];
    if (isHanPair(ces, i)) {
      items.push(-1 - (((p - (p < 0xfb80 ? 0xfb40 : 0xfb80)) << 15) | (ces[i + 1][0] & 0x7fff)), pack(0, s, t));
      i++;
    } else {
      items.push(pack(p, s, t));
    }
  }
  const count = ces.length - items.filter((v) => v < 0).length; // a Han pair is one element
  expansions.push(count, ...items);
  return -16 - at;
};

// ---- pack ----
const u32 = (values) => { const b = Buffer.alloc(values.length * 4); values.forEach((v, i) => b.writeUInt32LE(v, i * 4)); return b; };
const i32 = (values) => { const b = Buffer.alloc(values.length * 4); values.forEach((v, i) => b.writeInt32LE(v, i * 4)); return b; };
const u8 = (values) => Buffer.from(values);
/** Zigzag deltas from the previous value, as unsigned LEB128 varints. */
const deltas = (values) => {
  const out = [];
  let prev = 0;
  for (const v of values) {
    const d = v - prev;
    prev = v;
    let z = d >= 0 ? d * 2 : -d * 2 - 1;
    do { let b = z & 0x7f; z = Math.floor(z / 128); if (z) b |= 0x80; out.push(b); } while (z);
  }
  return Buffer.from(out);
};

const first = entries.map((e) => e.cps[0]);
const codes = entries.map((e) => codeOf(e.ces));
const contractions = entries.filter((e) => e.cps.length > 1);
const keyLens = contractions.map((e) => e.cps.length);
const extraCps = contractions.flatMap((e) => e.cps.slice(1));
const cccCps = [...ccc.keys()].sort((a, b) => a - b);
const equal = [];
for (let i = 0; i < groupCounts[0]; i++) equal.push(i > 0 && compareCEs(entries[i - 1].ces, entries[i].ces) === 0 ? 1 : 0);
const ceCount = entries.reduce((n, e) => n + e.ces.length, 0);

const header = Buffer.alloc(4 + 8 * 4);
header.write('UCA4', 0, 'latin1');
[groupCounts[0], groupCounts[1], groupCounts[2], expansions.length, cccCps.length, pRank.size, sRank.size, tRank.size]
  .forEach((v, i) => header.writeUInt32LE(v, 4 + i * 4));
const columns = [
  deltas(first), deltas(codes), u8(keyLens), u32(extraCps), i32(expansions),
  u32(cccCps), u8(cccCps.map((c) => ccc.get(c))), u8(equal),
];
const parts = [header];
for (const c of columns) {
  const len = Buffer.alloc(4);
  len.writeUInt32LE(c.length);
  parts.push(len, c);
}
const packed = Buffer.concat(parts);
const deflated = deflateRawSync(packed, { level: 9, memLevel: 9 });
const b64 = deflated.toString('base64');

const lines = [];
for (let i = 0; i < b64.length; i += 100) lines.push(`  '${b64.slice(i, i + 100)}'`);

const ts = `// GENERATED FILE, do not edit: run \`node scripts/gen-collation-data.mjs\` to regenerate.
//
// The Default Unicode Collation Element Table (DUCET, allkeys.txt) of Unicode ${ducetVersion}, the
// data of the Unicode Collation Algorithm (UTS #10), as the copy Debian's Perl ships in
// Unicode/Collate/allkeys.txt; and the canonical combining classes of the non-starters
// (Unicode ${cccVersion}, from Perl's unicore/CombiningClass.pl) used for discontiguous contractions.
// ${entries.length} entries (${contractions.length} contractions), ${ceCount} collation elements (${pRank.size} primary,
// ${sRank.size} secondary, ${tRank.size} tertiary weights), ${ccc.size} non-starters:
// ${packed.length} bytes packed, ${deflated.length} deflated. The packed layout is described in the
// generator. src/views/collation.ts decodes it and calibrates it against the running ICU.
//
// Copyright Unicode, Inc. Unicode data files are distributed under the Unicode License
// (https://www.unicode.org/license.txt).

/** The Unicode version of the DUCET below. */
export const DUCET_VERSION = '${ducetVersion}';

/** The Unicode version of the combining classes below. */
export const CCC_UNICODE_VERSION = '${cccVersion}';

/** allkeys.txt's @implicitweights lines: [first, last, base] (scripts weighted by code point). */
export const DUCET_IMPLICIT_RANGES: readonly (readonly [number, number, number])[] = ${JSON.stringify(implicitRanges)};

/** The packed table, deflate-raw compressed, base64. */
export const DUCET_PACKED: string =
${lines.join(' +\n')};
`;
writeFileSync(out, ts);
writeFileSync(snapshotOut, `${SNAPSHOT_HEAD}\nexport const ICU_SNAPSHOT: IcuSnapshot | undefined = undefined;\n`);
console.log(`wrote ${out}: DUCET ${ducetVersion}, ${entries.length} entries, ${ceCount} CEs, ccc ${cccVersion} (${ccc.size}); packed ${packed.length} B, deflated ${deflated.length} B, module ${ts.length} B`);
