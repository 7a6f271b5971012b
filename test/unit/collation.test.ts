import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  COLLATION_VERSION,
  buildCollationSnapshot,
  collate,
  collateRaw,
  collationStats,
  sortKey,
  warmUpCollation,
} from '../../src/views/collation.js';

// ---- a seeded PRNG and random JSON keys, so a failure reproduces from its seed ----

function prng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

class Gen {
  readonly rnd: () => number;
  constructor(seed: number) {
    this.rnd = prng(seed);
  }
  int(n: number): number {
    return Math.floor(this.rnd() * n);
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)] as T;
  }
  range(lo: number, hi: number): string {
    return String.fromCodePoint(lo + this.int(hi - lo + 1));
  }
  /** One character from a weighted mix of scripts and troublemakers. */
  char(): string {
    const pools: [number, () => string][] = [
      [8, () => this.range(0x61, 0x7a)], // a-z
      [4, () => this.range(0x41, 0x5a)], // A-Z
      [2, () => this.range(0x30, 0x39)],
      [2, () => this.range(0x20, 0x7e)], // ASCII punctuation
      [3, () => this.range(0xa0, 0xff)], // Latin-1
      [2, () => this.range(0x100, 0x24f)], // Latin Extended
      [2, () => this.range(0x370, 0x3ff)], // Greek
      [2, () => this.range(0x400, 0x4ff)], // Cyrillic
      [2, () => this.range(0x4e00, 0x9fff)], // CJK
      [1, () => this.range(0x3400, 0x4dbf)],
      [1, () => this.range(0x20000, 0x2a6df)],
      [1, () => this.range(0xf900, 0xfaff)],
      [1, () => this.range(0x2e80, 0x2fdf)], // CJK and Kangxi radicals
      [1, () => this.range(0x3040, 0x30ff)], // kana
      [2, () => this.range(0x1f300, 0x1faff)], // emoji, some newer than the DUCET
      [3, () => this.range(0x300, 0x36f)], // combining marks
      [1, () => this.range(0x1ab0, 0x1aff)],
      [1, () => this.range(0x1dc0, 0x1dff)],
      [1, () => this.range(0x20d0, 0x20ff)],
      [1, () => this.range(0xac00, 0xd7a3)], // Hangul syllables
      [1, () => this.range(0x1100, 0x11ff)], // jamo
      [1, () => this.range(0x0e00, 0x0eff)], // Thai, Lao
      [1, () => this.range(0x0f00, 0x0fff)], // Tibetan
      [1, () => this.range(0x0980, 0x0bff)], // Bengali .. Tamil
      [1, () => this.range(0x0590, 0x06ff)], // Hebrew, Arabic
      [1, () => this.pick(['и\u0306', 'И\u0306', 'l·', 'L·', '\u0627\u0653', 'е\u0308', 'ß', 'ss', 'æ', 'Å', 'A\u030a', '\u00b7'])],
      [1, () => this.range(0x0, 0x1f)], // ignorable controls
      [1, () => this.pick(['\u200d', '\ufe0f', '\u00ad', '\u034f'])],
      [1, () => this.range(0xd800, 0xdfff)], // lone surrogates
      [1, () => this.range(0x0, 0xffff)],
      [1, () => this.range(0x10000, 0x1ffff)],
      [1, () => this.range(0x10780, 0x107ba)], // added after the DUCET's Unicode
      [1, () => this.range(0x13000, 0x143ff)],
      [1, () => this.range(0x17000, 0x18d08)],
      [1, () => this.pick(['\ufffd', '\ufffe', '\uffff', '\u{10fffd}', '\u{e0001}', '\u{16ff2}'])],
    ];
    let r = this.int(pools.reduce((n, p) => n + p[0], 0));
    for (const [w, f] of pools) {
      if (r < w) return f();
      r -= w;
    }
    return 'a';
  }
  string(): string {
    let s = '';
    for (let n = this.int(8); n > 0; n--) s += this.char();
    return s;
  }
  /** A string close to s: other case, one more/other/swapped character, another normal form. */
  near(s: string): string {
    const cps = [...s];
    switch (this.int(7)) {
      case 0:
        return s.toUpperCase();
      case 1:
        return s + this.char();
      case 2:
        cps.splice(this.int(cps.length + 1), 0, this.char());
        return cps.join('');
      case 3:
        if (cps.length === 0) return this.char();
        cps[this.int(cps.length)] = this.char();
        return cps.join('');
      case 4:
        return s.normalize(this.pick(['NFD', 'NFC', 'NFKD', 'NFKC'] as const));
      case 5: {
        if (cps.length < 2) return s;
        const i = this.int(cps.length - 1);
        [cps[i], cps[i + 1]] = [cps[i + 1] as string, cps[i] as string];
        return cps.join('');
      }
      default:
        return s.toLowerCase();
    }
  }
  number(): number {
    switch (this.int(6)) {
      case 0:
        return this.int(100) - 50;
      case 1:
        return (this.rnd() - 0.5) * 10;
      case 2:
        return (this.rnd() - 0.5) * 10 ** (this.int(600) - 300);
      case 3:
        return this.pick([0, -0, 1, -1, 0.1, -0.1, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 53, -(2 ** 53), 1e21]);
      case 4:
        return this.int(3);
      default:
        return this.rnd();
    }
  }
  value(depth = 0): Json {
    switch (this.int(depth > 2 ? 6 : 9)) {
      case 0:
        return null;
      case 1:
        return false;
      case 2:
        return true;
      case 3:
      case 4:
        return this.number();
      case 5:
        return this.string();
      case 6:
      case 7:
        return Array.from({ length: this.int(4) }, () => this.value(depth + 1));
      default: {
        const o: { [key: string]: Json } = {};
        for (let n = this.int(3); n > 0; n--) o[this.int(2) ? this.string() : this.pick(['a', 'b', 'c'])] = this.value(depth + 1);
        return o;
      }
    }
  }
  /** A value close to v, so that pairs often agree on a long prefix. */
  nearValue(v: Json): Json {
    if (typeof v === 'string') return this.near(v);
    if (typeof v === 'number') return this.int(2) ? v : this.number();
    if (Array.isArray(v)) {
      const a = v.slice();
      if (a.length > 0 && this.int(2)) {
        const i = this.int(a.length);
        a[i] = this.nearValue(a[i] as Json);
      } else {
        a.push(this.value(2));
      }
      return a;
    }
    if (v !== null && typeof v === 'object') {
      const e = Object.entries(v);
      if (e.length > 0 && this.int(2)) {
        const i = this.int(e.length);
        const [k, x] = e[i] as [string, Json];
        e[i] = [this.int(2) ? this.near(k) : k, this.nearValue(x)];
      }
      return Object.fromEntries(e) as { [key: string]: Json };
    }
    return this.value();
  }
}

