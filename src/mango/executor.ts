/**
 * Running a query plan. `FindExecutor` is the seam: the executor here answers every plan by
 * scanning the database's documents in `_id` order, in chunks, and gives the answers CouchDB's
 * index scans give:
 *
 *   `_all_docs` plans stream: documents in `_id` order (reversed for a descending `_id` sort),
 *   within the plan's `_id` bounds, stopping once `limit` documents are out; memory is one chunk.
 *   JSON-index plans answer in the index's order (the indexed fields' values by view collation,
 *   then `_id`), only documents that have every indexed field and match the index's partial
 *   filter, as CouchDB's view holds them; the first `skip + limit` matches are kept in a
 *   bounded buffer (ids, revisions and keys, not bodies), so memory follows `skip + limit`, not
 *   the database. An executor that reads a real index can replace this one behind the interface.
 *
 * Design documents are never answers. Bookmarks are opaque: the last row's index key and id,
 * base64url-encoded; a query given one continues after that row.
 */
import type { Database } from '../core/database.js';
import { collate } from '../views/collation.js';
import { compareUtf8 } from '../views/erlang-term-order.js';
import { mangoError } from './errors.js';
import { extractFields } from './options.js';
import { getField, matches, parseField, type FieldRange, type Json, type JsonObject } from './selector.js';
import type { QueryPlan } from './planner.js';

export interface ExecutionStats {
  keysExamined: number;
  docsExamined: number;
  quorumDocsExamined: number;
  resultsReturned: number;
}

export interface ExecutionSummary {
  /** The bookmark to continue from ("nil" when none). */
  bookmark: string;
  stats: ExecutionStats;
}

/** How the caller may see a document (e.g. without others' credentials); applied before matching. */
export type DocTransform = (doc: JsonObject) => JsonObject;

export interface FindExecutor {
  /** The plan's answers as JSON texts, in chunks, in order; returns the bookmark and statistics. */
  run(db: Database, plan: QueryPlan, view?: DocTransform): AsyncGenerator<string[], ExecutionSummary>;
}

interface Position { key: Json; id: string }

export function encodeBookmark(p: Position): string {
  return Buffer.from(JSON.stringify([p.key, p.id]), 'utf8').toString('base64url');
}

export function decodeBookmark(bookmark: string): Position {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(bookmark)) throw new Error('not base64url');
    const value = JSON.parse(Buffer.from(bookmark, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && typeof value[1] === 'string') return { key: value[0] as Json, id: value[1] };
  } catch {
    // reported below
  }
  throw mangoError(400, 'invalid_bookmark', `Invalid bookmark value: ${JSON.stringify(bookmark)}`);
}

const isDesign = (id: string): boolean => id.startsWith('_design/');

/** A loaded document: its JSON text as stored (or viewed) and its parsed body. */
interface Loaded { id: string; rev: string; json: string; doc: JsonObject }

async function load(db: Database, rows: readonly { id: string; rev: string }[], conflicts: boolean, view: DocTransform | undefined): Promise<Loaded[]> {
  const opened = conflicts
    ? await Promise.all(rows.map(({ id, rev }) => db.openDoc(id, { rev, conflicts: true }).catch(() => undefined)))
    : await db.renderKnownMany(rows.map(({ id, rev }) => ({ id, rev, deleted: false })));
  const out: Loaded[] = [];
  for (let i = 0; i < rows.length; i++) {
    const o = opened[i];
    if (!o) continue;
    let doc = JSON.parse(o.json) as JsonObject;
    let json = o.json;
    if (view) {
      doc = view(doc);
      json = JSON.stringify(doc);
    }
    out.push({ id: rows[i]!.id, rev: rows[i]!.rev, json, doc });
  }
  return out;
}

const render = (l: Loaded, fields: readonly string[]): string => (fields.length === 0 ? l.json : JSON.stringify(extractFields(l.doc, fields)));

export class ScanExecutor implements FindExecutor {
  constructor(private readonly chunk = 256) {}

