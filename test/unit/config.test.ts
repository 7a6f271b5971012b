import { DEFAULT_INI } from '../../src/settee.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Config, LayeredSection, parseIni, updateIni } from '../../src/config/config.js';
import { CouchError } from '../../src/errors.js';

const DEFAULTS = `; test defaults
[couchdb]
max_dbs_open = 100 ; trailing comment
delayed_commits = false
file_compression = snappy

[httpd]
port = 5984
bind_address = 127.0.0.1
handlers = {a, b},
 {c, d}

[uuids]
algorithm = sequential
utc_id_suffix =
`;

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'settee-config-'));
}

async function setup(local?: string, overrides?: Record<string, Record<string, string>>) {
  const dir = await tempDir();
  const defaultFile = join(dir, 'default.ini');
  const localFile = join(dir, 'etc', 'local.ini');
  await writeFile(defaultFile, DEFAULTS);
  if (local !== undefined) {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, 'etc'), { recursive: true });
    await writeFile(localFile, local);
  }
  const config = await Config.load({ defaultFile, localFile, overrides });
  const reload = () => Config.load({ defaultFile, localFile, overrides });
  return { dir, defaultFile, localFile, config, reload, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

test('parseIni follows CouchDB rules: comments, continuation lines, removal markers', () => {
  const entries = parseIni(DEFAULTS);
  const map = new Map(entries.map((e) => [`${e.section}/${e.key}`, e.value]));
  assert.equal(map.get('couchdb/max_dbs_open'), '100');
  assert.equal(map.get('httpd/handlers'), '{a, b}, {c, d}');
  assert.equal(map.get('uuids/utc_id_suffix'), '');
  assert.equal(map.has('/; test defaults'), false);
  // "a;b" without a space before ';' is a value, not a comment.
  assert.equal(parseIni('[s]\nk = a;b ;c\n')[0]!.value, 'a;b');
});

test('load layers default.ini, local.ini and overrides; flags win', async () => {
  const t = await setup('[couchdb]\nmax_dbs_open = 500\nfile_compression =\n\n[extra]\nk = v\n', {
    couchdb: { max_dbs_open: '900' },
    httpd: { port: '6000', bind_address: '' },
  });
  try {
    assert.equal(t.config.get('couchdb', 'max_dbs_open'), '900');
    assert.equal(t.config.get('couchdb', 'delayed_commits'), 'false');
    assert.equal(t.config.get('couchdb', 'file_compression'), undefined, 'empty value in local.ini removes a default');
    assert.equal(t.config.get('extra', 'k'), 'v');
    assert.equal(t.config.get('httpd', 'port'), '6000');
    assert.equal(t.config.get('httpd', 'bind_address'), undefined);
    assert.equal(t.config.get('uuids', 'utc_id_suffix'), undefined);
    assert.equal(t.config.get('nosuch', 'key'), undefined);
    assert.equal(t.config.getInt('couchdb', 'max_dbs_open', 1), 900);
    assert.equal(t.config.getInt('uuids', 'algorithm', 7), 7);
    assert.equal(t.config.getBool('couchdb', 'delayed_commits', true), false);
    assert.equal(t.config.getBool('nosuch', 'key', true), true);
    assert.equal(t.config.getString('uuids', 'algorithm', 'x'), 'sequential');
    assert.equal(t.config.getString('uuids', 'missing', 'x'), 'x');
  } finally {
    await t.cleanup();
  }
});

test('missing local file is fine; first persisted write creates its directory', async () => {
  const t = await setup();
  try {
    assert.equal(t.config.get('httpd', 'port'), '5984');
    const prev = await t.config.set('httpd', 'port', '5985', true);
    assert.equal(prev, '5984');
    const text = await readFile(t.localFile, 'utf8');
    assert.match(text, /^\[httpd\]\nport = 5985\n$/);
    assert.equal((await t.reload()).get('httpd', 'port'), '5985');
  } finally {
    await t.cleanup();
  }
});

test('persisted set keeps other sections, keys and comments of local.ini', async () => {
  const local = '; my notes\n[httpd]\n; the port\nport = 7000\nbind_address = 0.0.0.0\n\n[admins]\nroot = secret\n';
  const t = await setup(local);
  try {
    assert.equal(await t.config.set('httpd', 'port', '7001', true), '7000');
    assert.equal(await t.config.set('httpd', 'new_key', 'nv', true), undefined);
    assert.equal(await t.config.set('brand_new', 'a', 'b', true), undefined);
    const text = await readFile(t.localFile, 'utf8');
    assert.ok(text.startsWith('; my notes\n[httpd]\n; the port\nport = 7001\nbind_address = 0.0.0.0\nnew_key = nv\n'), text);
    assert.ok(text.includes('[admins]\nroot = secret\n'));
    const again = await t.reload();
    assert.equal(again.get('httpd', 'port'), '7001');
    assert.equal(again.get('httpd', 'bind_address'), '0.0.0.0');
    assert.equal(again.get('httpd', 'new_key'), 'nv');
    assert.equal(again.get('admins', 'root'), 'secret');
    assert.equal(again.get('brand_new', 'a'), 'b');
  } finally {
    await t.cleanup();
  }
});

test('persist=false changes memory only; reload() drops it', async () => {
  const t = await setup();
  try {
    assert.equal(await t.config.set('couchdb', 'max_dbs_open', '5', false), '100');
    assert.equal(t.config.get('couchdb', 'max_dbs_open'), '5');
    await assert.rejects(readFile(t.localFile, 'utf8'), { code: 'ENOENT' });
    assert.equal((await t.reload()).get('couchdb', 'max_dbs_open'), '100');
    await t.config.reload();
    assert.equal(t.config.get('couchdb', 'max_dbs_open'), '100');
  } finally {
    await t.cleanup();
  }
});

test('delete: persisted removal survives reload; volatile removal does not; missing key is undefined', async () => {
  const t = await setup();
  try {
    assert.equal(await t.config.delete('couchdb', 'file_compression', true), 'snappy');
    assert.equal(t.config.get('couchdb', 'file_compression'), undefined);
    assert.match(await readFile(t.localFile, 'utf8'), /^file_compression =$/m);
    assert.equal((await t.reload()).get('couchdb', 'file_compression'), undefined);

    assert.equal(await t.config.delete('httpd', 'port', false), '5984');
    assert.equal(t.config.get('httpd', 'port'), undefined);
    assert.equal((await t.reload()).get('httpd', 'port'), '5984');

    assert.equal(await t.config.delete('httpd', 'nosuch', true), undefined);
    assert.equal(await t.config.delete('nosuch', 'nosuch', true), undefined);
    assert.doesNotMatch(await readFile(t.localFile, 'utf8'), /nosuch/);

    // Setting a deleted key again replaces the removal marker.
    await t.config.set('couchdb', 'file_compression', 'deflate_6', true);
    assert.equal((await t.reload()).get('couchdb', 'file_compression'), 'deflate_6');
  } finally {
    await t.cleanup();
  }
});

test('concurrent persisted sets are serialised and none is lost; writes are atomic', async () => {
  const t = await setup();
  try {
    const n = 40;
    await Promise.all(Array.from({ length: n }, (_, i) => t.config.set(`s${i % 4}`, `k${i}`, `v${i}`, true)));
    const again = await t.reload();
    for (let i = 0; i < n; i++) assert.equal(again.get(`s${i % 4}`, `k${i}`), `v${i}`, `k${i}`);
    const leftovers = (await readdir(join(t.dir, 'etc'))).filter((f) => f !== 'local.ini');
    assert.deepEqual(leftovers, [], 'no temp files left behind');

    // The same key written concurrently: each write sees the one before it.
    const prevs = await Promise.all(['a', 'b', 'c', 'd'].map((v) => t.config.set('same', 'key', v, true)));
    assert.deepEqual(prevs, [undefined, 'a', 'b', 'c']);
    assert.equal((await t.reload()).get('same', 'key'), 'd');
    const occurrences = (await readFile(t.localFile, 'utf8')).match(/^key = /gm) ?? [];
    assert.equal(occurrences.length, 1);
  } finally {
    await t.cleanup();
  }
});

test('onChange reports sets, deletes and reload differences; unsubscribe stops it', async () => {
  const t = await setup();
  try {
    const seen: Array<[string, string, string | undefined]> = [];
    const off = t.config.onChange((s, k, v) => seen.push([s, k, v]));
    await t.config.set('log', 'level', 'debug', false);
    await t.config.delete('httpd', 'port', false);
    assert.deepEqual(seen, [['log', 'level', 'debug'], ['httpd', 'port', undefined]]);
    seen.length = 0;
    await t.config.reload();
    assert.deepEqual(
      seen.sort(),
      [['httpd', 'port', '5984'], ['log', 'level', undefined]].sort(),
    );
    off();
    await t.config.set('log', 'level', 'error', false);
    assert.equal(seen.length, 2);
  } finally {
    await t.cleanup();
  }
});

test('a throwing listener does not break set', async () => {
  const config = Config.fromValues({ a: { b: 'c' } });
  config.onChange(() => {
    throw new Error('boom');
  });
  assert.equal(await config.set('a', 'b', 'd', true), 'c');
  assert.equal(config.get('a', 'b'), 'd');
});

test('write filter applies before storing and to the file; raw skips it', async () => {
  const t = await setup();
  try {
    t.config.setWriteFilter(async (section, _key, value) => (section === 'admins' ? `-hashed-${value}` : value));
    await t.config.set('admins', 'root', 'pw', true);
    await t.config.set('httpd', 'port', '1234', true);
    await t.config.set('admins', 'other', '-hashed-already', true, { raw: true });
    assert.equal(t.config.get('admins', 'root'), '-hashed-pw');
    assert.equal(t.config.get('httpd', 'port'), '1234');
    const again = await t.reload();
    assert.equal(again.get('admins', 'root'), '-hashed-pw');
    assert.equal(again.get('admins', 'other'), '-hashed-already');
  } finally {
    await t.cleanup();
  }
});

test('failed persistence leaves memory unchanged', async () => {
  const dir = await tempDir();
  try {
    const defaultFile = join(dir, 'default.ini');
    await writeFile(defaultFile, DEFAULTS);
    // local.ini's directory would have to be created under a regular file: that fails.
    const config = await Config.load({ defaultFile, localFile: join(defaultFile, 'sub', 'local.ini') });
    await assert.rejects(config.set('httpd', 'port', '1', true));
    assert.equal(config.get('httpd', 'port'), '5984');
    // The queue keeps working after a failure.
    assert.equal(await config.set('httpd', 'port', '2', false), '5984');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('section() and all() are sorted copies', async () => {
  const t = await setup();
  try {
    const all = t.config.all();
    assert.deepEqual(Object.keys(all), ['couchdb', 'httpd', 'uuids']);
    assert.deepEqual(Object.keys(all['couchdb']!), ['delayed_commits', 'file_compression', 'max_dbs_open']);
    all['couchdb']!['max_dbs_open'] = 'changed';
    const sec = t.config.section('couchdb');
    sec['max_dbs_open'] = 'changed';
    assert.equal(t.config.get('couchdb', 'max_dbs_open'), '100');
    assert.deepEqual(t.config.section('nosuch'), {});
  } finally {
    await t.cleanup();
  }
});

test('names that would corrupt the ini file are refused', async () => {
  const config = Config.fromValues();
  await assert.rejects(config.set('a]b', 'k', 'v', true), (e: unknown) => e instanceof CouchError && e.status === 400);
  await assert.rejects(config.set('s', 'k=1', 'v', true), (e: unknown) => e instanceof CouchError && e.status === 400);
  await assert.rejects(config.set('s', 'k\nx', 'v', true), (e: unknown) => e instanceof CouchError && e.status === 400);
});

test('updateIni replaces a multi-line value and writes newlines as spaces', () => {
  const text = '[s]\nk = one\n two\nother = x\n';
  assert.equal(updateIni(text, 's', 'k', 'a\nb'), '[s]\nk = a b\nother = x\n');
  assert.equal(updateIni('', 's', 'k', ''), '[s]\nk =\n');
});

test('the shipped etc/default.ini reads as CouchDB 1.6 defaults', async () => {
  const dir = await tempDir();
  try {
    const config = await Config.load({ defaultFile: DEFAULT_INI, localFile: join(dir, 'local.ini') });
    assert.equal(config.get('couchdb', 'max_document_size'), '67108864');
    assert.equal(config.get('couchdb', 'delayed_commits'), 'false');
    assert.equal(config.get('couchdb', 'os_process_timeout'), '5000');
    assert.equal(config.get('couchdb', 'uuid'), undefined);
    assert.equal(config.get('httpd', 'port'), '5984');
    assert.equal(config.get('httpd', 'bind_address'), '127.0.0.1');
    assert.equal(config.get('httpd', 'max_uuid_count'), '1000');
    assert.equal(config.get('couch_httpd_auth', 'timeout'), '600');
    assert.equal(config.get('couch_httpd_auth', 'authentication_db'), '_users');
    assert.equal(config.get('log', 'level'), 'info');
    assert.equal(config.get('uuids', 'algorithm'), 'sequential');
    assert.equal(config.get('replicator', 'db'), '_replicator');
    assert.equal(config.get('attachments', 'compression_level'), '8');
    assert.equal(config.get('httpd_global_handlers', '_config'), '{couch_httpd_misc_handlers, handle_config_req}');
    assert.equal(config.get('httpd_design_handlers', '_view'), '{couch_mrview_http, handle_view_req}');
    for (const [section, keys] of Object.entries(config.all())) {
      for (const [key, value] of Object.entries(keys)) {
        assert.doesNotMatch(value, /(^|\s);/, `${section}/${key} kept a comment`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('LayeredSection: a key is read from the first section that has it, else from the last', async () => {
  const { config, cleanup } = await setup('[new]\na = 1\nflag = TRUE\n\n[old]\na = 2\nb = 3\nn = 7\n');
  try {
    const layered = new LayeredSection(config, ['new', 'old']);
    assert.equal(layered.get('a'), '1');
    assert.equal(layered.get('b'), '3');
    assert.equal(layered.get('c'), undefined);
    assert.equal(layered.sectionOf('c'), 'old');
    assert.equal(layered.getBool('flag', false), true);
    assert.equal(layered.getInt('n', 0), 7);
    assert.equal(layered.getString('c', 'fallback'), 'fallback');
    await config.set('new', 'b', '4', false);
    assert.equal(layered.get('b'), '4');
    await config.delete('new', 'a', false);
    assert.equal(layered.get('a'), '2');
  } finally {
    await cleanup();
  }
});
