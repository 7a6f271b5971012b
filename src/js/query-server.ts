/**
 * Settee's query server: design-document JavaScript run in a real sandbox.
 *
 * Each function runs in QuickJS compiled to WebAssembly (quickjs-emscripten), inside
 * `workers` worker threads, each with its own WASM instance and one QuickJS runtime per design
 * document. Design-document code sees only the standard JavaScript built-ins and CouchDB's
 * query-server environment (`emit`, `log`, `sum`, `isArray`, `toJSON`, `JSON`, `require`):
 * no host functions are exposed at all, so there is nothing to escape to (no `process`, no
 * modules, no filesystem, no network, no `import()`). Runaway functions are interrupted after
 * `timeoutMs`, memory bombs hit their runtime's limit; both fail the call with os_process_error,
 * throw away that runtime and leave everything else running. See engine.ts and pool.ts.
 *
 * Documents cross into the sandbox as one JSON string per batch and rows come back as one JSON
 * string: per-value handle traffic with QuickJS would cost more than the map functions. A map
 * call is split across the workers and reassembled in document order.
 */
import { CouchError } from '../errors.js';
import { SandboxError, WorkerPool, programDisposed } from './pool.js';
import type { ProgramSpec } from './protocol.js';
import { DesignFunction } from './design-function.js';
import { batchRanges, parseMapReply, parseReply } from './batches.js';
import { javaScriptSource, languageOf } from './languages.js';

export { SandboxError } from './pool.js';
export { languageOf } from './languages.js';

export interface ViewSource { map: string; reduce?: string }

/** JSON texts end to end as UTF-8: text i is the `lengths[i]` bytes after those of the texts before it. */
export interface PackedJson {
  bytes: Uint8Array;
  lengths: readonly number[];
}

export interface DesignDocCode {
  id: string;
  /** The design document's `language` (languages.ts). */
  language?: unknown;
  views: Record<string, ViewSource>;
  /** `views.lib` of the design document: what `require('views/lib/...')` resolves in. */
  lib?: unknown;
  options?: { local_seq?: boolean; include_design?: boolean };
}

export interface SandboxOptions {
  /** `[couchdb] os_process_timeout`: the longest one document's map functions (or one reduce call) may run. */
  timeoutMs: number;
  /** Memory limit of each design document's QuickJS runtime (per worker). */
  memoryLimitBytes: number;
  /** Worker threads (each with its own QuickJS instance); map batches are split across them. */
  workers: number;
  /** Receives `log()` messages of functions and the errors of map functions that threw. */
  log: (message: string) => void;
  /** Most documents sent to a worker in one batch (default 250: see bench/js-sandbox.ts). */
  maxBatchDocs?: number;
  /** Most bytes of document JSON in one batch (default: memoryLimitBytes / 16, at most 8 MiB). */
  maxBatchBytes?: number;
  /**
   * Whether map functions within the interpreter's subset (fast-map.ts) run there instead of in
   * QuickJS (default: yes). Asked for every batch.
   */
  mapInterpreter?: () => boolean;
  /**
   * A module the workers load to encode map output for the caller (protocol.ts
   * MapEncoderModule), which ViewProgram.mapEncoded uses.
   */
  mapEncoder?: URL;
}

export interface ViewProgram {
  /** The views in a fixed order (the order of `results` below). */
  readonly names: string[];
  /**
   * Runs every map over each document. results[d][v] = the [key, value] rows view v emitted for
   * docs[d]. A map that throws for a document contributes no rows for it and the error is logged
   * (as CouchDB does); a timeout (runaway function) or memory blow-up raises a CouchError 500
   * {error: 'os_process_error'} and leaves the server healthy. Views with the same map source
   * share their rows arrays: treat the results as read-only.
   */
  map(docs: readonly object[]): Promise<[unknown, unknown][][][]>;
  /** As map(), with each document given as its JSON text (as stored), which saves serialising it again. */
  mapJson(docs: readonly string[]): Promise<[unknown, unknown][][][]>;
  /**
   * As mapJson(), with the documents' JSON texts packed end to end as UTF-8 (they cross to the
   * workers as one block of bytes each batch) and the rows encoded in the workers by the query
   * server's map encoder. A batch of documents [start, end) is encoded with
   * `context(maps, start, end)`, where `maps` gives, for each of `views`, the index of the map
   * function whose rows the encoder receives for it (-1 if the program has no such view). One
   * buffer per batch, in document order.
   */
  mapEncoded(docs: PackedJson, views: readonly string[], context: (maps: number[], start: number, end: number) => unknown): Promise<Uint8Array[]>;
  /** JavaScript reduce of view `name` (reduce(keys, values, rereduce) with keys [[key, id], ...], or null on rereduce). */
  reduce(name: string, keys: [unknown, string][] | null, values: unknown[], rereduce: boolean): Promise<unknown>;
  /** Many reduce calls of one view in one round trip to the sandbox; results in call order. */
  reduceMany(name: string, calls: readonly ReduceCall[]): Promise<unknown[]>;
  dispose(): void;
}

