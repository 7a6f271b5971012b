/**
 * The QuickJS side of the sandbox: one QuickJS runtime per loaded program (design document),
 * inside one WASM instance per worker thread. Runs in a worker (see worker.ts); synchronous.
 *
 * Limits, per runtime:
 * - time: an interrupt handler stops any JavaScript running past its deadline. The deadline is
 *   per unit of work; a map batch interrupted after it made progress resumes at the document
 *   that was running, with a fresh deadline, so every document gets the full `timeoutMs` as in
 *   CouchDB (where the timeout is per map_doc command). Only a document (or a reduce call, or a
 *   compilation) that alone runs past the deadline fails, with os_process_error.
 * - memory: the runtime's malloc limit; running into it fails the work with os_process_error and
 *   the runtime is thrown away (rebuilt from the program's source on next use).
 * - stack: QuickJS's own stack limit, well below the worker thread's native stack (worker.ts), so
 *   deep recursion is a catchable RangeError inside the VM and never a host stack overflow.
 *
 * Anything that fails at the host level (an exception out of the WASM module itself) leaves the
 * module in an unknown state: it is reported as an EngineCrash and the worker exits (the pool
 * replaces it).
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { useNativeUtf8 } from './fast-strings.js';
import { EVAL_GLOBAL, EVAL_PLAIN, EVAL_WITH_REQUIRE, PRELUDE } from './prelude.js';
import type { FailureCause, WorkerError } from './protocol.js';

export interface EngineOptions {
  /** QuickJS stack limit in bytes; must stay well below the thread's native stack. */
  maxStackBytes: number;
  /** Runtimes kept alive at once; the least recently used beyond this are disposed (and rebuilt on demand). */
  maxLivePrograms: number;
  /** Told the absolute deadline (ms since epoch) of the unit of work starting, 0 when idle (for a watchdog). */
  publishDeadline?: (deadline: number) => void;
}

/** A failure to report to the caller: the function's fault or the sandbox limits. */
export class SandboxFailure extends Error {
  constructor(readonly failure: WorkerError, readonly logs: string[] = []) {
    super(`${failure.error}: ${failure.reason}`);
  }
}

/** The WASM module itself failed: nothing in it can be trusted any more. */
export class EngineCrash extends Error {}

const API = ['load', 'batch', 'run', 'position', 'rewind', 'finish', 'abort', 'classify', 'list'] as const;
type ApiName = (typeof API)[number];

interface Live {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  api: Record<ApiName, QuickJSHandle>;
}

interface Entry {
  spec: string;
  memoryLimitBytes: number;
  live: Live | undefined;
  lastUse: number;
  info: string;
}

/** Below this not even the environment fits. */
const MIN_MEMORY_LIMIT = 2 * 1024 * 1024;
const KIND_MAP = 0;
const KIND_REDUCE = 1;

/** The runner kinds of design-document functions (prelude.ts `run`). */
export const DESIGN_KINDS = { validate: 2, filter: 3, show: 4, update: 5, rewrite: 6 } as const;
export type DesignKind = keyof typeof DESIGN_KINDS;

/**
 * How a running `_list` function reaches the host: `out` is JSON `{start?, chunks}` to send to
 * the client; with `wantRows`, blocks until the host answers the next rows (JSON array, empty
 * at the end).
 */
export type ListPull = (out: string, wantRows: boolean) => string;

/**
 * The HTTP status CouchDB gives an error a function raised as `[error, id, reason]`: the
 * `{Id, Reason}` clauses of couch_httpd:error_info (1.6); any other id, `conflict` among them
 * (only the bare atom is a 409), is a 500.
 */
function statusOf(error: string): number {
  switch (error) {
    case 'compilation_error': return 400;
    case 'bad_request': return 400;
    case 'query_parse_error': return 400;
    case 'unauthorized': return 401;
    case 'forbidden': return 403;
    case 'not_found': return 404;
    case 'not_acceptable': return 406;
    case 'missing_stub': return 412;
    case 'bad_ctype': return 415;
    default: return 500;
  }
}

const failure = (error: string, reason: string, cause: FailureCause, status = 500): WorkerError => ({ status, error, reason, cause });
export const TIMEOUT_REASON = 'OS process timed out.';

type CallResult = { ok: true; value: QuickJSHandle } | { ok: false; error: QuickJSHandle };

