/**
 * The design documents the server writes into its system databases (`_design/_auth` in the
 * users database, `_design/_replicator` in the replicator's), each holding the validation
 * function that states the database's rules, as CouchDB 1.6 writes them.
 */
import type { Database } from '../core/database.js';
import { winner } from '../core/revtree.js';

/**
 * Writes the design document `id` with `validateSource` as its validate_doc_update when the
 * database has none, or only a deleted one, as CouchDB's ensure_auth_ddoc_exists and
 * ensure_rep_ddoc_exists do (an edit someone made to it is kept).
 */
export async function ensureValidationDesignDoc(db: Database, id: string, validateSource: string): Promise<void> {
  const info = await db.docInfo(id);
  if (info && !winner(info.tree)!.deleted) return;
  const body = { language: 'javascript', validate_doc_update: validateSource };
  // A write that loses a race with another one (a conflict) leaves that one's document.
  await db.edit([{
    id, rev: undefined, deleted: false, body, bodyJson: JSON.stringify(body), revisions: undefined, attachments: undefined,
  }], { newEdits: true, allOrNothing: false, durable: true });
}
