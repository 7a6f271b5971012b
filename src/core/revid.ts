/**
 * Deterministic revision ids: the MD5 of the edit (deleted flag, parent revision, the body as
 * serialised, attachment digests), so the same edit made on two replicas yields the same
 * revision id, as CouchDB's do. Like CouchDB's, the hash follows the body's key order as the
 * client sent it.
 */
import { hash } from 'node:crypto';

export function newRevHash(deleted: boolean, parentRev: string | null, bodyJson: string, attachmentDigests: readonly string[] = []): string {
  const digests = attachmentDigests.length === 0 ? '' : [...attachmentDigests].sort().join(',');
  // One-shot hashing: no Hash object per revision.
  return hash('md5', `${deleted ? 1 : 0}\n${parentRev ?? ''}\n${bodyJson}\n${digests}`, 'hex');
}
