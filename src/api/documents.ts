/** Document endpoints: GET/HEAD/PUT/DELETE/COPY of `/{db}/{docid}`, design and local documents. */
import { badContentType, badRequest, CouchError, invalidJson, notFound } from '../errors.js';
import { emptyDoc, parseIncomingDoc, type AttachmentInput, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import type { Database, OpenOptions, OpenedDoc } from '../core/database.js';
import { winner } from '../core/revtree.js';
import { json, raw, stream, type HeaderMap, type Reply } from './reply.js';
import { boundaryOf, newBoundary, parseHeaderValue, parseMultipart, quoteHeaderParam, writeMultipart, type OutgoingPart } from './multipart.js';
import { parseJson } from './request.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import {
  absoluteUrl, countRead, docPath, durableWrite, etagMatches, givenRev, maxDocumentSize, openDb, quote, raiseResult, requestLimit, requestRev, editDocs } from './common.js';
import { checkDocSize } from './databases.js';

/**
 * A GET of `/{db}/_design%2F{name}...` (the id's slash encoded): CouchDB's 301 to the same path
 * with the slash plain, query string kept.
 */
export async function redirectToPlainDesignPath(req: Request, _p: RouteParams, svc: Services): Promise<Reply> {
  // The second path segment is the one the router read as `_design/...`: its first encoded
  // slash (however `_design` itself is spelt) becomes a plain one.
  const at = req.url.indexOf('/', 1) + 1;
  const slash = at + req.url.slice(at).search(/%2F/i);
  const location = `${req.url.slice(0, at)}_design/${req.url.slice(slash + 3)}`;
  return raw(301, '', 'text/plain', { Location: absoluteUrl(req, location, svc.config) });
}

export const documentRoutes: Route[] = [
  {
    shape: 'document',
    methods: { GET: getDocument, PUT: putDocument, DELETE: deleteDocument, COPY: copyDocument },
  },
];

/** The read options a request asks for (`meta` = conflicts + deleted_conflicts + revs_info). */
export function openOptions(req: Request): OpenOptions {
  const meta = req.flag('meta');
  const rev = givenRev(req.string('rev'));
  const attsSinceParam = req.string('atts_since');
  return {
    attachments: req.flag('attachments'),
    attsSince: attsSinceParam === undefined ? undefined : revisionList(attsSinceParam),
    attEncodingInfo: req.flag('att_encoding_info'),
    rev,
    revs: req.flag('revs'),
    revsInfo: req.flag('revs_info') || meta,
    conflicts: req.flag('conflicts') || meta,
    deletedConflicts: req.flag('deleted_conflicts') || meta,
    localSeq: req.flag('local_seq'),
    latest: req.flag('latest'),
  };
}

/**
 * The document query as couch_httpd_db:parse_doc_query reads it for a document or attachment
 * GET: the read options and `open_revs`, a bad `rev`, `open_revs` or `atts_since` being a 400.
 */
export function parseDocQuery(req: Request): { options: OpenOptions; openRevs: 'all' | string[] | undefined } {
  const options = openOptions(req);
  return { options, openRevs: req.has('open_revs') ? openRevsParam(req) : undefined };
}

