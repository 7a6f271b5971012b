/** `_bulk_docs` and `_bulk_get`: many documents in one request. */
import { badRequest, CouchError } from '../errors.js';
import { parseIncomingDoc, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import { canonicalRev } from '../core/revtree.js';
import type { Database, EditResult, OpenOptions, OpenedDoc } from '../core/database.js';
import { json, stream, type Reply } from './reply.js';
import type { Route } from './route.js';
import type { Request } from './request.js';
import { durableWrite, maxDocumentSize, openDb, readObject, editDocs } from './common.js';
import { errorPart, openOptions, revisionPart } from './documents.js';
import { newBoundary, writeMultipart, type OutgoingPart } from './multipart.js';

export const bulkRoutes: Route[] = [
  {
    shape: 'dbHandler', name: '_bulk_docs',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        svc.stats.collector.bulkRequests++;
        req.requireJsonContentType();
        const body = await readObject(req, svc);
        const docsJson = body['docs'];
        if (docsJson === undefined) throw badRequest("Missing JSON list of 'docs'");
        // CouchDB 1.6 failed on these with a 500; CouchDB 2's reasons.
        if (!Array.isArray(docsJson)) throw badRequest('`docs` parameter must be an array.');
        const newEdits = body['new_edits'] ?? true;
        if (typeof newEdits !== 'boolean') throw badRequest('`new_edits` parameter must be a boolean.');
        const allOrNothing = body['all_or_nothing'] === true;
        const maxSize = maxDocumentSize(svc);

        const docs: IncomingDoc[] = docsJson.map((value) => {
          const doc = parseIncomingDoc(value);
          // An interactive edit names its revision by `_rev` alone: couch_httpd_db's _bulk_docs
          // reads it again from the object, so `_revisions` neither names nor extends it.
          if (newEdits && doc.revisions !== undefined) revOfMemberOnly(doc, value);
          if (doc.id === undefined || doc.id === '') doc.id = svc.uuids.next(); // "" counts as absent, as in CouchDB
          validateDocId(doc.id);
          if (doc.bodyJson.length > maxSize) throw new CouchError(413, 'too_large', `Document too large: ${doc.id}`);
          return doc;
        });

        const durable = durableWrite(req, svc);
        const results: (EditResult | undefined)[] = new Array(docs.length);
        // _local documents are not revisioned and take their own path.
        const regular: IncomingDoc[] = [];
        const regularIndex: number[] = [];
        for (let i = 0; i < docs.length; i++) {
          const doc = docs[i]!;
          if (!isLocalId(doc.id!)) {
            regular.push(doc);
            regularIndex.push(i);
            continue;
          }
          try {
            results[i] = { id: doc.id!, ok: true, rev: await db.putLocal(doc, durable), changed: true };
          } catch (err) {
            if (!(err instanceof CouchError)) throw err;
            results[i] = { id: doc.id!, ok: false, error: err.error, reason: err.reason, status: err.status };
          }
        }
        const edited = await editDocs(req, svc, db, regular, { newEdits, allOrNothing, durable });
        edited.forEach((r, j) => { results[regularIndex[j]!] = r; });

        // all_or_nothing wrote nothing if any document failed (a conflict only from a `_rev` of a
        // document that does not exist: others merge).
        // Refusals of an aborted or a replicated update name the revision each document was
        // sent with ("0-" for none), as couch_db's {{Id, Rev}, Error} results do.
        const refusals = () => results.flatMap((r, i) => (r && !r.ok ? [{ id: r.id, rev: docs[i]!.rev ?? '0-', error: r.error, reason: r.reason }] : []));
        if (allOrNothing && results.some((r) => r && !r.ok)) return json(417, refusals());
        if (!newEdits) return json(201, refusals());
        return json(201, results.filter((r): r is EditResult => r !== undefined).map(resultJson));
      },
    },
  },
  {
    shape: 'dbHandler', name: '_bulk_get',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        req.requireJsonContentType();
        const body = await readObject(req, svc);
        const requests = body['docs'];
        if (requests === undefined) throw badRequest("Missing JSON list of 'docs'.");
        refuseItemQueryParams(req);
        if (!Array.isArray(requests)) throw badRequest('`docs` member must be an array.');
        const options = { ...openOptions(req), rev: undefined };
        const multipartType = bulkGetMultipartType(req);
        const items: BulkGetItem[] = [];
        for (const item of requests) {
          // An item must be an object with members: CouchDB matches a non-empty one only.
          if (item === null || typeof item !== 'object' || Array.isArray(item) || Object.keys(item).length === 0) {
            items.push({ id: null, error: { rev: null, error: 'bad_request', reason: 'document must be a JSON object' } });
            continue;
          }
          const r = item as { id?: unknown; rev?: unknown; atts_since?: unknown };
          if (r.id === undefined || r.id === null) {
            items.push({ id: null, error: { rev: null, error: 'bad_request', reason: 'document id missed' } });
            continue;
          }
          items.push(await bulkGetOne(db, r.id, r.rev, r.atts_since, options, multipartType !== undefined));
        }
        if (multipartType !== undefined) return bulkGetMultipart(db, items, multipartType);
        return json(200, `{"results":[${items.map(bulkGetItemJson).join(',')}]}`);
      },
    },
  },
];

