/**
 * The query server's CouchDB environment, run in real QuickJS workers: emit/log/sum/isArray/toJSON,
 * require() of views.lib, function source forms, compilation errors, map errors, reduce and
 * rereduce, document order across workers, determinism.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CouchError } from '../../src/errors.js';
import { QueryServer, type DesignDocCode, type ViewProgram } from '../../src/js/query-server.js';

const logs: string[] = [];
let qs: QueryServer;

before(async () => {
  qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 * 1024 * 1024, workers: 2, log: (m) => logs.push(m) });
});
after(async () => {
  await qs.close();
});

function ddoc(views: DesignDocCode['views'], lib?: unknown): DesignDocCode {
  return { id: '_design/test', views, lib };
}

async function mapOne(map: string, docs: object[], lib?: unknown): Promise<[unknown, unknown][][]> {
  const program = await qs.views(ddoc({ v: { map } }, lib));
  try {
    return (await program.map(docs)).map((perView) => perView[0]!);
  } finally {
    program.dispose();
  }
}

async function compileError(views: DesignDocCode['views']): Promise<CouchError> {
  try {
    const p = await qs.views(ddoc(views));
    p.dispose();
  } catch (err) {
    assert.ok(err instanceof CouchError);
    return err;
  }
  assert.fail('expected a compilation error');
}

describe('environment', () => {
  test('emit, multiple emits, log, sum, isArray, toJSON, JSON', async () => {
    logs.length = 0;
    const rows = await mapOne(`function(doc) {
      emit(doc._id, null);
      emit([doc.n, 'two'], {sum: sum(doc.values), arr: isArray(doc.values), notArr: isArray({length: 1}), json: toJSON({a: [1]})});
      emit(JSON.stringify(doc.values), JSON.parse('{"x":1}'));
      log('mapped ' + doc._id);
      log({id: doc._id});
    }`, [{ _id: 'a', n: 1, values: [1, 2, 3.5] }]);
    assert.deepEqual(rows, [[
      ['a', null],
      [[1, 'two'], { sum: 6.5, arr: true, notArr: false, json: '{"a":[1]}' }],
      ['[1,2,3.5]', { x: 1 }],
    ]]);
    assert.deepEqual(logs, ['mapped a', '{"id":"a"}']);
  });

  test('undefined is emitted as JSON sends it: null as a key, value or array element; left out as a member', async () => {
    const rows = await mapOne('function(doc) { emit(doc._id); emit(doc._id, doc.missing) }', [{ _id: 'a' }]);
    assert.deepEqual(rows, [[['a', null], ['a', null]]]);
    assert.deepEqual(await mapOne('function(doc) { emit(doc._id, 1); emit(doc.missing, null) }', [{ _id: 'a' }]), [[['a', 1], [null, null]]]);
    assert.deepEqual(await mapOne('function(doc) { emit([doc._id, doc.missing], [doc.missing]) }', [{ _id: 'a' }]), [[[['a', null], [null]]]]);
    assert.deepEqual(await mapOne('function(doc) { emit({a: doc.missing}, null) }', [{ _id: 'a' }]), [[[{}, null]]]);
  });

  test('sum iterates like CouchDB (for..in over the values)', async () => {
    const rows = await mapOne('function(doc) { emit(sum([1, 2, 3]), sum({a: 1, b: 2})) }', [{ _id: 'a' }]);
    assert.deepEqual(rows, [[[6, 3]]]);
  });

  test('the documents are the JSON given, including unicode', async () => {
    const doc = { _id: 'ü-😀', s: 'line\nbreak "quoted" \u2028', nested: { a: [1, { b: null }], t: true }, big: 1e300, neg: -0.5 };
    const rows = await mapOne('function(doc) { emit(doc._id, doc) }', [doc]);
    assert.deepEqual(rows, [[[doc._id, doc]]]);
  });

  test('with several views, the document is frozen: one view cannot change what the next one sees', async () => {
    const program = await qs.views(ddoc({
      a: { map: 'function(doc) { doc.tags.push("x"); doc.added = 1; emit(doc.tags.length, doc.added) }' },
      b: { map: 'function(doc) { emit(doc.tags.length, doc.added === undefined) }' },
    }));
    logs.length = 0;
    const results = await program.map([{ _id: 'd', tags: ['t'] }]);
    // a: push on a frozen array throws (logged, no rows); b sees the original document
    assert.deepEqual(results, [[[], [[1, true]]]]);
    assert.match(logs[0]!, /function raised exception TypeError.* with doc._id d/);
    program.dispose();
  });
});

describe('function source forms', () => {
  const forms: [string, string][] = [
    ['plain', 'function(doc) { emit(doc._id, 1) }'],
    ['whitespace around', '\n\t  function (doc) { emit(doc._id, 1) }  \n\n'],
    ['comments before and after', '// by id\n/* block */ function(doc) {\n  // inside\n  emit(doc._id, 1)\n} // trailing'],
    ['trailing semicolon', 'function(doc) { emit(doc._id, 1) };\n'],
    ['named function', 'function byId(doc) { emit(doc._id, 1) }'],
    ['parenthesised', '(function(doc) { emit(doc._id, 1) })'],
    ['arrow function', '(doc) => { emit(doc._id, 1) }'],
    ['statements then a function expression', 'var one = 1;\n(function(doc) { emit(doc._id, one) })'],
    ['windows line endings', 'function(doc) {\r\n  emit(doc._id, 1);\r\n}\r\n'],
  ];
  for (const [name, source] of forms) {
    test(name, async () => {
      assert.deepEqual(await mapOne(source, [{ _id: 'x' }]), [[['x', 1]]]);
    });
  }
});

