/**
 * The sandbox's walls, with real QuickJS workers: no way to the host, runaway functions stopped,
 * memory bombs contained, and the query server usable after each.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CouchError } from '../../src/errors.js';
import { QueryServer, type DesignDocCode } from '../../src/js/query-server.js';

const TIMEOUT_MS = 400;
const logs: string[] = [];
let qs: QueryServer;

before(async () => {
  qs = await QueryServer.create({ timeoutMs: TIMEOUT_MS, memoryLimitBytes: 32 * 1024 * 1024, workers: 2, log: (m) => logs.push(m) });
});
after(async () => {
  await qs.close();
});

const ddoc = (views: DesignDocCode['views'], lib?: unknown): DesignDocCode => ({ id: '_design/limits', views, lib });

async function rowsOf(map: string, docs: object[] = [{ _id: 'x' }]): Promise<[unknown, unknown][][]> {
  const p = await qs.views(ddoc({ v: { map } }));
  try {
    return (await p.map(docs)).map((v) => v[0]!);
  } finally {
    p.dispose();
  }
}

const isProcessError = (e: unknown): boolean => e instanceof CouchError && e.status === 500 && e.error === 'os_process_error';

/** The server still maps, in both workers. */
async function stillHealthy(): Promise<void> {
  const docs = Array.from({ length: 8 }, (_, i) => ({ _id: `h${i}` }));
  assert.deepEqual(await rowsOf('function(doc) { emit(doc._id, 1) }', docs), docs.map((d) => [[d._id, 1]]));
}

describe('no way out to the host', () => {
  test('no process, require, modules, console, timers or network in the global scope', async () => {
    const [rows] = await rowsOf(`function(doc) {
      var g = (function() { return this })();
      ['process', 'require', 'module', 'exports', 'console', 'fetch', 'setTimeout', 'setInterval', 'Buffer',
       'std', 'os', 'scriptArgs', 'print', 'XMLHttpRequest', 'WebAssembly', 'importScripts', 'Deno', 'Bun', 'global'
      ].forEach(function(name) { emit(name, typeof g[name] + '/' + typeof globalThis[name]) });
    }`);
    for (const [name, type] of rows!) assert.equal(type, 'undefined/undefined', `${String(name)} is reachable`);
  });

  test('the global object holds only standard built-ins and the CouchDB environment', async () => {
    const [rows] = await rowsOf('function(doc) { emit(Object.getOwnPropertyNames(globalThis).sort(), null) }');
    const names = rows![0]![0] as string[];
    const standard = new Set(['Object', 'Function', 'Array', 'Number', 'parseFloat', 'parseInt', 'Infinity', 'NaN', 'undefined',
      'Boolean', 'String', 'Symbol', 'Date', 'Promise', 'RegExp', 'Error', 'AggregateError', 'EvalError', 'RangeError',
      'ReferenceError', 'SyntaxError', 'TypeError', 'URIError', 'InternalError', 'globalThis', 'JSON', 'Math', 'Intl', 'ArrayBuffer',
      'SharedArrayBuffer', 'Atomics', 'Uint8Array', 'Int8Array', 'Uint16Array', 'Int16Array', 'Uint32Array', 'Int32Array',
      'Float16Array', 'Float32Array', 'Float64Array', 'Uint8ClampedArray', 'BigUint64Array', 'BigInt64Array', 'DataView', 'Map',
      'BigInt', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'FinalizationRegistry', 'Proxy', 'Reflect', 'decodeURI',
      'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'unescape', 'eval', 'isFinite', 'isNaN', 'Iterator',
      'emit', 'log', 'sum', 'isArray', 'toJSON',
      // CouchDB's render API for shows and lists (render.js, mimeparse.js)
      'registerType', 'provides', 'start', 'send', 'getRow']);
    const extra = names.filter((n) => !standard.has(n));
    assert.deepEqual(extra, []);
  });

  test('require() reaches only the design document, not Node modules', async () => {
    const [rows] = await rowsOf(`function(doc) {
      ['fs', 'node:fs', 'child_process', '../../../../etc/passwd', 'views/lib/../../../x'].forEach(function(m) {
        try { emit(m, typeof require(m)) } catch (e) { emit(m, e[0] + ':' + e[1]) }
      });
    }`);
    for (const [name, outcome] of rows!) assert.equal(outcome, 'error:invalid_require_path', `require(${String(name)})`);
  });

  test("the node:vm escape this.constructor.constructor('return process')() finds nothing", async () => {
    const [rows] = await rowsOf(`function(doc) {
      var self = this;
      function probe(name, f) {
        try { emit(name, typeof f()) } catch (e) { emit(name, e.name + ': ' + e.message) }
      }
      probe('fn-ctor', function() { return self.constructor.constructor('return process')() });
      probe('fn-ctor-global', function() { return self.constructor.constructor('return this')().process });
      probe('doc-ctor', function() { return doc.constructor.constructor('return globalThis.process')() });
      probe('emit-ctor', function() { return emit.constructor('return typeof process')() === 'undefined' ? undefined : 1 });
      probe('eval', function() { return eval('globalThis.process') });
      probe('error-ctor', function() { try { null.x } catch (e) { return e.constructor.constructor('return this.process')() } });
    }`);
    assert.deepEqual(rows, [
      ['fn-ctor', "ReferenceError: 'process' is not defined"],
      ['fn-ctor-global', 'undefined'],
      ['doc-ctor', 'undefined'],
      ['emit-ctor', 'undefined'],
      ['eval', 'undefined'],
      ['error-ctor', 'undefined'],
    ]);
  });

  test('dynamic import() loads nothing', async () => {
    logs.length = 0;
    const [rows] = await rowsOf(`function(doc) {
      var outcome = 'pending';
      var p;
      try { p = import('fs'); } catch (e) { outcome = 'threw ' + e.name }
      if (p) p.then(function(m) { outcome = 'loaded'; emit('loaded', Object.keys(m)) }, function(e) { outcome = 'rejected' });
      try { this.constructor.constructor('return import("node:child_process")')() } catch (e) {}
      emit('import', outcome);
    }`);
    assert.deepEqual(rows, [['import', 'pending']]);
    assert.ok(!logs.some((m) => /loaded/.test(m)));
  });

  test('a function that overwrites built-ins or the environment cannot break the host, and affects only its own design document', async () => {
    const evil = await qs.views(ddoc({ v: { map: `function(doc) {
      JSON.stringify = function() { return '"pwned"' };
      JSON.parse = function() { return 'pwned' };
      Array.prototype.push = function() { throw 'no' };
      Object.freeze = function(o) { return o };
      emit(doc._id, 1);
    }` } }));
    assert.deepEqual(await evil.map([{ _id: 'a' }, { _id: 'b' }]), [[[['a', 1]]], [[['b', 1]]]]);
    assert.deepEqual(await evil.map([{ _id: 'c' }]), [[[['c', 1]]]]);
    const hostile = await qs.views(ddoc({ v: { map: `function(doc) {
      Array.prototype.toJSON = function() { return 'garbage' };
      emit(doc._id, [1]);
    }` } }));
    await assert.rejects(hostile.map([{ _id: 'a' }]), (e: unknown) => e instanceof CouchError && e.error === 'os_process_error');
    evil.dispose();
    hostile.dispose();
    await stillHealthy();
  });
});