export class Engine {
  private readonly entries = new Map<number, Entry>();
  /** Programs whose load failed here: their jobs fail the same way until they are loaded again. */
  private readonly failed = new Map<number, SandboxFailure>();
  private deadline = 0;
  private interrupted = false;
  private clock = 0;
  private readonly interruptHandler = (): boolean => {
    if (this.deadline !== 0 && Date.now() > this.deadline) {
      this.interrupted = true;
      return true;
    }
    return false;
  };

  constructor(private readonly module: QuickJSWASMModule, private readonly options: EngineOptions) {
    useNativeUtf8(module);
  }

  /**
   * Registers and compiles a program; returns what the compiler learnt about it (JSON
   * `{usesKeys: [per function]}`). A compilation error unregisters it again.
   */
  load(pid: number, spec: string, memoryLimitBytes: number, timeoutMs: number): string {
    this.unload(pid);
    const entry: Entry = { spec, memoryLimitBytes, live: undefined, lastUse: 0, info: '' };
    this.entries.set(pid, entry);
    try {
      this.live(entry, timeoutMs);
      return entry.info;
    } catch (err) {
      this.entries.delete(pid);
      if (err instanceof SandboxFailure) this.failed.set(pid, new SandboxFailure(err.failure));
      throw err;
    }
  }

  unload(pid: number): void {
    this.failed.delete(pid);
    const entry = this.entries.get(pid);
    if (!entry) return;
    this.entries.delete(pid);
    this.reset(entry);
  }

  /** Runs the program's map functions over a JSON array of documents: JSON `[logs, rows per doc per map]`. */
  map(pid: number, docs: string, timeoutMs: number): string {
    return this.batch(this.entry(pid), KIND_MAP, docs, 0, timeoutMs);
  }

  /** Runs function `fn` over a JSON array of `[keys, values, rereduce]` calls: JSON `[logs, result per call]`. */
  reduce(pid: number, fn: number, calls: string, timeoutMs: number): string {
    return this.batch(this.entry(pid), KIND_REDUCE, calls, fn, timeoutMs);
  }

  /**
   * Runs design-document function `fn` of a kind over a JSON array of items (validate: argument
   * lists, filter: documents with `arg` the request, show/update: one `[doc, req]`).
   */
  design(pid: number, kind: DesignKind, items: string, fn: number, arg: string, timeoutMs: number): string {
    return this.batch(this.entry(pid), DESIGN_KINDS[kind], items, fn, timeoutMs, arg);
  }

  /**
   * Runs list function `fn` over rows the host hands out through `pull`; the deadline is per
   * stretch of JavaScript between two pulls (the host's wait does not count). Returns JSON
   * `[logs, {start?, chunks}]`: the output not flushed yet.
   */
  list(pid: number, fn: number, head: string, req: string, timeoutMs: number, pull: ListPull): string {
    const entry = this.entry(pid);
    const live = this.live(entry, timeoutMs);
    const ctx = live.context;
    const pullFn = this.guard(() => ctx.newFunction('pull', (outHandle, wantHandle) => {
      const out = ctx.getString(outHandle);
      const want = ctx.typeof(wantHandle) === 'boolean' && ctx.dump(wantHandle) === true;
      this.disarm();
      let rows: string;
      try {
        rows = pull(out, want);
      } finally {
        this.arm(timeoutMs);
      }
      return ctx.newString(rows);
    }));
    let r: CallResult;
    try {
      r = this.call(live, live.api.list, [fn, head, req, pullFn], timeoutMs);
    } finally {
      // Before any reset: a runtime cannot be disposed while the host holds handles into it.
      this.guard(() => pullFn.dispose());
    }
    if (!r.ok) this.fail(entry, r.error);
    return this.drained(entry, this.takeString(live, r.value), timeoutMs);
  }

  dispose(): void {
    for (const pid of [...this.entries.keys()]) this.unload(pid);
  }

  private entry(pid: number): Entry {
    const entry = this.entries.get(pid);
    const failed = this.failed.get(pid);
    if (failed) throw failed;
    if (!entry) throw new SandboxFailure(failure('os_process_error', `program ${pid} is not loaded`, 'crash'));
    return entry;
  }

