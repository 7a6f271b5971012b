import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { CouchError } from '../../src/errors.js';
import {
  boundaryOf,
  multipartLength,
  newBoundary,
  parseHeaderValue,
  parseMultipart,
  quoteHeaderParam,
  writeMultipart,
  type MultipartPart,
  type OutgoingPart,
} from '../../src/api/multipart.js';

interface Parsed {
  headers: Record<string, string>;
  body: Buffer;
}

async function* feed(data: Buffer | string, size = Infinity): AsyncGenerator<Buffer> {
  const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, Math.min(buf.length, i + size));
}

async function* pieces(chunks: (Buffer | Uint8Array | string)[]): AsyncGenerator<Buffer | Uint8Array | string> {
  for (const c of chunks) yield c;
}

async function collect(parts: AsyncIterable<MultipartPart>): Promise<Parsed[]> {
  const out: Parsed[] = [];
  for await (const part of parts) {
    const chunks: Buffer[] = [];
    for await (const c of part.body) chunks.push(Buffer.from(c));
    out.push({ headers: part.headers, body: Buffer.concat(chunks) });
  }
  return out;
}

async function bytesOf(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

const parse = (data: Buffer | string, boundary: string, size = Infinity): Promise<Parsed[]> =>
  collect(parseMultipart(feed(data, size), boundary));

async function rejects400(promise: Promise<unknown>, reason?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof CouchError, `expected a CouchError, got ${String(err)}`);
    assert.equal(err.status, 400);
    assert.equal(err.error, 'bad_request');
    if (reason) assert.match(err.reason, reason);
    return true;
  });
}

const B = 'abc123';

/** Bodies that stress the delimiter search: CR/LF, dashes, and near-misses of the delimiter. */
const tricky: Buffer[] = [
  Buffer.from(''),
  Buffer.from('\r\n'),
  Buffer.from('\r\n\r\n'),
  Buffer.from('--'),
  Buffer.from(`--${B}`), // not preceded by CRLF: data
  Buffer.from(`\r\n--${B.slice(0, -1)}`), // the delimiter minus its last byte
  Buffer.from(`\r\n--${B.slice(0, -1)}X\r\n`),
  Buffer.from(`\r\r\n\n-\r\n--\r\n--a\r\n--abc12`),
  Buffer.from([0, 255, 13, 10, 45, 45, 13, 13, 10, 10, 0]),
  Buffer.from(`x\r\n-${B}\r\n`),
  Buffer.from(`ends with a partial delimiter\r\n--abc`),
  // The boundary text followed by anything but `--` or whitespace and a line end is data.
  Buffer.from(`\r\n--${B}X`),
  Buffer.from(`\r\n--${B}-\r\n--${B}-x`),
  Buffer.from(`\r\n--${B} \t x\r\n`),
  Buffer.from(`\r\n--${B}\rX`),
];

function trickyParts(): OutgoingPart[] {
  return tricky.map((body, i) => ({ headers: { 'Content-Type': 'application/octet-stream', 'X-Index': String(i) }, body }));
}

test('newBoundary is 32 random hex digits', () => {
  const a = newBoundary();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, newBoundary());
});

test('boundaryOf reads the boundary parameter', () => {
  assert.equal(boundaryOf('multipart/related; boundary="abc"'), 'abc');
  assert.equal(boundaryOf('multipart/related;boundary=abc'), 'abc');
  assert.equal(boundaryOf('Multipart/Mixed; charset=utf-8; BOUNDARY = xyz ; type=application/json'), 'xyz');
  assert.equal(boundaryOf('multipart/related; type="a;b"; boundary="with space, and \\"quote\\""'), 'with space, and "quote"');
  assert.equal(boundaryOf('multipart/related; boundary=a; boundary=b'), 'a');
  for (const bad of [
    'multipart/related',
    'multipart/related; boundary=',
    'multipart/related; boundary=""',
    'multipart/related; boundary="abc',
    'multipart/related; boundary="ends in space "',
    `multipart/related; boundary=${'x'.repeat(201)}`,
    'multipart/related; boundary="a\u00e9"',
    'application/json; boundary=abc',
    '',
  ]) {
    assert.throws(() => boundaryOf(bad), (err: unknown) => err instanceof CouchError && err.status === 400, bad);
  }
});

