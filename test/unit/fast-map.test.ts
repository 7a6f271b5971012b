/**
 * The map interpreter (src/js/fast-map.ts): which functions it takes, and — the point — that a
 * view program gives the same rows and logs with it as in QuickJS alone, over random documents
 * built to reach every corner (missing members, inherited names, odd numbers, unicode).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFastMap, SANDBOX_ONLY_PROTOTYPE_NAMES } from '../../src/js/fast-map.js';
import { compileQuickJS, newQuickJS, prototypeNamesOf } from '../../src/js/quickjs-module.js';
import { QueryServer } from '../../src/js/query-server.js';
import { MapComparison } from '../helpers/map-comparison.js';
import { seededRandom } from '../helpers/random.js';

/** Maps the interpreter takes (each is checked to compile, then compared with QuickJS). */
const FAST_MAPS: string[] = [
  'function(doc){ emit([doc.type, doc.n], doc.n); }',
  'function(doc) { if (doc.type == "t1") emit(doc.n, null); else if (doc.type === "t2") emit(doc.name); }',
  '  // a comment first\n function (doc) { /* inline */ emit(doc._id, doc._rev) } ;; ',
  'function(doc) { if (doc.tags) doc.tags.forEach(function(t, i, all) { emit([t, i], all.length); }); }',
  'function(doc) { for (var i = 0; i < (doc.tags ? doc.tags.length : 0); i++) emit(doc.tags[i], i * 2); }',
  'function(doc) { emit(doc.nested.a, doc.nested["b"]); }',
  'function(doc) { var k = doc.type + "-" + doc.n; emit(k, {n: doc.n, t: doc.type, len: k.length, 1: "one"}); }',
  'function(doc) { switch (doc.type) { case "t1": emit(1); break; case "t2": emit(2); default: emit(3); case "t4": emit(4); } }',
  'doc => { for (const k in doc) emit(k, typeof doc[k]); }',
  'function(doc) { for (var t of doc.tags) emit(t); }',
  'function(doc) { emit(doc.missing); }',
  'function(doc) { emit([doc.missing, 1], 1); }',
  'function(doc) { emit({a: doc.missing, b: [doc.n, {c: doc.missing}]}, 1); }',
  'function(doc) { if (doc.n > 10 && doc.n <= 50 || doc.type === "x") emit(-doc.n, +doc.type); }',
  'function(doc) { emit(doc.constructor, 1); }',
  'function(doc) { emit(doc.name.length, doc.name[0]); }',
  'function(doc) { let x = 0; while (x < 3) { x++; if (x == 2) continue; emit(x, doc.n % 3); } do { x--; } while (x > 0); emit(x); }',
  'function(doc) { try { emit(doc.nested.a.b); } catch (e) { emit("caught", String(e)); } finally { emit("finally"); } }',
  'function(doc) { if (doc.n % 7 === 0) throw "seven"; emit(doc.n); }',
  'function(doc) { emit(`${doc.type}:${doc.n}`, `x${doc.nested}`); }',
  'function(doc) { var s = ""; for (var k in doc.nested) s += k + "=" + doc.nested[k] + ";"; emit(s); }',
  'function(doc) { emit(doc.n == "5", [doc.n === 5, doc.tags == null, doc.tags != undefined, doc.nested == doc.nested]); }',
  'function(doc) { emit(doc.n / 0, doc.n * 1e308); emit(doc.n - "3", doc.n + true); }',
  'function(doc) { var a = doc.tags, b = a && a[1], c = a ? a.length : -1; emit([b, c, a ?? "none"], void 0); }',
  'function(doc) { let n = doc.n; n += 1; n -= 2; n *= 3; n /= 4; n %= 5; var m = n++; --n; emit([n, m]); }',
  'function(doc) { if (typeof doc.n === "number" && typeof doc.tags !== "undefined") emit(1, typeof doc.nested); }',
  'function(doc) { emit(doc.tags[doc.n], doc.name[doc.n]); }',
  'function(doc) { emit(doc.__proto__, doc.length); }',
  'function(doc) { emit(doc.name < doc.type, doc.name >= "item"); }',
  'function(doc) { emit(doc.toString); }',
  'function(doc) { emit(doc.n.toFixed); }',
  'function(doc) { emit(doc.name.substring); }',
  'function(doc) { if (doc._id !== "d3") return; var s = "x"; for (var i = 0; i < 22; i++) s = s + s; emit(s.length); }',
  'function(doc) { var k = [doc.n]; for (var i = 0; i < 30; i++) k = [k, k]; emit(1, k.length); }',
  'function(doc) { if (doc._id !== "d5") return; for (var i = 0; i < 1500000; i++) {} emit(i); }',
  'function(doc) { emit(x); let x = 1; }',
  'function(doc) { { let y = doc.n; emit(y); } var y2; emit(y2); }',
  'function(doc) { emit(doc.n, Infinity); emit(NaN, undefined); }',
  'function(doc) { (doc.tags || []).forEach(t => emit(t)); }',
  'function(doc, extra) { emit(extra === undefined, 1); }',
  'function(doc) { for (const ch of doc.name) emit(ch); }',
  'function(doc) { if (doc.n > 1) return; emit("small"); }',
  'function(doc) { for (var i = 0; i < 5; i++) { if (i == 3) break; emit(i); } }',
  'function(doc) { emit(doc.tags.forEach); }',
  // Named function expressions whose names are never used (found by fast-map-fuzz.test.ts).
  'function map(doc) { var x = 1; (doc.tags || []).forEach(function each(t) { var each; emit(t, [x, each]); }); }',
  'function doc(doc) { (doc.tags || []).forEach(function tags(tags) { emit(tags, typeof doc); }); }',
];

