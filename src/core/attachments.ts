/**
 * Attachment content of one database. Content streams in and out of the store's blobs, so a
 * 1 GB attachment never sits in memory; it is stored once per digest and shared by every
 * revision that keeps it (revisions hold only stubs: name, type, digest, lengths, revpos).
 *
 * An upload streams into a blob under a fresh id and learns its digest at the end; the
 * ordered store then records digest -> blob. If that digest is already stored, the new blob is
 * dropped. Content that no leaf revision references is removed by compaction
 * (`collectGarbage`); uploads in flight, and finished uploads whose edits have not committed
 * yet, are protected from it.
 *
 * Like CouchDB's, the digest is the MD5 of the bytes as stored: gzip'd for compressible types,
 * byte for byte as CouchDB's zlib writes them (see gzipAsZlib).
 */
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createGunzip } from 'node:zlib';
import { Deflate, type DeflateOptions } from 'pako';
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

/** The source's bytes as they pass, each also fed to `hash`. */
export async function* hashedAs<T extends Uint8Array>(source: AsyncIterable<T>, hash: Hash): AsyncIterable<T> {
  for await (const piece of source) {
    hash.update(piece);
    yield piece;
  }
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
  /** Blob id (hex). */
  c: string;
  /** Identity length. */
  l: number;
  /** Stored length. */
  s: number;
  /** Encoding of the stored bytes. */
  e?: 'gzip';
}

export class AttachmentStore {
  private readonly inFlight = new Set<string>();
  /** Digests of finished uploads whose edits have not finished yet. */
  private readonly pending = new Map<string, number>();
  private gcRunning = false;
  private deferred: string[] = [];
  /**
   * Taken by an upload from reading its digest's record until it holds the digest, and by the
   * collector from judging a batch of digests until their records are gone: an upload cannot
   * take up content the collector is deleting.
   */
  private digestTurn: Promise<void> = Promise.resolve();

  /** Runs `step` once every earlier holder of the digest turn is done. */
  private inDigestTurn<T>(step: () => Promise<T>): Promise<T> {
    const run = this.digestTurn.then(step);
    this.digestTurn = run.then(() => undefined, () => undefined);
    return run;
  }

  constructor(private readonly store: KeyValueStore, private readonly settings: () => AttachmentSettings) {}

  isCompressible(contentType: string): boolean {
    const { compressibleTypes, compressionLevel } = this.settings();
    if (compressionLevel <= 0) return false;
    return compressibleTypePatterns(compressibleTypes).some((pattern) => pattern.test(contentType));
  }

