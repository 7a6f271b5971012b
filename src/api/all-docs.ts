/** `_all_docs` (GET and POST with keys): every live document by id, streamed row by row. */
import { badRequest, queryParseError } from '../errors.js';
import type { Database } from '../core/database.js';
import { winner } from '../core/revtree.js';
import { raw, stream, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import { viewedDocJson, type DocView, type Request } from './request.js';
import type { Services } from './services.js';
import { dbStateEtag, etagMatches, openDb, readObject, rowsEnvelope } from './common.js';

export const allDocsRoutes: Route[] = [
  {
    shape: 'dbHandler', name: '_all_docs',
    methods: {
      GET: async (req, p, svc) => allDocs(req, p, svc, undefined),
      POST: async (req, p, svc) => {
        const body = await readObject(req, svc);
        if (body['keys'] !== undefined && !Array.isArray(body['keys'])) throw badRequest('`keys` member must be a array.');
        return allDocs(req, p, svc, body['keys'] as unknown[] | undefined);
      },
    },
  },
];

interface AllDocsQuery {
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

function parseQuery(req: Request, bodyKeys: unknown[] | undefined): AllDocsQuery {
  const keyParam = req.json('key');
  const keysParam = req.json('keys');
  if (keysParam !== undefined && !Array.isArray(keysParam)) throw queryParseError('`keys` must be a JSON array');
  const limit = req.int('limit');
  if (limit !== undefined && limit < 0) throw queryParseError('Invalid value for `limit`: must be a non-negative integer');
  const skip = req.int('skip', 0);
  if (skip < 0) throw queryParseError('Invalid value for `skip`: must be a non-negative integer');
  let startkey = req.has('startkey') ? req.json('startkey') : req.json('start_key');
  let endkey = req.has('endkey') ? req.json('endkey') : req.json('end_key');
  if (keyParam !== undefined) {
    startkey = keyParam;
    endkey = keyParam;
  }
  const keys = bodyKeys ?? (keysParam as unknown[] | undefined);
  if (keys !== undefined && keys.length > 0 && (startkey !== undefined || endkey !== undefined)) {
    throw queryParseError('`keys` is incompatible with `key`, `start_key` and `end_key`');
  }
  // As CouchDB: a bound that is not a string (no id equals it) falls back to the *_docid one.
  const startDocId = req.has('startkey_docid') ? req.string('startkey_docid') : req.string('start_key_doc_id');
  const endDocId = req.has('endkey_docid') ? req.string('endkey_docid') : req.string('end_key_doc_id');
  return {
    start: typeof startkey === 'string' ? startkey : startDocId,
    end: typeof endkey === 'string' ? endkey : endDocId,
    inclusiveEnd: keyParam !== undefined ? true : req.bool('inclusive_end', true),
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

async function allDocs(req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const q = parseQuery(req, bodyKeys);
  const totalRows = db.docCount;
  const updateSeq = db.updateSeq;
  const etag = dbStateEtag(db);
  if (etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  // CouchDB sends `offset` with the first row; a keys query that yields no row has none.
  const offset = q.keys ? (q.keys.length > q.skip ? 0 : undefined) : await rangeOffset(db, q);
  const head = `{"total_rows":${totalRows},${offset === undefined ? '' : `"offset":${offset},`}`
    + `${q.updateSeq ? `"update_seq":${updateSeq},` : ''}"rows":[\r\n`;
  const rows = q.keys ? keyedRows(db, q) : rangeRows(db, q);
  return stream(200, rowsEnvelope(head, rows, ']}\n'), { ETag: etag });
}

/**
 * The rows before the first one returned: those before the start key plus the skipped ones, but
 * never past the end of the range (CouchDB then reports where its scan stopped).
 */
async function rangeOffset(db: Database, q: AllDocsQuery): Promise<number> {
  const before = await db.countLiveBefore(q.start, q.descending);
  if (q.skip === 0) return before;
  let throughEnd: number;
  if (q.end === undefined) throughEnd = db.docCount;
  else if (!q.descending) throughEnd = await db.countLiveBefore(q.inclusiveEnd ? `${q.end}\u0000` : q.end, false);
  else if (!q.inclusiveEnd) throughEnd = await db.countLiveBefore(q.end, true);
  else throughEnd = db.docCount - (await db.countLiveBefore(q.end, false));
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
async function* keyedRows(db: Database, q: AllDocsQuery): AsyncIterable<string> {
  let keys = q.descending ? [...q.keys!].reverse() : q.keys!;
  keys = keys.slice(q.skip, q.limit === undefined ? undefined : q.skip + q.limit);
  for (const key of keys) {
    const keyJson = JSON.stringify(key);
    const info = typeof key === 'string' ? await db.docInfo(key) : undefined;
    if (!info) {
      yield `{"key":${keyJson},"error":"not_found"}`;
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
