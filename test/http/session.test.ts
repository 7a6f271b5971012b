/**
 * Cookie sessions and the other ways in, over real HTTP: POST/GET/DELETE /_session, the
 * AuthSession cookie's format (checked by recomputing its HMAC), expiry and refresh, tampering,
 * the 401 challenge headers, require_valid_user, and proxy authentication.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin, sessionCookie } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');
let secret: string;

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'bob', 'bobpw', ['reader']);
  secret = (await c.get('/_config/couch_httpd_auth/secret', { headers: ROOT })).body;
});

/** A cookie as CouchDB makes it, issued at `issued` (seconds), for a user with `salt`. */
function craftCookie(name: string, issued: number, salt: string, key = secret): string {
  const hexTime = issued.toString(16).toUpperCase();
  const mac = createHmac('sha1', key + salt).update(`${name}:${hexTime}`).digest();
  return `AuthSession=${Buffer.concat([Buffer.from(`${name}:${hexTime}:`), mac]).toString('base64url')}`;
}

async function bobSalt(): Promise<string> {
  return (await c.get('/_users/org.couchdb.user:bob', { headers: ROOT })).body.salt;
}

test('POST /_session with JSON sets the AuthSession cookie in CouchDB\'s format', async () => {
  const before = Math.floor(Date.now() / 1000);
  const r = await c.post('/_session', { name: 'bob', password: 'bobpw' });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ok: true, name: 'bob', roles: ['reader'] });
  const header = String(r.headers['set-cookie']);
  // Attributes in mochiweb_cookies' order.
  assert.match(header, /^AuthSession=[A-Za-z0-9_-]+; Version=1; Expires=[^;]+ GMT; Max-Age=600; Path=\/; HttpOnly$/);
  const raw = Buffer.from(sessionCookie(r.headers['set-cookie'])!.slice('AuthSession='.length), 'base64url');
  const text = raw.toString('latin1');
  const [name, hexTime] = text.split(':');
  assert.equal(name, 'bob');
  const issued = Number.parseInt(hexTime!, 16);
  assert.ok(issued >= before - 1 && issued <= before + 5);
  const expected = createHmac('sha1', secret + (await bobSalt())).update(`bob:${hexTime}`).digest();
  assert.deepEqual(raw.subarray(`bob:${hexTime}:`.length), expected);
});

test('the cookie authenticates later requests', async () => {
  const login = await c.post('/_session', { name: 'bob', password: 'bobpw' });
  const cookie = sessionCookie(login.headers['set-cookie'])!;
  const r = await c.get('/_session', { headers: { Cookie: cookie } });
  assert.deepEqual(r.body.userCtx, { name: 'bob', roles: ['reader'] });
  assert.equal(r.body.info.authenticated, 'cookie');
  assert.deepEqual(r.body.info.authentication_handlers, ['oauth', 'cookie', 'default']);
  assert.equal(r.body.info.authentication_db, '_users');
  // A fresh cookie is not re-issued.
  assert.equal(r.headers['set-cookie'], undefined);
  // The cookie is a user's, not an admin's.
  assert.equal((await c.put('/bobdb', undefined, { headers: { Cookie: cookie } })).status, 401);
});

