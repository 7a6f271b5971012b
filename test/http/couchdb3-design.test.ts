/**
 * CouchDB 3.x's Elixir integration tests for design documents and the functions they hold
 * (test/elixir/test/design_docs_test.exs, design_options_test.exs, design_paths_test.exs,
 * list_views_test.exs, show_documents_test.exs, update_documents_test.exs, rewrite_test.exs,
 * rewrite_js_test.exs, etags_head_test.exs, method_override_test.exs, multiple_rows_test.exs and
 * jsonp_test.exs, from the 3.x line rather than the FoundationDB-era main branch: design_docs with
 * its collator_versions check, rewrite_test with its [chttpd] settings, list_views without the
 * "Not supported on 4.x" tags), ported one test per `test` block over real HTTP: the same
 * documents, requests and assertions.
 *
 * The originals' clients (`Couch`, `Rawresp`: HTTPotion over ibrowse) send every request as the
 * server admin `adm` (Basic auth), with `User-Agent: couch-potion` and `Content-Type:
 * application/json` unless given, and no Accept header; the client below does the same, so show
 * and list functions see the headers they saw. `Couch` decodes a body only when it is served as
 * application/json; here a body is decoded whenever it is JSON, and the tests that check a
 * Content-Type say so themselves. Modules that share one database (setup_all) get a fresh copy
 * of that setup for every test. `set_config` and `run_on_modified_server` change a setting on
 * every node of `_membership` without persisting it, and put it back afterwards (`withConfig`).
 * CouchDB 3.2 moved `secure_rewrites` and `rewrite_limit` from [httpd] to [chttpd]; CouchDB 1.6,
 * which Settee follows, reads them from [httpd], so the tests set them there and say so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { serverForFile } from '../helpers/server.js';
import { basic, defineAdmin } from '../helpers/auth.js';

const { server } = await serverForFile();
await defineAdmin(server.url, 'adm', 'pass');

interface Resp {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

interface Opts {
  /** An object is sent as JSON; a string as is (the originals' `body:`). */
  body?: unknown;
  headers?: Record<string, string>;
  /** HTTPotion's `follow_redirects: true`. */
  followRedirects?: boolean;
}

/**
 * The originals' Couch/Rawresp request: the path is sent exactly as written (no normalisation),
 * with Basic adm:pass, User-Agent couch-potion and Content-Type application/json unless given.
 */
function couch(method: string, path: string, opts: Opts = {}): Promise<Resp> {
  const url = new URL(server.url);
  const headers: Record<string, string> = {
    ...basic('adm', 'pass'),
    'User-Agent': 'couch-potion',
    ...opts.headers,
  };
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  // ibrowse sends a body with its length (whatever the method), and an empty one on POST and PUT.
  if (payload !== undefined) headers['Content-Length'] = String(Buffer.byteLength(payload));
  else if (method === 'POST' || method === 'PUT') headers['Content-Length'] = '0';
  return new Promise<Resp>((resolve, reject) => {
    const r = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(payload);
  }).then(async (resp) => {
    if (opts.followRedirects && [301, 302, 303, 307, 308].includes(resp.status) && resp.headers.location) {
      const target = new URL(String(resp.headers.location), server.url);
      return couch(method, `${target.pathname}${target.search}`, { ...opts });
    }
    return resp;
  });
}

const get = (path: string, o?: Opts) => couch('GET', path, o);
const head = (path: string, o?: Opts) => couch('HEAD', path, o);
const put = (path: string, o?: Opts) => couch('PUT', path, o);
const post = (path: string, o?: Opts) => couch('POST', path, o);
const del = (path: string, o?: Opts) => couch('DELETE', path, o);
const options = (path: string, o?: Opts) => couch('OPTIONS', path, o);

