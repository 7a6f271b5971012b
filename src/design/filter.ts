/**
 * Filter functions (`filters.<name>(doc, req)`) over changes: a batch of changes is rendered
 * (one storage round trip) and judged in one sandbox round trip per batch of documents.
 * `_changes?filter=ddoc/name` uses it, and through that HTTP feed, filtered replication.
 */
import type { ChangeRow, Database } from '../core/database.js';
import { conflictMembers, withMembers } from '../core/document.js';
import * as revtree from '../core/revtree.js';
import { designMember, type DesignService } from './service.js';

/** Keeps the rows whose document the filter passes, in order. */
export type BatchFilter = (rows: ChangeRow[]) => Promise<ChangeRow[]>;

/**
 * The filter `name` of design document `ddocId`, compiled (a missing design document or filter
 * is a 404, code that does not compile a 400 — before any row is sent). `reqJson` is the `req`
 * object every call receives. Deleted documents are passed as their tombstones, with their
 * `_revisions` and, with conflicts, their `_conflicts`, as CouchDB 1.6 opens them for filters
 * (`[deleted, conflicts]`, rendered with `revs`).
 */
export async function designFilter(design: DesignService, db: Database, ddocId: string, name: string, reqJson: string): Promise<BatchFilter> {
  const ddoc = await design.designDoc(db, ddocId);
  designMember(ddoc.body, ['filters', name]);
  const fn = await design.function(db, ddoc, 'filters', name);
  return async (rows) => {
    if (rows.length === 0) return [];
    const docs = await db.renderKnownMany(rows);
    const present = rows.filter((_, i) => docs[i] !== undefined);
    if (present.length === 0) return [];
    const infos = await db.docInfos(present.map((row) => row.id));
    const texts: string[] = [];
    let at = 0;
    docs.forEach((d, i) => {
      if (d) texts.push(withMembers(d.json, revisionMembers(infos[at++], rows[i]!.rev)));
    });
    const passes = await fn.filter(texts, reqJson);
    return present.filter((_, i) => passes[i]);
  };
}

/** `,"_revisions":…[,"_conflicts":…]` of revision `rev` of a document. */
function revisionMembers(info: { tree: revtree.RevTree } | undefined, rev: string): string {
  if (!info) return '';
  const path = revtree.pathTo(info.tree, rev);
  const revisions = path ? `,"_revisions":${JSON.stringify({ start: path.pos, ids: path.hashes })}` : '';
  return revisions + conflictMembers(info.tree, false);
}