test('POST /_session with a form, and next= redirects', async () => {
  const form = await c.request('POST', '/_session', {
    raw: 'name=bob&password=bobpw', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(form.status, 200);
  assert.ok(sessionCookie(form.headers['set-cookie']));
  const next = await c.request('POST', '/_session?next=/_all_dbs', {
    raw: 'name=bob&password=bobpw', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(next.status, 302);
  assert.match(String(next.headers['location']), /\/_all_dbs$/);
  assert.ok(sessionCookie(next.headers['set-cookie']));
  // Not an open redirect.
  const away = await c.post('/_session?next=http://evil.example/', { name: 'bob', password: 'bobpw' });
  assert.equal(away.status, 200);
});

test('wrong credentials at login are 401 and clear the session cookie (CouchDB 1.6 logs the client out)', async () => {
  for (const body of [{ name: 'bob', password: 'nope' }, { name: 'ghost', password: 'bobpw' }, { name: 'bob' }, {}]) {
    const r = await c.post('/_session', body);
    assert.equal(r.status, 401, JSON.stringify(body));
    assert.deepEqual(r.body, { error: 'unauthorized', reason: 'Name or password is incorrect.' });
    assert.equal(sessionCookie(r.headers['set-cookie']), 'AuthSession=', JSON.stringify(r.headers['set-cookie']));
  }
  // A plain answer, whatever the client accepts or asks: no challenge, no redirect to a login page.
  for (const headers of [{ Accept: 'text/html' }, { 'X-CouchDB-WWW-Authenticate': 'Cookie' }] as Record<string, string>[]) {
    const r = await c.post('/_session', { name: 'bob', password: 'nope' }, { headers });
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.equal(r.headers['www-authenticate'], undefined);
    assert.equal(r.headers['location'], undefined);
  }
});

test('a failed login with ?fail= redirects there (302), clearing the session cookie', async () => {
  const r = await c.post('/_session?fail=/_utils/session.html', { name: 'bob', password: 'nope' });
  assert.equal(r.status, 302);
  assert.match(String(r.headers['location']), /^http:\/\/[^/]+\/_utils\/session\.html$/);
  assert.equal(sessionCookie(r.headers['set-cookie']), 'AuthSession=');
  assert.equal(r.body.error, 'unauthorized');
});

test('server admins log in too', async () => {
  const r = await c.post('/_session', { name: 'root', password: 'rootpw' });
  assert.deepEqual(r.body, { ok: true, name: 'root', roles: ['_admin'] });
  const cookie = sessionCookie(r.headers['set-cookie'])!;
  assert.equal((await c.put('/cookiedb', undefined, { headers: { Cookie: cookie } })).status, 201);
});

test('DELETE /_session clears the cookie', async () => {
  const r = await c.del('/_session');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { ok: true });
  assert.match(String(r.headers['set-cookie']), /^AuthSession=; /);
});

test('expired, tampered and foreign cookies are not accepted', async () => {
  const salt = await bobSalt();
  const now = Math.floor(Date.now() / 1000);
  const expired = craftCookie('bob', now - 601, salt);
  const wrongSecret = craftCookie('bob', now, salt, 'not-the-secret');
  const good = craftCookie('bob', now, salt);
  const raw = Buffer.from(good.slice('AuthSession='.length), 'base64url');
  raw[raw.length - 1] ^= 1;
  const tampered = `AuthSession=${raw.toString('base64url')}`;
  const renamed = craftCookie('root', now, salt);
  for (const cookie of [expired, wrongSecret, tampered, renamed]) {
    const r = await c.get('/_session', { headers: { Cookie: cookie } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.userCtx, { name: null, roles: [] }, cookie);
  }
  assert.deepEqual((await c.get('/_session', { headers: { Cookie: good } })).body.userCtx.name, 'bob');
  const malformed = await c.get('/_session', { headers: { Cookie: 'AuthSession=bm9wZQ' } });
  assert.equal(malformed.status, 400);
});

test('a cookie whose time is no hex number authenticates no one; one that does not decode or split in three is 400', async () => {
  const salt = await bobSalt();
  const encode = (text: string) => `AuthSession=${Buffer.from(text, 'latin1').toString('base64url')}`;
  // Three parts, but list_to_integer(Time, 16) fails or gives a time long past: ignored, as
  // couch_httpd_auth:cookie_authentication_handler ignores it.
  const signed = (hexTime: string) => {
    const mac = createHmac('sha1', secret + salt).update(`bob:${hexTime}`).digest();
    return `AuthSession=${Buffer.concat([Buffer.from(`bob:${hexTime}:`), mac]).toString('base64url')}`;
  };
  for (const cookie of [encode('bob:zz:abc'), encode('bob::abc'), encode('nobody:xyz:abc'), signed('G1'), signed('-5')]) {
    const r = await c.get('/_session', { headers: { Cookie: cookie } });
    assert.equal(r.status, 200, cookie);
    assert.deepEqual(r.body.userCtx, { name: null, roles: [] }, cookie);
  }
  // Not base64 as couch_util:decodeBase64Url reads it, or fewer than three parts: 400.
  for (const cookie of ['AuthSession=Ym9i!OjVGOmFiYw', 'AuthSession=Ym9iOjVGMDAw', encode('bob:5F000000')]) {
    const r = await c.get('/_session', { headers: { Cookie: cookie } });
    assert.equal(r.status, 400, cookie);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'Malformed AuthSession cookie. Please clear your cookies.' });
  }
});

test('a cookie is refreshed once most of its lifetime is used', async () => {
  const salt = await bobSalt();
  const now = Math.floor(Date.now() / 1000);
  const old = craftCookie('bob', now - 300, salt);
  const r = await c.get('/_session', { headers: { Cookie: old } });
  assert.equal(r.body.userCtx.name, 'bob');
  const fresh = sessionCookie(r.headers['set-cookie']);
  assert.ok(fresh);
  assert.notEqual(fresh, old);
  assert.equal((await c.get('/_session', { headers: { Cookie: fresh } })).body.userCtx.name, 'bob');
});

test('a password change ends the user\'s sessions', async () => {
  await createUser(server.url, ROOT, 'dora', 'dorapw');
  const cookie = sessionCookie((await c.post('/_session', { name: 'dora', password: 'dorapw' })).headers['set-cookie'])!;
  const doc = (await c.get('/_users/org.couchdb.user:dora', { headers: { Cookie: cookie } })).body;
  assert.equal((await c.put('/_users/org.couchdb.user:dora', { ...doc, password: 'newer' }, { headers: { Cookie: cookie } })).status, 201);
  assert.equal((await c.get('/_session', { headers: { Cookie: cookie } })).body.userCtx.name, null);
});

test('the session timeout is configurable', async () => {
  await c.put('/_config/couch_httpd_auth/timeout', '60', { headers: ROOT });
  try {
    const salt = await bobSalt();
    const cookie = craftCookie('bob', Math.floor(Date.now() / 1000) - 120, salt);
    assert.equal((await c.get('/_session', { headers: { Cookie: cookie } })).body.userCtx.name, null);
  } finally {
    await c.put('/_config/couch_httpd_auth/timeout', '600', { headers: ROOT });
  }
});

test('401 challenges: X-CouchDB-WWW-Authenticate, the login redirect, and none by default', async () => {
  const plain = await c.put('/nope');
  assert.equal(plain.status, 401);
  assert.equal(plain.headers['www-authenticate'], undefined);
  const cookieOnly = await c.put('/nope', undefined, { headers: { 'X-CouchDB-WWW-Authenticate': 'Cookie' } });
  assert.equal(cookieOnly.status, 401);
  assert.equal(cookieOnly.headers['www-authenticate'], 'Cookie');
  const html = await c.request('PUT', '/nope', { headers: { Accept: 'text/html' } });
  assert.equal(html.status, 302);
  assert.match(String(html.headers['location']), /\/_utils\/session\.html\?return=%2Fnope&reason=/);
  // The decoded path and the reason as couch_util:url_encode writes them (`:` kept, upper-case hex).
  const encoded = await c.request('GET', '/_config/a%20b:c', { headers: { Accept: 'text/html' } });
  assert.match(String(encoded.headers['location']), /\?return=%2F_config%2Fa%20b:c&reason=You%20are%20not%20a%20server%20admin\.$/);
});

test('Set-Cookie as mochiweb writes it: Version, Expires and Max-Age, Path, HttpOnly; logging out sends an empty cookie', async () => {
  const login = await c.post('/_session', { name: 'bob', password: 'bobpw' });
  assert.match(String(login.headers['set-cookie']), /^AuthSession=[A-Za-z0-9_-]+; Version=1; Expires=[^;]+ GMT; Max-Age=600; Path=\/; HttpOnly$/);
  const out = await c.del('/_session');
  assert.equal(String(out.headers['set-cookie']), 'AuthSession=; Version=1; Path=/; HttpOnly');
});

test('GET /_session?basic=true asks anonymous callers to log in', async () => {
  const r = await c.get('/_session?basic=true');
  assert.equal(r.status, 401);
  assert.equal((await c.get('/_session?basic=true', { headers: basic('bob', 'bobpw') })).status, 200);
});

test('require_valid_user: every request needs credentials', async () => {
  await c.put('/_config/couch_httpd_auth/require_valid_user', 'true', { headers: ROOT });
  try {
    const r = await c.get('/');
    assert.equal(r.status, 401);
    assert.equal(r.headers['www-authenticate'], 'Basic realm="server"');
    assert.equal((await c.get('/', { headers: basic('bob', 'bobpw') })).status, 200);
    const cookie = sessionCookie((await c.post('/_session', { name: 'bob', password: 'bobpw' }, { headers: basic('bob', 'bobpw') })).headers['set-cookie'])!;
    assert.equal((await c.get('/_all_dbs', { headers: { Cookie: cookie } })).status, 200);
  } finally {
    await c.put('/_config/couch_httpd_auth/require_valid_user', 'false', { headers: ROOT });
  }
  assert.equal((await c.get('/')).status, 200);
});

test('proxy authentication, with and without the token', async () => {
  const handlers = (await c.get('/_config/httpd/authentication_handlers', { headers: ROOT })).body as string;
  const proxyHeaders = { 'X-Auth-CouchDB-UserName': 'pat', 'X-Auth-CouchDB-Roles': 'staff, _admin' };
  // Not configured: the headers mean nothing.
  assert.equal((await c.get('/_session', { headers: proxyHeaders })).body.userCtx.name, null);
  await c.put('/_config/httpd/authentication_handlers',
    `{couch_httpd_auth, proxy_authentication_handler}, ${handlers}`, { headers: ROOT });
  try {
    const r = await c.get('/_session', { headers: proxyHeaders });
    // Roles are the text between commas, untrimmed (couch_httpd_auth:proxy_auth_user's
    // string:tokens): ' _admin' is no server admin.
    assert.deepEqual(r.body.userCtx, { name: 'pat', roles: ['staff', ' _admin'] });
    assert.equal((await c.get('/_config', { headers: proxyHeaders })).status, 401);
    const admin = { ...proxyHeaders, 'X-Auth-CouchDB-Roles': ',staff,,_admin,' };
    assert.deepEqual((await c.get('/_session', { headers: admin })).body.userCtx, { name: 'pat', roles: ['staff', '_admin'] });
    assert.equal((await c.get('/_config', { headers: admin })).status, 200);
    assert.equal(r.body.info.authenticated, 'proxy');
    assert.deepEqual(r.body.info.authentication_handlers, ['proxy', 'oauth', 'cookie', 'default']);

    await c.put('/_config/couch_httpd_auth/proxy_use_secret', 'true', { headers: ROOT });
    assert.equal((await c.get('/_session', { headers: proxyHeaders })).body.userCtx.name, null);
    const badToken = { ...proxyHeaders, 'X-Auth-CouchDB-Token': createHmac('sha1', 'other').update('pat').digest('hex') };
    assert.equal((await c.get('/_session', { headers: badToken })).body.userCtx.name, null);
    const token = createHmac('sha1', secret).update('pat').digest('hex');
    // The token is lower-case hex, compared as sent.
    const upper = await c.get('/_session', { headers: { ...proxyHeaders, 'X-Auth-CouchDB-Token': token.toUpperCase() } });
    assert.deepEqual(upper.body.userCtx, { name: null, roles: [] });
    const signed = await c.get('/_session', { headers: { ...proxyHeaders, 'X-Auth-CouchDB-Token': token } });
    assert.deepEqual(signed.body.userCtx, { name: 'pat', roles: ['staff', ' _admin'] });
  } finally {
    await c.put('/_config/couch_httpd_auth/proxy_use_secret', 'false', { headers: ROOT });
    await c.put('/_config/httpd/authentication_handlers', handlers, { headers: ROOT });
  }
});

test('allow_persistent_cookies = false gives CouchDB 1.6\'s session cookie without an expiry', async () => {
  await c.put('/_config/couch_httpd_auth/allow_persistent_cookies', 'false', { headers: ROOT });
  try {
    const r = await c.post('/_session', { name: 'bob', password: 'bobpw' });
    assert.match(String(r.headers['set-cookie']), /^AuthSession=[A-Za-z0-9_-]+; Version=1; Path=\/; HttpOnly$/);
  } finally {
    await c.put('/_config/couch_httpd_auth/allow_persistent_cookies', 'true', { headers: ROOT });
  }
});

test('JSON Web Tokens (CouchDB 3): the [chttpd] handler list, keys by kid, required claims, roles', async () => {
  const key = Buffer.from('a shared secret');
  const token = (claims: Record<string, unknown>, kid?: string): string => {
    const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const message = `${segment({ alg: 'HS256', typ: 'JWT', ...(kid ? { kid } : {}) })}.${segment(claims)}`;
    return `${message}.${createHmac('sha256', key).update(message).digest('base64url')}`;
  };
  const bearer = (t: string) => ({ headers: { Authorization: `Bearer ${t}` } });
  const exp = Math.floor(Date.now() / 1000) + 300;
  const admin = token({ sub: 'jo', exp, '_couchdb.roles': ['_admin'] }, 'k1');

  await c.put('/_config/jwt_keys/hmac:k1', key.toString('base64'), { headers: ROOT });
  // Not among the handlers: a bearer token is no credential.
  assert.equal((await c.get('/_session', bearer(admin))).body.userCtx.name, null);
  await c.put('/_config/chttpd/authentication_handlers',
    '{chttpd_auth, jwt_authentication_handler}, {chttpd_auth, cookie_authentication_handler}, {chttpd_auth, default_authentication_handler}', { headers: ROOT });
  try {
    const r = await c.get('/_session', bearer(admin));
    assert.deepEqual(r.body.userCtx, { name: 'jo', roles: ['_admin'] });
    assert.deepEqual(r.body.info.authentication_handlers, ['jwt', 'cookie', 'default']);
    assert.equal(r.body.info.authenticated, 'jwt');
    // The token's roles are the user's: _admin reaches the configuration, a plain user does not.
    assert.equal((await c.get('/_config/jwt_keys', bearer(admin))).status, 200);
    assert.equal((await c.get('/_config/jwt_keys', bearer(token({ sub: 'al', exp }, 'k1')))).status, 401);
    // Basic credentials still work beside it.
    assert.equal((await c.get('/_session', { headers: ROOT })).body.userCtx.name, 'root');

    const refused = async (t: string, status: number, reason: string): Promise<void> => {
      const answer = await c.get('/_session', bearer(t));
      assert.equal(answer.status, status, answer.text);
      assert.equal(answer.body.reason, reason);
    };
    await refused(token({ sub: 'jo' }, 'k1'), 400, 'Missing exp claim');
    await refused(token({ sub: 'jo', exp: exp - 600 }, 'k1'), 401, 'exp not in future');
    await refused(token({ sub: 'jo', exp }, 'k2'), 400, 'Unknown kid');
    await refused(token({ sub: 'jo', exp }), 400, 'Unknown kid');
    await refused(token({ exp }, 'k1'), 401, 'Token missing sub claim.');
    await refused(`${admin}x`, 400, 'Bad HMAC');
    await refused('not-a-token', 400, 'Malformed token');

    // required_claims empty: nothing but the signature is checked.
    await c.put('/_config/jwt_auth/required_claims', '', { headers: ROOT });
    assert.equal((await c.get('/_session', bearer(token({ sub: 'jo', exp: 1 }, 'k1')))).body.userCtx.name, 'jo');
    await c.put('/_config/jwt_auth/roles_claim_name', 'groups', { headers: ROOT });
    assert.deepEqual((await c.get('/_session', bearer(token({ sub: 'jo', groups: 'a, b' }, 'k1')))).body.userCtx.roles, ['a', 'b']);
  } finally {
    await c.del('/_config/jwt_auth/roles_claim_name', { headers: ROOT });
    await c.del('/_config/jwt_auth/required_claims', { headers: ROOT });
    await c.del('/_config/chttpd/authentication_handlers', { headers: ROOT });
    await c.del('/_config/jwt_keys/hmac:k1', { headers: ROOT });
  }
  // Back to the [httpd] list.
  assert.deepEqual((await c.get('/_session')).body.info.authentication_handlers, ['oauth', 'cookie', 'default']);
});

test('CouchDB 3\'s sections: [chttpd_auth] is read before [couch_httpd_auth], [chttpd] require_valid_user(_except_for_up)', async () => {
  // A session timeout in [chttpd_auth] wins over [couch_httpd_auth]'s.
  await c.put('/_config/chttpd_auth/timeout', '1234', { headers: ROOT });
  try {
    const r = await c.post('/_session', { name: 'bob', password: 'bobpw' });
    assert.match(String(r.headers['set-cookie']), /Max-Age=1234/);
  } finally {
    await c.del('/_config/chttpd_auth/timeout', { headers: ROOT });
  }
  assert.match(String((await c.post('/_session', { name: 'bob', password: 'bobpw' })).headers['set-cookie']), /Max-Age=600/);

  await c.put('/_config/chttpd/require_valid_user', 'true', { headers: ROOT });
  try {
    const r = await c.get('/');
    assert.equal(r.status, 401);
    assert.equal(r.body.reason, 'Authentication required.');
    assert.equal((await c.get('/', { headers: ROOT })).status, 200);
  } finally {
    await c.del('/_config/chttpd/require_valid_user', { headers: ROOT });
  }
  await c.put('/_config/chttpd/require_valid_user_except_for_up', 'true', { headers: ROOT });
  try {
    assert.equal((await c.get('/')).status, 401);
    assert.equal((await c.get('/_all_dbs')).status, 401);
    assert.equal((await c.get('/_up')).status, 200);
  } finally {
    await c.del('/_config/chttpd/require_valid_user_except_for_up', { headers: ROOT });
  }
  assert.equal((await c.get('/')).status, 200);
});
