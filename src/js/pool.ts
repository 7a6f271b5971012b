/**
 * The sandbox workers, seen from the main thread: spawning, dispatching, watching, replacing.
 *
 * - Jobs wait in one queue and go to the worker with the fewest in flight (at most
 *   MAX_IN_FLIGHT each, so a worker always has its next batch while the main thread handles
 *   the previous reply).
 * - Programs are compiled into a worker the first time a job of theirs goes there.
 * - `_list` jobs hold a worker while their client reads (the function blocks on the host for
 *   rows), so they never go to the core workers: they run in list workers of their own, started
 *   on demand (at most `maxListWorkers`), one list each, and stopped after a while idle. The core
 *   workers stay free for view builds, reduces and validation whatever lists are being read.
 * - A watchdog reads each worker's published deadline (shared memory): a worker still inside
 *   the sandbox well past it (something the QuickJS interrupt handler could not stop) is
 *   terminated. A worker that dies fails the job it was running with os_process_error and is
 *   replaced; the jobs queued behind it go to the others.
 */
import { Worker, type MessagePort } from 'node:worker_threads';
import type { DesignKind } from './engine.js';
import { CouchError } from '../errors.js';
import type { EncodedMapRows, FailureCause, WorkerEvent, WorkerRequest, WorkerResult } from './protocol.js';
import type { WorkerSetup } from './worker.js';
import { compileQuickJS, type WasmModule } from './quickjs-module.js';
import { InlineRunner } from './inline.js';

/** Thrown for a job that failed in the sandbox: a CouchError, plus why and the logs it made. */
export class SandboxError extends CouchError {
  constructor(status: number, error: string, reason: string, readonly kind: FailureCause, readonly logs: readonly string[] = []) {
    super(status, error, reason);
  }
}

/**
 * A program released while a request still used it: the server is restarting (or the program
 * was evicted from a full cache). Not the design document's fault: the client retries a 503.
 */
export function programDisposed(): SandboxError {
  return new SandboxError(503, 'service_unavailable', 'the design document program was disposed', 'crash');
}

export interface PoolOptions {
  workers: number;
  maxStackBytes: number;
  /** Native stack of each worker thread; must be far above maxStackBytes (QuickJS frames in WASM use much more native stack). */
  stackSizeMb: number;
  maxLivePrograms: number;
  /** How long past a published deadline a worker may stay inside the sandbox before it is terminated. */
  graceMs: () => number;
  /** The map encoder module the workers load (protocol.ts MapEncoderModule), if any. */
  mapEncoder?: URL;
  /** Most list workers at once (default 4); further lists wait for one. */
  maxListWorkers?: number;
}

type JobRequest = (
  | { op: 'load'; pid: number }
  | { op: 'map'; pid: number; docs: string | Uint8Array; lengths: number[]; interpret: boolean; encode?: unknown; timeoutMs: number }
  | { op: 'reduce'; pid: number; fn: number; calls: string; timeoutMs: number }
  | { op: 'design'; pid: number; kind: DesignKind; fn: number; items: string; arg: string; interpret: boolean; timeoutMs: number }
  | { op: 'list'; pid: number; fn: number; head: string; req: string; timeoutMs: number; port: MessagePort; signal: SharedArrayBuffer }
) & {
  /** Asked before the job is sent to a worker: true drops it (its caller already failed). */
  abandoned?: () => boolean;
};

interface Job {
  request: JobRequest;
  resolve: (result: WorkerResult) => void;
  reject: (err: SandboxError) => void;
}

interface InFlight {
  id: number;
  pid: number;
  job: Job | undefined; // undefined: a lazy program load
}

interface Program {
  spec: string;
  memoryLimitBytes: number;
  timeoutMs: () => number;
}

const MAX_IN_FLIGHT = 2;
const MAX_FAILED_STARTS = 3;
const DEFAULT_LIST_WORKERS = 4;
/** An idle list worker is stopped after this long. */
const LIST_WORKER_IDLE_MS = 30_000;
/**
 * A worker's V8 young generation, in MB. A worker's live data is one batch in flight, but V8
 * grew its young generation to 8 MB under a map batch's allocation rate (measured); capped
 * here, the two map workers' peak RSS over a 100k-document view build fell by ~30 MB (318 to
 * 288 MB for the whole server, 4 runs each) with no change in build speed.
 */
const WORKER_YOUNG_GENERATION_MB = 3;

