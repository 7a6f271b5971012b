/**
 * Filter functions (`filters.<name>(doc, req)`) over changes: a batch of changes is rendered
 * (one storage round trip) and judged in one sandbox round trip per batch of documents.
 * `_changes?filter=ddoc/name` uses it, and through that HTTP feed, filtered replication;
 * `filter=_view` maps the same documents.
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
 * object every call receives. Each row's revision is judged as `judgedDocuments` renders it.
 */
export async function designFilter(design: DesignService, db: Database, ddocId: string, name: string, reqJson: string): Promise<BatchFilter> {
  const ddoc = await design.designDoc(db, ddocId);
  designMember(ddoc.body, ['filters', name]);
  const fn = await design.function(db, ddoc, 'filters', name);
  return async (rows) => {
    const { present, texts } = await judgedDocuments(db, rows);
    if (present.length === 0) return [];
    const passes = await fn.filter(texts, reqJson);
    return present.filter((_, i) => passes[i]);
  };
}

/**
 * The documents of a batch of changes as CouchDB 1.6 hands them to filter functions and to the
 * map of `filter=_view` (couch_db:open_doc of the change's doc_info with `[deleted, conflicts]`,
 * rendered with `revs`): deletions as their tombstones, `_revisions` naming the judged revision
 * alone (a doc_info holds no history), and `_conflicts` from the row's other leaves, if it lists
 * any. `present` are the rows whose revision could be read, `texts` their documents' JSON.
 */
export async function judgedDocuments(db: Database, rows: ChangeRow[]): Promise<{ present: ChangeRow[]; texts: string[] }> {
  if (rows.length === 0) return { present: [], texts: [] };
  const docs = await db.renderKnownMany(rows);
  const present = rows.filter((_, i) => docs[i] !== undefined);
  if (present.length === 0) return { present, texts: [] };
  // Only a change with other leaves can have conflicts to show.
  const conflicted = present.filter((row) => row.others.length > 0);
  const infos = conflicted.length > 0 ? await db.docInfos(conflicted.map((row) => row.id)) : [];
  const texts: string[] = [];
  let at = 0;
  docs.forEach((d, i) => {
    if (!d) return;
    const row = rows[i]!;
    const conflicts = row.others.length > 0 ? conflictsOf(infos[at++]) : '';
    texts.push(withMembers(d.json, revisionsMember(row.rev) + conflicts));
  });
  return { present, texts };
}

/** `,"_revisions":…` of revision `rev`, as to_json_obj renders a revision opened without its history. */
function revisionsMember(rev: string): string {
  const parsed = revtree.parseRev(rev);
  return parsed ? `,"_revisions":${JSON.stringify({ start: parsed.pos, ids: [parsed.hash] })}` : '';
}

function conflictsOf(info: { tree: revtree.RevTree } | undefined): string {
  return info ? conflictMembers(info.tree, false) : '';
}
