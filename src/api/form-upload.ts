/**
 * `POST /{db}/{docid}` with a multipart/form-data body: the HTML form upload of attachments
 * (Futon's "Upload attachment"). Fields: `_rev` (the revision to extend) or `_doc` (the whole
 * document as JSON), and any number of `_attachments` files, each stored under its file name.
 * As CouchDB's form parser, the form is read whole (bounded by max_http_request_size).
 */
import { badRequest, conflict, CouchError, invalidJson } from '../errors.js';
import { parseIncomingDoc, type IncomingDoc } from '../core/document.js';
import type { Database } from '../core/database.js';
import { isLocalId, validateDocId } from '../core/names.js';
import { json, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { boundaryOf, parseHeaderValue, parseMultipart } from './multipart.js';
import { absoluteUrl, durableWrite, editDocs, givenRev, openDb, quote, raiseResult, requestLimit } from './common.js';

export const formUploadRoutes: Route[] = [
  { shape: 'document', methods: { POST: formUpload } },
];

interface UploadedFile {
  name: string;
  contentType: string;
  content: Buffer;
}

async function formUpload(req: Request, p: RouteParams, svc: Services): Promise<Reply> {
  // The id, the content type, then the referer: a browser's request (which has a referer)
  // meets them in couch_httpd_db's order.
  validateDocId(p.docId);
  if (req.contentType() !== 'multipart/form-data') {
    throw new CouchError(415, 'bad_content_type', 'Content-Type must be multipart/form-data');
  }
  checkReferer(req, svc);
  if (isLocalId(p.docId)) throw badRequest('Local documents cannot have attachments');
  const db = await openDb(svc, p.db, req);

  const fields = new Map<string, string>();
  const files: UploadedFile[] = [];
  let left = requestLimit(svc);
  const body = parseMultipart(req.raw.iterator({ destroyOnReturn: false }), boundaryOf(req.header('content-type') ?? ''));
  for await (const part of body) {
    const disposition = parseHeaderValue(part.headers['content-disposition'] ?? '');
    const content = await part.buffer(left, 'Form upload is too large');
    left -= content.length;
    const field = disposition.params['name'];
    if (field === '_attachments' && disposition.params['filename'] !== undefined) {
      const name = disposition.params['filename'];
      if (name === '') throw badRequest('Attachment name must not be empty');
      files.push({ name, contentType: part.headers['content-type'] ?? 'application/octet-stream', content });
    } else if (field !== undefined) {
      fields.set(field, content.toString('utf8'));
    }
  }

  const doc = await formDocument(req, p, db, fields);
  const attachments: Record<string, unknown> = { ...doc.attachments };
  for (const file of files) attachments[file.name] = { content_type: file.contentType, follows: true };
  doc.attachments = attachments;
  const contents = new Map(files.map((f) => [f.name, f.content]));
  const follow = (name: string): AsyncIterable<Buffer> => (async function* () { yield contents.get(name)!; })();

  const [result] = await editDocs(req, svc, db, [doc], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) }, follow);
  if (!result!.ok) raiseResult(result!);
  return json(201, { ok: true, id: doc.id, rev: result!.rev }, { ETag: quote(result!.rev) });
}

/** The edit the form makes: its `_doc`, or the `_rev` revision of the document as it stands. */
async function formDocument(req: Request, p: RouteParams, db: Database, fields: Map<string, string>): Promise<IncomingDoc> {
  const docJson = fields.get('_doc');
  if (docJson !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(docJson);
    } catch {
      throw invalidJson();
    }
    const doc = parseIncomingDoc(parsed);
    doc.id = p.docId;
    const queryRev = givenRev(req.string('rev'));
    if (doc.rev !== undefined && queryRev !== undefined && doc.rev !== queryRev) {
      throw badRequest('Document rev from request body and query string have different values');
    }
    doc.rev ??= queryRev;
    return doc;
  }
  const formRev = fields.get('_rev');
  if (formRev === undefined) throw badRequest('Invalid rev format');
  const rev = givenRev(formRev);
  let base;
  try {
    base = await db.openDoc(p.docId, { rev });
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) throw conflict();
    throw err;
  }
  const doc = parseIncomingDoc(JSON.parse(base.json));
  doc.id = p.docId;
  doc.rev = rev;
  // A deleted revision stays deleted: couch_httpd_db edits the #doc open_doc_revs returns.
  doc.deleted = base.deleted;
  return doc;
}

/**
 * CouchDB refuses form posts whose Referer is missing or names another host: a page elsewhere
 * must not be able to post into the database with the visitor's credentials.
 */
function checkReferer(req: Request, svc: Services): void {
  const referer = req.header('referer');
  if (referer === undefined) throw badRequest('Referer header required.');
  let refererHost: string;
  try {
    refererHost = new URL(referer).host;
  } catch {
    throw badRequest('Referer header must match host.');
  }
  if (refererHost !== new URL(absoluteUrl(req, '/', svc.config)).host) throw badRequest('Referer header must match host.');
}