class Slot {
  worker: Worker | undefined;
  ready = false;
  inFlight: InFlight[] = [];
  loaded = new Set<number>();
  /** Shared with the worker (a fresh one per worker, so a dying worker cannot write into its successor's). */
  deadline = new Float64Array(new SharedArrayBuffer(8));
  failedStarts = 0;
  dead = false;
  /** The worker said it is exiting after its last reply: nothing of its is running any more. */
  exiting = false;
  /** A list worker (see the pool): not replaced when it ends. */
  forLists = false;
  idleSince = Date.now();
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly listSlots: Slot[] = [];
  /** List workers that failed to start in a row (past MAX_FAILED_STARTS, queued lists fail). */
  private listStartFailures = 0;
  private readonly queue: Job[] = [];
  private readonly programs = new Map<number, Program>();
  private nextId = 1;
  private nextPid = 1;
  private closed = false;
  private readonly watchdog: NodeJS.Timeout;

  /** Small batches of quick design functions run on this thread (see inline.ts). */
  readonly inline: InlineRunner;

  private constructor(
    private readonly options: PoolOptions,
    /** QuickJS compiled once here and shared by every worker and replacement worker (V8 optimises it once). */
    private readonly wasm: WasmModule | undefined,
  ) {
    this.inline = new InlineRunner(wasm);
    for (let i = 0; i < Math.max(1, options.workers); i++) this.slots.push(new Slot());
    this.watchdog = setInterval(() => this.watch(), 100);
    this.watchdog.unref();
  }