/** A response header as one string. */
const hdr = (r: Resp, name: string): string | undefined => {
  const v = r.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** A short description of a response for assertion messages. */
const show = (r: Resp) => `${r.status} ${r.text.slice(0, 300)}`;

let dbCounter = 0;
/** random_db_name(prefix). */
const dbName = (label: string): string => `c3-design-${label}-${++dbCounter}`;

/** create_db: 201 or 202 with exactly {"ok": true}. */
async function createDb(name: string): Promise<void> {
  const r = await put(`/${name}`);
  assert.ok([201, 202].includes(r.status), `create_db ${name}: ${show(r)}`);
  assert.deepEqual(r.body, { ok: true });
}

/** `@tag :with_db`: a fresh, empty database. */
async function mkdb(label: string): Promise<string> {
  const name = dbName(label);
  await createDb(name);
  return name;
}

/** create_doc: POST /db, 201 or 202 with ok. */
async function createDoc(db: string, body: unknown): Promise<Resp> {
  const r = await post(`/${db}`, { body });
  assert.ok([201, 202].includes(r.status), `create_doc: ${show(r)}`);
  assert.ok(r.body?.ok, `create_doc: ${show(r)}`);
  return r;
}

/** bulk_save: POST /db/_bulk_docs, 201. */
async function bulkSave(db: string, docs: unknown[]): Promise<void> {
  const r = await post(`/${db}/_bulk_docs`, { body: { docs } });
  assert.equal(r.status, 201, `bulk_save: ${show(r)}`);
}

/** save: PUT under the document's id, 201 or 202; answers the document with its new _rev. */
async function save(db: string, doc: Record<string, any>): Promise<Record<string, any>> {
  const r = await put(`/${db}/${doc._id}`, { body: doc });
  assert.ok([201, 202].includes(r.status), `save: ${show(r)}`);
  assert.ok(r.body?.ok);
  return { ...doc, _rev: r.body.rev };
}

/** make_docs(first..last): {_id: "i", integer: i, string: "i"}. */
function makeDocs(first: number, last: number) {
  return Array.from({ length: last - first + 1 }, (_, k) => ({ _id: String(first + k), integer: first + k, string: String(first + k) }));
}

/** retry_until: the condition polled every 100 ms for up to 5 s, its last failure rethrown. */
async function retryUntil(condition: () => Promise<void>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await condition();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** set_config / run_on_modified_server: every setting on every node, unpersisted, restored afterwards. */
async function withConfig(settings: [string, string, string][], body: () => Promise<void>): Promise<void> {
  const nodes = (await get('/_membership')).body.all_nodes as string[];
  const previous: [string, string, string, string][] = [];
  try {
    for (const [section, key, value] of settings) {
      for (const node of nodes) {
        const r = await put(`/_node/${encodeURIComponent(node)}/_config/${section}/${encodeURIComponent(key)}`, { body: JSON.stringify(value), headers: { 'X-Couch-Persist': 'false' } });
        assert.equal(r.status, 200, `set_config ${section}/${key}: ${show(r)}`);
        previous.push([node, section, key, r.body as string]);
      }
    }
    await body();
  } finally {
    for (const [node, section, key, prev] of previous.reverse()) {
      const path = `/_node/${encodeURIComponent(node)}/_config/${section}/${encodeURIComponent(key)}`;
      const headers = { 'X-Couch-Persist': 'false' };
      const r = prev !== '' ? await put(path, { body: JSON.stringify(prev), headers }) : await del(path, { headers });
      assert.equal(r.status, 200, `restore ${section}/${key}: ${show(r)}`);
    }
  }
}

/** The originals' `query:` keyword lists: each value as its text, URL-encoded. */
const qs = (params: Record<string, string | number | boolean>) =>
  `?${Object.entries(params).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}`;

// ============================================================================== design_docs_test.exs

const DESIGN_DOC = {
  _id: '_design/test',
  language: 'javascript',
  autoupdate: false,
  whatever: {
    stringzone: "exports.string = 'plankton';",
    commonjs: {
      whynot: "exports.test = require('../stringzone');\nexports.foo = require('whatever/stringzone');\n",
      upper: "exports.testing = require('./whynot').test.string.toUpperCase()+\nmodule.id+require('./whynot').foo.string\n",
      circular_one: "require('./circular_two'); exports.name = 'One';",
      circular_two: "require('./circular_one'); exports.name = 'Two';",
    },
    // paths relative to parent
    idtest1: {
      a: {
        b: { d: "module.exports = require('../c/e').id;" },
        c: { e: 'exports.id = module.id;' },
      },
    },
    // multiple paths relative to parent
    idtest2: {
      a: {
        b: { d: "module.exports = require('../../a/c/e').id;" },
        c: { e: 'exports.id = module.id;' },
      },
    },
    // paths relative to module
    idtest3: {
      a: {
        b: "module.exports = require('./c/d').id;",
        c: {
          d: "module.exports = require('./e');",
          e: 'exports.id = module.id;',
        },
      },
    },
    // paths relative to module and parent
    idtest4: {
      a: {
        b: "module.exports = require('../a/./c/d').id;",
        c: {
          d: "module.exports = require('./e');",
          e: 'exports.id = module.id;',
        },
      },
    },
    // paths relative to root
    idtest5: {
      a: "module.exports = require('whatever/idtest5/b').id;",
      b: 'exports.id = module.id;',
    },
  },
  views: {
    all_docs_twice: { map: 'function(doc) {\n  emit(doc.integer, null);\n  emit(doc.integer, null);\n}\n' },
    no_docs: { map: 'function(doc) {}\n' },
    single_doc: { map: 'function(doc) {\n  if (doc._id === "1") {\n    emit(1, null);\n  }\n}\n' },
    summate: {
      map: 'function(doc) {\n  emit(doc.integer, doc.integer);\n}\n',
      reduce: 'function(keys, values) {\n  return sum(values);\n}\n',
    },
    summate2: {
      map: 'function(doc) {\n  emit(doc.integer, doc.integer);\n}\n',
      reduce: 'function(keys, values) {\n  return sum(values);\n}\n',
    },
    huge_src_and_results: {
      map: ` function(doc) {\n   if (doc._id === "1") {\n     emit("${'a'.repeat(16)}", null);\n   }\n }\n`,
      reduce: `function(keys, values) {\n  return "${'a'.repeat(16)}";\n}\n`,
    },
    lib: {
      baz: "exports.baz = 'bam';",
      foo: {
        foo: "exports.foo = 'bar';",
        boom: "exports.boom = 'ok';",
        zoom: "exports.zoom = 'yeah';",
      },
    },
    commonjs: { map: "function(doc) {\n  emit(null, require('views/lib/foo/boom').boom);\n}\n" },
  },
  shows: {
    simple: "function() {\n  return 'ok';\n}\n",
    requirey: "function() {\n  var lib = require('whatever/commonjs/upper');\n  return lib.testing;\n}\n",
    circular: "function() {\n  var lib = require('whatever/commonjs/upper');\n  return JSON.stringify(this);\n}\n",
    circular_require: "function() {\n  return require('whatever/commonjs/circular_one').name;\n}\n",
    idtest1: "function() {\n  return require('whatever/idtest1/a/b/d');\n}\n",
    idtest2: "function() {\n  return require('whatever/idtest2/a/b/d');\n}\n",
    idtest3: "function() {\n  return require('whatever/idtest3/a/b');\n}\n",
    idtest4: "function() {\n  return require('whatever/idtest4/a/b');\n}\n",
    idtest5: "function() {\n  return require('whatever/idtest5/a');\n}\n",
  },
};

/** The module's setup_all: a database holding the design document and one empty document. */
async function designDocsSetup(label: string): Promise<string> {
  const db = await mkdb(`dd-${label}`);
  await createDoc(db, DESIGN_DOC);
  await createDoc(db, {});
  return db;
}

test('design_docs: consistent _rev for design docs', async () => {
  const db = await designDocsSetup('rev');
  const resp = await get(`/${db}/_design/test`);
  assert.equal(resp.status, 200, show(resp));
  const firstDbRev = resp.body._rev;

  const secondDbName = dbName('dd-rev-second');
  await createDb(secondDbName);
  const resp2 = await createDoc(secondDbName, DESIGN_DOC);
  assert.equal(resp2.body.rev, firstDbRev);
});

test('design_docs: commonjs require', async () => {
  const db = await designDocsSetup('commonjs');
  let resp = await get(`/${db}/_design/test/_show/requirey`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.text, 'PLANKTONwhatever/commonjs/upperplankton');

  resp = await get(`/${db}/_design/test/_show/circular`);
  assert.equal(resp.status, 200, show(resp));
  const result = JSON.parse(resp.text);
  assert.equal(result.language, 'javascript');
});

test('design_docs: circular commonjs dependencies', async () => {
  const db = await designDocsSetup('circular');
  const resp = await get(`/${db}/_design/test/_show/circular_require`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.text, 'One');
});

test('design_docs: module id values are as expected', async () => {
  const db = await designDocsSetup('module-ids');
  const checkIdValue = async (id: string, expected: string) => {
    const resp = await get(`/${db}/_design/test/_show/${id}`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(resp.text, expected);
  };
  await checkIdValue('idtest1', 'whatever/idtest1/a/c/e');
  await checkIdValue('idtest2', 'whatever/idtest2/a/c/e');
  await checkIdValue('idtest3', 'whatever/idtest3/a/c/e');
  await checkIdValue('idtest4', 'whatever/idtest4/a/c/e');
  await checkIdValue('idtest5', 'whatever/idtest5/b');
});

test('design_docs: that we get correct design doc info back', async () => {
  const db = await mkdb('dd-info');
  await createDoc(db, DESIGN_DOC);

  let resp = await get(`/${db}/_design/test/_info`);
  const prevViewSig = resp.body?.view_index?.signature;
  const prevViewSize = resp.body?.view_index?.sizes?.file;

  const numDocs = 500;
  await bulkSave(db, makeDocs(1, numDocs + 1));

  await get(`/${db}/_design/test/_view/summate${qs({ stale: 'ok' })}`);

  for (let x = 0; x <= 1; x++) {
    resp = await get(`/${db}/_design/test/_info`);
    assert.equal(resp.body.name, 'test', show(resp));
    assert.ok(resp.body.view_index !== null && typeof resp.body.view_index === 'object', show(resp));
    const viewIndex = resp.body.view_index;
    assert.equal(viewIndex.sizes?.file, prevViewSize, `sizes.file: ${show(resp)}`);
    assert.equal(viewIndex.compact_running, false, show(resp));
    assert.equal(viewIndex.signature, prevViewSig, show(resp));

    // check collator_versions result
    assert.ok(Array.isArray(viewIndex.collator_versions), `collator_versions: ${show(resp)}`);
    const collatorVersions = viewIndex.collator_versions;
    assert.equal(collatorVersions.length, 1);
    assert.equal(typeof collatorVersions[0], 'string');
  }
});

test('design_docs: commonjs in map functions', async () => {
  const db = await designDocsSetup('commonjs-map');
  const resp = await get(`/${db}/_design/test/_view/commonjs${qs({ limit: 1 })}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.rows[0].value, 'ok');
});

test('design_docs: _all_docs view returns correctly with keys', async () => {
  const db = await designDocsSetup('all-docs-keys');
  const resp = await get(`/${db}/_all_docs${qs({ startkey: JSON.stringify('_design'), endkey: JSON.stringify('_design0') })}`);
  assert.equal(resp.body.rows.length, 1, show(resp));
});

test('design_docs: all_docs_twice', async () => {
  const db = await mkdb('dd-twice');
  await createDoc(db, DESIGN_DOC);

  const numDocs = 500;
  await bulkSave(db, makeDocs(1, 2 * numDocs));

  for (let pass = 0; pass <= 1; pass++) {
    let resp = await get(`/${db}/_design/test/_view/all_docs_twice`);
    assert.equal(resp.status, 200, show(resp));
    const rows = resp.body.rows;
    for (let x = 0; x <= numDocs; x++) {
      assert.equal(rows[2 * x].key, x + 1);
      assert.equal(rows[2 * x + 1].key, x + 1);
    }

    resp = await get(`/${db}/_design/test/_view/no_docs`);
    assert.equal(resp.body.total_rows, 0);

    resp = await get(`/${db}/_design/test/_view/single_doc`);
    assert.equal(resp.body.total_rows, 1);
  }
});

test('design_docs: language not specified, Javascript is implied', async () => {
  const db = await mkdb('dd-no-language');
  await bulkSave(db, makeDocs(1, 2));

  const designDoc2 = {
    _id: '_design/test2',
    views: {
      single_doc: { map: 'function(doc) {\n  if (doc._id === "1") {\n    emit(1, null);\n  }\n}\n' },
    },
  };
  await createDoc(db, designDoc2);

  const resp = await get(`/${db}/_design/test2/_view/single_doc`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.rows.length, 1);
});

test('design_docs: startkey and endkey', async () => {
  const db = await mkdb('dd-ranges');
  await createDoc(db, DESIGN_DOC);

  const numDocs = 500;
  await bulkSave(db, makeDocs(1, 2 * numDocs));
  const summate = (n: number) => (n + 1) * (n / 2);

  let resp = await get(`/${db}/_design/test/_view/summate`);
  assert.equal(resp.body.rows[0].value, summate(numDocs * 2));

  resp = await get(`/${db}/_design/test/_view/summate${qs({ startkey: 4, endkey: 4 })}`);
  assert.equal(resp.body.rows[0].value, 4);

  resp = await get(`/${db}/_design/test/_view/summate${qs({ startkey: 4, endkey: 5 })}`);
  assert.equal(resp.body.rows[0].value, 9);

  resp = await get(`/${db}/_design/test/_view/summate${qs({ startkey: 4, endkey: 6 })}`);
  assert.equal(resp.body.rows[0].value, 15);

  // test start_key and end_key aliases
  resp = await get(`/${db}/_design/test/_view/summate${qs({ start_key: 4, end_key: 6 })}`);
  assert.equal(resp.body.rows[0].value, 15);

  // Verify that a shared index (view def is an exact copy of "summate")
  // does not confuse the reduce stage
  resp = await get(`/${db}/_design/test/_view/summate2${qs({ startkey: 4, endkey: 6 })}`);
  assert.equal(resp.body.rows[0].value, 15);

  for (let x = 0; x <= Math.floor(numDocs / 60); x++) {
    resp = await get(`/${db}/_design/test/_view/summate${qs({ startkey: x * 30, endkey: numDocs - x * 30 })}`);
    assert.equal(resp.body.rows[0].value, summate(numDocs - x * 30) - summate(x * 30 - 1));
  }
});

test('design_docs: design doc deletion', async () => {
  const db = await mkdb('dd-deletion');
  const created = await createDoc(db, DESIGN_DOC);

  const delResp = await del(`/${db}/${created.body.id}${qs({ rev: created.body.rev })}`);
  assert.equal(delResp.status, 200, show(delResp));

  let resp = await get(`/${db}/${created.body.id}`);
  assert.equal(resp.status, 404, show(resp));

  resp = await get(`/${db}/_design/test/_view/no_docs`);
  assert.equal(resp.status, 404, show(resp));
});

test('design_docs: validate doc update', async () => {
  const db = await mkdb('dd-vdu');

  // COUCHDB-1227 - if a design document is deleted, by adding a "_deleted"
  // field with the boolean value true, its validate_doc_update functions
  // should no longer have effect.
  const ddoc = {
    _id: '_design/test',
    language: 'javascript',
    validate_doc_update: '  function(newDoc, oldDoc, userCtx, secObj) {\n   if (newDoc.value % 2 == 0) {\n      throw({forbidden: "dont like even numbers"});\n   }\n   return true;\n}\n',
  };
  const respDdoc = await createDoc(db, ddoc);

  const resp = await post(`/${db}`, { body: { _id: 'doc1', value: 4 } });
  assert.equal(resp.status, 403, show(resp));
  assert.equal(resp.body.reason, 'dont like even numbers');

  const ddocResp = await get(`/${db}/${respDdoc.body.id}`);
  const deleted = { ...ddocResp.body, _deleted: true };

  await retryUntil(async () => {
    const retryResp = await post(`/${db}`, { body: deleted });
    assert.ok([201, 202].includes(retryResp.status), show(retryResp));
    await createDoc(db, { _id: 'doc1', value: 4 });
  });
});

// ============================================================================ design_options_test.exs

async function createOptionsTestView(db: string, id: string, opts: Record<string, unknown>) {
  const map = 'function (doc) {emit(null, doc._id);}';
  const withseq = 'function(doc) {emit(doc._local_seq, null)}';
  const designDoc = {
    _id: id,
    language: 'javascript',
    options: opts,
    views: {
      data: { map },
      with_seq: { map: withseq },
    },
  };
  await createDoc(db, designDoc);
}

test('design_options: design doc options - include_desing=true', async () => {
  const db = await mkdb('do-include-true');
  await createOptionsTestView(db, '_design/fu', { include_design: true });

  const resp = await get(`/${db}/_design/fu/_view/data`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.rows.length, 1);
  assert.equal(resp.body.rows[0].value, '_design/fu');
});

test('design_options: design doc options - include_desing=false', async () => {
  const db = await mkdb('do-include-false');
  await createOptionsTestView(db, '_design/bingo', { include_design: false });

  const resp = await get(`/${db}/_design/bingo/_view/data`);
  assert.equal(resp.status, 200, show(resp));
  assert.deepEqual(resp.body.rows, []);
});

test('design_options: design doc options - include_design default value', async () => {
  const db = await mkdb('do-include-default');
  await createOptionsTestView(db, '_design/bango', {});

  const resp = await get(`/${db}/_design/bango/_view/data`);
  assert.equal(resp.status, 200, show(resp));
  assert.deepEqual(resp.body.rows, []);
});

test('design_options: design doc options - local_seq=true', async () => {
  const db = await mkdb('do-local-seq');
  await createOptionsTestView(db, '_design/fu', { include_design: true, local_seq: true });
  await createDoc(db, {});
  const resp = await get(`/${db}/_design/fu/_view/with_seq`);

  const rowWithKey = (resp.body.rows as { key: unknown }[]).filter((p) => p.key !== null);
  assert.equal(rowWithKey.length, 2, show(resp));
});

// ============================================================================== design_paths_test.exs

async function ddocPathTest(db: string) {
  await createDoc(db, { _id: '_design/test', views: { testing: { map: 'function(){emit(1,1)}' } } });

  let resp = await get(`/${db}/_design/test`);
  assert.equal(resp.body?._id, '_design/test', show(resp));

  resp = await get(`/${db}/_design%2Ftest`, { followRedirects: true });
  assert.equal(resp.body?._id, '_design/test', show(resp));

  resp = await get(`/${db}/_design/test/_view/testing`);
  assert.deepEqual(resp.body?.rows, [], show(resp));

  const designDoc2 = {
    _id: '_design/test2',
    views: { testing: { map: 'function(){emit(1,1)}' } },
  };

  resp = await put(`/${db}/_design/test2`, { body: designDoc2 });
  assert.equal(resp.status, 201, show(resp));

  resp = await get(`/${db}/_design/test2`);
  assert.equal(resp.body?._id, '_design/test2', show(resp));

  resp = await get(`/${db}/_design%2Ftest2`, { followRedirects: true });
  assert.equal(resp.body?._id, '_design/test2', show(resp));

  resp = await get(`/${db}/_design/test2/_view/testing`);
  assert.deepEqual(resp.body?.rows, [], show(resp));
}

test('design_paths: design doc path', async () => {
  const db = await mkdb('dp');
  await ddocPathTest(db);
});

test('design_paths: design doc path with slash in db name', async () => {
  const db = `${dbName('dp-slash')}%2Fwith_slashes`;
  await createDb(db);
  await ddocPathTest(db);
});

// ================================================================================ list_views_test.exs

const LISTS_DDOC = {
  _id: '_design/lists',
  language: 'javascript',
  views: {
    basicView: { map: '  function(doc) {\n  emit(doc.integer, doc.string);\n}\n' },
    withReduce: {
      map: ' function(doc) {\n  emit(doc.integer, doc.string);\n}\n',
      reduce: '  function(keys, values, rereduce) {\n  if (rereduce) {\n    return sum(values);\n  } else {\n    return values.length;\n  }\n}\n',
    },
  },
  lists: {
    basicBasic: String.raw` function(head, req) {
  send("head");
  var row;
  while(row = getRow()) {
    send(row.key);
  };
  return "tail";
}
`,
    basicJSON: String.raw`  function(head, req) {
  start({"headers":{"Content-Type" : "application/json"}});
  send('{"head":'+toJSON(head)+', ');
  send('"req":'+toJSON(req)+', ');
  send('"rows":[');
  var row, sep = '';
  while (row = getRow()) {
    send(sep + toJSON(row));
    sep = ', ';
  }
  return "]}";
}
`,
    simpleForm: String.raw`  function(head, req) {
  send('<ul>');
  var row, row_number = 0, prevKey, firstKey = null;
  while (row = getRow()) {
    row_number += 1;
    if (!firstKey) firstKey = row.key;
    prevKey = row.key;
    send('\n<li>Key: '+row.key
    +' Value: '+row.value
    +' LineNo: '+row_number+'</li>');
  }
  return '</ul><p>FirstKey: '+ firstKey + ' LastKey: '+ prevKey+'</p>';
}
`,
    acceptSwitch: String.raw`  function(head, req) {
  // respondWith takes care of setting the proper headers
  provides("html", function() {
    send("HTML <ul>");

    var row, num = 0;
    while (row = getRow()) {
      num ++;
      send('\n<li>Key: '
        +row.key+' Value: '+row.value
        +' LineNo: '+num+'</li>');
    }

    // tail
    return '</ul>';
  });
}
`,
    qsParams: String.raw`  function(head, req) {
  return toJSON(req.query) + "\n";
}
`,
    stopIter: String.raw`  function(req) {
  send("head");
  var row, row_number = 0;
  while(row = getRow()) {
    if(row_number > 2) break;
    send(" " + row_number);
    row_number += 1;
  };
  return " tail";
}
`,
    stopIter2: String.raw`  function(head, req) {
  provides("html", function() {
    send("head");
    var row, row_number = 0;
    while(row = getRow()) {
      if(row_number > 2) break;
      send(" " + row_number);
      row_number += 1;
    };
    return " tail";
  });
}
`,
    tooManyGetRows: String.raw` function() {
  send("head");
  var row;
  while(row = getRow()) {
    send(row.key);
  };
  getRow();
  getRow();
  getRow();
  row = getRow();
  return "after row: "+toJSON(row);
}
`,
    emptyList: String.raw`  function() {
  return " ";
}
`,
    rowError: String.raw`  function(head, req) {
  send("head");
  var row = getRow();
  send(fooBarBam); // intentional error
  return "tail";
}
`,
    docReference: String.raw`  function(head, req) {
  send("head");
  var row = getRow();
  send(row.doc.integer);
  return "tail";
}
`,
    secObj: String.raw`  function(head, req) {
  return toJSON(req.secObj);
}
`,
    setHeaderAfterGotRow: String.raw`  function(head, req) {
  getRow();
  start({
    code: 400,
    headers: {
      "X-My-Header": "MyHeader"
    }
  });
  send("bad request");
}
`,
    allDocs: String.raw`  function(head, req){
  start({'headers': {'Content-Type': 'application/json'}});
  var resp = head;
  var rows = [];
  while(row=getRow()){
    rows.push(row);
  }
  resp.rows = rows;
  return toJSON(resp);
}
`,
  },
};

const VIEW_ONLY_DESIGN_DOC = {
  _id: '_design/views',
  language: 'javascript',
  views: { basicView: { map: ' function(doc) {\n  emit(-doc.integer, doc.string);\n}\n' } },
};

const ERL_LIST_DOC = {
  _id: '_design/erlang',
  language: 'erlang',
  lists: {
    simple: `fun(Head, {Req}) ->
  Send(<<"[">>),
  Fun = fun({Row}, Sep) ->
    Val = couch_util:get_value(<<"key">>, Row, 23),
    Send(list_to_binary(Sep ++ integer_to_list(Val))),
    {ok, ","}
  end,
  {ok, _} = FoldRows(Fun, ""),
  Send(<<"]">>)
end.
`,
  },
};

/** The module's setup_all, main database: the lists design document and docs 0..9. */
async function listsSetup(label: string): Promise<string> {
  const db = await mkdb(`lv-${label}`);
  await createDoc(db, LISTS_DDOC);
  await bulkSave(db, makeDocs(0, 9));
  // Check setup
  const resp = await get(`/${db}/_design/lists/_view/basicView`);
  assert.equal(resp.body.total_rows, 10, show(resp));
  return db;
}

/** The module's setup_all, `_cross` database: lists and views in separate design documents. */
async function listsCrossSetup(label: string): Promise<string> {
  const db = `${dbName(`lv-${label}`)}_cross`;
  await createDb(db);
  await createDoc(db, LISTS_DDOC);
  await createDoc(db, VIEW_ONLY_DESIGN_DOC);
  await bulkSave(db, makeDocs(0, 9));
  return db;
}

/** The module's setup_all, `_erlang` database: an Erlang list beside a JavaScript view. */
async function listsErlangSetup(label: string): Promise<string> {
  const db = `${dbName(`lv-${label}`)}_erlang`;
  await createDb(db);
  await createDoc(db, ERL_LIST_DOC);
  await createDoc(db, VIEW_ONLY_DESIGN_DOC);
  await bulkSave(db, makeDocs(0, 9));
  return db;
}

test('list_views: standard GET', async () => {
  const db = await listsSetup('get');
  const resp = await get(`/${db}/_design/lists/_list/basicBasic/basicView`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /head0123456789tail/);
});

test('list_views: standard OPTIONS', async () => {
  const db = await listsSetup('options');
  const resp = await options(`/${db}/_design/lists/_list/basicBasic/basicView`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /head0123456789tail/);
});

test('list_views: the richness of the arguments', async () => {
  const db = await listsSetup('richness');
  const resp = await get(`/${db}/_design/lists/_list/basicJSON/basicView?update_seq=true`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.head.total_rows, 10);
  assert.equal(resp.body.head.offset, 0);
  assert.equal(resp.body.rows.length, 10);
  assert.deepEqual(resp.body.rows[0], { id: '0', key: 0, value: '0' });
  assert.equal(resp.body.req.info.db_name, db);
  assert.equal(resp.body.req.method, 'GET');
  assert.deepEqual(resp.body.req.path, [db, '_design', 'lists', '_list', 'basicJSON', 'basicView']);
  assert.equal(Object.hasOwn(resp.body.req.headers, 'Host'), true, JSON.stringify(resp.body.req.headers));
  assert.equal(Object.hasOwn(resp.body.req.headers, 'User-Agent'), true, JSON.stringify(resp.body.req.headers));
  assert.ok(Object.hasOwn(resp.body.req, 'cookie'), `req.cookie: ${Object.keys(resp.body.req).join(',')}`);
  assert.equal(resp.body.req.raw_path, `/${db}/_design/lists/_list/basicJSON/basicView?update_seq=true`);
});

test('list_views: get with query params', async () => {
  const db = await listsSetup('query-params');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/basicView?startkey=3&endkey=8`);
  assert.equal(resp.status, 200, show(resp));
  assert.doesNotMatch(resp.text, /Key: 1/);
  assert.match(resp.text, /FirstKey: 3/);
  assert.match(resp.text, /LastKey: 8/);
});

test('list_views: with 0 rows', async () => {
  const db = await listsSetup('zero-rows');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/basicView?startkey=30`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /<\/ul>/);
});

test('list_views: too many Get Rows', async () => {
  const db = await listsSetup('too-many-getrows');
  const resp = await get(`/${db}/_design/lists/_list/tooManyGetRows/basicView`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /9after row: null/);
});

test('list_views: reduce with 0 rows', async () => {
  const db = await listsSetup('reduce-zero');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/withReduce?startkey=30`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /LastKey: undefined/);
});

test('list_views: when there is a reduce present, but not used', async () => {
  const db = await listsSetup('reduce-unused');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/withReduce?reduce=false`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /Key: 1/);
});

test('list_views: when there is a reduce present, and used', async () => {
  const db = await listsSetup('reduce-used');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/withReduce?group=true`);
  assert.equal(resp.status, 200, show(resp));
  assert.match(resp.text, /Key: 1/);
});

test('list_views: empty list', async () => {
  const db = await listsSetup('empty');
  let resp = await get(`/${db}/_design/lists/_list/emptyList/basicView`);
  assert.match(resp.text, /^ $/);

  resp = await get(`/${db}/_design/lists/_list/emptyList/withReduce?group=true`);
  assert.match(resp.text, /^ $/);
});

test('list_views: multi-key fetch with POST', async () => {
  const db = await listsSetup('multikey-post');
  const resp = await post(`/${db}/_design/lists/_list/simpleForm/basicView`, { body: { keys: [2, 4, 5, 7] } });
  assert.equal(resp.status, 200, show(resp));
  assert.doesNotMatch(resp.text, /Key: 1/);
  assert.match(resp.text, /Key: 2/);
  assert.match(resp.text, /FirstKey: 2/);
  assert.match(resp.text, /LastKey: 7/);
});

test('list_views: multi-key fetch with GET', async () => {
  const db = await listsSetup('multikey-get');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/basicView?keys=[2,4,5,7]`);
  assert.equal(resp.status, 200, show(resp));
  assert.doesNotMatch(resp.text, /Key: 1/);
  assert.match(resp.text, /Key: 2/);
  assert.match(resp.text, /FirstKey: 2/);
  assert.match(resp.text, /LastKey: 7/);
});

test('list_views: no multi-key fetch allowed when group=false', async () => {
  const db = await listsSetup('multikey-group-false');
  let resp = await post(`/${db}/_design/lists/_list/simpleForm/withReduce?group=false`, { body: { keys: [2, 4, 5, 7] } });
  assert.equal(resp.status, 400, show(resp));
  assert.match(resp.text, /query_parse_error/);

  resp = await get(`/${db}/_design/lists/_list/rowError/basicView`);
  assert.match(resp.text, /ReferenceError/);
});

test('list_views: with include_docs and a reference to the doc', async () => {
  const db = await listsSetup('include-docs');
  const resp = await get(`/${db}/_design/lists/_list/docReference/basicView?include_docs=true`);
  assert.match(resp.text, /head0tail/);
});

test('list_views: extra qs params', async () => {
  const db = await listsSetup('extra-qs');
  const resp = await get(`/${db}/_design/lists/_list/qsParams/basicView?foo=blam`);
  assert.match(resp.text, /blam/);
});

test('list_views: stop iteration', async () => {
  const db = await listsSetup('stop-iter');
  let resp = await get(`/${db}/_design/lists/_list/stopIter/basicView`);
  assert.match(resp.text, /^head 0 1 2 tail$/);

  resp = await get(`/${db}/_design/lists/_list/stopIter2/basicView`, { headers: { Accept: 'text/html' } });
  assert.match(resp.text, /^head 0 1 2 tail$/);
});

test('list_views: abort iteration with reduce', async () => {
  const db = await listsSetup('abort-reduce');
  let resp = await get(`/${db}/_design/lists/_list/stopIter/withReduce?group=true`);
  assert.match(resp.text, /^head 0 1 2 tail$/);

  resp = await get(`/${db}/_design/lists/_list/stopIter2/withReduce?group=true`, { headers: { Accept: 'text/html' } });
  assert.match(resp.text, /^head 0 1 2 tail$/);
});

test('list_views: with accept headers for HTML', async () => {
  const db = await listsSetup('accept-html');
  const resp = await get(`/${db}/_design/lists/_list/acceptSwitch/basicView`, { headers: { Accept: 'text/html' } });
  assert.equal(hdr(resp, 'Content-Type'), 'text/html; charset=utf-8');
  assert.match(resp.text, /HTML/);
  assert.match(resp.text, /Value/);
});

test('list_views: we can run lists and views from separate docs', async () => {
  const db = await listsCrossSetup('cross');
  const resp = await get(`/${db}/_design/lists/_list/simpleForm/views/basicView?startkey=-3`);
  assert.equal(resp.status, 200, show(resp));
  assert.doesNotMatch(resp.text, /Key: -4/);
  assert.match(resp.text, /FirstKey: -3/);
  assert.match(resp.text, /LastKey: 0/);
});

test('list_views: we do multi-key requests on lists and views in separate docs', async () => {
  const db = await listsCrossSetup('cross-multikey');
  const resp = await post(`/${db}/_design/lists/_list/simpleForm/views/basicView`, { body: { keys: [-2, -4, -5, -7] } });
  assert.equal(resp.status, 200, show(resp));
  assert.doesNotMatch(resp.text, /Key: -3/);
  assert.match(resp.text, /Key: -7/);
  assert.match(resp.text, /FirstKey: -2/);
  assert.match(resp.text, /LastKey: -7/);
});

test('list_views: secObj is available', async () => {
  const db = await listsSetup('secobj');
  const resp = await get(`/${db}/_design/lists/_list/secObj/basicView`);
  assert.equal(resp.status, 200, show(resp));
  assert.ok(resp.body !== null && typeof resp.body === 'object' && !Array.isArray(resp.body), show(resp));
});

test('list_views: multiple languages in design docs', async () => {
  // CouchDB's suite turns on its native (Erlang) query server; Settee has none: 500 EXIT, as
  // CouchDB answers for a language it lacks.
  const db = await listsErlangSetup('erlang');
  const resp = await get(`/${db}/_design/erlang/_list/simple/views/basicView?startkey=-3`);
  assert.equal(resp.status, 500, show(resp));
  assert.equal(resp.body.error, 'EXIT');
});

test('list_views: COUCHDB-1113', async () => {
  const db = await mkdb('lv-couchdb-1113');
  const ddoc = {
    _id: '_design/test',
    views: { me: { map: 'function(doc) { emit(null,null)}' } },
    lists: { you: ' function(head, req) {\n  var row;\n  while(row = getRow()) {\n    send(row);\n  }\n}\n' },
  };
  await createDoc(db, ddoc);

  const resp = await get(`/${db}/_design/test/_list/you/me`, { headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(resp.status, 200, show(resp));
});

test('list_views: HTTP header response set after getRow() called in _list function', {
  skip: 'Settee sends a list\'s head at its first getRow(), so a start() after it is ignored; CouchDB 3 applies it',
}, async () => {
  const db = await listsSetup('header-after-getrow');
  const resp = await get(`/${db}/_design/lists/_list/setHeaderAfterGotRow/basicView`);
  assert.equal(resp.status, 400, show(resp));
  assert.equal(hdr(resp, 'X-My-Header'), 'MyHeader');
  assert.match(resp.text, /^bad request$/);
});

test('list_views: handling _all_docs by _list functions. the result should be equal', async () => {
  const db = await listsSetup('all-docs');
  const respList = await get(`/${db}/_design/lists/_list/allDocs/_all_docs`);
  assert.equal(respList.status, 200, show(respList));

  const respAlldocs = await get(`/${db}/_all_docs`);

  assert.equal(respList.body.total_rows, respAlldocs.body.total_rows);
  assert.equal(respList.body.offset, respAlldocs.body.offset);
  assert.equal(respList.body.rows.length, respAlldocs.body.rows.length);
  assert.deepEqual(respList.body.rows, respAlldocs.body.rows);
});

// ============================================================================ show_documents_test.exs

const SHOW_DDOC = {
  _id: '_design/template',
  language: 'javascript',
  shows: {
    hello: ` function(doc, req) {
  if (doc) {
    return "Hello World";
  } else {
    if(req.id) {
      return "New World";
    } else {
      return "Empty World";
    }
  }
}
`,
    'just-name': `  function(doc, req) {
  if (doc) {
    return {
      body : "Just " + doc.name
    };
  } else {
    return {
      body : "No such doc",
      code : 404
    };
  }
}
`,
    json: ` function(doc, req) {
  return {
    json : doc
  }
}
`,
    'req-info': `  function(doc, req) {
  return {
    json : req
  }
}
`,
    'show-deleted': ` function(doc, req) {
  if(doc) {
    return doc._id;
  } else {
    return "No doc " + req.id;
  }
}
`,
    'render-error': `  function(doc, req) {
  return noSuchVariable;
}
`,
    empty: `function(doc, req) {
  return "";
}
`,
    fail: ` function(doc, req) {
  return doc._id;
}
`,
    'no-set-etag': ` function(doc, req) {
  return {
    headers : {
      "Etag" : "skipped"
    },
    "body" : "something"
  }
}
`,
    'list-api': ` function(doc, req) {
  start({"X-Couch-Test-Header": "Yeah"});
  send("Hey");
}
`,
    'list-api-provides': ` function(doc, req) {
  provides("text", function(){
      send("foo, ");
      send("bar, ");
      send("baz!");
  })
}
`,
    'list-api-provides-and-return': ` function(doc, req) {
  provides("text", function(){
      send("4, ");
      send("5, ");
      send("6, ");
      return "7!";
  })
  send("1, ");
  send("2, ");
  return "3, ";
}
`,
    'list-api-mix': ` function(doc, req) {
  start({"X-Couch-Test-Header": "Yeah"});
  send("Hey ");
  return "Dude";
}
`,
    'list-api-mix-with-header': ` function(doc, req) {
  start({"X-Couch-Test-Header": "Yeah"});
  send("Hey ");
  return {
    headers: {
      "X-Couch-Test-Header-Awesome": "Oh Yeah!"
    },
    body: "Dude"
  };
}
`,
    'accept-switch': ` function(doc, req) {
  if (req.headers["Accept"].match(/image/)) {
    return {
      // a 16x16 px version of the CouchDB logo
      "base64" :
["iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAAsV",
"BMVEUAAAD////////////////////////5ur3rEBn////////////////wDBL/",
"AADuBAe9EB3IEBz/7+//X1/qBQn2AgP/f3/ilpzsDxfpChDtDhXeCA76AQH/v7",
"/84eLyWV/uc3bJPEf/Dw/uw8bRWmP1h4zxSlD6YGHuQ0f6g4XyQkXvCA36MDH6",
"wMH/z8/yAwX64ODeh47BHiv/Ly/20dLQLTj98PDXWmP/Pz//39/wGyJ7Iy9JAA",
"AADHRSTlMAbw8vf08/bz+Pv19jK/W3AAAAg0lEQVR4Xp3LRQ4DQRBD0QqTm4Y5",
"zMxw/4OleiJlHeUtv2X6RbNO1Uqj9g0RMCuQO0vBIg4vMFeOpCWIWmDOw82fZx",
"vaND1c8OG4vrdOqD8YwgpDYDxRgkSm5rwu0nQVBJuMg++pLXZyr5jnc1BaH4GT",
"LvEliY253nA3pVhQqdPt0f/erJkMGMB8xucAAAAASUVORK5CYII="].join(''),
      headers : {
        "Content-Type" : "image/png",
        "Vary" : "Accept" // we set this for proxy caches
      }
    };
  } else {
    return {
      "body" : "accepting text requests",
      headers : {
        "Content-Type" : "text/html",
        "Vary" : "Accept"
      }
    };
  }
}
`,
    provides: String.raw` function(doc, req) {
  registerType("foo", "application/foo","application/x-foo");

  provides("html", function() {
    return "Ha ha, you said \"" + doc.word + "\".";
  });

  provides("foo", function() {
    return "foofoo";
  });
}
`,
    withSlash: ` function(doc, req) {
  return { json: doc }
}
`,
    secObj: `  function(doc, req) {
  return { json: req.secObj };
}
`,
  },
};

/** The module's setup_all: the template design document and one document. */
async function showSetup(label: string): Promise<string> {
  const db = await mkdb(`sd-${label}`);
  await createDoc(db, SHOW_DDOC);
  await createDoc(db, { _id: 'test-doc-id', word: 'plankton', name: 'Rusty' });
  return db;
}

test('show_documents: show error', async () => {
  const db = await showSetup('error');
  const resp = await get(`/${db}/_design/template/_show/`);
  assert.equal(resp.status, 404, show(resp));
  assert.equal(resp.body?.reason, 'Invalid path.');
});

test('show_documents: show with existing doc', async () => {
  const db = await showSetup('existing');
  const resp = await get(`/${db}/_design/template/_show/hello/test-doc-id`);
  assert.equal(resp.text, 'Hello World');
  assert.match(String(hdr(resp, 'Content-Type')), /charset=utf-8/);

  // Fix for COUCHDB-379
  assert.match(String(hdr(resp, 'Server')), /^CouchDB/);
});

test('show_documents: show without docid', async () => {
  const db = await showSetup('no-docid');
  let resp = await get(`/${db}/_design/template/_show/hello`);
  assert.equal(resp.text, 'Empty World');

  resp = await get(`/${db}/_design/template/_show/empty`);
  assert.equal(resp.text, '');
});

test('show_documents: show fail with non-existing docid', async () => {
  const db = await showSetup('fail-missing');
  const resp = await get(`/${db}/_design/template/_show/fail/nonExistingDoc`);
  assert.equal(resp.status, 404, show(resp));
  assert.equal(resp.body?.error, 'not_found');
});

test('show_documents: show with doc', async () => {
  const db = await showSetup('with-doc');
  const resp = await get(`/${db}/_design/template/_show/just-name/test-doc-id`);
  assert.equal(resp.text, 'Just Rusty');
});

test('show_documents: show with missing doc', async () => {
  const db = await showSetup('missing-doc');
  const resp = await get(`/${db}/_design/template/_show/just-name/missingdoc`);
  assert.equal(resp.status, 404, show(resp));
  assert.equal(resp.text, 'No such doc');
});

test('show_documents: missing design doc', async () => {
  const db = await showSetup('missing-ddoc');
  const resp = await get(`/${db}/_design/missingddoc/_show/just-name/test-doc-id`);
  assert.equal(resp.status, 404, show(resp));
  assert.equal(resp.body?.error, 'not_found');
});

test('show_documents: show query parameters', async () => {
  const db = await showSetup('query');
  const resp = await get(`/${db}/_design/template/_show/req-info/test-doc-id?foo=bar`, {
    headers: { Accept: 'text/html;text/plain;*/*', 'X-Foo': 'bar' },
  });
  assert.equal(resp.body?.headers?.['X-Foo'], 'bar', show(resp));
  assert.deepEqual(resp.body.query, { foo: 'bar' });
  assert.equal(resp.body.method, 'GET');
  assert.equal(resp.body.path[5], 'test-doc-id');
  assert.equal(resp.body.info.db_name, db);
});

test('show_documents: accept header switching - different mime has different etag', async () => {
  const db = await showSetup('accept-switch');
  let resp = await get(`/${db}/_design/template/_show/accept-switch/test-doc-id`, { headers: { Accept: 'text/html;text/plain;*/*' } });
  assert.match(String(hdr(resp, 'Content-Type')), /text\/html/);
  assert.equal(hdr(resp, 'Vary'), 'Accept');

  const etag = hdr(resp, 'etag');

  resp = await get(`/${db}/_design/template/_show/accept-switch/test-doc-id`, { headers: { Accept: 'image/png;*/*' } });
  assert.match(resp.text, /PNG/);
  assert.equal(hdr(resp, 'Content-Type'), 'image/png');

  const etag2 = hdr(resp, 'etag');

  assert.notEqual(etag, etag2);
});

test('show_documents: show with doc - etags', async () => {
  const db = await showSetup('etags');
  let doc = await save(db, { _id: 'test-doc-id2', word: 'plankton', name: 'Rusty' });

  let resp = await get(`/${db}/_design/template/_show/just-name/test-doc-id2`);
  const etag = hdr(resp, 'etag');
  assert.ok(etag, `an ETag: ${JSON.stringify(resp.headers)}`);

  resp = await get(`/${db}/_design/template/_show/just-name/test-doc-id2`, { headers: { 'if-none-match': etag! } });
  assert.equal(resp.status, 304, show(resp));

  doc = { ...doc, name: 'Crusty' };
  await save(db, doc);

  resp = await get(`/${db}/_design/template/_show/just-name/test-doc-id2`, { headers: { 'if-none-match': etag! } });
  assert.equal(resp.status, 200, show(resp));
});

test("show_documents: JS can't set etag", async () => {
  const db = await showSetup('no-set-etag');
  const resp = await get(`/${db}/_design/template/_show/no-set-etag/test-doc-id`);
  assert.notEqual(hdr(resp, 'etag'), 'skipped');
});

test('show_documents: the provides mime matcher', async () => {
  const db = await showSetup('provides');
  const resp = await get(`/${db}/_design/template/_show/provides/test-doc-id`, { headers: { Accept: 'text/html,application/atom+xml; q=0.9' } });
  assert.match(String(hdr(resp, 'Content-Type')), /text\/html/);
  assert.match(String(hdr(resp, 'Content-Type')), /charset=utf-8/);
  assert.equal(resp.text, 'Ha ha, you said "plankton".');
});

test('show_documents: registering types works', async () => {
  const db = await showSetup('register-type');
  const resp = await get(`/${db}/_design/template/_show/provides/test-doc-id`, { headers: { Accept: 'application/x-foo' } });
  assert.equal(hdr(resp, 'Content-Type'), 'application/x-foo');
  assert.match(resp.text, /foofoo/);
});

test('show_documents: the provides mime matcher without a match', async () => {
  const db = await showSetup('provides-no-match');
  const resp = await get(`/${db}/_design/template/_show/provides/test-doc-id`, { headers: { Accept: 'text/monkeys' } });
  assert.equal(resp.body?.error, 'not_acceptable', show(resp));
});

test('show_documents: id with slash', async () => {
  const db = await showSetup('slash');
  const doc3 = { _id: 'a/b/c', a: 1 };
  await save(db, doc3);
  const resp = await get(`/${db}/_design/template/_show/withSlash/a/b/c`);
  assert.equal(resp.status, 200, show(resp));
});

test('show_documents: show with non-existing docid', async () => {
  const db = await showSetup('non-existing');
  const resp = await get(`/${db}/_design/template/_show/hello/nonExistingDoc`);
  assert.equal(resp.text, 'New World');
});

test('show_documents: list() compatible API', async () => {
  const db = await showSetup('list-api');
  const resp = await get(`/${db}/_design/template/_show/list-api/foo`);
  assert.equal(resp.text, 'Hey');
  assert.equal(hdr(resp, 'X-Couch-Test-Header'), 'Yeah');
});

test('show_documents: list() compatible API with provides function', async () => {
  const db = await showSetup('list-api-provides');
  const resp = await get(`/${db}/_design/template/_show/list-api-provides/foo?format=text`);
  assert.equal(resp.text, 'foo, bar, baz!');
});

test('show_documents: should keep next result order: chunks + return value + provided chunks + provided return value', async () => {
  const db = await showSetup('order');
  let resp = await get(`/${db}/_design/template/_show/list-api-provides-and-return/foo?format=text`);
  assert.equal(resp.text, '1, 2, 3, 4, 5, 6, 7!');

  resp = await get(`/${db}/_design/template/_show/list-api-mix/foo`);
  assert.equal(resp.text, 'Hey Dude');
  assert.equal(hdr(resp, 'X-Couch-Test-Header'), 'Yeah');

  resp = await get(`/${db}/_design/template/_show/list-api-mix-with-header/foo`);
  assert.equal(resp.text, 'Hey Dude');
  assert.equal(hdr(resp, 'X-Couch-Test-Header'), 'Yeah');
  assert.equal(hdr(resp, 'X-Couch-Test-Header-Awesome'), 'Oh Yeah!');
});

test('show_documents: deleted docs', async () => {
  const db = await showSetup('deleted');
  const doc = await save(db, { _id: 'testdoc', foo: 1 });

  let resp = await get(`/${db}/_design/template/_show/show-deleted/testdoc`);
  assert.equal(resp.text, 'testdoc');

  await del(`/${db}/testdoc?rev=${doc._rev}`);
  resp = await get(`/${db}/_design/template/_show/show-deleted/testdoc`);
  assert.equal(resp.text, 'No doc testdoc');
});

test('show_documents: security object', async () => {
  const db = await mkdb('sd-secobj');
  await createDoc(db, SHOW_DDOC);
  await createDoc(db, { _id: 'testdoc', foo: 1 });

  await put(`/${db}/_security`, { body: { foo: true } });

  await retryUntil(async () => {
    const resp = await get(`/${db}/_design/template/_show/secObj`);
    assert.ok(resp.body?.foo, show(resp));
  });
});

// ========================================================================== update_documents_test.exs

const UPDATE_DDOC = {
  _id: '_design/update',
  language: 'javascript',
  updates: {
    hello: `  function(doc, req) {
  if (!doc) {
    if (req.id) {
      return [
      // Creates a new document with the PUT docid,
      { _id : req.id,
        reqs : [req] },
      // and returns an HTML response to the client.
      "<p>New World</p>"];
    };
    //
    return [null, "<p>Empty World</p>"];
  };
  // we can update the document inline
  doc.world = "hello";
  // we can record aspects of the request or use them in application logic.
  doc.reqs && doc.reqs.push(req);
  doc.edited_by = req.userCtx;
  return [doc, "<p>hello doc</p>"];
}
`,
    'in-place': `function(doc, req) {
  var field = req.query.field;
  var value = req.query.value;
  var message = "set "+field+" to "+value;
  doc[field] = value;
  return [doc, message];
}
`,
    'form-update': ` function(doc, req) {
  for (var field in req.form) {
    doc[field] = req.form[field];
  }
  var message = "updated doc from form";
  return [doc, message];
}
`,
    'bump-counter': ` function(doc, req) {
  if (!doc.counter) doc.counter = 0;
  doc.counter += 1;
  var message = "<h1>bumped it!</h1>";
  return [doc, message];
}
`,
    error: `function(doc, req) {
 superFail.badCrash;
}
`,
    'get-uuid': ` function(doc, req) {
  return [null, req.uuid];
}
`,
    'code-n-bump': ` function(doc,req) {
  if (!doc.counter) doc.counter = 0;
  doc.counter += 1;
  var message = "<h1>bumped it!</h1>";
  resp = {"code": 302, "body": message}
  return [doc, resp];
}
`,
    'resp-code': ` function(doc,req) {
  resp = {"code": 302}
  return [null, resp];
}
`,
    'resp-code-and-json': ` function(doc,req) {
  resp = {"code": 302, "json": {"ok": true}}
  return [{"_id": req["uuid"]}, resp];
}
`,
    binary: ` function(doc, req) {
  var resp = {
    "headers" : {
      "Content-Type" : "application/octet-stream"
    },
    "base64" : "aGVsbG8gd29ybGQh" // "hello world!" encoded
  };
  return [doc, resp];
}
`,
    empty: ` function(doc, req) {
  return [{}, 'oops'];
}
`,
  },
};

const UPDATE_DOCUMENT = { word: 'plankton', name: 'Rusty' };

test('update_documents: update error invalid path', async () => {
  const db = await mkdb('ud-invalid-path');
  await createDoc(db, UPDATE_DDOC);

  const resp = await post(`/${db}/_design/update/_update/`);
  assert.equal(resp.status, 404, show(resp));
  assert.equal(resp.body?.reason, 'Invalid path.');
});

test('update_documents: update document', async () => {
  const db = await mkdb('ud-update');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  let resp = await put(`/${db}/_design/update/_update/hello/${docid}`);
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, '<p>hello doc</p>');
  assert.ok(String(hdr(resp, 'Content-Type')).includes('charset=utf-8'), String(hdr(resp, 'Content-Type')));
  assert.equal(hdr(resp, 'X-Couch-Id'), docid);

  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.world, 'hello');

  // Fix for COUCHDB-379
  assert.ok(String(hdr(resp, 'Server')).startsWith('CouchDB'), String(hdr(resp, 'Server')));

  resp = await put(`/${db}/_design/update/_update/hello`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.text, '<p>Empty World</p>');
});

test('update_documents: GET is not allowed', async () => {
  const db = await mkdb('ud-get');
  await createDoc(db, UPDATE_DDOC);

  const resp = await get(`/${db}/_design/update/_update/hello`);
  assert.equal(resp.body?.error, 'method_not_allowed', show(resp));
});

test('update_documents: doc can be created', async () => {
  const db = await mkdb('ud-create');
  await createDoc(db, UPDATE_DDOC);

  let resp = await get(`/${db}/nonExistingDoc`);
  assert.equal(resp.status, 404, show(resp));

  resp = await put(`/${db}/_design/update/_update/hello/nonExistingDoc`);
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, '<p>New World</p>');

  resp = await get(`/${db}/nonExistingDoc`);
  assert.equal(resp.status, 200, show(resp));
});

test('update_documents: in place update', async () => {
  const db = await mkdb('ud-in-place');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  let resp = await put(`/${db}/_design/update/_update/in-place/${docid}?field=title&value=test`);
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, 'set title to test');
  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.title, 'test');
});

test('update_documents: form update via application/x-www-form-urlencoded', async () => {
  const db = await mkdb('ud-form');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  let resp = await put(`/${db}/_design/update/_update/form-update/${docid}`, {
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'formfoo=bar&formbar=foo',
  });
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, 'updated doc from form');

  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.formfoo, 'bar');
  assert.equal(resp.body.formbar, 'foo');
});

test('update_documents: bump counter', async () => {
  const db = await mkdb('ud-bump');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  let resp = await put(`/${db}/_design/update/_update/bump-counter/${docid}`, { headers: { 'X-Couch-Full-Commit': 'true' } });
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, '<h1>bumped it!</h1>');

  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.counter, 1);

  resp = await put(`/${db}/_design/update/_update/bump-counter/${docid}`, { headers: { 'X-Couch-Full-Commit': 'true' } });

  const newrev = hdr(resp, 'X-Couch-Update-NewRev');

  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.counter, 2);
  assert.equal(resp.body._rev, newrev);
});

test('update_documents: Server provides UUID when POSTing without an ID in the URL', async () => {
  const db = await mkdb('ud-uuid');
  await createDoc(db, UPDATE_DDOC);
  const resp = await put(`/${db}/_design/update/_update/get-uuid/`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.text.length, 32, show(resp));
});

test('update_documents: COUCHDB-1229 - allow slashes in doc ids for update handlers', async () => {
  const db = await mkdb('ud-slash');
  await createDoc(db, UPDATE_DDOC);

  await createDoc(db, { _id: 'with/slash', counter: 1 });

  let resp = await put(`/${db}/_design/update/_update/bump-counter/with/slash`);
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, '<h1>bumped it!</h1>');

  resp = await get(`/${db}/with%2Fslash`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.counter, 2);
});

test('update_documents: COUCHDB-648 - the code in the JSON response should be honored', async () => {
  const db = await mkdb('ud-code');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  await put(`/${db}/_design/update/_update/bump-counter/${docid}`);
  await put(`/${db}/_design/update/_update/bump-counter/${docid}`);

  let resp = await put(`/${db}/_design/update/_update/code-n-bump/${docid}`);
  assert.equal(resp.status, 302, show(resp));
  assert.equal(resp.text, '<h1>bumped it!</h1>');

  resp = await get(`/${db}/${docid}`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(resp.body.counter, 3);

  resp = await put(`/${db}/_design/update/_update/resp-code/`);
  assert.equal(resp.status, 302, show(resp));

  resp = await put(`/${db}/_design/update/_update/resp-code-and-json/`);
  assert.equal(resp.status, 302, show(resp));
  assert.equal(resp.body?.ok, true, show(resp));
});

test('update_documents: base64 response', async () => {
  const db = await mkdb('ud-base64');
  await createDoc(db, UPDATE_DDOC);
  const created = await createDoc(db, UPDATE_DOCUMENT);
  const docid = created.body.id;

  const resp = await put(`/${db}/_design/update/_update/binary/${docid}`, { body: 'rubbish' });
  assert.equal(resp.status, 201, show(resp));
  assert.equal(resp.text, 'hello world!');
  assert.ok(String(hdr(resp, 'Content-Type')).includes('application/octet-stream'), String(hdr(resp, 'Content-Type')));
});

test('update_documents: Insert doc with empty id', async () => {
  const db = await mkdb('ud-empty-id');
  await createDoc(db, UPDATE_DDOC);

  const resp = await put(`/${db}/_design/update/_update/empty/foo`);
  assert.equal(resp.status, 400, show(resp));
  assert.equal(resp.body?.reason, 'Document id must not be empty');
});

// ================================================================================== rewrite_test.exs

/** The rewrite suite's design document, as the original's JSON text with its line breaks removed. */
const REWRITE_DDOC_JSON = String.raw`
        {
          "_id": "_design/test",
          "language": "javascript",
          "_attachments": {
            "foo.txt": {
              "content_type":"text/plain",
              "data": "VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ="
            }
          },
          "rewrites": [
            {
              "from": "foo",
              "to": "foo.txt"
            },
            {
              "from": "foo2",
              "to": "foo.txt",
              "method": "GET"
            },
            {
              "from": "hello/:id",
              "to": "_update/hello/:id",
              "method": "PUT"
            },
            {
              "from": "/welcome",
              "to": "_show/welcome"
            },
            {
              "from": "/welcome/:name",
              "to": "_show/welcome",
              "query": {
                "name": ":name"
              }
            },
            {
              "from": "/welcome2",
              "to": "_show/welcome",
              "query": {
                "name": "user"
              }
            },
            {
              "from": "/welcome3/:name",
              "to": "_update/welcome2/:name",
              "method": "PUT"
            },
            {
              "from": "/welcome3/:name",
              "to": "_show/welcome2/:name",
              "method": "GET"
            },
            {
              "from": "/welcome4/*",
              "to" : "_show/welcome3",
              "query": {
                "name": "*"
              }
            },
            {
              "from": "/welcome5/*",
              "to" : "_show/*",
              "query": {
                "name": "*"
              }
            },
            {
              "from": "basicView",
              "to": "_view/basicView"
            },
            {
              "from": "simpleForm/basicView",
              "to": "_list/simpleForm/basicView"
            },
            {
              "from": "simpleForm/basicViewFixed",
              "to": "_list/simpleForm/basicView",
              "query": {
                "startkey": 3,
                "endkey": 8
              }
            },
            {
              "from": "simpleForm/basicViewPath/:start/:end",
              "to": "_list/simpleForm/basicView",
              "query": {
                "startkey": ":start",
                "endkey": ":end"
              },
              "formats": {
                "start": "int",
                "end": "int"
              }
            },
            {
              "from": "simpleForm/complexView",
              "to": "_list/simpleForm/complexView",
              "query": {
                "key": [1, 2]
              }
            },
            {
              "from": "simpleForm/complexView2",
              "to": "_list/simpleForm/complexView",
              "query": {
                "key": ["test", {}]
              }
            },
            {
              "from": "simpleForm/complexView3",
              "to": "_list/simpleForm/complexView",
              "query": {
                "key": ["test", ["test", "essai"]]
              }
            },
            {
              "from": "simpleForm/complexView4",
              "to": "_list/simpleForm/complexView2",
              "query": {
                "key": {"c": 1}
              }
            },
            {
              "from": "simpleForm/complexView5/:a/:b",
              "to": "_list/simpleForm/complexView3",
              "query": {
                "key": [":a", ":b"]
              }
            },
            {
              "from": "simpleForm/complexView6",
              "to": "_list/simpleForm/complexView3",
              "query": {
                "key": [":a", ":b"]
              }
            },
            {
              "from": "simpleForm/complexView7/:a/:b",
              "to": "_view/complexView3",
              "query": {
                "key": [":a", ":b"],
                "include_docs": ":doc"
              },
              "format": {
                "doc": "bool"
              }

            },
            {
              "from": "/",
              "to": "_view/basicView"
            },
            {
              "from": "/db/*",
              "to": "../../*"
            }
          ],
          "lists": {
            "simpleForm": "function(head, req) {
              log(\"simpleForm\");
              send(\"<ul>\");
              var row, row_number = 0, prevKey, firstKey = null;
              while (row = getRow()) {
                row_number += 1;
                if (!firstKey) firstKey = row.key;
                prevKey = row.key;
                send(\"\\n<li>Key: \"+row.key
                     +\" Value: \"+row.value
                     +\" LineNo: \"+row_number+\"</li>\");
              }
              return \"</ul><p>FirstKey: \"+ firstKey + \" LastKey: \"+ prevKey+\"</p>\";
            }"
          },
          "shows": {
            "welcome": "(function(doc,req) {
              return \"Welcome \" + req.query[\"name\"];
            })",
            "welcome2": "(function(doc, req) {
              return \"Welcome \" + doc.name;
            })",
            "welcome3": "(function(doc,req) {
              return \"Welcome \" + req.query[\"name\"];
            })"
          },
          "updates": {
            "hello" : "(function(doc, req) {
              if (!doc) {
                if (req.id) {
                  return [{
                    _id : req.id
                  }, \"New World\"]
                }
                return [null, \"Empty World\"];
              }
              doc.world = \"hello\";
              doc.edited_by = req.userCtx;
              return [doc, \"hello doc\"];
            })",
            "welcome2": "(function(doc, req) {
              if (!doc) {
                if (req.id) {
                  return [{
                    _id: req.id,
                    name: req.id
                  }, \"New World\"]
                }
                return [null, \"Empty World\"];
              }
              return [doc, \"hello doc\"];
            })"
          },
          "views" : {
            "basicView" : {
              "map" : "(function(doc) {
                if (doc.integer) {
                  emit(doc.integer, doc.string);
                }

              })"
            },
            "complexView": {
              "map": "(function(doc) {
                if (doc.type == \"complex\") {
                  emit([doc.a, doc.b], doc.string);
                }
              })"
            },
            "complexView2": {
              "map": "(function(doc) {
                if (doc.type == \"complex\") {
                  emit(doc.a, doc.string);
                }
              })"
            },
            "complexView3": {
              "map": "(function(doc) {
                if (doc.type == \"complex\") {
                  emit(doc.b, doc.string);
                }
              })"
            }
          }
        }