  private batch(entry: Entry, kind: number, input: string, fn: number, timeoutMs: number, arg = ''): string {
    const live = this.live(entry, timeoutMs);
    const { context: ctx, api } = live;
    // The common case: one call does it all.
    let r = this.call(live, api.batch, [kind, input, fn, arg], timeoutMs);
    if (r.ok) return this.drained(entry, this.takeString(live, r.value), timeoutMs);
    let start = 0;
    for (;;) {
      if (!this.interrupted) this.fail(entry, r.error);
      // Interrupted: resume at the item that was running if this unit got past at least one item.
      r.error.dispose();
      const at = this.call(live, api.position, [], timeoutMs);
      if (!at.ok) this.fail(entry, at.error);
      const next = ctx.getNumber(at.value);
      at.value.dispose();
      if (!(next > start)) this.timedOut(entry);
      start = next;
      const rewound = this.call(live, api.rewind, [], timeoutMs);
      if (!rewound.ok) this.fail(entry, rewound.error);
      rewound.value.dispose();
      r = this.call(live, api.run, [], timeoutMs);
      if (r.ok) {
        r.value.dispose();
        break;
      }
    }
    r = this.call(live, api.finish, [], timeoutMs);
    if (!r.ok) this.fail(entry, r.error);
    return this.drained(entry, this.takeString(live, r.value), timeoutMs);
  }

  /**
   * Promise reactions a function queued (QuickJS runs none by itself) would pile up in the
   * runtime: run them after the batch, under the deadline, with their effects discarded. One
   * that misbehaves costs its runtime, not the batch, whose result is already out.
   */
  private drained(entry: Entry, result: string, timeoutMs: number): string {
    const live = entry.live;
    if (!live) return result;
    const clean = this.guard(() => {
      if (!live.runtime.hasPendingJob()) return true;
      this.arm(timeoutMs);
      try {
        const r = live.runtime.executePendingJobs(10_000);
        if (r.error) {
          r.error.dispose();
          return !this.interrupted;
        }
        r.dispose();
        return !live.runtime.hasPendingJob();
      } finally {
        this.disarm();
      }
    });
    if (!clean) this.reset(entry);
    return result;
  }

  private takeString(live: Live, handle: QuickJSHandle): string {
    try {
      if (live.context.typeof(handle) !== 'string') {
        throw new SandboxFailure(failure('os_process_error', 'the sandbox returned a non-string', 'crash'));
      }
      return live.context.getString(handle);
    } finally {
      handle.dispose();
    }
  }

  /** The live runtime of a program, built (prelude + compilation of every function) if needed. */
  private live(entry: Entry, timeoutMs: number): Live {
    entry.lastUse = ++this.clock;
    if (entry.live) return entry.live;
    const live = this.instantiate(entry.memoryLimitBytes);
    entry.live = live;
    try {
      const r = this.call(live, live.api.load, [entry.spec], timeoutMs);
      if (!r.ok) this.fail(entry, r.error);
      entry.info = this.takeString(live, r.value);
    } catch (err) {
      this.reset(entry);
      throw err;
    }
    this.evict();
    return live;
  }

  private instantiate(memoryLimitBytes: number): Live {
    return this.guard(() => {
      const runtime = this.module.newRuntime();
      runtime.setMemoryLimit(Math.max(memoryLimitBytes, MIN_MEMORY_LIMIT));
      runtime.setMaxStackSize(this.options.maxStackBytes);
      runtime.setInterruptHandler(this.interruptHandler);
      const context = runtime.newContext();
      try {
        const evaluate = (code: string, name: string): QuickJSHandle => {
          const r = context.evalCode(code, name, { type: 'global' });
          if (r.error) {
            const text = JSON.stringify(context.dump(r.error));
            r.error.dispose();
            throw new SandboxFailure(failure('os_process_error', `sandbox setup failed: ${text}`, 'crash'));
          }
          return r.value;
        };
        const helpers = [evaluate(EVAL_WITH_REQUIRE, 'eval-require.js'), evaluate(EVAL_PLAIN, 'eval.js'), evaluate(EVAL_GLOBAL, 'eval-global.js')];
        const prelude = evaluate(PRELUDE, 'couchdb-query-server.js');
        const made = context.callFunction(prelude, context.undefined, context.global, ...helpers);
        prelude.dispose();
        for (const h of helpers) h.dispose();
        if (made.error) {
          const text = JSON.stringify(context.dump(made.error));
          made.error.dispose();
          throw new SandboxFailure(failure('os_process_error', `sandbox setup failed: ${text}`, 'crash'));
        }
        const api = {} as Record<ApiName, QuickJSHandle>;
        for (const name of API) api[name] = context.getProp(made.value, name);
        made.value.dispose();
        return { runtime, context, api };
      } catch (err) {
        context.dispose();
        runtime.dispose();
        throw err;
      }
    });
  }

