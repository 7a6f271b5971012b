/**
 * HTTPS beside HTTP: a self-signed certificate made in the test (openssl), `[daemons] httpsd`
 * and `[ssl]` in local.ini, and the same API, authentication included, over both.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';
import { basic, defineAdmin } from '../helpers/auth.js';

let server: TestServer;
let dataDir: string;
let httpsBase: string;
let cert: Buffer;
let certFile: string;
const ROOT = basic('root', 'rootpw');

function httpsGet(path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest(new URL(path.replace(/^\//, ''), httpsBase), {
      method, ca: cert, headers: { Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers });
      });
    });
    r.on('error', reject);
    r.end(body);
  });
}

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'settee-tls-'));
  certFile = join(dataDir, 'cert.pem');
  const keyFile = join(dataDir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile,
    '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  cert = (await import('node:fs')).readFileSync(certFile);
  writeFileSync(join(dataDir, 'local.ini'), [
    '[daemons]', 'httpsd = {couch_httpd, start_link, [https]}',
    '[ssl]', `cert_file = ${certFile}`, `key_file = ${keyFile}`, 'port = 0', '',
  ].join('\n'));
  server = await startServer({ dataDir });
  await defineAdmin(server.url, 'root', 'rootpw');
  const port = (await client(server.url).get('/_config/ssl/port', { headers: ROOT })).body;
  httpsBase = `https://127.0.0.1:${port}/`;
});

after(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('the API answers over HTTPS with the configured certificate', async () => {
  const r = await httpsGet('/');
  assert.equal(r.status, 200);
  assert.equal(r.body.couchdb, 'Welcome');
  assert.notEqual(new URL(httpsBase).port, String(server.port));
});

test('HTTPS and HTTP serve the same data and the same authentication', async () => {
  assert.equal((await httpsGet('/tlsdb', {}, 'PUT')).status, 401);
  assert.equal((await httpsGet('/tlsdb', ROOT, 'PUT')).status, 201);
  const put = await httpsGet('/tlsdb/doc', ROOT, 'PUT', JSON.stringify({ over: 'tls' }));
  assert.equal(put.status, 201);
  assert.match(String(put.headers['location']), /^https:\/\//);
  const viaHttp = await client(server.url).get('/tlsdb/doc', { headers: ROOT });
  assert.equal(viaHttp.body.over, 'tls');
  const login = await httpsGet('/_session', {}, 'POST', JSON.stringify({ name: 'root', password: 'rootpw' }));
  assert.equal(login.status, 200);
  // mochiweb_cookies puts Secure before Path and HttpOnly.
  assert.match(String(login.headers['set-cookie']), /; Max-Age=\d+; Secure; Path=\/; HttpOnly$/);
  const out = await httpsGet('/_session', {}, 'DELETE');
  assert.equal(String(out.headers['set-cookie']), 'AuthSession=; Version=1; Secure; Path=/; HttpOnly');
  const cookie = String(login.headers['set-cookie']).split(';')[0]!;
  const session = await httpsGet('/_session', { Cookie: cookie });
  assert.equal(session.body.userCtx.name, 'root');
});

test('a client that does not trust the certificate is refused by TLS itself', async () => {
  await assert.rejects(new Promise((resolve, reject) => {
    const r = httpsRequest(httpsBase, (res) => { res.resume(); resolve(res.statusCode); });
    r.on('error', reject);
    r.end();
  }));
});

test('replication from an HTTPS peer checks its certificate only with [replicator] verify_ssl_certificates (CouchDB 1.6)', async () => {
  const c = client(server.url);
  assert.equal((await c.put('/tls-src', undefined, { headers: ROOT })).status, 201);
  assert.equal((await c.put('/tls-src/doc', { v: 1 }, { headers: ROOT })).status, 201);
  const source = httpsBase.replace('https://', 'https://root:rootpw@') + 'tls-src';
  const replicate = (target: string) => c.post('/_replicate', { source, target, create_target: true, retries_per_request: 0 }, { headers: ROOT });
  const NO_PERSIST = { ...ROOT, 'X-Couch-Persist': 'false' };

  // The default, false: CouchDB's replicator connects with verify_none, so a self-signed peer serves.
  const unverified = await replicate('tls-dst-1');
  assert.equal(unverified.status, 200, JSON.stringify(unverified.body));
  assert.equal(unverified.body.history[0].docs_written, 1);

  assert.equal((await c.put('/_config/replicator/verify_ssl_certificates', 'true', { headers: NO_PERSIST })).status, 200);
  try {
    const refused = await replicate('tls-dst-2');
    assert.equal(refused.status, 502, JSON.stringify(refused.body));
    assert.match(refused.body.reason, /self.signed/i);

    // Trusted through ssl_trusted_certificates_file.
    assert.equal((await c.put('/_config/replicator/ssl_trusted_certificates_file', certFile, { headers: NO_PERSIST })).status, 200);
    const trusted = await replicate('tls-dst-3');
    assert.equal(trusted.status, 200, JSON.stringify(trusted.body));
    assert.equal(trusted.body.history[0].docs_written, 1);
  } finally {
    await c.put('/_config/replicator/verify_ssl_certificates', 'false', { headers: NO_PERSIST });
    await c.del('/_config/replicator/ssl_trusted_certificates_file', { headers: NO_PERSIST });
  }
});