/** Functions the interpreter leaves to QuickJS (calls, `this`, globals, writes to the document...). */
const SANDBOX_MAPS: string[] = [
  'function(doc) { log(doc._id); emit(1); }',
  'function(doc) { emit(doc._id, sum([1, 2])); }',
  'function(doc) { emit(JSON.stringify(doc)); }',
  'function(doc) { emit(doc.type.toUpperCase()); }',
  'function(doc) { emit(this); }',
  'function(doc) { doc.x = 1; emit(doc.x); }',
  'function(doc) { doc.n++; }',
  'var x = 1; (function(doc) { emit(x); })',
  'function(doc) { emit(doc.constructor.constructor("return process")()); }',
  'function(doc) { if (!isNaN(doc.n)) emit(1); }',
  'function(doc) { if (Array.isArray(doc.tags)) emit(0); }',
  'function(doc) { emit(arguments.length); }',
  'function(doc) { undeclared = 1; emit(1); }',
  'function(doc) { var f = function() {}; emit(1); }',
  'function(doc) { function helper() {} emit(1); }',
  'function(doc) { emit(require("views/lib/x")); }',
  'function(doc) { emit(new Date()); }',
  'function(doc) { emit(/re/); }',
  'function(doc) { emit(doc?.type); }',
  'function(doc) { emit(...doc.tags); }',
  'function(doc) { emit({["k"]: 1}); }',
  'function(doc) { emit({__proto__: null}); }',
  'function(doc) { const c = 1; c = 2; }',
  'function(doc) { label: for (;;) break label; }',
  'function(doc) { emit("a" in doc); }',
  'function(doc) { delete doc.a; }',
  'function({type}) { emit(type); }',
  'async function(doc) { emit(1); }',
  // Inside a named function expression its name is the function (QuickJS: "function"; the
  // interpreter once read the document, NaN or emit instead).
  'function(doc) { (doc.tags || []).forEach(function doc() { emit(typeof doc, 1); }); }',
  'function NaN(doc) { emit(typeof NaN, 1); }',
  'function emit(doc) { emit(doc.a, 1); }',
  'not a function',
  '',
];

