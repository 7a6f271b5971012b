import { open, type RootDatabase } from 'lmdb';
import { mkdir, readdir, rm, stat, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  Bytes, Entry, KeyValueStore, RangeOptions, ReadView, Snapshot, StorageBackend, WriteOp, WriteOptions,
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
    }
    return new LmdbStore(path);
  }

  async exists(name: string): Promise<boolean> {
    return isDir(this.path(name));
  }

  async destroy(name: string): Promise<boolean> {
    const path = this.path(name);
    if (!(await isDir(path))) return false;
    // Rename first so the name is free at once and a crash mid-delete leaves no half store.
    const doomed = `${path}.deleted-${Date.now()}`;
    await rename(path, doomed);
    await rm(doomed, { recursive: true, force: true });
    return true;
  }

  async list(): Promise<string[]> {
    await mkdir(this.dir, { recursive: true });
    const names: string[] = [];
    for (const entry of await readdir(this.dir, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name.endsWith(STORE_SUFFIX)) names.push(decodeStoreName(entry.name));
    }
    return names.sort();
  }

  async close(): Promise<void> {}
}

const STORE_SUFFIX = '.settee';

/** Store names may hold `/` and other characters unsafe in file names: encode them reversibly. */
export function encodeStoreName(name: string): string {
  return name.replace(/[^a-z0-9_$()+-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`) + STORE_SUFFIX;
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

class LmdbReader implements ReadView {
  constructor(protected db: RootDatabase<Buffer, Buffer>, protected readonly txn?: LmdbTxn) {}

  /** lmdb's typings omit getBinary's options argument, which carries the snapshot. */
  protected getSync(key: Bytes): Bytes | undefined {
    const db = this.db as unknown as { getBinary(key: Buffer, options?: { transaction: LmdbTxn }): Buffer | undefined };
    const k = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
    return (this.txn ? db.getBinary(k, { transaction: this.txn }) : db.getBinary(k)) ?? undefined;
  }

  async get(key: Bytes): Promise<Bytes | undefined> {
    return this.getSync(key);
  }

  async getMany(keys: readonly Bytes[]): Promise<(Bytes | undefined)[]> {
    return keys.map((key) => this.getSync(key));
  }

  async *range(options: RangeOptions): AsyncIterable<Entry> {
    yield* this.rangeSync(options);
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
    const iterable = this.db.getRange({
      start: start ? Buffer.from(start) : undefined,
      end: end ? Buffer.from(end) : undefined,
      reverse: reverse ?? false,
      ...(this.txn ? { transaction: this.txn } : {}),
    } as Parameters<RootDatabase['getRange']>[0]);
    for (const { key, value } of iterable) {
      const k = key as Buffer;
      if (reverse) {
        if (lt && compare(k, lt) >= 0) continue;
        if (lower) {
          const c = compare(k, lower);
          if (c < 0 || (c === 0 && gt)) break;
        }
      }
      yield { key: k, value: (value as Buffer | undefined) ?? EMPTY };
      if (--remaining <= 0) break;
    }
  }

  async count(options: RangeOptions): Promise<number> {
    const { gte, gt, lte, lt } = options;
    const start = gte ?? (gt ? successor(gt) : undefined);
    const end = lt ?? (lte ? successor(lte) : undefined);
    return this.db.getKeysCount({
      start: start ? Buffer.from(start) : undefined,
      end: end ? Buffer.from(end) : undefined,
      ...(this.txn ? { transaction: this.txn } : {}),
    } as Parameters<RootDatabase['getKeysCount']>[0]);
  }
}

class LmdbSnapshot extends LmdbReader implements Snapshot {
  release(): void {
    this.txn?.done();
  }
}

export class LmdbStore extends LmdbReader implements KeyValueStore {
  constructor(private readonly path: string) {
    super(openEnv(path));
  }

  async write(ops: readonly WriteOp[], options: WriteOptions): Promise<void> {
    if (ops.length === 0) return;
    const db = this.db;
    await db.batch(() => {
      for (const op of ops) {
        const key = Buffer.from(op.key.buffer, op.key.byteOffset, op.key.byteLength);
        if (op.type === 'put') void db.put(key, Buffer.from(op.value.buffer, op.value.byteOffset, op.value.byteLength));
        else void db.remove(key);
      }
    });
    if (options.durable) await db.flushed;
  }

  async snapshot(): Promise<Snapshot> {
    return new LmdbSnapshot(this.db, this.db.useReadTransaction());
  }

  async sync(): Promise<void> {
    await this.db.flushed;
  }

  async diskSize(): Promise<number> {
    try {
      return (await stat(join(this.path, 'data.mdb'))).size;
    } catch {
      return 0;
    }
  }

  async compact(): Promise<void> {
    // LMDB reuses freed pages but never shrinks its file: copy live pages to a fresh file and swap.
    const fresh = join(this.path, 'data.mdb.compact');
    await rm(fresh, { force: true });
    await (this.db as unknown as { backup(path: string, compact: boolean): Promise<void> }).backup(fresh, true);
    await this.db.close();
    await rename(fresh, join(this.path, 'data.mdb'));
    await rm(join(this.path, 'data.mdb-lock'), { force: true });
    this.db = openEnv(this.path);
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

function openEnv(path: string): RootDatabase<Buffer, Buffer> {
  return open<Buffer, Buffer>({
    path: join(path, 'data.mdb'),
    keyEncoding: 'binary',
    encoding: 'binary',
    compression: false,
    cache: false,
    // Durability is waited for explicitly (`flushed`) so non-durable writes can skip the wait.
    overlappingSync: true,
  });
}
