/**
 * The client of CouchDB 3's Elixir integration suite (its `Couch` module), for the scripts
 * ported in test/http/couchdb3-*.test.ts: every request as the server admin `adm:pass` (Basic
 * auth), with `Content-Type: application/json` unless the test gives another.
 */
import type { Client, RequestOptions } from './http.js';
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