/** JSON with every string as its code points, so invisible differences show. */
function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'string' ? [...x].map((c) => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase()}`).join(' ') : x,
  );
}

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
const keyOrder = (a: unknown, b: unknown, raw = false): number => sign(Buffer.compare(sortKey(a, raw), sortKey(b, raw)));

// ---- CouchDB's documented order ----

// From CouchDB's documentation, "Views Collation" → "Collation Specification".
const COUCHDB_ORDER: unknown[] = [
  null,
  false,
  true,
  1,
  2,
  3.0,
  4,
  'a',
  'A',
  'aa',
  'b',
  'B',
  'ba',
  'bb',
  ['a'],
  ['b'],
  ['b', 'c'],
  ['b', 'c', 'a'],
  ['b', 'd'],
  ['b', 'd', 'e'],
  { a: 1 },
  { a: 2 },
  { b: 1 },
  { b: 2 },
  { b: 2, a: 1 },
  { b: 2, c: 2 },
];

test("CouchDB's documented collation order, by collate and by sort key", () => {
  for (let i = 0; i < COUCHDB_ORDER.length; i++) {
    for (let j = 0; j < COUCHDB_ORDER.length; j++) {
      const a = COUCHDB_ORDER[i];
      const b = COUCHDB_ORDER[j];
      const expected = sign(i - j);
      assert.equal(sign(collate(a, b)), expected, `collate(${show(a)}, ${show(b)})`);
      assert.equal(keyOrder(a, b), expected, `sortKey order of ${show(a)}, ${show(b)}`);
    }
  }
  const shuffled = [...COUCHDB_ORDER].reverse();
  assert.deepEqual(shuffled.sort((a, b) => Buffer.compare(sortKey(a), sortKey(b))), COUCHDB_ORDER);
});

test("CouchDB's documented ICU order of ASCII (punctuation, symbols, digits, letters), then more", () => {
  // The "Views Collation" example of ICU's order: _ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % ` ^ + < = > | ~ $ 0 1 ... 9 a A b B ... z Z
  const ascii = ['_', '-', ',', ';', ':', '!', '?', '.', "'", '"', '(', ')', '[', ']', '{', '}', '@', '*', '/', '\\', '&', '#', '%', '`', '^', '+', '<', '=', '>', '|', '~', '$'];
  for (let d = 0; d <= 9; d++) ascii.push(String(d));
  for (let c = 0; c < 26; c++) ascii.push(String.fromCharCode(97 + c), String.fromCharCode(65 + c));
  // Accents after case (secondary before tertiary), then other scripts, Han last.
  const ordered = [...ascii.slice(0, ascii.indexOf('A') + 1), 'á', 'Á', 'ä', ...ascii.slice(ascii.indexOf('A') + 1), 'α', 'Ω', 'а', 'Я', '가', '一', '丁'];
  const intl = new Intl.Collator('en');
  for (let i = 1; i < ordered.length; i++) {
    const a = ordered[i - 1] as string;
    const b = ordered[i] as string;
    assert.equal(sign(intl.compare(a, b)), -1, `ICU puts ${show(a)} before ${show(b)}`);
    assert.equal(sign(collate(a, b)), -1);
    assert.equal(keyOrder(a, b), -1, `${show(a)} < ${show(b)}`);
  }
});