  /**
   * Streams content into the store. `encoding: 'gzip'` means the source is already gzip'd
   * (uploaded with Content-Encoding: gzip) and is kept as it is; otherwise compressible types
   * are gzip'd here. On any failure the chunks written so far are removed.
   */
  async write(source: AsyncIterable<Uint8Array | string>, options: { contentType: string; encoding?: 'gzip' }): Promise<StoredContent> {
    const id = randomBytes(16).toString('hex');
    this.inFlight.add(id);
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
        ? gzipAsZlib(counted, Math.min(9, Math.max(1, level)))
        : counted;
      const md5 = createHash('md5');
      const hashed = hashedAs(stored, md5);
      const storedLength = await this.store.blobs.write(id, hashed);

      const digestBytes = md5.digest();
      const digest = `md5-${digestBytes.toString('base64')}`;
      const encoding = compress || options.encoding === 'gzip' ? 'gzip' as const : undefined;
      // Content already stored is shared; otherwise this upload's blob is it.
      const { record, shared } = await this.inDigestTurn(async () => {
        const existing = await this.store.get(digestKey(digestBytes));
        let found: DigestRecord;
        if (existing) {
          found = decodeJson<DigestRecord>(existing);
        } else {
          // Content that arrived gzip'd has an identity length only its decoding tells.
          const length = options.encoding === 'gzip' ? await decodedLength(this.store.blobs.read(id)) : identityLength;
          found = { c: id, l: length, s: storedLength, ...(encoding ? { e: encoding } : {}) };
          await this.store.write([{ type: 'put', key: digestKey(digestBytes), value: encodeJson(found) }], { durable: false });
        }
        this.pending.set(digest, (this.pending.get(digest) ?? 0) + 1);
        return { record: found, shared: existing !== undefined };
      });
      if (shared) await this.store.blobs.delete(id);
      const info = toInfo(digest, record);
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
      await this.store.blobs.delete(id).catch(() => undefined);
      throw err;
    } finally {
      if (this.gcRunning) this.deferred.push(id);
      else this.inFlight.delete(id);
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
    const start = options.start ?? 0;
    const end = options.end ?? Infinity;
    if (!(options.decode && record.e === 'gzip')) {
      // The bytes streamed are the bytes stored: the blob reads just the range.
      yield* this.store.blobs.read(record.c, { start, end });
      return;
    }
    let offset = 0;
    for await (const piece of through(this.store.blobs.read(record.c), createGunzip())) {
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
        const doomed = await this.inDigestTurn(async () => {
          const ops: WriteOp[] = [];
          const ids: string[] = [];
          for (const { key, value } of entries) {
            const digest = `md5-${Buffer.from(key.subarray(1)).toString('base64')}`;
            const record = decodeJson<DigestRecord>(value);
            if (referenced.has(digest) || this.pending.has(digest)) {
              live.add(record.c);
              continue;
            }
            ops.push({ type: 'del', key: Buffer.from(key) });
            ids.push(record.c);
          }
          if (ops.length > 0) await this.store.write(ops, { durable: true });
          return ids;
        });
        for (const id of doomed) await this.store.blobs.delete(id);
      }
      // Blobs no digest points to: left by crashed uploads.
      for await (const id of this.store.blobs.list()) {
        if (!live.has(id) && !this.inFlight.has(id)) await this.store.blobs.delete(id);
      }
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

/** Input handed to the deflater at a time, so a large chunk does not hold the event loop long. */
const DEFLATE_SLICE = 64 * 1024;

/**
 * Gzip exactly as zlib writes it (CouchDB's `deflateInit2(Level, deflated, 16+15, 8, default)`).
 * The digest of compressed content is the MD5 of these bytes and it enters revision ids, so the
 * bytes must be zlib's: Node's bundled zlib (Chromium's) picks other matches for the same input,
 * and so does pako 3; pako 2 is a faithful port of zlib's deflate.
 */
async function* gzipAsZlib(source: AsyncIterable<Buffer>, level: number): AsyncIterable<Buffer> {
  const deflater = new Deflate({ level: level as DeflateOptions['level'], gzip: true, memLevel: 8, windowBits: 15 });
  let out: Buffer[] = [];
  deflater.onData = (chunk: Uint8Array) => { out.push(Buffer.from(chunk)); };
  const drain = function* () {
    if (deflater.err) throw new Error(`gzip: ${deflater.msg}`);
    const ready = out;
    out = [];
    yield* ready;
  };
  for await (const piece of source) {
    for (let at = 0; at < piece.length; at += DEFLATE_SLICE) {
      deflater.push(piece.subarray(at, at + DEFLATE_SLICE), false);
      yield* drain();
    }
  }
  deflater.push(new Uint8Array(0), true);
  yield* drain();
}

let compiledTypes: { setting: string; patterns: RegExp[] } | undefined;

/**
 * `[attachments] compressible_types` as couch_db:compressible_att_type reads it: each entry is
 * a regular expression whose first `*` stands for `.*`, matched against the whole content type
 * (case-insensitively, parameters after `;` allowed), so an entry may also start with the
 * wildcard, or carry one in its subtype. Which uploads are gzip'd decides their digests, and so
 * the revision ids: they must be CouchDB's. An entry that is no valid expression matches nothing.
 */
function compressibleTypePatterns(setting: string): RegExp[] {
  if (compiledTypes?.setting !== setting) {
    const patterns: RegExp[] = [];
    for (const entry of setting.split(/\s*,\s*/)) {
      if (entry === '') continue;
      try {
        patterns.push(new RegExp(`^\\s*${entry.replace('*', '.*')}(?:\\s*;.*?)?\\s*$`, 'i'));
      } catch {
        // Not an expression: CouchDB's re:run fails on it; here it just compresses nothing.
      }
    }
    compiledTypes = { setting, patterns };
  }
  return compiledTypes.patterns;
}

function toInfo(digest: string, record: DigestRecord): ContentInfo {
  return record.e ? { digest, length: record.l, encoding: record.e, encodedLength: record.s } : { digest, length: record.l };
}



function digestKey(md5: Buffer): Buffer {
  return prefixed(Prefix.Digest, md5);
}

function parseDigest(digest: string): Buffer | undefined {
  if (!digest.startsWith('md5-')) return undefined;
  const raw = Buffer.from(digest.slice(4), 'base64');
  return raw.length === 16 ? raw : undefined;
}