test('parseHeaderValue splits values and parameters', () => {
  assert.deepEqual(parseHeaderValue('attachment; filename="a \\"b\\".txt"; size=3'), {
    value: 'attachment',
    params: { filename: 'a "b".txt', size: '3' },
  });
  assert.deepEqual(parseHeaderValue('Application/JSON'), { value: 'application/json', params: {} });
  assert.deepEqual(parseHeaderValue('text/plain; flag; x=1'), { value: 'text/plain', params: { x: '1' } });
  assert.equal(parseHeaderValue(`attachment; filename=${quoteHeaderParam('we"ird\\name')}`).params['filename'], 'we"ird\\name');
});

test('parseMultipart refuses an unusable boundary', () => {
  assert.throws(() => parseMultipart(feed(''), ''), (err: unknown) => err instanceof CouchError && err.status === 400);
  assert.throws(() => parseMultipart(feed(''), 'x'.repeat(300)), (err: unknown) => err instanceof CouchError && err.status === 400);
});

test('the writer produces CouchDB-shaped framing', async () => {
  const bytes = await bytesOf(
    writeMultipart('B', [
      { headers: { 'Content-Type': 'application/json' }, body: '{"_id":"x"}' },
      { headers: { 'Content-Disposition': 'attachment; filename="a.txt"' }, body: Buffer.from('hi') },
    ]),
  );
  assert.equal(
    bytes.toString(),
    '--B\r\nContent-Type: application/json\r\n\r\n{"_id":"x"}\r\n--B\r\nContent-Disposition: attachment; filename="a.txt"\r\n\r\nhi\r\n--B--',
  );
  assert.equal((await bytesOf(writeMultipart('B', []))).toString(), '--B--');
});

test('the writer refuses header injection', async () => {
  await assert.rejects(bytesOf(writeMultipart('B', [{ headers: { 'X-A': 'a\r\nX-B: b' }, body: '' }])));
  await assert.rejects(bytesOf(writeMultipart('B', [{ headers: { 'X A': 'a' }, body: '' }])));
});

test('round trip: string, Buffer and streamed bodies', async () => {
  const boundary = newBoundary();
  async function* streamed(): AsyncGenerator<Buffer | string> {
    yield Buffer.from('stream');
    yield 'ed ';
    yield Buffer.alloc(0);
    yield Buffer.from('body');
  }
  const parts: OutgoingPart[] = [
    { headers: { 'Content-Type': 'application/json' }, body: '{"_id":"doc","_attachments":{}}' },
    { headers: { 'Content-Disposition': 'attachment; filename="f.bin"', 'Content-Length': '999' }, body: Buffer.from([1, 2, 3, 13, 10]) },
    { headers: { 'Content-Type': 'text/plain' }, body: streamed() },
    { headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'h\u00e9llo \u2603' },
  ];
  const parsed = await collect(parseMultipart(writeMultipart(boundary, parts), boundary));
  assert.equal(parsed.length, 4);
  assert.deepEqual(parsed[0]!.headers, { 'content-type': 'application/json' });
  assert.equal(parsed[0]!.body.toString(), '{"_id":"doc","_attachments":{}}');
  // Content-Length is informative only: the boundary decides.
  assert.deepEqual(parsed[1]!.headers, { 'content-disposition': 'attachment; filename="f.bin"', 'content-length': '999' });
  assert.deepEqual([...parsed[1]!.body], [1, 2, 3, 13, 10]);
  assert.equal(parsed[2]!.body.toString(), 'streamed body');
  assert.equal(parsed[3]!.body.toString('utf8'), 'h\u00e9llo \u2603');
});

