/**
 * Deterministic revision ids: the MD5 of a canonical form of the edit (deleted flag, parent
 * revision, body with keys sorted, attachment digests), so the same edit made on two replicas
 * yields the same revision id, as CouchDB's do.
 */
import { createHash } from 'node:crypto';

export function newRevHash(deleted: boolean, parentRev: string | null, body: unknown, attachmentDigests: readonly string[] = []): string {
  const canonical = `${deleted ? 1 : 0}\n${parentRev ?? ''}\n${canonicalJson(body)}\n${[...attachmentDigests].sort().join(',')}`;
  return createHash('md5').update(canonical).digest('hex');
}

/** JSON with object keys sorted by code point, so equal values always serialise identically. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}
