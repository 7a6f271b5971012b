/**
 * Password hashing as CouchDB 1.6 stores it: PBKDF2-HMAC-SHA1 (20-byte key, hex) for user
 * documents and `-pbkdf2-` admin entries, and the older salted SHA-1 (`simple` scheme,
 * `-hashed-` admin entries) still verified. Hashing runs on libuv's thread pool, never on the
 * event loop; every comparison is constant-time.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { ADMIN_HASH_PBKDF2, ADMIN_HASH_SHA1 } from '../couchdb-names.js';

/** What verifies a password: the stored hash material of a user or server admin. */
export type PasswordHash =
  | { scheme: 'pbkdf2'; derivedKey: string; salt: string; iterations: number }
  | { scheme: 'simple'; passwordSha: string; salt: string };

/** CouchDB's salts are random UUIDs: 32 hex characters, used as text. */
export function newSalt(): string {
  return randomBytes(16).toString('hex');
}

export function pbkdf2Hex(password: string, salt: string, iterations: number): Promise<string> {
  return new Promise((resolve, reject) => {
    pbkdf2(password, salt, iterations, 20, 'sha1', (err, key) => (err ? reject(err) : resolve(key.toString('hex'))));
  });
}

/** Equality of two strings in time that depends on neither: both are digested to 32 bytes first. */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

export async function verifyPassword(password: string, hash: PasswordHash): Promise<boolean> {
  if (hash.scheme === 'pbkdf2') {
    return constantTimeEqual(await pbkdf2Hex(password, hash.salt, hash.iterations), hash.derivedKey.toLowerCase());
  }
  const sha = createHash('sha1').update(password + hash.salt).digest('hex');
  return constantTimeEqual(sha, hash.passwordSha.toLowerCase());
}

/** A user document's hash material for a new password. */
export async function hashForUserDoc(password: string, iterations: number): Promise<{ derived_key: string; salt: string; iterations: number }> {
  const salt = newSalt();
  return { derived_key: await pbkdf2Hex(password, salt, iterations), salt, iterations };
}

/** Whether an `[admins]` value is already hashed (anything else is a plain password to hash). */
export function isHashedAdminValue(value: string): boolean {
  return value.startsWith(ADMIN_HASH_PBKDF2) || value.startsWith(ADMIN_HASH_SHA1);
}

/** `-pbkdf2-<derived_key>,<salt>,<iterations>` for a plain admin password. */
export async function hashAdminPassword(password: string, iterations: number): Promise<string> {
  const salt = newSalt();
  return `${ADMIN_HASH_PBKDF2}${await pbkdf2Hex(password, salt, iterations)},${salt},${iterations}`;
}

/** The hash material of an `[admins]` value; undefined when it is not a hash CouchDB writes. */
export function parseAdminHash(value: string): PasswordHash | undefined {
  if (value.startsWith(ADMIN_HASH_PBKDF2)) {
    const [derivedKey, salt, iterationsText] = value.slice(ADMIN_HASH_PBKDF2.length).split(',');
    const iterations = Number(iterationsText);
    if (!derivedKey || !salt || !Number.isInteger(iterations) || iterations < 1) return undefined;
    return { scheme: 'pbkdf2', derivedKey, salt, iterations };
  }
  if (value.startsWith(ADMIN_HASH_SHA1)) {
    const [passwordSha, salt] = value.slice(ADMIN_HASH_SHA1.length).split(',');
    if (!passwordSha || salt === undefined) return undefined;
    return { scheme: 'simple', passwordSha, salt };
  }
  return undefined;
}

/** The hash material of a user document; undefined when it has none usable. */
export function userDocHash(doc: Record<string, unknown>): PasswordHash | undefined {
  const salt = doc['salt'];
  if (typeof salt !== 'string') return undefined;
  if (doc['password_scheme'] === 'pbkdf2') {
    const derivedKey = doc['derived_key'];
    // Without `iterations`, 10000 (couch_httpd_auth:authenticate's default).
    const iterations = doc['iterations'] ?? 10000;
    if (typeof derivedKey !== 'string' || typeof iterations !== 'number' || !Number.isInteger(iterations) || iterations < 1) return undefined;
    return { scheme: 'pbkdf2', derivedKey, salt, iterations };
  }
  const passwordSha = doc['password_sha'];
  if (typeof passwordSha === 'string') return { scheme: 'simple', passwordSha, salt };
  return undefined;
}

/** A keyed digest of a password that verified, so a cache can recognise it without keeping it. */
export function passwordFingerprint(key: Buffer, password: string): Buffer {
  return createHmac('sha256', key).update(password).digest();
}
