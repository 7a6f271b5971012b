/**
 * Taking a client's document apart (core/document.ts): the special members it reads, and the
 * body's JSON: the user fields (and the replicator's state fields), serialised in their order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseIncomingDoc } from '../../src/core/document.js';

const bodyOf = (input: Record<string, unknown>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(input).filter(([k]) => !k.startsWith('_') || k.startsWith('_replication_'))));

test('the body JSON is the user fields in order, wherever the special members are', () => {
  const cases: Record<string, unknown>[] = [
    { _id: 'a', type: 'x', n: 1 },
    { _id: 'a', _rev: '1-abc', type: 'x', nested: { _id: 'inner', list: [1, 'two', null] } },
    { _rev: '2-def', _id: 'b', v: true },
    { type: 'x', _id: 'late', n: 2 },
    { _id: 'a', _deleted: true, gone: 'yes' },
    { _id: 'a', _attachments: { 'f.txt': { stub: true } }, kept: 1 },
    { _id: 'só "quoted" \\ \u{1F600} \ud800', text: 'é\n\t', n: -0 },
    { _id: 'a' },
    { _id: 'a', _rev: '3-abc' },
    {},
    { plain: 'no specials' },
    { _id: 'a', _replication_state: 'triggered', source: 's' },
    { '2': 'integer-like keys come first', _id: 'a', z: 1 },
  ];
  for (const input of cases) {
    const parsed = parseIncomingDoc(JSON.parse(JSON.stringify(input)));
    assert.equal(parsed.bodyJson, bodyOf(input), JSON.stringify(input));
    assert.deepEqual(JSON.parse(parsed.bodyJson), parsed.body);
  }
});

test('special members are read and checked', () => {
  const doc = parseIncomingDoc({ _id: 'x', _rev: '1-abc', _deleted: true, _revisions: { start: 1, ids: ['abc'] }, a: 1 });
  assert.equal(doc.id, 'x');
  assert.equal(doc.rev, '1-abc');
  assert.equal(doc.deleted, true);
  assert.deepEqual(doc.revisions, { pos: 1, hashes: ['abc'] });
  assert.throws(() => parseIncomingDoc({ _id: 1 }), /Document id must be a string/);
  assert.throws(() => parseIncomingDoc({ _rev: 'nope' }), /Invalid rev format/);
  assert.throws(() => parseIncomingDoc({ _bad: 1 }), /Bad special document member: _bad/);
  assert.throws(() => parseIncomingDoc([]), /Document must be a JSON object/);
});

test('_revisions is checked as couch_doc checks it and names the revision; an ancestry that is no path is ignored', () => {
  const reason = (revisions: unknown): string | undefined => {
    try {
      parseIncomingDoc({ _id: 'x', _rev: '3-c', _revisions: revisions });
      return undefined;
    } catch (err) {
      return `${(err as { error: string }).error}: ${(err as Error & { reason: string }).reason}`;
    }
  };
  assert.equal(reason([1]), 'doc_validation: Bad special document member: _revisions');
  assert.equal(reason({ ids: ['c'] }), "doc_validation: _revisions.start isn't an integer.");
  assert.equal(reason({ start: '3', ids: ['c'] }), "doc_validation: _revisions.start isn't an integer.");
  assert.equal(reason({ start: 3, ids: 'c' }), "doc_validation: _revisions.ids isn't a array.");
  assert.equal(reason({ start: 3, ids: ['c', 5] }), "doc_validation: RevId isn't a string");
  for (const unusable of [{ start: 0, ids: ['1'] }, { start: 3, ids: [] }, { start: 1, ids: ['b', 'a'] }]) {
    assert.equal(parseIncomingDoc({ _id: 'x', _revisions: unusable }).revisions, undefined, JSON.stringify(unusable));
  }
  assert.deepEqual(parseIncomingDoc({ _revisions: { start: 3, ids: ['c', 'b'] } }).revisions, { pos: 3, hashes: ['c', 'b'] });
  // The ancestry's head is the document's revision, whatever `_rev` says (couch_doc).
  assert.equal(parseIncomingDoc({ _rev: '2-y', _revisions: { start: 1, ids: ['y'] } }).rev, '1-y');
  assert.equal(parseIncomingDoc({ _revisions: { start: 3, ids: ['c', 'b'] } }).rev, '3-c');
  assert.equal(parseIncomingDoc({ _rev: '0-1', _revisions: { start: 0, ids: ['1'] } }).rev, '0-1');
});
