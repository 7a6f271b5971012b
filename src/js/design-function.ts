/**
 * One design-document function (validate_doc_update, a filter, show, list, update or rewrite) compiled in
 * the sandbox, with `require()` resolving in the whole design document and `this` bound to it,
 * as CouchDB's query server does for everything but views.
 *
 * Arguments cross as JSON text. Errors a function raises come back as CouchErrors with
 * CouchDB's status (`throw(['error', 'not_found', 'reason'])` → 404); a runtime exception is a
 * 500 `render_error` (shows, lists, updates) or the filter batch's error; timeouts and memory
 * blow-ups are 500 `os_process_error`, as for views.
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { CouchError } from '../errors.js';
import { programDisposed, type WorkerPool } from './pool.js';
import type { ListOutput } from './protocol.js';
import type { DesignKind } from './engine.js';
import { batchRanges, invalidOutput, parseReply } from './batches.js';

/** What a show, list head or update answers: CouchDB's response object. */
export interface RenderResponse {
  code?: unknown;
  headers?: unknown;
  body?: unknown;
  json?: unknown;
  base64?: unknown;
}

/** A validate_doc_update verdict for one document: null when it passes. */
export interface ValidationFailure {
  error: string;
  reason: unknown;
  /** Set for errors other than forbidden/unauthorized (a function that crashed). */
  status?: number;
}

/** Output a list function hands over: the response head (first time only) and chunks of body. */
export interface ListChunk {
  start?: RenderResponse;
  chunks: string[];
}

/** How a list function reaches its rows and its client. */
export interface ListIo {
  /** Output in the order sent; the next row batch is asked for only once this settles (backpressure). */
  output(chunk: ListChunk): Promise<void> | void;
  /** The next rows as a JSON array text; `[]` at the end. */
  rows(): Promise<string>;
}

/** What DesignFunction needs of the query server. */
export interface DesignHost {
  pool: WorkerPool;
  limits: { timeoutMs: number; maxBatchDocs: number; maxBatchBytes: number };
  /** Whether validators within the interpreter's subset run there (as maps do: `map_interpreter`). */
  interpret: boolean;
  report(err: unknown): CouchError;
  logAll(messages: readonly unknown[]): void;
}

/** Validations waiting for a worker, with the same user context: they go to the sandbox as one batch. */
interface QueuedValidation {
  items: readonly string[];
  resolve: (verdicts: (ValidationFailure | null)[]) => void;
  reject: (err: unknown) => void;
}

/** Largest batch of validations run on the server's own thread (see inline.ts). */
const INLINE_MAX_ITEMS = 8;

export class DesignFunction {
  private disposed = false;
  private validationsInFlight = 0;
  private readonly queuedValidations = new Map<string, QueuedValidation[]>();

  constructor(private readonly host: DesignHost, private readonly pid: number) {}

  /**
   * validate_doc_update over many `[newDoc, oldDoc]` JSON texts, all with the same `userCtx` and
   * `secObj` (`context`: JSON `[userCtx, secObj]`), in one round trip per batch.
   */
  validate(items: readonly string[], context: string): Promise<(ValidationFailure | null)[]> {
    // Concurrent single-document writes would each cost a sandbox round trip: while every worker
    // has a validation of this function, later ones wait and then go together (as group commit).
    if (this.validationsInFlight < this.host.pool.size) return this.runValidation(items, context);
    return new Promise((resolve, reject) => {
      const queue = this.queuedValidations.get(context) ?? [];
      queue.push({ items, resolve, reject });
      this.queuedValidations.set(context, queue);
    });
  }

  private async runValidation(items: readonly string[], context: string): Promise<(ValidationFailure | null)[]> {
    this.validationsInFlight++;
    try {
      const out = await this.batches('validate', items, context);
      return out.map((v) => {
        if (v === null) return null;
        const f = v as { error?: unknown; reason?: unknown; status?: unknown };
        return { error: String(f.error), reason: f.reason, ...(typeof f.status === 'number' ? { status: f.status } : {}) };
      });
    } finally {
      this.validationsInFlight--;
      this.flushValidations();
    }
  }

  private flushValidations(): void {
    while (this.validationsInFlight < this.host.pool.size && this.queuedValidations.size > 0) {
      const [context, waiting] = this.queuedValidations.entries().next().value!;
      this.queuedValidations.delete(context);
      this.runValidation(waiting.flatMap((w) => w.items), context).then(
        (verdicts) => {
          let at = 0;
          for (const w of waiting) {
            w.resolve(verdicts.slice(at, at + w.items.length));
            at += w.items.length;
          }
        },
        (err: unknown) => { for (const w of waiting) w.reject(err); },
      );
    }
  }

  /** The filter over documents (JSON texts) with one request object: whether each passes. */
  async filter(docs: readonly string[], req: string): Promise<boolean[]> {
    return (await this.batches('filter', docs, req)).map((v) => v === true);
  }

  async show(doc: string, req: string): Promise<RenderResponse> {
    const [resp] = await this.batch('show', `[[${doc},${req}]]`, '', 1);
    if (resp === null || typeof resp !== 'object') throw renderError('undefined response from show function');
    return resp as RenderResponse;
  }