describe('runaway functions', () => {
  test('while(true){} is stopped after the timeout with os_process_error, and the server stays usable', async () => {
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { if (doc.loop) while (true) {} emit(doc._id, 1) }' } }));
    const t0 = Date.now();
    await assert.rejects(p.map([{ _id: 'a' }, { _id: 'b', loop: true }, { _id: 'c' }]), (e: unknown) =>
      isProcessError(e) && (e as CouchError).reason === 'OS process timed out.');
    const elapsed = Date.now() - t0;
    assert.ok(elapsed >= TIMEOUT_MS - 20 && elapsed < TIMEOUT_MS + 1500, `stopped after ${elapsed} ms`);
    // the same program, afterwards, in both workers
    assert.deepEqual(await p.map([{ _id: 'd' }, { _id: 'e' }]), [[[['d', 1]]], [[['e', 1]]]]);
    p.dispose();
    await stillHealthy();
  });

  test('the timeout is per document: a batch of slow-but-legal documents completes', async () => {
    const server = await QueryServer.create({ timeoutMs: 400, memoryLimitBytes: 32 << 20, workers: 1, log: () => {} });
    const p = await server.views(ddoc({ v: { map: 'function(doc) { var end = Date.now() + 100; while (Date.now() < end) {} emit(doc._id, 1) }' } }));
    const docs = Array.from({ length: 8 }, (_, i) => ({ _id: `s${i}` })); // 800 ms in one batch, 100 ms per document
    assert.deepEqual(await p.map(docs), docs.map((d) => [[[d._id, 1]]]));
    p.dispose();
    await server.close();
  });

  test('a runaway reduce and a runaway compilation are stopped too', async () => {
    const p = await qs.views(ddoc({ v: { map: 'function(doc) {}', reduce: 'function(k, v, r) { for (;;) {} }' } }));
    await assert.rejects(p.reduce('v', [[1, 'a']], [1], false), isProcessError);
    p.dispose();
    await assert.rejects(qs.views(ddoc({ v: { map: '(function() { while (true) {} })()' } })), isProcessError);
    await stillHealthy();
  });

  test('logs made before a timeout still reach the log', async () => {
    logs.length = 0;
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { log("at " + doc._id); if (doc.loop) for (;;) {} }' } }));
    await assert.rejects(p.map([{ _id: 'a' }, { _id: 'b', loop: true }]), isProcessError);
    assert.deepEqual(logs.filter((m) => m.startsWith('at ')), ['at a', 'at b']);
    p.dispose();
  });

  test('promise callbacks a map queues cannot run away or pile up', async () => {
    const p = await qs.views(ddoc({ v: { map: `function(doc) {
      Promise.resolve().then(function() { emit('late', 1); if (doc.loop) for (;;) {} });
      emit(doc._id, 1);
    }` } }));
    assert.deepEqual(await p.map([{ _id: 'a', loop: true }]), [[[['a', 1]]]]);
    const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: `p${i}` }));
    assert.deepEqual(await p.map(docs), docs.map((d) => [[[d._id, 1]]]));
    p.dispose();
  });

  test('a long native call that the interrupt handler cannot stop is ended by the watchdog (worker replaced)', async () => {
    // few loop iterations, each a long native operation: QuickJS checks its interrupt handler
    // only every ~10,000 ticks, so only the watchdog thread can end this
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { var s = "ab".repeat(1e6); for (var k = 0; k < 2000; k++) s.split(""); emit(1, 1) }' } }));
    const t0 = Date.now();
    await assert.rejects(p.map([{ _id: 'a' }]), isProcessError);
    assert.ok(Date.now() - t0 < TIMEOUT_MS + 2500, `ended after ${Date.now() - t0} ms`);
    p.dispose();
    // the same while compiling
    await assert.rejects(qs.views(ddoc({ v: { map: '(function() { var s = "ab".repeat(1e6); for (var k = 0; k < 2000; k++) s.split(""); return function(doc) {} })()' } })), isProcessError);
    await stillHealthy();
  });
});