async function getDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  countRead(svc, db);
  if (isLocalId(p.docId)) {
    // CouchDB parses the query as for any document (a bad rev or atts_since is a 400), then
    // looks revisions up in the document tree, where no _local document is.
    const { options: { rev }, openRevs: revs } = parseDocQuery(req);
    if (revs !== undefined && (revs === 'all' || revs.length > 0)) {
      return json(200, revs === 'all' ? [] : revs.map((r) => ({ missing: r })));
    }
    if (rev !== undefined) throw notFound('missing');
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    const localEtag = quote(`0-${rec.rev}`);
    if (etagMatches(req, localEtag)) return raw(304, '', 'application/json', { ETag: localEtag });
    return json(200, db.openLocal(rec, req.flag('revs')), { ETag: localEtag });
  }
  const { options: asked, openRevs: revs } = parseDocQuery(req);
  // An empty list asks for nothing in particular: the document, as without open_revs.
  if (revs !== undefined && (revs === 'all' || revs.length > 0)) return openRevs(req, db, p.docId, revs, withoutMeta(asked));
  const options = asked.rev === undefined ? asked : withoutMeta(asked);

  // Attachment content goes as multipart/related whenever the client takes it, as mochiweb's
  // accepts_content_type decides for couch_httpd_db:send_doc_efficiently: no Accept header, or
  // */*, takes it too; only e.g. `Accept: application/json` keeps the inline Base64 JSON. The
  // JSON of such an answer always carries the encoding of compressed attachments.
  const multipart = (options.attachments || options.attsSince !== undefined) && req.acceptsContentType('multipart/related');
  const doc = await db.openDoc(p.docId, multipart ? { ...options, attachmentsAs: 'follows', attEncodingInfo: true } : options);
  // CouchDB sends an ETag, and honours If-None-Match, only when the answer carries no meta
  // information (couch_httpd_db:send_doc).
  const withMeta = hasMeta(doc, options);
  const etag = quote(doc.rev);
  if (!withMeta && etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  const headers: HeaderMap = withMeta ? {} : { ETag: etag };
  // Without content to follow (no attachments, or all older than atts_since) the answer is JSON.
  if (doc.follows && doc.follows.length > 0) return relatedReply(db, doc, headers);
  return json(200, doc.json, headers);
}

/**
 * The options of a read naming its revisions (`rev`, `open_revs`): couch_httpd_db:couch_doc_open
 * then reads through couch_db:open_doc_revs, whose make_doc gives the revision no meta
 * information, so revs_info, conflicts, deleted_conflicts and local_seq add nothing (and the
 * answer keeps its ETag); revs, latest and the attachment options still apply.
 */
function withoutMeta(options: OpenOptions): OpenOptions {
  return { ...options, revsInfo: false, conflicts: false, deletedConflicts: false, localSeq: false };
}

/**
 * Whether an opened document carries meta information: `_revs_info` and `_local_seq` always do
 * when asked; `conflicts`/`deleted_conflicts` only when there actually are such revisions.
 */
function hasMeta(doc: OpenedDoc, options: OpenOptions): boolean {
  if (options.revsInfo || options.localSeq) return true;
  if (!options.conflicts && !options.deletedConflicts) return false;
  const fields = JSON.parse(doc.json) as Record<string, unknown>;
  return '_conflicts' in fields || '_deleted_conflicts' in fields;
}

/** `open_revs`: `all`, or a JSON list of revisions. */
function openRevsParam(req: Request): 'all' | string[] {
  const param = req.string('open_revs')!;
  return param === 'all' ? 'all' : revisionList(param);
}

/**
 * A query parameter holding a JSON list of revisions (`open_revs`, `atts_since`), parsed as
 * couch_httpd_db:parse_doc_query does with couch_doc:parse_revs: every entry must be a
 * revision, else the request fails, with CouchDB's reasons.
 */
function revisionList(param: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(param);
  } catch {
    throw invalidJson();
  }
  if (!Array.isArray(parsed)) throw badRequest('Invalid list of revisions');
  return parsed.map((r: unknown) => {
    if (typeof r !== 'string') throw badRequest('Invalid rev format');
    return givenRev(r);
  });
}

async function openRevs(req: Request, db: Database, id: string, revs: 'all' | string[], options: OpenOptions): Promise<Reply> {
  let results: Awaited<ReturnType<Database['openRevs']>>;
  // As CouchDB: multipart whenever the client takes multipart/mixed, wildcards (or no Accept) included.
  const multipart = req.acceptsContentType('multipart/mixed');
  try {
    // A multipart/mixed reply carries attachment content (all of it, or what atts_since lacks)
    // whether or not attachments=true is given, and the encoding of compressed attachments, as
    // CouchDB's send_docs_multipart does.
    results = await db.openRevs(id, revs, multipart ? { ...options, attachments: true, attachmentsAs: 'follows', attEncodingInfo: true } : options);
  } catch (err) {
    // CouchDB answers open_revs=all of a document it does not have with an empty list.
    if (revs !== 'all' || !(err instanceof CouchError) || err.status !== 404) throw err;
    results = [];
  }
  // Found revisions first, then the missing ones (couch_db:open_doc_revs_int).
  results = [...results.filter((r) => 'ok' in r), ...results.filter((r) => !('ok' in r))];
  if (multipart) {
    // What CouchDB's replicator reads: one part per revision, a multipart/related one when the
    // revision's attachment content comes along.
    const boundary = newBoundary();
    const parts: OutgoingPart[] = results.map((r) => ('ok' in r ? revisionPart(db, r.ok) : errorPart(JSON.stringify({ missing: r.missing }))));
    return stream(200, writeMultipart(boundary, parts), {}, `multipart/mixed; boundary="${boundary}"`);
  }
  const parts = results.map((r) => ('ok' in r ? `{"ok":${r.ok.json}}` : JSON.stringify(r)));
  return json(200, `[${parts.join(',')}]`);
}

