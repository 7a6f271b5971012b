/**
 * A sandbox worker thread: runs the programs the pool sends it, one request at a time, in order;
 * every request with an id gets one reply. Map and validate_doc_update functions within the
 * interpreter's subset run in the interpreter (fast-map.ts); everything else runs in this
 * thread's QuickJS instance, which is only created once something needs it (a thread that only
 * interprets never pays for one: ~7 MB and ~30 ms each). If the WASM module itself fails (EngineCrash), the worker
 * answers and exits: the pool starts a fresh one.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { Engine, EngineCrash, SandboxFailure } from './engine.js';
import { parseMapReply, type MapOutput } from './batches.js';
import { FastMapProgram } from './fast-program.js';
import { SANDBOX_ONLY_PROTOTYPE_NAMES, type FastValidator } from './fast-map.js';
import { fastValidatorOf, validateBatch } from './fast-validate.js';
import type { ListOutput, MapEncoderModule, ProgramSpec, WorkerEvent, WorkerRequest } from './protocol.js';
import type { WasmModule } from './quickjs-module.js';

export interface WorkerSetup {
  /** One Float64: the deadline of the unit of work running (ms since epoch), 0 when idle. */
  deadline: SharedArrayBuffer;
  maxStackBytes: number;
  maxLivePrograms: number;
  /** QuickJS's WebAssembly compiled by the main thread (shared code); undefined: load it here. */
  wasm: WasmModule | undefined;
  /** URL of the map encoder module (MapEncoderModule), if any. */
  mapEncoder: string | undefined;
}

const port = parentPort!;
const setup = workerData as WorkerSetup;
const deadline = new Float64Array(setup.deadline);
const post = (event: WorkerEvent): void => port.postMessage(event);
/** Names on the sandbox's prototypes that this thread's (V8's) lack: never read as a document's data. */
const inherited: ReadonlySet<string> = new Set(SANDBOX_ONLY_PROTOTYPE_NAMES);

let engine: Engine | undefined;
/** Thrown by `sandbox()` while this thread has no QuickJS yet: the request waits for it. */
const SANDBOX_STARTING = Symbol('sandbox starting');
/**
 * Programs whose QuickJS compilation waits until QuickJS runs something of theirs: programs of
 * interpretable maps only (whose source the interpreter has parsed as one function each).
 */
const deferred = new Map<number, Extract<WorkerRequest, { op: 'load' }>>();
let encoder: MapEncoderModule | undefined;
/** Programs whose maps the interpreter runs (fast-map.ts), by pid. */
const fastPrograms = new Map<number, FastMapProgram>();
/** The number of map functions of each loaded program, by pid. */
const mapCounts = new Map<number, number>();
/** Each loaded program's spec, by pid (validators are compiled for the interpreter when first run). */
const specs = new Map<number, ProgramSpec>();
/**
 * Validators the interpreter judges, by pid and function (null: outside the subset). A program's
 * entry goes once any other of its code runs in this thread's QuickJS (a show, list, filter,
 * update or reduce may change globals or prototypes the validator would see there).
 */
const fastValidators = new Map<number, Map<number, FastValidator | null>>();
/** Pids whose other code has run in this thread's QuickJS: their validators run there too. */
const sandboxOnly = new Set<number>();

/** Validator `fn` of program `pid` for the interpreter, if it may judge it. */
function fastValidator(pid: number, fn: number): FastValidator | undefined {
  if (sandboxOnly.has(pid)) return undefined;
  const spec = specs.get(pid);
  if (!spec) return undefined;
  let byFn = fastValidators.get(pid);
  if (!byFn) fastValidators.set(pid, (byFn = new Map()));
  let compiled = byFn.get(fn);
  if (compiled === undefined) byFn.set(fn, (compiled = fastValidatorOf(spec, fn, inherited) ?? null));
  return compiled ?? undefined;
}

/** Program `pid` ran other code in QuickJS: its validators are judged there from now on. */
function ranInSandbox(pid: number): void {
  sandboxOnly.add(pid);
  fastValidators.delete(pid);
}

function forget(pid: number): void {
  specs.delete(pid);
  fastValidators.delete(pid);
  sandboxOnly.delete(pid);
}
/** Requests that arrived while the worker (or its QuickJS) was starting, in order. */
let backlog: WorkerRequest[] | undefined = [];

