/**
 * CORS over real HTTP, the way a browser app using PouchDB with cookies talks to the server:
 * preflight, then the login POST, then cookie-authenticated requests, each reply carrying the
 * CORS headers the browser needs; origins not listed get none.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { basic, createUser, defineAdmin, sessionCookie } from '../helpers/auth.js';

const { server, c } = await serverForFile();
const ROOT = basic('root', 'rootpw');
const APP = 'http://app.example:8080';

before(async () => {
  await defineAdmin(server.url, 'root', 'rootpw');
  await createUser(server.url, ROOT, 'bob', 'bobpw');
  await c.put('/notes', undefined, { headers: ROOT });
  await c.put('/notes/_security', { admins: { names: [], roles: [] }, members: { names: ['bob'], roles: [] } }, { headers: ROOT });
});

test('with CORS off, no CORS headers are sent', async () => {
  const r = await c.get('/', { headers: { Origin: APP } });
  assert.equal(r.headers['access-control-allow-origin'], undefined);
});

test('a browser app with cookies: preflight, login, authenticated requests', async () => {
  await c.put('/_config/httpd/enable_cors', 'true', { headers: ROOT });
  await c.put('/_config/cors/origins', `${APP}, https://other.example`, { headers: ROOT });
  await c.put('/_config/cors/credentials', 'true', { headers: ROOT });

  const preflight = await c.request('OPTIONS', '/_session', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, accept' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], APP);
  assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
  assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
  assert.match(String(preflight.headers['access-control-allow-headers']), /content-type/);
  assert.ok(Number(preflight.headers['access-control-max-age']) > 0);

  const login = await c.post('/_session', { name: 'bob', password: 'bobpw' }, { headers: { Origin: APP } });
  assert.equal(login.status, 200);
  assert.equal(login.headers['access-control-allow-origin'], APP);
  assert.equal(login.headers['access-control-allow-credentials'], 'true');
  const cookie = sessionCookie(login.headers['set-cookie'])!;

  const put = await c.put('/notes/n1', { text: 'hi' }, { headers: { Origin: APP, Cookie: cookie } });
  assert.equal(put.status, 201);
  assert.equal(put.headers['access-control-allow-origin'], APP);
  assert.match(String(put.headers['access-control-expose-headers']), /ETag/);
  const get = await c.get('/notes/n1', { headers: { Origin: APP, Cookie: cookie } });
  assert.equal(get.body.text, 'hi');
  assert.equal(get.headers['access-control-allow-origin'], APP);

  // Errors carry the headers too, so the app can read them.
  const refused = await c.get('/notes/n1', { headers: { Origin: APP } });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['access-control-allow-origin'], APP);
});

test('origins not listed, and preflights for methods or headers not allowed, get no CORS headers', async () => {
  const r = await c.get('/', { headers: { Origin: 'http://evil.example' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['access-control-allow-origin'], undefined);
  const pre = await c.request('OPTIONS', '/notes', { headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'GET' } });
  assert.notEqual(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], undefined);
  const badHeader = await c.request('OPTIONS', '/notes', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-made-up' },
  });
  assert.equal(badHeader.headers['access-control-allow-origin'], undefined);
  await c.put('/_config/cors/headers', 'X-Made-Up', { headers: ROOT });
  const allowed = await c.request('OPTIONS', '/notes', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-made-up' },
  });
  assert.equal(allowed.status, 204);
  await c.put('/_config/cors/methods', 'GET, POST', { headers: ROOT });
  const put = await c.request('OPTIONS', '/notes', { headers: { Origin: APP, 'Access-Control-Request-Method': 'PUT' } });
  assert.equal(put.headers['access-control-allow-origin'], undefined);
});

test('origins = * without credentials answers with *', async () => {
  await c.put('/_config/cors/origins', '*', { headers: ROOT });
  await c.put('/_config/cors/credentials', 'false', { headers: ROOT });
  const r = await c.get('/', { headers: { Origin: 'http://anywhere.example' } });
  assert.equal(r.headers['access-control-allow-origin'], '*');
  assert.equal(r.headers['access-control-allow-credentials'], undefined);
});

test('a [cors:<host>] section overrides [cors] for requests addressed to that host (its Host without the port)', async () => {
  await c.put('/_config/cors/origins', APP, { headers: ROOT });
  await c.put('/_config/cors/credentials', 'false', { headers: ROOT });
  await c.put('/_config/cors:couch.example/origins', 'http://site.example', { headers: ROOT });
  await c.put('/_config/cors:couch.example/credentials', 'true', { headers: ROOT });
  const site = 'http://site.example';

  const addressed = await c.get('/', { headers: { Host: 'couch.example:5984', Origin: site } });
  assert.equal(addressed.headers['access-control-allow-origin'], site);
  assert.equal(addressed.headers['access-control-allow-credentials'], 'true');
  const otherOrigin = await c.get('/', { headers: { Host: 'couch.example:5984', Origin: APP } });
  assert.equal(otherOrigin.headers['access-control-allow-origin'], undefined);
  const forwarded = await c.get('/', { headers: { 'X-Forwarded-Host': 'couch.example', Origin: site } });
  assert.equal(forwarded.headers['access-control-allow-origin'], site);

  // Other hosts keep [cors].
  const elsewhere = await c.get('/', { headers: { Host: 'db.example', Origin: site } });
  assert.equal(elsewhere.headers['access-control-allow-origin'], undefined);
  const app = await c.get('/', { headers: { Host: 'db.example', Origin: APP } });
  assert.equal(app.headers['access-control-allow-origin'], APP);
  assert.equal(app.headers['access-control-allow-credentials'], undefined);

  const preflight = await c.request('OPTIONS', '/notes', {
    headers: { Host: 'couch.example', Origin: site, 'Access-Control-Request-Method': 'GET' },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], site);
  await c.del('/_config/cors:couch.example/origins', { headers: ROOT });
  await c.del('/_config/cors:couch.example/credentials', { headers: ROOT });
});
