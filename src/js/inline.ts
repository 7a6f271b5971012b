/**
 * A QuickJS instance on the server's own thread, for small batches of quick design functions
 * (a single document's validate_doc_update): no hop to a sandbox thread, which costs more than
 * the function. Same engine, same environment, but a small time budget, a small memory limit
 * and a small stack: a batch that does not finish cleanly within them is run again on a worker
 * thread, which gives the answer (and the error) with the full limits. Functions have no side
 * effects but `log()`, whose lines from an abandoned run are dropped.
 */
import { Engine, SandboxFailure, type DesignKind } from './engine.js';
import { newQuickJS, type WasmModule } from './quickjs-module.js';

/** Longest an inline batch may run before it is abandoned for a worker. */
const BUDGET_MS = 20;
/** Longest compiling a program here may take (once per program). */
const LOAD_BUDGET_MS = 200;
/**
 * Memory an inline program may use. Every program here shares one WebAssembly memory, which
 * never shrinks: at most LIVE_PROGRAMS × this, and in practice far less.
 */
const MEMORY_BYTES = 8 * 1024 * 1024;
/**
 * QuickJS's stack here: QuickJS frames in WebAssembly take several times the native stack
 * QuickJS counts, and this thread's stack is V8's (under 1 MB).
 */
const STACK_BYTES = 48 * 1024;
/** Programs kept compiled here at once. */
const LIVE_PROGRAMS = 8;

export class InlineRunner {
  private engine: Engine | undefined;
  private starting = false;
  private broken = false;
  private readonly loaded = new Set<number>();
  /** Programs that did not finish cleanly here once: they always run on workers. */
  private readonly refused = new Set<number>();

  constructor(private readonly wasm: WasmModule | undefined) {}

  /**
   * Runs a batch of design function `fn` of program `pid` here: its answer (JSON `[logs,
   * results]`), or undefined when the caller must run it on a worker instead.
   */
  run(pid: number, spec: () => string | undefined, kind: DesignKind, items: string, fn: number, arg: string): string | undefined {
    const engine = this.engine;
    if (!engine) {
      this.start();
      return undefined;
    }
    if (this.refused.has(pid)) return undefined;
    try {
      if (!this.loaded.has(pid)) {
        const source = spec();
        if (source === undefined) return undefined;
        engine.load(pid, source, MEMORY_BYTES, LOAD_BUDGET_MS);
        this.loaded.add(pid);
      }
      return engine.design(pid, kind, items, fn, arg, BUDGET_MS);
    } catch (err) {
      this.refuse(pid);
      if (!(err instanceof SandboxFailure)) {
        // Anything but the function's own failure (a stack overflow in the engine, a crash):
        // this instance may be in any state, so it is not used again.
        this.engine = undefined;
        this.broken = true;
      }
      return undefined;
    }
  }

  /** Forgets a program (its design document changed or went away). */
  release(pid: number): void {
    this.refused.delete(pid);
    if (this.loaded.delete(pid)) this.engine?.unload(pid);
  }

  private refuse(pid: number): void {
    this.refused.add(pid);
    if (this.loaded.delete(pid)) {
      try {
        this.engine?.unload(pid);
      } catch {
        this.engine = undefined;
        this.broken = true;
      }
    }
  }

  private start(): void {
    if (this.starting || this.broken) return;
    this.starting = true;
    newQuickJS(this.wasm).then(
      (module) => { this.engine = new Engine(module, { maxStackBytes: STACK_BYTES, maxLivePrograms: LIVE_PROGRAMS }); },
      () => { this.broken = true; },
    );
  }
}
