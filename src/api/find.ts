/**
 * CouchDB 2/3's Mango query API: `POST /{db}/_find`, `POST /{db}/_explain`, and the index
 * endpoints `GET|POST /{db}/_index`, `DELETE /{db}/_index/{ddoc}/json/{name}` and
 * `POST /{db}/_index/_bulk_delete`, answered as mango_httpd answers them. Reading needs
 * database membership; indexes are design documents, so changing them needs a database admin.
 */
import { performance } from 'node:perf_hooks';
import { methodNotAllowed, notFound } from '../errors.js';
import { parseIncomingDoc } from '../core/document.js';
import type { Database } from '../core/database.js';
import { bulkDeleteIndexes, createIndex, deleteIndex, explain, find, findWarning, listIndexes, type DesignWriter } from '../mango/find.js';
import { indexJson } from '../mango/indexes.js';
import { mangoError } from '../mango/errors.js';
import type { JsonObject } from '../mango/selector.js';
import { IndexExecutor, type ExecutionSummary } from '../mango/executor.js';
import { json, stream, type Reply } from './reply.js';
import { everyMethod, type Route, type RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { durableWrite, editDocs, openDb, raiseResult, readObject } from './common.js';

/** A JSON object body with `Content-Type: application/json`. */
async function jsonObjectBody(req: Request, svc: Services): Promise<JsonObject> {
  req.requireJsonContentType();
  return await readObject(req, svc) as JsonObject;
}

/** Design documents written as the requester, through every write rule. */
function designWriter(req: Request, svc: Services, db: Database): DesignWriter {
  return async (doc) => {
    const [result] = await editDocs(req, svc, db, [parseIncomingDoc(doc)], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) });
    if (result && !result.ok) raiseResult(result);
  };
}

export const findRoutes: Route[] = [
  {
    shape: 'dbHandler', name: '_find',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const started = performance.now();
        const view = req.docView;
        const run = await find(db, await jsonObjectBody(req, svc), new IndexExecutor(svc.views), view && ((doc) => view(doc) as JsonObject));
        // The first chunk is read before answering, so a bad bookmark is still a 400.
        const first = await run.docs.next();
        async function* body(): AsyncIterable<string> {
          let out = '{"docs":[';
          let count = 0;
          let next = first;
          while (!next.done) {
            for (const doc of next.value) out += `${count++ === 0 ? '\r\n' : ',\r\n'}${doc}`;
            if (out.length >= 16384) {
              yield out;
              out = '';
            }
            next = await run.docs.next();
          }
          yield `${out}${tail(next.value, run.plan.options.executionStats, performance.now() - started, findWarning(run, next.value))}`;
        }
        return stream(200, body());
      },
    },
  },
  {
    shape: 'dbHandler', name: '_explain',
    methods: {
      POST: async (req, p, svc) => json(200, await explain(await openDb(svc, p.db, req), await jsonObjectBody(req, svc))),
    },
  },
  {
    shape: 'dbHandler', name: '_index',
    access: { GET: 'db_member', POST: 'db_admin', DELETE: 'db_admin' },
    // mango_httpd answers by path first: a known path with another method is 405, others 404.
    methods: everyMethod(indexRequest),
  },
];

/** `/{db}/_index[/...]`: the list and creation, `_bulk_delete`, and one index's deletion. */
async function indexRequest(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  // Only `_design/{ddoc}/{type}/{name}` joins its first two parts: `_design/{ddoc}/{type}` is
  // the {ddoc}/{type}/{name} shape, as mango_httpd matches raw path parts.
  const rest = p.rest[0] === '_design' && p.rest.length === 4 ? [`_design/${p.rest[1]}`, ...p.rest.slice(2)] : p.rest;
  if (rest.length === 0) {
    if (method === 'GET') {
      const db = await openDb(svc, p.db, req);
      const all = (await listIndexes(db)).map(indexJson);
      const limit = listParam(req, 'limit') ?? all.length;
      const skip = listParam(req, 'skip') ?? 0;
      if (limit < 1 || skip < 0) throw listParamsError();
      return json(200, { total_rows: all.length, indexes: all.slice(Math.min(skip, all.length), Math.min(skip, all.length) + limit) });
    }
    if (method !== 'POST') throw methodNotAllowed('GET,POST');
    const db = await openDb(svc, p.db, req);
    return json(200, await createIndex(db, await jsonObjectBody(req, svc), designWriter(req, svc, db)));
  }
  if (rest.length === 1 && rest[0] === '_bulk_delete') {
    if (method !== 'POST') throw methodNotAllowed('POST');
    const db = await openDb(svc, p.db, req);
    return json(200, await bulkDeleteIndexes(db, await jsonObjectBody(req, svc), designWriter(req, svc, db)));
  }
  if (rest.length === 3) {
    if (method !== 'DELETE') throw methodNotAllowed('DELETE');
    const db = await openDb(svc, p.db, req);
    await deleteIndex(db, rest[0]!, rest[1]!, rest[2]!, designWriter(req, svc, db));
    return json(200, { ok: true });
  }
  throw notFound('missing');
}

const listParamsError = () => mangoError(500, 'invalid_list_index_params', 'Index parameter ranges: limit > 1, skip > 0');

function listParam(req: Request, name: string): number | undefined {
  const value = req.string(name);
  if (value === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw listParamsError();
  return Number.parseInt(value, 10);
}

/** The end of a `_find` answer as CouchDB writes it: bookmark, statistics if asked, warning. */
function tail(summary: ExecutionSummary, withStats: boolean, elapsedMs: number, warning: string | undefined): string {
  let out = `\r\n],\r\n"bookmark": ${JSON.stringify(summary.bookmark)}`;
  if (withStats) {
    const s = summary.stats;
    out += `,\r\n"execution_stats": ${JSON.stringify({
      total_keys_examined: s.keysExamined,
      total_docs_examined: s.docsExamined,
      total_quorum_docs_examined: s.quorumDocsExamined,
      results_returned: s.resultsReturned,
      execution_time_ms: elapsedMs,
    })}`;
  }
  if (warning !== undefined) out += `,\r\n"warning": ${JSON.stringify(warning)}`;
  return `${out}}\r\n`;
}
