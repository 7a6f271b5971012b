/**
 * JSON Web Tokens as CouchDB 3's `jwt_authentication_handler` checks them (its jwtf and
 * jwtf_keystore modules): a compact JWS signed with HS256/384/512 (a shared secret), RS256/384/512
 * or ES256/384/512 (a public key); the claims `[jwt_auth] required_claims` names must be present
 * and valid, other claims are not checked. Errors carry CouchDB's reasons: a token that is not
 * well formed, or whose key is unknown, is a 400; an expired one a 401.
 */
import { createHmac, createPublicKey, timingSafeEqual, verify, type KeyObject } from 'node:crypto';
import { CouchError, badRequest, unauthorized } from '../errors.js';

/** A key's family, as `[jwt_keys]` entries are prefixed. */
export type JwtKeyFamily = 'hmac' | 'rsa' | 'ec';

/** The algorithms CouchDB accepts, by the key family (`[jwt_keys]` prefix) and digest each uses. */
const ALGORITHMS: Record<string, { family: JwtKeyFamily; digest: string }> = {
  HS256: { family: 'hmac', digest: 'sha256' },
  HS384: { family: 'hmac', digest: 'sha384' },
  HS512: { family: 'hmac', digest: 'sha512' },
  RS256: { family: 'rsa', digest: 'sha256' },
  RS384: { family: 'rsa', digest: 'sha384' },
  RS512: { family: 'rsa', digest: 'sha512' },
  ES256: { family: 'ec', digest: 'sha256' },
  ES384: { family: 'ec', digest: 'sha384' },
  ES512: { family: 'ec', digest: 'sha512' },
};

/** The checks `required_claims` can ask for; `alg` is always made. */
export interface RequiredClaims {
  /** Claims that must be present (and, for exp, nbf and iat, valid); `typ` and `kid` are header fields. */
  present: Set<string>;
  /** Claims that must have exactly this value (`{iss, "value"}`). */
  values: Map<string, string>;
}

/** `exp, {iss, "hello"}` → exp must be there and in the future, iss must be "hello". */
export function parseRequiredClaims(spec: string): RequiredClaims {
  const claims: RequiredClaims = { present: new Set(), values: new Map() };
  const pattern = /\{\s*([a-z]+)\s*,\s*"([^"]+)"\s*\}|([a-z]+)/g;
  for (const m of spec.matchAll(pattern)) {
    if (m[1] !== undefined && m[2] !== undefined) claims.values.set(m[1], m[2]);
    else if (m[3] !== undefined) claims.present.add(m[3]);
  }
  if (claims.present.size === 0 && claims.values.size === 0 && spec.trim() !== '') {
    throw new CouchError(500, 'misconfigured_server', 'JWT is not configured correctly');
  }
  return claims;
}

/** A verification key: an HMAC secret's bytes or a public key. */
export type VerificationKey = Buffer | KeyObject;

/** Finds the key for a token's algorithm family and key id (undefined when the token names none). */
export type KeyLookup = (family: JwtKeyFamily, kid: string | undefined) => VerificationKey;

const decodedKeys = new Map<string, VerificationKey>();

/**
 * The key a `[jwt_keys]` entry holds: base64 of the secret for `hmac:`, a PEM public key (its line
 * breaks written `\n`) for `rsa:` and `ec:`. Decoded keys are kept by their text.
 */
export function decodeConfiguredKey(family: JwtKeyFamily, text: string): VerificationKey {
  const cacheKey = `${family}:${text}`;
  const known = decodedKeys.get(cacheKey);
  if (known) return known;
  let key: VerificationKey;
  if (family === 'hmac') {
    const compact = text.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0) throw badRequest('Not a valid key');
    key = Buffer.from(compact, 'base64');
  } else {
    try {
      key = createPublicKey(text.split('\\n').join('\n'));
    } catch {
      throw badRequest('Not a valid key');
    }
    if (key.asymmetricKeyType !== family) throw badRequest(family === 'rsa' ? 'not an RSA public key' : 'not an EC public key');
  }
  if (decodedKeys.size > 64) decodedKeys.clear();
  decodedKeys.set(cacheKey, key);
  return key;
}

/** Decodes and checks a token; answers its claims. `now` is in seconds since the epoch. */
export function verifyJwt(token: string, required: RequiredClaims, keys: KeyLookup, now = Date.now() / 1000): Record<string, unknown> {
  const parts = token.split('.');
  if (parts.length !== 3) throw badRequest('Malformed token');
  const [encodedHeader = '', encodedPayload = '', encodedSignature = ''] = parts;
  const header = decodeSegment(encodedHeader);
  checkHeader(header, required);
  const claims = decodeSegment(encodedPayload);
  checkClaims(claims, required, now);
  const alg = header['alg'] as string;
  const { family, digest } = ALGORITHMS[alg]!;
  const kid = typeof header['kid'] === 'string' ? header['kid'] : undefined;
  const key = keys(family, kid);
  const message = Buffer.from(`${encodedHeader}.${encodedPayload}`);
  const signature = Buffer.from(encodedSignature, 'base64url');
  if (family === 'hmac') {
    const expected = createHmac(digest, key as Buffer).update(message).digest();
    if (expected.length !== signature.length || !timingSafeEqual(expected, signature)) throw badRequest('Bad HMAC');
  } else if (!signatureValid(digest, message, key as KeyObject, signature, family)) {
    throw badRequest('Bad signature');
  }
  return claims;
}

