/**
 * The credential formats against published vectors: PBKDF2-HMAC-SHA1 (RFC 6070), `[admins]`
 * hashes, AuthSession cookies, OAuth 1.0 signature base strings and signatures (RFC 5849's
 * example), and the access rules of security objects.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  constantTimeEqual, hashAdminPassword, parseAdminHash, pbkdf2Hex, userDocHash, verifyPassword,
} from '../../src/auth/password.js';
import { cookieValue, makeSessionToken, parseSessionToken, tokenMacValid } from '../../src/auth/cookie.js';
import { hmacSha1Signature, oauthEncode, signatureBase } from '../../src/auth/oauth.js';
import { isDbAdmin, isDbReader } from '../../src/auth/access.js';
import { basicCredentials, proxyToken } from '../../src/auth/authenticator.js';

test('PBKDF2-HMAC-SHA1 matches RFC 6070', async () => {
  assert.equal(await pbkdf2Hex('password', 'salt', 1), '0c60c80f961f0e71f3a9b524af6012062fe037a6');
  assert.equal(await pbkdf2Hex('password', 'salt', 2), 'ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957');
  assert.equal(await pbkdf2Hex('password', 'salt', 4096), '4b007901b765489abead49d926f721d065a429c1');
});

test('admin hashes: -pbkdf2- written and verified, -hashed- verified, plain values not taken for hashes', async () => {
  const stored = await hashAdminPassword('s3cret', 10);
  const hash = parseAdminHash(stored)!;
  assert.equal(hash.scheme, 'pbkdf2');
  assert.equal(await verifyPassword('s3cret', hash), true);
  assert.equal(await verifyPassword('s3cret ', hash), false);
  const sha = createHash('sha1').update('oldsalt1').digest('hex');
  const legacy = parseAdminHash(`-hashed-${sha},salt1`)!;
  assert.equal(await verifyPassword('old', legacy), true);
  assert.equal(await verifyPassword('olds', legacy), false);
  assert.equal(parseAdminHash('plain'), undefined);
  assert.equal(parseAdminHash('-pbkdf2-abc,salt,notanumber'), undefined);
});

test('user documents: pbkdf2 and simple schemes', async () => {
  const key = await pbkdf2Hex('pw', 'abc', 10);
  assert.equal(await verifyPassword('pw', userDocHash({ password_scheme: 'pbkdf2', derived_key: key, salt: 'abc', iterations: 10 })!), true);
  const sha = createHash('sha1').update('pwabc').digest('hex');
  assert.equal(await verifyPassword('pw', userDocHash({ password_sha: sha, salt: 'abc' })!), true);
  assert.equal(userDocHash({ name: 'x' }), undefined);
});

test('constant-time equality handles any lengths', () => {
  assert.equal(constantTimeEqual('abc', 'abc'), true);
  assert.equal(constantTimeEqual('abc', 'abd'), false);
  assert.equal(constantTimeEqual('abc', 'abcd'), false);
  assert.equal(constantTimeEqual('', ''), true);
});

test('AuthSession tokens round-trip and fail with another secret, salt, name or time', () => {
  const token = makeSessionToken('bob', 0x5f5e100, 'secret', 'salt');
  const parsed = parseSessionToken(token);
  assert.equal(parsed.name, 'bob');
  assert.equal(parsed.issued, 0x5f5e100);
  assert.equal(parsed.hexTime, '5F5E100');
  assert.equal(tokenMacValid(parsed, 'secret', 'salt'), true);
  assert.equal(tokenMacValid(parsed, 'secret2', 'salt'), false);
  assert.equal(tokenMacValid(parsed, 'secret', 'salt2'), false);
  assert.equal(tokenMacValid({ ...parsed, name: 'eve' }, 'secret', 'salt'), false);
  assert.equal(tokenMacValid({ ...parsed, hexTime: '5F5E101' }, 'secret', 'salt'), false);
  assert.throws(() => parseSessionToken(Buffer.from('no colons').toString('base64url')), /Malformed AuthSession/);
  assert.equal(cookieValue('a=1; AuthSession=xyz; b=2', 'AuthSession'), 'xyz');
  assert.equal(cookieValue('a=1', 'AuthSession'), undefined);
});

test('OAuth 1.0 signature of RFC 5849 section 3.4.1\'s example', () => {
  const params: [string, string][] = [
    ['b5', '=%3D'], ['a3', 'a'], ['c@', ''], ['a2', 'r b'],
    ['oauth_consumer_key', '9djdj82h48djs9d2'], ['oauth_token', 'kkk9d7dh3k39sjv7'],
    ['oauth_signature_method', 'HMAC-SHA1'], ['oauth_timestamp', '137131201'], ['oauth_nonce', '7d8f3e4a'],
    ['c2', ''], ['a3', '2 q'], ['realm', 'Example'], ['oauth_signature', 'ignored'],
  ];
  const base = signatureBase('POST', 'http://example.com/request', params);
  assert.equal(base,
    'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26' +
    'oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26' +
    'oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7');
  assert.equal(oauthEncode("!'()*"), '%21%27%28%29%2A');
  // RFC 5849 section 1.2's request: GET photos with the token credentials.
  const photos = signatureBase('GET', 'http://photos.example.net/photos', [
    ['file', 'vacation.jpg'], ['size', 'original'], ['oauth_consumer_key', 'dpf43f3p2l4k3l03'], ['oauth_token', 'nnch734d00sl2jdk'],
    ['oauth_signature_method', 'HMAC-SHA1'], ['oauth_timestamp', '137131202'], ['oauth_nonce', 'chapoH'],
  ]);
  assert.equal(hmacSha1Signature(photos, 'kd94hf93k423kf44', 'pfkkdhi9sl3r4s00'), 'MdpQcU8iPSUjWoN/UDMsK2sui9I=');
});

test('security objects: admins, members, the old readers name, and empty members', () => {
  const sec = { admins: { names: ['dan'], roles: ['chiefs'] }, members: { names: ['mia'], roles: ['crew'] } };
  const user = (name: string | null, roles: string[] = []) => ({ name, roles });
  assert.equal(isDbAdmin(user('dan'), sec), true);
  assert.equal(isDbAdmin(user('x', ['chiefs']), sec), true);
  assert.equal(isDbAdmin(user(null, ['_admin']), sec), true);
  assert.equal(isDbAdmin(user('mia'), sec), false);
  assert.equal(isDbReader(user('mia'), sec), true);
  assert.equal(isDbReader(user('x', ['crew']), sec), true);
  assert.equal(isDbReader(user('dan'), sec), true);
  assert.equal(isDbReader(user('otto'), sec), false);
  assert.equal(isDbReader(user(null), sec), false);
  assert.equal(isDbReader(user(null), {}), true);
  assert.equal(isDbReader(user(null), { members: { names: [], roles: [] } }), true);
  assert.equal(isDbReader(user('otto'), { readers: { names: ['rex'], roles: [] } }), false);
  assert.equal(isDbReader(user('rex'), { readers: { names: ['rex'], roles: [] } }), true);
});

test('Basic credentials and proxy tokens', () => {
  assert.deepEqual(basicCredentials(`Basic ${Buffer.from('bob:pa:ss').toString('base64')}`), { name: 'bob', password: 'pa:ss' });
  assert.equal(basicCredentials('Bearer x'), undefined);
  assert.equal(basicCredentials(undefined), undefined);
  assert.match(proxyToken('secret', 'bob'), /^[0-9a-f]{40}$/);
});
