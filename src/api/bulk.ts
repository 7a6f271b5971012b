/** `_bulk_docs` and `_bulk_get`: many documents in one request. */
import { badRequest, CouchError } from '../errors.js';
import { parseIncomingDoc, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import { canonicalRev } from '../core/revtree.js';
import type { Database, EditResult, OpenOptions, OpenedDoc } from '../core/database.js';
import { json } from './reply.js';
import type { Route } from './route.js';
import type { Request } from './request.js';
import { durableWrite, maxDocumentSize, openDb, readObject, editDocs } from './common.js';
import { openOptions } from './documents.js';

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
        const parts: string[] = [];
        for (const item of requests) {
          // An item must be an object with members: CouchDB matches a non-empty one only.
          if (item === null || typeof item !== 'object' || Array.isArray(item) || Object.keys(item).length === 0) {
            parts.push(`{"id":null,"docs":[${bulkGetError(null, null, 'bad_request', 'document must be a JSON object')}]}`);
            continue;
          }
          const r = item as { id?: unknown; rev?: unknown; atts_since?: unknown };
          if (r.id === undefined || r.id === null) {
            parts.push(`{"id":null,"docs":[${bulkGetError(null, null, 'bad_request', 'document id missed')}]}`);
            continue;
          }
          const id = r.id;
          parts.push(`{"id":${JSON.stringify(id)},"docs":[${(await bulkGetOne(db, id, r.rev, r.atts_since, options)).join(',')}]}`);
        }
        return json(200, `{"results":[${parts.join(',')}]}`);
      },
    },
  },
];

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

/**
 * One `_bulk_get` item as CouchDB 2 answers it: the asked revision, or every leaf (conflicts and
 * deletions included) when no `rev` is given; errors name the id and rev they concern.
 */
async function bulkGetOne(db: Database, id: unknown, revValue: unknown, attsSinceValue: unknown, options: OpenOptions): Promise<string[]> {
  try {
    validateDocId(id);
  } catch (err) {
    if (!(err instanceof CouchError)) throw err;
    return [bulkGetError(id, null, err.error, err.reason)];
  }
  const rev = typeof revValue === 'string' ? canonicalRev(revValue) : undefined;
  if (revValue !== undefined && rev === undefined) return [bulkGetError(id, revValue, 'bad_request', 'Invalid rev format')];
  // A replicator names, per document, the revisions whose attachments it already has.
  const attsSince = bulkGetAttsSince(attsSinceValue);
  if ('error' in attsSince) return [bulkGetError(id, attsSince.rev, 'bad_request', attsSince.error)];
  const itemOptions = attsSince.revs.length > 0 ? { ...options, attsSince: attsSince.revs } : options;
  let results: ({ ok: OpenedDoc } | { missing: string })[];
  try {
    results = await db.openRevs(id, rev === undefined ? 'all' : [rev], itemOptions);
  } catch (err) {
    if (!(err instanceof CouchError) || err.status !== 404) throw err;
    results = [];
  }
  // CouchDB 2 prints the absent rev of an unknown document as the string "undefined".
  if (results.length === 0) return [bulkGetError(id, rev ?? 'undefined', 'not_found', 'missing')];
  return results.map((o) => ('ok' in o ? `{"ok":${o.ok.json}}` : bulkGetError(id, o.missing, 'not_found', 'missing')));
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
