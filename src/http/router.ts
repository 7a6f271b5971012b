import { CouchError, badRequest, methodNotAllowed, notFound } from '../errors.js';
import { decodeSegment as decodeRawSegment } from '../api/request.js';
import { redirectToPlainDesignPath } from '../api/documents.js';
import { accessOf, ANY_METHOD, OTHER_DESIGN_HANDLER, type Access, type Handler, type Route, type RouteParams, type RouteShape } from '../api/route.js';
import { illegalDbNameReason, isSystemDbName } from '../core/names.js';

interface Endpoint {
  handler: Handler;
  access: Access;
  jsonBeforeAccess: boolean;
}

interface MethodTable {
  endpoints: Partial<Record<string, Endpoint>>;
  /** The 405's `Allow` list when the route words it (Route.allow). */
  allow?: string;
}

const emptyTable = (): MethodTable => ({ endpoints: {} });

/** A resolved request: its handler, parameters, and the route's shape, name and access level. */
export interface Resolved {
  handler: Handler;
  params: RouteParams;
  access: Access;
  shape: RouteShape;
  /** The handler name of named shapes (`_changes`, `_view` ...). */
  name: string | undefined;
  /** See Route.jsonBeforeAccess. */
  jsonBeforeAccess?: boolean;
}

/** Resolves a path to its handler by the shapes listed in api/route.ts. */
export class Router {
  private readonly root = emptyTable();
  private readonly database = emptyTable();
  private readonly document = emptyTable();
  private readonly attachment = emptyTable();
  private readonly global = new Map<string, MethodTable>();
  private readonly dbHandlers = new Map<string, MethodTable>();
  private readonly designHandlers = new Map<string, MethodTable>();
  /**
   * Global handlers defined by configuration (`[httpd_global_handlers]` proxies), by the first
   * path segment as sent; they take every method and come before the fixed routes, as
   * couch_httpd's handler table is the configuration.
   */
  private mounted: ReadonlyMap<string, Handler> = new Map();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const add = (table: MethodTable): void => {
        for (const [method, handler] of Object.entries(route.methods)) {
          if (handler) table.endpoints[method] = { handler, access: accessOf(route, method), jsonBeforeAccess: route.jsonBeforeAccess === true };
        }
        if (route.allow !== undefined) table.allow = route.allow;
      };
      const named = (map: Map<string, MethodTable>): MethodTable => {
        if (!route.name) throw new Error(`route of shape ${route.shape} needs a name`);
        const table = map.get(route.name) ?? emptyTable();
        map.set(route.name, table);
        return table;
      };
      switch (route.shape) {
        case 'root': add(this.root); break;
        case 'database': add(this.database); break;
        case 'document': add(this.document); break;
        case 'attachment': add(this.attachment); break;
        case 'global': add(named(this.global)); break;
        case 'dbHandler': add(named(this.dbHandlers)); break;
        case 'designHandler': add(named(this.designHandlers)); break;
      }
    }
  }

  /** Replaces the handlers defined by configuration (see `mounted`); anyone may call them. */
  replaceMounted(handlers: ReadonlyMap<string, Handler>): void {
    this.mounted = new Map(handlers);
  }

  /**
   * Whether a request creates or deletes a database under a `_name` no global handler has.
   * CouchDB 1.6 sends such a name to couch_httpd_db, whose create_db_req and delete_db_req ask
   * for a server admin before the name is refused: a non-admin hears 401, an admin 400.
   */
  private createsOrDeletesUnknownName(method: string, first: string, segs: readonly string[]): boolean {
    return (method === 'PUT' || method === 'DELETE') && segs.length === 1 && !this.global.has(first);
  }

  /**
   * Finds the handler for a method and raw path segments; throws 400/404/405 CouchErrors.
   * `plusIsSpace`: a `+` in a segment means a space (`[chttpd] decode_plus_to_space`).
   */
  resolve(method: string, segs: readonly string[], plusIsSpace = true): Resolved {
    const decodeSegment = (segment: string) => decodeRawSegment(segment, plusIsSpace);
    const params: RouteParams = { db: '', docId: '', attachment: '', rest: [] };
    const mounted = this.mounted.size > 0 && segs.length > 0 ? this.mounted.get(segs[0]!) : undefined;
    // A mounted handler reads the raw path itself: `rest` stays empty.
    if (mounted) return { handler: mounted, params, access: 'public', shape: 'global', name: segs[0]! };
    let table: MethodTable | undefined;
    let shape: RouteShape;
    let name: string | undefined;

    const first = segs.length === 0 ? '' : decodeSegment(segs[0]!);
    if (segs.length === 0 || (segs.length === 1 && segs[0] === '')) {
      table = this.root;
      shape = 'root';
    } else if ((first.startsWith('_') || this.global.has(first)) && !isSystemDbName(first) && !this.createsOrDeletesUnknownName(method, first, segs)) {
      // Global handlers are keyed by the first path segment, `_`-prefixed or not (favicon.ico);
      // an unknown `_name` falls through to the database handler in CouchDB and is rejected there.
      table = this.global.get(first);
      shape = 'global';
      name = first;
      params.rest = segs.slice(1).map(decodeSegment);
      if (!table) throw new CouchError(400, 'illegal_database_name', illegalDbNameReason(first));
    } else {
      params.db = decodeSegment(segs[0]!);
      if (segs.length === 1) {
        table = this.database;
        shape = 'database';
      } else {
        const second = decodeDocSegment(segs[1]!, method, decodeSegment);
        // `/db/_design/x` and `/db/_design%2Fx` (design_paths.js) name the same document.
        const encodedPrefix = /^(_design|_local)\/./.exec(second)?.[1];
        if (second === '_design' || second === '_local' || encodedPrefix) {
          const prefix = encodedPrefix ?? second;
          let next: number; // index of the first segment after the document id
          if (encodedPrefix) {
            params.docId = second;
            next = 2;
            if (encodedPrefix === '_design' && method === 'GET') {
              // CouchDB answers a GET through `_design%2F...` with a redirect to the plain path.
              return { handler: redirectToPlainDesignPath, params, access: this.document.endpoints['GET']!.access, shape: 'document', name: undefined };
            }
          } else if (segs.length < 3 || segs[2] === '') {
            if (second === '_local') throw badRequest('Invalid _local document id.');
            // `/db/_design` is the document `_design` to CouchDB: missing, and an id no one may write.
            params.docId = second;
            next = segs.length;
          } else {
            params.docId = `${second}/${decodeSegment(segs[2]!)}`;
            next = 3;
          }
          if (segs.length === next) {
            table = this.document;
            shape = 'document';
          } else if (prefix === '_design' && segs[next]!.startsWith('_')) {
            name = decodeSegment(segs[next]!);
            table = this.designHandlers.get(name);
            shape = 'designHandler';
            params.rest = segs.slice(next + 1).map(decodeSegment);
            if (!table) {
              table = this.designHandlers.get(OTHER_DESIGN_HANDLER);
              params.rest.unshift(name);
              name = OTHER_DESIGN_HANDLER;
              if (!table) throw notFound();
            }
          } else if (prefix === '_design') {
            table = this.attachment;
            shape = 'attachment';
            params.attachment = decodeAttachmentName(segs.slice(next), method, decodeSegment);
          } else if (!encodedPrefix) {
            throw badRequest('_local documents do not accept attachments.');
          } else {
            throw notFound();
          }
        } else if (second.startsWith('_') && this.dbHandlers.has(second)) {
          table = this.dbHandlers.get(second)!;
          shape = 'dbHandler';
          name = second;
          params.rest = segs.slice(2).map(decodeSegment);
        } else {
          // Any other `_name` is a document id to CouchDB: reading it finds nothing (404),
          // writing it breaks the id rules (400), as the document handlers decide.
          params.docId = second;
          if (segs.length === 2) {
            table = this.document;
            shape = 'document';
          } else {
            params.attachment = decodeAttachmentName(segs.slice(2), method, decodeSegment);
            table = this.attachment;
            shape = 'attachment';
          }
        }
      }
    }

    const { endpoints } = table;
    const endpoint = endpoints[method] ?? (method === 'HEAD' ? endpoints['GET'] : undefined) ?? endpoints[ANY_METHOD];
    if (!endpoint) throw methodNotAllowed(table.allow ?? allowList(Object.keys(endpoints)));
    return { handler: endpoint.handler, params, access: endpoint.access, shape, name, jsonBeforeAccess: endpoint.jsonBeforeAccess };
  }
}