  static async create(options: PoolOptions): Promise<WorkerPool> {
    const pool = new WorkerPool(options, await compileQuickJS());
    try {
      await Promise.all(pool.slots.map((slot) => pool.spawn(slot)));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  get size(): number {
    return this.slots.length;
  }

  /**
   * Registers a program and compiles it in one worker; the others compile it when they first
   * need it, or at once with `everywhere` (a view's program: every worker maps its first batch).
   */
  async compile(spec: string, memoryLimitBytes: number, timeoutMs: () => number, options: { everywhere?: boolean } = {}): Promise<{ pid: number; info: string }> {
    const pid = this.nextPid++;
    this.programs.set(pid, { spec, memoryLimitBytes, timeoutMs });
    try {
      const loaded = this.run({ op: 'load', pid });
      if (options.everywhere) this.preload(pid);
      return { pid, info: await loaded };
    } catch (err) {
      this.release(pid);
      throw err;
    }
  }

  /**
   * Loads a program in every core worker that has not loaded it, alongside the load whose reply
   * compile() awaits. A worker where it fails to load fails it again with its first job.
   */
  private preload(pid: number): void {
    const program = this.programs.get(pid);
    if (!program) return;
    for (const slot of this.slots) {
      if (!slot.ready || !slot.worker || slot.loaded.has(pid)) continue;
      slot.loaded.add(pid);
      this.send(slot, { op: 'load', id: 0, pid, spec: program.spec, memoryLimitBytes: program.memoryLimitBytes, timeoutMs: program.timeoutMs() }, undefined);
    }
  }

  /** A registered program's source, as workers load it. */
  specOf(pid: number): string | undefined {
    return this.programs.get(pid)?.spec;
  }

  release(pid: number): void {
    this.inline.release(pid);
    if (!this.programs.delete(pid)) return;
    for (const slot of [...this.slots, ...this.listSlots]) {
      if (!slot.loaded.delete(pid) || !slot.worker || !slot.ready) continue;
      this.post(slot, { op: 'unload', id: 0, pid });
    }
  }

  /** Runs a job whose reply is text (JSON). */
  async run(request: JobRequest): Promise<string> {
    const result = await this.submit(request);
    if (typeof result !== 'string') throw malformed();
    return result;
  }

  /** Runs a map job with an encoder context: its rows come back encoded. */
  async runEncoded(request: JobRequest & { op: 'map'; encode: unknown }): Promise<EncodedMapRows> {
    const result = await this.submit(request);
    if (typeof result === 'string' || !(result.rows instanceof Uint8Array) || !Array.isArray(result.logs)) throw malformed();
    return result;
  }

  private submit(request: JobRequest): Promise<WorkerResult> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise<WorkerResult>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    for (const job of this.queue.splice(0)) job.reject(closedError());
    const exits: Promise<unknown>[] = [];
    for (const slot of [...this.slots, ...this.listSlots]) {
      for (const f of slot.inFlight.splice(0)) f.job?.reject(closedError());
      const w = slot.worker;
      slot.worker = undefined;
      if (w) exits.push(w.terminate());
    }
    await Promise.all(exits);
  }

  private spawn(slot: Slot): Promise<void> {
    slot.deadline = new Float64Array(new SharedArrayBuffer(8));
    const setup: WorkerSetup = {
      deadline: slot.deadline.buffer as SharedArrayBuffer,
      maxStackBytes: this.options.maxStackBytes,
      maxLivePrograms: this.options.maxLivePrograms,
      wasm: this.wasm,
      mapEncoder: this.options.mapEncoder?.href,
    };
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: setup,
      resourceLimits: { stackSizeMb: this.options.stackSizeMb, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      stdout: false,
      stderr: false,
    });
    slot.worker = worker;
    slot.ready = false;
    slot.exiting = false;
    slot.loaded.clear();
    slot.deadline[0] = 0;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (event: WorkerEvent) => {
        if (slot.worker !== worker) return;
        if ('ready' in event) {
          if (event.ready) {
            started = true;
            slot.ready = true;
            slot.failedStarts = 0;
            if (slot.forLists) this.listStartFailures = 0;
            resolve();
            this.pump();
            if (slot.inFlight.length === 0) worker.unref();
          } else {
            reject(new SandboxError(500, 'os_process_error', `query server failed to start: ${event.reason}`, 'crash'));
          }
          return;
        }
        this.reply(slot, event);
      });
      worker.on('error', () => { /* followed by 'exit' */ });
      worker.on('exit', (code) => {
        if (slot.worker !== worker) return; // terminated on purpose (close) or already replaced
        if (!started) {
          reject(new SandboxError(500, 'os_process_error', `query server failed to start (exit ${code})`, 'crash'));
          slot.failedStarts++;
        }
        this.died(slot, started ? `query server exited (${code})` : 'query server failed to start');
      });
    });
  }

  /** A worker ended: fail what it was running, requeue what it had not started, replace it. */
  private died(slot: Slot, reason: string, cause: FailureCause = 'crash', error = 'os_process_error'): void {
    const inFlight = slot.inFlight.splice(0);
    slot.worker = undefined;
    slot.ready = false;
    slot.loaded.clear();
    slot.deadline[0] = 0;
    if (!slot.exiting) {
      const running = inFlight.shift();
      if (running) {
        const failure = () => new SandboxError(500, error, reason, cause);
        running.job?.reject(failure());
        // A program whose loading killed the worker fails the jobs that waited for it (rather
        // than taking the next worker down with it).
        if (!running.job) {
          for (let i = inFlight.length - 1; i >= 0; i--) {
            if (inFlight[i]!.pid === running.pid) inFlight.splice(i, 1)[0]!.job?.reject(failure());
          }
        }
      }
    }
    for (const f of inFlight.reverse()) {
      if (!f.job) continue;
      // A list's port went to the dead worker: it cannot be sent again.
      if (f.job.request.op === 'list') f.job.reject(new SandboxError(500, error, reason, cause));
      else this.queue.unshift(f.job);
    }
    if (this.closed) return;
    if (slot.forLists) {
      // List workers are started on demand: this one is just gone.
      this.listSlots.splice(this.listSlots.indexOf(slot), 1);
      if (slot.failedStarts > 0 && ++this.listStartFailures >= MAX_FAILED_STARTS) {
        this.listStartFailures = 0;
        for (let i = this.queue.length - 1; i >= 0; i--) {
          if (this.queue[i]!.request.op === 'list') this.queue.splice(i, 1)[0]!.reject(new SandboxError(500, 'os_process_error', `query server cannot start: ${reason}`, 'crash'));
        }
      }
      this.pump();
      return;
    }
    if (slot.failedStarts >= MAX_FAILED_STARTS) {
      slot.dead = true;
      if (this.slots.every((s) => s.dead)) {
        for (const job of this.queue.splice(0)) job.reject(new SandboxError(500, 'os_process_error', `query server cannot start: ${reason}`, 'crash'));
      }
      return;
    }
    this.spawn(slot).catch(() => { /* counted in failedStarts; retried by the exit handler */ });
    this.pump();
  }

  private watch(): void {
    const now = Date.now();
    const grace = this.options.graceMs();
    for (const slot of [...this.slots, ...this.listSlots]) {
      const d = slot.deadline[0]!;
      const w = slot.worker;
      if (w && d !== 0 && now > d + grace) {
        void w.terminate(); // its exit event is ignored: died() replaces slot.worker
        this.died(slot, 'OS process timed out.', 'timeout');
      } else if (w && slot.forLists && slot.ready && slot.inFlight.length === 0 && now - slot.idleSince > LIST_WORKER_IDLE_MS) {
        slot.worker = undefined;
        this.listSlots.splice(this.listSlots.indexOf(slot), 1);
        void w.terminate();
      }
    }
  }

  /** Sends queued jobs to workers: lists to idle list workers (started as needed), the rest to the core workers. */
  private pump(): void {
    let waitingLists = 0;
    for (let i = 0; i < this.queue.length;) {
      const job = this.queue[i]!;
      const isList = job.request.op === 'list';
      let best: Slot | undefined;
      if (isList) {
        best = this.listSlots.find((s) => s.ready && s.worker && s.inFlight.length === 0);
      } else {
        for (const slot of this.slots) {
          if (!slot.ready || !slot.worker || slot.inFlight.length >= MAX_IN_FLIGHT) continue;
          if (!best || slot.inFlight.length < best.inFlight.length) best = slot;
        }
      }
      if (!best) {
        if (!isList) return; // no core worker can take anything more now
        waitingLists++;
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.dispatch(best, job);
    }
    // Start list workers for the lists still waiting (those starting count against them).
    const starting = this.listSlots.filter((s) => !s.ready).length;
    const maxLists = this.options.maxListWorkers ?? DEFAULT_LIST_WORKERS;
    for (let n = starting; n < waitingLists && this.listSlots.length < maxLists; n++) {
      const slot = new Slot();
      slot.forLists = true;
      this.listSlots.push(slot);
      this.spawn(slot).catch(() => { /* counted by died() */ });
    }
  }

  private dispatch(slot: Slot, job: Job): void {
    const r = job.request;
    if (r.abandoned?.()) {
      job.reject(new SandboxError(500, 'os_process_error', 'abandoned', 'crash'));
      return;
    }
    const program = this.programs.get(r.pid);
    if (!program) {
      job.reject(programDisposed());
      return;
    }
    if (r.op === 'load') {
      slot.loaded.add(r.pid);
      this.send(slot, { op: 'load', id: 0, pid: r.pid, spec: program.spec, memoryLimitBytes: program.memoryLimitBytes, timeoutMs: program.timeoutMs() }, job);
      return;
    }
    if (!slot.loaded.has(r.pid)) {
      slot.loaded.add(r.pid);
      this.send(slot, { op: 'load', id: 0, pid: r.pid, spec: program.spec, memoryLimitBytes: program.memoryLimitBytes, timeoutMs: program.timeoutMs() }, undefined);
    }
    switch (r.op) {
      case 'map': this.send(slot, { op: 'map', id: 0, pid: r.pid, docs: r.docs, lengths: r.lengths, interpret: r.interpret, encode: r.encode, timeoutMs: r.timeoutMs }, job); break;
      case 'reduce': this.send(slot, { op: 'reduce', id: 0, pid: r.pid, fn: r.fn, calls: r.calls, timeoutMs: r.timeoutMs }, job); break;
      case 'design':
        this.send(slot, { op: 'design', id: 0, pid: r.pid, kind: r.kind, fn: r.fn, items: r.items, arg: r.arg, interpret: r.interpret, timeoutMs: r.timeoutMs }, job);
        break;
      case 'list':
        this.send(slot, { op: 'list', id: 0, pid: r.pid, fn: r.fn, head: r.head, req: r.req, timeoutMs: r.timeoutMs, port: r.port, signal: r.signal }, job, [r.port]);
        break;
    }
  }

  private send(slot: Slot, request: WorkerRequest, job: Job | undefined, transfer?: MessagePort[]): void {
    const id = this.nextId++;
    request.id = id;
    slot.inFlight.push({ id, pid: request.pid, job });
    slot.worker!.ref();
    this.post(slot, request, transfer);
  }

  private post(slot: Slot, request: WorkerRequest, transfer?: MessagePort[]): void {
    slot.worker!.postMessage(request, transfer);
  }

  private reply(slot: Slot, event: Exclude<WorkerEvent, { ready: boolean }>): void {
    const at = slot.inFlight.findIndex((f) => f.id === event.id);
    if (at < 0) return;
    const [f] = slot.inFlight.splice(at, 1);
    if (slot.inFlight.length === 0) {
      slot.worker?.unref();
      slot.idleSince = Date.now();
    }
    if (event.ok) f!.job?.resolve(event.result);
    else {
      const e = event.failure;
      if (event.exiting) slot.exiting = true;
      // A program whose load failed in this worker is not there: a later job loads it again.
      if (!f!.job || f!.job.request.op === 'load') slot.loaded.delete(f!.pid);
      f!.job?.reject(new SandboxError(e.status, e.error, e.reason, e.cause, event.logs));
    }
    this.pump();
  }
}

function malformed(): SandboxError {
  return new SandboxError(500, 'os_process_error', 'the sandbox returned malformed output', 'crash');
}

function closedError(): SandboxError {
  return new SandboxError(500, 'os_process_error', 'the query server is closed', 'crash');
}