`.replace(/[\r\n]+/g, '');

const COMPLEX_DOCS = () => [
  { a: 1, b: 1, string: 'doc 1', type: 'complex' },
  { a: 1, b: 2, string: 'doc 2', type: 'complex' },
  { a: 'test', b: {}, string: 'doc 3', type: 'complex' },
  { a: 'test', b: ['test', 'essai'], string: 'doc 4', type: 'complex' },
  { a: { c: 1 }, b: '', string: 'doc 5', type: 'complex' },
];

/** `@tag with_random_db: name`: a fresh database named after the suite's, with or without an encoded slash. */
async function rewriteDb(variant: string): Promise<string> {
  const name = variant === 'test_rewrite_suite_db' ? dbName('rewrite') : `${dbName('rewrite')}%2Fwith_slashes`;
  await createDb(name);
  return name;
}

const REWRITE_DB_VARIANTS = ['test_rewrite_suite_db', 'test_rewrite_suite_db%2Fwith_slashes'];

for (const variant of REWRITE_DB_VARIANTS) {
  test(`rewrite: Test basic rewrites on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    await withConfig([
      ['httpd', 'authentication_handlers', '{couch_httpd_auth, special_test_authentication_handler}'],
      ['chttpd', 'WWW-Authenticate', 'X-Couch-Test-Auth'],
    ], async () => {
      const docs1 = makeDocs(0, 9);
      const docs2 = COMPLEX_DOCS();

      assert.ok((await put(`/${db}/_design/test`, { body: REWRITE_DDOC_JSON })).body?.ok);
      // `w=3` is a cluster write quorum; a single node takes it as given.
      let r = await post(`/${db}/_bulk_docs?w=3`, { body: { docs: docs1 } });
      assert.ok([201, 202].includes(r.status), show(r));
      r = await post(`/${db}/_bulk_docs?w=3`, { body: { docs: docs2 } });
      assert.ok([201, 202].includes(r.status), show(r));

      // Test simple rewriting
      let resp = await get(`/${db}/_design/test/_rewrite/foo`);
      assert.equal(resp.text, 'This is a base64 encoded text', show(resp));
      assert.equal(hdr(resp, 'Content-Type'), 'text/plain');

      resp = await get(`/${db}/_design/test/_rewrite/foo2`);
      assert.equal(resp.text, 'This is a base64 encoded text', show(resp));
      assert.equal(hdr(resp, 'Content-Type'), 'text/plain');

      // Test POST, hello update world
      const created = (await post(`/${db}`, { body: { word: 'plankton', name: 'Rusty' } })).body;
      assert.ok(created.ok);
      const docId = created.id;
      assert.ok(docId);

      resp = await put(`/${db}/_design/test/_rewrite/hello/${docId}`);
      assert.ok([201, 202].includes(resp.status), show(resp));
      assert.equal(resp.text, 'hello doc');
      assert.match(String(hdr(resp, 'Content-Type')), /charset=utf-8/);

      assert.equal((await get(`/${db}/${docId}`)).body.world, 'hello');

      resp = await get(`/${db}/_design/test/_rewrite/welcome?name=user`);
      assert.equal(resp.text, 'Welcome user', show(resp));

      resp = await get(`/${db}/_design/test/_rewrite/welcome/user`);
      assert.equal(resp.text, 'Welcome user', show(resp));

      resp = await get(`/${db}/_design/test/_rewrite/welcome2`);
      assert.equal(resp.text, 'Welcome user', show(resp));

      resp = await put(`/${db}/_design/test/_rewrite/welcome3/test`);
      assert.ok([201, 202].includes(resp.status), show(resp));
      assert.equal(resp.text, 'New World');
      assert.match(String(hdr(resp, 'Content-Type')), /charset=utf-8/);

      resp = await get(`/${db}/_design/test/_rewrite/welcome3/test`);
      assert.equal(resp.text, 'Welcome test', show(resp));

      // TODO: port the two "bugged" tests from rewrite.js (left so in the original)

      resp = await get(`/${db}/_design/test/_rewrite/basicView`);
      assert.equal(resp.status, 200, show(resp));
      assert.equal(resp.body.total_rows, 9);

      resp = await get(`/${db}/_design/test/_rewrite`);
      assert.equal(resp.status, 200, show(resp));
      assert.equal(resp.body.total_rows, 9);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/basicView?startkey=3&endkey=8`);
      assert.equal(resp.status, 200, show(resp));
      assert.doesNotMatch(resp.text, /Key: 1/);
      assert.match(resp.text, /FirstKey: 3/);
      assert.match(resp.text, /LastKey: 8/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/basicViewFixed`);
      assert.equal(resp.status, 200, show(resp));
      assert.doesNotMatch(resp.text, /Key: 1/);
      assert.match(resp.text, /FirstKey: 3/);
      assert.match(resp.text, /LastKey: 8/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/basicViewFixed?startkey=4`);
      assert.equal(resp.status, 200, show(resp));
      assert.doesNotMatch(resp.text, /Key: 1/);
      assert.match(resp.text, /FirstKey: 3/);
      assert.match(resp.text, /LastKey: 8/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/basicViewPath/3/8`);
      assert.equal(resp.status, 200, show(resp));
      assert.doesNotMatch(resp.text, /Key: 1/);
      assert.match(resp.text, /FirstKey: 3/);
      assert.match(resp.text, /LastKey: 8/);

      // The original's ~r/FirstKey: [1, 2]/ is a regex: "[1, 2]" is a character class.
      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /FirstKey: [1, 2]/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView2`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /Value: doc 3/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView3`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /Value: doc 4/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView4`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /Value: doc 5/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView5/test/essai`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /Value: doc 4/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView6?a=test&b=essai`);
      assert.equal(resp.status, 200, show(resp));
      assert.match(resp.text, /Value: doc 4/);

      resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView7/test/essai?doc=true`);
      assert.equal(resp.status, 200, show(resp));
      let result = JSON.parse(resp.text);
      const firstRow = result.rows[0];
      assert.ok(Object.hasOwn(firstRow, 'doc'), show(resp));

      // COUCHDB-2031 - path normalization versus qs params
      resp = await get(`/${db}/_design/test/_rewrite/db/_design/test?meta=true`);
      assert.equal(resp.status, 200, show(resp));
      result = JSON.parse(resp.text);
      assert.equal(result._id, '_design/test');
      assert.ok(Object.hasOwn(result, '_revs_info'), show(resp));

      const ddoc2 = {
        _id: '_design/test2',
        rewrites: [{ from: 'uuids', to: '../../../_uuids' }],
      };

      await createDoc(db, ddoc2);
      resp = await get(`/${db}/_design/test2/_rewrite/uuids`);
      assert.equal(resp.status, 500, show(resp));
      assert.equal(resp.body.error, 'insecure_rewrite_rule');
    });
  });

  test(`rewrite: path relative to server on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    // CouchDB 3.2 reads this from [chttpd]; CouchDB 1.6, which Settee follows, from [httpd].
    await withConfig([['httpd', 'secure_rewrites', 'false']], async () => {
      const ddoc = {
        _id: '_design/test2',
        rewrites: [{ from: 'uuids', to: '../../../_uuids' }],
      };

      await createDoc(db, ddoc);

      const resp = await get(`/${db}/_design/test2/_rewrite/uuids`);
      assert.equal(resp.status, 200, show(resp));
      assert.equal(resp.body.uuids.length, 1);
    });
  });

  test(`rewrite: loop detection on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    // CouchDB 3.2 reads this from [chttpd]; CouchDB 1.6, which Settee follows, from [httpd].
    await withConfig([['httpd', 'rewrite_limit', '2']], async () => {
      const ddocLoop = {
        _id: '_design/loop',
        rewrites: [{ from: 'loop', to: '_rewrite/loop' }],
      };

      await createDoc(db, ddocLoop);

      const resp = await get(`/${db}/_design/loop/_rewrite/loop`);
      assert.equal(resp.status, 400, show(resp));
    });
  });

  test(`rewrite: serial execution is not spuriously counted as loop on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    // CouchDB 3.2 reads these from [chttpd]; CouchDB 1.6, which Settee follows, from [httpd].
    await withConfig([['httpd', 'rewrite_limit', '2'], ['httpd', 'secure_rewrites', 'false']], async () => {
      const ddoc = {
        _id: '_design/test',
        language: 'javascript',
        _attachments: {
          'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' },
        },
        rewrites: [{ from: 'foo', to: 'foo.txt' }],
      };

      await createDoc(db, ddoc);

      for (let i = 0; i <= 4; i++) {
        const resp = await get(`/${db}/_design/test/_rewrite/foo`);
        assert.equal(resp.status, 200, show(resp));
      }
    });
  });
}

// =============================================================================== rewrite_js_test.exs

const REWRITE_JS_DDOC = {
  _id: '_design/test',
  language: 'javascript',
  _attachments: {
    'foo.txt': { content_type: 'text/plain', data: 'VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=' },
  },
  rewrites: `  function(req) {
  prefix = req.path[4];
  if (prefix === 'foo') {
      return 'foo.txt';
  }
  if (prefix === 'foo2') {
      return {path: 'foo.txt', method: 'GET'};
  }
  if (prefix === 'hello') {
      if (req.method != 'PUT') {
          return
      }
      id = req.path[5];
      return {path: '_update/hello/' + id};
  }
  if (prefix === 'welcome') {
      if (req.path.length == 6){
          name = req.path[5];
          return {path: '_show/welcome', query: {'name': name}};
      }
      return '_show/welcome';
  }
  if (prefix === 'welcome2') {
      return {path: '_show/welcome', query: {'name': 'user'}};
  }
  if (prefix === 'welcome3') {
      name = req.path[5];
      if (req.method == 'PUT') {
          path = '_update/welcome2/' + name;
      } else if (req.method == 'GET') {
          path = '_show/welcome2/' + name;
      } else {
          return;
      }
      return path;
  }
  if (prefix === 'welcome4') {
      return {path: '_show/welcome3',  query: {name: req.path[5]}};
  }
  if (prefix === 'welcome5') {
      rest = req.path.slice(5).join('/');
      return {path: '_show/' + rest,  query: {name: rest}};
  }
  if (prefix === 'basicView') {
      rest = req.path.slice(5).join('/');
      return {path: '_view/basicView'};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/basicView') {
      return {path: '_list/simpleForm/basicView'};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/basicViewFixed') {
      return {path: '_list/simpleForm/basicView',
              query: {startkey: '"3"', endkey: '"8"'}};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/complexView') {
      return {path: '_list/simpleForm/complexView',
              query: {key: JSON.stringify([1,2])}};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/complexView2') {
      return {path: '_list/simpleForm/complexView',
              query: {key: JSON.stringify(['test', {}])}};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/complexView3') {
      return {path: '_list/simpleForm/complexView',
              query: {key: JSON.stringify(['test', ['test', 'essai']])}};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/complexView4') {
      return {path: '_list/simpleForm/complexView2',
              query: {key: JSON.stringify({"c": 1})}};
  }
  if (req.path.slice(4).join('/') === 'simpleForm/sendBody1') {
      return {path:   '_list/simpleForm/complexView2',
              method: 'POST',
              query:  {limit: '1'},
              headers:{'Content-type':'application/json'},
              body:  JSON.stringify( {keys: [{"c": 1}]} )};
  }
  if (req.path.slice(4).join('/') === '/') {
      return {path: '_view/basicView'};
  }
  if (prefix === 'db') {
      return {path: '../../' + req.path.slice(5).join('/')};
  }
}
`,
  lists: {
    simpleForm: String.raw`function(head, req) {
  send('<ul>');
  var row, row_number = 0, prevKey, firstKey = null;
  while (row = getRow()) {
    row_number += 1;
    if (!firstKey) firstKey = row.key;
    prevKey = row.key;
    send('\n<li>Key: '+row.key
         +' Value: '+row.value
         +' LineNo: '+row_number+'</li>');
  }
  return '</ul><p>FirstKey: '+ firstKey + ' LastKey: '+ prevKey+'</p>';
}
`,
  },
  shows: {
    welcome: ` function(doc,req) {
  return "Welcome " + req.query["name"];
}
`,
    welcome2: ` function(doc, req) {
  return "Welcome " + doc.name;
}
`,
    welcome3: `  function(doc,req) {
  return "Welcome " + req.query["name"];
}
`,
  },
  updates: {
    hello: ` function(doc, req) {
  if (!doc) {
    if (req.id) {
      return [{
        _id : req.id
      }, "New World"]
    }
    return [null, "Empty World"];
  }
  doc.world = "hello";
  doc.edited_by = req.userCtx;
  return [doc, "hello doc"];
}
`,
    welcome2: ` function(doc, req) {
  if (!doc) {
    if (req.id) {
      return [{
        _id: req.id,
        name: req.id
      }, "New World"]
    }
    return [null, "Empty World"];
  }
  return [doc, "hello doc"];
}
`,
  },
  views: {
    basicView: { map: ' function(doc) {\n  if (doc.integer) {\n    emit(doc.integer, doc.string);\n  }\n}\n' },
    complexView: { map: ' function(doc) {\n  if (doc.type == "complex") {\n    emit([doc.a, doc.b], doc.string);\n  }\n}\n' },
    complexView2: { map: ' function(doc) {\n  if (doc.type == "complex") {\n    emit(doc.a, doc.string);\n  }\n}\n' },
    complexView3: { map: ' function(doc) {\n  if (doc.type == "complex") {\n    emit(doc.b, doc.string);\n  }\n}\n' },
  },
};

for (const variant of REWRITE_DB_VARIANTS) {
  test(`rewrite_js: basic js rewrites on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    await createDoc(db, REWRITE_JS_DDOC);

    await bulkSave(db, makeDocs(0, 9));
    await bulkSave(db, COMPLEX_DOCS());

    // Test simple rewriting
    let resp = await get(`/${db}/_design/test/_rewrite/foo`);
    assert.equal(resp.text, 'This is a base64 encoded text', show(resp));
    assert.equal(hdr(resp, 'content-type'), 'text/plain');

    resp = await get(`/${db}/_design/test/_rewrite/foo2`);
    assert.equal(resp.text, 'This is a base64 encoded text', show(resp));
    assert.equal(hdr(resp, 'content-type'), 'text/plain');

    // Test POST, hello update world
    const created = (await post(`/${db}`, { body: { word: 'plankton', name: 'Rusty' } })).body;
    assert.ok(created.ok);
    const docId = created.id;
    assert.ok(docId);

    resp = await put(`/${db}/_design/test/_rewrite/hello/${docId}`);
    assert.ok([201, 202].includes(resp.status), show(resp));
    assert.equal(resp.text, 'hello doc');
    assert.match(String(hdr(resp, 'content-type')), /charset=utf-8/);

    assert.equal((await get(`/${db}/${docId}`)).body.world, 'hello');

    resp = await get(`/${db}/_design/test/_rewrite/welcome?name=user`);
    assert.equal(resp.text, 'Welcome user', show(resp));

    resp = await get(`/${db}/_design/test/_rewrite/welcome/user`);
    assert.equal(resp.text, 'Welcome user', show(resp));

    resp = await get(`/${db}/_design/test/_rewrite/welcome2`);
    assert.equal(resp.text, 'Welcome user', show(resp));

    resp = await put(`/${db}/_design/test/_rewrite/welcome3/test`);
    assert.ok([201, 202].includes(resp.status), show(resp));
    assert.equal(resp.text, 'New World');
    assert.match(String(hdr(resp, 'content-type')), /charset=utf-8/);

    resp = await get(`/${db}/_design/test/_rewrite/welcome3/test`);
    assert.equal(resp.text, 'Welcome test', show(resp));

    resp = await get(`/${db}/_design/test/_rewrite/welcome4/user`);
    assert.equal(resp.text, 'Welcome user', show(resp));

    resp = await get(`/${db}/_design/test/_rewrite/welcome5/welcome3`);
    assert.equal(resp.text, 'Welcome welcome3', show(resp));

    resp = await get(`/${db}/_design/test/_rewrite/basicView`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(resp.body.total_rows, 9);

    resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView`);
    assert.equal(resp.status, 200, show(resp));
    assert.match(resp.text, /FirstKey: [1, 2]/);

    resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView2`);
    assert.equal(resp.status, 200, show(resp));
    assert.match(resp.text, /Value: doc 3/);

    resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView3`);
    assert.equal(resp.status, 200, show(resp));
    assert.match(resp.text, /Value: doc 4/);

    resp = await get(`/${db}/_design/test/_rewrite/simpleForm/complexView4`);
    assert.equal(resp.status, 200, show(resp));
    assert.match(resp.text, /Value: doc 5/);

    // COUCHDB-1612 - send body rewriting get to post
    resp = await get(`/${db}/_design/test/_rewrite/simpleForm/sendBody1`);
    assert.equal(resp.status, 200, show(resp));
    assert.match(resp.text, /Value: doc 5 LineNo: 1/);

    resp = await get(`/${db}/_design/test/_rewrite/db/_design/test?meta=true`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(resp.body._id, '_design/test');
    assert.ok(Object.hasOwn(resp.body, '_revs_info'), show(resp));
  });

  test(`rewrite_js: early response on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    const ddoc = {
      _id: '_design/response',
      rewrites: ` function(req){
  status = parseInt(req.query.status);
  return {code: status,
          body: JSON.stringify({"status": status}),
          headers: {'x-foo': 'bar', 'Content-Type': 'application/json'}};
}
`,
    };

    await createDoc(db, ddoc);

    let resp = await get(`/${db}/_design/response/_rewrite?status=200`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(hdr(resp, 'x-foo'), 'bar');
    assert.equal(resp.body?.status, 200);

    resp = await get(`/${db}/_design/response/_rewrite?status=451`);
    assert.equal(resp.status, 451, show(resp));
    assert.equal(hdr(resp, 'content-type'), 'application/json');

    resp = await get(`/${db}/_design/response/_rewrite?status=500`);
    assert.equal(resp.status, 500, show(resp));
  });

  test(`rewrite_js: path relative to server on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    const ddoc = {
      _id: '_design/relative',
      rewrites: " function(req){\n  return '../../../_uuids'\n}\n",
    };

    await createDoc(db, ddoc);
    const resp = await get(`/${db}/_design/relative/_rewrite/uuids`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(resp.body.uuids.length, 1);
  });

  test(`rewrite_js: loop on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    const ddocLoop = {
      _id: '_design/loop',
      rewrites: "function(req) {\n  return '_rewrite/loop';\n}\n",
    };

    await createDoc(db, ddocLoop);
    const resp = await get(`/${db}/_design/loop/_rewrite/loop`);
    assert.equal(resp.status, 400, show(resp));
  });

  test(`rewrite_js: requests with body preserve the query string rewrite on ${variant}`, async () => {
    const db = await rewriteDb(variant);
    const ddocQs = {
      _id: '_design/qs',
      rewrites: "function (r) { return {path: '../../_changes', query: {'filter': '_doc_ids'}};};",
    };

    await createDoc(db, ddocQs);
    await createDoc(db, { _id: 'qs1' });
    await createDoc(db, { _id: 'qs2' });

    const resp = await post(`/${db}/_design/qs/_rewrite`, { body: { doc_ids: ['qs2'] } });
    assert.equal(resp.status, 200, show(resp));
    assert.equal(resp.body.results.length, 1);
    assert.equal(resp.body.results[0].id, 'qs2');
  });
}

