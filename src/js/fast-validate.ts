/**
 * validate_doc_update batches judged by the interpreter (fast-map.ts's FastValidator): most
 * validators only read the documents and throw `{forbidden: ...}`, and V8 parsing a batch and
 * walking the function's tree costs a fraction of QuickJS parsing each document in WebAssembly.
 * The writes the interpreter gives up on (anything it does not model exactly) go to the sandbox
 * in one batch, so the reply is the sandbox's own, item for item.
 */
import { compileFastValidator, type FastValidator } from './fast-map.js';
import { compilesWithoutRunningCode } from './fast-program.js';
import type { ProgramSpec } from './protocol.js';

/** Larger batches go to the sandbox whole, whose memory limit bounds what judging them takes. */
const MAX_BATCH_CHARS = 16 << 20;

/**
 * The validator `fn` of a program compiled for the interpreter, or undefined when it is outside
 * the subset, or when any function of the program is a form whose compilation runs code (that
 * code could change what the validator sees in the sandbox).
 */
export function fastValidatorOf(spec: ProgramSpec, fn: number, inherited: ReadonlySet<string>): FastValidator | undefined {
  if (!compilesWithoutRunningCode(spec)) return undefined;
  return compileFastValidator(spec.functions[fn]?.source, inherited);
}

/**
 * Judges a batch as the sandbox would: `items` the JSON array of `[newDoc, oldDoc]`, `arg` the
 * JSON `[userCtx, secObj]`; the reply is the JSON `[logs, [null or {error, reason} per item]]`.
 * `sandbox` judges the items (a JSON array of some of them) that fall back.
 */
export function validateBatch(validator: FastValidator, items: string, arg: string, sandbox: (items: string) => string): string {
  if (items.length > MAX_BATCH_CHARS) return sandbox(items);
  const writes = JSON.parse(items) as [unknown, unknown][];
  const [userCtx, secObj] = JSON.parse(arg) as [unknown, unknown];
  const weight = items.length + arg.length;
  const results = new Array<unknown>(writes.length);
  const fallbacks: number[] = [];
  for (let i = 0; i < writes.length; i++) {
    const [newDoc, oldDoc] = writes[i]!;
    const verdict = validator.validate([newDoc, oldDoc, userCtx, secObj], weight);
    if (verdict === undefined) fallbacks.push(i);
    else results[i] = verdict;
  }
  if (fallbacks.length === 0) return JSON.stringify([[], results]);
  // The writes' own texts, not the parsed values written again: JSON cannot write back all it
  // reads (1e400 is Infinity, then null).
  const texts = arrayElements(items);
  const [logs, judged] = JSON.parse(sandbox(`[${fallbacks.map((i) => texts[i]).join(',')}]`)) as [unknown[], unknown[]];
  fallbacks.forEach((at, j) => { results[at] = judged[j]; });
  return JSON.stringify([logs, results]);
}

/** The texts of a JSON array's elements (the array is valid JSON: JSON.parse has read it). */
function arrayElements(json: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (depth++ === 0) start = i + 1;
    } else if (c === 0x5d || c === 0x7d) {
      if (--depth === 0) {
        const last = json.slice(start, i).trim();
        if (last !== '') out.push(last);
      }
    } else if (c === 0x2c && depth === 1) {
      out.push(json.slice(start, i).trim());
      start = i + 1;
    }
  }
  return out;
}