describe('compilation errors', () => {
  test('a syntax error is a 400 compilation_error naming the source', async () => {
    const err = await compileError({ v: { map: 'function(doc) { emit(doc._id, 1) ' } });
    assert.equal(err.status, 400);
    assert.equal(err.error, 'compilation_error');
    assert.match(err.reason, /SyntaxError/);
    assert.ok(err.reason.includes('function(doc) { emit(doc._id, 1) '));
  });

  for (const source of ['42', '"a string"', '{}', 'null', 'var x = 1;']) {
    test(`a non-function (${source}) is a compilation_error`, async () => {
      const err = await compileError({ v: { map: source } });
      assert.equal(err.status, 400);
      assert.equal(err.error, 'compilation_error');
      assert.equal(err.reason, `Expression does not eval to a function. (${source})`);
    });
  }

  test('a map that is not a string is a compilation error; an empty map is not_found (util.js compileFunction)', async () => {
    const err = await compileError({ v: { map: 42 as unknown as string } });
    assert.equal(err.error, 'compilation_error');
    const empty = await compileError({ v: { map: '' } });
    assert.deepEqual([empty.status, empty.error, empty.reason], [404, 'not_found', 'missing function']);
  });

  test('code that throws while being evaluated is a compilation_error', async () => {
    const err = await compileError({ v: { map: '(function() { throw new Error("boom") })()' } });
    assert.equal(err.error, 'compilation_error');
    assert.match(err.reason, /boom/);
  });

  test('a broken JavaScript reduce is a compilation_error; builtin reduces are not compiled', async () => {
    const err = await compileError({ v: { map: 'function(doc) { emit(1, 1) }', reduce: 'function(k, v) { return' } });
    assert.equal(err.error, 'compilation_error');
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { emit(1, 1) }', reduce: '_sum' }, w: { map: 'function(doc) {}', reduce: ' _count ' } }));
    assert.deepEqual(p.names, ['v', 'w']);
    await assert.rejects(p.reduce('v', null, [1], true), (e: unknown) => e instanceof CouchError && e.status === 404);
    p.dispose();
  });

  test('views.lib is not a view; names keep the design document order', async () => {
    const p = await qs.views({ id: '_design/x', views: {
      z: { map: 'function(doc) { emit("z", 1) }' },
      lib: { m: 'exports.x = 1' } as unknown as { map: string },
      a: { map: 'function(doc) { emit("a", require("views/lib/m").x) }' },
    } });
    assert.deepEqual(p.names, ['z', 'a']);
    assert.deepEqual(await p.map([{ _id: 'd' }]), [[[['z', 1]], [['a', 1]]]]);
    p.dispose();
  });
});

