/** `_bulk_docs` and `_bulk_get`: many documents in one request. */
import { badRequest, CouchError } from '../errors.js';
import { parseIncomingDoc, type IncomingDoc } from '../core/document.js';
import { validateDocId, isLocalId } from '../core/names.js';
import { parseRev } from '../core/revtree.js';
import type { EditResult } from '../core/database.js';
import { json } from './reply.js';
import type { Route } from './route.js';
import { durableWrite, maxDocumentSize, openDb, readObject } from './common.js';
import { openOptions } from './documents.js';

export const bulkRoutes: Route[] = [
  {
    shape: 'dbHandler', name: '_bulk_docs',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db);
        req.requireJsonContentType();
        const body = await readObject(req, svc);
        const docsJson = body['docs'];
        if (!Array.isArray(docsJson)) throw badRequest('POST body must include `docs` parameter.');
        const newEdits = body['new_edits'] === undefined ? true : body['new_edits'] === true;
        const allOrNothing = body['all_or_nothing'] === true;
        const maxSize = maxDocumentSize(svc);

        const docs: IncomingDoc[] = docsJson.map((value) => {
          const doc = parseIncomingDoc(value);
          doc.id ??= svc.uuids.next();
          validateDocId(doc.id);
          if (JSON.stringify(doc.body).length > maxSize) throw new CouchError(413, 'too_large', `Document too large: ${doc.id}`);
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
        const edited = await db.edit(regular, { newEdits, allOrNothing, durable });
        edited.forEach((r, j) => { results[regularIndex[j]!] = r; });

        if (allOrNothing && results.some((r) => r && !r.ok && r.error !== 'conflict')) {
          return json(417, results.filter((r) => r && !r.ok).map(resultJson));
        }
        const out = results.filter((r): r is EditResult => r !== undefined)
          .filter((r) => newEdits || !r.ok)
          .map(resultJson);
        return json(201, out);
      },
    },
  },
  {
    shape: 'dbHandler', name: '_bulk_get',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db);
        const body = await readObject(req, svc);
        const requests = body['docs'];
        if (!Array.isArray(requests)) throw badRequest('`docs` member must be an array.');
        const options = { ...openOptions(req), rev: undefined };
        const parts: string[] = [];
        for (const item of requests) {
          const r = item as { id?: unknown; rev?: unknown };
          if (!r || typeof r !== 'object' || typeof r.id !== 'string') {
            parts.push(`{"id":null,"docs":[{"error":{"id":null,"rev":null,"error":"bad_request","reason":"Document id must be a string"}}]}`);
            continue;
          }
          const id = r.id;
          const rev = typeof r.rev === 'string' ? r.rev : undefined;
          const docs: string[] = [];
          try {
            if (rev !== undefined && !parseRev(rev)) throw badRequest('Invalid rev format');
            if (rev === undefined) {
              // No rev: the winning revision, as GET /db/id would give.
              const doc = await db.openDoc(id, options);
              docs.push(`{"ok":${doc.json}}`);
            } else {
              for (const o of await db.openRevs(id, [rev], options)) {
                docs.push('ok' in o ? `{"ok":${o.ok.json}}`
                  : JSON.stringify({ error: { id, rev: o.missing, error: 'not_found', reason: 'missing' } }));
              }
            }
          } catch (err) {
            if (!(err instanceof CouchError)) throw err;
            docs.push(JSON.stringify({ error: { id, rev: rev ?? null, error: err.error, reason: err.reason } }));
          }
          parts.push(`{"id":${JSON.stringify(id)},"docs":[${docs.join(',')}]}`);
        }
        return json(200, `{"results":[${parts.join(',')}]}`);
      },
    },
  },
];

function resultJson(r: EditResult | undefined): Record<string, unknown> {
  if (!r) return {};
  return r.ok ? { ok: true, id: r.id, rev: r.rev } : { id: r.id, error: r.error, reason: r.reason };
}
