import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  allRevs, canonicalRev, decode, decodeBinary, encode, encodeBinary, formatRev, hasRev, isLeaf, leaves, markUnavailable, merge, missingRevs, parseRev, pathTo,
  removeLeafNodes, removeLeaves, revsInfo, stem, winner,
  type RevNode, type RevPath, type RevTree,
} from '../../src/core/revtree.js';
import { ByteReader, ByteWriter } from '../../src/core/bytes.js';
import { seededRandom } from '../helpers/random.js';

// ---------------------------------------------------------------------------------------------
// Helpers

/** `1-a[2-b,2-c] | 3-x`: roots separated by " | ", children in brackets. With flags: `2-b:da`. */
function show(tree: RevTree, flags = false): string {
  const node = (n: RevNode, pos: number): string => {
    let s = formatRev(pos, n.hash);
    if (flags) s += `:${n.deleted ? 'd' : ''}${n.available ? 'a' : ''}`;
    if (n.children.length > 0) s += `[${n.children.map((c) => node(c, pos + 1)).join(',')}]`;
    return s;
  };
  return tree.map((r) => node(r.node, r.pos)).join(' | ');
}

/** A local edit: the new revision `hash` on top of `parent` (or a new document). */
function edit(tree: RevTree, parent: string | null, hash: string, deleted = false): RevTree {
  const p = parent === null ? undefined : parseRev(parent);
  const path: RevPath = p ? { pos: p.pos + 1, hashes: [hash, p.hash] } : { pos: 1, hashes: [hash] };
  const r = merge(tree, path, deleted);
  assert.equal(r.added, true, `edit ${hash} should add a revision`);
  return r.tree;
}

function linear(n: number, hashOf: (i: number) => string = (i) => `h${i}`): RevTree {
  let tree: RevTree = [];
  let parent: string | null = null;
  for (let i = 1; i <= n; i++) {
    tree = edit(tree, parent, hashOf(i));
    parent = formatRev(i, hashOf(i));
  }
  return tree;
}

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

function node(hash: string, children: RevNode[] = [], deleted = false, available = true): RevNode {
  return { hash, deleted, available, children };
}

function shuffle<T>(xs: readonly T[], rand: () => number): T[] {
  const out = xs.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface HistRev { pos: number; hash: string; parent: number; deleted: boolean }

/** A random edit history: one document, random branching, some deletions (and undeletions). */
function history(rand: () => number, size: number): HistRev[] {
  const revs: HistRev[] = [{ pos: 1, hash: md5('root' + rand()), parent: -1, deleted: false }];
  for (let i = 1; i < size; i++) {
    // Mostly extend a recent revision (long paths), sometimes fork an older one.
    const parent = rand() < 0.7 ? revs.length - 1 - Math.floor(rand() * Math.min(3, revs.length)) : Math.floor(rand() * revs.length);
    const hash = rand() < 0.8 ? md5(`${i}:${rand()}`) : `x${Math.floor(rand() * 1e6)}-${i}`;
    revs.push({ pos: revs[parent]!.pos + 1, hash, parent, deleted: rand() < 0.15 });
  }
  return revs;
}

function histPath(h: HistRev[], i: number): RevPath {
  const hashes: string[] = [];
  for (let j = i; j >= 0; j = h[j]!.parent) hashes.push(h[j]!.hash);
  return { pos: h[i]!.pos, hashes };
}

function histLeaves(h: HistRev[]): number[] {
  const hasChild = new Set(h.map((r) => r.parent));
  return h.map((_, i) => i).filter((i) => !hasChild.has(i));
}

/** CouchDB's order of hashes: 32 hex digits compare as their 16 bytes, others as their UTF-8. */
function hashOrder(a: string, b: string): number {
  const bytes = (x: string) => (/^[0-9a-fA-F]{32}$/.test(x) ? Buffer.from(x, 'hex') : Buffer.from(x, 'utf8'));
  return Buffer.compare(bytes(a), bytes(b));
}

/** The shape `show` should print for a full history (children sorted by hash). */
function histShape(h: HistRev[]): string {
  const kids = new Map<number, number[]>();
  h.forEach((r, i) => { if (r.parent >= 0) kids.set(r.parent, [...(kids.get(r.parent) ?? []), i]); });
  const s = (i: number): string => {
    const ks = (kids.get(i) ?? []).sort((a, b) => hashOrder(h[a]!.hash, h[b]!.hash));
    return formatRev(h[i]!.pos, h[i]!.hash) + (ks.length ? `[${ks.map(s).join(',')}]` : '');
  };
  return s(0);
}

function mergeAll(paths: { path: RevPath; deleted: boolean }[], tree: RevTree = []): RevTree {
  for (const { path, deleted } of paths) tree = merge(tree, path, deleted).tree;
  return tree;
}

/** Independent winner rule for cross-checking. */
function bruteWinner(tree: RevTree): string | undefined {
  const all = leaves(tree);
  let best: (typeof all)[number] | undefined;
  for (const l of all) {
    if (!best) { best = l; continue; }
    const key = (x: typeof l): [number, number, string] => [x.deleted ? 0 : 1, x.pos, x.hash];
    const [a1, a2, a3] = key(l);
    const [b1, b2, b3] = key(best);
    if (a1 > b1 || (a1 === b1 && (a2 > b2 || (a2 === b2 && hashOrder(a3, b3) > 0)))) best = l;
  }
  return best?.rev;
}

/** Exact, stack-safe structural fingerprint (pre-order, with flags and child counts). */
function flat(tree: RevTree): string {
  const out: string[] = [];
  for (const r of tree) {
    out.push('|');
    const stack: [RevNode, number][] = [[r.node, r.pos]];
    while (stack.length) {
      const [n, pos] = stack.pop()!;
      out.push(`${pos}-${n.hash}:${n.deleted ? 'd' : ''}${n.available ? 'a' : ''}:${n.children.length}`);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, pos + 1]);
    }
  }
  return out.join(' ');
}

