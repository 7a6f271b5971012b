/**
 * How a database lays out its records in the ordered store. One-byte prefixes keep each kind in
 * its own key range:
 *
 *   m<name>                 metadata (info counters, revs limit, security)
 *   i<idKey>                document info: id, seq, revision tree
 *   L<idKey>                winning rev of each live (not deleted) document, for _all_docs
 *   s<seq:8>                the latest change of each document, for _changes
 *   r<len:4><idKey><rev>    a revision's body
 *   l<idKey>                _local documents
 *   p<purgeSeq:8>           purge history (views follow it)
 *   d<md5:16>               attachment content by digest: its blob, lengths, encoding
 *
 * Attachment content itself lives in the store's blobs, not in these records.
 *
 * Document ids may exceed the store's key limit: such ids are cut and suffixed with a hash, so
 * the full id always lives in the record, and ordering stays by id except among ids that share
 * their first IDKEY_CUT bytes.
 */
import { createHash } from 'node:crypto';

export const enum Prefix {
  Meta = 0x6d, // m
  Info = 0x69, // i
  Live = 0x4c, // L
  Seq = 0x73, // s
  Rev = 0x72, // r
  Local = 0x6c, // l
  Purge = 0x70, // p
  Digest = 0x64, // d: attachment content by digest
}

/** Longest id kept whole in a key; leaves room for prefixes and a revision id. */
const IDKEY_MAX = 1800;
const IDKEY_CUT = 1760;

/** A document id's key bytes, computed once and reused for every key of that document. */
export interface IdKey {
  bytes: Buffer;
  /** True when the id was too long and its key is a cut prefix plus a hash. */
  cut: boolean;
}

export function idKey(id: string): IdKey {
  const bytes = Buffer.from(id, 'utf8');
  if (bytes.length <= IDKEY_MAX) return { bytes, cut: false };
  const hash = createHash('sha256').update(bytes).digest();
  const out = Buffer.allocUnsafe(IDKEY_CUT + 1 + hash.length);
  bytes.copy(out, 0, 0, IDKEY_CUT);
  out[IDKEY_CUT] = 0xff; // never occurs in UTF-8: sorts after every id with the same prefix
  hash.copy(out, IDKEY_CUT + 1);
  return { bytes: out, cut: true };
}

export function prefixed(prefix: Prefix, body: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = prefix;
  out.set(body, 1);
  return out;
}

type Id = string | IdKey;
const keyOf = (id: Id): IdKey => (typeof id === 'string' ? idKey(id) : id);

/** `<prefix> <id key>`, written straight from the id when it is short enough to be kept whole. */
function idKeyed(prefix: Prefix, id: Id): Buffer {
  if (typeof id === 'string') {
    const length = Buffer.byteLength(id, 'utf8');
    if (length <= IDKEY_MAX) {
      const out = Buffer.allocUnsafe(1 + length);
      out[0] = prefix;
      out.write(id, 1, 'utf8');
      return out;
    }
  }
  return prefixed(prefix, keyOf(id).bytes);
}

export const infoKey = (id: Id): Buffer => idKeyed(Prefix.Info, id);
export const liveKey = (id: Id): Buffer => idKeyed(Prefix.Live, id);
export const localKey = (id: Id): Buffer => idKeyed(Prefix.Local, id);
export const metaKey = (name: string): Buffer => prefixed(Prefix.Meta, Buffer.from(name, 'utf8'));

export function seqKey(seq: number): Buffer {
  return numberKey(Prefix.Seq, seq);
}
export function purgeKey(seq: number): Buffer {
  return numberKey(Prefix.Purge, seq);
}

function numberKey(prefix: Prefix, n: number): Buffer {
  const out = Buffer.allocUnsafe(9);
  out[0] = prefix;
  // Two 32-bit halves: sequences stay far below 2^53, and this avoids a BigInt per key.
  out.writeUInt32BE(Math.floor(n / 0x100000000), 1);
  out.writeUInt32BE(n >>> 0, 5);
  return out;
}

export function seqFromKey(key: Uint8Array): number {
  const buf = Buffer.isBuffer(key) ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return buf.readUInt32BE(1) * 0x100000000 + buf.readUInt32BE(5);
}

export function revKey(id: Id, rev: string): Buffer {
  const revLength = Buffer.byteLength(rev, 'utf8');
  if (typeof id === 'string') {
    // A short id is written straight into the key (no intermediate buffer).
    const idLength = Buffer.byteLength(id, 'utf8');
    if (idLength <= IDKEY_MAX) {
      const out = Buffer.allocUnsafe(5 + idLength + revLength);
      out[0] = Prefix.Rev;
      out.writeUInt32BE(idLength, 1);
      out.write(id, 5, 'utf8');
      out.write(rev, 5 + idLength, 'utf8');
      return out;
    }
  }
  const idBytes = keyOf(id).bytes;
  const out = Buffer.allocUnsafe(5 + idBytes.length + revLength);
  out[0] = Prefix.Rev;
  out.writeUInt32BE(idBytes.length, 1);
  idBytes.copy(out, 5);
  out.write(rev, 5 + idBytes.length, 'utf8');
  return out;
}

/** The key range holding every key with the given prefix byte (and optional key prefix). */
export function prefixRange(prefix: Prefix, start?: Uint8Array): { gte: Buffer; lt: Buffer } {
  const gte = start ? prefixed(prefix, start) : Buffer.of(prefix);
  return { gte, lt: Buffer.of(prefix + 1) };
}