/** Documents as JSON texts, many with members missing or of unexpected types. */
function documents(count: number, seed: number): string[] {
  const rnd = seededRandom(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)]!;
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    const doc: Record<string, unknown> = { _id: `d${i}`, _rev: `1-${(i * 7919).toString(16).padStart(32, '0')}` };
    if (rnd() < 0.9) doc['type'] = pick(['t1', 't2', 't3', 't4', 'x', '', 5, null, true, ['t1'], { t: 1 }]);
    if (rnd() < 0.9) doc['n'] = pick([i, -i, i / 3, 0, 5, '5', '12', 1e21, 2 ** 53 + 2, -1e-7, null, 'abc', [1], {}]);
    if (rnd() < 0.8) doc['name'] = pick([`item ${i}`, 'é', 'Ωmega', '日本語', '😀 emoji', 'a\u0301', '', 'item', 'constructor']);
    if (rnd() < 0.7) doc['tags'] = pick([['a', 'b'], [], ['x', 1, null, true], 'not-an-array', [['nested'], { o: 1 }], ['a', 'a', 'b']]);
    if (rnd() < 0.5) doc['nested'] = pick([{ a: 1, b: 'two' }, { a: { b: [1, 2] } }, {}, null, 'str', [3, 4], { a: undefined, b: null }]);
    if (rnd() < 0.05) doc['length'] = 3;
    let text = JSON.stringify(doc);
    // Members JSON.stringify cannot write: a `__proto__` member, and numbers it would rewrite.
    if (rnd() < 0.05) text = text.replace(/^\{/, '{"__proto__":{"polluted":true},');
    if (rnd() < 0.03) text = text.replace(/^\{/, '{"big":1e400,"negzero":-0,"exp":1E2,');
    texts.push(text);
  }
  return texts;
}

const servers = await MapComparison.forFile();

describe('map interpreter', () => {
  test('takes the functions of its subset', () => {
    for (const source of FAST_MAPS) assert.ok(compileFastMap(source), `should compile: ${source}`);
  });

  test('leaves everything else to the sandbox', () => {
    for (const source of SANDBOX_MAPS) assert.equal(compileFastMap(source), undefined, `should not compile: ${source}`);
  });

  test("every name on the sandbox's prototypes is either on V8's or listed as the sandbox's own", async () => {
    const v8 = new Set([Object, Array, String, Number, Boolean].flatMap((c) => Object.getOwnPropertyNames(c.prototype)));
    const sandbox = prototypeNamesOf(await newQuickJS(await compileQuickJS()));
    assert.ok(sandbox.includes('hasOwnProperty') && sandbox.includes('toFixed'), 'the names were read');
    assert.deepEqual(sandbox.filter((name) => !v8.has(name) && !SANDBOX_ONLY_PROTOTYPE_NAMES.includes(name)), []);
  });

  test('never reads an inherited name, and falls back on a TypeError', () => {
    const read = compileFastMap('function(doc) { emit(doc.a, doc.b.c); }')!;
    assert.deepEqual(read.map({ a: 1, b: { c: 2 } }, 20), [[1, 2]]);
    assert.equal(read.map({ a: 1 }, 20), undefined); // doc.b is undefined
    assert.equal(read.map({ a: 1, b: 'str' }, 20)?.[0]?.[1], undefined); // 'str'.c is undefined
    const inherited = compileFastMap('function(doc) { emit(doc.hasOwnProperty); }')!;
    assert.equal(inherited.map({}, 2), undefined);
    assert.deepEqual(inherited.map({ hasOwnProperty: 'own' }, 30), [['own', undefined]]);
    const extra = compileFastMap('function(doc) { emit(doc.sandboxOnly); }', new Set(['sandboxOnly']))!;
    assert.equal(extra.map({}, 2), undefined);
  });

  test('each function alone: the same rows and logs as QuickJS', async () => {
    const docs = documents(400, 1);
    for (const map of FAST_MAPS) {
      servers.clearLogs();
      const expected = await servers.map(servers.sandboxed, [map], docs);
      const actual = await servers.map(servers.interpreted, [map], docs);
      assert.deepEqual(actual, expected, map);
      const logs = servers.sortedLogs();
      assert.deepEqual(logs.interpreted, logs.sandboxed, map);
    }
  });

  test('design documents of several functions (frozen documents, shared rows), fast or mixed', async () => {
    const docs = documents(300, 2);
    const rnd = seededRandom(3);
    for (let round = 0; round < 12; round++) {
      const maps = Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => FAST_MAPS[Math.floor(rnd() * FAST_MAPS.length)]!);
      if (round % 3 === 2) maps.push('function(doc) { log("sandbox " + doc._id); emit(doc._id); }');
      servers.clearLogs();
      assert.deepEqual(await servers.map(servers.interpreted, maps, docs), await servers.map(servers.sandboxed, maps, docs), maps.join('\n'));
      const logs = servers.sortedLogs();
      assert.deepEqual(logs.interpreted, logs.sandboxed);
    }
  });

  test('after a JavaScript reduce has run, maps see what it changed', async () => {
    const server = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 * 1024 * 1024, workers: 1, log: () => undefined, mapInterpreter: () => true });
    try {
      const map = 'function(doc) { emit(doc.polluted === undefined ? "own" : "inherited", 1); }';
      assert.ok(compileFastMap(map));
      const program = await server.views({ id: '_design/d', views: { v: { map, reduce: 'function(k, v) { Object.prototype.polluted = 1; return 1; }' } } });
      try {
        assert.deepEqual(await program.mapJson(['{"a":1}']), [[[['own', 1]]]]);
        await program.reduce('v', null, [1], true);
        assert.deepEqual(await program.mapJson(['{"a":1}']), [[[['inherited', 1]]]]);
      } finally {
        program.dispose();
      }
    } finally {
      await server.close();
    }
  });

  test('a fatal error still fails the batch', async () => {
    const map = 'function(doc) { if (doc._id === "d7") throw "fatal_error"; emit(1); }';
    assert.ok(compileFastMap(map));
    await assert.rejects(servers.map(servers.interpreted, [map], documents(20, 4)), /fatal_error/);
  });
});