function decodeSegment(segment: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(segment)) throw badRequest('Malformed token');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('Malformed token');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('Not an object');
  return value as Record<string, unknown>;
}

function checkHeader(header: Record<string, unknown>, required: RequiredClaims): void {
  if (required.present.has('typ')) {
    if (header['typ'] === undefined) throw badRequest('Missing typ header parameter');
    if (header['typ'] !== 'JWT') throw badRequest('Invalid typ header parameter');
  }
  const alg = header['alg'];
  if (alg === undefined) throw badRequest('Missing alg header parameter');
  if (typeof alg !== 'string' || !Object.hasOwn(ALGORITHMS, alg)) throw badRequest('Invalid alg header parameter');
  if (required.present.has('kid') && header['kid'] === undefined) throw badRequest('Missing kid claim');
}

/** Only the claims asked for are checked, as CouchDB does: an unrequired `exp` in the past passes. */
function checkClaims(claims: Record<string, unknown>, required: RequiredClaims, now: number): void {
  const iss = required.values.get('iss');
  if (iss !== undefined || required.present.has('iss')) {
    if (claims['iss'] === undefined) throw badRequest('Missing iss claim');
    if (iss !== undefined && claims['iss'] !== iss) throw badRequest('Invalid iss claim');
  }
  if (required.present.has('iat')) {
    if (claims['iat'] === undefined) throw badRequest('Missing iat claim');
    if (!Number.isInteger(claims['iat'])) throw badRequest('Invalid iat claim');
  }
  if (required.present.has('nbf')) {
    if (claims['nbf'] === undefined) throw badRequest('Missing nbf claim');
    if (!(typeof claims['nbf'] === 'number' && claims['nbf'] < now)) throw unauthorized('nbf not in past');
  }
  if (required.present.has('exp')) {
    if (claims['exp'] === undefined) throw badRequest('Missing exp claim');
    if (!(typeof claims['exp'] === 'number' && claims['exp'] > now)) throw unauthorized('exp not in future');
  }
}

/**
 * RSA PKCS#1 v1.5, or ECDSA. A JWS carries an ECDSA signature as r‖s (RFC 7518); CouchDB's own
 * encoder has written DER, so a signature of any other length is read as DER.
 */
function signatureValid(digest: string, message: Buffer, key: KeyObject, signature: Buffer, family: JwtKeyFamily): boolean {
  try {
    if (family === 'rsa') return verify(digest, message, key, signature);
    const p1363Length = 2 * Math.ceil(ecCurveBits(key) / 8);
    const dsaEncoding = signature.length === p1363Length ? 'ieee-p1363' : 'der';
    return verify(digest, message, { key, dsaEncoding }, signature);
  } catch {
    return false;
  }
}

function ecCurveBits(key: KeyObject): number {
  switch (key.asymmetricKeyDetails?.namedCurve) {
    case 'prime256v1': case 'secp256k1': return 256;
    case 'secp384r1': return 384;
    case 'secp521r1': return 521;
    default: return 0;
  }
}

/**
 * The user's roles: the claim `roles_claim_path` reaches (dot-separated keys, `\.` for a dot
 * within a key) or else the claim named `roles_claim_name`; an array of strings or one
 * comma-separated string. Anything else makes the token malformed.
 */
export function rolesFromClaims(claims: Record<string, unknown>, claimName: string, claimPath: string | undefined): string[] {
  let value: unknown;
  if (claimPath !== undefined) {
    value = claims;
    for (const key of claimPath.split(/(?<!\\)\./).map((k) => k.replace(/\\\./g, '.'))) {
      const container = value as Record<string, unknown> | undefined;
      if (typeof container !== 'object' || container === null || Array.isArray(container) || !Object.hasOwn(container, key)) {
        throw new CouchError(404, 'not_found', `missing json key: ${key}`);
      }
      value = container[key];
    }
  } else {
    value = Object.hasOwn(claims, claimName) ? claims[claimName] : [];
  }
  const roles = typeof value === 'string' ? value.split(/\s*,\s*/).filter((r) => r !== '') : value;
  if (!Array.isArray(roles) || !roles.every((r): r is string => typeof r === 'string')) throw badRequest('Malformed token');
  return roles;
}