// ================================================================================ etags_head_test.exs

test('etags_head: etag header on creation', async () => {
  const db = await mkdb('eh-creation');
  const resp = await put(`/${db}/1`, { headers: { 'Content-Type': 'application/json' }, body: {} });
  assert.equal(resp.status, 201, show(resp));
  assert.ok(Object.hasOwn(resp.headers, 'etag'), JSON.stringify(resp.headers));
});

test('etags_head: etag header on retrieval', async () => {
  const db = await mkdb('eh-retrieval');
  let resp = await put(`/${db}/1`, { headers: { 'Content-Type': 'application/json' }, body: {} });
  const etag = hdr(resp, 'etag');

  // get the doc and verify the headers match
  resp = await get(`/${db}/1`);
  assert.equal(hdr(resp, 'etag'), etag);

  // 'head' the doc and verify the headers match
  resp = await head(`/${db}/1`, { headers: { 'if-none-match': 's' } });
  assert.equal(hdr(resp, 'etag'), etag);
});

test('etags_head: etag header on head', async () => {
  const db = await mkdb('eh-head');
  let resp = await put(`/${db}/1`, { headers: { 'Content-Type': 'application/json' }, body: {} });
  const etag = hdr(resp, 'etag');

  // 'head' the doc and verify the headers match
  resp = await head(`/${db}/1`, { headers: { 'if-none-match': 's' } });
  assert.equal(hdr(resp, 'etag'), etag);
});