/** This thread's QuickJS with program `pid` compiled in it; throws SANDBOX_STARTING until it exists. */
function sandbox(pid: number): Engine {
  if (!engine) throw SANDBOX_STARTING;
  const load = deferred.get(pid);
  if (load) {
    deferred.delete(pid);
    engine.load(pid, load.spec, load.memoryLimitBytes, load.timeoutMs);
  }
  return engine;
}

function handle(req: WorkerRequest): void {
  try {
    switch (req.op) {
      case 'load': {
        const spec = JSON.parse(req.spec) as ProgramSpec;
        const fast = FastMapProgram.from(spec, inherited);
        let result = '{}';
        deferred.delete(req.pid);
        // Nothing but interpretable maps: QuickJS compiles it when it first maps a document.
        if (fast && spec.functions.length === spec.maps.length) {
          engine?.unload(req.pid);
          deferred.set(req.pid, req);
        } else {
          result = sandbox(req.pid).load(req.pid, req.spec, req.memoryLimitBytes, req.timeoutMs);
        }
        mapCounts.set(req.pid, spec.maps.length);
        forget(req.pid);
        specs.set(req.pid, spec);
        if (fast) fastPrograms.set(req.pid, fast);
        else fastPrograms.delete(req.pid);
        post({ id: req.id, ok: true, result });
        return;
      }
      case 'unload':
        forget(req.pid);
        fastPrograms.delete(req.pid);
        mapCounts.delete(req.pid);
        deferred.delete(req.pid);
        engine?.unload(req.pid);
        if (req.id !== 0) post({ id: req.id, ok: true, result: '' });
        return;
      case 'map': {
        const fast = req.interpret ? fastPrograms.get(req.pid) : undefined;
        const sandboxMap = (json: string) => {
          ranInSandbox(req.pid);
          return sandbox(req.pid).map(req.pid, json, req.timeoutMs);
        };
        const texts = typeof req.docs === 'string' ? undefined : unpackTexts(req.docs, req.lengths);
        const joined = (): string => (typeof req.docs === 'string' ? req.docs : texts!.join(','));
        if (!fast && req.encode === undefined) {
          post({ id: req.id, ok: true, result: sandboxMap(`[${joined()}]`) });
          return;
        }
        const mapCount = mapCounts.get(req.pid) ?? 0;
        const output = fast
          ? fast.mapBatch(texts ?? splitTexts(joined(), req.lengths), (docs) => parseMapReply(sandboxMap(`[${docs.join(',')}]`), docs.length, mapCount))
          : parseMapReply(sandboxMap(`[${joined()}]`), req.lengths.length, mapCount);
        post({ id: req.id, ok: true, result: req.encode === undefined ? JSON.stringify([output.logs, output.results]) : encoded(output, req.encode) });
        return;
      }
      case 'reduce':
        // A reduce runs in the maps' context and may change what they see (a global, a
        // prototype): from now on this worker's QuickJS maps this program, as it would have.
        fastPrograms.delete(req.pid);
        ranInSandbox(req.pid);
        post({ id: req.id, ok: true, result: sandbox(req.pid).reduce(req.pid, req.fn, req.calls, req.timeoutMs) });
        return;
      case 'design': {
        const judge = (items: string): string => sandbox(req.pid).design(req.pid, req.kind, items, req.fn, req.arg, req.timeoutMs);
        const validator = req.kind === 'validate' && req.interpret ? fastValidator(req.pid, req.fn) : undefined;
        if (req.kind !== 'validate') ranInSandbox(req.pid);
        post({ id: req.id, ok: true, result: validator ? validateBatch(validator, req.items, req.arg, judge) : judge(req.items) });
        return;
      }
      case 'list': {
        ranInSandbox(req.pid);
        const e = sandbox(req.pid);
        try {
          post({ id: req.id, ok: true, result: e.list(req.pid, req.fn, req.head, req.req, req.timeoutMs, listPull(req.port, req.signal)) });
        } finally {
          req.port.close();
        }
        return;
      }
    }
  } catch (err) {
    if (err === SANDBOX_STARTING) {
      startSandbox(req);
      return;
    }
    if (err instanceof SandboxFailure) {
      post({ id: req.id, ok: false, failure: err.failure, logs: err.logs });
      return;
    }
    const reason = err instanceof EngineCrash ? err.message : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    post({ id: req.id, ok: false, failure: { status: 500, error: 'os_process_error', reason: `query server crashed: ${reason}`, cause: 'crash' }, logs: [], exiting: true });
    backlog = []; // nothing more runs here
    process.exit(1);
  }
}

