/**
 * View endpoints: `_design/{ddoc}/_view/{view}` (GET, POST with keys, CouchDB 2's multiple
 * queries), `_design/{ddoc}/_info`, `POST /{db}/_temp_view`. Query parameters are validated as
 * CouchDB 1.6's couch_mrview does.
 */
import { badRequest, methodNotAllowed, notFound, queryParseError } from '../errors.js';
import type { Database } from '../core/database.js';
import { withMembers } from '../core/document.js';
import { stream, rowsStream, json, raw, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { bodyKeys, checkViewQuerySyntax, etagMatches, foldViewParams, groupLevelParam, openDb, readObject, quote, rowsEnvelope, viewJsonParam, viewPositiveInt, viewStaleParam, KEYS_NOT_ARRAY } from './common.js';
import { bodyQueries, requiredQueries, runQueries, withBodyParams } from './multi-query.js';
import type { OpenedView } from '../views/service.js';
import { reduceSource, type CommittedIndex, type DesignDoc } from '../views/view-index.js';
import { mapRows, reduceRows, rowRange, rowsBefore, rowsWithin, smallMapQuery, type RangeQuery } from '../views/query.js';
import type { RangeOptions } from '../storage/types.js';
import { hash } from 'node:crypto';
import { reducerFor } from '../views/reducer.js';
import { COLLATION_VERSION, collate, collateRaw } from '../views/collation.js';

export const viewRoutes: Route[] = [
  {
    shape: 'designHandler', name: '_view', allow: 'GET,POST,HEAD',
    methods: {
      GET: async (req, p, svc) => {
        if (isQueries(p)) throw methodNotAllowed('POST');
        return viewQuery(req, p, svc, undefined);
      },
      POST: async (req, p, svc) => {
        const body = await readObject(req, svc);
        const queries = isQueries(p) ? requiredQueries(body) : bodyQueries(body);
        if (queries) {
          const view = { ...p, rest: p.rest.slice(0, 1) };
          return runQueries(req, view, svc, queries, (one, q, s) => viewQuery(one, q, s, undefined));
        }
        return viewQuery(withBodyParams(req, body), p, svc, bodyKeys(body));
      },
    },
  },
  {
    shape: 'designHandler', name: '_info', allow: 'GET',
    methods: {
      GET: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const view = await svc.views.open(db, p.docId, false);
        const dataSize = await view.index.store.dataSize();
        const diskSize = await view.index.store.diskSize();
        return json(200, {
          name: p.docId.slice('_design/'.length),
          view_index: {
            compact_running: view.index.compacting,
            data_size: dataSize,
            disk_size: diskSize,
            // CouchDB 2/3's names for the sizes, and the collation the index was built with.
            sizes: { active: dataSize, external: dataSize, file: diskSize },
            collator_versions: [COLLATION_VERSION],
            language: view.ddoc.language ?? 'javascript',
            purge_seq: view.index.purgeSeq,
            signature: view.index.signature,
            update_seq: view.index.seq,
            updater_running: view.index.isUpdating,
            waiting_clients: view.index.waitingClients,
            waiting_commit: false,
          },
        });
      },
    },
  },
  {
    shape: 'dbHandler', name: '_temp_view', access: 'db_admin', jsonBeforeAccess: true,
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const body = await readObject(req, svc);
        if (body['map'] === undefined) {
          // As CouchDB 1.6: the temporary design document then has no view to query, which
          // couch_mrview_util:set_view_type finds once the body's keys and the query string are read.
          bodyKeys(body);
          checkViewQuerySyntax(req);
          throw notFound('missing_named_view');
        }
        if (typeof body['map'] !== 'string') throw badRequest('map function missing');
        const ddoc: DesignDoc = {
          _id: '_design/temp',
          language: typeof body['language'] === 'string' ? body['language'] : 'javascript',
          views: { temp: { map: body['map'], ...(typeof body['reduce'] === 'string' ? { reduce: body['reduce'] } : {}) } },
          ...(body['options'] && typeof body['options'] === 'object' ? { options: body['options'] as DesignDoc['options'] } : {}),
        };
        const keys = bodyKeys(body);
        const view = await svc.views.openDesign(db, ddoc);
        svc.stats.collector.temporaryViewReads++;
        return runQuery(req, svc, db, view, 'temp', keys);
      },
    },
  },
];

/** `_view/{view}/queries` */
const isQueries = (p: RouteParams): boolean => p.rest.length === 2 && p.rest[1] === 'queries';

async function viewQuery(req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const name = p.rest[0];
  if (name === undefined || p.rest.length !== 1) throw notFound('missing');
  svc.stats.collector.viewReads++;
  const view = await svc.views.open(db, p.docId);
  return runQuery(req, svc, db, view, name, bodyKeys);
}

