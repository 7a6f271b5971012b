/**
 * Attachment content of one database. Content streams in and out in chunks, so a 1 GB
 * attachment never sits in memory; it is stored once per digest and shared by every revision
 * that keeps it (revisions hold only stubs: name, type, digest, lengths, revpos).
 *
 * An upload writes its chunks under a fresh content id as they arrive and learns its digest
 * at the end; if that digest is already stored, the new chunks are dropped. Content that no
 * leaf revision references is removed by compaction (`collectGarbage`); uploads in flight, and
 * finished uploads whose edits have not committed yet, are protected from it.
 *
 * Like CouchDB's, the digest is the MD5 of the bytes as stored: gzip'd for compressible types.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createGunzip, createGzip } from 'node:zlib';
import { Readable, type Transform } from 'node:stream';
import { badRequest } from '../errors.js';
import type { KeyValueStore, WriteOp } from '../storage/types.js';
import { Prefix, prefixRange, prefixed } from './keys.js';
import { decodeJson, encodeJson } from './records.js';

export interface AttachmentSettings {
  /** `[attachments] compressible_types`, e.g. "text/*, application/json". */
  compressibleTypes: string;
  /** `[attachments] compression_level`; 0 turns compression off. */
  compressionLevel: number;
}

/** What is known about stored content, by digest. */
export interface ContentInfo {
  /** `md5-<base64>` of the stored bytes. */
  digest: string;
  /** Identity (decoded) length. */
  length: number;
  /** Set when the stored bytes are gzip'd. */
  encoding?: 'gzip';
  /** Stored length when encoded. */
  encodedLength?: number;
}

/** A finished upload. `release` must be called once the edit that uses it is done. */
export interface StoredContent extends ContentInfo {
  release(): void;
}

interface DigestRecord {
  /** Content id (hex). */
  c: string;
  /** Identity length. */
  l: number;
  /** Stored length. */
  s: number;
  /** Encoding of the stored bytes. */
  e?: 'gzip';
  /** Chunk size used. */
  k: number;
}

/** Bytes per stored chunk. */
const CHUNK_SIZE = 256 * 1024;
/** Chunks per write batch while streaming in (bounded memory, steady progress). */
const CHUNKS_PER_WRITE = 8;

export class AttachmentStore {
  private readonly inFlight = new Set<string>();
  /** Digests of finished uploads whose edits have not finished yet. */
  private readonly pending = new Map<string, number>();
  private gcRunning = false;
  private deferred: string[] = [];

  constructor(private readonly store: KeyValueStore, private readonly settings: () => AttachmentSettings) {}

