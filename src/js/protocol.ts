/**
 * Messages between the query server (main thread) and its sandbox workers.
 *
 * Payloads that come from or go into the sandbox travel as JSON text: one string per batch
 * in each direction, so neither thread walks object graphs per document.
 */

import type { MessagePort } from 'node:worker_threads';
import type { DesignKind } from './engine.js';

/** What a sandbox program is: its functions and the object `require()` resolves paths in. */
export interface ProgramSpec {
  /** The root of CommonJS paths: `{views: {lib}}` for views (CouchDB), the whole ddoc for shows etc. */
  requireRoot: unknown;
  /** Every function of the program; `require` says whether `require()` is in its scope (CouchDB: maps yes, reduces no). */
  functions: { source: unknown; require: boolean }[];
  /** Indexes into `functions` that a map batch runs, in result order. */
  maps: number[];
}

export type WorkerRequest =
  | { op: 'load'; id: number; pid: number; spec: string; memoryLimitBytes: number; timeoutMs: number }
  | { op: 'unload'; id: number; pid: number }
  /**
   * `docs`: the documents' JSON texts joined by commas with `lengths` each text's length (one
   * flat string posts several times faster than an array of concatenated ones), or packed end
   * to end as UTF-8 with `lengths` in bytes (documents read from the store: the bytes are
   * copied, never decoded, on the host). Reply: JSON `[logs, [[rows per map] per doc]]`, or with
   * `encode` (the map encoder's context) an EncodedMapRows. `interpret`: maps within the
   * interpreter's subset run there (fast-map.ts).
   */
  | { op: 'map'; id: number; pid: number; docs: string | Uint8Array; lengths: number[]; interpret: boolean; encode?: unknown; timeoutMs: number }
  /** `calls`: a JSON array of `[keys, values, rereduce]` for function `fn`. Reply: JSON `[logs, [result per call]]`. */
  | { op: 'reduce'; id: number; pid: number; fn: number; calls: string; timeoutMs: number }
  /**
   * A design-document function over `items` (JSON array), `arg` JSON (the filter's request).
   * Reply: JSON `[logs, [result per item]]`. `interpret`: a validator within the interpreter's
   * subset may judge there (fast-validate.ts).
   */
  | { op: 'design'; id: number; pid: number; kind: DesignKind; fn: number; items: string; arg: string; interpret: boolean; timeoutMs: number }
  /**
   * A `_list` function. The worker posts `ListOutput` on `port` as the function sends; when it
   * wants rows it waits on `signal` (Int32 0 → 1) and takes the host's answer (a JSON array of
   * rows, empty at the end) from `port` synchronously. Reply: JSON `[logs, {start?, chunks}]`.
   */
  | { op: 'list'; id: number; pid: number; fn: number; head: string; req: string; timeoutMs: number; port: MessagePort; signal: SharedArrayBuffer };

/** What a running list function hands to the host: output (`{start?, chunks}` JSON), and whether it now waits for rows. */
export interface ListOutput {
  out: string;
  wantRows: boolean;
}

/** Why a sandbox failed, for the caller to react (e.g. split a batch that ran out of memory). */
export type FailureCause = 'timeout' | 'memory' | 'crash' | 'function';

export interface WorkerError {
  status: number;
  error: string;
  reason: string;
  cause: FailureCause;
}

/** A map batch's logs, and its rows as the map encoder wrote them. */
export interface EncodedMapRows {
  logs: string[];
  rows: Uint8Array;
}

/**
 * What a map encoder module exports (QueryServer's `mapEncoder`): it runs in the workers and
 * turns a batch's rows (`results[d][m]`: map function m's rows for document d) into the caller's
 * own bytes, given the context the caller sent with the batch.
 */
export interface MapEncoderModule {
  encodeMapRows(results: [unknown, unknown][][][], context: never): Uint8Array;
}

export type WorkerResult = string | EncodedMapRows;

export type WorkerReply =
  | { id: number; ok: true; result: WorkerResult }
  /** `exiting`: the worker's QuickJS instance broke; it exits after this reply without running anything else. */
  | { id: number; ok: false; failure: WorkerError; logs: string[]; exiting?: boolean };

export type WorkerEvent = WorkerReply | { ready: true } | { ready: false; reason: string };