interface ViewParams extends RangeQuery {
  keys: unknown[] | undefined;
  skip: number;
  limit: number;
  reduce: boolean;
  groupLevel: number;
  includeDocs: boolean;
  conflicts: boolean;
  attachments: boolean;
  attEncodingInfo: boolean;
  stale: 'ok' | 'update_after' | undefined;
  updateSeq: boolean;
}

function parseParams(given: Request, bodyKeys: unknown[] | undefined, hasReduce: boolean, raw: boolean): ViewParams {
  const req = foldViewParams(given);
  const either = (a: string, b: string): { key: unknown } | undefined =>
    req.has(a) ? { key: viewJsonParam(req, a) } : req.has(b) ? { key: viewJsonParam(req, b) } : undefined;
  const docid = (a: string, b: string): string | undefined => req.string(a) ?? req.string(b);
  const keyParam = req.has('key') ? { key: viewJsonParam(req, 'key') } : undefined;
  const keysParam = viewJsonParam(req, 'keys');
  // A query string's `keys` replaces a body's (couch_mrview_http:parse_qs folds it over them).
  const givenKeys: unknown = req.has('keys') ? keysParam : bodyKeys;
  const limit = viewPositiveInt(req, 'limit');
  const skip = viewPositiveInt(req, 'skip') ?? 0;
  const groupLevel = groupLevelParam(req);
  const reduce = req.bool('reduce', hasReduce);
  const stale = viewStaleParam(req);
  // The checks of couch_mrview_util:validate_args, in its order (the first that fails answers).
  if (!hasReduce && req.has('reduce') && reduce) throw queryParseError('Reduce is invalid for map-only views.');
  // Only exact grouping answers one row per key (CouchDB 1.6's message, its spelling kept).
  if (hasReduce && reduce && Array.isArray(givenKeys) && groupLevel !== Infinity) {
    throw queryParseError('Multi-key fetchs for reduce views must use `group=true`');
  }
  if (givenKeys !== undefined && !Array.isArray(givenKeys)) throw queryParseError(KEYS_NOT_ARRAY);
  const keys = givenKeys as unknown[] | undefined;
  const params: ViewParams = {
    startKey: either('startkey', 'start_key'),
    endKey: either('endkey', 'end_key'),
    startDocId: docid('startkey_docid', 'start_key_doc_id'),
    endDocId: docid('endkey_docid', 'end_key_doc_id'),
    inclusiveEnd: req.bool('inclusive_end', true),
    descending: req.bool('descending'),
    keys,
    skip,
    limit: limit ?? Infinity,
    reduce,
    groupLevel,
    includeDocs: req.bool('include_docs'),
    conflicts: req.bool('conflicts'),
    attachments: req.bool('attachments'),
    attEncodingInfo: req.bool('att_encoding_info'),
    stale,
    updateSeq: req.bool('update_seq'),
  };
  if (keyParam) {
    // As in CouchDB, `key` is startkey = endkey; inclusive_end=false then leaves nothing.
    params.startKey = keyParam;
    params.endKey = keyParam;
  }
  // An empty `keys` goes with any bounds (it selects nothing), as couch_mrview_util:validate_args.
  if (keys !== undefined && keys.length > 0 && (params.startKey || params.endKey)) {
    throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  // reduce=false makes a reduce view a map view: grouping it is as invalid as grouping a map view.
  if ((!hasReduce || !reduce) && groupLevel !== 0) throw queryParseError('Invalid use of grouping on a map view.');
  if (hasReduce && reduce && params.includeDocs) throw queryParseError('`include_docs` is invalid for reduce');
  if (hasReduce && reduce && req.has('conflicts')) throw queryParseError('`conflicts` is invalid for reduce views.');
  // couch_mrview_util:check_range judges the bounds even beside an empty `keys`.
  if (params.startKey && params.endKey) {
    const order = (raw ? collateRaw : collate)(params.startKey.key, params.endKey.key);
    if ((!params.descending && order > 0) || (params.descending && order < 0)) {
      throw queryParseError(`No rows can match your key range, reverse your start_key and end_key or set descending=${params.descending ? 'false' : 'true'}`);
    }
  }
  return params;
}

/** A view query's result before it is enveloped: what `_view` streams and `_list` hands to a list function. */
export interface ViewResult {
  etag: string;
  /** total_rows, offset and update_seq as the query asked (CouchDB's list `head`); only update_seq for reductions. */
  head: { total_rows?: number; offset?: number; update_seq?: number };
  /** Each row as JSON text, streamed from the index. */
  rows: AsyncIterable<string>;
  /** The same rows when the answer was small enough to be read whole. */
  allRows?: string[];
  reduced: boolean;
}

/** Runs a view query with CouchDB's parameters (the index is brought up to date first unless stale). */
export async function queryView(req: Request, svc: Services, db: Database, view: OpenedView, name: string, bodyKeys: unknown[] | undefined): Promise<ViewResult> {
  // A parameter that does not parse is answered before a missing view (couch_mrview_http parses
  // the query string before couch_mrview_util:get_view looks the view up).
  checkViewQuerySyntax(req);
  const number = view.index.viewNumber(name);
  if (number < 0) throw notFound('missing_named_view');
  const reduce = reduceSource(view.ddoc.views![name]);
  const hasReduce = reduce !== undefined;
  const q = parseParams(req, bodyKeys, hasReduce, view.index.isRaw(number));

  const reduceLimit = svc.config.getBool('query_server_config', 'reduce_limit', true);
  if (q.stale !== 'ok') {
    if (q.stale === 'update_after') {
      void view.update({ reduceLimit, background: true }).catch((err) => svc.log.error(`view update failed: ${String(err)}`));
    } else {
      await view.update({ reduceLimit });
    }
  }
  const etag = viewEtag(db, view, number, q);
  // total_rows and update_seq of the committed index, not of the in-memory state an update
  // running meanwhile has moved on (a small answer reads them from its rows' snapshot).
  const headOf = (committed: CommittedIndex, offset: number) => ({
    total_rows: committed.counts[number] ?? 0, offset, ...(q.updateSeq ? { update_seq: committed.seq } : {}),
  });
  // Each key of a keyed query is its own range, in the order given; document-id bounds and
  // inclusive_end apply within every key, as CouchDB 1.6 folds them.
  const keyRange = (key: unknown) => rowRange(view.index, number, { ...q, startKey: { key }, endKey: { key } });

  if (hasReduce && q.reduce) {
    const reducer = reducerFor(reduce!, name, view.program, reduceLimit);
    const ranges = q.keys === undefined ? [await rowRange(view.index, number, q)] : await Promise.all(q.keys.map(keyRange));
    // With keys, skip and limit count the rows of all keys together, as couch_mrview's red_fold.
    const keyed = q.keys !== undefined;
    let skip = q.skip;
    let limit = q.limit;
    async function* rows(): AsyncIterable<string> {
      for (const range of ranges) {
        for await (const [key, value] of reduceRows(view.index, number, range, q.groupLevel, reducer, keyed ? 0 : q.skip, keyed ? Infinity : q.limit)) {
          if (keyed && skip > 0) { skip--; continue; }
          if (keyed && limit-- <= 0) return;
          yield `{"key":${JSON.stringify(key ?? null)},"value":${JSON.stringify(value ?? null)}}`;
        }
      }
    }
    return { etag, head: q.updateSeq ? { update_seq: (await view.index.committed()).seq } : {}, rows: rows(), reduced: true };
  }

  if (q.keys !== undefined) {
    const ranges = await Promise.all(q.keys.map(keyRange));
    const offset = await keyedOffset(view, number, ranges, q.skip);
    let skip = q.skip;
    let limit = q.limit;
    async function* rows(): AsyncIterable<string> {
      for (const range of ranges) {
        for await (const chunk of mapRows(view.index, range, 0, Infinity)) {
          for (const row of chunk) {
            if (skip > 0) { skip--; continue; }
            if (limit-- <= 0) return;
            yield await renderRow(db, row, q);
          }
        }
      }
    }
    return { etag, head: headOf(await view.index.committed(), offset), rows: rows(), reduced: false };
  }
  const range = await rowRange(view.index, number, q);
  if (!q.includeDocs) {
    const small = await smallMapQuery(view.index, number, range, q.skip, q.limit);
    if (small) return { etag, head: headOf(small.committed, small.offset), rows: fromArray(small.rows), allRows: small.rows, reduced: false };
  }
  const before = await rowsBefore(view.index, number, range);
  // Skipping past the range's end leaves the offset where the range ends.
  const offset = q.skip === 0 ? before : before + Math.min(q.skip, await rowsWithin(view.index, number, range));
  async function* rows(): AsyncIterable<string> {
    for await (const chunk of mapRows(view.index, range, q.skip, q.limit)) {
      for (const row of chunk) yield await renderRow(db, row, q);
    }
  }
  return { etag, head: headOf(await view.index.committed(), offset), rows: rows(), reduced: false };
}

async function runQuery(req: Request, svc: Services, db: Database, view: OpenedView, name: string, bodyKeys: unknown[] | undefined): Promise<Reply> {
  const result = await queryView(req, svc, db, view, name, bodyKeys);
  const { etag, head } = result;
  if (etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  const headers = { ETag: etag };
  const updateSeq = head.update_seq !== undefined ? `"update_seq":${head.update_seq},` : '';
  if (result.reduced) {
    // Errors surface before the first byte: reduce the first group eagerly.
    return rowsStream(200, await primed(rowsEnvelope(`{${updateSeq}"rows":[\r\n`, result.rows, ']}\n')), headers);
  }
  const top = `{"total_rows":${head.total_rows},"offset":${head.offset},${updateSeq}"rows":[\r\n`;
  if (result.allRows) {
    // Read whole: sent with a Content-Length, the same text as streamed.
    const rows = result.allRows.length > 0 ? `${result.allRows.join(',\r\n')}\r\n` : '';
    return json(200, `${top}${rows}]}`, headers);
  }
  return rowsStream(200, rowsEnvelope(top, result.rows, ']}\n'), headers);
}

/**
 * The offset of a keyed query: where its first row (after `skip`) lies in the view, or, with no
 * row, where the last key's range ends.
 */
async function keyedOffset(view: OpenedView, number: number, ranges: RangeOptions[], skip: number): Promise<number> {
  let last = 0;
  for (const range of ranges) {
    const within = await rowsWithin(view.index, number, range);
    const before = await rowsBefore(view.index, number, range);
    if (skip < within) return before + skip;
    skip -= within;
    last = before + within;
  }
  return last;
}

/**
 * A view answer's ETag, as CouchDB 1.6 makes it: the index signature, when this view's rows last
 * changed (update and purge sequences), the query's parameters and keys, and, with include_docs,
 * the database's sequences (documents can change without the view changing).
 */
function viewEtag(db: Database, view: OpenedView, number: number, q: ViewParams): string {
  // Every parameter that shapes the answer (all but `stale`), listed rather than copied: this
  // runs for every query.
  const identity = JSON.stringify([
    view.index.signature, view.index.viewVersion(number),
    q.startKey ?? null, q.endKey ?? null, q.startDocId ?? null, q.endDocId ?? null, q.inclusiveEnd, q.descending,
    q.keys ?? null, q.skip, Number.isFinite(q.limit) ? q.limit : null, q.reduce, Number.isFinite(q.groupLevel) ? q.groupLevel : 'exact',
    q.includeDocs, q.conflicts, q.attachments, q.attEncodingInfo,
    q.includeDocs ? [db.updateSeq, db.purgeSeq] : null, q.updateSeq ? view.index.seq : null,
  ]);
  return quote(hash('md5', identity));
}

/** A map row as stored, with the document when `include_docs` asks (an `{_id}` value joins another). */
async function renderRow(db: Database, text: string, q: ViewParams): Promise<string> {
  if (!q.includeDocs) return text;
  const row = JSON.parse(text) as { id: string; value: unknown };
  let id = row.id;
  let rev: string | undefined;
  // A value {_id?, _rev?} names the document (and revision) to join, as CouchDB 1.6's docid_rev.
  // Anything else there (an _id that is not a string, a deleted revision) joins nothing: doc null.
  const v = row.value as { _id?: unknown; _rev?: unknown } | null;
  let joinable = true;
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    if (typeof v._id === 'string') id = v._id;
    else if (v._id !== undefined) joinable = false;
    if (typeof v._rev === 'string') rev = v._rev;
    else if (v._rev !== undefined) joinable = false;
  }
  const doc = joinable
    ? await db.openDoc(id, { rev, conflicts: q.conflicts, attachments: q.attachments, attEncodingInfo: q.attEncodingInfo }).catch(() => undefined)
    : undefined;
  return withMembers(text, `,"doc":${doc && !doc.deleted ? doc.json : 'null'}`);
}


/**
 * Starts a stream so that an error in its first chunk becomes an ordinary error reply. The
 * source is returned (its store reads released) when the reply's consumer stops, even one that
 * stops before asking for anything.
 */
async function primed(source: AsyncIterable<string>): Promise<AsyncIterable<string>> {
  const it = source[Symbol.asyncIterator]();
  let first: IteratorResult<string> | undefined = await it.next();
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const result = first ?? it.next();
        first = undefined;
        return Promise.resolve(result);
      },
      return: async (): Promise<IteratorResult<string>> => {
        first = undefined;
        await it.return?.();
        return { done: true, value: undefined };
      },
    }),
  };
}

async function* fromArray(rows: readonly string[]): AsyncIterable<string> {
  yield* rows;
}