/**
 * The revision a write names: body `_rev`, `?rev=` or `If-Match`, which must agree, with
 * couch_httpd_db's reasons: body against query first, then either against the If-Match ETag.
 */
function resolveRev(req: Request, doc: IncomingDoc): void {
  const queryRev = givenRev(req.string('rev'));
  if (doc.rev !== undefined && queryRev !== undefined && doc.rev !== queryRev) {
    throw badRequest('Document rev from request body and query string have different values');
  }
  const headerRev = requestRev(req);
  if (doc.rev !== undefined && headerRev !== undefined && doc.rev !== headerRev) {
    throw badRequest('Document rev and etag have different values');
  }
  doc.rev ??= headerRev;
}

async function putDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  validateDocId(p.docId);
  if (req.contentType() === 'multipart/related') return putMultipart(req, p, svc, db);
  checkDocSize(req, svc);
  // max_document_size bounds the body however it is sent: chunked bodies have no Content-Length.
  const body = await req.jsonBody(Math.min(requestLimit(svc), maxDocumentSize(svc)));
  const doc = parseIncomingDoc(body); // a non-object is "Document must be a JSON object", as CouchDB
  // The URL's id wins, but the body's must be a valid one too (couch_doc:transfer_fields).
  if (doc.id !== undefined) validateDocId(doc.id);
  doc.id = p.docId;
  resolveRev(req, doc);
  return writeOne(req, p, svc, db, doc, doc.deleted ? 200 : 201, true);
}

async function deleteDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  // couch_httpd_db's DELETE opens the document first (couch_doc_open): a read.
  countRead(svc, db);
  const doc: IncomingDoc = emptyDoc(p.docId, undefined, true);
  if (isLocalId(p.docId)) {
    // As couch_httpd_db's DELETE, look the document up first: a missing one is a 404.
    if (!(await db.getLocal(p.docId))) throw notFound('missing');
    resolveRev(req, doc);
    return writeOne(req, p, svc, db, doc, 200, false);
  }
  // As CouchDB, look the document up first: a missing or already deleted one is a 404 whatever
  // revision was given, well-formed or not (deleting a tombstone must not stack another
  // tombstone on it).
  const info = await db.docInfo(p.docId);
  if (!info) throw notFound('missing');
  if (winner(info.tree)!.deleted) throw notFound('deleted');
  resolveRev(req, doc);
  // Without a rev the update itself is the conflict (409), after the checks that come first:
  // the users database answers 404 for another user's document, even where it is public.
  return writeOne(req, p, svc, db, doc, 200, false);
}

/**
 * A document with its attachments in one multipart/related body: the JSON part first, then one
 * part per `follows: true` attachment, in the order the JSON lists them. Malformed bodies are a
 * 400 and store nothing.
 */
