/**
 * A differential fuzzer for the map interpreter (src/js/fast-map.ts): random map functions
 * generated inside its subset (a small grammar of its statements and expressions) and random
 * documents (missing members, wrong types, inherited names, odd numbers, unicode) are mapped by
 * a query server with the interpreter and by one with QuickJS alone; rows and logs must be the
 * same. Seeded: a failure names the seed, the function and the first document that differs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileFastMap } from '../../src/js/fast-map.js';
import type { QueryServer } from '../../src/js/query-server.js';
import { MapComparison } from '../helpers/map-comparison.js';
import { seededRandom } from '../helpers/random.js';
import { documentGenerator, FunctionGenerator } from '../helpers/map-fuzz.js';

/** Generated functions, and documents per design document (FUZZ_SEED / FUZZ_FUNCTIONS explore further). */
const FUNCTIONS = Number(process.env['FUZZ_FUNCTIONS'] ?? 360);
const DOCS = 36;
const SEED = Number(process.env['FUZZ_SEED'] ?? 20240611);

// ------------------------------------------------------------------------------ the comparison

const servers = await MapComparison.forFile();

/** The rows, or the error the whole batch failed with. */
async function mapWith(server: QueryServer, maps: string[], docs: string[]): Promise<{ ok: unknown } | { error: string }> {
  try {
    return { ok: await servers.map(server, maps, docs) };
  } catch (err) {
    return { error: String(err) };
  }
}

/** Where two outcomes differ first, for the failure message. */
function firstDifference(maps: string[], docs: string[], expected: { ok: unknown } | { error: string }, actual: { ok: unknown } | { error: string }): string {
  const head = `seed ${SEED}, map functions:\n${maps.join('\n')}\n`;
  if (!('ok' in expected) || !('ok' in actual)) return `${head}QuickJS: ${JSON.stringify(expected)}\ninterpreter: ${JSON.stringify(actual)}`;
  const e = expected.ok as unknown[];
  const a = actual.ok as unknown[];
  for (let i = 0; i < docs.length; i++) {
    try {
      assert.deepEqual(a[i], e[i]);
    } catch {
      return `${head}document: ${docs[i]}\nQuickJS: ${JSON.stringify(e[i])}\ninterpreter: ${JSON.stringify(a[i])}`;
    }
  }
  return `${head}(logs differ)`;
}

describe('map interpreter, fuzzed', () => {
  test('generated functions give the same rows and logs as in QuickJS', async (t) => {
    const rnd = seededRandom(SEED);
    const generator = new FunctionGenerator(rnd);
    const makeDoc = documentGenerator(seededRandom(SEED + 1));
    let compiled = 0;
    let docCalls = 0;
    let interpretedCalls = 0;
    let generated = 0;
    let docNumber = 0;
    while (generated < FUNCTIONS) {
      // Mostly one function per design document; sometimes a few (documents are then frozen).
      const maps = Array.from({ length: rnd() < 0.8 ? 1 : 2 + Math.floor(rnd() * 2) }, () => generator.map());
      generated += maps.length;
      const docs = Array.from({ length: DOCS }, () => makeDoc(docNumber++));
      for (const map of maps) {
        const fast = compileFastMap(map);
        if (!fast) continue;
        compiled++;
        for (const text of docs) {
          docCalls++;
          if (fast.map(JSON.parse(text), text.length) !== undefined) interpretedCalls++;
        }
      }
      servers.clearLogs();
      const expected = await mapWith(servers.sandboxed, maps, docs);
      const actual = await mapWith(servers.interpreted, maps, docs);
      assert.deepEqual(actual, expected, firstDifference(maps, docs, expected, actual));
      const logs = servers.sortedLogs();
      assert.deepEqual(logs.interpreted, logs.sandboxed, firstDifference(maps, docs, expected, actual));
    }
    const compiledShare = compiled / generated;
    const interpretedShare = interpretedCalls / docCalls;
    t.diagnostic(`${generated} functions, ${(compiledShare * 100).toFixed(1)}% compiled; the interpreter mapped ${(interpretedShare * 100).toFixed(1)}% of their documents itself`);
    assert.ok(compiledShare >= 0.9, `only ${compiled} of ${generated} generated functions compile for the interpreter`);
    assert.ok(interpretedShare >= 0.3, `the interpreter mapped only ${interpretedCalls} of ${docCalls} documents`);
  });
});
