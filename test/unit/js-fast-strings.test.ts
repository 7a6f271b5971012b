/** Strings handed to QuickJS through Node's UTF-8 encoder arrive exactly as Emscripten's would. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newQuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten';
import { useNativeUtf8 } from '../../src/js/fast-strings.js';

const SAMPLES = [
  '', 'a', 'plain ascii {"_id":"x"}', 'Latin-1: café, naïve, ÿ', 'Greek: αβγ, Cyrillic: жзи', 'CJK: 漢字かな',
  'emoji: 😀👍🏽, flags 🇫🇷', 'combining: e\u0301 a\u0308', '\u0000 inside', 'x'.repeat(100_000) + 'é',
];

/** Each string's length and code units, as QuickJS sees them. */
function seenByQuickJS(module: Awaited<ReturnType<typeof newQuickJSWASMModule>>, strings: string[]): string[] {
  const ctx = module.newContext();
  try {
    const describe = ctx.unwrapResult(ctx.evalCode('(function (s) { var u = []; for (var i = 0; i < s.length; i++) u.push(s.charCodeAt(i)); return s.length + ":" + u.join(","); })'));
    const out = strings.map((text) => {
      const handle = ctx.newString(text);
      const result = ctx.unwrapResult(ctx.callFunction(describe, ctx.undefined, handle));
      handle.dispose();
      const seen = ctx.getString(result);
      result.dispose();
      return seen;
    });
    describe.dispose();
    return out;
  } finally {
    ctx.dispose();
  }
}

test('well-formed strings reach QuickJS unchanged, ill-formed ones as Emscripten encodes them', async () => {
  const stock = await newQuickJSWASMModule(RELEASE_SYNC);
  const fast = await newQuickJSWASMModule(RELEASE_SYNC);
  useNativeUtf8(fast);
  const illFormed = ['lone high \ud800 surrogate', 'lone low \udc00', 'ends high \ud83d'];
  const expected = seenByQuickJS(stock, [...SAMPLES, ...illFormed]);
  assert.deepEqual(seenByQuickJS(fast, [...SAMPLES, ...illFormed]), expected);
  // And the well-formed ones are exactly the host's strings (the copy is not lossy).
  SAMPLES.forEach((text, i) => {
    const units = Array.from({ length: text.length }, (_, k) => text.charCodeAt(k));
    const cut = text.indexOf('\u0000');
    // QuickJS reads a C string: it ends at the first NUL, as before the change.
    const visible = cut < 0 ? units : units.slice(0, cut);
    assert.equal(expected[i], `${visible.length}:${visible.join(',')}`);
  });
});