describe('map errors', () => {
  test('a map that throws for some documents skips them and logs; the others produce rows', async () => {
    logs.length = 0;
    const rows = await mapOne(`function(doc) {
      if (doc.bad === 1) throw new Error('bad doc');
      if (doc.bad === 2) throw {forbidden: 'nope'};
      if (doc.bad === 3) doc.missing.field;
      emit(doc._id, 1);
    }`, [{ _id: 'a' }, { _id: 'b', bad: 1 }, { _id: 'c' }, { _id: 'd', bad: 2 }, { _id: 'e', bad: 3 }, { _id: 'f' }]);
    assert.deepEqual(rows, [[['a', 1]], [], [['c', 1]], [], [], [['f', 1]]]);
    assert.equal(logs.length, 3);
    assert.match(logs[0]!, /^function raised exception Error: bad doc with doc._id b$/);
    assert.match(logs[1]!, /^function raised exception \{"forbidden":"nope"\} with doc._id d$/);
    assert.match(logs[2]!, /^function raised exception TypeError: .* with doc._id e$/);
  });

  test('rows emitted before the throw are dropped; other views of the document still emit', async () => {
    const p = await qs.views(ddoc({
      a: { map: 'function(doc) { emit(1, 1); throw "oops" }' },
      b: { map: 'function(doc) { emit(2, 2) }' },
    }));
    assert.deepEqual(await p.map([{ _id: 'x' }]), [[[], [[2, 2]]]]);
    p.dispose();
  });

  test("throw 'fatal_error' aborts the batch with map_runtime_error", async () => {
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { if (doc.f) throw "fatal_error"; emit(1, 1) }' } }));
    await assert.rejects(p.map([{ _id: 'a' }, { _id: 'b', f: true }]), (e: unknown) =>
      e instanceof CouchError && e.error === 'map_runtime_error' && e.reason === "function raised 'fatal_error'");
    assert.deepEqual(await p.map([{ _id: 'a' }]), [[[[1, 1]]]]);
    p.dispose();
  });

  test('a value that cannot be serialised is that function failing for that document', async () => {
    logs.length = 0;
    const rows = await mapOne('function(doc) { var o = {}; if (doc.cyclic) o.self = o; emit(doc._id, o) }', [{ _id: 'a' }, { _id: 'b', cyclic: true }, { _id: 'c' }]);
    assert.deepEqual(rows, [[['a', {}]], [], [['c', {}]]]);
    assert.match(logs[0]!, /with doc._id b/);
  });

  test('deep recursion is a RangeError inside the sandbox, not a crash', async () => {
    logs.length = 0;
    const rows = await mapOne('function(doc) { function f(n) { return f(n + 1) + 1 } if (doc.deep) f(0); emit(doc._id, 1) }', [{ _id: 'a', deep: true }, { _id: 'b' }]);
    assert.deepEqual(rows, [[], [['b', 1]]]);
    assert.match(logs[0]!, /with doc._id a/);
  });
});