test('etags_head: etags head', async () => {
  const db = await mkdb('eh-etags');
  let resp = await put(`/${db}/1`, { headers: { 'Content-Type': 'application/json' }, body: {} });
  assert.equal(resp.status, 201, show(resp));
  assert.ok(Object.hasOwn(resp.headers, 'etag'), JSON.stringify(resp.headers));

  let etag = hdr(resp, 'etag')!;

  // get the doc and verify the headers match
  resp = await get(`/${db}/1`);
  assert.equal(hdr(resp, 'etag'), etag);

  // 'head' the doc and verify the headers match
  resp = await head(`/${db}/1`, { headers: { 'if-none-match': 's' } });
  assert.equal(hdr(resp, 'etag'), etag);

  // replace a doc
  resp = await put(`/${db}/1`, { headers: { 'if-match': etag }, body: {} });
  assert.equal(resp.status, 201, show(resp));

  // extract the new ETag value
  const previousEtag = etag;
  etag = hdr(resp, 'etag')!;

  // fail to replace a doc
  resp = await put(`/${db}/1`, { body: {} });
  assert.equal(resp.status, 409, show(resp));

  // verify get w/Etag
  resp = await get(`/${db}/1`, { headers: { 'if-none-match': previousEtag } });
  assert.equal(resp.status, 200, show(resp));

  resp = await get(`/${db}/1`, { headers: { 'if-none-match': etag } });
  assert.equal(resp.status, 304, show(resp));

  resp = await get(`/${db}/1`, { headers: { 'if-none-match': `W/${etag}` } });
  assert.equal(resp.status, 304, show(resp));

  // fail to delete a doc
  resp = await del(`/${db}/1`, { headers: { 'if-match': previousEtag } });
  assert.equal(resp.status, 409, show(resp));

  resp = await del(`/${db}/1`, { headers: { 'if-match': etag } });
  assert.equal(resp.status, 200, show(resp));
});

