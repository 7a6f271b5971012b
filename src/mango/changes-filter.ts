/**
 * `_changes?filter=_selector` (CouchDB 2/3, and what PouchDB sends for a replication with a
 * `selector`): a change passes when its document matches a Mango selector given in the POST
 * body. Documents are matched as CouchDB matches them: as a GET returns them, tombstones
 * included (`_deleted: true`).
 */
import { badRequest } from '../errors.js';
import type { ChangeRow, Database } from '../core/database.js';
import { matches, normalizeOrBadRequest, type Json, type JsonObject, type Selector } from './selector.js';

/** Keeps the rows whose document the selector matches, in order. */
export type SelectorFilter = (rows: ChangeRow[]) => Promise<ChangeRow[]>;

/**
 * The selector of a `_changes` request, checked as couch_changes checks it: a GET has none
 * (`body` undefined), a body's `selector` must be an object and a valid selector, its `fields`
 * (accepted, not applied, as in CouchDB) a list. Mango's errors become plain 400 bad_request.
 */
export function changesSelector(body: JsonObject | undefined): Selector {
  if (body === undefined) throw badRequest('Selector must be specified in POST payload');
  const selector = body['selector'];
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) {
    throw badRequest('Selector error: expected a JSON object');
  }
  const fields = body['fields'];
  if (fields !== undefined && !Array.isArray(fields)) throw badRequest('Selector error: fields must be JSON array');
  return normalizeOrBadRequest(selector);
}

/** The rows of a batch whose revisions (each row's `rev`: the winner, or with style=all_docs each leaf) match `selector`. */
export function selectorFilter(db: Database, selector: Selector): SelectorFilter {
  return async (rows) => {
    if (rows.length === 0) return [];
    const docs = await db.renderKnownMany(rows);
    return rows.filter((_, i) => {
      const doc = docs[i];
      return doc !== undefined && matches(selector, JSON.parse(doc.json) as Json);
    });
  };
}
