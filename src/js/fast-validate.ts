/**
 * validate_doc_update batches judged by the interpreter (fast-map.ts's FastValidator): most
 * validators only read the documents and throw `{forbidden: ...}`, and V8 parsing a batch and
 * walking the function's tree costs a fraction of QuickJS parsing each document in WebAssembly.
 * The writes the interpreter gives up on (anything it does not model exactly) go to the sandbox
 * in one batch, so the reply is the sandbox's own, item for item.
 */
import { compileFastValidator, functionNode, type FastValidator } from './fast-map.js';
import type { ProgramSpec } from './protocol.js';

/** Larger batches go to the sandbox whole, whose memory limit bounds what judging them takes. */
const MAX_BATCH_CHARS = 16 << 20;

/**
 * The validator `fn` of a program compiled for the interpreter, or undefined when it is outside
 * the subset, or when any function of the program is a form whose compilation runs code (that
 * code could change what the validator sees in the sandbox).
 */
export function fastValidatorOf(spec: ProgramSpec, fn: number, inherited: ReadonlySet<string>): FastValidator | undefined {
  if (!spec.functions.every((f) => functionNode(f.source) !== undefined)) return undefined;
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
  const [logs, judged] = JSON.parse(sandbox(JSON.stringify(fallbacks.map((i) => writes[i])))) as [unknown[], unknown[]];
  fallbacks.forEach((at, j) => { results[at] = judged[j]; });
  return JSON.stringify([logs, results]);
}