async function putMultipart(req: Request, p: RouteParams, svc: Services, db: Database): Promise<Reply> {
  const boundary = boundaryOf(req.header('content-type') ?? '');
  // Keep the socket on errors: the client must still read the 400.
  const parts = parseMultipart(req.raw.iterator({ destroyOnReturn: false }), boundary)[Symbol.asyncIterator]();
  const first = await parts.next();
  if (first.done) throw badRequest('Multipart body has no document part');
  // The document part must say it is JSON, as couch_doc:mp_parse_doc requires (CouchDB 2's 415;
  // 1.6's case_clause there was a crash).
  if (parseHeaderValue(first.value.headers['content-type'] ?? '').value !== 'application/json') throw badContentType();
  const doc = parseIncomingDoc(parseJson((await first.value.buffer(maxDocumentSize(svc))).toString('utf8')));
  doc.id = p.docId;
  resolveRev(req, doc);
  // The bytes a part should hold: its stub's length, or encoded_length when it comes gzip'd.
  const declared = (name: string): number | undefined => {
    const entry = doc.attachments?.[name] as { length?: unknown; encoding?: unknown; encoded_length?: unknown } | undefined;
    const length = entry?.encoding === 'gzip' ? entry.encoded_length : entry?.length;
    return typeof length === 'number' ? length : undefined;
  };
  const follow = (name: string): AsyncIterable<Buffer> => (async function* () {
    const next = await parts.next();
    if (next.done) throw badRequest(`Missing attachment part for ${name}`);
    let length = 0;
    for await (const chunk of next.value.body) {
      length += chunk.length;
      yield chunk;
    }
    const expected = declared(name);
    if (expected !== undefined && expected !== length) {
      throw badRequest(`Attachment ${name} is ${length} bytes, its stub says ${expected}`);
    }
  })();
  const reply = await writeOne(req, p, svc, db, doc, doc.deleted ? 200 : 201, true, follow);
  // Whatever follows the last attachment (extra parts, the epilogue) is read and dropped.
  for (let rest = await parts.next(); !rest.done; rest = await parts.next()) await rest.value.skip();
  return reply;
}

/** A document and the content of its `follows` attachments as one multipart/related reply. */
function relatedReply(db: Database, doc: OpenedDoc, headers: HeaderMap): Reply {
  const boundary = newBoundary();
  return stream(200, writeMultipart(boundary, relatedParts(db, doc)), headers, `multipart/related; boundary="${boundary}"`);
}

/**
 * One revision as a part of a multipart/mixed reply (`open_revs`, `_bulk_get`): multipart/related,
 * the JSON then the content of its `follows` attachments, when any content follows, else the
 * JSON alone, as CouchDB's send_docs_multipart and send_docs_multipart_bulk_get choose.
 * `relatedHeaders` gives the headers of a multipart/related part from its boundary; by default
 * send_docs_multipart's quoted Content-Type.
 */
export function revisionPart(
  db: Database,
  doc: OpenedDoc,
  relatedHeaders: (boundary: string) => Record<string, string> = (b) => ({ 'Content-Type': `multipart/related; boundary="${b}"` }),
  boundary: string = newBoundary(),
): OutgoingPart {
  if (doc.follows && doc.follows.length > 0) return { headers: relatedHeaders(boundary), body: writeMultipart(boundary, relatedParts(db, doc)) };
  return { headers: { 'Content-Type': 'application/json' }, body: doc.json };
}

/** A part of a multipart/mixed reply holding an error object, flagged as CouchDB flags it. */
export function errorPart(json: string): OutgoingPart {
  return { headers: { 'Content-Type': 'application/json; error="true"' }, body: json };
}

function* relatedParts(db: Database, doc: OpenedDoc): Iterable<OutgoingPart> {
  // Lower case, byte for byte as CouchDB writes it: clients that split headers naively look it up so.
  yield { headers: { 'content-type': 'application/json' }, body: doc.json };
  for (const att of doc.follows ?? []) {
    yield {
      headers: {
        'Content-Disposition': `attachment; filename=${quoteHeaderParam(att.name)}`,
        'Content-Type': att.contentType,
        'Content-Length': String(att.length),
        ...(att.encoded ? { 'Content-Encoding': 'gzip' } : {}),
      },
      body: db.attachments.read(att.digest, { decode: !att.encoded }),
    };
  }
}

/**
 * Writes one document and answers as CouchDB does: 201 (200 for a deletion), 202 for batch=ok,
 * ETag, and Location for PUT and COPY (not DELETE). As couch_httpd_db:update_doc gives it, the
 * Location names only a document left live (a PUT with `_deleted: true` has none) and comes with
 * a batch=ok answer too.
 */
