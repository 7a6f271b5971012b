/**
 * The storage contract every engine above speaks: an ordered, transactional key-value store.
 *
 * Keys and values are bytes; keys sort by unsigned byte order. A backend must keep keys of up to
 * MAX_KEY_BYTES; callers that may exceed it (long document ids) shorten keys themselves.
 * Every method is asynchronous so that a networked backend can implement the same contract.
 */
export type Bytes = Uint8Array;

/** The largest key every backend must accept (LMDB's limit as built by the `lmdb` package). */
export const MAX_KEY_BYTES = 1978;

export interface RangeOptions {
  /** Inclusive lower bound. */
  gte?: Bytes;
  /** Exclusive lower bound. */
  gt?: Bytes;
  /** Inclusive upper bound. */
  lte?: Bytes;
  /** Exclusive upper bound. */
  lt?: Bytes;
  /** Iterate from the upper bound down. */
  reverse?: boolean;
  /** Stop after this many entries. */
  limit?: number;
}

export interface Entry {
  key: Bytes;
  value: Bytes;
}

/** A consistent, read-only view of the store at one point in time. */
export interface ReadView {
  get(key: Bytes): Promise<Bytes | undefined>;
  /**
   * Each key's value handed to `decode` as it is read (undefined when there is none), in key
   * order. The bytes are lent: valid only during that call (a store may pass its own read
   * buffer), so `decode` keeps what it derives from them, never the bytes. Reads decoded at once
   * save a copy of every value this way.
   */
  decodeMany<T>(keys: readonly Bytes[], decode: (bytes: Bytes | undefined, index: number) => T): Promise<T[]>;
  range(options: RangeOptions): AsyncIterable<Entry>;
  /**
   * The same entries in chunks of up to `chunkSize`: scans of many small records pay one
   * asynchronous step per chunk instead of one per entry.
   */
  rangeChunks(options: RangeOptions, chunkSize: number): AsyncIterable<Entry[]>;
  /** Number of keys in the range (bounds as in `range`; `reverse` and `limit` ignored). */
  count(options: RangeOptions): Promise<number>;
}

export interface Snapshot extends ReadView {
  /** Releases the snapshot; reads after this are an error. */
  release(): void;
}

export type WriteOp =
  | { type: 'put'; key: Bytes; value: Bytes }
  | { type: 'del'; key: Bytes };

export interface WriteOptions {
  /** Resolve only once the write is on stable storage (fsync). Otherwise resolve once visible. */
  durable: boolean;
}

/**
 * Large binary values (attachment content) kept beside a store: written once as a stream,
 * read as a stream (optionally a byte range), deleted when no longer referenced. Kept apart
 * from the key-value records so gigabyte values neither pass through memory nor bloat the
 * ordered store.
 */
export interface BlobStore {
  /** Writes a new blob from a stream; resolves with its size once it is on stable storage. */
  write(id: string, data: AsyncIterable<Uint8Array>): Promise<number>;
  /** Streams a blob, or bytes `start`..`end` (inclusive) of it. */
  read(id: string, range?: { start?: number; end?: number }): AsyncIterable<Buffer>;
  /** Removes a blob, or what a write of it left (one under way fails). */
  delete(id: string): Promise<void>;
  /** Every blob id, those being written included, for garbage collection. */
  list(): AsyncIterable<string>;
  /** Bytes all blobs occupy. */
  totalSize(): Promise<number>;
}

export interface KeyValueStore extends ReadView {
  /** The blobs that belong with this store (removed with it). */
  readonly blobs: BlobStore;
  /** Applies all operations atomically: after a crash either all are there or none is. */
  write(ops: readonly WriteOp[], options: WriteOptions): Promise<void>;
  /** A consistent view for several reads. */
  snapshot(): Promise<Snapshot>;
  /** Waits until every write made so far is on stable storage. */
  sync(): Promise<void>;
  /** Bytes this store occupies on disk (or in its backend), blobs included. */
  diskSize(): Promise<number>;
  /** Bytes the live records occupy (what compaction would leave), blobs included. */
  dataSize(): Promise<number>;
  /** Rewrites the store to reclaim free space. Reads and writes keep working meanwhile. */
  compact(): Promise<void>;
  /**
   * Refuses new reads and writes: with 404 `not_found` when `deleted` (the store is about to be
   * destroyed), else 503 (the server is stopping or restarting). Reads already under way finish.
   */
  close(options?: { deleted?: boolean }): Promise<void>;
}

/** A family of named stores: one per database. */
export interface StorageBackend {
  open(name: string, options: { create: boolean }): Promise<KeyValueStore | undefined>;
  exists(name: string): Promise<boolean>;
  /** Closes and removes the named store with all its data. */
  destroy(name: string): Promise<boolean>;
  list(): Promise<string[]>;
  close(): Promise<void>;
}