  isCompressible(contentType: string): boolean {
    const { compressibleTypes, compressionLevel } = this.settings();
    if (compressionLevel <= 0) return false;
    const type = contentType.split(';')[0]!.trim().toLowerCase();
    return compressibleTypes.split(',').map((t) => t.trim().toLowerCase()).filter(Boolean).some((pattern) =>
      pattern.endsWith('/*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern);
  }

  /**
   * Streams content into the store. `encoding: 'gzip'` means the source is already gzip'd
   * (uploaded with Content-Encoding: gzip) and is kept as it is; otherwise compressible types
   * are gzip'd here. On any failure the chunks written so far are removed.
   */
  async write(source: AsyncIterable<Uint8Array | string>, options: { contentType: string; encoding?: 'gzip' }): Promise<StoredContent> {
    const id = randomBytes(16);
    const idHex = id.toString('hex');
    this.inFlight.add(idHex);
    let chunkIndex = 0;
    try {
      const level = this.settings().compressionLevel;
      const compress = options.encoding === undefined && this.isCompressible(options.contentType);
      let identityLength = 0;
      const counted = (async function* () {
        for await (const piece of source) {
          const buf = typeof piece === 'string' ? Buffer.from(piece) : Buffer.isBuffer(piece) ? piece : Buffer.from(piece);
          identityLength += buf.length;
          yield buf;
        }
      })();
      const stored: AsyncIterable<Buffer> = compress
        ? through(counted, createGzip({ level: Math.min(9, Math.max(1, level)) }))
        : counted;

      const md5 = createHash('md5');
      let storedLength = 0;
      let ops: WriteOp[] = [];
      let pendingChunk: Buffer[] = [];
      let pendingLength = 0;
      const emitChunk = async (chunk: Buffer) => {
        ops.push({ type: 'put', key: contentKey(id, chunkIndex++), value: chunk });
        if (ops.length >= CHUNKS_PER_WRITE) {
          const batch = ops;
          ops = [];
          await this.store.write(batch, { durable: false });
        }
      };
      for await (const piece of stored) {
        md5.update(piece);
        storedLength += piece.length;
        pendingChunk.push(piece);
        pendingLength += piece.length;
        while (pendingLength >= CHUNK_SIZE) {
          const all = pendingChunk.length === 1 ? pendingChunk[0]! : Buffer.concat(pendingChunk);
          await emitChunk(Buffer.from(all.subarray(0, CHUNK_SIZE)));
          const rest = all.subarray(CHUNK_SIZE);
          pendingChunk = rest.length > 0 ? [rest] : [];
          pendingLength = rest.length;
        }
      }
      if (pendingLength > 0) await emitChunk(Buffer.concat(pendingChunk));
      if (ops.length > 0) await this.store.write(ops, { durable: false });

      const digestBytes = md5.digest();
      const digest = `md5-${digestBytes.toString('base64')}`;
      const encoding = compress || options.encoding === 'gzip' ? 'gzip' as const : undefined;
      const existing = await this.store.get(digestKey(digestBytes));
      let record: DigestRecord;
      if (existing) {
        record = decodeJson<DigestRecord>(existing);
        await this.dropContent(id, chunkIndex);
      } else {
        // Content that arrived gzip'd has an identity length only its decoding tells.
        const length = options.encoding === 'gzip' ? await decodedLength(this.chunks(id)) : identityLength;
        record = { c: idHex, l: length, s: storedLength, k: CHUNK_SIZE, ...(encoding ? { e: encoding } : {}) };
        await this.store.write([{ type: 'put', key: digestKey(digestBytes), value: encodeJson(record) }], { durable: false });
      }
      const info = toInfo(digest, record);
      this.pending.set(digest, (this.pending.get(digest) ?? 0) + 1);
      let released = false;
      return {
        ...info,
        release: () => {
          if (released) return;
          released = true;
          const n = (this.pending.get(digest) ?? 1) - 1;
          if (n <= 0) this.pending.delete(digest);
          else this.pending.set(digest, n);
        },
      };
    } catch (err) {
      await this.dropContent(id, chunkIndex).catch(() => undefined);
      throw err;
    } finally {
      if (this.gcRunning) this.deferred.push(idHex);
      else this.inFlight.delete(idHex);
    }
  }

  /** Content stored under a digest, or undefined. */
  async info(digest: string): Promise<ContentInfo | undefined> {
    const record = await this.record(digest);
    return record ? toInfo(digest, record) : undefined;
  }

  private async record(digest: string): Promise<DigestRecord | undefined> {
    const raw = parseDigest(digest);
    if (!raw) return undefined;
    const bytes = await this.store.get(digestKey(raw));
    return bytes ? decodeJson<DigestRecord>(bytes) : undefined;
  }

  /**
   * Streams stored content: as stored (`decode: false`, gzip'd when encoded) or decoded to its
   * identity bytes, optionally only bytes `start`..`end` (inclusive) of what is streamed.
   */
  async *read(digest: string, options: { decode: boolean; start?: number; end?: number }): AsyncIterable<Buffer> {
    const record = await this.record(digest);
    if (!record) throw badRequest(`attachment content ${digest} is missing`);
    const id = Buffer.from(record.c, 'hex');
    const storedChunks = this.chunks(id);
    const decoded = options.decode && record.e === 'gzip';
    const source: AsyncIterable<Buffer> = decoded ? through(storedChunks, createGunzip()) : storedChunks;
    const start = options.start ?? 0;
    const end = options.end ?? Infinity;
    let offset = 0;
    for await (const piece of source) {
      const pieceEnd = offset + piece.length;
      if (pieceEnd > start && offset <= end) {
        yield piece.subarray(Math.max(0, start - offset), Math.min(piece.length, end - offset + 1));
      }
      offset = pieceEnd;
      if (offset > end) break;
    }
  }

  /** The whole content in memory (inline base64 `data` needs it). */
  async readAll(digest: string, decode: boolean): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const piece of this.read(digest, { decode })) parts.push(piece);
    return Buffer.concat(parts);
  }