async function writeOne(
  req: Request, p: RouteParams, svc: Services, db: Database, doc: IncomingDoc, status: number, withLocation: boolean,
  follow?: (name: string) => AsyncIterable<Buffer>,
): Promise<Reply> {
  const id = doc.id!;
  const location: HeaderMap = withLocation && !doc.deleted ? { Location: absoluteUrl(req, docPath(p.db, id), svc.config) } : {};
  if (isLocalId(id)) {
    const rev = await db.putLocal(doc, durableWrite(req, svc));
    return json(status, { ok: true, id, rev }, { ETag: quote(rev), ...location });
  }
  const newEdits = req.flag('new_edits', true);
  // A streamed (multipart) body must be read before answering, so batch mode cannot apply.
  if (req.string('batch') === 'ok' && !follow) {
    void editDocs(req, svc, db, [doc], { newEdits, allOrNothing: false, durable: false }).catch(() => undefined);
    return json(202, { ok: true, id }, location);
  }
  const [result] = await editDocs(req, svc, db, [doc], { newEdits, allOrNothing: false, durable: durableWrite(req, svc) }, follow);
  if (!result!.ok) raiseResult(result!);
  return json(status, { ok: true, id, rev: result!.rev }, { ETag: quote(result!.rev), ...location });
}

async function copyDocument(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const destination = req.header('destination');
  if (!destination) throw badRequest('Destination header is mandatory for COPY.');
  const { id: targetId, rev: targetRev } = parseDestination(destination);
  validateDocId(targetId);
  // couch_httpd_db's COPY opens its source (couch_doc_open): a read, beside the write.
  countRead(svc, db);

  let source: { body: Record<string, unknown>; atts: Map<string, AttachmentInput> | undefined; deleted: boolean };
  if (isLocalId(p.docId)) {
    // CouchDB looks a source revision up in the document tree, where no _local document is.
    if (requestRev(req) !== undefined) throw notFound('missing');
    const rec = await db.getLocal(p.docId);
    if (!rec) throw notFound('missing');
    source = { body: JSON.parse(rec.body) as Record<string, unknown>, atts: undefined, deleted: false };
  } else {
    // A deleted winner is 404 deleted; a deleted revision named by ?rev= is copied as it is, a
    // tombstone (couch_httpd_db:couch_doc_open returns it; update_doc answers 200 for it).
    const opened: OpenedDoc = await db.openDoc(p.docId, { rev: requestRev(req) });
    const parsed = parseIncomingDoc(JSON.parse(opened.json));
    source = { body: parsed.body, atts: copiedAttachments(opened.attachments), deleted: opened.deleted };
  }
  const doc: IncomingDoc = { ...emptyDoc(targetId, targetRev, source.deleted), body: source.body, bodyJson: JSON.stringify(source.body), atts: source.atts };
  return writeOne(req, { ...p, docId: targetId }, svc, db, doc, source.deleted ? 200 : 201, true);
}

/** The source's attachments as content the copy stores again by digest (no upload needed). */
function copiedAttachments(stubsJson: string | undefined): Map<string, AttachmentInput> | undefined {
  if (stubsJson === undefined) return undefined;
  const stubs = JSON.parse(stubsJson) as Record<string, { content_type: string; digest: string; length: number; revpos: number }>;
  // The copy keeps each attachment's revpos, as CouchDB does for content already stored.
  return new Map(Object.entries(stubs).map(([name, s]) => [name, { kind: 'content', contentType: s.content_type, digest: s.digest, length: s.length, revpos: s.revpos, stored: true }]));
}

/**
 * `Destination: id` or `Destination: id?rev=N-x` (the destination's current revision), read as
 * couch_httpd_db:parse_copy_destination_header reads it: the id as written, not percent-decoded
 * (the header's bytes are its UTF-8); after the `?`, one `key=value` whose key is not looked at and
 * whose value must be a revision. Any other query (a second `?`, no `=` or several) made CouchDB
 * 1.6 crash (badmatch): a 400 here.
 */
function parseDestination(header: string): { id: string; rev: string | undefined } {
  if (/^https?:\/\//.test(header)) throw badRequest('Destination URL must be relative.');
  const [idPart, query, ...more] = header.split('?');
  const id = Buffer.from(idPart!, 'latin1').toString('utf8');
  if (query === undefined) return { id, rev: undefined };
  const pair = query.split('=');
  if (more.length > 0 || pair.length !== 2) throw badRequest('Destination may only add ?rev= and a revision to the document id.');
  return { id, rev: givenRev(pair[1]!) };
}
