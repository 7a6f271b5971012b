import { CouchError, badRequest, notFound } from '../errors.js';
import { decodeSegment } from '../api/request.js';
import type { Handler, Route, RouteParams } from '../api/route.js';
import { illegalDbNameReason, isSystemDbName } from '../core/names.js';

type MethodTable = Partial<Record<string, Handler>>;

/** Resolves a path to its handler by the shapes listed in api/route.ts. */
export class Router {
  private readonly root: MethodTable = {};
  private readonly database: MethodTable = {};
  private readonly document: MethodTable = {};
  private readonly attachment: MethodTable = {};
  private readonly global = new Map<string, MethodTable>();
  private readonly dbHandlers = new Map<string, MethodTable>();
  private readonly designHandlers = new Map<string, MethodTable>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      const named = (map: Map<string, MethodTable>) => {
        if (!route.name) throw new Error(`route of shape ${route.shape} needs a name`);
        map.set(route.name, { ...map.get(route.name), ...route.methods });
      };
      switch (route.shape) {
        case 'root': Object.assign(this.root, route.methods); break;
        case 'database': Object.assign(this.database, route.methods); break;
        case 'document': Object.assign(this.document, route.methods); break;
        case 'attachment': Object.assign(this.attachment, route.methods); break;
        case 'global': named(this.global); break;
        case 'dbHandler': named(this.dbHandlers); break;
        case 'designHandler': named(this.designHandlers); break;
      }
    }
  }

  /** Finds the handler for a method and raw path segments; throws 400/404/405 CouchErrors. */
  resolve(method: string, segs: readonly string[]): { handler: Handler; params: RouteParams } {
    const params: RouteParams = { db: '', docId: '', attachment: '', rest: [] };
    let table: MethodTable | undefined;

    const first = segs.length === 0 ? '' : decodeSegment(segs[0]!);
    if (segs.length === 0 || (segs.length === 1 && segs[0] === '')) {
      table = this.root;
    } else if ((first.startsWith('_') || this.global.has(first)) && !isSystemDbName(first)) {
      // Global handlers are keyed by the first path segment, `_`-prefixed or not (favicon.ico);
      // an unknown `_name` falls through to the database handler in CouchDB and is rejected there.
      table = this.global.get(first);
      params.rest = segs.slice(1).map(decodeSegment);
      if (!table) throw new CouchError(400, 'illegal_database_name', illegalDbNameReason(first));
    } else {
      params.db = decodeSegment(segs[0]!);
      if (segs.length === 1) {
        table = this.database;
      } else {
        const second = decodeSegment(segs[1]!);
        // `/db/_design/x` and `/db/_design%2Fx` (design_paths.js) name the same document.
        const encodedPrefix = /^(_design|_local)\/./.exec(second)?.[1];
        if (second === '_design' || second === '_local' || encodedPrefix) {
          const prefix = encodedPrefix ?? second;
          let next: number; // index of the first segment after the document id
          if (encodedPrefix) {
            params.docId = second;
            next = 2;
          } else {
            if (segs.length < 3 || segs[2] === '') throw notFound();
            params.docId = `${second}/${decodeSegment(segs[2]!)}`;
            next = 3;
          }
          if (segs.length === next) {
            table = this.document;
          } else if (prefix === '_design' && segs[next]!.startsWith('_')) {
            table = this.designHandlers.get(decodeSegment(segs[next]!));
            params.rest = segs.slice(next + 1).map(decodeSegment);
            if (!table) throw notFound();
          } else if (prefix === '_design') {
            table = this.attachment;
            params.attachment = segs.slice(next).map(decodeSegment).join('/');
          } else {
            throw notFound();
          }
        } else if (second.startsWith('_')) {
          table = this.dbHandlers.get(second);
          params.rest = segs.slice(2).map(decodeSegment);
          if (!table) throw badRequest('Only reserved document ids may start with underscore.');
        } else {
          params.docId = second;
          if (segs.length === 2) {
            table = this.document;
          } else {
            params.attachment = segs.slice(2).map(decodeSegment).join('/');
            table = this.attachment;
          }
        }
      }
    }

    const handler = table[method] ?? (method === 'HEAD' ? table['GET'] : undefined);
    if (!handler) {
      const allowed = Object.keys(table);
      if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
      throw new CouchError(405, 'method_not_allowed', `Only ${allowed.join(',')} allowed`, { Allow: allowed.join(',') });
    }
    return { handler, params };
  }
}
