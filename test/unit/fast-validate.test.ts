/**
 * validate_doc_update in the interpreter (src/js/fast-map.ts FastValidator, src/js/fast-validate.ts):
 * which validators it takes, the verdicts it gives, and — the point — that a batch gets the same
 * answers and logs with it as in QuickJS alone, over random writes built to reach every branch.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, type Node } from 'acorn';
import { compileFastValidator } from '../../src/js/fast-map.js';
import type { QueryServer } from '../../src/js/query-server.js';
import { MapComparison } from '../helpers/map-comparison.js';
import { documentGenerator, FunctionGenerator } from '../helpers/map-fuzz.js';
import { seededRandom } from '../helpers/random.js';

const USER = { db: 'd', name: 'joe', roles: ['editor'] };
const SEC = { admins: { names: [], roles: [] }, members: { names: [], roles: [] } };

/** Validators the interpreter takes. */
const FAST_VALIDATORS: string[] = [
  'function(newDoc, oldDoc, userCtx) { if (!newDoc._deleted && typeof newDoc.type !== "string") throw({forbidden: "type required"}); }',
  'function(newDoc, oldDoc, userCtx, secObj) { if (oldDoc && oldDoc.owner !== userCtx.name) throw({unauthorized: "not yours: " + oldDoc.owner}); }',
  'function(newDoc) { if (newDoc.n > 10) throw {forbidden: {n: newDoc.n, why: "too big"}}; if (newDoc.n < 0) return; }',
  'function(d, o, u) { for (var i = 0; i < (d.tags ? d.tags.length : 0); i++) if (typeof d.tags[i] !== "string") throw({forbidden: "tag " + i}); }',
  'function(d) { if (d.tags) d.tags.forEach(function(t) { if (t === "bad") throw({forbidden: "bad tag"}); }); }',
  // Thrown values the interpreter leaves to the sandbox: a string, a CouchDB error array, an
  // object with neither member set, a throw inside try.
  'function(d) { if (d.n === 3) throw "three"; }',
  'function(d) { if (d.n === 4) throw ["error", "conflict", "four"]; }',
  'function(d) { if (d.n === 5) throw {error: "x", reason: "five"}; if (d.n === 6) throw {forbidden: undefined, unauthorized: "six"}; }',
  'function(d) { try { if (d.n === 7) throw {forbidden: "seven"}; } finally { d.n; } }',
  'function(d) { if (d.missing.deeper) throw {forbidden: "never"}; }',
];

/** Validators outside the subset. */
const SANDBOX_VALIDATORS: string[] = [
  'function(d) { emit(d._id, 1); }',
  'function(d, o, u) { if (u.roles.indexOf("_admin") === -1) throw({forbidden: "admins only"}); }',
  'function(d) { log(d); }',
  'function(d) { if (this.x) throw {forbidden: "this"}; }',
  'function(d) { d.touched = true; }',
  'function(d) { var lib = require("lib"); }',
];

describe('validator interpreter', () => {
  test('takes validators within its subset and refuses the others', () => {
    for (const source of FAST_VALIDATORS) assert.ok(compileFastValidator(source), source);
    for (const source of SANDBOX_VALIDATORS) assert.equal(compileFastValidator(source), undefined, source);
  });

  test('passes, or reads the verdict from a thrown {forbidden} or {unauthorized}; anything else falls back', () => {
    const typed = compileFastValidator(FAST_VALIDATORS[0])!;
    assert.equal(typed.validate([{ type: 'x' }, null, USER, SEC], 100), null);
    assert.deepEqual(typed.validate([{ n: 1 }, null, USER, SEC], 100), { error: 'forbidden', reason: 'type required' });
    assert.equal(typed.validate([{ _deleted: true }, null, USER, SEC], 100), null);
    const owner = compileFastValidator(FAST_VALIDATORS[1])!;
    assert.deepEqual(owner.validate([{}, { owner: 'ann' }, USER, SEC], 100), { error: 'unauthorized', reason: 'not yours: ann' });
    const big = compileFastValidator(FAST_VALIDATORS[2])!;
    assert.deepEqual(big.validate([{ n: 11 }, null, USER, SEC], 100), { error: 'forbidden', reason: { n: 11, why: 'too big' } });
    const odd = compileFastValidator(FAST_VALIDATORS[7])!;
    assert.equal(odd.validate([{ n: 5 }, null, USER, SEC], 100), undefined);
    // An undefined forbidden is no verdict: the unauthorized member beside it is (as in the sandbox).
    assert.deepEqual(odd.validate([{ n: 6 }, null, USER, SEC], 100), { error: 'unauthorized', reason: 'six' });
    assert.equal(compileFastValidator(FAST_VALIDATORS[5])!.validate([{ n: 3 }, null, USER, SEC], 100), undefined);
    assert.equal(compileFastValidator(FAST_VALIDATORS[6])!.validate([{ n: 4 }, null, USER, SEC], 100), undefined);
    assert.equal(compileFastValidator(FAST_VALIDATORS[8])!.validate([{ n: 7 }, null, USER, SEC], 100), undefined);
    assert.equal(compileFastValidator(FAST_VALIDATORS[9])!.validate([{}, null, USER, SEC], 100), undefined);
  });
});

