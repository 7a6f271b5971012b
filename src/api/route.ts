import type { Request } from './request.js';
import type { Reply } from './reply.js';
import type { Services } from './services.js';

/**
 * CouchDB's URL space, routed by shape:
 *
 *   /                               root
 *   /_name/...                      global handlers (_all_dbs, _config, _uuids ...)
 *   /{db}                           database
 *   /{db}/_name/...                 database handlers (_changes, _all_docs ...)
 *   /{db}/_design/{ddoc}            design document (a document)
 *   /{db}/_design/{ddoc}/_name/...  design handlers (_view, _info, _show ...)
 *   /{db}/_local/{id}               local document (a document)
 *   /{db}/{docid}                   document
 *   /{db}/{docid}/{att...}          attachment (name may contain '/')
 */
export type RouteShape = 'root' | 'global' | 'database' | 'dbHandler' | 'document' | 'attachment' | 'designHandler';

export interface RouteParams {
  db: string;
  /** Full document id, including a `_design/` or `_local/` prefix. */
  docId: string;
  attachment: string;
  /** Decoded segments after a handler name (e.g. the view name after `_view`). */
  rest: string[];
}

export type Handler = (req: Request, params: RouteParams, services: Services) => Promise<Reply>;

/**
 * The design handler name of the route that answers any `_name` under a design document that
 * no other route has; its `rest` starts with that name.
 */
export const OTHER_DESIGN_HANDLER = '_*';

/** The key of `Route.methods` whose handler takes any method the route does not list. */
export const ANY_METHOD = '*';

/** A route's methods when one handler answers them all, as CouchDB's `_show`, `_update` and `_rewrite` do. */
export function everyMethod(handler: Handler): Partial<Record<string, Handler>> {
  return { [ANY_METHOD]: handler };
}

/**
 * Who may call an endpoint; the http layer checks it after routing, before the handler runs
 * (src/api/authorize.ts):
 *
 *   public        anyone (what the handler shows may still depend on the caller)
 *   server_admin  server admins only (role `_admin`)
 *   db_admin      the database's admins (security object `admins`) and server admins
 *   db_member     the database's members (everyone when it lists none) and its admins
 *
 * Unset, global routes are `server_admin` and database routes `db_member`. Rules that depend
 * on the document rather than the route (design documents need a database admin, the users
 * database's own rules) are applied where documents are written and read.
 */
export type Access = 'public' | 'server_admin' | 'db_admin' | 'db_member';

export interface Route {
  shape: RouteShape;
  /** Handler name for global, dbHandler and designHandler shapes (`_all_dbs`, `_changes`, `_view`). */
  name?: string;
  methods: Partial<Record<string, Handler>>;
  /**
   * A 405's `Allow` list, when CouchDB 1.6's handler words it otherwise than the methods listed
   * in their usual order (it names its methods in its own order, and often leaves HEAD out).
   */
  allow?: string;
  /**
   * The body must be declared JSON, checked before the caller's rights (`_restart`, `_temp_view`
   * in CouchDB 1.6); a database route's database is still opened as its member first.
   */
  jsonBeforeAccess?: boolean;
  /** One level for every method, or one per method (unlisted methods take the shape's default). */
  access?: Access | Partial<Record<string, Access>>;
}

/** The access level a route gives a method. */
export function accessOf(route: Route, method: string): Access {
  const declared = typeof route.access === 'string' ? route.access : route.access?.[method];
  return declared ?? (route.shape === 'global' ? 'server_admin' : route.shape === 'root' ? 'public' : 'db_member');
}
