/**
 * Filter functions (`filters.<name>(doc, req)`) over changes: a batch of changes is rendered
 * (one storage round trip) and judged in one sandbox round trip per batch of documents.
 * `_changes?filter=ddoc/name` uses it, and through that HTTP feed, filtered replication.
 */
import type { ChangeRow, Database } from '../core/database.js';
import type { DesignService } from './service.js';

/** Keeps the rows whose document the filter passes, in order. */
export type BatchFilter = (rows: ChangeRow[]) => Promise<ChangeRow[]>;

/**
 * The filter `name` of design document `ddocId`, compiled (a missing design document or filter
 * is a 404, code that does not compile a 400 — before any row is sent). `reqJson` is the `req`
 * object every call receives. Deleted documents are passed as their tombstones, as in CouchDB.
 */
export async function designFilter(design: DesignService, db: Database, ddocId: string, name: string, reqJson: string): Promise<BatchFilter> {
  const ddoc = await design.designDoc(db, ddocId);
  const fn = await design.function(db, ddoc, 'filters', name);
  return async (rows) => {
    if (rows.length === 0) return [];
    const docs = await db.renderKnownMany(rows);
    const present = rows.filter((_, i) => docs[i] !== undefined);
    if (present.length === 0) return [];
    const passes = await fn.filter(docs.filter((d) => d !== undefined).map((d) => d!.json), reqJson);
    return present.filter((_, i) => passes[i]);
  };
}
