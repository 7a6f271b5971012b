import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PackedJsonWriter } from '../../src/core/packed-json.js';
import { decodeRevision, encodeRevision, revisionSpans } from '../../src/core/records.js';
import { renderDoc } from '../../src/core/document.js';

/** The texts of a packed batch, decoded one by one from their byte lengths. */
function unpack(writer: PackedJsonWriter): string[] {
  const { bytes, lengths } = writer.finish();
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: string[] = [];
  let at = 0;
  for (const length of lengths) {
    out.push(buf.toString('utf8', at, at + length));
    at += length;
  }
  assert.equal(at, bytes.length, 'the lengths cover the bytes exactly');
  return out;
}

test('texts pack end to end with their byte lengths: ASCII, non-ASCII, long, growing past the first buffer', () => {
  const w = new PackedJsonWriter();
  const texts = ['{}', '"café"', '"日本語 😀"', `"${'x'.repeat(200)}"`, `"${'é'.repeat(40_000)}"`, '"\u2028"', '[1,2,3]'];
  for (const t of texts) {
    w.text(t);
    w.endText();
  }
  assert.equal(w.count, texts.length);
  assert.deepEqual(unpack(w), texts);
  assert.equal(w.count, 0, 'finish starts afresh');
});

test('a dropped text leaves nothing behind; bytes copy a range', () => {
  const w = new PackedJsonWriter();
  w.text('{"a":');
  w.dropText();
  const source = Buffer.from('xx[true]yy');
  w.bytes(source, 2, 8);
  w.endText();
  assert.deepEqual(unpack(w), ['[true]']);
});

test('packed revision records read as renderDoc renders them, whatever the body and attachments', () => {
  const bodies = ['{}', '{ }', '{"a":1}', '{ "a" : 1 }', '{"s":"crème \\u0000 😀","n":[1,{"k":null}]}', '{\t"x":"}"\r\n}'];
  const stubs = [undefined, '{"a.txt":{"content_type":"text/plain","revpos":1,"digest":"md5-x","length":5,"stub":true}}'];
  const w = new PackedJsonWriter();
  const expected: string[] = [];
  for (const body of bodies) {
    for (const attachments of stubs) {
      const bytes = encodeRevision({ body, attachments });
      assert.deepEqual(decodeRevision(bytes), { body, attachments });
      const spans = revisionSpans(bytes);
      // As Database.packKnownMany writes a document.
      w.text('{"_id":"d","_rev":"1-a"');
      w.objectMembers(bytes, spans.body[0], spans.body[1]);
      if (spans.attachments) {
        w.text(',"_attachments":');
        w.bytes(bytes, spans.attachments[0], spans.attachments[1]);
      }
      w.text(',"_local_seq":3}');
      w.endText();
      expected.push(renderDoc('d', '1-a', false, body, [], attachments).replace(/}$/, ',"_local_seq":3}'));
    }
  }
  const packed = unpack(w);
  assert.deepEqual(packed, expected);
  for (const text of packed) JSON.parse(text);
});
