/** Document keys written straight from the id are the same bytes as through the id's key. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Prefix, idKey, infoKey, liveKey, localKey, prefixed, revKey } from '../../src/core/keys.js';

test('info, live, local and revision keys are the same written from the id as from its key bytes', () => {
  const ids = ['', 'a', 'doc-00000001', 'café', '日本語', '😀', '\ud800 lone', 'x'.repeat(1799), 'x'.repeat(1800), 'x'.repeat(1801),
    'é'.repeat(900), 'é'.repeat(901), '_design/test'];
  for (const id of ids) {
    const key = idKey(id);
    assert.deepEqual(infoKey(id), prefixed(Prefix.Info, key.bytes), `info key of ${id.slice(0, 20)}`);
    assert.deepEqual(liveKey(id), prefixed(Prefix.Live, key.bytes));
    assert.deepEqual(localKey(id), prefixed(Prefix.Local, key.bytes));
    assert.deepEqual(infoKey(id), infoKey(key));
    for (const rev of ['1-abc', '12-0123456789abcdef0123456789abcdef']) {
      const expected = Buffer.concat([Buffer.of(Prefix.Rev), Buffer.alloc(4), key.bytes, Buffer.from(rev)]);
      expected.writeUInt32BE(key.bytes.length, 1);
      assert.deepEqual(revKey(id, rev), expected, `revision key of ${id.slice(0, 20)}`);
      assert.deepEqual(revKey(key, rev), expected);
    }
  }
});