export interface ReduceCall {
  keys: [unknown, string][] | null;
  values: unknown[];
  rereduce: boolean;
}

/** QuickJS's stack limit: deep enough for ~5,000 nested calls of a small function. */
const MAX_STACK_BYTES = 1024 * 1024;
/** Native stack of a worker: QuickJS frames in WASM use many times more native stack than QuickJS counts. */
const WORKER_STACK_MB = 32;
const MAX_LIVE_PROGRAMS = 64;
const DEFAULT_BATCH_DOCS = 250;

export class QueryServer {
  private constructor(private readonly pool: WorkerPool, private readonly options: SandboxOptions) {}

  static async create(options: SandboxOptions): Promise<QueryServer> {
    const opts = { ...options };
    const pool = await WorkerPool.create({
      workers: Math.max(1, Math.floor(options.workers)),
      maxStackBytes: MAX_STACK_BYTES,
      stackSizeMb: WORKER_STACK_MB,
      maxLivePrograms: MAX_LIVE_PROGRAMS,
      graceMs: () => Math.max(1000, opts.timeoutMs / 2),
      mapEncoder: options.mapEncoder,
    });
    return new QueryServer(pool, opts);
  }

  /** Updates the timeout (e.g. after a configuration change); applies to work started afterwards. */
  setTimeoutMs(timeoutMs: number): void {
    this.options.timeoutMs = timeoutMs;
  }

  /**
   * Compiles every map (and JavaScript reduce) of a design document once; a function that does
   * not compile is a CouchError 400 {error: 'compilation_error'}. `views.lib` and views without
   * a map are not views. Builtin reduces (`_sum`, ...) are left to the caller.
   */
  async views(ddoc: DesignDocCode): Promise<ViewProgram> {
    const language = languageOf(ddoc.language);
    const names: string[] = [];
    const functions: ProgramSpec['functions'] = [];
    const mapOf = new Map<string, number>(); // map source → index among the distinct maps
    const maps: number[] = [];
    const viewMap: number[] = [];
    const reduceOf = new Map<string, number>();
    for (const [name, view] of Object.entries(ddoc.views ?? {})) {
      if (name === 'lib' || view === null || typeof view !== 'object' || view.map === undefined) continue;
      names.push(name);
      const key = typeof view.map === 'string' ? view.map : JSON.stringify(view.map);
      let m = mapOf.get(key);
      if (m === undefined) {
        m = maps.length;
        mapOf.set(key, m);
        maps.push(functions.length);
        functions.push({ source: javaScriptSource(language, view.map), require: true });
      }
      viewMap.push(m);
      const reduce = view.reduce;
      // `"reduce": null` is a map-only view, as couch_mrview reads it.
      if (reduce !== undefined && reduce !== null && !(typeof reduce === 'string' && reduce.trim().startsWith('_'))) {
        reduceOf.set(name, functions.length);
        functions.push({ source: javaScriptSource(language, reduce), require: false });
      }
    }
    const lib = ddoc.lib === undefined ? (ddoc.views as Record<string, unknown> | undefined)?.['lib'] : ddoc.lib;
    const spec: ProgramSpec = { requireRoot: { views: { lib: lib ?? null } }, functions, maps };
    const timeoutMs = () => this.options.timeoutMs;
    let compiled: { pid: number; info: string };
    try {
      compiled = await this.pool.compile(JSON.stringify(spec), this.options.memoryLimitBytes, timeoutMs, { everywhere: true });
    } catch (err) {
      throw this.report(err);
    }
    let usesKeys: unknown[] = [];
    try {
      const info = JSON.parse(compiled.info) as { usesKeys?: unknown };
      if (Array.isArray(info.usesKeys)) usesKeys = info.usesKeys;
    } catch {
      // keys are then always sent
    }
    const reduces = new Map<string, { fn: number; usesKeys: boolean }>();
    for (const [name, fn] of reduceOf) reduces.set(name, { fn, usesKeys: usesKeys[fn] !== false });
    return new Program(this, this.pool, compiled.pid, names, viewMap, maps.length, reduces);
  }