test('types sort null < false < true < numbers < strings < arrays < objects; shorter prefixes first', () => {
  const ordered: unknown[] = [null, false, true, -1e300, -1, 0, 1e-300, 1, 1e300, '', ' ', 'a', [], [null], [null, null], [false], [1], ['a'], [[]], [{}], {}, { '': null }, { a: null }, { a: null, b: null }, { a: false }, { b: null }];
  for (let i = 1; i < ordered.length; i++) {
    const a = ordered[i - 1];
    const b = ordered[i];
    assert.equal(sign(collate(a, b)), -1, `collate ${show(a)} < ${show(b)}`);
    assert.equal(keyOrder(a, b), -1, `key ${show(a)} < ${show(b)}`);
  }
});

test('raw collation orders types as CouchDB does (Erlang term order): numbers, false, null, true, objects, arrays, strings', () => {
  // CouchDB's docs (Views Collation, "Raw collation"): 1, false, null, true, {"a":"a"}, ["a"], "a".
  const ordered: unknown[] = [-1, 0, 1, 1e300, false, null, true, {}, { a: 'a' }, { a: 'b' }, [], [1, 'a'], ['a'], ['a', 1], '', 'A', 'a', 'b'];
  for (let i = 1; i < ordered.length; i++) {
    const a = ordered[i - 1];
    const b = ordered[i];
    assert.equal(sign(collateRaw(a, b)), -1, `collateRaw ${show(a)} < ${show(b)}`);
    assert.equal(keyOrder(a, b, true), -1, `raw key ${show(a)} < ${show(b)}`);
  }
});

