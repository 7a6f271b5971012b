import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newRevHash } from '../../src/core/revid.js';

const body = JSON.stringify({ a: 1, b: [true, null, 'x'] });

test('the same edit gives the same revision hash', () => {
  assert.equal(newRevHash(false, '1-abc', body), newRevHash(false, '1-abc', body));
  assert.match(newRevHash(false, null, body), /^[0-9a-f]{32}$/);
});

test('every part of the edit changes the hash', () => {
  const base = newRevHash(false, '1-abc', body, ['md5-x']);
  assert.notEqual(newRevHash(true, '1-abc', body, ['md5-x']), base, 'deleted flag');
  assert.notEqual(newRevHash(false, '1-abd', body, ['md5-x']), base, 'parent');
  assert.notEqual(newRevHash(false, null, body, ['md5-x']), base, 'no parent');
  assert.notEqual(newRevHash(false, '1-abc', JSON.stringify({ a: 2, b: [true, null, 'x'] }), ['md5-x']), base, 'body');
  assert.notEqual(newRevHash(false, '1-abc', body, ['md5-y']), base, 'attachment digest');
  assert.notEqual(newRevHash(false, '1-abc', body), base, 'no attachments');
});

test('attachment digests count as a set, not a list', () => {
  assert.equal(newRevHash(false, null, body, ['md5-a', 'md5-b']), newRevHash(false, null, body, ['md5-b', 'md5-a']));
});