describe('memory bombs', () => {
  const bombs: [string, string][] = [
    ['growing array', 'function(doc) { var a = []; while (true) a.push("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + a.length); }'],
    ['growing object', 'function(doc) { var o = {}; for (var i = 0;; i++) o["k" + i] = {i: i}; }'],
    ['huge allocation', 'function(doc) { emit(1, new Array(1e9).fill(0).length) }'],
    ['string doubling', 'function(doc) { var s = "x"; for (var i = 0; i < 40; i++) s = s + s; emit(1, s.length) }'],
    ['many emits', 'function(doc) { for (var i = 0;; i++) emit(i, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy") }'],
  ];
  for (const [name, map] of bombs) {
    test(`${name}: contained, and the server stays usable`, async () => {
      const p = await qs.views(ddoc({ v: { map } }));
      const outcome = await p.map([{ _id: 'a' }, { _id: 'b' }]).then((rows) => rows, (err: unknown) => err);
      if (Array.isArray(outcome)) {
        // a bomb that QuickJS reports as a catchable error (e.g. "string too long") is that map failing for the doc
        assert.deepEqual(outcome, [[[]], [[]]]);
      } else {
        assert.ok(isProcessError(outcome), String(outcome));
      }
      p.dispose();
      await stillHealthy();
    });
  }

  test('a memory bomb in a batch fails it; a batch that is only too big as a whole is split and succeeds', async () => {
    const server = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 16 << 20, workers: 1, log: () => {}, maxBatchBytes: 64 << 20, maxBatchDocs: 1000 });
    const p = await server.views(ddoc({ v: { map: 'function(doc) { emit(doc._id, doc.pad.length) }' } }));
    const pad = 'p'.repeat(200_000);
    const docs = Array.from({ length: 60 }, (_, i) => ({ _id: `big${i}`, pad })); // 12 MB of JSON, more in QuickJS
    assert.deepEqual(await p.map(docs), docs.map((d) => [[[d._id, pad.length]]]));
    p.dispose();
    await server.close();
  });
});