const servers = MapComparison.forFile();

/** A validator's verdicts on `writes` from `server`, or the error the whole batch failed with. */
async function verdicts(server: QueryServer, source: string, writes: string[]): Promise<{ ok: unknown } | { error: string }> {
  const fn = await server.designFunction({ language: 'javascript' }, source);
  try {
    return { ok: await fn.validate(writes, JSON.stringify([USER, SEC])) };
  } catch (err) {
    return { error: String(err) };
  } finally {
    fn.dispose();
  }
}

/**
 * A generated map function made a validator: each `emit(k, v);` statement throws
 * `{forbidden: [k, v]}` (or `{unauthorized: ...}`) instead, so the verdict depends on every
 * branch and value the map would have emitted. Undefined when an emit is not a statement.
 */
function asValidator(map: string, unauthorized: boolean): string | undefined {
  const text = `(${map.replace(/[\s;]+$/, '')}\n)`;
  const edits: { start: number; end: number; args: string }[] = [];
  let other = false;
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object' || typeof (node as Node).type !== 'string') return;
    const n = node as Node & { expression?: Node & { callee?: Node & { name?: string }; arguments?: Node[] }; callee?: Node & { name?: string } };
    if (n.type === 'ExpressionStatement' && n.expression?.type === 'CallExpression' && n.expression.callee?.type === 'Identifier' && n.expression.callee.name === 'emit') {
      const args = n.expression.arguments!.map((a) => text.slice(a.start, a.end)).join(', ');
      edits.push({ start: n.start, end: n.end, args });
      n.expression.arguments!.forEach(visit);
      return;
    }
    if (n.type === 'CallExpression' && n.callee?.type === 'Identifier' && n.callee.name === 'emit') other = true;
    for (const [key, value] of Object.entries(n)) if (key !== 'type') visit(value);
  };
  visit(parse(text, { ecmaVersion: 2020 }));
  if (other) return undefined;
  let out = text;
  for (const e of edits.sort((a, b) => b.start - a.start)) {
    out = `${out.slice(0, e.start)}throw {${unauthorized ? 'unauthorized' : 'forbidden'}: [${e.args}]};${out.slice(e.end)}`;
  }
  return out.slice(1, -2);
}

describe('validator interpreter, fuzzed', () => {
  test('validators made of generated map functions give the same verdicts as in QuickJS', async (t) => {
    const { interpreted, sandboxed } = await servers;
    const seed = 20261208;
    const rnd = seededRandom(seed);
    const generator = new FunctionGenerator(rnd);
    const makeDoc = documentGenerator(seededRandom(seed + 1));
    let compared = 0;
    let compiled = 0;
    for (let f = 0; f < 240; f++) {
      const source = asValidator(generator.map(), rnd() < 0.3);
      if (source === undefined) continue;
      compared++;
      if (compileFastValidator(source)) compiled++;
      const writes = Array.from({ length: 24 }, (_, i) => `[${makeDoc(f * 24 + i)},null]`);
      const expected = await verdicts(sandboxed, source, writes);
      const actual = await verdicts(interpreted, source, writes);
      assert.deepEqual(actual, expected, `seed ${seed}, validator:\n${source}`);
    }
    t.diagnostic(`${compared} validators compared, ${compiled} compiled for the interpreter`);
    assert.ok(compiled >= compared * 0.8, `only ${compiled} of ${compared} validators compile for the interpreter`);
  });
});

describe('validation batches', () => {
  const random = seededRandom(7);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;

  /** A random write `[newDoc, oldDoc]` reaching every branch of the validators above. */
  function write(i: number): string {
    const doc: Record<string, unknown> = { _id: `d${i}`, _rev: `1-${i}` };
    if (random() < 0.7) doc['type'] = pick(['post', 'note', 1, null, ['x']]);
    if (random() < 0.8) doc['n'] = pick([1, 3, 4, 5, 6, 7, 11, 12.5, -1, '3']);
    if (random() < 0.3) doc['_deleted'] = true;
    if (random() < 0.4) doc['tags'] = pick([['a', 'b'], ['bad'], ['a', 2], [], 'tags']);
    if (random() < 0.2) doc['missing'] = pick([{ deeper: 0 }, 1]);
    const old = random() < 0.4 ? { _id: `d${i}`, owner: pick(['joe', 'ann', undefined]) } : null;
    return JSON.stringify([doc, old]);
  }

  test('a batch gets the same verdicts and logs from the interpreter as from QuickJS alone', async () => {
    const { interpreted, sandboxed } = await servers;
    const writes = Array.from({ length: 400 }, (_, i) => write(i));
    const context = JSON.stringify([USER, SEC]);
    for (const source of [...FAST_VALIDATORS, ...SANDBOX_VALIDATORS.slice(1)]) {
      const answers: unknown[] = [];
      for (const server of [interpreted, sandboxed]) {
        const fn = await server.designFunction({ language: 'javascript' }, source);
        try {
          answers.push(await fn.validate(writes, context));
        } finally {
          fn.dispose();
        }
      }
      assert.deepEqual(answers[0], answers[1], source);
    }
  });
});