/**
 * An interactive `_bulk_docs` document edits the revision its `_rev` member names, or none, its
 * `_revisions` dropped: couch_httpd_db's _bulk_docs (new_edits true) sets the revisions from
 * `_rev` alone after couch_doc:from_json_obj, with couch_doc:parse_rev.
 */
function revOfMemberOnly(doc: IncomingDoc, value: unknown): void {
  const member = (value as Record<string, unknown>)['_rev'];
  const rev = typeof member === 'string' ? canonicalRev(member) : undefined;
  // couch_doc:parse_rev's refusal: from_json_obj may have skipped a `_rev` after `_revisions`.
  if (member !== undefined && rev === undefined) throw badRequest('Invalid rev format');
  doc.rev = rev;
  doc.revisions = undefined;
}

/**
 * The query parameters that name revisions or writes, which only each item may give: a 400
 * naming the first of them in the query, as chttpd_db's validate_query_param refuses them.
 */
function refuseItemQueryParams(req: Request): void {
  for (const name of req.query.keys()) {
    if (ITEM_ONLY_QUERY_PARAMS.has(name)) throw badRequest(`"${name}" query parameter is not acceptable`);
  }
}

const ITEM_ONLY_QUERY_PARAMS: ReadonlySet<string> = new Set(['open_revs', 'new_edits', 'w', 'rev', 'atts_since']);

/** One `_bulk_get` item's answer: the revisions it asked for (found or missing), or one error for the whole item. */
type BulkGetItem =
  | { id: unknown; revisions: ({ ok: OpenedDoc } | { missing: string })[] }
  | { id: unknown; error: { rev: unknown; error: string; reason: string } };

/**
 * One `_bulk_get` item as CouchDB 2 answers it: the asked revision, or every leaf (conflicts and
 * deletions included) when no `rev` is given. For a multipart answer, the revisions are opened
 * with their attachments' content following, as send_docs_multipart_bulk_get opens them.
 */
async function bulkGetOne(db: Database, id: unknown, revValue: unknown, attsSinceValue: unknown, options: OpenOptions, multipart: boolean): Promise<BulkGetItem> {
  try {
    validateDocId(id);
  } catch (err) {
    if (!(err instanceof CouchError)) throw err;
    return { id, error: { rev: null, error: err.error, reason: err.reason } };
  }
  const rev = typeof revValue === 'string' ? canonicalRev(revValue) : undefined;
  if (revValue !== undefined && rev === undefined) return { id, error: { rev: revValue, error: 'bad_request', reason: 'Invalid rev format' } };
  // A replicator names, per document, the revisions whose attachments it already has.
  const attsSince = bulkGetAttsSince(attsSinceValue);
  if ('error' in attsSince) return { id, error: { rev: attsSince.rev, error: 'bad_request', reason: attsSince.error } };
  const sinceOptions = attsSince.revs.length > 0 ? { ...options, attsSince: attsSince.revs } : options;
  // chttpd_db's multipart answer always carries the content (what atts_since lacks), encoded.
  const itemOptions: OpenOptions = multipart ? { ...sinceOptions, attachments: true, attachmentsAs: 'follows', attEncodingInfo: true } : sinceOptions;
  let revisions: ({ ok: OpenedDoc } | { missing: string })[];
  try {
    revisions = await db.openRevs(id, rev === undefined ? 'all' : [rev], itemOptions);
  } catch (err) {
    if (!(err instanceof CouchError) || err.status !== 404) throw err;
    revisions = [];
  }
  // An asked revision of a document CouchDB does not have is missing, as couch_db's
  // open_doc_revs answers it; no leaves at all is an error of the item, whose absent rev
  // CouchDB 2 prints as the string "undefined" (chttpd_db bulk_get_rev_error).
  if (revisions.length === 0 && rev !== undefined) revisions = [{ missing: rev }];
  if (revisions.length === 0) return { id, error: { rev: 'undefined', error: 'not_found', reason: 'missing' } };
  return { id, revisions };
}

