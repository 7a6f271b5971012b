import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodeChange, decodeDocInfo, encodeChange, encodeDocInfo, carriedSizes, type DocInfo } from '../../src/core/records.js';
import { encode, leaves, merge } from '../../src/core/revtree.js';

const md5 = (s: string): string => createHash('md5').update(s).digest('hex');

function sampleInfo(id: string): DocInfo {
  let tree = merge([], { pos: 2, hashes: [md5('b'), md5('a')] }, false).tree;
  tree = merge(tree, { pos: 2, hashes: [md5('c'), md5('a')] }, true).tree;
  return { id, seq: 2 ** 40 + 7, tree, sizes: leaves(tree).map((_, i) => 100 * (i + 1) + 2 ** 33) };
}

test('document infos round-trip, with long, non-ASCII and empty-ish ids', () => {
  const lone = ['\ud800', 'a\udc00b', `${'é'.repeat(70)}\udbff`];
  for (const id of ['a', 'bulk-00001234', 'ünïcødé-文書-🙂', 'x'.repeat(63), 'x'.repeat(64), 'x'.repeat(200), '_design/d', 'y'.repeat(5000), ...lone]) {
    const info = sampleInfo(id);
    assert.deepEqual(decodeDocInfo(encodeDocInfo(info)), info);
  }
});

test('document infos written as JSON (disk format 6) still decode, sizes by leaf', () => {
  const info = sampleInfo('old');
  const [winner, other] = leaves(info.tree);
  const json = Buffer.from(JSON.stringify([info.id, info.seq, encode(info.tree), { [winner!.rev]: 11, [other!.rev]: 22 }]));
  const back = decodeDocInfo(json);
  assert.deepEqual(back.tree, info.tree);
  assert.equal(back.seq, info.seq);
  assert.deepEqual(back.sizes, [11, 22], 'winner first, in leaf order');
  // Carried into a tree with one more leaf: the old leaves keep theirs, the new one has none.
  const grown = merge(back.tree, { pos: 9, hashes: ['nope'] }, false).tree;
  assert.deepEqual(leaves(grown).map((l) => l.rev), ['9-nope', winner!.rev, other!.rev]);
  assert.deepEqual(carriedSizes(back, grown), [0, 11, 22]);
  assert.deepEqual(carriedSizes(back, grown, { rev: '9-nope', size: 5 }), [5, 11, 22]);
  assert.deepEqual(carriedSizes(null, back.tree), [0, 0]);
});

test('change records round-trip, and JSON ones (disk format 6) still decode', () => {
  const cases = [
    { id: 'doc', rev: `1-${md5('x')}`, deleted: false, others: [] },
    { id: 'ünï 🙂', rev: `3-${md5('y')}`, deleted: true, others: [`3-${md5('z')}`, '2-not-hex'] },
    // Lone surrogates (JSON allows them as escapes; UTF-8 cannot carry them) read back exactly.
    { id: 'lone \ud800 surrogate', rev: '2-\udc01', deleted: false, others: ['1-a\ud834'] },
  ];
  for (const c of cases) {
    assert.deepEqual(decodeChange(encodeChange(c)), c);
    const json = Buffer.from(JSON.stringify(c.others.length ? [c.id, c.rev, c.deleted ? 1 : 0, c.others] : [c.id, c.rev, c.deleted ? 1 : 0]));
    assert.deepEqual(decodeChange(json), c);
  }
});
