/**
 * What the replicator needs from each end of a replication. One implementation speaks HTTP
 * (`http-peer.ts`) and serves remote URLs and local names alike; another (a direct one over
 * src/core) could replace it for local names without touching the engine.
 */
import { CouchError } from '../errors.js';

/**
 * A peer the owner may not open or create, as CouchDB 1.6's replicator answers it (a 404 under
 * the error `unauthorized`).
 */
export function unauthorizedPeer(display: string): CouchError {
  return new CouchError(404, 'unauthorized', `unauthorized to access or create database ${display}`);
}

/** One `_changes` row with `style=all_docs`. */
export interface ChangeRow {
  seq: number | string;
  id: string;
  changes: { rev: string }[];
  deleted?: boolean;
}

export interface ChangesBatch {
  results: ChangeRow[];
  last_seq: number | string;
}

export interface ChangesRequest {
  since: number | string;
  limit: number;
  /** `longpoll` waits for the next change (continuous replications once caught up). */
  feed: 'normal' | 'longpoll';
  filter?: string;
  queryParams?: Record<string, unknown>;
  docIds?: readonly string[];
  /** A Mango selector: `filter=_selector`. */
  selector?: Record<string, unknown>;
}

export type RevsDiff = Record<string, { missing: string[]; possible_ancestors?: string[] }>;

/** A revision to fetch from the source, with the revisions whose attachments the target has. */
export interface MissingRevs {
  id: string;
  revs: string[];
  possibleAncestors: string[];
}

/** A document revision as JSON: `_id`, `_rev`, `_revisions`, attachments inline. */
export type DocJson = Record<string, unknown> & { _id: string; _rev: string };

export interface AttachmentContent {
  name: string;
  /** Opens the content (again, if a write is retried). */
  open(): Promise<AsyncIterable<Buffer>>;
}

export interface WriteFailure {
  id: string;
  rev?: string;
  error: string;
  reason: string;
}

export interface PeerInfo {
  update_seq: number | string;
  instance_start_time?: string;
}

export interface ReplicationPeer {
  /** The endpoint as it may be printed (no credentials). */
  readonly display: string;
  /** The database's info; a CouchError db_not_found when it does not exist. */
  info(): Promise<PeerInfo>;
  create(): Promise<void>;
  changes(request: ChangesRequest, signal: AbortSignal): Promise<ChangesBatch>;
  revsDiff(revs: Record<string, string[]>): Promise<RevsDiff>;
  /** Fetches revisions with their history (`revs`, `latest`), attachments as stubs. */
  fetch(missing: readonly MissingRevs[]): Promise<DocJson[]>;
  /** One attachment's content as a stream of bytes. */
  openAttachment(id: string, rev: string, name: string): Promise<AsyncIterable<Buffer>>;
  /** Writes replicated revisions as they are (`new_edits=false`); returns the failures. */
  write(docs: readonly DocJson[]): Promise<WriteFailure[]>;
  /**
   * Writes one replicated revision with the content of the named attachments streamed in
   * (a multipart PUT); the other attachments stay stubs. Undefined on success.
   */
  writeWithAttachments(doc: DocJson, content: readonly AttachmentContent[]): Promise<WriteFailure | undefined>;
  getLocal(id: string): Promise<Record<string, unknown> | undefined>;
  /** Writes a `_local` document; returns its new revision. */
  putLocal(id: string, body: Record<string, unknown>): Promise<string>;
  getDoc(id: string): Promise<Record<string, unknown> | undefined>;
  ensureFullCommit(): Promise<void>;
  close(): void;
}