/** An item of the JSON answer: `{id, docs}`, errors naming the id and rev they concern. */
function bulkGetItemJson(item: BulkGetItem): string {
  const docs = 'error' in item
    ? [bulkGetError(item.id, item.error.rev, item.error.error, item.error.reason)]
    : item.revisions.map((o) => ('ok' in o ? `{"ok":${o.ok.json}}` : bulkGetError(item.id, o.missing, 'not_found', 'missing')));
  return `{"id":${JSON.stringify(item.id)},"docs":[${docs.join(',')}]}`;
}

/**
 * The multipart type a `_bulk_get` answers in, or undefined for JSON: chttpd_db's
 * bulk_get_is_multipart answers multipart only to a client that takes multipart/mixed or
 * multipart/related but not application/json (so no Accept header, or `*\/*`, keeps JSON);
 * bulk_get_ret_multipart then names multipart/mixed when the client takes it.
 */
function bulkGetMultipartType(req: Request): 'multipart/mixed' | 'multipart/related' | undefined {
  if (req.acceptsContentType('application/json')) return undefined;
  if (req.acceptsContentType('multipart/mixed')) return 'multipart/mixed';
  if (req.acceptsContentType('multipart/related')) return 'multipart/related';
  return undefined;
}

/**
 * The multipart answer, as chttpd_db's bulk_get_ret_multipart streams it: each found revision
 * a part (send_docs_multipart_bulk_get: multipart/related, with X-Doc-Id and X-Rev-Id, when
 * attachment content follows, else the JSON alone), each missing revision an error part with
 * its rev, each failed item an error part with the bare `{id, rev, error, reason}`; parts
 * framed with a CRLF before every delimiter, and no closing delimiter when there were no items.
 */
function bulkGetMultipart(db: Database, items: BulkGetItem[], type: string): Reply {
  const boundary = bulkGetBoundary();
  const parts: OutgoingPart[] = [];
  for (const item of items) {
    if ('error' in item) {
      parts.push(errorPart(JSON.stringify({ id: item.id, ...item.error })));
      continue;
    }
    // One inner boundary per item, as send_docs_multipart_bulk_get draws it.
    const inner = bulkGetBoundary();
    for (const o of item.revisions) {
      if ('ok' in o) parts.push(revisionPart(db, o.ok, (b) => bulkGetRelatedHeaders(o.ok, b), inner));
      else parts.push(errorPart(JSON.stringify({ rev: o.missing, error: 'not_found', reason: 'missing' })));
    }
  }
  const body = writeMultipart(boundary, parts, { crlfBeforeFirst: true, crlfAfterClose: true, emptyWithoutParts: true });
  return stream(200, body, {}, `${type}; boundary="${boundary}"`);
}

/**
 * The headers of a revision's multipart/related part, as chttpd_db's bulk_get_multipart_headers
 * writes them: the boundary unquoted. An id with a line break (or NUL) cannot go in a header
 * line, so its X-Doc-Id is left out; the document JSON names it anyway.
 */
function bulkGetRelatedHeaders(doc: OpenedDoc, boundary: string): Record<string, string> {
  return {
    ...(/[\r\n\0]/.test(doc.id) ? {} : { 'X-Doc-Id': doc.id }),
    'X-Rev-Id': doc.rev,
    'Content-Type': `multipart/related; boundary=${boundary}`,
  };
}

/** A boundary as chttpd_db's bulk_get_multipart_boundary draws one: a random one after `--`. */
function bulkGetBoundary(): string {
  return `--${newBoundary()}`;
}

/**
 * An item's `atts_since` as CouchDB 2's chttpd_db parse_field reads it: absent or a list of
 * revisions; the error names the offending entry (or the whole value when it is no list).
 */
function bulkGetAttsSince(value: unknown): { revs: string[] } | { error: string; rev: unknown } {
  if (value === undefined) return { revs: [] };
  if (!Array.isArray(value)) return { error: 'att_since value must be array of revs.', rev: value };
  const revs: string[] = [];
  for (const entry of value as unknown[]) {
    const rev = typeof entry === 'string' ? canonicalRev(entry) : undefined;
    if (rev === undefined) return { error: 'Invalid rev format', rev: entry };
    revs.push(rev);
  }
  return { revs };
}

function bulkGetError(id: unknown, rev: unknown, error: string, reason: string): string {
  return JSON.stringify({ error: { id, rev, error, reason } });
}

function resultJson(r: EditResult | undefined): Record<string, unknown> {
  if (!r) return {};
  return r.ok ? { ok: true, id: r.id, rev: r.rev } : { id: r.id, error: r.error, reason: r.reason };
}
