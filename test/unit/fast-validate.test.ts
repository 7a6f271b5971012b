/**
 * validate_doc_update in the interpreter (src/js/fast-map.ts FastValidator, src/js/fast-validate.ts):
 * which validators it takes, the verdicts it gives, and — the point — that a batch gets the same
 * answers and logs with it as in QuickJS alone, over random writes built to reach every branch.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFastValidator } from '../../src/js/fast-map.js';
import { MapComparison } from '../helpers/map-comparison.js';
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

describe('validation batches', () => {
  const servers = MapComparison.forFile();
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
