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

    if (segs.length === 0 || (segs.length === 1 && segs[0] === '')) {
      table = this.root;
    } else if (segs[0]!.startsWith('_') && !isSystemDbName(decodeSegment(segs[0]!))) {
      const name = decodeSegment(segs[0]!);
      table = this.global.get(name);
      params.rest = segs.slice(1).map(decodeSegment);
      if (!table) throw new CouchError(400, 'illegal_database_name', illegalDbNameReason(name));
    } else {
      params.db = decodeSegment(segs[0]!);
      if (segs.length === 1) {
        table = this.database;
      } else {
        const second = decodeSegment(segs[1]!);
        if (second === '_design' || second === '_local') {
          if (segs.length < 3 || segs[2] === '') throw notFound();
          params.docId = `${second}/${decodeSegment(segs[2]!)}`;
          if (segs.length === 3) {
            table = this.document;
          } else if (second === '_design' && segs[3]!.startsWith('_')) {
            table = this.designHandlers.get(decodeSegment(segs[3]!));
            params.rest = segs.slice(4).map(decodeSegment);
            if (!table) throw notFound();
          } else if (second === '_design') {
            table = this.attachment;
            params.attachment = segs.slice(3).map(decodeSegment).join('/');
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
