/**
 * `_update`: POST, PUT (or any method but GET) on
 * `/{db}/_design/{ddoc}/_update/{func}[/{docid}]` runs `updates.<func>(doc, req)` (doc null
 * when missing), saves the document it returns (through the same write path as any write, so
 * validate_doc_update applies) and answers its response, with `X-Couch-Update-NewRev` and
 * `X-Couch-Id` when it saved (default status 201, 202 for batch=ok).
 */
import { CouchError } from '../errors.js';
import { parseIncomingDoc } from '../core/document.js';
import { isLocalId, validateDocId } from '../core/names.js';
import { shapeResponse } from '../design/response.js';
import type { Reply } from './reply.js';
import { everyMethod, type Route, type RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { durableWrite, editDocs, raiseResult } from './common.js';
import { handlerMethod, openDocFunction, renderedReply, requestJson } from './design-request.js';

export const updateRoutes: Route[] = [
  { shape: 'designHandler', name: '_update', methods: everyMethod(update) },
];

async function update(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  const { db, fn, docId, doc } = await openDocFunction(req, p, svc, 'updates');
  // Any method runs the function as in CouchDB 1.6, except GET (and so HEAD): once the function is
  // found, render.js runUpdate refuses it with method_not_allowed, an error couch_httpd:error_info
  // has no status for, so a 500.
  if (handlerMethod(req) === 'GET') throw new CouchError(500, 'method_not_allowed', 'Update functions do not allow GET');
  const [newDoc, resp] = await fn.update(doc.json, await requestJson(req, svc, db, docId ?? null));
  // Only an object is a document to save; anything else saves nothing (couch_mrview_show).
  if (newDoc === null || typeof newDoc !== 'object' || Array.isArray(newDoc)) return renderedReply(shapeResponse(resp, 200));

  const incoming = parseIncomingDoc(newDoc);
  // The document is saved under the id it carries, not the URL's (CouchDB 1.6 validates the
  // returned document's own id: one without an _id is "Document id must not be empty").
  incoming.id ??= '';
  validateDocId(incoming.id);
  if (isLocalId(incoming.id)) {
    // _local documents are not revisioned, replicated nor validated.
    const rev = await db.putLocal(incoming, durableWrite(req, svc));
    return renderedReply(shapeResponse(resp, 201), { 'X-Couch-Update-NewRev': rev, 'X-Couch-Id': incoming.id });
  }
  if (req.string('batch') === 'ok') {
    void editDocs(req, svc, db, [incoming], { newEdits: true, allOrNothing: false, durable: false }).catch(() => undefined);
    return renderedReply(shapeResponse(resp, 202), { 'X-Couch-Id': incoming.id });
  }
  const [result] = await editDocs(req, svc, db, [incoming], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) });
  if (!result!.ok) raiseResult(result!);
  return renderedReply(shapeResponse(resp, 201), { 'X-Couch-Update-NewRev': result!.rev, 'X-Couch-Id': incoming.id });
}