describe('require()', () => {
  const lib = {
    util: 'exports.double = function(x) { return 2 * x }; exports.loads = (exports.loads || 0) + 1;',
    counter: 'var n = 0; exports.next = function() { return ++n }; globalThis.counterLoads = (globalThis.counterLoads || 0) + 1;',
    nested: {
      a: 'var b = require("./b"); module.exports = { value: "a+" + b.value, up: require("../util").double(21) };',
      b: 'exports.value = "b"',
      deep: { c: 'module.exports = require("../a").value + "+" + require("views/lib/nested/b").value;' },
    },
    config: 'module.exports = { answer: 42 }',
    notCode: { x: 1 },
  };

  test('module.exports, exports, nested, relative (./ ../) and absolute paths', async () => {
    const rows = await mapOne(`function(doc) {
      var util = require('views/lib/util');
      emit('double', util.double(doc.n));
      emit('config', require('views/lib/config').answer);
      var a = require('views/lib/nested/a');
      emit('a', a.value);
      emit('up', a.up);
      emit('deep', require('views/lib/nested/deep/c'));
    }`, [{ _id: 'x', n: 5 }], lib);
    assert.deepEqual(rows, [[['double', 10], ['config', 42], ['a', 'a+b'], ['up', 42], ['deep', 'a+b+b']]]);
  });

  test('modules are evaluated once per program and cached across documents and views', async () => {
    const p = await qs.views(ddoc({
      a: { map: 'function(doc) { emit(require("views/lib/counter").next(), globalThis.counterLoads) }' },
      b: { map: 'function(doc) { emit(require("views/lib/counter").next(), require("views/lib/counter") === require("views/lib/counter")) }' },
    }, lib));
    const results = await p.map([{ _id: '1' }]);
    assert.deepEqual(results, [[[[1, 1]], [[2, true]]]]);
    // split over both workers: each loaded the module once (its own runtime)
    const again = await p.map([{ _id: '2' }, { _id: '3' }, { _id: '4' }, { _id: '5' }]);
    for (const perView of again) {
      assert.equal(perView[0]![0]![1], 1, 'the module was loaded once in its worker');
      assert.equal(perView[1]![0]![1], true);
    }
    p.dispose();
  });

  test('require errors: missing module, non-string module, module that throws', async () => {
    logs.length = 0;
    const rows = await mapOne(`function(doc) {
      try { require('views/lib/missing') } catch (e) { emit(e[1], e[0]) }
      try { require('views/lib/notCode') } catch (e) { emit(e[1], e[0]) }
      try { require('views/lib/broken') } catch (e) { emit(e[1], /Module require\\('views\\/lib\\/broken'\\) raised error Error: broken/.test(e[2])) }
      try { require('fs') } catch (e) { emit(e[1], e[0]) }
    }`, [{ _id: 'x' }], { ...lib, broken: 'throw new Error("broken")' });
    assert.deepEqual(rows, [[
      ['invalid_require_path', 'error'],
      ['invalid_require_path', 'error'],
      ['compilation_error', true],
      ['invalid_require_path', 'error'],
    ]]);
  });

  test('lib given inside views (views.lib) is used when lib is not given separately', async () => {
    const p = await qs.views({ id: '_design/x', views: {
      lib: { m: 'exports.x = "from views.lib"' } as unknown as { map: string },
      v: { map: 'function(doc) { emit(require("views/lib/m").x, null) }' },
    } });
    assert.deepEqual(await p.map([{ _id: 'd' }]), [[[['from views.lib', null]]]]);
    p.dispose();
  });

  test('reduce functions have no require (as in CouchDB)', async () => {
    logs.length = 0;
    const p = await qs.views(ddoc({ v: { map: 'function(doc) {}', reduce: 'function(k, v) { return typeof require }' } }, lib));
    assert.equal(await p.reduce('v', [[1, 'a']], [1], false), 'undefined');
    p.dispose();
  });
});

