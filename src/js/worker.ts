/**
 * A sandbox worker thread: one QuickJS WASM instance running the programs the pool sends it.
 * Requests are handled one at a time, in order; every request with an id gets one reply.
 * If the WASM module itself fails (EngineCrash), the worker answers and exits: the pool starts
 * a fresh one.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from 'quickjs-emscripten';
import { Engine, EngineCrash, SandboxFailure } from './engine.js';
import { parseMapReply, type MapOutput } from './batches.js';
import { FastMapProgram } from './fast-program.js';
import type { ListOutput, MapEncoderModule, ProgramSpec, WorkerEvent, WorkerRequest } from './protocol.js';

/** A compiled WebAssembly.Module (the WebAssembly global is not in this project's TypeScript lib). */
export type WasmModule = object;

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

let engine: Engine | undefined;
let encoder: MapEncoderModule | undefined;
/** Programs whose maps the interpreter runs (fast-map.ts), by pid. */
const fastPrograms = new Map<number, FastMapProgram>();
/** The number of map functions of each loaded program, by pid. */
const mapCounts = new Map<number, number>();
/** Property names on the sandbox's own prototypes: never read as a document's data. */
let inherited: ReadonlySet<string> = new Set();
let backlog: WorkerRequest[] | undefined = [];

function handle(req: WorkerRequest): void {
  const e = engine!;
  try {
    switch (req.op) {
      case 'load': {
        const result = e.load(req.pid, req.spec, req.memoryLimitBytes, req.timeoutMs);
        const spec = JSON.parse(req.spec) as ProgramSpec;
        mapCounts.set(req.pid, spec.maps.length);
        const fast = FastMapProgram.from(spec, inherited);
        if (fast) fastPrograms.set(req.pid, fast);
        else fastPrograms.delete(req.pid);
        post({ id: req.id, ok: true, result });
        return;
      }
      case 'unload':
        fastPrograms.delete(req.pid);
        mapCounts.delete(req.pid);
        e.unload(req.pid);
        if (req.id !== 0) post({ id: req.id, ok: true, result: '' });
        return;
      case 'map': {
        const fast = req.interpret ? fastPrograms.get(req.pid) : undefined;
        const sandbox = (json: string) => e.map(req.pid, json, req.timeoutMs);
        const texts = typeof req.docs === 'string' ? undefined : unpackTexts(req.docs, req.lengths);
        const joined = (): string => (typeof req.docs === 'string' ? req.docs : texts!.join(','));
        if (!fast && req.encode === undefined) {
          post({ id: req.id, ok: true, result: sandbox(`[${joined()}]`) });
          return;
        }
        const mapCount = mapCounts.get(req.pid) ?? 0;
        const output = fast
          ? fast.mapBatch(texts ?? splitTexts(joined(), req.lengths), (docs) => parseMapReply(sandbox(`[${docs.join(',')}]`), docs.length, mapCount))
          : parseMapReply(sandbox(`[${joined()}]`), req.lengths.length, mapCount);
        post({ id: req.id, ok: true, result: req.encode === undefined ? JSON.stringify([output.logs, output.results]) : encoded(output, req.encode) });
        return;
      }
      case 'reduce':
        // A reduce runs in the maps' context and may change what they see (a global, a
        // prototype): from now on this worker's QuickJS maps this program, as it would have.
        fastPrograms.delete(req.pid);
        post({ id: req.id, ok: true, result: e.reduce(req.pid, req.fn, req.calls, req.timeoutMs) });
        return;
      case 'design':
        post({ id: req.id, ok: true, result: e.design(req.pid, req.kind, req.items, req.fn, req.arg, req.timeoutMs) });
        return;
      case 'list':
        try {
          post({ id: req.id, ok: true, result: e.list(req.pid, req.fn, req.head, req.req, req.timeoutMs, listPull(req.port, req.signal)) });
        } finally {
          req.port.close();
        }
        return;
    }
  } catch (err) {
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

/** Own property names of the sandbox's Object, Array, String, Number and Boolean prototypes. */
function prototypeNames(module: QuickJSWASMModule): Set<string> {
  const ctx = module.newContext();
  try {
    const names = ctx.unwrapResult(ctx.evalCode('[Object, Array, String, Number, Boolean].map(function (c) { return Object.getOwnPropertyNames(c.prototype); })'));
    const dumped = ctx.dump(names) as string[][];
    names.dispose();
    return new Set(dumped.flat());
  } finally {
    ctx.dispose();
  }
}

port.on('message', (req: WorkerRequest) => {
  if (backlog) backlog.push(req);
  else handle(req);
});

const variant = setup.wasm ? newVariant(RELEASE_SYNC, { wasmModule: setup.wasm as never }) : RELEASE_SYNC;
Promise.all([newQuickJSWASMModule(variant), setup.mapEncoder ? import(setup.mapEncoder) as Promise<MapEncoderModule> : undefined]).then(
  ([module, mapEncoder]) => {
    encoder = mapEncoder;
    inherited = prototypeNames(module);
    engine = new Engine(module, {
      maxStackBytes: setup.maxStackBytes,
      maxLivePrograms: setup.maxLivePrograms,
      publishDeadline: (d) => { deadline[0] = d; },
    });
    post({ ready: true });
    const waiting = backlog!;
    backlog = undefined;
    for (const req of waiting) handle(req);
  },
  (err: unknown) => {
    post({ ready: false, reason: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  },
);
