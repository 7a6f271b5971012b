/**
 * OAuth 1.0 over real HTTP, requests signed by an independent client library (oauth-1.0a):
 * credentials from `[oauth_consumer_secrets]`, `[oauth_token_secrets]`, `[oauth_token_users]`
 * and from user documents' `oauth` field; bad signatures, stale timestamps and replayed
 * nonces are not accepted.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');

function signer(key: string, secret: string): OAuth {
  return new OAuth({
    consumer: { key, secret },
    signature_method: 'HMAC-SHA1',
    hash_function: (base, signingKey) => createHmac('sha1', signingKey).update(base).digest('base64'),
  });
}

/** The Authorization header for a request, signed with these consumer and token credentials. */
function authorization(method: string, path: string, consumer: [string, string], token: [string, string], data?: Partial<OAuth.Data>): string {
  const oauth = signer(...consumer);
  const request = { url: new URL(path.replace(/^\//, ''), server.url).toString(), method };
  const signed = data
    ? { ...oauth.authorize(request, { key: token[0], secret: token[1] }), ...data }
    : oauth.authorize(request, { key: token[0], secret: token[1] });
  if (data) signed.oauth_signature = oauth.getSignature(request, token[1], signed);
  return oauth.toHeader(signed).Authorization;
}

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'bob', 'bobpw', ['reader']);
  await c.put('/_config/oauth_consumer_secrets/consumer1', 'csecret', { headers: ROOT });
  await c.put('/_config/oauth_token_secrets/token1', 'tsecret', { headers: ROOT });
  await c.put('/_config/oauth_token_users/token1', 'bob', { headers: ROOT });
  await c.put('/_config/oauth_token_secrets/admintoken', 'asecret', { headers: ROOT });
  await c.put('/_config/oauth_token_users/admintoken', 'root', { headers: ROOT });
});

test('a signed request authenticates as the token\'s user with their roles', async () => {
  const header = authorization('GET', '/_session', ['consumer1', 'csecret'], ['token1', 'tsecret']);
  const r = await c.get('/_session', { headers: { Authorization: header } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.userCtx, { name: 'bob', roles: ['reader'] });
  assert.equal(r.body.info.authenticated, 'oauth');
});

test('a token bound to a server admin grants admin rights; query parameters are signed too', async () => {
  const path = '/_all_dbs?descending=true';
  const header = authorization('GET', path, ['consumer1', 'csecret'], ['admintoken', 'asecret']);
  assert.equal((await c.get(path, { headers: { Authorization: header } })).status, 200);
  const put = authorization('PUT', '/oauthdb', ['consumer1', 'csecret'], ['admintoken', 'asecret']);
  assert.equal((await c.put('/oauthdb', undefined, { headers: { Authorization: put } })).status, 201);
});

test('wrong secrets, tampered requests, stale timestamps and replayed nonces are not accepted', async () => {
  const bad: string[] = [
    authorization('PUT', '/x1', ['consumer1', 'wrong'], ['admintoken', 'asecret']),
    authorization('PUT', '/x1', ['consumer1', 'csecret'], ['admintoken', 'wrong']),
    authorization('PUT', '/other', ['consumer1', 'csecret'], ['admintoken', 'asecret']), // signed for another path
    authorization('PUT', '/x1', ['consumer1', 'csecret'], ['admintoken', 'asecret'], { oauth_timestamp: Math.floor(Date.now() / 1000) - 3600 }),
  ];
  for (const header of bad) {
    const r = await c.put('/x1', undefined, { headers: { Authorization: header } });
    assert.equal(r.status, 401, header);
  }
  // An unknown consumer or token is a bad request (CouchDB 1.6), not an anonymous one.
  const unknownConsumer = authorization('PUT', '/x1', ['unknown', 'csecret'], ['admintoken', 'asecret']);
  const consumerReply = await c.put('/x1', undefined, { headers: { Authorization: unknownConsumer } });
  assert.equal(consumerReply.status, 400);
  assert.equal(consumerReply.body.error, 'invalid_consumer');
  const unknownToken = authorization('PUT', '/x1', ['consumer1', 'csecret'], ['unknowntoken', 'asecret']);
  const tokenReply = await c.put('/x1', undefined, { headers: { Authorization: unknownToken } });
  assert.equal(tokenReply.status, 400);
  assert.equal(tokenReply.body.error, 'invalid_token');
  const once = authorization('GET', '/_session', ['consumer1', 'csecret'], ['admintoken', 'asecret']);
  assert.equal((await c.get('/_session', { headers: { Authorization: once } })).body.userCtx.name, 'root');
  assert.equal((await c.get('/_session', { headers: { Authorization: once } })).body.userCtx.name, null);
});

test('with use_users_db, credentials come from the user document\'s oauth field', async () => {
  const doc = (await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body;
  doc.oauth = { consumer_keys: { userconsumer: 'ucsecret' }, tokens: { usertoken: 'utsecret' } };
  assert.equal((await c.put('/_users/org.couchdb.user:bob', doc, { headers: ROOT })).status, 201);
  const header = () => authorization('GET', '/_session', ['userconsumer', 'ucsecret'], ['usertoken', 'utsecret']);
  assert.equal((await c.get('/_session', { headers: { Authorization: header() } })).body.error, 'invalid_consumer');
  await c.put('/_config/couch_httpd_oauth/use_users_db', 'true', { headers: ROOT });
  const r = await c.get('/_session', { headers: { Authorization: header() } });
  assert.deepEqual(r.body.userCtx, { name: 'bob', roles: ['reader'] });
});

test('a request signed without nonce and timestamp is accepted, as CouchDB accepts it', async () => {
  const plaintext = (token: string, secret: string) =>
    `oauth_signature_method=PLAINTEXT&oauth_consumer_key=consumer1&oauth_token=${token}&oauth_version=1.0&oauth_signature=csecret%26${secret}`;
  const r = await c.get(`/_session?${plaintext('token1', 'tsecret')}`);
  assert.deepEqual(r.body.userCtx, { name: 'bob', roles: ['reader'] });
  assert.equal(r.body.info.authenticated, 'oauth');
  // A wrong secret leaves the request to the other handlers.
  assert.equal((await c.get(`/_session?${plaintext('token1', 'wrong')}`)).body.userCtx.name, null);
});

test('/_oauth token endpoints answer a correctly signed request with CouchDB\'s tokens', async () => {
  const signed = (path: string, token: [string, string]) => ({ Authorization: authorization('GET', path, ['consumer1', 'csecret'], token) });
  const request = await c.get('/_oauth/request_token', { headers: signed('/_oauth/request_token', ['token1', 'tsecret']) });
  assert.equal(request.status, 200);
  assert.equal(request.text, 'oauth_token=requestkey&oauth_token_secret=requestsecret');
  const access = await c.get('/_oauth/access_token', { headers: signed('/_oauth/access_token', ['requestkey', 'requestsecret']) });
  assert.equal(access.status, 200);
  assert.equal(access.text, 'oauth_token=accesskey&oauth_token_secret=accesssecret');
  const badSignature = await c.get('/_oauth/request_token', { headers: signed('/_oauth/request_token', ['token1', 'wrong']) });
  assert.equal(badSignature.status, 400);
  assert.equal(badSignature.body.error, 'invalid_signature');
  assert.equal((await c.post('/_oauth/access_token', {})).status, 405);
  assert.equal((await c.get('/_oauth/request_token')).body.error, 'invalid_consumer');
});