/** Every parent>child link, as revision pairs. */
function edges(tree: RevTree): Set<string> {
  const out = new Set<string>();
  const stack: [RevNode, number][] = tree.map((r) => [r.node, r.pos]);
  while (stack.length) {
    const [n, pos] = stack.pop()!;
    for (const c of n.children) {
      out.add(`${formatRev(pos, n.hash)}>${formatRev(pos + 1, c.hash)}`);
      stack.push([c, pos + 1]);
    }
  }
  return out;
}

/** Root-to-leaf depths (number of revisions on each path). */
function depths(tree: RevTree): number[] {
  const out: number[] = [];
  const stack: [RevNode, number][] = tree.map((r) => [r.node, 1]);
  while (stack.length) {
    const [n, d] = stack.pop()!;
    if (n.children.length === 0) out.push(d);
    for (const c of n.children) stack.push([c, d + 1]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

test('parseRev accepts pos-hash and rejects malformed revisions', () => {
  assert.deepEqual(parseRev('3-abc'), { pos: 3, hash: 'abc' });
  assert.deepEqual(parseRev('0-1'), { pos: 0, hash: '1' });
  assert.deepEqual(parseRev('12-a-b'), { pos: 12, hash: 'a-b' });
  // couch_doc:parse_rev takes an empty hash (PouchDB's "bare rev" replicates such revisions).
  assert.deepEqual(parseRev('3-'), { pos: 3, hash: '' });
  for (const bad of ['', 'abc', '-abc', '+3-abc', '3.0-abc', ' 3-abc', 'x-abc', '-1-abc', '1e3-abc', '99999999999999999999-a']) {
    assert.equal(parseRev(bad), undefined, bad);
  }
  assert.equal(formatRev(7, 'ff'), '7-ff');
});

test('canonicalRev: 32 hex digits in either case are one hash, rendered lower-case; other hashes stay as given', () => {
  const hex = '0123456789abcdef0123456789abcdef';
  assert.equal(canonicalRev(`2-${hex.toUpperCase()}`), `2-${hex}`);
  assert.deepEqual(parseRev(`2-${hex.toUpperCase()}`), { pos: 2, hash: hex });
  assert.equal(canonicalRev(`2-${hex}`), `2-${hex}`);
  // couch_doc:parse_rev reads the position as an integer.
  assert.equal(canonicalRev(`02-${hex}`), `2-${hex}`);
  assert.equal(canonicalRev('1-ABC'), '1-ABC');
  assert.equal(canonicalRev(`1-${hex.toUpperCase()}0`), `1-${hex.toUpperCase()}0`);
  assert.equal(canonicalRev(`1-${'G'.repeat(32)}`), `1-${'G'.repeat(32)}`);
  assert.equal(canonicalRev('abc'), undefined);
});

// ---------------------------------------------------------------------------------------------
// Winner and leaves

test('winner: a live leaf beats a deleted one even with lower pos and hash', () => {
  let t = linear(1, () => 'a');
  t = edit(t, '1-a', 'b');
  t = edit(t, '1-a', 'z');
  t = edit(t, '2-z', 'zz', true);
  assert.equal(winner(t)?.rev, '2-b');
  assert.deepEqual(leaves(t).map((l) => [l.rev, l.deleted]), [['2-b', false], ['3-zz', true]]);
});

test('winner: higher pos wins among live leaves, then higher hash (string order for hashes that are not MD5s)', () => {
  let t = edit([], null, 'a');
  t = edit(t, '1-a', 'z');
  t = edit(t, '1-a', 'b');
  t = edit(t, '2-b', 'a');
  assert.equal(winner(t)?.rev, '3-a');
  let u = edit([], null, 'r');
  u = edit(u, '1-r', '10');
  u = edit(u, '1-r', '9');
  u = edit(u, '1-r', '100');
  assert.equal(winner(u)?.rev, '2-9');
  assert.deepEqual(leaves(u).map((l) => l.rev), ['2-9', '2-100', '2-10']);
});

test('winner: an MD5 hash orders by its 16 bytes against other hashes, as CouchDB keeps them', () => {
  const hex = '967a00dff5e02add41819138abb3284d'; // first byte 0x96, above any ASCII letter
  assert.equal(winner(edit(edit([], null, hex), null, 'abc'))?.rev, `1-${hex}`);
  const low = '0123456789abcdef0123456789abcdef'; // first byte 0x01, below 'a'
  assert.equal(winner(edit(edit([], null, low), null, 'abc'))?.rev, '1-abc');
  // Upper-case hex is the same bytes as lower-case.
  assert.equal(winner(edit(edit([], null, hex.toUpperCase()), null, 'abc'))?.rev, `1-${hex.toUpperCase()}`);
  // Two MD5s order as their text.
  assert.equal(winner(edit(edit([], null, hex), null, low))?.rev, `1-${hex}`);
});

test('winner: all leaves deleted picks the highest deleted; empty tree has none', () => {
  let t = edit([], null, 'a');
  t = edit(t, '1-a', 'b', true);
  t = edit(t, '1-a', 'c', true);
  t = edit(t, '2-b', 'd', true);
  assert.equal(winner(t)?.rev, '3-d');
  assert.equal(winner(t)?.deleted, true);
  assert.deepEqual(leaves(t).map((l) => l.rev), ['3-d', '2-c']);
  assert.equal(winner([]), undefined);
  assert.deepEqual(leaves([]), []);
});

// ---------------------------------------------------------------------------------------------
// Merging

test('linear edits build one path; queries follow it', () => {
  const t = linear(3, (i) => 'abc'[i - 1]!);
  assert.equal(show(t, true), '1-a:a[2-b:a[3-c:a]]');
  assert.equal(winner(t)?.rev, '3-c');
  assert.equal(isLeaf(t, '3-c'), true);
  assert.equal(isLeaf(t, '2-b'), false);
  assert.equal(isLeaf(t, '4-d'), false);
  assert.equal(hasRev(t, '2-b'), true);
  assert.equal(hasRev(t, '2-c'), false);
  assert.equal(hasRev(t, 'junk'), false);
  assert.deepEqual(allRevs(t).sort(), ['1-a', '2-b', '3-c']);
  assert.deepEqual(pathTo(t, '3-c'), { pos: 3, hashes: ['c', 'b', 'a'] });
  assert.deepEqual(pathTo(t, '2-b'), { pos: 2, hashes: ['b', 'a'] });
  assert.equal(pathTo(t, '3-x'), undefined);
});

test('conflicting edits make sibling branches with children sorted by hash', () => {
  let t = linear(1, () => 'a');
  t = edit(t, '1-a', 'c');
  t = edit(t, '1-a', 'b');
  assert.equal(show(t), '1-a[2-b,2-c]');
  assert.deepEqual(leaves(t).map((l) => l.rev), ['2-c', '2-b']);
  t = edit(t, '2-b', 'x');
  assert.deepEqual(leaves(t).map((l) => l.rev), ['3-x', '2-c']);
  assert.deepEqual(pathTo(t, '3-x'), { pos: 3, hashes: ['x', 'b', 'a'] });
});

test('a replicated path brings unknown ancestors as unavailable', () => {
  const r = merge([], { pos: 4, hashes: ['d', 'c', 'b', 'a'] }, false);
  assert.equal(r.added, true);
  assert.equal(show(r.tree, true), '1-a:[2-b:[3-c:[4-d:a]]]');
  const t = linear(2, (i) => 'ab'[i - 1]!);
  const r2 = merge(t, { pos: 4, hashes: ['d', 'c', 'b', 'a'] }, true);
  assert.equal(r2.added, true);
  assert.equal(show(r2.tree, true), '1-a:a[2-b:a[3-c:[4-d:da]]]');
  assert.equal(winner(r2.tree)?.rev, '4-d');
});

test('a path overlapping nothing becomes a separate root (conflict)', () => {
  const t = linear(1, () => 'a');
  const r = merge(t, { pos: 2, hashes: ['y', 'x'] }, false);
  assert.equal(r.added, true);
  assert.equal(show(r.tree, true), '1-a:a | 1-x:[2-y:a]');
  assert.equal(winner(r.tree)?.rev, '2-y');
  // A stemmed root at pos 3 sorts after roots starting at 1.
  const r2 = merge(r.tree, { pos: 4, hashes: ['q', 'p'] }, false);
  assert.deepEqual(r2.tree.map((x) => formatRev(x.pos, x.node.hash)), ['1-a', '1-x', '3-p']);
});

test('merging onto a stemmed root extends it upwards', () => {
  const stemmed = merge([], { pos: 4, hashes: ['d', 'c'] }, false).tree;
  assert.equal(show(stemmed, true), '3-c:[4-d:a]');
  const r = merge(stemmed, { pos: 5, hashes: ['e', 'd', 'c', 'b', 'a'] }, false);
  assert.equal(r.added, true);
  assert.equal(show(r.tree, true), '1-a:[2-b:[3-c:[4-d:a[5-e:a]]]]');
  // A path ending before the root, or disagreeing at the root's pos, does not join.
  assert.equal(show(merge(stemmed, { pos: 2, hashes: ['b', 'a'] }, false).tree), '1-a[2-b] | 3-c[4-d]');
  assert.equal(show(merge(stemmed, { pos: 4, hashes: ['x', 'y', 'b'] }, false).tree), '2-b[3-y[4-x]] | 3-c[4-d]');
  // A path starting inside the root's history joins at the matching node.
  assert.equal(show(merge(stemmed, { pos: 5, hashes: ['e', 'd'] }, false).tree), '3-c[4-d[5-e]]');
});

test('a merge can join previously disjoint roots', () => {
  let t = merge([], { pos: 2, hashes: ['b', 'a'] }, false).tree;
  t = merge(t, { pos: 4, hashes: ['d', 'c'] }, false).tree;
  assert.equal(show(t), '1-a[2-b] | 3-c[4-d]');
  const r = merge(t, { pos: 3, hashes: ['c', 'b'] }, false);
  assert.equal(r.added, false, '3-c was already there');
  assert.equal(show(r.tree, true), '1-a:[2-b:a[3-c:[4-d:a]]]');
  // Three roots joined by one path; the new leaf is added.
  let u = merge([], { pos: 1, hashes: ['a'] }, false).tree;
  u = merge(u, { pos: 3, hashes: ['c'] }, false).tree;
  u = merge(u, { pos: 5, hashes: ['e'] }, false).tree;
  assert.equal(u.length, 3);
  const r2 = merge(u, { pos: 6, hashes: ['f', 'e', 'd', 'c', 'b', 'a'] }, true);
  assert.equal(r2.added, true);
  assert.equal(show(r2.tree, true), '1-a:a[2-b:[3-c:a[4-d:[5-e:a[6-f:da]]]]]');
});

test('merging an existing path changes nothing and reports added=false', () => {
  const t = merge([], { pos: 3, hashes: ['c', 'b', 'a'] }, false).tree;
  const before = structuredClone(t);
  const r = merge(t, { pos: 2, hashes: ['b', 'a'] }, true);
  assert.equal(r.added, false);
  assert.equal(show(r.tree, true), show(t, true), '2-b stays unavailable and not deleted');
  const r2 = merge(t, { pos: 3, hashes: ['c', 'b', 'a'] }, true);
  assert.equal(r2.added, false);
  assert.equal(show(r2.tree, true), '1-a:[2-b:[3-c:a]]');
  assert.deepEqual(t, before, 'input not mutated');
});

test('merge never mutates its input and keeps existing flags of shared ancestors', () => {
  let t = linear(3, (i) => 'abc'[i - 1]!);
  t = markUnavailable(t, new Set(['2-b']));
  const before = structuredClone(t);
  const r = merge(t, { pos: 4, hashes: ['d', 'c', 'b', 'a'] }, false);
  assert.deepEqual(t, before);
  assert.equal(show(r.tree, true), '1-a:a[2-b:[3-c:a[4-d:a]]]');
  const r2 = merge(t, { pos: 3, hashes: ['x', 'b'] }, true);
  assert.deepEqual(t, before);
  assert.equal(show(r2.tree, true), '1-a:a[2-b:[3-c:a,3-x:da]]');
  assert.throws(() => merge(t, { pos: 1, hashes: [] }, false));
});

// ---------------------------------------------------------------------------------------------
// Stemming

test('stem keeps the newest revisions of a linear path', () => {
  const t = linear(5, (i) => 'abcde'[i - 1]!);
  assert.equal(show(stem(t, 3)), '3-c[4-d[5-e]]');
  assert.equal(show(stem(t, 1)), '5-e');
  assert.equal(stem(t, 5), t);
  assert.equal(stem(t, 1000), t);
  assert.throws(() => stem(t, 0));
});

test('stem splits branches that become disjoint into separate roots', () => {
  let t = linear(5, (i) => 'abcde'[i - 1]!);
  t = edit(t, '1-a', 'x');
  assert.equal(show(stem(t, 2)), '1-a[2-x] | 4-d[5-e]');
  // As in CouchDB 1.6: the cut paths are [5-e .. 2-b] and [2-x, 1-a], which share no revision.
  assert.equal(show(stem(t, 4)), '1-a[2-x] | 2-b[3-c[4-d[5-e]]]');
  assert.equal(show(stem(t, 5)), '1-a[2-b[3-c[4-d[5-e]]],2-x]');
  assert.equal(show(stem(t, 1)), '2-x | 5-e');
  // A kept fork whose long branch loses a node in between.
  let u = linear(2, (i) => 'pc'[i - 1]!); // 1-p, 2-c
  u = edit(u, '2-c', 'g');
  u = edit(u, '3-g', 'l');
  u = edit(u, '1-p', 'k');
  assert.equal(show(u), '1-p[2-c[3-g[4-l]],2-k]');
  assert.equal(show(stem(u, 2)), '1-p[2-k] | 3-g[4-l]');
  // A node kept through a short branch keeps only the children some cut path links it to.
  let v = linear(3, (i) => 'abc'[i - 1]!);
  v = edit(v, '3-c', 'd');
  v = edit(v, '4-d', 'e');
  v = edit(v, '3-c', 'x');
  assert.equal(show(v), '1-a[2-b[3-c[4-d[5-e],4-x]]]');
  assert.equal(show(stem(v, 2)), '3-c[4-x] | 4-d[5-e]');
  assert.equal(show(stem(v, 3)), '2-b[3-c[4-d[5-e],4-x]]');
});

test('stem merges roots that overlap', () => {
  const dup: RevTree = [
    { pos: 1, node: node('a', [node('b')]) },
    { pos: 2, node: node('b', [node('c')]) },
  ];
  assert.equal(show(stem(dup, 10)), '1-a[2-b[3-c]]');
  // As in CouchDB: the cut paths [1-a, 2-b] and [2-b, 3-c] merge back into one root.
  assert.equal(show(stem(dup, 2)), '1-a[2-b[3-c]]');
});

// ---------------------------------------------------------------------------------------------
// Statuses, compaction and purge

test('revsInfo reports available, deleted and missing revisions', () => {
  let t = edit([], null, 'a');
  t = edit(t, '1-a', 'b', true);
  t = edit(t, '2-b', 'c');
  t = markUnavailable(t, new Set(['1-a']));
  assert.deepEqual(revsInfo(t, '3-c'), [
    { rev: '3-c', status: 'available' },
    { rev: '2-b', status: 'deleted' },
    { rev: '1-a', status: 'missing' },
  ]);
  assert.deepEqual(revsInfo(t, '1-a'), [{ rev: '1-a', status: 'missing' }]);
  assert.equal(revsInfo(t, '4-z'), undefined);
  const rep = merge([], { pos: 2, hashes: ['y', 'x'] }, false).tree;
  assert.deepEqual(revsInfo(rep, '2-y')?.map((e) => e.status), ['available', 'missing']);
});

test('markUnavailable clears only the listed bodies and leaves the input alone', () => {
  const t = linear(3, (i) => 'abc'[i - 1]!);
  const before = structuredClone(t);
  const u = markUnavailable(t, new Set(['1-a', '3-c', '9-z', 'junk']));
  assert.equal(show(u, true), '1-a:[2-b:a[3-c:]]');
  assert.deepEqual(t, before);
  assert.equal(markUnavailable(t, new Set()), t);
});

test('removeLeaves drops purged branches back to their fork (couch_key_tree:remove_leafs)', () => {
  const sibs: RevTree = [{ pos: 1, node: node('r', [node('a'), node('b')]) }];
  assert.deepEqual(removeLeaves(sibs, []), { tree: sibs, removed: [] });
  assert.deepEqual(removeLeaves(sibs, ['1-r']), { tree: sibs, removed: [] }, 'not a leaf: ignored');
  const one = removeLeaves(sibs, ['2-b']);
  assert.equal(show(one.tree), '1-r[2-a]');
  assert.deepEqual(one.removed, ['2-b']);
  const none = removeLeaves(sibs, ['2-a', '2-b', '2-a']);
  assert.deepEqual(none.tree, []);
  // remove_leafs' order, whatever the request's: a root's leaves last first, roots in order.
  assert.deepEqual(none.removed, ['2-b', '2-a']);
  assert.deepEqual(removeLeaves(sibs, ['2-b', '2-a']).removed, ['2-b', '2-a']);
  const roots: RevTree = [{ pos: 1, node: node('a') }, { pos: 1, node: node('d') }];
  assert.deepEqual(removeLeaves(roots, ['1-d', '1-a']).removed, ['1-a', '1-d']);
  const stemmed: RevTree = [{ pos: 2, node: node('a', [node('aa')]) }];
  assert.equal(removeLeaves(stemmed, ['2-a']).tree, stemmed);
  assert.deepEqual(removeLeaves(stemmed, ['3-aa']), { tree: [], removed: ['3-aa'] });

  let t = linear(3, (i) => 'abc'[i - 1]!);
  t = edit(t, '1-a', 'x');
  t = edit(t, '2-x', 'y');
  t = edit(t, '3-y', 'z');
  const before = structuredClone(t);
  const r = removeLeaves(t, ['4-z', '3-b']);
  assert.equal(show(r.tree), '1-a[2-b[3-c]]');
  assert.deepEqual(r.removed, ['4-z']);
  assert.deepEqual(t, before, 'input not mutated');
  // Purging the only leaf of a long history purges the document.
  assert.deepEqual(removeLeaves(linear(100), ['100-h100']).tree, []);
});

test('removeLeafNodes removes only the leaf nodes; parents become leaves', () => {
  let t = linear(3, (i) => 'abc'[i - 1]!);
  t = edit(t, '1-a', 'x');
  const r = removeLeafNodes(t, ['3-c', '2-x']);
  assert.equal(show(r.tree, true), '1-a:a[2-b:a]');
  assert.deepEqual(r.removed, ['3-c', '2-x']);
  assert.equal(winner(r.tree)?.rev, '2-b');
  assert.deepEqual(removeLeafNodes(linear(1, () => 'a'), ['1-a']).tree, []);
});

// ---------------------------------------------------------------------------------------------
// Encoding

test('encode/decode round-trips exactly, including flags, forks, roots and odd hashes', () => {
  let t = linear(4, (i) => md5(String(i)));
  t = edit(t, formatRev(2, md5('2')), 'not-hex', true);
  t = edit(t, formatRev(1, md5('1')), md5('fork'));
  t = merge(t, { pos: 7, hashes: ['Z', 'Y'] }, false).tree;
  t = markUnavailable(t, new Set([formatRev(2, md5('2'))]));
  const cases: RevTree[] = [[], t, linear(1, () => 'a'), merge([], { pos: 3, hashes: [md5('c'), 'b', md5('a')] }, true).tree];
  for (const c of cases) {
    const back = decode(JSON.parse(JSON.stringify(encode(c))));
    assert.deepEqual(back, c);
    assert.equal(show(back, true), show(c, true));
  }
});

test('encoding is compact for long linear histories', () => {
  const t = markUnavailable(linear(1000, (i) => md5(String(i))), new Set(Array.from({ length: 999 }, (_, i) => formatRev(i + 1, md5(String(i + 1))))));
  const json = JSON.stringify(encode(t));
  // 1000 × 16 bytes in base64 is 21336 characters; the rest is a handful of bytes.
  assert.ok(json.length < 21400, `encoded length ${json.length}`);
  assert.equal(flat(decode(JSON.parse(json))), flat(t));
  assert.equal(revsInfo(decode(JSON.parse(json)), formatRev(1000, md5('1000')))?.filter((e) => e.status === 'missing').length, 999);
  assert.equal(JSON.stringify(encode(linear(1, () => md5('x')))).length < 40, true);
});

function binaryRoundTrip(tree: RevTree): RevTree {
  const w = new ByteWriter();
  encodeBinary(tree, w);
  const bytes = w.finish();
  const r = new ByteReader(bytes);
  const back = decodeBinary(r);
  assert.equal(r.done, true, 'every byte read');
  return back;
}

test('binary encoding round-trips exactly: flags, forks, several roots, non-MD5 and uppercase hashes', () => {
  let t = linear(4, (i) => md5(String(i)));
  t = edit(t, formatRev(2, md5('2')), 'not-hex', true);
  t = edit(t, formatRev(1, md5('1')), md5('fork'));
  t = edit(t, formatRev(1, md5('1')), md5('fork').toUpperCase());
  t = merge(t, { pos: 7, hashes: ['Z', 'Y'] }, false).tree;
  t = merge(t, { pos: 300, hashes: ['ü-é', md5('q')] }, true).tree;
  t = markUnavailable(t, new Set([formatRev(2, md5('2')), formatRev(3, md5('3'))]));
  const cases: RevTree[] = [[], t, linear(1, () => 'a'), linear(1, () => md5('x')), merge([], { pos: 3, hashes: [md5('c'), 'b', md5('a')] }, true).tree];
  for (const c of cases) {
    const back = binaryRoundTrip(c);
    assert.deepEqual(back, c);
    assert.equal(show(back, true), show(c, true));
  }
  // A long compacted history: 16 bytes a revision and two flag runs.
  const long = markUnavailable(linear(1000, (i) => md5(String(i))), new Set(Array.from({ length: 999 }, (_, i) => formatRev(i + 1, md5(String(i + 1))))));
  const w = new ByteWriter();
  encodeBinary(long, w);
  assert.ok(w.finish().length < 16_020);
  assert.equal(flat(binaryRoundTrip(long)), flat(long));
});

test('property: binary encoding round-trips random histories', () => {
  const rand = seededRandom(77);
  for (let round = 0; round < 200; round++) {
    const h = history(rand, 1 + Math.floor(rand() * 30));
    const leavesOf = histLeaves(h);
    let tree: RevTree = [];
    for (const i of shuffle(leavesOf, rand)) tree = merge(tree, histPath(h, i), rand() < 0.3).tree;
    if (rand() < 0.5) tree = stem(tree, 1 + Math.floor(rand() * 6));
    assert.deepEqual(binaryRoundTrip(tree), tree);
  }
});

test('binary decoding of a cut or corrupt record throws instead of returning a wrong tree', () => {
  const w = new ByteWriter();
  encodeBinary(edit(linear(3, (i) => md5(String(i))), formatRev(1, md5('1')), md5('fork')), w);
  const bytes = w.finish();
  for (let cut = 0; cut < bytes.length; cut++) {
    assert.throws(() => decodeBinary(new ByteReader(bytes.subarray(0, cut))), Error, `cut at ${cut}`);
  }
});

test('decode rejects malformed data', () => {
  for (const junk of [5, null, 'x', [5], [[1]], [[-1, ['a'], 2]], [[1, 'abc', 2]], [[1, ['a'], 7]], [[1, ['a', 'b'], [2, 1]]],
    [[1, ['a'], 2, 'child']], [[1, [], 2]], [[1, [''], 2]], [[1.5, ['a'], 2]]]) {
    assert.throws(() => decode(junk), Error, JSON.stringify(junk));
  }
});

// ---------------------------------------------------------------------------------------------
// Deep trees

test('a 1000-revision path: edits, winner, paths and stemming stay correct and cheap', () => {
  const started = performance.now();
  const t = linear(1000, (i) => md5(String(i)));
  assert.equal(winner(t)?.rev, formatRev(1000, md5('1000')));
  assert.equal(pathTo(t, formatRev(1000, md5('1000')))?.hashes.length, 1000);
  assert.equal(revsInfo(t, formatRev(500, md5('500')))?.length, 500);
  assert.equal(stem(t, 1000), t);
  const s = stem(t, 10);
  assert.equal(s.length, 1);
  assert.equal(s[0]!.pos, 991);
  assert.deepEqual(depths(s), [10]);
  // The same history replicated as one path yields the same shape.
  const hashes = Array.from({ length: 1000 }, (_, i) => md5(String(1000 - i)));
  const rep = merge([], { pos: 1000, hashes }, false);
  assert.equal(show(rep.tree), show(t));
  // Many more edits on a deep leaf are cheap (no quadratic work per edit).
  let u = t;
  let parent = formatRev(1000, md5('1000'));
  for (let i = 1001; i <= 2000; i++) {
    u = stem(edit(u, parent, md5(String(i))), 1000);
    parent = formatRev(i, md5(String(i)));
    assert.equal(winner(u)?.rev, parent);
  }
  assert.equal(u[0]!.pos, 1001);
  assert.ok(performance.now() - started < 5000, 'deep edits took too long');
});

test('very deep trees (100k revisions) do not overflow the stack', () => {
  const n = 100_000;
  const hashes = Array.from({ length: n }, (_, i) => `r${n - i}`);
  const { tree } = merge([], { pos: n, hashes }, false);
  assert.equal(winner(tree)?.rev, `${n}-r${n}`);
  assert.equal(leaves(tree).length, 1);
  assert.equal(allRevs(tree).length, n);
  assert.equal(pathTo(tree, `${n}-r${n}`)?.hashes.length, n);
  assert.equal(flat(decode(JSON.parse(JSON.stringify(encode(tree))))), flat(tree));
  const forked = merge(tree, { pos: 3, hashes: ['x', 'r2'] }, false).tree;
  assert.deepEqual(leaves(forked).map((l) => l.rev), [`${n}-r${n}`, '3-x']);
  assert.equal(show(stem(forked, 2)), `2-r2[3-x] | ${n - 1}-r${n - 1}[${n}-r${n}]`);
  assert.equal(markUnavailable(tree, new Set([`${n}-r${n}`])).length, 1);
  assert.deepEqual(removeLeaves(tree, [`${n}-r${n}`]).tree, []);
  assert.equal(hasRev(merge(tree, { pos: n + 1, hashes: ['z', `r${n}`] }, false).tree, `${n + 1}-z`), true);
});

// ---------------------------------------------------------------------------------------------
// Randomized properties

test('property: merging the paths of a history in any order yields the same tree', () => {
  for (let seed = 1; seed <= 60; seed++) {
    const rand = seededRandom(seed);
    const h = history(rand, 5 + Math.floor(rand() * 40));
    const full = h.map((r, i) => ({ path: histPath(h, i), deleted: r.deleted }));
    const reference = mergeAll(full);
    assert.equal(show(reference), histShape(h), `seed ${seed}: shape`);
    assert.equal(reference.length, 1);
    // Only leaf paths, and paths cut to random lengths (as from stemmed replicas), in random orders.
    const leafPaths = histLeaves(h).map((i) => full[i]!);
    const cut = full.map(({ path, deleted }) => ({ path: { pos: path.pos, hashes: path.hashes.slice(0, 1 + Math.floor(rand() * path.hashes.length)) }, deleted }));
    for (let k = 0; k < 4; k++) {
      assert.equal(show(mergeAll(shuffle(full, rand))), show(reference), `seed ${seed}: full paths`);
      assert.equal(show(mergeAll(shuffle(leafPaths, rand))), show(reference), `seed ${seed}: leaf paths`);
      const a = mergeAll(shuffle(cut, rand));
      const b = mergeAll(shuffle(cut, rand));
      assert.equal(show(a), show(b), `seed ${seed}: cut paths`);
      assert.deepEqual(leaves(a), leaves(b), `seed ${seed}: leaf flags`);
      assert.deepEqual(allRevs(a).sort(), allRevs(reference).sort(), `seed ${seed}: every rev present once`);
    }
    // Leaves carry their history's deleted flag and a stored body; the winner follows the rules.
    for (const l of leaves(reference)) {
      const r = h.find((x) => x.pos === l.pos && x.hash === l.hash)!;
      assert.equal(l.deleted, r.deleted);
      assert.equal(l.available, true);
    }
    assert.equal(winner(reference)?.rev, bruteWinner(reference));
    assert.equal(leaves(reference)[0]?.rev, winner(reference)?.rev);
    // Re-merging any path of the history adds nothing.
    for (const { path, deleted } of shuffle(full, rand).slice(0, 5)) {
      const r = merge(reference, path, !deleted);
      assert.equal(r.added, false);
      assert.equal(show(r.tree, true), show(reference, true));
    }
  }
});

test('property: stem(limit) keeps every leaf and exactly its newest `limit` ancestors', () => {
  for (let seed = 100; seed < 140; seed++) {
    const rand = seededRandom(seed);
    const h = history(rand, 5 + Math.floor(rand() * 40));
    const t = mergeAll(h.map((r, i) => ({ path: histPath(h, i), deleted: r.deleted })));
    const maxDepth = Math.max(...depths(t));
    for (let limit = 1; limit <= maxDepth + 1; limit++) {
      const s = stem(t, limit);
      assert.deepEqual(leaves(s), leaves(t), `seed ${seed} limit ${limit}: leaves`);
      // couch_key_tree:stem cuts every leaf's path to `limit` revisions and merges the cut paths
      // back: the result holds exactly their revisions and parent links. (A path can then be
      // longer than `limit` where a fork keeps a node through a shorter sibling branch.)
      const expectedRevs = new Set<string>();
      const expectedEdges = new Set<string>();
      for (const l of leaves(t)) {
        const p = pathTo(t, l.rev)!;
        const kept = p.hashes.slice(0, limit);
        kept.forEach((hash, i) => {
          expectedRevs.add(formatRev(p.pos - i, hash));
          if (i > 0) expectedEdges.add(`${formatRev(p.pos - i, hash)}>${formatRev(p.pos - i + 1, kept[i - 1]!)}`);
        });
        const got = pathTo(s, l.rev)!;
        assert.deepEqual(got.hashes.slice(0, kept.length), kept, `seed ${seed} limit ${limit}: path of ${l.rev}`);
      }
      const revs = allRevs(s);
      assert.equal(new Set(revs).size, revs.length, 'no revision twice');
      assert.deepEqual(new Set(revs), expectedRevs);
      assert.deepEqual(edges(s), expectedEdges);
      if (limit >= maxDepth) assert.equal(show(s, true), show(t, true));
      assert.equal(show(stem(s, limit), true), show(s, true), 'idempotent');
      for (let i = 1; i < s.length; i++) {
        const [a, b] = [s[i - 1]!, s[i]!];
        assert.ok(a.pos < b.pos || (a.pos === b.pos && hashOrder(a.node.hash, b.node.hash) < 0), 'roots sorted');
      }
      // Merging the full leaf paths back regrows the original tree.
      const regrown = mergeAll(histLeaves(h).map((i) => ({ path: histPath(h, i), deleted: h[i]!.deleted })), s);
      assert.equal(show(regrown), show(t));
    }
  }
});

test('property: encode/decode, removeLeaves and winner on random trees', () => {
  for (let seed = 200; seed < 260; seed++) {
    const rand = seededRandom(seed);
    const h = history(rand, 2 + Math.floor(rand() * 40));
    let t = mergeAll(shuffle(h.map((r, i) => ({ path: histPath(h, i), deleted: r.deleted })), rand));
    t = markUnavailable(t, new Set(allRevs(t).filter(() => rand() < 0.3)));
    if (rand() < 0.5) t = stem(t, 1 + Math.floor(rand() * 6));
    assert.deepEqual(decode(JSON.parse(JSON.stringify(encode(t)))), t, `seed ${seed}: round trip`);
    assert.equal(winner(t)?.rev, bruteWinner(t));

    const all = leaves(t);
    const purge = all.filter(() => rand() < 0.4).map((l) => l.rev);
    const interior = allRevs(t).filter((r) => !isLeaf(t, r) && rand() < 0.2);
    const { tree: p, removed } = removeLeaves(t, [...interior, ...purge]);
    assert.deepEqual(new Set(removed), new Set(purge));
    const remaining = all.filter((l) => !purge.includes(l.rev));
    assert.deepEqual(leaves(p).map((l) => l.rev), remaining.map((l) => l.rev));
    const expected = new Set<string>();
    for (const l of remaining) {
      const path = pathTo(t, l.rev)!;
      path.hashes.forEach((hash, i) => expected.add(formatRev(path.pos - i, hash)));
    }
    assert.deepEqual(new Set(allRevs(p)), expected, `seed ${seed}: purge keeps exactly the remaining leaves' paths`);
  }
});

test('missingRevs: couch_key_tree:find_missing order, lower positions set aside in front as nodes are reached; repeats stay', () => {
  let tree = edit([], null, 'a');
  tree = edit(tree, '1-a', 'b');
  tree = edit(tree, '2-b', 'c');
  tree = edit(tree, '1-a', 'd');
  assert.equal(show(tree), '1-a[2-b[3-c],2-d]');
  assert.deepEqual(missingRevs(tree, ['3-x', '1-y', '2-b', '4-z', '1-a']), ['1-y', '3-x', '4-z']);
  assert.deepEqual(missingRevs(tree, ['3-q', '3-q']), ['3-q', '3-q']);
  assert.deepEqual(missingRevs(tree, ['3-c', '2-d']), []);
  assert.deepEqual(missingRevs([], ['2-x', '1-y']), ['2-x', '1-y']);
  assert.deepEqual(missingRevs(linear(3000), ['2999-nope', '5-h5']), ['2999-nope']);
});