test('round trip: bodies with CR, LF, dashes and near-delimiters', async () => {
  const bytes = await bytesOf(writeMultipart(B, trickyParts()));
  const parsed = await parse(bytes, B);
  assert.equal(parsed.length, tricky.length);
  parsed.forEach((p, i) => {
    assert.equal(p.headers['x-index'], String(i));
    assert.deepEqual(p.body, tricky[i], `part ${i}`);
  });
});

test('multipartLength matches what the writer writes', async () => {
  const parts = trickyParts();
  const bytes = await bytesOf(writeMultipart(B, parts));
  const lengths = parts.map((p) => ({ headers: p.headers, length: (p.body as Buffer).length }));
  assert.equal(multipartLength(B, lengths), bytes.length);
  assert.equal(multipartLength(B, []), (await bytesOf(writeMultipart(B, []))).length);
  const utf8 = [{ headers: { 'Content-Disposition': `attachment; filename="\u2603"` }, body: '\u00e9' }];
  assert.equal(
    multipartLength(B, [{ headers: utf8[0]!.headers, length: Buffer.byteLength('\u00e9') }]),
    (await bytesOf(writeMultipart(B, utf8))).length,
  );
});

test('nested: multipart/mixed of multipart/related parts', async () => {
  const outer = newBoundary();
  const inner = newBoundary();
  const doc = (n: number): OutgoingPart => ({
    headers: { 'Content-Type': `multipart/related; boundary="${inner}"` },
    body: writeMultipart(inner, [
      { headers: { 'Content-Type': 'application/json' }, body: `{"_id":"d","_rev":"${n}-x"}` },
      { headers: { 'Content-Disposition': 'attachment; filename="a.txt"' }, body: Buffer.from(`attachment ${n}\r\n--${outer}-not-quite`) },
    ]),
  });
  const bytes = await bytesOf(
    writeMultipart(outer, [doc(1), { headers: { 'Content-Type': 'application/json; error="true"' }, body: '{"missing":"2-y"}' }, doc(3)]),
  );
  for (const size of [Infinity, 7, 1]) {
    const seen: string[] = [];
    for await (const part of parseMultipart(feed(bytes, size), outer)) {
      const type = parseHeaderValue(part.headers['content-type']!);
      if (type.value === 'multipart/related') {
        const inners = await collect(parseMultipart(part.body, boundaryOf(part.headers['content-type']!)));
        seen.push(inners.map((p) => p.body.toString()).join(' | '));
      } else {
        seen.push(`${type.params['error']}: ${(await part.buffer(1000)).toString()}`);
      }
    }
    assert.deepEqual(seen, [
      `{"_id":"d","_rev":"1-x"} | attachment 1\r\n--${outer}-not-quite`,
      'true: {"missing":"2-y"}',
      `{"_id":"d","_rev":"3-x"} | attachment 3\r\n--${outer}-not-quite`,
    ]);
  }
});

test('every chunking of a body parses the same', async () => {
  const bytes = Buffer.concat([
    Buffer.from('preamble\r\n'),
    await bytesOf(writeMultipart(B, trickyParts().slice(4, 9))),
    Buffer.from('\r\nepilogue'),
  ]);
  const expected = await parse(bytes, B);
  assert.equal(expected.length, 5);
  assert.deepEqual(await parse(bytes, B, 1), expected, 'one byte at a time');
  for (let i = 0; i <= bytes.length; i++) {
    const got = await collect(parseMultipart(pieces([bytes.subarray(0, i), bytes.subarray(i)]), B));
    assert.deepEqual(got, expected, `split at ${i}`);
  }
  // Every pair of split points, on a smaller body.
  const small = Buffer.from(`--${B}\r\nA: 1\r\n\r\n\r\n--${B.slice(0, 3)}\r\n--${B}\r\n\r\n-\r\n--${B}--`);
  const smallExpected = await parse(small, B);
  assert.deepEqual(smallExpected.map((p) => p.body.toString()), [`\r\n--${B.slice(0, 3)}`, '-']);
  for (let i = 0; i <= small.length; i++) {
    for (let j = i; j <= small.length; j++) {
      const got = await collect(parseMultipart(pieces([small.subarray(0, i), small.subarray(i, j), small.subarray(j)]), B));
      assert.deepEqual(got, smallExpected, `split at ${i}, ${j}`);
    }
  }
});