// ============================================================================ method_override_test.exs

test('method_override: method override PUT', async () => {
  const db = await mkdb('mo-put');
  let resp = await post(`/${db}/fnord`, { body: { bob: 'connie' }, headers: { 'X-HTTP-Method-Override': 'PUT' } });
  assert.equal(resp.status, 201, show(resp));

  resp = await get(`/${db}/fnord`);
  assert.equal(resp.body?.bob, 'connie', show(resp));
});

test('method_override: method override DELETE', async () => {
  const db = await mkdb('mo-delete');
  const created = await createDoc(db, { _id: 'fnord', bob: 'connie' });

  let resp = await post(`/${db}/fnord?rev=${created.body.rev}`, { headers: { 'X-HTTP-Method-Override': 'DELETE' } });
  assert.equal(resp.status, 200, show(resp));

  resp = await get(`/${db}/fnord`);
  assert.equal(resp.status, 404, show(resp));
});

test("method_override: Method Override is ignored when original Method isn't POST", async () => {
  const db = await mkdb('mo-ignored');
  const resp = await get(`/${db}/fnord2`, { body: { bob: 'connie' }, headers: { 'X-HTTP-Method-Override': 'PUT' } });
  assert.equal(resp.status, 404, show(resp));
});

// ============================================================================== multiple_rows_test.exs