  /**
   * Compiles one design-document function that is not a view (validate_doc_update, a filter,
   * show, list or update): `require()` resolves in the whole design document, as in CouchDB.
   * A function that does not compile is a CouchError 400 {error: 'compilation_error'}.
   */
  async designFunction(ddoc: { language?: unknown }, source: unknown): Promise<DesignFunction> {
    const code = javaScriptSource(languageOf(ddoc.language), source);
    const spec: ProgramSpec = { requireRoot: ddoc, functions: [{ source: code, require: true }], maps: [] };
    let compiled: { pid: number };
    try {
      compiled = await this.pool.compile(JSON.stringify(spec), this.options.memoryLimitBytes, () => this.options.timeoutMs);
    } catch (err) {
      throw this.report(err);
    }
    const server = this;
    return new DesignFunction({
      pool: this.pool,
      get limits() { return server.limits; },
      get interpret() { return server.mapInterpreter; },
      report: (err) => this.report(err),
      logAll: (messages) => this.logAll(messages),
    }, compiled.pid);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** @internal */
  get mapInterpreter(): boolean {
    return this.options.mapInterpreter?.() ?? true;
  }

  /** @internal */
  get limits(): { timeoutMs: number; maxBatchDocs: number; maxBatchBytes: number } {
    const o = this.options;
    return {
      timeoutMs: o.timeoutMs,
      maxBatchDocs: Math.max(1, o.maxBatchDocs ?? DEFAULT_BATCH_DOCS),
      maxBatchBytes: Math.max(1024, o.maxBatchBytes ?? Math.min(8 * 1024 * 1024, Math.floor(o.memoryLimitBytes / 16))),
    };
  }

  /** @internal Sends logs to the log and turns a failure into the CouchError callers see. */
  report(err: unknown): CouchError {
    if (err instanceof SandboxError) {
      this.logAll(err.logs);
      return err;
    }
    if (err instanceof CouchError) return err;
    return new CouchError(500, 'os_process_error', err instanceof Error ? err.message : String(err));
  }

  /** @internal */
  logAll(messages: readonly unknown[]): void {
    for (const m of messages) {
      try {
        this.options.log(String(m));
      } catch {
        // a failing log sink must not fail the view
      }
    }
  }
}

type Rows = [unknown, unknown][];

/**
 * A map batch's documents as a worker takes them: JSON texts joined by commas with each text's
 * length, or packed end to end as UTF-8 with each text's byte length (protocol.ts).
 */
type BatchTexts = { docs: string; lengths: number[] } | { docs: Uint8Array; lengths: number[] };
/** What one batch of documents gives back: its log lines and one result per document (or per batch). */
type BatchOutput<T> = { logs: readonly unknown[]; results: T[] };

class Program implements ViewProgram {
  private disposed = false;

  constructor(
    private readonly server: QueryServer,
    private readonly pool: WorkerPool,
    private readonly pid: number,
    readonly names: string[],
    private readonly viewMap: number[],
    private readonly mapCount: number,
    private readonly reduces: Map<string, { fn: number; usesKeys: boolean }>,
  ) {}

  map(docs: readonly object[]): Promise<Rows[][]> {
    return this.mapJson(docs.map((d) => JSON.stringify(d)));
  }

  async mapJson(docs: readonly string[]): Promise<Rows[][]> {
    this.check();
    if (docs.length === 0) return [];
    if (this.mapCount === 0) return docs.map(() => []);
    const parts = await this.mapAll(docs.map((d) => d.length), (start, end, call) => this.mapBatch(docs, start, end, call));
    const results = parts.length === 1 ? parts[0]! : parts.flat();
    if (this.mapCount === this.names.length && this.viewMap.every((m, i) => m === i)) return results;
    return results.map((perMap) => this.viewMap.map((m) => perMap[m]!));
  }

  async mapEncoded(docs: PackedJson, views: readonly string[], context: (maps: number[], start: number, end: number) => unknown): Promise<Uint8Array[]> {
    this.check();
    const { bytes, lengths } = docs;
    if (lengths.length === 0) return [];
    const maps = views.map((name) => {
      const at = this.names.indexOf(name);
      return at < 0 ? -1 : this.viewMap[at]!;
    });
    const offsets = new Array<number>(lengths.length + 1);
    offsets[0] = 0;
    for (let i = 0; i < lengths.length; i++) offsets[i + 1] = offsets[i]! + lengths[i]!;
    // Each batch's bytes are copied into a buffer of their own: a view would send the whole block.
    const texts = (start: number, end: number) => ({ docs: new Uint8Array(bytes.subarray(offsets[start], offsets[end])), lengths: lengths.slice(start, end) });
    const parts = await this.mapAll(lengths, (start, end, call) => this.batchOf(texts, start, end, call, async (request, from, to) => {
      const reply = await this.pool.runEncoded({ ...request, encode: context(maps, from, to) });
      return { logs: reply.logs, results: [reply.rows] };
    }));
    return parts.flat();
  }