  async *run(db: Database, plan: QueryPlan, view?: DocTransform): AsyncGenerator<string[], ExecutionSummary> {
    const stats: ExecutionStats = { keysExamined: 0, docsExamined: 0, quorumDocsExamined: 0, resultsReturned: 0 };
    const o = plan.options;
    const after = o.bookmark === null ? undefined : decodeBookmark(o.bookmark);
    let last: Position | undefined;
    if (plan.ranges !== 'empty') {
      const rows = plan.index.type === 'special' ? this.special(db, plan, after, view, stats) : this.json(db, plan, after, view, stats);
      while (true) {
        const next = await rows.next();
        if (next.done) {
          last = next.value;
          break;
        }
        yield next.value;
      }
    }
    if (o.r > 1) {
      stats.quorumDocsExamined = stats.docsExamined;
      stats.docsExamined = 0;
    }
    return { bookmark: last ? encodeBookmark(last) : o.bookmark ?? 'nil', stats };
  }

  /** `_all_docs`: documents in id order within the `_id` bounds, streamed. */
  private async *special(db: Database, plan: QueryPlan, after: Position | undefined, view: DocTransform | undefined, stats: ExecutionStats): AsyncGenerator<string[], Position | undefined> {
    const o = plan.options;
    const descending = plan.direction === 'rev';
    const range = (plan.ranges as Exclude<FieldRange, 'empty'>[])[0]!;
    let low = typeof range.low === 'string' ? range.low : undefined;
    let high = typeof range.high === 'string' ? range.high : undefined;
    if (after) {
      if (descending) high = after.id;
      else low = after.id;
    }
    let skip = o.skip;
    let limit = o.limit;
    let last: Position | undefined;
    if (limit === 0) return last;
    for await (const rows of db.allDocs({ start: descending ? high : low, end: descending ? low : high, descending })) {
      const wanted = rows.filter((r) => !isDesign(r.id) && r.id !== after?.id);
      for (let i = 0; i < wanted.length; i += this.chunk) {
        const docs = await load(db, wanted.slice(i, i + this.chunk), o.conflicts, view);
        const out: string[] = [];
        for (const d of docs) {
          stats.docsExamined++;
          stats.keysExamined++;
          if (!matches(plan.selector, d.doc)) continue;
          last = { key: d.id, id: d.id };
          if (skip > 0) {
            skip--;
            continue;
          }
          out.push(render(d, o.fields));
          stats.resultsReturned++;
          if (--limit === 0) break;
        }
        if (out.length > 0) yield out;
        if (limit === 0) return last;
      }
    }
    return last;
  }

  /** A JSON index: matching documents that the index holds, in its key order. */
  private async *json(db: Database, plan: QueryPlan, after: Position | undefined, view: DocTransform | undefined, stats: ExecutionStats): AsyncGenerator<string[], Position | undefined> {
    const o = plan.options;
    const { index } = plan;
    const sign = plan.direction === 'rev' ? -1 : 1;
    const paths = index.columns.map(parseField);
    const wanted = o.skip + o.limit;
    const order = (a: Position, b: Position): number => sign * (collate(a.key, b.key) || compareUtf8(a.id, b.id));
    let kept: (Position & { rev: string })[] = [];
    if (o.limit === 0) return undefined;
    for await (const rows of db.allDocs({})) {
      const docs = await load(db, rows.filter((r) => !isDesign(r.id)), o.conflicts, view);
      for (const d of docs) {
        if (index.partialFilter && !matches(index.partialFilter, d.doc)) continue;
        const key: Json[] = [];
        for (const path of paths) {
          const found = getField(d.doc, path);
          if (typeof found === 'string') break;
          key.push(found.value);
        }
        if (key.length !== paths.length) continue;
        stats.keysExamined++;
        stats.docsExamined++;
        if (!matches(plan.selector, d.doc)) continue;
        const entry = { key, id: d.id, rev: d.rev };
        if (after && order(entry, after) <= 0) continue;
        kept.push(entry);
        if (kept.length >= 2 * wanted + this.chunk) kept = kept.sort(order).slice(0, wanted);
      }
    }
    kept = kept.sort(order).slice(0, wanted);
    const page = kept.slice(o.skip);
    for (let i = 0; i < page.length; i += this.chunk) {
      const docs = await load(db, page.slice(i, i + this.chunk), o.conflicts, view);
      stats.resultsReturned += docs.length;
      if (docs.length > 0) yield docs.map((d) => render(d, o.fields));
    }
    return kept.length > 0 ? kept[kept.length - 1] : undefined;
  }
}