describe('reduce', () => {
  let p: ViewProgram;
  before(async () => {
    p = await qs.views(ddoc({
      sum: { map: 'function(doc) { emit(doc._id, doc.n) }', reduce: 'function(keys, values, rereduce) { return sum(values) }' },
      shape: { map: 'function(doc) {}', reduce: 'function(keys, values, rereduce) { return {keys: keys, values: values, rereduce: rereduce} }' },
      args: { map: 'function(doc) {}', reduce: 'function(k, v, r) { return arguments[0] }' },
      stats: { map: 'function(doc) {}', reduce: `function(keys, values, rereduce) {
        if (rereduce) return values.reduce(function(a, b) { return {n: a.n + b.n, max: Math.max(a.max, b.max)} });
        return {n: values.length, max: Math.max.apply(null, values)};
      }` },
      throws: { map: 'function(doc) {}', reduce: 'function(k, v, r) { throw new Error("no") }' },
      undef: { map: 'function(doc) {}', reduce: 'function(k, v, r) { }' },
    }));
  });
  after(() => p.dispose());

  test('reduce and rereduce', async () => {
    assert.equal(await p.reduce('sum', [['a', 'a'], ['b', 'b']], [1, 2], false), 3);
    assert.equal(await p.reduce('sum', null, [3, 4, 5], true), 12);
  });

  test('reduce sees keys as [[key, id], ...] and null on rereduce', async () => {
    assert.deepEqual(await p.reduce('shape', [[['k', 1], 'id1'], [null, 'id2']], [{ v: 1 }, 2], false),
      { keys: [[['k', 1], 'id1'], [null, 'id2']], values: [{ v: 1 }, 2], rereduce: false });
    assert.deepEqual(await p.reduce('shape', null, [1, 2], true), { keys: null, values: [1, 2], rereduce: true });
    assert.deepEqual(await p.reduce('args', [[1, 'x']], [1], false), [[1, 'x']]);
  });

  test('reduce then rereduce of partial results', async () => {
    const a = await p.reduce('stats', [[1, 'a'], [2, 'b']], [4, 9], false);
    const b = await p.reduce('stats', [[3, 'c']], [7], false);
    assert.deepEqual(await p.reduce('stats', null, [a, b], true), { n: 3, max: 9 });
  });

  test('reduceMany answers in call order', async () => {
    const calls = Array.from({ length: 50 }, (_, i) => ({ keys: [[i, `id${i}`]] as [unknown, string][], values: [i, i], rereduce: false }));
    assert.deepEqual(await p.reduceMany('sum', calls), calls.map((_, i) => 2 * i));
  });

  test('a reduce that throws logs and gives null; undefined gives null', async () => {
    logs.length = 0;
    assert.equal(await p.reduce('throws', [[1, 'a']], [1], false), null);
    assert.match(logs[0]!, /function raised exception Error: no/);
    assert.equal(await p.reduce('undef', [[1, 'a']], [1], false), null);
  });
});

describe('batches across workers', () => {
  const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: `d${i}`, i, tags: i % 7 === 0 ? ['seven'] : [] }));
  const map = 'function(doc) { emit(doc.i, doc._id); doc.tags.forEach(function(t) { emit([t, doc.i], null) }) }';

  test('results come back in document order, whatever the batch size and worker count', async () => {
    const expected = docs.map((d) => [[[d.i, d._id] as [unknown, unknown], ...d.tags.map((t) => [[t, d.i], null] as [unknown, unknown])]]);
    for (const [workers, maxBatchDocs] of [[2, 7], [2, 250], [1, 100], [3, 33]] as const) {
      const server = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 << 20, workers, log: () => {}, maxBatchDocs });
      const p = await server.views(ddoc({ v: { map } }));
      assert.deepEqual(await p.map(docs), expected, `workers=${workers} maxBatchDocs=${maxBatchDocs}`);
      // concurrent map calls do not mix
      const halves = await Promise.all([p.map(docs.slice(0, 1000)), p.map(docs.slice(1000))]);
      assert.deepEqual(halves[0]!.concat(halves[1]!), expected);
      p.dispose();
      await server.close();
    }
  });

  test('output is deterministic: the same documents give the same rows, as objects or JSON text', async () => {
    const p = await qs.views(ddoc({ v: { map }, w: { map: 'function(doc) { emit(doc.tags, [doc.i, {x: doc._id}]) }' } }));
    const first = await p.map(docs);
    const second = await p.map(docs);
    const third = await p.mapJson(docs.map((d) => JSON.stringify(d)));
    assert.deepEqual(second, first);
    assert.deepEqual(third, first);
    assert.equal(JSON.stringify(second), JSON.stringify(first));
    p.dispose();
  });

  test('views with the same map source share one run', async () => {
    const p = await qs.views(ddoc({
      a: { map: 'function(doc) { emit(doc.i, 1) }', reduce: '_sum' },
      b: { map: 'function(doc) { emit(doc.i, 1) }', reduce: '_count' },
      c: { map: 'function(doc) { emit(doc.i, 2) }' },
    }));
    assert.deepEqual(await p.map([{ i: 1 }]), [[[[1, 1]], [[1, 1]], [[1, 2]]]]);
    p.dispose();
  });

  test('an empty batch, and a design document without views', async () => {
    const p = await qs.views(ddoc({}));
    assert.deepEqual(p.names, []);
    assert.deepEqual(await p.map([{ _id: 'a' }]), [[]]);
    assert.deepEqual(await p.map([]), []);
    p.dispose();
  });

  test('a disposed program refuses work', async () => {
    const p = await qs.views(ddoc({ v: { map: 'function(doc) { emit(1, 1) }' } }));
    p.dispose();
    await assert.rejects(p.map([{ _id: 'a' }]), CouchError);
  });
});

