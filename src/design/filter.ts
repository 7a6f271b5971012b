/**
 * Filter functions (`filters.<name>(doc, req)`) over changes: a batch of changes is rendered
 * (one storage round trip) and judged in one sandbox round trip per batch of documents.
 * `_changes?filter=ddoc/name` uses it, and through that HTTP feed, filtered replication.
 */
import type { ChangeRow, Database } from '../core/database.js';
import { withMembers } from '../core/document.js';
import { designMember, type DesignService } from './service.js';

/** Keeps the rows whose document the filter passes, in order. */
export type BatchFilter = (rows: ChangeRow[]) => Promise<ChangeRow[]>;

/**
 * The filter `name` of design document `ddocId`, compiled (a missing design document or filter
 * is a 404, code that does not compile a 400 — before any row is sent). `reqJson` is the `req`
 * object every call receives. Deleted documents are passed as their tombstones, and documents
 * with conflicts with their `_conflicts`, as in CouchDB.
 */
export async function designFilter(design: DesignService, db: Database, ddocId: string, name: string, reqJson: string): Promise<BatchFilter> {
  const ddoc = await design.designDoc(db, ddocId);
  designMember(ddoc.body, ['filters', name]);
  const fn = await design.function(db, ddoc, 'filters', name);
  return async (rows) => {
    if (rows.length === 0) return [];
    const docs = await db.renderKnownMany(rows);
    // Filters see a document's _conflicts, as CouchDB opens it for them.
    const conflicts = await Promise.all(rows.map((row, i) => (docs[i] && row.others.length > 0 ? db.conflictMembers(row.id, false) : '')));
    const present = rows.filter((_, i) => docs[i] !== undefined);
    if (present.length === 0) return [];
    const texts: string[] = [];
    docs.forEach((d, i) => {
      if (d) texts.push(withMembers(d.json, conflicts[i]!));
    });
    const passes = await fn.filter(texts, reqJson);
    return present.filter((_, i) => passes[i]);
  };
}
