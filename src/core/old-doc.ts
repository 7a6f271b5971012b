/**
 * Which revision a write's validation sees as oldDoc, as CouchDB 1.6 decides it: shared by
 * validate_doc_update (src/design/validation.ts) and the natively enforced rules of the users
 * and replicator databases (src/auth/), so both judge a write against the same revision.
 */
import type { Database } from './database.js';
import type { DocInfo } from './records.js';
import type { IncomingDoc } from './document.js';
import * as revtree from './revtree.js';

/**
 * The JSON of the revision CouchDB 1.6 hands validate_doc_update as oldDoc for a write (`info`:
 * the document's stored info, if any), `'null'` when it hands none, or undefined when it
 * validates nothing: an edit the updater answers with a conflict, or a replicated revision
 * already here or that lands inside the tree. couch_db:prep_and_validate_updates gives the leaf
 * a `_rev` names; with all_or_nothing (conflicts allowed) a write without `_rev` on a live
 * document, or whose `_rev` names no leaf, starts a new branch and gets none.
 * prep_and_validate_replicated_updates gives the nearest ancestor whose body is stored.
 */
export async function validationOldDoc(
  db: Database, doc: IncomingDoc, info: DocInfo | undefined, options: { newEdits: boolean; allOrNothing: boolean },
): Promise<string | undefined> {
  const { newEdits, allOrNothing } = options;
  if (newEdits) {
    // A `_rev` for a document that does not exist is a conflict, all_or_nothing or not.
    if (!info) return doc.rev === undefined ? 'null' : undefined;
    if (doc.rev === undefined) return allOrNothing || revtree.winner(info.tree)!.deleted ? 'null' : undefined;
    if (!revtree.isLeaf(info.tree, doc.rev)) return allOrNothing ? 'null' : undefined;
    return (await db.renderRevision(info, doc.rev, { revs: true }))?.json ?? 'null';
  }
  if (doc.rev === undefined || !info) return 'null';
  if (revtree.hasRev(info.tree, doc.rev)) return undefined;
  // Merged into the tree, a revision that is not a leaf is not validated; a leaf is validated
  // against the first revision on its path (in the merged tree, so ancestors the replicator did
  // not list count) whose body is stored.
  const parsed = revtree.parseRev(doc.rev)!;
  const sent = doc.revisions && doc.revisions.pos === parsed.pos && doc.revisions.hashes[0] === parsed.hash
    ? doc.revisions
    : { pos: parsed.pos, hashes: [parsed.hash] };
  const merged = revtree.merge(info.tree, sent, doc.deleted).tree;
  if (!revtree.isLeaf(merged, doc.rev)) return undefined;
  const path = revtree.pathTo(merged, doc.rev)!;
  for (let k = 1; k < path.hashes.length; k++) {
    const rev = revtree.formatRev(path.pos - k, path.hashes[k]!);
    if (!revtree.hasRev(info.tree, rev)) continue;
    const json = (await db.renderRevision(info, rev, { revs: true }))?.json;
    if (json) return json;
  }
  return 'null';
}