test('source chunks may be strings, Uint8Arrays or empty', async () => {
  const got = await collect(
    parseMultipart(pieces([`--${B}\r\nX: `, new Uint8Array(Buffer.from('1\r\n\r\nab')), '', Buffer.alloc(0), `c\r\n--${B}--`]), B),
  );
  assert.deepEqual(got, [{ headers: { x: '1' }, body: Buffer.from('abc') }]);
});

test('empty parts, header-less parts and zero parts', async () => {
  const written = await bytesOf(
    writeMultipart(B, [
      { headers: {}, body: '' },
      { headers: { A: '1' }, body: Buffer.alloc(0) },
      { headers: {}, body: 'x' },
    ]),
  );
  assert.deepEqual(await parse(written, B), [
    { headers: {}, body: Buffer.alloc(0) },
    { headers: { a: '1' }, body: Buffer.alloc(0) },
    { headers: {}, body: Buffer.from('x') },
  ]);
  // As in CouchDB (mochiweb), a body starts after the blank line: one starting with the
  // boundary text is data, so what the writer writes round-trips.
  assert.deepEqual(await parse(`--${B}\r\n\r\n--${B}\r\n\r\n\r\n--${B}--`, B), [{ headers: {}, body: Buffer.from(`--${B}\r\n\r\n`) }]);
  assert.deepEqual(await parse(`--${B}--`, B), []);
  assert.deepEqual(await parse(`--${B}--\r\n`, B), []);
});

test('preamble and epilogue are ignored', async () => {
  const body = `This is the preamble.\r\n--${B.slice(0, 4)}\r\n--${B}\r\nA: 1\r\n\r\nbody\r\n--${B}--\r\nThis is the epilogue.\r\n--${B}\r\nB: 2\r\n\r\nnot a part`;
  for (const size of [Infinity, 1, 5]) assert.deepEqual(await parse(body, B, size), [{ headers: { a: '1' }, body: Buffer.from('body') }]);
});

test('transport padding after a delimiter', async () => {
  assert.deepEqual(await parse(`--${B} \t \r\nA: 1\r\n\r\nbody\r\n--${B}  \r\n\r\nx\r\n--${B}--`, B), [
    { headers: { a: '1' }, body: Buffer.from('body') },
    { headers: {}, body: Buffer.from('x') },
  ]);
});

test('LF-only header blocks, folded and repeated headers', async () => {
  const body = `--${B}\nContent-Type: application/json\nX-Folded: one\n  two\n\tthree\nX-Rep: a\r\nx-rep: b\n\n{"a":1}\r\n--${B}--`;
  for (const size of [Infinity, 1]) {
    assert.deepEqual(await parse(body, B, size), [
      {
        headers: { 'content-type': 'application/json', 'x-folded': 'one two three', 'x-rep': 'a, b' },
        body: Buffer.from('{"a":1}'),
      },
    ]);
  }
  const [part] = await parse(`--${B}\r\n__proto__: x\r\n\r\n\r\n--${B}--`, B);
  assert.equal(Object.getPrototypeOf(part!.headers), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(part!.headers, '__proto__')?.value, 'x');
});

