/** CouchDB's `req` object for design-document functions, from an HTTP request (see design/request-object.ts). */
import type { Database } from '../core/database.js';
import { requestObject } from '../design/request-object.js';
import { decodeSegment, type Request } from './request.js';
import type { Services } from './services.js';
import { requestLimit } from './common.js';

const BODYLESS = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

function segments(path: string): string[] {
  return path.split('/').slice(1).filter((s, i, all) => s !== '' || i < all.length - 1).map(decodeSegment);
}

/** The `req` of a function run for `req`, as JSON text; `id` is the document it is about (shows, updates). */
export async function requestJson(req: Request, svc: Services, db: Database, id: string | null): Promise<string> {
  const body = BODYLESS.has(req.method) && !req.header('content-length') && !req.header('transfer-encoding')
    ? undefined
    : await req.text(requestLimit(svc));
  const raw = req.raw.rawHeaders;
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
  return JSON.stringify(requestObject({
    info: await db.info(),
    id,
    uuid: svc.uuids.next(),
    method: req.method,
    requestedPath: segments(req.requestedPath),
    path: segments(req.rawPath),
    rawPath: req.url,
    query: [...req.query],
    headers,
    body,
    peer: req.raw.socket?.remoteAddress ?? '127.0.0.1',
    dbName: db.name,
    userCtx: req.userCtx,
    secObj: db.getSecurity(),
  }));
}
