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

test('origins not listed get no CORS headers; preflights for methods or headers not allowed go on to their handler', async () => {
  const r = await c.get('/', { headers: { Origin: 'http://evil.example' } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['access-control-allow-origin'], undefined);
  const pre = await c.request('OPTIONS', '/notes', { headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'GET' } });
  assert.notEqual(pre.status, 204);
  assert.equal(pre.headers['access-control-allow-origin'], undefined);
  // As any request from an allowed origin, the handler's answer carries Allow-Origin (not the
  // preflight's headers).
  const badHeader = await c.request('OPTIONS', '/notes', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-made-up' },
  });
  assert.notEqual(badHeader.status, 204);
  assert.equal(badHeader.headers['access-control-allow-origin'], APP);
  assert.equal(badHeader.headers['access-control-allow-methods'], undefined);
  await c.put('/_config/cors/headers', 'X-Made-Up', { headers: ROOT });
  const allowed = await c.request('OPTIONS', '/notes', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-made-up' },
  });
  assert.equal(allowed.status, 204);
  await c.put('/_config/cors/methods', 'GET, POST', { headers: ROOT });
  const put = await c.request('OPTIONS', '/notes', { headers: { Origin: APP, 'Access-Control-Request-Method': 'PUT' } });
  assert.notEqual(put.status, 204);
  assert.equal(put.headers['access-control-allow-methods'], undefined);
  await c.del('/_config/cors/methods', { headers: ROOT });
  await c.del('/_config/cors/headers', { headers: ROOT });
});

test('a preflight allows the headers it asked for, as asked; any OPTIONS from an allowed origin is a preflight', async () => {
  const asked = await c.request('OPTIONS', '/notes', {
    headers: { Origin: APP, 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'Content-Type, If-Match' },
  });
  assert.equal(asked.status, 204);
  assert.equal(asked.headers['access-control-allow-headers'], 'Content-Type, If-Match');
  assert.equal(asked.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, DELETE, TRACE, CONNECT, COPY, OPTIONS');
  assert.equal(asked.headers['access-control-max-age'], '12345');

  const bare = await c.request('OPTIONS', '/notes', { headers: { Origin: APP } });
  assert.equal(bare.status, 204);
  assert.equal(bare.headers['access-control-allow-origin'], APP);
  assert.equal(bare.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, DELETE, TRACE, CONNECT, COPY, OPTIONS');
  assert.equal(bare.headers['access-control-allow-headers'], undefined);
  await c.put('/_config/cors/max_age', '600', { headers: ROOT });
  const configured = await c.request('OPTIONS', '/notes', { headers: { Origin: APP, 'Access-Control-Request-Method': 'GET' } });
  assert.equal(configured.headers['access-control-max-age'], '600');
  assert.equal(configured.headers['access-control-allow-headers'], '');
  await c.del('/_config/cors/max_age', { headers: ROOT });
});

test('origins = * names the request\'s origin, with credentials or without', async () => {
  await c.put('/_config/cors/origins', '*', { headers: ROOT });
  await c.put('/_config/cors/credentials', 'false', { headers: ROOT });
  const r = await c.get('/', { headers: { Origin: 'http://anywhere.example' } });
  assert.equal(r.headers['access-control-allow-origin'], 'http://anywhere.example');
  assert.equal(r.headers['access-control-allow-credentials'], undefined);
  const pre = await c.request('OPTIONS', '/', { headers: { Origin: 'http://anywhere.example', 'Access-Control-Request-Method': 'GET' } });
  assert.equal(pre.headers['access-control-allow-origin'], 'http://anywhere.example');
  await c.put('/_config/cors/credentials', 'true', { headers: ROOT });
  const withCredentials = await c.get('/', { headers: { Origin: 'http://anywhere.example' } });
  assert.equal(withCredentials.headers['access-control-allow-origin'], 'http://anywhere.example');
  assert.equal(withCredentials.headers['access-control-allow-credentials'], 'true');
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