test('numbers: an order-preserving encoding of IEEE doubles, compact for small integers', () => {
  const ordered = [-Number.MAX_VALUE, -1e300, -1e21, -(2 ** 53), -100, -3, -2.5, -1, -0.1, -1e-300, -5e-324, 0, 5e-324, 1e-300, 0.1, 0.5, 1, 1.5, 2, 3, 10, 100, 2 ** 31, 2 ** 53, 1e21, 1e300, Number.MAX_VALUE];
  for (let i = 0; i < ordered.length; i++) {
    for (let j = 0; j < ordered.length; j++) {
      assert.equal(keyOrder(ordered[i], ordered[j]), sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
    }
  }
  assert.deepEqual(sortKey(-0), sortKey(0));
  assert.equal(collate(-0, 0), 0);
  assert.equal(collate(3, 3.0), 0);
  assert.ok(sortKey(1).length <= 3 && sortKey(100).length <= 4 && sortKey(0).length === 1);
  assert.ok(sortKey(0.1).length <= 10);
});

test('canonically equivalent strings collate equal and get equal keys; ignorables are ignored', () => {
  const pairs: [string, string][] = [
    ['é', 'e\u0301'],
    ['Å', 'A\u030a'],
    ['Å', '\u212b'],
    ['ệ', 'e\u0323\u0302'],
    ['e\u0302\u0323', 'e\u0323\u0302'],
    ['й', 'и\u0306'],
    ['각', '\u1100\u1161\u11a8'],
    ['a', 'a\u0000'],
    ['', '\u0001'],
  ];
  for (const [a, b] of pairs) {
    assert.equal(collate(a, b), 0, `${show(a)} = ${show(b)}`);
    assert.deepEqual(sortKey(a), sortKey(b), `keys of ${show(a)} and ${show(b)}`);
  }
});

test('collate agrees with new Intl.Collator("en") on strings', () => {
  const intl = new Intl.Collator('en');
  assert.equal(intl.resolvedOptions().locale, 'en');
  const g = new Gen(20240601);
  for (let i = 0; i < 50_000; i++) {
    const a = g.string();
    const b = g.int(2) ? g.near(a) : g.string();
    assert.equal(collate(a, b), sign(intl.compare(a, b)), `${show(a)} vs ${show(b)}`);
  }
});

// ---- the property: key byte order = comparator order ----

for (const seed of [1, 2]) {
  test(`sort key byte order equals collate and collateRaw order on 60,000 random JSON key pairs (seed ${seed})`, () => {
    const g = new Gen(seed);
    const failures: string[] = [];
    let rawFailures = 0;
    let equalPairs = 0;
    for (let i = 0; i < 60_000; i++) {
      const a = g.value();
      const b = g.int(3) ? g.nearValue(a) : g.value();
      const expected = sign(collate(a, b));
      if (expected === 0) equalPairs++;
      const got = keyOrder(a, b);
      if (got !== expected && failures.length < 10) failures.push(`${show(a)} vs ${show(b)}: collate ${expected}, keys ${got}`);
      if (keyOrder(a, b, true) !== sign(collateRaw(a, b))) {
        rawFailures++;
        if (failures.length < 10) failures.push(`raw: ${show(a)} vs ${show(b)}`);
      }
    }
    assert.deepEqual(failures, [], `seed ${seed}`);
    assert.equal(rawFailures, 0);
    assert.ok(equalPairs > 100, 'some pairs collate equal (their keys must be equal)');
  });
}

test('every code point alone (and between letters) sorts by key as ICU sorts it', () => {
  warmUpCollation();
  const intl = new Intl.Collator('en');
  for (const [prefix, suffix] of [
    ['', ''],
    ['x', 'b'],
  ]) {
    const items: { s: string; k: Buffer }[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0x40000 && cp < 0xe0000 && (cp & 0xfff) > 3) continue; // unassigned planes: a sample
      if (cp >= 0xf0000 && (cp & 0xff) > 3) continue; // private use planes: a sample
      const s = prefix + String.fromCodePoint(cp) + suffix;
      items.push({ s, k: sortKey(s) });
    }
    items.sort((a, b) => Buffer.compare(a.k, b.k));
    const failures: string[] = [];
    for (let i = 1; i < items.length; i++) {
      const a = items[i - 1] as { s: string; k: Buffer };
      const b = items[i] as { s: string; k: Buffer };
      const ours = sign(Buffer.compare(a.k, b.k));
      const icu = sign(intl.compare(a.s, b.s));
      if (ours !== icu && failures.length < 10) failures.push(`${show(a.s)} vs ${show(b.s)}: keys ${ours}, ICU ${icu}`);
    }
    assert.deepEqual(failures, [], `${items.length} strings ${show(prefix)} + code point + ${show(suffix)}`);
  }
});