  private async *chunks(id: Buffer): AsyncIterable<Buffer> {
    const { gte, lt } = contentRange(id);
    for await (const entries of this.store.rangeChunks({ gte, lt }, 4)) {
      for (const { value } of entries) yield Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }

  private async dropContent(id: Buffer, chunks: number): Promise<void> {
    const ops: WriteOp[] = [];
    for (let i = 0; i < chunks; i++) ops.push({ type: 'del', key: contentKey(id, i) });
    if (ops.length > 0) await this.store.write(ops, { durable: false });
  }

  /**
   * Removes content no longer referenced: every digest not in `referenced` (and not pending an
   * edit), and chunks no digest record points to (left by crashed uploads), except uploads
   * still streaming in.
   */
  async collectGarbage(referenced: ReadonlySet<string>): Promise<void> {
    this.gcRunning = true;
    try {
      const live = new Set<string>();
      const { gte, lt } = prefixRange(Prefix.Digest);
      for await (const entries of this.store.rangeChunks({ gte, lt }, 256)) {
        const ops: WriteOp[] = [];
        for (const { key, value } of entries) {
          const digest = `md5-${Buffer.from(key.subarray(1)).toString('base64')}`;
          const record = decodeJson<DigestRecord>(value);
          if (referenced.has(digest) || this.pending.has(digest)) {
            live.add(record.c);
            continue;
          }
          ops.push({ type: 'del', key: Buffer.from(key) });
        }
        if (ops.length > 0) await this.store.write(ops, { durable: false });
      }
      const contents = prefixRange(Prefix.Content);
      let ops: WriteOp[] = [];
      for await (const entries of this.store.rangeChunks(contents, 256)) {
        for (const { key } of entries) {
          const idHex = Buffer.from(key.subarray(1, 17)).toString('hex');
          if (live.has(idHex) || this.inFlight.has(idHex)) continue;
          ops.push({ type: 'del', key: Buffer.from(key) });
        }
        if (ops.length >= 256) {
          await this.store.write(ops, { durable: false });
          ops = [];
        }
      }
      if (ops.length > 0) await this.store.write(ops, { durable: false });
    } finally {
      this.gcRunning = false;
      for (const id of this.deferred) this.inFlight.delete(id);
      this.deferred = [];
    }
  }
}

/** Length of gzip'd content once decoded; a malformed stream is the uploader's 400. */
async function decodedLength(stored: AsyncIterable<Buffer>): Promise<number> {
  let length = 0;
  try {
    for await (const piece of through(stored, createGunzip())) length += piece.length;
  } catch {
    throw badRequest('Attachment sent with Content-Encoding: gzip is not valid gzip');
  }
  return length;
}

/**
 * Runs a byte stream through a transform (gzip, gunzip). Unlike `pipe`, a failing source fails
 * the output, so the consumer sees the error instead of the process seeing an unhandled one.
 */
function through(source: AsyncIterable<Buffer>, transform: Transform): AsyncIterable<Buffer> {
  const input = Readable.from(source);
  input.on('error', (err) => transform.destroy(err));
  transform.on('close', () => input.destroy());
  input.pipe(transform);
  return transform;
}

function toInfo(digest: string, record: DigestRecord): ContentInfo {
  return record.e ? { digest, length: record.l, encoding: record.e, encodedLength: record.s } : { digest, length: record.l };
}

function contentKey(id: Buffer, index: number): Buffer {
  const out = Buffer.allocUnsafe(21);
  out[0] = Prefix.Content;
  id.copy(out, 1);
  out.writeUInt32BE(index, 17);
  return out;
}

function contentRange(id: Buffer): { gte: Buffer; lt: Buffer } {
  const gte = prefixed(Prefix.Content, id);
  const lt = Buffer.from(gte);
  // The next id after this one: increment the 16-byte id as a big-endian number.
  for (let i = lt.length - 1; i >= 1; i--) {
    if (lt[i]! < 0xff) {
      lt[i]!++;
      return { gte, lt };
    }
    lt[i] = 0;
  }
  return { gte, lt: Buffer.of(Prefix.Content + 1) };
}

function digestKey(md5: Buffer): Buffer {
  return prefixed(Prefix.Digest, md5);
}

function parseDigest(digest: string): Buffer | undefined {
  if (!digest.startsWith('md5-')) return undefined;
  const raw = Buffer.from(digest.slice(4), 'base64');
  return raw.length === 16 ? raw : undefined;
}
