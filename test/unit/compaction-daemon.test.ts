/**
 * The compaction daemon's pure parts (core/compaction-daemon.ts): `[compactions]` rules as
 * CouchDB 1.6 parses them, the daily window, and the fragmentation estimate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fragmentation, inWindow, parseCompactionRule, type CompactionRule } from '../../src/core/compaction-daemon.js';

const at = (h: number, m: number) => new Date(2026, 0, 1, h, m);

test('rules parse as CouchDB writes them', () => {
  assert.deepEqual(parseCompactionRule('[{db_fragmentation, "70%"}, {view_fragmentation, "60%"}, {from, "23:00"}, {to, "04:00"}]'), {
    dbFragmentation: 70, viewFragmentation: 60, period: { from: [23, 0], to: [4, 0] }, strictWindow: false, parallelViewCompaction: false,
  });
  assert.deepEqual(parseCompactionRule('[{db_fragmentation, "40%"}, {strict_window, true}, {parallel_view_compaction, true}]'), {
    dbFragmentation: 40, strictWindow: true, parallelViewCompaction: true,
  });
  assert.deepEqual(parseCompactionRule('[]'), { strictWindow: false, parallelViewCompaction: false });
});

test('bad rules are refused with a reason', () => {
  for (const text of ['nonsense', '{db_fragmentation, "70%"}', '[{db_fragmentation, "lots"}]', '[{from, "23:00"}]', '[{to, "4"}]', '[{colour, "red"}]', '[{strict_window, maybe}]']) {
    const rule = parseCompactionRule(text);
    assert.ok('invalid' in rule, text);
  }
  const incomplete = parseCompactionRule('[{from, "23:00"}]');
  assert.ok('invalid' in incomplete && /incomplete period/.test(incomplete.invalid));
});

test('the window is local time, from inclusive, to exclusive, and may span midnight', () => {
  const night = parseCompactionRule('[{from, "23:00"}, {to, "04:00"}]') as CompactionRule;
  assert.equal(inWindow(night, at(23, 0)), true);
  assert.equal(inWindow(night, at(2, 30)), true);
  assert.equal(inWindow(night, at(4, 0)), false);
  assert.equal(inWindow(night, at(12, 0)), false);
  const day = parseCompactionRule('[{from, "09:30"}, {to, "17:00"}]') as CompactionRule;
  assert.equal(inWindow(day, at(9, 29)), false);
  assert.equal(inWindow(day, at(9, 30)), true);
  assert.equal(inWindow(day, at(16, 59)), true);
  assert.equal(inWindow(parseCompactionRule('[]') as CompactionRule, at(3, 3)), true);
});

test('fragmentation is the share of the file that is not live data; small files count as none', () => {
  assert.deepEqual(fragmentation(1000, 250, 0), { percent: 75, spaceRequired: 500 });
  assert.deepEqual(fragmentation(1000, 250, 4096), { percent: 0, spaceRequired: 1000 });
  assert.deepEqual(fragmentation(1000, 0, 0), { percent: 0, spaceRequired: 1000 });
  assert.deepEqual(fragmentation(1000, null, 0), { percent: 100, spaceRequired: 1000 });
});
