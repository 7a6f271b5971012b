/**
 * validate_doc_update on writes (CouchDB 1.6 couch_db:validate_doc_update): every design
 * document's function runs on every write of a normal document, with
 * `(newDoc, oldDoc, userCtx, secObj)`; the first that throws `{forbidden}` (403) or
 * `{unauthorized}` (401) rejects that document. Design documents are not validated by those
 * functions: only database admins may write them. `_local` documents are never validated.
 *
 * It runs before the updater, one sandbox round trip per batch of documents and validator, so
 * the group-committing updater never waits on JavaScript. oldDoc is CouchDB 1.6's (see
 * `validationOldDoc`): the revision being replaced, else null; for replicated revisions
 * (new_edits=false) the nearest ancestor this database stores. Revisions already stored are not
 * validated again, nor, as in CouchDB, an edit the updater will refuse as a conflict: it answers 409.
 */
import { CouchError } from '../errors.js';
import type { Database } from '../core/database.js';
import { renderDoc, type IncomingDoc } from '../core/document.js';
import { isDesignId } from '../core/names.js';
import * as revtree from '../core/revtree.js';
import { validationOldDoc } from '../core/old-doc.js';
import { isDbAdmin } from '../auth/access.js';
import type { UserContext } from '../auth/user-context.js';
import type { DesignService } from './service.js';

/** Per document: undefined when it may be written, else the error it gets. */
export type Verdicts = (CouchError | undefined)[];

/**
 * Checks documents about to be written. Resolves undefined when nothing can reject them (no
 * validators, no design documents): the common case costs no read and no sandbox call.
 */
export async function validateWrites(
  design: DesignService, db: Database, docs: readonly IncomingDoc[], options: { newEdits: boolean; allOrNothing: boolean }, userCtx: UserContext,
): Promise<Verdicts | undefined> {
  const verdicts: Verdicts = new Array(docs.length).fill(undefined);
  const toValidate: number[] = [];
  let any = false;
  for (let i = 0; i < docs.length; i++) {
    if (!isDesignId(docs[i]!.id!)) {
      toValidate.push(i);
      continue;
    }
    if (!isDbAdmin(userCtx, db.getSecurity())) {
      verdicts[i] = new CouchError(401, 'unauthorized', 'You are not a db or server admin.');
      any = true;
    }
  }
  if (toValidate.length === 0) return any ? verdicts : undefined;
  const validators = await design.validators(db);
  if (validators.length === 0) return any ? verdicts : undefined;

  const secObj = db.getSecurity();
  const context = JSON.stringify([{ db: db.name, name: userCtx.name, roles: userCtx.roles }, secObj]);
  const infos = await db.docInfos(toValidate.map((i) => docs[i]!.id!));
  const olds = await Promise.all(toValidate.map((i, k) => validationOldDoc(db, docs[i]!, infos[k], options)));
  const checked: number[] = [];
  const items: string[] = [];
  toValidate.forEach((i, k) => {
    const old = olds[k];
    if (old === undefined) return; // a conflict, or a replicated revision this database already has
    checked.push(i);
    items.push(`[${newDocJson(docs[i]!, old)},${old}]`);
  });
  if (items.length === 0) return any ? verdicts : undefined;
  const results = await Promise.all(validators.map((v) => v.fn.validate(items, context)));
  for (const perValidator of results) {
    perValidator.forEach((failure, k) => {
      const i = checked[k]!;
      if (!failure || verdicts[i]) return;
      any = true;
      const reason = typeof failure.reason === 'string' ? failure.reason : JSON.stringify(failure.reason ?? null);
      if (failure.error === 'forbidden') verdicts[i] = new CouchError(403, 'forbidden', reason);
      else if (failure.error === 'unauthorized') verdicts[i] = new CouchError(401, 'unauthorized', reason);
      else verdicts[i] = new CouchError(failure.status ?? 500, failure.error, reason);
    });
  }
  return any ? verdicts : undefined;
}

/**
 * The document as validate_doc_update sees it (couch_doc:to_json_obj with `revs`, before the
 * new revision is made): `_id`, `_rev` (the revision it edits), the body, `_revisions` (the
 * path the write names: what replication sent, else the edited revision alone, else none), and
 * attachments as stubs (stubs of unchanged attachments are completed from the old revision, as
 * couch_doc:merge_stubs does). oldDoc has its `_revisions` too.
 */
function newDocJson(doc: IncomingDoc, oldJson: string): string {
  const edited = doc.rev === undefined ? undefined : revtree.parseRev(doc.rev);
  const revisions = doc.revisions
    ? { start: doc.revisions.pos, ids: doc.revisions.hashes }
    : edited ? { start: edited.pos, ids: [edited.hash] } : { start: 0, ids: [] };
  const extras: [string, unknown][] = [['_revisions', revisions]];
  let atts: string | undefined;
  if (doc.atts && doc.atts.size > 0) {
    let oldAtts: Record<string, unknown> | undefined;
    const out: Record<string, unknown> = {};
    for (const [name, att] of doc.atts) {
      if (att.kind === 'content') {
        out[name] = { content_type: att.contentType, revpos: att.revpos, digest: att.digest, length: att.length, stub: true };
        continue;
      }
      oldAtts ??= oldJson === 'null' ? {} : ((JSON.parse(oldJson) as { _attachments?: Record<string, unknown> })._attachments ?? {});
      out[name] = oldAtts[name] ?? { stub: true, revpos: att.revpos };
    }
    atts = JSON.stringify(out);
  } else if (doc.attachments) {
    atts = JSON.stringify(doc.attachments);
  }
  return renderDoc(doc.id!, doc.rev, doc.deleted, doc.bodyJson, extras, atts);
}