  /**
   * A rewrite function's answer (CouchDB 2): `{path, query?, method, headers?, body?}` to route
   * the request, or `{code, headers?, body?}` to answer it.
   */
  async rewrite(req: string): Promise<Record<string, unknown>> {
    const [result] = await this.batch('rewrite', `[[${req}]]`, '', 1);
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      throw new CouchError(500, 'rewrite_error', 'incomprehensible response from rewrite function');
    }
    return result as Record<string, unknown>;
  }

  /** `[new document or null, response]`. */
  async update(doc: string, req: string): Promise<[unknown, RenderResponse]> {
    const [result] = await this.batch('update', `[[${doc},${req}]]`, '', 1);
    if (!Array.isArray(result) || result.length !== 2 || result[1] === null || typeof result[1] !== 'object') {
      throw renderError('undefined response from update function');
    }
    return [result[0], result[1] as RenderResponse];
  }

  /**
   * Runs the list function: its output goes to `io.output` as it sends, its getRow() calls are
   * answered from `io.rows()`. Resolves with the output not yet flushed.
   */
  async list(head: string, req: string, io: ListIo): Promise<ListChunk> {
    this.check();
    const { port1, port2 } = new MessageChannel();
    const signal = new SharedArrayBuffer(4);
    const flag = new Int32Array(signal);
    let chain: Promise<void> = Promise.resolve();
    let failure: unknown;
    const answer = (rows: string) => {
      port1.postMessage(rows);
      Atomics.store(flag, 0, 1);
      Atomics.notify(flag, 0);
    };
    const handle = (m: ListOutput) => {
      chain = chain.then(async () => {
        try {
          if (failure === undefined) await io.output(parseChunk(m.out));
          if (m.wantRows) answer(failure === undefined ? await io.rows() : '[]');
        } catch (err) {
          failure ??= err;
          if (m.wantRows) answer('[]'); // the function sees the end of the rows and finishes
        }
      });
    };
    port1.on('message', handle);
    let text: string;
    try {
      text = await this.host.pool.run({
        op: 'list', pid: this.pid, fn: 0, head, req, timeoutMs: this.host.limits.timeoutMs, port: port2, signal,
      });
    } catch (err) {
      throw this.host.report(err);
    } finally {
      // Output posted before the reply may not have been delivered as events yet.
      for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) handle(m.message as ListOutput);
      await chain;
      port1.close();
    }
    if (failure !== undefined) throw failure;
    const [logs, out] = parseReply(text, undefined);
    this.host.logAll(logs);
    return parseChunk(JSON.stringify(out));
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.host.pool.release(this.pid);
  }

  /** Items split into batches (by count and bytes) run on the workers at once; results in order. */
  private async batches(kind: 'validate' | 'filter', items: readonly string[], arg: string): Promise<unknown[]> {
    if (items.length === 0) return [];
    const { maxBatchDocs, maxBatchBytes } = this.host.limits;
    const runs = batchRanges(items.map((item) => item.length), maxBatchDocs, maxBatchBytes)
      .map(([start, end]) => this.batch(kind, `[${items.slice(start, end).join(',')}]`, arg, end - start));
    return (await Promise.all(runs)).flat();
  }

  private async batch(kind: DesignKind, items: string, arg: string, count: number): Promise<unknown[]> {
    this.check();
    // A few validations (single-document writes) run on this thread when they are quick and
    // clean: a function that crashed here may have met this thread's smaller limits (stack,
    // memory), so its verdict comes from a sandbox thread.
    const inline = kind === 'validate' && count <= INLINE_MAX_ITEMS
      ? this.host.pool.inline.run(this.pid, () => this.host.pool.specOf(this.pid), kind, items, 0, arg)
      : undefined;
    const clean = inline === undefined ? undefined : cleanVerdicts(inline, count);
    if (clean) {
      this.host.logAll(clean[0]);
      return clean[1];
    }
    let text: string;
    try {
      text = await this.host.pool.run({ op: 'design', pid: this.pid, kind, fn: 0, items, arg, interpret: this.host.interpret, timeoutMs: this.host.limits.timeoutMs });
    } catch (err) {
      throw this.host.report(err);
    }
    const [logs, out] = parseReply(text, count);
    this.host.logAll(logs);
    return out as unknown[];
  }

  private check(): void {
    if (this.disposed) throw programDisposed();
  }
}

/**
 * A validation answer (JSON `[logs, verdicts]`) as logs and verdicts, unless it is malformed or
 * holds a verdict of a function that crashed.
 */
function cleanVerdicts(text: string, count: number): [unknown[], unknown[]] | undefined {
  let reply: [unknown[], unknown];
  try {
    reply = parseReply(text, count);
  } catch {
    return undefined;
  }
  const verdicts = reply[1] as unknown[];
  const crashed = verdicts.some((v) => v !== null && typeof v === 'object' && (v as { status?: unknown }).status !== undefined);
  return crashed ? undefined : [reply[0], verdicts];
}

function renderError(reason: string): CouchError {
  return new CouchError(500, 'render_error', reason);
}

function parseChunk(text: string): ListChunk {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw invalidOutput();
  }
  const o = v as { start?: unknown; chunks?: unknown } | null;
  if (!o || typeof o !== 'object' || !Array.isArray(o.chunks)) throw invalidOutput();
  const chunk: ListChunk = { chunks: o.chunks.map(String) };
  if (o.start !== undefined && o.start !== null && typeof o.start === 'object') chunk.start = o.start as RenderResponse;
  return chunk;
}

