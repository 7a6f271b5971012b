/**
 * Virtual-host rules alone (http/vhosts.ts): parsing, CouchDB's order of trying them, host and
 * port matching, bindings, wildcards, path prefixes and global handlers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGlobals, parseVhostRules, routeVhost } from '../../src/http/vhosts.js';

const GLOBALS = parseGlobals('_utils, _uuids, _session, _oauth, _users');
const route = (section: Record<string, string>, host: string, url: string) => routeVhost(parseVhostRules(section), GLOBALS, host, url);

test('a literal host routes to its path; the rest of the URL and the query follow', () => {
  const vhosts = { 'example.com': '/db' };
  assert.deepEqual(route(vhosts, 'example.com', '/'), { url: '/db/', vhostPath: '/' });
  assert.deepEqual(route(vhosts, 'example.com', '/doc1?revs_info=true'), { url: '/db/doc1?revs_info=true', vhostPath: '/doc1?revs_info=true' });
  assert.deepEqual(route(vhosts, 'example.com:5984', '/doc1'), { url: '/db/doc1', vhostPath: '/doc1' }, 'a rule without a port takes any');
  assert.equal(route(vhosts, 'www.example.com', '/'), undefined);
  assert.equal(route(vhosts, 'example.org', '/'), undefined);
  assert.equal(route({}, 'example.com', '/'), undefined);
});

test('a rule with a port takes only that port', () => {
  const vhosts = { 'example.com:5984': '/db' };
  assert.equal(route(vhosts, 'example.com', '/x')?.url, undefined);
  assert.equal(route(vhosts, 'example.com:80', '/x')?.url, undefined);
  assert.equal(route(vhosts, 'example.com:5984', '/x')?.url, '/db/x');
});

test('global handlers keep their path; the root of a root target stays /', () => {
  const vhosts = { 'example.com': '/db/_design/app/_rewrite' };
  assert.equal(route(vhosts, 'example.com', '/_utils/index.html'), undefined);
  assert.equal(route(vhosts, 'example.com', '/_uuids?count=2'), undefined);
  assert.equal(route(vhosts, 'example.com', '/_all_dbs')?.url, '/db/_design/app/_rewrite/_all_dbs');
  assert.deepEqual(route({ 'root.com': '/' }, 'root.com', '/'), { url: '/', vhostPath: '/' });
  assert.equal(route({ 'root.com': '/' }, 'root.com', '/db')?.url, '/db');
});

test('bindings and wildcards fill the target (the etap vhost rules)', () => {
  const vhosts = {
    'example.com': '/etap-test-db',
    '*.example.com': '/etap-test-db/_design/doc1/_rewrite',
    'example1.com': '/etap-test-db/_design/doc1/_rewrite/',
    ':appname.:dbname.example1.com': '/:dbname/_design/:appname/_rewrite/',
    ':dbname.example1.com': '/:dbname',
    '*.example2.com': '/*',
  };
  assert.equal(route(vhosts, 'example.com', '/')?.url, '/etap-test-db/');
  assert.equal(route(vhosts, 'test.example.com', '/')?.url, '/etap-test-db/_design/doc1/_rewrite/');
  assert.equal(route(vhosts, 'a.b.example.com', '/x')?.url, '/etap-test-db/_design/doc1/_rewrite/x', 'the wildcard takes several labels');
  assert.equal(route(vhosts, 'example1.com', '/')?.url, '/etap-test-db/_design/doc1/_rewrite/');
  assert.equal(route(vhosts, 'etap-test-db.example1.com', '/')?.url, '/etap-test-db/');
  assert.equal(route(vhosts, 'doc1.etap-test-db.example1.com', '/')?.url, '/etap-test-db/_design/doc1/_rewrite/');
  assert.equal(route(vhosts, 'etap-test-db.example2.com', '/')?.url, '/etap-test-db/');
  assert.equal(route(vhosts, 'example2.com', '/'), undefined, 'a wildcard needs a label');
});

test('a path in the rule must prefix the request path, and is taken off it', () => {
  const vhosts = { 'example.com/app': '/db/_design/app/_rewrite', 'example.com': '/other' };
  assert.deepEqual(route(vhosts, 'example.com', '/app/page'), { url: '/db/_design/app/_rewrite/page', vhostPath: '/page' });
  assert.equal(route(vhosts, 'example.com', '/application')?.url, '/other/application');
  assert.equal(route(vhosts, 'example.com', '/')?.url, '/other/');
});

test('rules are tried in CouchDB order: literal labels before bindings, bindings before wildcards', () => {
  const vhosts = { '*.example.com': '/wild', ':db.example.com': '/:db', 'www.example.com': '/www' };
  assert.equal(route(vhosts, 'www.example.com', '/')?.url, '/www/');
  assert.equal(route(vhosts, 'shop.example.com', '/')?.url, '/shop/');
  assert.equal(route(vhosts, 'a.shop.example.com', '/')?.url, '/wild/');
  const order = parseVhostRules(vhosts).map((r) => r.target.map((p) => (p.kind === 'literal' ? p.text : p.kind)).join('/'));
  assert.deepEqual(order, ['www', 'bind', 'wild']);
});

test('parseGlobals splits on commas and spaces', () => {
  assert.deepEqual(parseGlobals(' _utils ,_uuids,  _session '), ['_utils', '_uuids', '_session']);
  assert.deepEqual(parseGlobals(undefined), []);
});