test('malformed bodies are 400 bad_request', async () => {
  const cases: [string, string, RegExp][] = [
    ['empty body', '', /does not contain its boundary/],
    ['boundary never found', `--${B.slice(0, -1)}\r\nA: 1\r\n\r\nbody`, /does not contain its boundary/],
    ['boundary only with another suffix', `--${B}X\r\n\r\nbody\r\n--${B}-x`, /does not contain its boundary/],
    ['no closing delimiter', `--${B}\r\nA: 1\r\n\r\nbody`, /ended inside a part/],
    ['no closing delimiter after a CRLF', `--${B}\r\nA: 1\r\n\r\nbody\r\n`, /ended inside a part/],
    ['truncated mid-part', `--${B}\r\nA: 1\r\n\r\nfirst\r\n--${B}\r\nA: 2\r\n\r\nsec`, /ended inside a part/],
    ['truncated inside headers', `--${B}\r\nContent-Ty`, /inside part headers/],
    ['truncated after a delimiter', `--${B}\r\nA: 1\r\n\r\nbody\r\n--${B}`, /without a closing boundary/],
    ['truncated after half a close', `--${B}\r\n\r\nbody\r\n--${B}-`, /without a closing boundary/],
    ['missing headers separator', `--${B}\r\nContent-Type: text/plain\r\nbody text\r\n--${B}--`, /part header/],
    ['header without a name', `--${B}\r\n: value\r\n\r\nbody\r\n--${B}--`, /part header/],
    ['folded first header', `--${B}\r\n  folded\r\n\r\nbody\r\n--${B}--`, /part header/],
    ['huge header block', `--${B}\r\nX: ${'y'.repeat(70_000)}\r\n\r\nbody\r\n--${B}--`, /too large/],
  ];
  for (const [name, body, reason] of cases) {
    for (const size of [Infinity, 3]) {
      await rejects400(parse(body, B, size), reason).catch((err: unknown) => {
        throw new Error(`${name} (chunks of ${size}): ${String(err)}`);
      });
    }
  }
});

test('after an error every read fails the same way', async () => {
  const parts = parseMultipart(feed(`--${B}\r\nA: 1\r\n\r\ntruncated`), B);
  const it = parts[Symbol.asyncIterator]();
  const first = await it.next();
  assert.equal(first.done, false);
  const part = first.value as MultipartPart;
  await rejects400(part.buffer(100));
  await rejects400(part.skip());
  await rejects400(it.next());
});

test('buffer(limit): 413 past the limit, exact limit allowed', async () => {
  const body = `--${B}\r\n\r\n0123456789\r\n--${B}\r\n\r\nnext\r\n--${B}--`;
  for (const size of [Infinity, 1]) {
    const seen: string[] = [];
    for await (const part of parseMultipart(feed(body, size), B)) {
      if (seen.length === 0) {
        await assert.rejects(part.buffer(9), (err: unknown) => err instanceof CouchError && err.status === 413 && err.error === 'too_large');
        seen.push('413');
      } else {
        seen.push((await part.buffer(4)).toString());
      }
    }
    assert.deepEqual(seen, ['413', 'next']);
  }
  for await (const part of parseMultipart(feed(body), B)) {
    assert.equal((await part.buffer(10)).toString(), '0123456789');
    break;
  }
  for await (const part of parseMultipart(feed(body), B)) {
    await assert.rejects(part.buffer(1, 'Document too large'), (err: unknown) => err instanceof CouchError && err.reason === 'Document too large');
    break;
  }
});

test('skipping parts, explicitly or by moving on', async () => {
  const body = await bytesOf(
    writeMultipart(B, [
      { headers: { N: '1' }, body: 'one'.repeat(1000) },
      { headers: { N: '2' }, body: 'two' },
      { headers: { N: '3' }, body: 'three'.repeat(1000) },
      { headers: { N: '4' }, body: 'four' },
    ]),
  );
  for (const size of [Infinity, 10]) {
    const got: string[] = [];
    for await (const part of parseMultipart(feed(body, size), B)) {
      const n = part.headers['n'];
      if (n === '1') await part.skip();
      else if (n === '3') {
        // read a little, leave the rest for the parser to discard
        for await (const chunk of part.body) {
          assert.ok(chunk.length > 0);
          break;
        }
      } else got.push((await part.buffer(100)).toString());
      await part.skip(); // harmless after the end
    }
    assert.deepEqual(got, ['two', 'four']);
  }
});

test('a part body cannot be read once the parser has moved on', async () => {
  const held: MultipartPart[] = [];
  for await (const part of parseMultipart(feed(`--${B}\r\n\r\na\r\n--${B}\r\n\r\nb\r\n--${B}--`), B)) held.push(part);
  assert.equal(held.length, 2);
  await assert.rejects(held[0]!.buffer(10), /moved to the next part/);
  await held[0]!.skip(); // a no-op
});

