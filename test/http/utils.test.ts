/**
 * `/_utils`, the built-in administration interface over real HTTP: the redirect to `/_utils/`,
 * static files with their content types, HEAD, 404s, path traversal, methods, and app.js
 * compiling as a classic script.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContext, Script } from 'node:vm';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

/** The project's package.json (this file runs from dist/test/http), which must never be served. */
const PACKAGE_JSON_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'package.json');
const PACKAGE_JSON = readFileSync(PACKAGE_JSON_PATH, 'utf8');

/**
 * GET with the path sent exactly as written: the helper client's URL parsing would resolve
 * `..` and `%2e%2e` before they reached the server.
 */
function getVerbatim(path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolveResponse, reject) => {
    httpRequest({ host: '127.0.0.1', port: server.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolveResponse({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    }).on('error', reject).end();
  });
}

test('GET /_utils redirects (301) to /_utils/', async () => {
  const r = await c.get('/_utils');
  assert.equal(r.status, 301);
  assert.equal(typeof r.headers.location, 'string');
  assert.match(r.headers.location as string, /^https?:\/\/[^/]+\/_utils\/$/);
});

test('GET /_utils/ serves index.html, which loads app.js as a deferred classic script', async () => {
  const r = await c.get('/_utils/');
  assert.equal(r.status, 200, r.text);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  assert.match(r.text, /<script src="app\.js" defer><\/script>/);
  assert.doesNotMatch(r.text, /type="module"/);
});

test('GET /_utils/index.html is the same page as /_utils/', async () => {
  const [directory, file] = await Promise.all([c.get('/_utils/'), c.get('/_utils/index.html')]);
  assert.equal(file.status, 200);
  assert.equal(file.text, directory.text);
});

test('GET /_utils/app.js has a JavaScript content type', async () => {
  const r = await c.get('/_utils/app.js');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^(application|text)\/javascript/);
  assert.ok(r.text.length > 0);
});

test('GET /_utils/style.css has the text/css content type', async () => {
  const r = await c.get('/_utils/style.css');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/css/);
});

test('index.html refers only to files the server has, with no external resources', async () => {
  const page = (await c.get('/_utils/')).text;
  const references = [...page.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!).filter((ref) => !ref.startsWith('#'));
  assert.ok(references.includes('app.js') && references.includes('style.css'), references.join(' '));
  for (const ref of references) {
    assert.doesNotMatch(ref, /^(?:[a-z]+:|\/\/)/i, `${ref} would need the network`);
    const r = await c.get(`/_utils/${ref}`);
    assert.equal(r.status, 200, `${ref}: ${r.status}`);
  }
});

test('HEAD /_utils/ answers 200 with the headers and no body', async () => {
  const r = await c.head('/_utils/');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/html/);
  assert.equal(r.text, '');
});

test('a missing file is mochiweb\'s plain-text 404, as CouchDB 1.6 serves /_utils', async () => {
  const r = await c.get('/_utils/no-such-file.js');
  assert.equal(r.status, 404);
  assert.equal(r.text, 'Not found.');
  assert.equal(r.headers['content-type'], 'text/plain');
  assert.equal(r.headers['cache-control'], 'private, must-revalidate');
});

test('path traversal out of share/www never serves the project files', async () => {
  const paths = [
    '/_utils/../package.json',
    '/_utils/../../package.json',
    '/_utils/%2e%2e/package.json',
    '/_utils/%2e%2e/%2e%2e/package.json',
    '/_utils/..%2Fpackage.json',
    '/_utils/..%2F..%2Fpackage.json',
    '/_utils/%2e%2e%2f%2e%2e%2fpackage.json',
    `/_utils/${encodeURIComponent(PACKAGE_JSON_PATH)}`,
  ];
  for (const path of paths) {
    const r = await getVerbatim(path);
    assert.notEqual(r.status, 200, `${path} answered 200`);
    assert.notEqual(r.text, PACKAGE_JSON, `${path} served package.json`);
    assert.ok(!r.text.includes('"devDependencies"'), `${path} served package.json`);
  }
});

test('POST /_utils/ is 405 method_not_allowed', async () => {
  const r = await c.post('/_utils/', {});
  assert.equal(r.status, 405);
  assert.equal(r.body?.error, 'method_not_allowed');
  assert.match(String(r.headers.allow), /GET/);
});

test('app.js compiles as a classic script (compiled only, never run)', async () => {
  const r = await c.get('/_utils/app.js');
  assert.equal(r.status, 200);
  assert.doesNotThrow(() => new Script(r.text, { filename: 'share/www/app.js' }));
});

/**
 * The URLs app.js fetches when it starts on a page at `pathname`: the script runs against a
 * stand-in DOM (every property a no-op) whose fetch records URLs and fails. A test harness
 * only: node:vm is no sandbox, and app.js is this project's own code.
 */
async function startupFetches(source: string, pathname: string): Promise<string[]> {
  const urls: string[] = [];
  const standIn = (): unknown => new Proxy(function () { /* stand-in */ }, {
    get: (_target, key) => (key === Symbol.toPrimitive ? () => '' : key === Symbol.iterator ? function* () { /* empty */ } : key === 'then' ? undefined : standIn()),
    apply: () => standIn(),
    construct: () => standIn() as object,
    set: () => true,
  });
  const context = createContext({
    document: standIn(), location: { pathname, hash: '' }, URLSearchParams, URL, console, setTimeout, clearTimeout,
    Node: class {}, addEventListener: () => undefined,
    fetch: async (url: string) => { urls.push(url); throw new TypeError('offline'); },
  });
  (context as { window?: unknown }).window = context;
  new Script(source, { filename: 'share/www/app.js' }).runInContext(context);
  await new Promise((done) => setTimeout(done, 50));
  return urls;
}

test('the interface calls the API below the page\'s own root, so it also works behind a proxy path prefix', async () => {
  const source = (await c.get('/_utils/app.js')).text;
  const direct = await startupFetches(source, '/_utils/');
  assert.ok(direct.includes('/_session') && direct.includes('/_all_dbs'), JSON.stringify(direct));
  const prefixed = await startupFetches(source, '/couch/db-admin/_utils/');
  assert.deepEqual(prefixed, direct.map((url) => `/couch/db-admin${url}`));
});

test('app.js never writes server data as HTML', async () => {
  const source = (await c.get('/_utils/app.js')).text;
  assert.ok(source.length > 0);
  assert.doesNotMatch(source, /\.(?:innerHTML|outerHTML)\s*=|insertAdjacentHTML|document\.write/);
});

// Last in this file: it creates a server admin, which ends admin party for the server.
test('a browser that must log in is sent to /_utils/session.html, which logs in and goes back', async () => {
  assert.equal((await c.put('/_config/admins/root', 'secret')).status, 200);
  const refused = await c.get('/_config', { headers: { Accept: 'text/html' } });
  assert.equal(refused.status, 302, refused.text);
  const location = new URL(String(refused.headers.location), server.url);
  assert.equal(location.pathname, '/_utils/session.html');
  assert.equal(location.searchParams.get('return'), '/_config');

  const page = await c.get(`${location.pathname}${location.search}`, { headers: { Accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.match(page.text, /<script src="session\.js" defer><\/script>/);
  const script = await c.get('/_utils/session.js');
  assert.equal(script.status, 200);
  assert.doesNotThrow(() => new Script(script.text, { filename: 'share/www/session.js' }));
});
