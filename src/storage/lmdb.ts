import { open, type RootDatabase } from 'lmdb';
import { mkdir, readdir, readFile, rm, stat, rename, writeFile, open as openFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';
import { CouchError, databaseClosed, serverStopping } from '../errors.js';
import type {
  BlobStore, Bytes, Entry, KeyValueStore, RangeOptions, ReadView, Snapshot, StorageBackend, WriteOp, WriteOptions,
} from './types.js';

/**
 * The embedded default backend: one LMDB environment (a directory with data.mdb) per store.
 * Reads are synchronous memory-mapped lookups wrapped in the async contract; writes made in the
 * same event turn share one transaction and one fsync (group commit), which lmdb batches for us.
 */
export class LmdbBackend implements StorageBackend {
  constructor(private readonly dir: string) {}

  private path(name: string): string {
    return join(this.dir, encodeStoreName(name));
  }

  async open(name: string, options: { create: boolean }): Promise<KeyValueStore | undefined> {
    const path = this.path(name);
    if (!(await isDir(path))) {
      if (!options.create) return undefined;
      await mkdir(path, { recursive: true });
      // A long name is cut in the directory's name: the whole one is kept inside.
      if (isCutStoreName(basename(path))) await writeFile(join(path, CUT_NAME_FILE), name);
    }
    return LmdbStore.open(path);
  }

  async exists(name: string): Promise<boolean> {
    return isDir(this.path(name));
  }

  async destroy(name: string): Promise<boolean> {
    const path = this.path(name);
    if (!(await isDir(path))) return false;
    // Rename first so the name is free at once and a crash mid-delete leaves no half store.
    const doomed = `${path}.deleted-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    try {
      await rename(path, doomed);
    } catch (err) {
      // A concurrent destroy of the same store renamed it first.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    await rm(doomed, { recursive: true, force: true });
    return true;
  }

  async list(): Promise<string[]> {
    await mkdir(this.dir, { recursive: true });
    const names: string[] = [];
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || !entry.name.endsWith(STORE_SUFFIX)) continue;
      if (!isCutStoreName(entry.name)) names.push(decodeStoreName(entry.name));
      else {
        const full = await readFile(join(this.dir, entry.name, CUT_NAME_FILE), 'utf8').catch(() => undefined);
        if (full !== undefined) names.push(full);
      }
    }
    return names.sort();
  }

  async close(): Promise<void> {}
}

const STORE_SUFFIX = '.settee';

/**
 * A directory name's longest encoded store name: with the suffix and the mark a deletion
 * renames it to, the name stays well under the 255 bytes file systems allow.
 */
const MAX_ENCODED_NAME = 180;
/** How much of an encoded name a cut one keeps before its `~<sha1>` (40 hex digits). */
const CUT_PREFIX = 120;
/** Where a store whose name was cut (`<prefix>~<sha1>.settee`) keeps its whole name. */
const CUT_NAME_FILE = 'store-name';

/**
 * Store names may hold `/` and other characters unsafe in file names: encode them reversibly.
 * An encoded name too long for a file name is cut and made unique by the name's SHA-1 (`~` is
 * never in an encoded name).
 */
export function encodeStoreName(name: string): string {
  const encoded = name.replace(/[^a-z0-9_$()+-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  if (encoded.length <= MAX_ENCODED_NAME) return encoded + STORE_SUFFIX;
  return `${encoded.slice(0, CUT_PREFIX)}~${createHash('sha1').update(name).digest('hex')}${STORE_SUFFIX}`;
}

/** Whether a store's directory name (not a path: a data directory may hold `~`) was cut. */
function isCutStoreName(file: string): boolean {
  return file.includes('~');
}

export function decodeStoreName(file: string): string {
  return decodeURIComponent(file.slice(0, -STORE_SUFFIX.length));
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

const EMPTY = new Uint8Array(0);

/** Next key after `key` in byte order: `key` followed by a zero byte. */
function successor(key: Bytes): Bytes {
  const out = new Uint8Array(key.length + 1);
  out.set(key);
  return out;
}

function compare(a: Bytes, b: Bytes): number {
  return Buffer.compare(a, b);
}

type LmdbTxn = ReturnType<RootDatabase['useReadTransaction']>;
type Env = RootDatabase<Buffer, Buffer>;

/**
 * One generation of a store's data file. Compaction writes the next generation beside it and
 * swaps; the old one closes when its last reader is done. A store closed for good (its
 * database deleted) closes the same way: new reads are refused at once, while reads in progress
 * (a snapshot, a range scan paused between chunks, a compaction's copy) finish on the
 * environment, which lmdb must not close under them: it would free memory they still use.
 */
class Generation {
  private readers = 0;
  /** Set once the generation is being closed: what a new read or write fails with. */
  private closing: CouchError | undefined;
  private removeFile = false;
  private disposal: Promise<void> | undefined;
  constructor(private readonly env: Env, readonly file: string) {}

  /**
   * The environment, unless it is closed or closing: a read that got into a closing lmdb
   * environment leaves a timer behind that throws outside any request.
   */
  liveEnv(): Env {
    if (this.closing) throw this.closing;
    return this.env;
  }

  /** The environment, held open until `release` (for reads that span several turns). */
  acquire(): Env {
    const env = this.liveEnv();
    this.readers++;
    return env;
  }

  release(): void {
    this.readers--;
    if (this.closing && this.readers === 0) void this.dispose();
  }

  /**
   * Refuses new reads and writes; the environment closes once the reads in progress are done.
   * Resolves when it has closed, or at once when reads still hold it (they may take as long as
   * a slow client: closing, or deleting the database, does not wait for them).
   */
  close(options: { removeFile: boolean; refusal: CouchError }): Promise<void> {
    this.closing ??= options.refusal;
    this.removeFile ||= options.removeFile;
    return this.readers === 0 ? this.dispose() : Promise.resolve();
  }

  private dispose(): Promise<void> {
    this.disposal ??= (async () => {
      await this.env.close();
      if (this.removeFile) {
        await rm(this.file, { force: true });
        await rm(`${this.file}-lock`, { force: true });
      }
    })();
    return this.disposal;
  }
}

function toBuffer(bytes: Bytes): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An environment held open for a read that spans several turns, until `release`. */
interface HeldEnv {
  env: Env;
  release(): void;
}

/** Reads from one environment, optionally inside one read transaction (a snapshot). */
abstract class LmdbReader implements ReadView {
  constructor(protected readonly txn?: LmdbTxn) {}

  /** The environment for a read that completes within the current turn. */
  protected abstract source(): Env;
  /** The environment for a read that spans turns: a range scan pauses between its entries. */
  protected abstract hold(): HeldEnv;

  /** lmdb's typings omit getBinary's options argument, which carries the snapshot. */
  private getSync(key: Bytes): Bytes | undefined {
    const env = this.source() as unknown as { getBinary(key: Buffer, options?: { transaction: LmdbTxn }): Buffer | undefined };
    const k = toBuffer(key);
    return (this.txn ? env.getBinary(k, { transaction: this.txn }) : env.getBinary(k)) ?? undefined;
  }

  /**
   * A view of the value in lmdb's reusable read buffer, overwritten by the next read: no copy.
   * (That buffer reports the value's length through its own `length` property; the view is an
   * ordinary Buffer of exactly the value.)
   */
  private getLent(key: Bytes): Bytes | undefined {
    const env = this.source() as unknown as { getBinaryFast(key: Buffer, options?: { transaction: LmdbTxn }): Buffer | undefined };
    const k = toBuffer(key);
    const shared = this.txn ? env.getBinaryFast(k, { transaction: this.txn }) : env.getBinaryFast(k);
    return shared ? Buffer.from(shared.buffer, shared.byteOffset, shared.length) : undefined;
  }

  async decodeMany<T>(keys: readonly Bytes[], decode: (bytes: Bytes | undefined, index: number) => T): Promise<T[]> {
    const out = new Array<T>(keys.length);
    for (let i = 0; i < keys.length; i++) out[i] = decode(this.getLent(keys[i]!), i);
    return out;
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    return this.getSync(key);
  }

  async *range(options: RangeOptions): AsyncIterable<Entry> {
    yield* this.rangeSync(options);
  }

  async *rangeChunks(options: RangeOptions, chunkSize: number): AsyncIterable<Entry[]> {
    let chunk: Entry[] = [];
    for (const entry of this.rangeSync(options)) {
      chunk.push(entry);
      if (chunk.length >= chunkSize) {
        yield chunk;
        chunk = [];
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  *rangeSync(options: RangeOptions): Iterable<Entry> {
    const { gte, gt, lte, lt, reverse, limit } = options;
    let start: Bytes | undefined;
    let end: Bytes | undefined;
    if (!reverse) {
      start = gte ?? (gt ? successor(gt) : undefined);
      end = lt ?? (lte ? successor(lte) : undefined);
    } else {
      start = lte ?? lt;
    }
    const lower = gte ?? gt;
    let remaining = limit ?? Infinity;
    if (remaining <= 0) return;
    const held = this.hold();
    try {
      const iterable = held.env.getRange({
        start: start ? toBuffer(start) : undefined,
        end: end ? toBuffer(end) : undefined,
        reverse: reverse ?? false,
        ...(this.txn ? { transaction: this.txn } : {}),
      } as Parameters<Env['getRange']>[0]);
      for (const entry of iterable) {
        const k = entry.key as Buffer;
        if (reverse) {
          if (lt && compare(k, lt) >= 0) continue;
          if (lower) {
            const c = compare(k, lower);
            if (c < 0 || (c === 0 && gt)) break;
          }
        }
        // lmdb makes a fresh entry (key and value copied) for every step: handed on as it is.
        yield entry.value === undefined ? { key: k, value: EMPTY } : entry as Entry;
        if (--remaining <= 0) break;
      }
    } finally {
      held.release();
    }
  }

  async count(options: RangeOptions): Promise<number> {
    const { gte, gt, lte, lt } = options;
    const start = gte ?? (gt ? successor(gt) : undefined);
    const end = lt ?? (lte ? successor(lte) : undefined);
    return this.source().getKeysCount({
      start: start ? toBuffer(start) : undefined,
      end: end ? toBuffer(end) : undefined,
      ...(this.txn ? { transaction: this.txn } : {}),
    } as Parameters<Env['getKeysCount']>[0]);
  }
}

class LmdbSnapshot extends LmdbReader implements Snapshot {
  private released = false;
  private readonly env: Env;
  constructor(private readonly generation: Generation) {
    const env = generation.acquire();
    super(env.useReadTransaction());
    this.env = env;
  }

  /** The snapshot holds its generation until released. */
  protected source(): Env {
    if (this.released) throw new Error('read from a released snapshot');
    return this.env;
  }

  protected hold(): HeldEnv {
    return { env: this.source(), release: () => undefined };
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.txn?.done();
    this.generation.release();
  }
}

const GENERATION_FILE = /^data-(\d+)\.mdb$/;

/**
 * Blobs as files in the store's directory: streamed with file I/O (no memory map, so reading a
 * gigabyte does not grow the server's resident memory), written under a temporary name, fsync'd,
 * then renamed, so a crash never leaves a partial blob under a real id.
 */
export class FileBlobStore implements BlobStore {
  /** Running total of blob bytes; counted from the directory on first use. */
  private total: number | undefined;
  /** Set once the store is closed: what new work fails with. */
  private refusal: CouchError | undefined;
  /** The directory was made (or found): later writes skip the mkdir and its EEXIST error. */
  private dirMade = false;

  constructor(private readonly dir: string) {}

  /**
   * Refuses new work: the store is closed, its directory perhaps being removed. Work under way
   * that fails for that (a file renamed away mid-write) fails as the store's reads do.
   */
  close(refusal: CouchError): void {
    this.refusal ??= refusal;
  }

  private refuseIfClosed(): void {
    if (this.refusal) throw this.refusal;
  }

  async totalSize(): Promise<number> {
    if (this.total === undefined) {
      let sum = 0;
      for await (const id of this.list()) sum += await stat(this.path(id)).then((st) => st.size, () => 0);
      this.total ??= sum;
    }
    return this.total;
  }

  private path(id: string): string {
    if (!/^[0-9a-f]{32}$/.test(id)) throw new Error(`invalid blob id ${id}`);
    return join(this.dir, id);
  }

  async write(id: string, data: AsyncIterable<Uint8Array>): Promise<number> {
    try {
      return await this.writeFile(id, data);
    } catch (err) {
      this.refuseIfClosed();
      throw err;
    }
  }

  private async writeFile(id: string, data: AsyncIterable<Uint8Array>): Promise<number> {
    this.refuseIfClosed();
    // Not recursive: when the store's directory is gone (its database deleted), fail rather
    // than bring it back (once it is known to exist, opening the file below fails then).
    if (!this.dirMade) {
      await mkdir(this.dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      this.dirMade = true;
    }
    const final = this.path(id);
    const temp = `${final}.partial`;
    const file = await openFile(temp, 'w');
    let size = 0;
    try {
      for await (const chunk of data) {
        let offset = 0;
        while (offset < chunk.length) {
          const { bytesWritten } = await file.write(chunk, offset, chunk.length - offset);
          offset += bytesWritten;
        }
        size += chunk.length;
      }
      await file.sync();
    } catch (err) {
      await file.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw err;
    }
    await file.close();
    await rename(temp, final);
    // The rename is durable only once the directory is: a crash must not keep the digest
    // record (committed next) and lose the file.
    const dir = await openFile(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    if (this.total !== undefined) this.total += size;
    return size;
  }

  async *read(id: string, range: { start?: number; end?: number } = {}): AsyncIterable<Buffer> {
    try {
      yield* this.readFile(id, range);
    } catch (err) {
      this.refuseIfClosed();
      throw err;
    }
  }

  private async *readFile(id: string, range: { start?: number; end?: number }): AsyncIterable<Buffer> {
    this.refuseIfClosed();
    const path = this.path(id);
    const small = readSmallSync(path, range);
    if (small) {
      yield small;
      return;
    }
    const stream = createReadStream(path, {
      start: range.start,
      end: range.end === undefined || range.end === Infinity ? undefined : range.end,
      highWaterMark: 256 * 1024,
    });
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } finally {
      stream.destroy();
    }
  }

  async delete(id: string): Promise<void> {
    const path = this.path(id);
    const size = await stat(path).then((st) => st.size, () => 0);
    await rm(path, { force: true });
    await rm(`${path}.partial`, { force: true });
    if (this.total !== undefined) this.total = Math.max(0, this.total - size);
  }

  async *list(): AsyncIterable<string> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    // Blobs still being written are listed too: whether a write is under way, or was cut short
    // by a crash and left for deletion, only the caller knows.
    const ids = new Set<string>();
    for (const name of names) {
      const blob = /^([0-9a-f]{32})(?:\.partial)?$/.exec(name);
      if (blob) ids.add(blob[1]!);
    }
    yield* ids;
  }
}

/** Blobs up to this size are read in one go (see readSmallSync). */
const SMALL_BLOB = 1024 * 1024;

/**
 * Reads a small blob (or range of one) synchronously: three system calls served from the page
 * cache instead of a file stream's open, read and close round trips through the thread pool —
 * the same trade LMDB's memory-mapped reads make. Undefined for larger ones, which stream.
 */
function readSmallSync(path: string, range: { start?: number; end?: number }): Buffer | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = Math.min(range.start ?? 0, size);
    const end = Math.min(range.end ?? Infinity, size - 1);
    const length = Math.max(0, end - start + 1);
    if (length > SMALL_BLOB) return undefined;
    const buf = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, start + done);
      if (n === 0) break;
      done += n;
    }
    return done === length ? buf : buf.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

export class LmdbStore extends LmdbReader implements KeyValueStore {
  private current: Generation;
  readonly blobs: FileBlobStore;
  /** Writes made while a compaction copies the file, to replay into the copy. */
  private journal: (readonly WriteOp[])[] | undefined;
  /** Set while a compaction makes its final replay and swaps generations. */
  private swapping: Promise<void> | undefined;
  private closed = false;

  private constructor(private readonly dir: string, generation: Generation) {
    super();
    this.current = generation;
    this.blobs = new FileBlobStore(join(dir, 'blobs'));
  }

  protected source(): Env {
    return this.current.liveEnv();
  }

  protected hold(): HeldEnv {
    const generation = this.current;
    return { env: generation.acquire(), release: () => generation.release() };
  }

  /** Opens the newest generation in `dir`, removing older ones a crash may have left behind. */
  static async open(dir: string): Promise<LmdbStore> {
    const files = await readdir(dir);
    const gens = files.map((f) => GENERATION_FILE.exec(f)).filter((m) => m !== null).map((m) => Number(m[1]));
    const newest = gens.length > 0 ? Math.max(...gens) : 1;
    for (const f of files) {
      const m = GENERATION_FILE.exec(f.replace(/-lock$/, ''));
      if ((m && Number(m[1]) !== newest) || f.endsWith('.compacting')) await rm(join(dir, f), { force: true });
    }
    const file = join(dir, `data-${newest}.mdb`);
    return new LmdbStore(dir, new Generation(openEnv(file), file));
  }

  async write(ops: readonly WriteOp[], options: WriteOptions): Promise<void> {
    if (ops.length === 0) return;
    if (this.swapping) {
      // The final replay of a compaction is under way: wait for the new generation.
      await this.swapping;
      return this.write(ops, options);
    }
    const env = this.current.liveEnv();
    this.journal?.push(ops);
    await applyOps(env, ops);
    if (options.durable) await env.flushed;
  }

  async snapshot(): Promise<Snapshot> {
    return new LmdbSnapshot(this.current);
  }

  async sync(): Promise<void> {
    await this.current.liveEnv().flushed;
  }

  async dataSize(): Promise<number> {
    const stats = this.current.liveEnv().getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
    const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
    return pages * stats.pageSize + (await this.blobs.totalSize());
  }

  async diskSize(): Promise<number> {
    const records = await stat(this.current.file).then((st) => st.size, () => 0);
    return records + (await this.blobs.totalSize());
  }

  /**
   * LMDB reuses freed pages but never shrinks its file: copy the live pages into the next
   * generation and swap. Writes go on meanwhile: they are journaled during the copy and
   * replayed into the new generation, and held only for the last, short replay and the swap.
   * Readers of the old generation finish undisturbed. A store closed meanwhile (its database
   * deleted) ends the compaction, which then leaves nothing behind.
   */
  async compact(): Promise<void> {
    const old = this.current;
    // Held for the copy, which reads the old environment from another thread.
    const oldEnv = old.acquire();
    const gen = Number(GENERATION_FILE.exec(old.file.slice(this.dir.length + 1))![1]) + 1;
    const file = join(this.dir, `data-${gen}.mdb`);
    const temp = `${file}.compacting`;
    let fresh: Env | undefined;
    // Writes before the copy's snapshot are in the copy; those after it are in the journal.
    // Starting the journal first may replay a few already copied: puts and deletes are
    // idempotent, so replaying them again is harmless.
    this.journal = [];
    try {
      await rm(temp, { force: true });
      await oldEnv.flushed;
      await (oldEnv as unknown as { backup(path: string, compact: boolean): Promise<void> }).backup(temp, true);
      if (this.closed) return;
      await rename(temp, file);
      fresh = openEnv(file);
      // Catch up while writers go on, until little is left; then hold writers for the rest.
      while (this.journal.length > 64 && !this.closed) {
        const pending = this.journal.splice(0, this.journal.length);
        for (const ops of pending) await applyOps(fresh, ops);
      }
      if (this.closed) return;
      let release!: () => void;
      this.swapping = new Promise((resolve) => { release = resolve; });
      try {
        for (const ops of this.journal.splice(0, this.journal.length)) await applyOps(fresh, ops);
        await fresh.flushed;
        if (this.closed) return;
        this.current = new Generation(fresh, file);
        fresh = undefined;
      } finally {
        this.swapping = undefined;
        release();
      }
      void old.close({ removeFile: true, refusal: serverStopping() });
    } catch (err) {
      // The deletion of the database may have taken the directory the copy was going to.
      if (!this.closed) throw err;
    } finally {
      this.journal = undefined;
      old.release();
      // A compaction the store's closing cut short drops its copy.
      if (fresh) {
        await fresh.close();
        await rm(file, { force: true });
        await rm(`${file}-lock`, { force: true });
      }
      await rm(temp, { force: true });
    }
  }

  /**
   * Refuses new reads and writes at once, and closes the environment once the reads in
   * progress are done.
   */
  async close(options: { deleted?: boolean } = {}): Promise<void> {
    this.closed = true;
    const refusal = databaseClosed(options.deleted ?? false);
    this.blobs.close(refusal);
    await this.current.close({ removeFile: false, refusal });
  }
}

async function applyOps(env: Env, ops: readonly WriteOp[]): Promise<void> {
  await env.batch(() => {
    for (const op of ops) {
      if (op.type === 'put') void env.put(toBuffer(op.key), toBuffer(op.value));
      else void env.remove(toBuffer(op.key));
    }
  });
}

function openEnv(file: string): Env {
  return open<Buffer, Buffer>({
    path: file,
    keyEncoding: 'binary',
    encoding: 'binary',
    compression: false,
    cache: false,
    // Commits resolve once visible; durability is awaited separately (`flushed`), so the fsync
    // of one batch overlaps the preparation of the next.
    overlappingSync: true,
    // Map the file in chunks and let go of cold ones: mapped pages count as the server's RSS.
    remapChunks: true,
  });
}