describe('a fast program', () => {
  test('sends only the documents the interpreter gives up on to the sandbox, in order', async () => {
    const { FastMapProgram } = await import('../../src/js/fast-program.js');
    const spec = { requireRoot: {}, functions: [{ source: 'function(doc) { emit(doc.a.b, 1); }', require: true }, { source: 'function(k, v) { return 1; }', require: false }], maps: [0] };
    const program = FastMapProgram.from(spec, new Set())!;
    assert.ok(program);
    const sent: string[][] = [];
    const docs = ['{"_id":"x","a":{"b":1}}', '{"_id":"y"}', '{"_id":"z","a":{"b":3}}', '{"_id":"w","a":null}'];
    const reply = program.mapBatch(docs, (fallbacks) => {
      sent.push([...fallbacks]);
      return { logs: ['sandbox log'], results: [[[['from sandbox', 1]]], [[]]] };
    });
    assert.deepEqual(sent, [['{"_id":"y"}', '{"_id":"w","a":null}']]);
    assert.deepEqual(reply, { logs: ['sandbox log'], results: [[[[1, 1]]], [[['from sandbox', 1]]], [[[3, 1]]], [[]]] });
  });

  test('leaves large documents and large output to the sandbox', async () => {
    const { FastMapProgram } = await import('../../src/js/fast-program.js');
    const spec = { requireRoot: {}, functions: [{ source: 'function(doc) { emit(doc._id, doc.s); }', require: true }], maps: [0] };
    const program = FastMapProgram.from(spec, new Set())!;
    const large = JSON.stringify({ _id: 'large', s: 'x'.repeat(1.5e6) });
    const small = JSON.stringify({ _id: 'small', s: 'y' });
    const sent: string[][] = [];
    program.mapBatch([small, large], (fallbacks) => {
      sent.push([...fallbacks]);
      return { logs: [], results: [[[]]] };
    });
    assert.deepEqual(sent, [[large]]);
    // Each of these emits ~5.2 MB (strings count six bytes per character): past 64 MB, the rest go to the sandbox.
    const medium = Array.from({ length: 16 }, (_, i) => JSON.stringify({ _id: `m${i}`, s: 'z'.repeat(0.9e6) }));
    let toSandbox = 0;
    program.mapBatch(medium, (fallbacks) => {
      toSandbox = fallbacks.length;
      return { logs: [], results: fallbacks.map(() => [[]]) };
    });
    assert.ok(toSandbox > 0 && toSandbox < 16, `${toSandbox} of 16 documents went to the sandbox`);
  });

  test('is not made when a map is outside the subset, or a function runs code as it compiles', async () => {
    const { FastMapProgram } = await import('../../src/js/fast-program.js');
    const fast = { source: 'function(doc) { emit(doc._id, null); }', require: true };
    assert.ok(FastMapProgram.from({ requireRoot: {}, functions: [fast], maps: [0] }, new Set()));
    assert.equal(FastMapProgram.from({ requireRoot: {}, functions: [fast, { source: 'function(doc) { log(1); }', require: true }], maps: [0, 1] }, new Set()), undefined);
    // A reduce given as statements runs them when it is compiled (and could replace emit).
    assert.equal(FastMapProgram.from({ requireRoot: {}, functions: [fast, { source: 'emit = null; (function(k, v) { return 1; })', require: false }], maps: [0] }, new Set()), undefined);
  });
});
