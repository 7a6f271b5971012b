import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  decodeConfiguredKey, parseRequiredClaims, rolesFromClaims, verifyJwt, type KeyLookup, type VerificationKey,
} from '../../src/auth/jwt.js';
import { CouchError } from '../../src/errors.js';

const NOW = 1_700_000_000;
const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

function hmacToken(header: Record<string, unknown>, claims: Record<string, unknown>, secret: string, digest = 'sha256'): string {
  const message = `${segment(header)}.${segment(claims)}`;
  return `${message}.${createHmac(digest, secret).update(message).digest('base64url')}`;
}

function keyToken(alg: string, claims: Record<string, unknown>, privateKey: KeyObject, dsaEncoding?: 'der' | 'ieee-p1363'): string {
  const message = `${segment({ alg, typ: 'JWT' })}.${segment(claims)}`;
  const signature = sign(`sha${alg.slice(2)}`, Buffer.from(message), dsaEncoding ? { key: privateKey, dsaEncoding } : privateKey);
  return `${message}.${signature.toString('base64url')}`;
}

const none = parseRequiredClaims('');
const secretKeys = (secret: string): KeyLookup => (family) => {
  assert.equal(family, 'hmac');
  return Buffer.from(secret);
};

/** Runs `fn` and answers the CouchDB error it throws, as [status, error, reason]. */
function failure(fn: () => unknown): [number, string, string] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CouchError, String(err));
    return [err.status, err.error, err.reason];
  }
  assert.fail('expected an error');
}

test('required_claims: bare names must be present, {name, "value"} must match; nonsense is a misconfigured server', () => {
  const claims = parseRequiredClaims('exp, iat, {iss, "hello"}');
  assert.deepEqual([...claims.present], ['exp', 'iat']);
  assert.deepEqual([...claims.values], [['iss', 'hello']]);
  assert.equal(parseRequiredClaims('').present.size, 0);
  assert.deepEqual(failure(() => parseRequiredClaims('EXP!')), [500, 'misconfigured_server', 'JWT is not configured correctly']);
});

test('HS256/384/512 tokens verify with the shared secret; a wrong one is a Bad HMAC', () => {
  for (const [alg, digest] of [['HS256', 'sha256'], ['HS384', 'sha384'], ['HS512', 'sha512']] as const) {
    const token = hmacToken({ alg, typ: 'JWT' }, { sub: 'bob', n: 1 }, 'secret', digest);
    assert.deepEqual(verifyJwt(token, none, secretKeys('secret'), NOW), { sub: 'bob', n: 1 });
    assert.deepEqual(failure(() => verifyJwt(token, none, secretKeys('other'), NOW)), [400, 'bad_request', 'Bad HMAC']);
  }
});

test('a token signed elsewhere (PyJWT, HS384) verifies', () => {
  const token = 'eyJhbGciOiJIUzM4NCIsInR5cCI6IkpXVCJ9.eyJmb28iOiJiYXIifQ.2quwghs6I56GM3j7ZQbn-ASZ53xdBqzPzTDHm_CtVec32LUy-EzyL3JjIe7WjL93';
  assert.deepEqual(verifyJwt(token, none, secretKeys('secret'), NOW), { foo: 'bar' });
});

test('RS256/384/512 verify with an RSA public key; EC keys take both r‖s and DER signatures', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  for (const alg of ['RS256', 'RS384', 'RS512']) {
    const token = keyToken(alg, { sub: 'r' }, rsa.privateKey);
    assert.deepEqual(verifyJwt(token, none, (family) => (assert.equal(family, 'rsa'), rsa.publicKey), NOW), { sub: 'r' });
  }
  for (const [alg, curve] of [['ES256', 'prime256v1'], ['ES384', 'secp384r1'], ['ES512', 'secp521r1']] as const) {
    const ec = generateKeyPairSync('ec', { namedCurve: curve });
    const keys: KeyLookup = (family) => (assert.equal(family, 'ec'), ec.publicKey);
    for (const encoding of ['ieee-p1363', 'der'] as const) {
      assert.deepEqual(verifyJwt(keyToken(alg, { sub: 'e' }, ec.privateKey, encoding), none, keys, NOW), { sub: 'e' });
    }
    const other = generateKeyPairSync('ec', { namedCurve: curve });
    assert.deepEqual(failure(() => verifyJwt(keyToken(alg, { sub: 'e' }, other.privateKey), none, keys, NOW)), [400, 'bad_request', 'Bad signature']);
  }
});

test('the token\'s kid picks the key; without one the lookup is asked for none', () => {
  const seen: (string | undefined)[] = [];
  const keys: KeyLookup = (_family, kid) => {
    seen.push(kid);
    return Buffer.from('s');
  };
  verifyJwt(hmacToken({ alg: 'HS256', kid: 'k1' }, {}, 's'), none, keys, NOW);
  verifyJwt(hmacToken({ alg: 'HS256' }, {}, 's'), none, keys, NOW);
  assert.deepEqual(seen, ['k1', undefined]);
  assert.deepEqual(failure(() => verifyJwt(hmacToken({ alg: 'HS256' }, {}, 's'), parseRequiredClaims('kid'), keys, NOW)), [400, 'bad_request', 'Missing kid claim']);
});