  /**
   * Batches spread over the workers: at least one per worker, at most maxBatchDocs (and
   * maxBatchBytes) each. Their log lines go out in document order, whichever worker finishes first.
   */
  private async mapAll<T>(sizes: readonly number[], batch: (start: number, end: number, call: { failed: boolean }) => Promise<BatchOutput<T>>): Promise<T[][]> {
    const { maxBatchDocs, maxBatchBytes } = this.server.limits;
    const perBatch = Math.max(1, Math.min(maxBatchDocs, Math.ceil(sizes.length / this.pool.size)));
    const call = { failed: false };
    const ranges = batchRanges(sizes, perBatch, maxBatchBytes);
    const done: (readonly unknown[] | undefined)[] = new Array(ranges.length);
    let logged = 0;
    const batches = ranges.map(([start, end], i) => batch(start, end, call).then(({ logs, results }) => {
      done[i] = logs;
      for (; logged < ranges.length && done[logged] !== undefined; logged++) this.server.logAll(done[logged]!);
      return results;
    }));
    try {
      return await Promise.all(batches);
    } catch (err) {
      call.failed = true; // batches not sent yet are dropped
      throw err;
    }
  }

  /** One batch in one worker; a batch that runs out of memory is split in two and retried. */
  private mapBatch(docs: readonly string[], start: number, end: number, call: { failed: boolean }): Promise<BatchOutput<Rows[]>> {
    const texts = (from: number, to: number) => {
      const part = docs.slice(from, to);
      return { docs: part.join(','), lengths: part.map((t) => t.length) };
    };
    return this.batchOf(texts, start, end, call, async (request) => parseMapReply(await this.pool.run(request), end - start, this.mapCount));
  }

  /**
   * Runs one batch, documents [start, end) as `texts` gives them to the worker, with `run`; a
   * batch that runs out of memory is split in two and retried. Logs and results concatenate.
   */
  private async batchOf<T>(
    texts: (start: number, end: number) => BatchTexts, start: number, end: number, call: { failed: boolean },
    run: (request: BatchTexts & { op: 'map'; pid: number; interpret: boolean; timeoutMs: number; abandoned: () => boolean }, start: number, end: number) => Promise<BatchOutput<T>>,
  ): Promise<BatchOutput<T>> {
    try {
      const request = {
        op: 'map' as const, pid: this.pid, ...texts(start, end),
        interpret: this.server.mapInterpreter, timeoutMs: this.server.limits.timeoutMs, abandoned: () => call.failed,
      };
      return await run(request, start, end);
    } catch (err) {
      if (err instanceof SandboxError && err.kind === 'memory' && end - start > 1 && !call.failed) {
        // The batch as a whole may be what did not fit: retry its halves (a real memory bomb
        // fails again when it is alone).
        this.server.logAll(err.logs);
        const mid = start + Math.ceil((end - start) / 2);
        const halves = [this.batchOf(texts, start, mid, call, run), this.batchOf(texts, mid, end, call, run)];
        try {
          const [a, b] = await Promise.all(halves);
          return { logs: [...a!.logs, ...b!.logs], results: a!.results.concat(b!.results) };
        } catch (e) {
          call.failed = true;
          throw e;
        }
      }
      call.failed = true;
      throw this.server.report(err);
    }
  }

  async reduce(name: string, keys: [unknown, string][] | null, values: unknown[], rereduce: boolean): Promise<unknown> {
    const [result] = await this.reduceMany(name, [{ keys, values, rereduce }]);
    return result;
  }

  async reduceMany(name: string, calls: readonly ReduceCall[]): Promise<unknown[]> {
    this.check();
    const reduce = this.reduces.get(name);
    if (reduce === undefined) throw new CouchError(404, 'not_found', `view ${name} has no JavaScript reduce`);
    const { fn, usesKeys } = reduce;
    if (calls.length === 0) return [];
    // A reduce whose source never mentions its first parameter cannot see the keys: not sending them
    // saves most of the cost of the call (parsing them in QuickJS).
    const json = JSON.stringify(calls.map((c) => [c.rereduce || !usesKeys ? null : c.keys, c.values, c.rereduce]));
    let text: string;
    try {
      text = await this.pool.run({ op: 'reduce', pid: this.pid, fn, calls: json, timeoutMs: this.server.limits.timeoutMs });
    } catch (err) {
      throw this.server.report(err);
    }
    const [logs, reply] = parseReply(text, calls.length);
    const out = reply as unknown[];
    this.server.logAll(logs);
    return out;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.pool.release(this.pid);
  }

  private check(): void {
    if (this.disposed) throw programDisposed();
  }
}