// A worker creates its QuickJS only when something needs it: programs of interpretable maps
// start without one, so these run on fresh servers, where nothing has started it yet.
describe('the sandbox started on demand', () => {
  const fresh = (workers: number, maxBatchDocs = 100): Promise<QueryServer> =>
    QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 << 20, workers, log: (m) => logs.push(m), maxBatchDocs, mapInterpreter: () => true });
  const map = 'function(doc) { emit(doc.a.b, doc._id) }';
  const good = (i: number) => ({ _id: `g${i}`, a: { b: i } });

  test('documents the interpreter gives up on wait for the sandbox, and batches behind them keep their order', async () => {
    const server = await fresh(1, 10);
    try {
      const p = await server.views(ddoc({ v: { map } }));
      // Interpreted only: no sandbox needed yet.
      assert.deepEqual(await p.map([good(1)]), [[[[1, 'g1']]]]);
      logs.length = 0;
      // A missing member is a TypeError (QuickJS gives the log line); 100 documents in batches
      // of 10, sent at once, so that later batches arrive while the sandbox is starting.
      const docs = Array.from({ length: 100 }, (_, i) => (i % 15 === 7 ? { _id: `x${i}` } : good(i)));
      const [all, again] = await Promise.all([p.map(docs), p.map(docs.slice(50))]);
      assert.deepEqual(all, docs.map((d) => [('a' in d ? [[d.a.b, d._id]] : [])]));
      assert.deepEqual(again, all.slice(50));
      const skipped = docs.filter((d) => !('a' in d)).map((d) => d._id);
      assert.equal(logs.length, skipped.length + skipped.filter((id) => Number(id.slice(1)) >= 50).length);
      assert.match(logs[0]!, /^function raised exception TypeError: .* with doc._id x7$/);
      p.dispose();
    } finally {
      await server.close();
    }
  });

  test('a program compiled without the sandbox runs there when the interpreter is turned off', async () => {
    let interpret = true;
    const server = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 << 20, workers: 2, log: () => {}, mapInterpreter: () => interpret });
    try {
      const p = await server.views(ddoc({ v: { map: 'function(doc) { if (doc.n > 1) emit(doc.n, null) }' } }));
      const docs = Array.from({ length: 50 }, (_, i) => ({ _id: `d${i}`, n: i }));
      const interpreted = await p.map(docs);
      interpret = false;
      assert.deepEqual(await p.map(docs), interpreted);
      assert.deepEqual(interpreted[5], [[[5, null]]]);
      p.dispose();
    } finally {
      await server.close();
    }
  });

  test('a JavaScript reduce, and design functions, start it as they need it', async () => {
    const server = await fresh(2);
    try {
      const p = await server.views(ddoc({ v: { map: 'function(doc) { emit(doc.n, doc.n) }', reduce: 'function(keys, values) { return values.length }' } }));
      assert.deepEqual(await p.map([{ n: 1 }, { n: 2 }]), [[[[1, 1]]], [[[2, 2]]]]);
      assert.equal(await p.reduce('v', [[1, 'a'], [2, 'b']], [1, 2], false), 2);
      p.dispose();
      const validate = await server.designFunction({ language: 'javascript' }, 'function(doc) { if (!doc.ok) throw({forbidden: "not ok"}) }');
      const answers = await validate.validate([JSON.stringify([{ ok: true }, null]), JSON.stringify([{}, null])], JSON.stringify([{ name: null, roles: [] }, {}]));
      assert.deepEqual(answers, [null, { error: 'forbidden', reason: 'not ok' }]);
      validate.dispose();
    } finally {
      await server.close();
    }
  });
});