/**
 * The host side of a running list function, inside this worker: output is posted as it comes;
 * rows are waited for synchronously (QuickJS cannot yield), the main thread answering on the
 * list's own port and waking this thread through `signal`.
 */
function listPull(listPort: MessagePort, signal: SharedArrayBuffer): (out: string, wantRows: boolean) => string {
  const flag = new Int32Array(signal);
  return (out, wantRows) => {
    const message: ListOutput = { out, wantRows };
    listPort.postMessage(message);
    if (!wantRows) return '';
    Atomics.wait(flag, 0, 0);
    Atomics.store(flag, 0, 0);
    const answer = receiveMessageOnPort(listPort);
    return typeof answer?.message === 'string' ? answer.message : '[]';
  };
}

/** The texts of a map request's documents (`joined` by commas, of the given lengths). */
function splitTexts(joined: string, lengths: readonly number[]): string[] {
  const out = new Array<string>(lengths.length);
  for (let i = 0, at = 0; i < lengths.length; i++) {
    out[i] = joined.slice(at, at + lengths[i]!);
    at += lengths[i]! + 1;
  }
  return out;
}

function unpackTexts(packed: Uint8Array, lengths: readonly number[]): string[] {
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const out = new Array<string>(lengths.length);
  for (let i = 0, at = 0; i < lengths.length; i++) {
    out[i] = bytes.toString('utf8', at, at + lengths[i]!);
    at += lengths[i]!;
  }
  return out;
}

/** A map batch's rows through the map encoder; a failure there is the batch's, not the worker's. */
function encoded(output: MapOutput, context: unknown): { logs: string[]; rows: Uint8Array } {
  if (!encoder) throw new SandboxFailure({ status: 500, error: 'os_process_error', reason: 'no map encoder is loaded', cause: 'crash' }, []);
  try {
    return { logs: output.logs.map(String), rows: encoder.encodeMapRows(output.results, context as never) };
  } catch (err) {
    throw new SandboxFailure({ status: 500, error: 'os_process_error', reason: `encoding map rows: ${err instanceof Error ? err.message : String(err)}`, cause: 'crash' }, []);
  }
}

port.on('message', (req: WorkerRequest) => {
  if (backlog) backlog.push(req);
  else handle(req);
});

/**
 * Creates this thread's QuickJS; `first` (which found it missing) and every request after it
 * wait, in order. If it cannot be created, they fail and the worker exits (the pool replaces it).
 */
function startSandbox(first: WorkerRequest): void {
  backlog = [first];
  import('./quickjs-module.js').then((q) => q.newQuickJS(setup.wasm)).then(
    (module) => {
      engine = new Engine(module, {
        maxStackBytes: setup.maxStackBytes,
        maxLivePrograms: setup.maxLivePrograms,
        publishDeadline: (d) => { deadline[0] = d; },
      });
      drainBacklog();
    },
    (err: unknown) => {
      const reason = `query server failed to start: ${err instanceof Error ? err.message : String(err)}`;
      for (const req of backlog!) {
        if (req.id !== 0) post({ id: req.id, ok: false, failure: { status: 500, error: 'os_process_error', reason, cause: 'crash' }, logs: [], exiting: true });
      }
      process.exit(1);
    },
  );
}

function drainBacklog(): void {
  const waiting = backlog!;
  backlog = undefined;
  for (let i = 0; i < waiting.length; i++) {
    handle(waiting[i]!);
    // (handle sets a backlog when the request started the sandbox: the rest wait behind it)
    const started = backlog as WorkerRequest[] | undefined;
    if (started) {
      started.push(...waiting.slice(i + 1));
      return;
    }
  }
}

// Ready once the map encoder is in: QuickJS comes when something needs it.
(setup.mapEncoder ? import(setup.mapEncoder) as Promise<MapEncoderModule> : Promise.resolve(undefined)).then(
  (mapEncoder) => {
    encoder = mapEncoder;
    post({ ready: true });
    drainBacklog();
  },
  (err: unknown) => {
    post({ ready: false, reason: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  },
);