const NORTH_CAROLINA_CITIES = ['Charlotte', 'Raleigh'];
const MASSACHUSSETS_CITIES = ['Boston', 'Lowell', 'Worcester', 'Cambridge', 'Springfield'];
const FLORIDA_CITIES = ['Miami', 'Tampa', 'Orlando', 'Springfield'];

/** The original's query_list_cities_and_state: the view built in a design document, read, the ddoc dropped. */
async function queryListCitiesAndState(db: string): Promise<any> {
  const designDoc = {
    _id: '_design/list_cities_and_state',
    language: 'javascript',
    views: {
      view: {
        map: '  function(doc) {\n    for (var i = 0; i < doc.cities.length; i++)\n      emit(doc.cities[i] + ", " + doc._id, null);\n  }\n',
      },
    },
  };
  // `w=3` is a cluster write quorum; a single node takes it as given.
  const designResp = await put(`/${db}/_design/list_cities_and_state?w=3`, { body: designDoc });
  assert.ok([201, 202].includes(designResp.status), show(designResp));

  const result = (await get(`/${db}/_design/list_cities_and_state/_view/view`)).body;

  await del(`/${db}/_design/list_cities_and_state?rev=${designResp.body.rev}`);

  return result;
}

/** The original's `assert Enum.at(rows, i)["key"] == ...`, one per index. */
function expectKeys(rows: { key: unknown }[], keys: string[]): void {
  for (const [i, key] of keys.entries()) assert.equal(rows[i]?.key, key, `rows[${i}].key`);
}

