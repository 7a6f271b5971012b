/**
 * A view program whose map functions all fit the interpreter's subset (fast-map.ts): a worker
 * maps batches with it, and hands the sandbox only the documents the interpreter gives up on.
 */
import type { MapOutput } from './batches.js';
import { compileFastMap, functionNode, type FastMapFunction, type Row } from './fast-map.js';
import type { ProgramSpec } from './protocol.js';

/**
 * Larger documents go to the sandbox, whose memory limit bounds what mapping them takes (this
 * thread's heap has no such limit of its own).
 */
const MAX_DOC_CHARS = 1 << 20;
/** Upper bound of the JSON the interpreter emits for one batch; past it, documents go to the sandbox. */
const MAX_BATCH_EMITTED = 64 << 20;

/**
 * Whether every function of a program is a plain function expression, whose compilation in the
 * sandbox runs no code (statements before a function could change the globals others see).
 */
export function compilesWithoutRunningCode(spec: ProgramSpec): boolean {
  return spec.functions.every((f) => functionNode(f.source) !== undefined);
}

export class FastMapProgram {
  private constructor(private readonly maps: FastMapFunction[]) {}

  /**
   * The program's maps compiled for the interpreter, or undefined if any map is outside the
   * subset, or any of its functions is a form whose compilation runs code (statements before
   * the function could change the globals the maps see).
   */
  static from(spec: ProgramSpec, inherited: ReadonlySet<string>): FastMapProgram | undefined {
    if (spec.maps.length === 0) return undefined;
    if (!compilesWithoutRunningCode(spec)) return undefined;
    const maps: FastMapFunction[] = [];
    for (const index of spec.maps) {
      const compiled = compileFastMap(spec.functions[index]?.source, inherited);
      if (!compiled) return undefined;
      maps.push(compiled);
    }
    return new FastMapProgram(maps);
  }

  /** Maps a batch as the sandbox would. `sandbox` maps the documents that fall back. */
  mapBatch(docs: readonly string[], sandbox: (docs: readonly string[]) => MapOutput): MapOutput {
    const results = new Array<Row[][]>(docs.length);
    const fallbacks: number[] = [];
    let emitted = 0;
    for (let i = 0; i < docs.length; i++) {
      const text = docs[i]!;
      if (text.length > MAX_DOC_CHARS) {
        fallbacks.push(i);
        continue;
      }
      let doc: unknown;
      try {
        doc = JSON.parse(text);
      } catch {
        fallbacks.push(i);
        continue;
      }
      const perMap = new Array<Row[]>(this.maps.length);
      let ok = true;
      let docEmitted = 0;
      for (let m = 0; m < this.maps.length && ok; m++) {
        const map = this.maps[m]!;
        const rows = map.map(doc, text.length, MAX_BATCH_EMITTED - emitted - docEmitted);
        if (rows) {
          perMap[m] = rows;
          docEmitted += map.lastEmitted;
        } else {
          ok = false;
        }
      }
      if (ok) {
        results[i] = perMap;
        emitted += docEmitted;
      } else {
        fallbacks.push(i);
      }
    }
    let logs: unknown[] = [];
    if (fallbacks.length > 0) {
      const mapped = sandbox(fallbacks.map((i) => docs[i]!));
      logs = mapped.logs;
      fallbacks.forEach((at, j) => { results[at] = mapped.results[j]!; });
    }
    return { logs, results };
  }
}
