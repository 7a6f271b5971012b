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
}

const encoder = new TextEncoder();
/** Longest id kept whole in a key; leaves room for prefixes and a revision id. */
const IDKEY_MAX = 1800;
const IDKEY_CUT = 1760;

export function idKey(id: string): { bytes: Uint8Array; cut: boolean } {
  const bytes = encoder.encode(id);
  if (bytes.length <= IDKEY_MAX) return { bytes, cut: false };
  const hash = createHash('sha256').update(bytes).digest();
  const out = new Uint8Array(IDKEY_CUT + 1 + hash.length);
  out.set(bytes.subarray(0, IDKEY_CUT));
  out[IDKEY_CUT] = 0xff; // never occurs in UTF-8: sorts after every id with the same prefix
  out.set(hash, IDKEY_CUT + 1);
  return { bytes: out, cut: true };
}

export function prefixed(prefix: Prefix, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1);
  out[0] = prefix;
  out.set(body, 1);
  return out;
}

export const infoKey = (id: string): Uint8Array => prefixed(Prefix.Info, idKey(id).bytes);
export const liveKey = (id: string): Uint8Array => prefixed(Prefix.Live, idKey(id).bytes);
export const localKey = (id: string): Uint8Array => prefixed(Prefix.Local, idKey(id).bytes);
export const metaKey = (name: string): Uint8Array => prefixed(Prefix.Meta, encoder.encode(name));

export function seqKey(seq: number): Uint8Array {
  return numberKey(Prefix.Seq, seq);
}
export function purgeKey(seq: number): Uint8Array {
  return numberKey(Prefix.Purge, seq);
}

function numberKey(prefix: Prefix, n: number): Uint8Array {
  const out = new Uint8Array(9);
  out[0] = prefix;
  new DataView(out.buffer).setBigUint64(1, BigInt(n));
  return out;
}

export function seqFromKey(key: Uint8Array): number {
  return Number(new DataView(key.buffer, key.byteOffset, key.byteLength).getBigUint64(1));
}

export function revKey(id: string, rev: string): Uint8Array {
  const idBytes = idKey(id).bytes;
  const revBytes = encoder.encode(rev);
  const out = new Uint8Array(5 + idBytes.length + revBytes.length);
  out[0] = Prefix.Rev;
  new DataView(out.buffer).setUint32(1, idBytes.length);
  out.set(idBytes, 5);
  out.set(revBytes, 5 + idBytes.length);
  return out;
}

/** The key range holding every key with the given prefix byte (and optional key prefix). */
export function prefixRange(prefix: Prefix, start?: Uint8Array): { gte: Uint8Array; lt: Uint8Array } {
  const gte = start ? prefixed(prefix, start) : Uint8Array.of(prefix);
  return { gte, lt: Uint8Array.of(prefix + 1) };
}
