/**
 * `_all_docs` (GET and POST with keys): every live document by id, streamed row by row; and
 * CouchDB 2's `_design_docs` (the same over design documents only, counted among themselves) and
 * `_local_docs` (the `_local` documents, which have no count: total_rows and offset are null).
 * Each also answers CouchDB 2's multiple queries (`POST .../queries`, multi-query.ts).
 */
import { methodNotAllowed, queryParseError } from '../errors.js';
import type { Database } from '../core/database.js';
import { DESIGN_IDS } from '../core/names.js';
import type { LocalRecord } from '../core/records.js';
import { winner } from '../core/revtree.js';
import { raw, rowsStream, stream, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import { viewedDocJson, type DocView, type Request } from './request.js';
import type { Services } from './services.js';
import { bodyKeys, checkViewQuerySyntax, dbStateEtag, etagMatches, foldViewParams, openDb, readObject, refuseGrouping, rowsEnvelope, viewJsonParam, viewPositiveInt, viewStaleParam, KEYS_NOT_ARRAY } from './common.js';
import { bodyQueries, requiredQueries, runQueries, withBodyParams } from './multi-query.js';

type Listing = (req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined) => Promise<Reply>;

/** GET, POST with a body's `keys` and other parameters or `queries`, and POST to `.../queries`, of one listing. */
function listingRoute(name: string, listing: Listing): Route {
  const get = (req: Request, p: RouteParams, svc: Services) => listing(req, p, svc, undefined);
  const isQueries = (p: RouteParams) => p.rest.length === 1 && p.rest[0] === 'queries';
  return {
    shape: 'dbHandler', name, allow: 'GET,POST,HEAD',
    methods: {
      GET: async (req, p, svc) => {
        if (isQueries(p)) throw methodNotAllowed('POST');
        return get(req, p, svc);
      },
      POST: async (req, p, svc) => {
        // As couch_httpd_db: a listing's POST body must say it is JSON (CouchDB 2's `/queries` need not).
        if (!isQueries(p)) req.requireJsonContentType();
        const body = await readObject(req, svc);
        const queries = isQueries(p) ? requiredQueries(body) : bodyQueries(body);
        if (queries) return runQueries(req, p, svc, queries, get);
        return listing(withBodyParams(req, body), p, svc, bodyKeys(body));
      },
    },
  };
}

export const allDocsRoutes: Route[] = [
  listingRoute('_all_docs', (req, p, svc, keys) => allDocs(req, p, svc, keys, undefined)),
  listingRoute('_design_docs', (req, p, svc, keys) => allDocs(req, p, svc, keys, DESIGN_DOCS)),
  listingRoute('_local_docs', localDocs),
];

/** Ids from `low` (inclusive) up to `high` (exclusive), in the byte order listings use. */
interface IdSpan {
  low: string;
  high: string;
}

const DESIGN_DOCS: IdSpan = DESIGN_IDS;
const LOCAL_DOCS: IdSpan = { low: '_local/', high: '_local0' };

const byteLess = (a: string, b: string): boolean => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;

/** The query's bounds narrowed to a span of ids (a bound outside it moves to its edge). */
function within(q: AllDocsQuery, span: IdSpan): AllDocsQuery {
  if (!q.descending) {
    const start = q.start === undefined || byteLess(q.start, span.low) ? span.low : q.start;
    const past = q.end === undefined || !byteLess(q.end, span.high);
    return { ...q, start, end: past ? span.high : q.end, inclusiveEnd: past ? false : q.inclusiveEnd };
  }
  const start = q.start === undefined || !byteLess(q.start, span.high) ? span.high : q.start;
  const below = q.end === undefined || byteLess(q.end, span.low);
  return { ...q, start, end: below ? span.low : q.end, inclusiveEnd: below ? true : q.inclusiveEnd };
}

export interface AllDocsQuery {
  start: string | undefined;
  end: string | undefined;
  inclusiveEnd: boolean;
  descending: boolean;
  skip: number;
  limit: number | undefined;
  includeDocs: boolean;
  conflicts: boolean;
  /** Embed attachment data / encoding info in included documents. */
  attachments: boolean;
  attEncodingInfo: boolean;
  updateSeq: boolean;
  keys: unknown[] | undefined;
  /** How the caller may see embedded documents (Request.docView). */
  docView: DocView | undefined;
}

/** `_all_docs` parameters as couch_mrview_http:parse_params reads them (CouchDB 3's `_all_dbs` too). */
export function parseAllDocsQuery(given: Request, bodyKeys: unknown[] | undefined): AllDocsQuery {
  checkViewQuerySyntax(given);
  const req = foldViewParams(given);
  const keyParam = viewJsonParam(req, 'key');
  const keysParam = viewJsonParam(req, 'keys');
  const limit = viewPositiveInt(req, 'limit');
  const skip = viewPositiveInt(req, 'skip') ?? 0;
  viewStaleParam(req);
  // couch_mrview_util:validate_args' checks of a map view, in its order.
  if (req.has('reduce') && req.bool('reduce')) throw queryParseError('Reduce is invalid for map-only views.');
  if (keysParam !== undefined && !Array.isArray(keysParam)) throw queryParseError(KEYS_NOT_ARRAY);
  let startkey = viewJsonParam(req, req.has('startkey') ? 'startkey' : 'start_key');
  let endkey = viewJsonParam(req, req.has('endkey') ? 'endkey' : 'end_key');
  if (keyParam !== undefined) {
    startkey = keyParam;
    endkey = keyParam;
  }
  // A query string's `keys` replaces a body's (couch_mrview_http:parse_qs folds it over them).
  const keys = req.has('keys') ? (keysParam as unknown[]) : bodyKeys;
  if (keys !== undefined && keys.length > 0 && (startkey !== undefined || endkey !== undefined)) {
    throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  refuseGrouping(req);
  // As CouchDB: a bound that is not a string (no id equals it) falls back to the *_docid one.
  const startDocId = req.has('startkey_docid') ? req.string('startkey_docid') : req.string('start_key_doc_id');
  const endDocId = req.has('endkey_docid') ? req.string('endkey_docid') : req.string('end_key_doc_id');
  return {
    start: typeof startkey === 'string' ? startkey : startDocId,
    end: typeof endkey === 'string' ? endkey : endDocId,
    // As in CouchDB, `key` is startkey = endkey; inclusive_end=false then leaves nothing.
    inclusiveEnd: req.bool('inclusive_end', true),
    descending: req.bool('descending'),
    skip,
    limit,
    includeDocs: req.bool('include_docs'),
    docView: req.docView,
    conflicts: req.bool('conflicts'),
    attachments: req.bool('attachments'),
    attEncodingInfo: req.bool('att_encoding_info'),
    updateSeq: req.bool('update_seq'),
    keys,
  };
}

async function allDocs(req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined, span: IdSpan | undefined): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  // The parameters are checked before the ETag is (couch_mrview:query_all_docs validates them
  // before its preflight function compares ETags): a bad query is a 400, never a 304.
  const result = await queryAllDocs(req, db, bodyKeys, span);
  const etag = result.etag;
  if (etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  const { total_rows: totalRows, offset, update_seq: updateSeq } = result.head;
  const top = `{"total_rows":${totalRows},${offset === undefined ? '' : `"offset":${offset},`}`
    + `${updateSeq === undefined ? '' : `"update_seq":${updateSeq},`}"rows":[\r\n`;
  return rowsStream(200, rowsEnvelope(top, result.rows, ']}\n'), { ETag: etag });
}

/** An `_all_docs` answer as a list function reads it: the head's members and each row's JSON text. */
export interface AllDocsResult {
  etag: string;
  head: { total_rows: number; offset?: number; update_seq?: number };
  rows: AsyncIterable<string>;
}

/**
 * `_all_docs` with the request's parameters (a span of ids narrows it: `_design_docs`). For a
 * list (`forList`), a key with no document is a row of its key alone: a list's rows keep only
 * id, key, value and doc (couch_mrview_show:send_list_row), so the `error` goes.
 */
export async function queryAllDocs(req: Request, db: Database, bodyKeys: unknown[] | undefined, span?: IdSpan, forList = false): Promise<AllDocsResult> {
  const parsed = parseAllDocsQuery(req, bodyKeys);
  const q = span && !parsed.keys ? within(parsed, span) : parsed;
  // Taken before anything is read, so the ETag never names a later state than the answer's.
  const etag = dbStateEtag(db);
  const counts = new SpanCounts(db, span);
  const totalRows = await counts.total();
  const updateSeq = db.updateSeq;
  // CouchDB sends `offset` with the first row; a keys query that yields no row has none.
  const offset = q.keys ? (q.keys.length > q.skip ? 0 : undefined) : await rangeOffset(counts, q);
  const rows = q.keys ? keyedRows(db, q, span, forList) : rangeRows(db, q);
  return {
    etag,
    head: { total_rows: totalRows, ...(offset === undefined ? {} : { offset }), ...(q.updateSeq ? { update_seq: updateSeq } : {}) },
    rows,
  };
}

/** Live documents counted within a span of ids (the whole database without one). */
class SpanCounts {
  constructor(private readonly db: Database, private readonly span: IdSpan | undefined) {}

  async total(): Promise<number> {
    if (!this.span) return this.db.docCount;
    return (await this.db.countLiveBefore(this.span.high, false)) - (await this.db.countLiveBefore(this.span.low, false));
  }

  /** Documents of the span before `start` (after it, descending). */
  async before(start: string | undefined, descending: boolean): Promise<number> {
    const all = await this.db.countLiveBefore(start, descending);
    if (!this.span) return all;
    const outside = await this.db.countLiveBefore(descending ? this.span.high : this.span.low, descending);
    // A start past the span's far edge counts every document of the span, no more.
    return Math.max(0, Math.min(all - outside, await this.total()));
  }
}

/**
 * The rows before the first one returned: those before the start key plus the skipped ones, but
 * never past the end of the range (CouchDB then reports where its scan stopped).
 */
async function rangeOffset(counts: SpanCounts, q: AllDocsQuery): Promise<number> {
  const before = await counts.before(q.start, q.descending);
  if (q.skip === 0) return before;
  let throughEnd: number;
  if (q.end === undefined) throughEnd = await counts.total();
  else if (!q.descending) throughEnd = await counts.before(q.inclusiveEnd ? `${q.end}\u0000` : q.end, false);
  else if (!q.inclusiveEnd) throughEnd = await counts.before(q.end, true);
  else throughEnd = (await counts.total()) - (await counts.before(q.end, false));
  return Math.min(before + q.skip, Math.max(before, throughEnd));
}


/** How included documents are rendered: conflicts and attachment details only when asked. */
function docOptions(q: AllDocsQuery): { conflicts: boolean; attachments: boolean; attEncodingInfo: boolean } {
  return { conflicts: q.conflicts, attachments: q.attachments, attEncodingInfo: q.attEncodingInfo };
}

async function* rangeRows(db: Database, q: AllDocsQuery): AsyncIterable<string> {
  const range = db.allDocs({ start: q.start, end: q.end, inclusiveEnd: q.inclusiveEnd, descending: q.descending, skip: q.skip, limit: q.limit });
  for await (const rows of range) {
    const docs = !q.includeDocs ? undefined
      : q.conflicts || q.attachments || q.attEncodingInfo
        ? await Promise.all(rows.map(({ id, rev }) => db.openDoc(id, { rev, ...docOptions(q) }).catch(() => undefined)))
      : await db.renderKnownMany(rows.map(({ id, rev }) => ({ id, rev, deleted: false })));
    const parts = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const { id, rev } = rows[i]!;
      const idJson = JSON.stringify(id);
      let row = `{"id":${idJson},"key":${idJson},"value":{"rev":"${rev}"}`;
      if (docs) row += `,"doc":${docs[i] ? viewedDocJson(q.docView, docs[i]!.json) : 'null'}`;
      parts[i] = `${row}}`;
    }
    yield parts.join(',\r\n');
  }
}

/** Rows for a keys query, joined, in one chunk per key. */
async function* keyedRows(db: Database, q: AllDocsQuery, span: IdSpan | undefined, forList: boolean): AsyncIterable<string> {
  let keys = q.descending ? [...q.keys!].reverse() : q.keys!;
  keys = keys.slice(q.skip, q.limit === undefined ? undefined : q.skip + q.limit);
  for (const key of keys) {
    const keyJson = JSON.stringify(key);
    const inSpan = typeof key === 'string' && (!span || (!byteLess(key, span.low) && byteLess(key, span.high)));
    const info = inSpan ? await db.docInfo(key) : undefined;
    if (!info) {
      yield forList ? `{"key":${keyJson}}` : `{"key":${keyJson},"error":"not_found"}`;
      continue;
    }
    const win = winner(info.tree)!;
    const idJson = JSON.stringify(info.id);
    if (win.deleted) {
      yield `{"id":${idJson},"key":${keyJson},"value":{"rev":"${win.rev}","deleted":true}${q.includeDocs ? ',"doc":null' : ''}}`;
      continue;
    }
    let row = `{"id":${idJson},"key":${keyJson},"value":{"rev":"${win.rev}"}`;
    if (q.includeDocs) row += `,"doc":${viewedDocJson(q.docView, (await db.openFromInfo(info, docOptions(q))).json)}`;
    yield `${row}}`;
  }
}

/**
 * `_local_docs`: the database's `_local` documents by id, with `_all_docs`' parameters. They are
 * not counted (CouchDB answers `total_rows` and `offset` as null) and have no sequence.
 */
async function localDocs(req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const parsed = parseAllDocsQuery(req, bodyKeys);
  const q = parsed.keys ? parsed : within(parsed, LOCAL_DOCS);
  const head = `{"total_rows":null,"offset":null,${q.updateSeq ? `"update_seq":${db.updateSeq},` : ''}"rows":[\r\n`;
  const row = (rec: LocalRecord): string => {
    const idJson = JSON.stringify(rec.id);
    return `{"id":${idJson},"key":${idJson},"value":{"rev":"0-${rec.rev}"}${q.includeDocs ? `,"doc":${db.openLocal(rec)}` : ''}}`;
  };
  async function* rows(): AsyncIterable<string> {
    if (q.keys) {
      let keys = q.descending ? [...q.keys].reverse() : q.keys;
      keys = keys.slice(q.skip, q.limit === undefined ? undefined : q.skip + q.limit);
      for (const key of keys) {
        const rec = typeof key === 'string' && key.startsWith('_local/') ? await db.getLocal(key) : undefined;
        yield rec ? row(rec) : `{"key":${JSON.stringify(key)},"error":"not_found"}`;
      }
      return;
    }
    const range = db.localDocs({ start: q.start, end: q.end, inclusiveEnd: q.inclusiveEnd, descending: q.descending, skip: q.skip, limit: q.limit });
    for await (const recs of range) yield recs.map(row).join(',\r\n');
  }
  return rowsStream(200, rowsEnvelope(head, rows(), ']}\n'));
}