test('multiple_rows: multiple rows', async () => {
  const db = await mkdb('mr');
  const resp1 = (await put(`/${db}/NC`, { body: { _id: 'NC', cities: NORTH_CAROLINA_CITIES } })).body;
  const resp2 = (await put(`/${db}/MA`, { body: { _id: 'MA', cities: MASSACHUSSETS_CITIES } })).body;
  const resp3 = (await put(`/${db}/FL`, { body: { _id: 'FL', cities: FLORIDA_CITIES } })).body;

  assert.ok(resp1.ok);
  assert.ok(resp2.ok);
  assert.ok(resp3.ok);

  let { rows, total_rows: totalRows } = await queryListCitiesAndState(db);
  expectKeys(rows, [
    'Boston, MA', 'Cambridge, MA', 'Charlotte, NC', 'Lowell, MA', 'Miami, FL', 'Orlando, FL',
    'Raleigh, NC', 'Springfield, FL', 'Springfield, MA', 'Tampa, FL', 'Worcester, MA',
  ]);
  assert.equal(totalRows, 11);

  const newInsertResp = (await put(`/${db}/NC`, { body: { id: 'NC', cities: [...NORTH_CAROLINA_CITIES, 'Wilmington'], _rev: resp1.rev } })).body;
  assert.ok(newInsertResp.ok);

  ({ rows, total_rows: totalRows } = await queryListCitiesAndState(db));
  expectKeys(rows, [
    'Boston, MA', 'Cambridge, MA', 'Charlotte, NC', 'Lowell, MA', 'Miami, FL', 'Orlando, FL',
    'Raleigh, NC', 'Springfield, FL', 'Springfield, MA', 'Tampa, FL', 'Wilmington, NC', 'Worcester, MA',
  ]);
  assert.equal(totalRows, 12);

  const deleteResp = (await del(`/${db}/MA?rev=${encodeURIComponent(resp2.rev)}`)).body;
  assert.ok(deleteResp.ok);

  ({ rows, total_rows: totalRows } = await queryListCitiesAndState(db));
  expectKeys(rows, ['Charlotte, NC', 'Miami, FL', 'Orlando, FL', 'Raleigh, NC', 'Springfield, FL', 'Tampa, FL', 'Wilmington, NC']);
  assert.equal(totalRows, 7);
});

// ====================================================================================== jsonp_test.exs

/** The original's parse_callback: the callback's name and its decoded argument, after the CouchDB comment. */
function parseCallback(msg: string): [string | undefined, any] {
  const captures = [...msg.matchAll(/\/\* CouchDB \*\/(\w+)\((.*)\)/gs)];
  const callbackFun = captures.map((p) => p[1])[0];
  const param = captures.map((p) => p[2]!).filter((p) => p.trim() !== '').map((p) => JSON.parse(p))[0];
  return [callbackFun, param];
}

test('jsonp: jsonp not configured callbacks', async () => {
  const db = await mkdb('jsonp-off');
  await createDoc(db, { _id: '0', a: 0, b: 0 });

  // CouchDB 2 and later answer JSON as application/json whatever the Accept; CouchDB 1.6, which
  // Settee follows, as text/plain unless the client accepts application/json.
  const resp = await get(`/${db}/0?callback=jsonp_no_chunk`);
  assert.equal(resp.status, 200, show(resp));
  assert.equal(hdr(resp, 'content-type'), 'text/plain; charset=utf-8');
});

test('jsonp: jsonp unchunked callbacks', async () => {
  const db = await mkdb('jsonp-unchunked');
  const createResp = await createDoc(db, { _id: '0', a: 0, b: 0 });

  await withConfig([['httpd', 'allow_jsonp', 'true']], async () => {
    let resp = await get(`/${db}/0?callback=jsonp_no_chunk`);
    assert.equal(resp.status, 200, show(resp));
    // CouchDB 2 and later say application/javascript; CouchDB 1.6, which Settee follows, text/javascript.
    assert.equal(hdr(resp, 'content-type'), 'text/javascript');

    const [callbackFun, callbackParam] = parseCallback(resp.text);
    assert.equal(callbackFun, 'jsonp_no_chunk', show(resp));
    assert.equal(callbackParam._id, createResp.body.id);
    assert.equal(callbackParam._rev, createResp.body.rev);

    resp = await get(`/${db}/0?callback=jsonp_no_chunk"`);
    assert.equal(resp.status, 400, show(resp));
  });
});

test('jsonp: jsonp chunked callbacks', async () => {
  const db = await mkdb('jsonp-chunked');
  const designDoc = {
    _id: '_design/test',
    language: 'javascript',
    views: { all_docs: { map: 'function(doc) {if(doc.a) emit(null, doc.a);}' } },
  };
  await createDoc(db, designDoc);
  await createDoc(db, { _id: '0', a: 0, b: 0 });
  await createDoc(db, { _id: '1', a: 1, b: 1 });

  await withConfig([['httpd', 'allow_jsonp', 'true']], async () => {
    let resp = await get(`/${db}/_design/test/_view/all_docs?callback=jsonp_chunk`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(hdr(resp, 'content-type'), 'text/javascript');

    let [callbackFun, callbackParam] = parseCallback(resp.text);
    assert.equal(callbackFun, 'jsonp_chunk', show(resp));
    assert.equal(callbackParam.total_rows, 1);

    resp = await get(`/${db}/_design/test/_view/all_docs?callback=jsonp_chunk'`);
    assert.equal(resp.status, 400, show(resp));

    resp = await get(`/${db}/_changes?callback=jsonp_chunk`);
    assert.equal(resp.status, 200, show(resp));
    assert.equal(hdr(resp, 'content-type'), 'text/javascript');

    [callbackFun, callbackParam] = parseCallback(resp.text);
    assert.equal(callbackFun, 'jsonp_chunk', show(resp));
    assert.equal(callbackParam.results.length, 3);
  });
});