/** A 405's `Allow` list as most of CouchDB's handlers word it: alphabetical with HEAD for GET, COPY last. */
function allowList(methods: string[]): string {
  const allowed = [...methods];
  if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
  allowed.sort((a, b) => Number(a === 'COPY') - Number(b === 'COPY') || (a < b ? -1 : a > b ? 1 : 0));
  return allowed.join(',');
}

/** A path segment whose every `%` starts a two-digit escape (what it decodes to may still not be UTF-8). */
const WELL_FORMED_ESCAPES = /^(?:[^%]|%[0-9A-Fa-f]{2})*$/;

/**
 * The segment after a database name. Escapes that decode to bytes that are not UTF-8 name no
 * document there can be (couch_doc:validate_docid refuses such ids): reading one finds nothing,
 * writing one is a 400.
 */
function decodeDocSegment(segment: string, method: string, decode: (segment: string) => string): string {
  try {
    return decode(segment);
  } catch (err) {
    if (!WELL_FORMED_ESCAPES.test(segment)) throw err;
    throw method === 'PUT' || method === 'POST' ? badRequest('Document id must be valid UTF-8') : notFound('missing');
  }
}

/**
 * The segments after a document id, as one attachment name. Escapes that decode to bytes that
 * are not UTF-8 name no attachment (couch_httpd_db:validate_attachment_name refuses them):
 * writing one is a 400, reading one finds nothing.
 */
function decodeAttachmentName(segments: readonly string[], method: string, decode: (segment: string) => string): string {
  try {
    return segments.map(decode).join('/');
  } catch (err) {
    if (!segments.every((segment) => WELL_FORMED_ESCAPES.test(segment))) throw err;
    throw method === 'GET' || method === 'HEAD' ? notFound('Document is missing attachment') : badRequest('Attachment name is not UTF-8 encoded');
  }
}
