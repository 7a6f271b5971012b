/**
 * /_config over real HTTP, checked against CouchDB 1.6 (couch_httpd_misc_handlers and
 * share/www/script/test/config.js): reading, writing, deleting, persistence across a restart of
 * the server process, X-Couch-Persist: false, and the config whitelist.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { server, c } = await serverForFile();

const NO_PERSIST = { headers: { 'X-Couch-Persist': 'false' } };

// ------------------------------------------------------------------------------------ GET

test('GET /_config answers every section as objects of string values', async () => {
  const r = await c.get('/_config');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/json');
  const config = r.body;
  assert.equal(typeof config, 'object');
  for (const [section, values] of Object.entries(config)) {
    assert.equal(typeof values, 'object', section);
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      assert.equal(typeof value, 'string', `${section}/${key}`);
    }
  }
  // What CouchDB's own config.js looks for.
  assert.ok(config.couchdb.database_dir);
  assert.ok(config.daemons.httpd);
  assert.ok(config.httpd_global_handlers._config);
  assert.ok(config.log.level);
  assert.ok(config.query_servers.javascript);
  assert.equal(config.uuids.algorithm, 'sequential');
  assert.equal(config.httpd.config_whitelist, undefined, 'no whitelist by default');
});

test('GET /_config/{section} answers one section; an unknown one is {}', async () => {
  const r = await c.get('/_config/uuids');
  assert.equal(r.status, 200);
  assert.equal(r.body.algorithm, 'sequential');
  const all = (await c.get('/_config')).body;
  assert.deepEqual(r.body, all.uuids);
  const unknown = await c.get('/_config/cfg_no_such_section');
  assert.equal(unknown.status, 200);
  assert.deepEqual(unknown.body, {});
});

test('GET /_config/replicator shows CouchDB 1.6\'s [replicator] defaults, under 1.6\'s names', async () => {
  const r = await c.get('/_config/replicator');
  assert.equal(r.status, 200);
  // couchdb 1.6 etc/couchdb/default.ini: the pool is http_connections (not the older
  // max_http_sessions / max_http_pipeline_size); checkpoint settings are left to their defaults.
  assert.deepEqual(r.body, {
    db: '_replicator',
    max_replication_retry_count: '10',
    worker_processes: '4',
    worker_batch_size: '500',
    http_connections: '20',
    connection_timeout: '30000',
    retries_per_request: '10',
    socket_options: '[{keepalive, true}, {nodelay, false}]',
    verify_ssl_certificates: 'false',
    ssl_certificate_max_depth: '3',
  });
});

test('GET /_config/{section}/{key} answers the value as a JSON string', async () => {
  const r = await c.get('/_config/uuids/algorithm');
  assert.equal(r.status, 200);
  assert.equal(r.text, '"sequential"\n');
  assert.equal(r.body, 'sequential');
  const port = await c.get('/_config/httpd/bind_address');
  assert.equal(typeof port.body, 'string');
});

test('GET of an unknown key is 404 not_found / unknown_config_value', async () => {
  for (const path of ['/_config/uuids/cfg_no_such_key', '/_config/cfg_no_such_section/key']) {
    const r = await c.get(path);
    assert.equal(r.status, 404, path);
    assert.deepEqual(r.body, { error: 'not_found', reason: 'unknown_config_value' });
  }
});

// ---------------------------------------------------------------------------- PUT, DELETE

test('PUT answers the previous value: "" for a new key, then the old value', async () => {
  const first = await c.put('/_config/cfg_test/foo', 'bar');
  assert.equal(first.status, 200);
  assert.equal(first.text, '""\n');
  assert.equal((await c.get('/_config/cfg_test/foo')).body, 'bar');
  assert.equal((await c.get('/_config/cfg_test')).body.foo, 'bar');

  const second = await c.put('/_config/cfg_test/foo', 'baz');
  assert.equal(second.status, 200);
  assert.equal(second.body, 'bar');
  assert.equal((await c.get('/_config/cfg_test/foo')).body, 'baz');
});

test('PUT keeps values with spaces, quotes, unicode and ini-significant characters', async () => {
  for (const value of ['two words', 'with "quotes"', 'ünïcödé ✓', 'a = b ; c', '[brackets]', 'http://x/?a=1&b=2']) {
    assert.equal((await c.put('/_config/cfg_values/k', value)).status, 200);
    assert.equal((await c.get('/_config/cfg_values/k')).body, value);
  }
});

test('PUT changes the running server at once (uuids/algorithm)', async () => {
  assert.equal((await c.put('/_config/uuids/algorithm', 'utc_random')).body, 'sequential');
  const u = (await c.get('/_uuids?count=2')).body.uuids as string[];
  const micros = Number.parseInt(u[0]!.slice(0, 14), 16);
  assert.ok(Math.abs(micros / 1000 - Date.now()) < 3_600_000, 'utc_random prefix is the current time');
  assert.equal((await c.put('/_config/uuids/algorithm', 'sequential')).body, 'utc_random');
});

test('DELETE answers the removed value, then the key is 404', async () => {
  assert.equal((await c.put('/_config/cfg_del/k', 'v1')).status, 200);
  const r = await c.del('/_config/cfg_del/k');
  assert.equal(r.status, 200);
  assert.equal(r.text, '"v1"\n');
  const g = await c.get('/_config/cfg_del/k');
  assert.equal(g.status, 404);
  assert.equal(g.body.reason, 'unknown_config_value');
  const again = await c.del('/_config/cfg_del/k');
  assert.equal(again.status, 404);
  assert.deepEqual(again.body, { error: 'not_found', reason: 'unknown_config_value' });
  assert.deepEqual((await c.get('/_config/cfg_del')).body, {});
});

test('PUT with a body that is not a JSON string changes nothing: 400 invalid_json, or a 400 for other JSON (CouchDB 1.6 crashes on it)', async () => {
  assert.equal((await c.put('/_config/cfg_bad/k', 'keep')).status, 200);
  for (const raw of ['not json', '"unterminated', '']) {
    const r = await c.request('PUT', '/_config/cfg_bad/k', { raw, headers: { 'Content-Type': 'application/json' } });
    assert.equal(r.status, 400, `${JSON.stringify(raw)}: ${r.text}`);
    assert.deepEqual(r.body, { error: 'bad_request', reason: 'invalid_json' }, JSON.stringify(raw));
  }
  // handle_approved_config_req stores the value with binary_to_list (1.6's 500 badarg on
  // anything but a string); CouchDB 3's 400 here.
  for (const raw of ['5', 'true', 'null', '{"a":1}', '["x"]']) {
    for (const query of ['', '?raw=true']) {
      const r = await c.request('PUT', `/_config/cfg_bad/k${query}`, { raw, headers: { 'Content-Type': 'application/json' } });
      assert.equal(r.status, 400, `${raw}${query}: ${r.text}`);
      assert.deepEqual(r.body, { error: 'bad_request', reason: 'config values must be json-encoded strings' }, `${raw}${query}`);
    }
  }
  assert.equal((await c.get('/_config/cfg_bad/k')).body, 'keep');
});

test('PUT with a bad ?raw= value is 400', async () => {
  const r = await c.put('/_config/cfg_raw/k?raw=maybe', 'v');
  assert.equal(r.status, 400);
  assert.equal(r.body.error, "Bad value for 'raw' option: maybe");
  assert.equal((await c.get('/_config/cfg_raw/k')).status, 404);
  const ok = await c.put('/_config/cfg_raw/k?raw=true', 'v');
  assert.equal(ok.status, 200);
});

test('wrong shapes and methods are 405 with Allow: GET,PUT,DELETE', async () => {
  for (const [method, path] of [['POST', '/_config'], ['POST', '/_config/cfg_test/foo'], ['PUT', '/_config/cfg_test'], ['DELETE', '/_config'], ['PUT', '/_config']] as const) {
    // Node sends a DELETE body without framing, so only PUT and POST carry one.
    const r = await c.request(method, path, method === 'DELETE' ? {} : { body: 'x' });
    assert.equal(r.status, 405, `${method} ${path}`);
    assert.equal(r.body.error, 'method_not_allowed');
    const allow = String(r.headers.allow).split(',');
    for (const m of ['GET', 'PUT', 'DELETE']) assert.ok(allow.includes(m), `${method} ${path} Allow: ${r.headers.allow}`);
  }
});

// --------------------------------------------------------------------------- whitelist

test('config_whitelist limits PUT and DELETE to the listed pairs (config.js)', async () => {
  assert.equal((await c.put('/_config/cfg_wl/foo', 'start', NO_PERSIST)).status, 200);
  const set = await c.put('/_config/httpd/config_whitelist', '[{httpd,config_whitelist}, {cfg_wl,foo}]', NO_PERSIST);
  assert.equal(set.status, 200);
  try {
    for (const method of ['PUT', 'DELETE']) {
      for (const pair of ['cfg_wl/not_foo', 'not_cfg_wl/foo', 'neither/nor']) {
        const r = await c.request(method, `/_config/${pair}`, method === 'PUT' ? { body: 'nope', ...NO_PERSIST } : NO_PERSIST);
        assert.equal(r.status, 400, `${method} ${pair}`);
        assert.equal(r.body.error, 'modification_not_allowed');
        assert.equal(r.body.reason, 'This config variable is read-only');
      }
    }
    assert.equal((await c.get('/_config/cfg_wl/not_foo')).status, 404, 'nothing was written');
    assert.equal((await c.put('/_config/cfg_wl/foo', 'allowed', NO_PERSIST)).status, 200);
    assert.equal((await c.get('/_config/cfg_wl/foo')).body, 'allowed');
    assert.equal((await c.del('/_config/cfg_wl/foo', NO_PERSIST)).status, 200);
    // Reading is never restricted.
    assert.equal((await c.get('/_config/uuids/algorithm')).status, 200);

    // Non-2-tuples are ignored; strings, binaries and a "*" key work.
    for (const list of [
      '[{httpd,config_whitelist}, these, {are}, {nOt, 2, tuples}, [so], {cfg_wl,foo}]',
      '[{httpd,config_whitelist}, {"cfg_wl","foo"}]',
      '[{httpd,config_whitelist}, {<<"cfg_wl">>,<<"foo">>}]',
      '[{httpd,config_whitelist}, {cfg_wl, "*"}]',
    ]) {
      assert.equal((await c.put('/_config/httpd/config_whitelist', list, NO_PERSIST)).status, 200, list);
      assert.equal((await c.put('/_config/cfg_wl/foo', 'x', NO_PERSIST)).status, 200, list);
      assert.equal((await c.put('/_config/other_wl/foo', 'x', NO_PERSIST)).status, 400, list);
    }
  } finally {
    const reset = await c.del('/_config/httpd/config_whitelist', NO_PERSIST);
    assert.equal(reset.status, 200);
  }
  assert.equal((await c.put('/_config/other_wl/foo', 'x', NO_PERSIST)).status, 200, 'no whitelist, no limits');
});

test('an invalid or non-list config_whitelist still lets the whitelist itself be changed', async () => {
  for (const bad of ['!This is an invalid Erlang term!', '{[yes, a_valid_erlang_term, not_a_list]}']) {
    assert.equal((await c.put('/_config/httpd/config_whitelist', bad, NO_PERSIST)).status, 200);
    assert.equal((await c.put('/_config/cfg_wl2/k', 'v', NO_PERSIST)).status, 400, `locked by ${bad}`);
    const del = await c.del('/_config/httpd/config_whitelist', NO_PERSIST);
    assert.equal(del.status, 200, `can remove ${bad}`);
  }
  assert.equal((await c.put('/_config/cfg_wl2/k', 'v', NO_PERSIST)).status, 200);
});

// ------------------------------------------------------------------------- persistence

test('a normal PUT persists across a restart of the process; X-Couch-Persist: false does not', async () => {
  assert.equal((await c.put('/_config/cfg_persist/durable', 'yes')).status, 200);
  assert.equal((await c.put('/_config/cfg_persist/volatile', 'yes', NO_PERSIST)).status, 200);
  // A persisted value changed in memory only comes back as persisted.
  assert.equal((await c.put('/_config/cfg_persist/changed', 'disk')).status, 200);
  assert.equal((await c.put('/_config/cfg_persist/changed', 'memory', NO_PERSIST)).body, 'disk');
  assert.equal((await c.get('/_config/cfg_persist/volatile')).body, 'yes');
  assert.equal((await c.get('/_config/cfg_persist/changed')).body, 'memory');

  await server.restart();

  assert.equal((await c.get('/_config/cfg_persist/durable')).body, 'yes');
  const volatile = await c.get('/_config/cfg_persist/volatile');
  assert.equal(volatile.status, 404);
  assert.equal(volatile.body.reason, 'unknown_config_value');
  assert.equal((await c.get('/_config/cfg_persist/changed')).body, 'disk');
});

test('DELETE persists across a restart; DELETE with X-Couch-Persist: false does not', async () => {
  assert.equal((await c.put('/_config/cfg_persist_del/gone', 'v')).status, 200);
  assert.equal((await c.put('/_config/cfg_persist_del/back', 'v')).status, 200);
  assert.equal((await c.del('/_config/cfg_persist_del/gone')).status, 200);
  assert.equal((await c.del('/_config/cfg_persist_del/back', NO_PERSIST)).status, 200);
  assert.equal((await c.get('/_config/cfg_persist_del/back')).status, 404);

  await server.restart();

  assert.equal((await c.get('/_config/cfg_persist_del/gone')).status, 404);
  assert.equal((await c.get('/_config/cfg_persist_del/back')).body, 'v');
});

test('deleting a default value persists across a restart too', async () => {
  assert.equal((await c.get('/_config/uuids/max_count')).body, '1000');
  assert.equal((await c.del('/_config/uuids/max_count')).body, '1000');
  await server.restart();
  assert.equal((await c.get('/_config/uuids/max_count')).status, 404);
  assert.equal((await c.put('/_config/uuids/max_count', '1000')).status, 200);
});

test('the server still answers GET / at the end', async () => {
  assert.equal((await c.get('/')).status, 200);
  assert.equal(server.process.exitCode, null);
});
