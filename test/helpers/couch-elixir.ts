/**
 * The client of CouchDB 3's Elixir integration suite (its `Couch` module), for the scripts
 * ported in test/http/couchdb3-*.test.ts: every request as the server admin `adm:pass` (Basic
 * auth), with `Content-Type: application/json` unless the test gives another.
 */
import assert from 'node:assert/strict';
import type { Client, RequestOptions, Response } from './http.js';
import { basic, defineAdmin } from './auth.js';

const asAdm = (o: RequestOptions = {}): RequestOptions =>
  ({ ...o, headers: { ...basic('adm', 'pass'), 'Content-Type': 'application/json', ...o.headers } });

/** Defines the admin `adm` on the server at `base`, and answers the client that acts as it. */
export async function elixirAdminClient(base: string, anonymous: Client) {
  await defineAdmin(base, 'adm', 'pass');
  return {
    get: (path: string, o?: RequestOptions) => anonymous.get(path, asAdm(o)),
    head: (path: string, o?: RequestOptions) => anonymous.head(path, asAdm(o)),
    put: (path: string, body?: unknown, o?: RequestOptions) => anonymous.put(path, body, asAdm(o)),
    post: (path: string, body?: unknown, o?: RequestOptions) => anonymous.post(path, body, asAdm(o)),
    del: (path: string, o?: RequestOptions) => anonymous.del(path, asAdm(o)),
    /** A body sent as is, as the originals' `body: "[]"`. */
    raw: (method: string, path: string, raw: string | Buffer, o?: RequestOptions) => anonymous.request(method, path, asAdm({ ...o, raw })),
    request: (method: string, path: string, o?: RequestOptions) => anonymous.request(method, path, asAdm(o)),
  };
}

export type ElixirClient = Awaited<ReturnType<typeof elixirAdminClient>>;
type Params = Record<string, string | number | boolean | null>;
/** What the helpers need of a client: the admin client above, or the plain one in admin party. */
type WritingClient = Pick<Client, 'put' | 'post' | 'del'>;
type Doc = Record<string, unknown>;

/**
 * The suite's `set_config`: sets `[section] key` to `value` on every node, unpersisted, runs
 * `body`, and restores the previous value (or deletes the key) afterwards.
 */
export async function withNodeConfig(
  c: Pick<Client, 'get' | 'put' | 'del'>, section: string, key: string, value: string, body: () => Promise<void>,
): Promise<void> {
  const nodes = (await c.get('/_membership')).body.all_nodes as string[];
  const previous: [string, string][] = [];
  for (const node of nodes) {
    const r = await c.put(`/_node/${encodeURIComponent(node)}/_config/${section}/${key}`, value, { headers: { 'X-Couch-Persist': 'false' } });
    assert.equal(r.status, 200, r.text);
    previous.push([node, r.body as string]);
  }
  try {
    await body();
  } finally {
    for (const [node, prev] of previous) {
      const path = `/_node/${encodeURIComponent(node)}/_config/${section}/${key}`;
      const headers = { 'X-Couch-Persist': 'false' };
      const r = prev !== '' ? await c.put(path, prev, { headers }) : await c.del(path, { headers });
      assert.equal(r.status, 200, r.text);
    }
  }
}

/** A query string (`?a=1&b=x`), or '' for no parameters. */
export function qs(params?: Params | null): string {
  if (!params) return '';
  const parts = Object.entries(params).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

/** The suite's `make_docs`: documents `first`..`last` with `integer` and `string` fields, or copies of `template`. */
export function makeDocs(first: number, last: number, template?: Doc): Doc[] {
  const docs: Doc[] = [];
  for (let i = first; i <= last; i++) docs.push(template ? { ...template, _id: String(i) } : { _id: String(i), integer: i, string: String(i) });
  return docs;
}

/**
 * The suite's database helpers (`create_db`, `delete_db`, `create_doc`, `bulk_save`) for one
 * script, whose databases are named `<prefix>-<label>-<n>`.
 */
export function elixirDbHelpers(c: WritingClient, prefix: string) {
  let counter = 0;
  const dbName = (label: string): string => `${prefix}-${label}-${++counter}`;
  const createDb = async (name: string): Promise<Response> => {
    const r = await c.put(`/${name}`);
    assert.ok([201, 202].includes(r.status), `create_db ${name}: ${r.status} ${r.text}`);
    assert.deepEqual(r.body, { ok: true });
    return r;
  };
  return {
    dbName,
    createDb,
    async deleteDb(name: string): Promise<void> {
      const r = await c.del(`/${name}`);
      assert.ok([200, 202, 404].includes(r.status), `delete_db ${name}: ${r.status} ${r.text}`);
    },
    /** A new database, after deleting any left of the same name. */
    async mkdb(label: string): Promise<string> {
      const name = dbName(label);
      await c.del(`/${name}`);
      await createDb(name);
      return name;
    },
    async createDoc(db: string, body: unknown): Promise<Response> {
      const r = await c.post(`/${db}`, body);
      assert.ok([201, 202].includes(r.status), `create_doc in ${db}: ${r.status} ${r.text}`);
      assert.equal(r.body.ok, true);
      return r;
    },
    async bulkSave(db: string, docs: unknown[], params?: Params): Promise<Response> {
      const r = await c.post(`/${db}/_bulk_docs${qs(params)}`, { docs });
      assert.ok([201, 202].includes(r.status), `bulk_save in ${db}: ${r.status} ${r.text}`);
      return r;
    },
  };
}