  /** Calls a runner entry point with string/number (or handle) arguments, under a deadline of `timeoutMs`. */
  private call(live: Live, fn: QuickJSHandle, args: (string | number | QuickJSHandle)[], timeoutMs: number): CallResult {
    return this.guard(() => {
      const ctx = live.context;
      const made: QuickJSHandle[] = [];
      const handles = args.map((a) => {
        if (typeof a !== 'number' && typeof a !== 'string') return a;
        const h = typeof a === 'number' ? ctx.newNumber(a) : ctx.newString(a);
        made.push(h);
        return h;
      });
      this.arm(timeoutMs);
      try {
        const r = ctx.callFunction(fn, ctx.undefined, ...handles);
        return r.error ? { ok: false, error: r.error } : { ok: true, value: r.value };
      } finally {
        this.disarm();
        for (const h of made) h.dispose();
      }
    });
  }

  private arm(timeoutMs: number): void {
    this.interrupted = false;
    this.deadline = Date.now() + Math.max(1, timeoutMs);
    this.options.publishDeadline?.(this.deadline);
  }

  private disarm(): void {
    this.deadline = 0;
    this.options.publishDeadline?.(0);
  }

  /** Turns an exception out of the runner into a SandboxFailure (and throws it). */
  private fail(entry: Entry, error: QuickJSHandle): never {
    const live = entry.live!;
    if (this.interrupted) {
      error.dispose();
      this.timedOut(entry);
    }
    let info: unknown[] = ['memory']; // what it most likely is if even classifying fails
    const r = this.guard(() => {
      this.arm(1000);
      try {
        return live.context.callFunction(live.api.classify, live.context.undefined, error);
      } finally {
        this.disarm();
      }
    });
    error.dispose();
    if (r.error) {
      r.error.dispose();
      if (this.interrupted) this.timedOut(entry);
    } else {
      const text = this.takeString(live, r.value);
      try { info = JSON.parse(text) as unknown[]; } catch { info = ['other', text]; }
    }
    const logs = this.abort(live);
    if (info[0] === 'couch') {
      const [, kind, id, reason, index] = info as [string, string, string, string, number | undefined];
      // ['fatal', ...] is CouchDB's way for a function to kill its query server process.
      if (kind === 'fatal' || index !== undefined) this.reset(entry);
      throw new SandboxFailure(failure(id, reason, 'function', statusOf(id)), logs);
    }
    this.reset(entry);
    if (info[0] === 'memory') {
      throw new SandboxFailure(failure('os_process_error', `out of memory (the sandbox is limited to ${entry.memoryLimitBytes} bytes)`, 'memory'), logs);
    }
    throw new SandboxFailure(failure('os_process_error', String(info[1]), 'crash'), logs);
  }

  private timedOut(entry: Entry): never {
    const logs = entry.live ? this.abort(entry.live) : [];
    this.reset(entry);
    throw new SandboxFailure(failure('os_process_error', TIMEOUT_REASON, 'timeout'), logs);
  }

  /** Ends the batch in the VM; returns the logs it had (best effort). */
  private abort(live: Live): string[] {
    try {
      const r = this.call(live, live.api.abort, [], 1000);
      if (!r.ok) {
        r.error.dispose();
        return [];
      }
      const logs = JSON.parse(this.takeString(live, r.value)) as unknown;
      return Array.isArray(logs) ? logs.map(String) : [];
    } catch (err) {
      if (err instanceof EngineCrash) throw err;
      return [];
    }
  }

  /** Disposes a program's runtime; it is rebuilt from source on next use. */
  private reset(entry: Entry): void {
    const live = entry.live;
    if (!live) return;
    entry.live = undefined;
    this.guard(() => {
      for (const name of API) live.api[name].dispose();
      live.context.dispose();
      live.runtime.dispose();
    });
  }

  private evict(): void {
    const alive = [...this.entries.values()].filter((e) => e.live);
    if (alive.length <= this.options.maxLivePrograms) return;
    alive.sort((a, b) => a.lastUse - b.lastUse);
    for (const e of alive.slice(0, alive.length - this.options.maxLivePrograms)) this.reset(e);
  }

  /** Runs host-side QuickJS calls; an exception out of the module itself is a crash. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof SandboxFailure || err instanceof EngineCrash) throw err;
      throw new EngineCrash(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    }
  }
}