test('keys are self-delimiting: a document id appended does not change the order', () => {
  const g = new Gen(7);
  for (let i = 0; i < 20_000; i++) {
    const a = g.value();
    const b = g.int(2) ? g.nearValue(a) : g.value();
    const ka = sortKey(a);
    const kb = sortKey(b);
    const c = sign(Buffer.compare(ka, kb));
    if (c === 0) continue;
    const withIds = sign(Buffer.compare(Buffer.concat([ka, Buffer.from('\uffff-id-zzz')]), Buffer.concat([kb, Buffer.from('\u0000')])));
    assert.equal(withIds, c, `${show(a)} vs ${show(b)}`);
  }
});

test('keys beyond the store key limit still sort correctly (no truncation)', () => {
  const long = 'a'.repeat(3000);
  const values = [long, long + 'a', long + 'b', long + 'B', [long, 1], [long, 2], { [long]: long }];
  for (let i = 1; i < values.length; i++) {
    assert.equal(keyOrder(values[i - 1], values[i]), -1);
    assert.equal(keyOrder(values[i - 1], values[i], true), sign(collateRaw(values[i - 1], values[i])));
  }
  assert.ok(sortKey(long).length > 1978);
});

test('raw collation: code point (UTF-8 byte) order, lone surrogates included', () => {
  const ordered = ['', '\u0000', '\u0001', '\u0002', 'A', 'B', 'a', 'b', 'é', '\ud7ff', '\ud800', '\udc00', '\ue000', '\uffff', '😀', '\u{10ffff}'];
  for (let i = 1; i < ordered.length; i++) {
    const a = ordered[i - 1] as string;
    const b = ordered[i] as string;
    assert.equal(sign(collateRaw(a, b)), -1, `${show(a)} < ${show(b)}`);
    assert.equal(keyOrder(a, b, true), -1, `raw key ${show(a)} < ${show(b)}`);
  }
  assert.equal(collateRaw('a', 'a'), 0);
});

test('the shipped ICU snapshot is what calibrating against this ICU gives', () => {
  const stats = collationStats();
  assert.match(COLLATION_VERSION, new RegExp(`icu-${(process.versions.icu ?? '').replace(/\./g, '\\.')}`));
  if (stats.source !== 'snapshot') {
    // Another ICU than the snapshot's: calibrated at start-up instead; nothing to compare.
    return;
  }
  const fresh = buildCollationSnapshot();
  assert.equal(fresh.digest, stats.digest);
  assert.equal(fresh.icu, process.versions.icu);
});

test('table and key sizes', () => {
  const stats = warmUpCollation();
  assert.ok(stats.memoryBytes < 4 * 1024 * 1024, `${stats.memoryBytes} bytes of tables`);
  assert.ok(sortKey('hello').length <= 12, sortKey('hello').toString('hex'));
  assert.ok(sortKey('Hello World').length <= 20);
});
