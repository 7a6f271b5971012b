/** Order tags for long keys: always strictly between their neighbours, in valid digits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tagBetween } from '../../src/views/long-keys.js';

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('tags inserted anywhere keep byte order, use digits 1..254 and never end in 1', () => {
  const next = random(3);
  const tags: Buffer[] = [];
  for (let i = 0; i < 5000; i++) {
    // Often the ends (keys arriving in order), otherwise anywhere.
    const r = next();
    const at = r < 0.2 ? 0 : r < 0.5 ? tags.length : Math.floor(next() * (tags.length + 1));
    const tag = tagBetween(tags[at - 1], tags[at]);
    if (at > 0) assert.ok(Buffer.compare(tags[at - 1]!, tag) < 0, 'above its lower neighbour');
    if (at < tags.length) assert.ok(Buffer.compare(tag, tags[at]!) < 0, 'below its upper neighbour');
    assert.ok(tag.length > 0 && tag.every((d) => d >= 1 && d <= 254), `digits of ${tag.toString('hex')}`);
    assert.notEqual(tag[tag.length - 1], 1);
    tags.splice(at, 0, tag);
  }
  assert.ok(Math.max(...tags.map((t) => t.length)) < 16, `tags stay short: ${Math.max(...tags.map((t) => t.length))}`);
});

test('edge cases: below the smallest possible start, above 0xfe', () => {
  const low = tagBetween(undefined, Buffer.of(1, 2));
  assert.ok(Buffer.compare(low, Buffer.of(1, 2)) < 0 && low.length > 0);
  const high = tagBetween(Buffer.of(254, 254), undefined);
  assert.ok(Buffer.compare(high, Buffer.of(254, 254)) > 0);
  const mid = tagBetween(Buffer.of(5), Buffer.of(6));
  assert.ok(Buffer.compare(Buffer.of(5), mid) < 0 && Buffer.compare(mid, Buffer.of(6)) < 0);
});