test('breaking out early releases the source', async () => {
  let released = false;
  let reads = 0;
  async function* source(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(`--${B}\r\n\r\nfirst\r\n--${B}\r\n\r\n`);
      for (;;) {
        reads++;
        yield Buffer.from('more '.repeat(100));
      }
    } finally {
      released = true;
    }
  }
  for await (const part of parseMultipart(source(), B)) {
    assert.equal((await part.buffer(100)).toString(), 'first');
    break;
  }
  assert.ok(released);
  assert.ok(reads <= 1);
});

test('backpressure: the parser reads the source only as the consumer reads', async () => {
  let produced = 0;
  const chunk = Buffer.alloc(64 * 1024, 'x');
  async function* source(): AsyncGenerator<Buffer> {
    yield Buffer.from(`--${B}\r\nA: 1\r\n\r\n`);
    for (let i = 0; i < 100; i++) {
      produced++;
      yield chunk;
    }
    yield Buffer.from(`\r\n--${B}--`);
  }
  let consumed = 0;
  for await (const part of parseMultipart(source(), B)) {
    for await (const c of part.body) {
      consumed += c.length;
      assert.ok(produced * chunk.length - consumed <= 2 * chunk.length, `read ahead: produced ${produced}, consumed ${consumed} bytes`);
    }
  }
  assert.equal(consumed, 100 * chunk.length);
});

function gcFunction(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

test('a 50 MB part streams with bounded memory', async () => {
  const gc = gcFunction();
  const size = 50 * 1024 * 1024;
  const chunkSize = 64 * 1024 + 7; // misaligned with everything
  // Data full of CRs and dashes, so the split-delimiter path runs often.
  const template = Buffer.alloc(chunkSize);
  for (let i = 0; i < chunkSize; i++) template[i] = [13, 10, 45, 45, 97, 98, 99, 13][i % 8]!;
  const sent = createHash('sha256');
  async function* source(): AsyncGenerator<Buffer> {
    yield Buffer.from(`preamble\r\n--${B}\r\nContent-Type: application/octet-stream\r\n\r\n`);
    let left = size;
    while (left > 0) {
      const n = Math.min(left, chunkSize);
      const chunk = Buffer.from(template.subarray(0, n)); // a fresh allocation each time
      sent.update(chunk);
      left -= n;
      yield chunk;
    }
    yield Buffer.from(`\r\n--${B}\r\n\r\nsmall\r\n--${B}--`);
  }
  gc?.();
  const before = process.memoryUsage();
  let peakArrayBuffers = 0;
  let peakRss = 0;
  let chunks = 0;
  const received = createHash('sha256');
  let total = 0;
  const bodies: string[] = [];
  for await (const part of parseMultipart(source(), B)) {
    if (part.headers['content-type'] === 'application/octet-stream') {
      for await (const c of part.body) {
        received.update(c);
        total += c.length;
        if (++chunks % 64 === 0) {
          gc?.();
          const m = process.memoryUsage();
          peakArrayBuffers = Math.max(peakArrayBuffers, m.arrayBuffers - before.arrayBuffers);
          peakRss = Math.max(peakRss, m.rss - before.rss);
        }
      }
    } else {
      bodies.push((await part.buffer(100)).toString());
    }
  }
  assert.equal(total, size);
  assert.equal(received.digest('hex'), sent.digest('hex'));
  assert.deepEqual(bodies, ['small']);
  const MB = 1024 * 1024;
  // Backing stores are freed by a background sweeper after a GC, so a few MB may lag behind;
  // without a forced GC, garbage chunks may linger longer: allow more slack.
  assert.ok(peakArrayBuffers < (gc ? 16 : 30) * MB, `arrayBuffers grew by ${(peakArrayBuffers / MB).toFixed(1)} MB`);
  assert.ok(peakRss < 30 * MB, `rss grew by ${(peakRss / MB).toFixed(1)} MB`);
});
