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

export interface Route {
  shape: RouteShape;
  /** Handler name for global, dbHandler and designHandler shapes (`_all_dbs`, `_changes`, `_view`). */
  name?: string;
  methods: Partial<Record<string, Handler>>;
}