test('malformed tokens and headers are 400s with CouchDB\'s reasons', () => {
  const keys = secretKeys('s');
  assert.deepEqual(failure(() => verifyJwt('a.b', none, keys, NOW)), [400, 'bad_request', 'Malformed token']);
  assert.deepEqual(failure(() => verifyJwt('a.b.c.d', none, keys, NOW)), [400, 'bad_request', 'Malformed token']);
  assert.deepEqual(failure(() => verifyJwt(`${segment([1])}.${segment({})}.x`, none, keys, NOW)), [400, 'bad_request', 'Not an object']);
  assert.deepEqual(failure(() => verifyJwt(`${segment({ typ: 'JWT' })}.${segment({})}.x`, none, keys, NOW)), [400, 'bad_request', 'Missing alg header parameter']);
  assert.deepEqual(failure(() => verifyJwt(`${segment({ alg: 'none' })}.${segment({})}.`, none, keys, NOW)), [400, 'bad_request', 'Invalid alg header parameter']);
  assert.deepEqual(failure(() => verifyJwt(`${segment({ alg: 'HS256' })}.e30%.x`, none, keys, NOW)), [400, 'bad_request', 'Malformed token']);
  const typ = parseRequiredClaims('typ');
  assert.deepEqual(failure(() => verifyJwt(hmacToken({ alg: 'HS256' }, {}, 's'), typ, keys, NOW)), [400, 'bad_request', 'Missing typ header parameter']);
  assert.deepEqual(failure(() => verifyJwt(hmacToken({ alg: 'HS256', typ: 'X' }, {}, 's'), typ, keys, NOW)), [400, 'bad_request', 'Invalid typ header parameter']);
});

test('only required claims are checked: exp, nbf, iat and iss', () => {
  const keys = secretKeys('s');
  const token = (claims: Record<string, unknown>): string => hmacToken({ alg: 'HS256' }, claims, 's');
  const expired = token({ exp: NOW - 1, nbf: NOW + 100, iat: 'soon', iss: 'someone' });
  assert.deepEqual(verifyJwt(expired, none, keys, NOW).exp, NOW - 1);
  const exp = parseRequiredClaims('exp');
  assert.deepEqual(failure(() => verifyJwt(expired, exp, keys, NOW)), [401, 'unauthorized', 'exp not in future']);
  assert.deepEqual(failure(() => verifyJwt(token({}), exp, keys, NOW)), [400, 'bad_request', 'Missing exp claim']);
  assert.equal(verifyJwt(token({ exp: NOW + 1 }), exp, keys, NOW).exp, NOW + 1);
  const nbf = parseRequiredClaims('nbf');
  assert.deepEqual(failure(() => verifyJwt(expired, nbf, keys, NOW)), [401, 'unauthorized', 'nbf not in past']);
  assert.deepEqual(failure(() => verifyJwt(token({}), nbf, keys, NOW)), [400, 'bad_request', 'Missing nbf claim']);
  const iat = parseRequiredClaims('iat');
  assert.deepEqual(failure(() => verifyJwt(expired, iat, keys, NOW)), [400, 'bad_request', 'Invalid iat claim']);
  assert.deepEqual(failure(() => verifyJwt(token({}), iat, keys, NOW)), [400, 'bad_request', 'Missing iat claim']);
  const iss = parseRequiredClaims('{iss, "hello"}');
  assert.deepEqual(failure(() => verifyJwt(expired, iss, keys, NOW)), [400, 'bad_request', 'Invalid iss claim']);
  assert.deepEqual(failure(() => verifyJwt(token({}), iss, keys, NOW)), [400, 'bad_request', 'Missing iss claim']);
  assert.equal(verifyJwt(token({ iss: 'hello' }), iss, keys, NOW).iss, 'hello');
});

test('configured keys: base64 secrets, PEM public keys with escaped line breaks, of the family the algorithm needs', () => {
  assert.deepEqual(decodeConfiguredKey('hmac', Buffer.from('zxczxc12').toString('base64')), Buffer.from('zxczxc12'));
  assert.deepEqual(failure(() => decodeConfiguredKey('hmac', 'not base64!')), [400, 'bad_request', 'Not a valid key']);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
  const escaped = (key: KeyObject): string => (key.export({ type: 'spki', format: 'pem' }) as string).replace(/\n/g, '\\n');
  const decoded: VerificationKey = decodeConfiguredKey('rsa', escaped(rsa));
  assert.equal((decoded as KeyObject).asymmetricKeyType, 'rsa');
  assert.equal((decodeConfiguredKey('ec', escaped(ec)) as KeyObject).asymmetricKeyType, 'ec');
  assert.deepEqual(failure(() => decodeConfiguredKey('rsa', escaped(ec))), [400, 'bad_request', 'not an RSA public key']);
  assert.deepEqual(failure(() => decodeConfiguredKey('ec', escaped(rsa))), [400, 'bad_request', 'not an EC public key']);
  assert.deepEqual(failure(() => decodeConfiguredKey('ec', 'garbage')), [400, 'bad_request', 'Not a valid key']);
});

test('roles: the named claim or a dotted path, an array of strings or one comma-separated string', () => {
  assert.deepEqual(rolesFromClaims({ '_couchdb.roles': ['a', 'b'] }, '_couchdb.roles', undefined), ['a', 'b']);
  assert.deepEqual(rolesFromClaims({}, '_couchdb.roles', undefined), []);
  assert.deepEqual(rolesFromClaims({ groups: 'a , b,c' }, 'groups', undefined), ['a', 'b', 'c']);
  assert.deepEqual(failure(() => rolesFromClaims({ groups: [1] }, 'groups', undefined)), [400, 'bad_request', 'Malformed token']);
  const claims = { realm_access: { roles: ['x'] }, 'my.claim': { r: 'y' } };
  assert.deepEqual(rolesFromClaims(claims, 'ignored', 'realm_access.roles'), ['x']);
  assert.deepEqual(rolesFromClaims(claims, 'ignored', 'my\\.claim.r'), ['y']);
  assert.deepEqual(failure(() => rolesFromClaims(claims, 'ignored', 'realm_access.nope')), [404, 'not_found', 'missing json key: nope']);
});
