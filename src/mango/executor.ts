/**
 * Running a query plan. `FindExecutor` is the seam between planning and reading:
 *
 *   `_all_docs` plans stream documents in `_id` order (reversed for a descending `_id` sort),
 *   within the plan's `_id` bounds, stopping once `limit` documents are out; memory is one chunk.
 *   JSON-index plans read the index's view (a view of its `query` design document, brought up to
 *   date first unless `update: false` or `stale: "ok"`) over the key range the plan's field
 *   ranges give, in its order (the indexed fields' values by view collation, then `_id`), and
 *   match the documents the rows name against the selector; a covering index (every field asked
 *   for and selected on is in its key) answers from the rows alone. Execution statistics count
 *   what was read, as CouchDB's do.
 *
 * Design documents are never answers. Bookmarks are opaque: the last row's index key and id,
 * base64url-encoded; a query given one continues after that row.
 */
import type { Database } from '../core/database.js';
import * as revtree from '../core/revtree.js';
import type { RangeOptions } from '../storage/types.js';
import { collate } from '../views/collation.js';
import { compareUtf8 } from '../views/erlang-term-order.js';
import { arrayPrefixRange } from '../views/query.js';
import type { ViewService } from '../views/service.js';
import { rowText, type ViewIndex } from '../views/view-index.js';
import { mangoError } from './errors.js';
import { extractFields, setField } from './options.js';
import { matches, MAX, MIN, parseField, type FieldRange, type Json, type JsonObject, type Range } from './selector.js';
import { covers, type QueryPlan } from './planner.js';

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

/** A row of a JSON index's view as stored (its value is null). */
interface IndexRow { id: string; key: Json[] }

/** What a covering index knows of a document: its id and the indexed fields' values. */
function docFromKey(row: IndexRow, columns: readonly string[]): Loaded {
  const doc: JsonObject = { _id: row.id };
  columns.forEach((column, i) => setField(doc, parseField(column), row.key[i]!));
  return { id: row.id, rev: '', json: '', doc };
}

/**
 * The matches of a scan, in order, as CouchDB's cursor takes them (mango_cursor_view handle_doc):
 * the first `skip` are passed over, the next `limit` answered, and the one after them stops the
 * scan (it has been examined, and counts as such, but is not answered).
 */
class MatchCursor {
  private skip: number;
  private limit: number;
  /** The last match passed over or answered: where a bookmark continues. */
  last: Position | undefined;

  constructor(options: { skip: number; limit: number }, private readonly stats: ExecutionStats) {
    this.skip = options.skip;
    this.limit = options.limit;
  }

  /** Takes a match at `at`, answering into `out`; false when it is the one that stops the scan. */
  take(at: Position, answer: () => string, out: string[]): boolean {
    if (this.limit === 0) return false;
    this.last = at;
    if (this.skip > 0) {
      this.skip--;
      return true;
    }
    out.push(answer());
    this.stats.resultsReturned++;
    this.limit--;
    return true;
  }
}

export class IndexExecutor implements FindExecutor {
  constructor(private readonly views: ViewService, private readonly chunk = 256) {}

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
    if (o.limit === 0) return undefined;
    const cursor = new MatchCursor(o, stats);
    // Design documents are read and examined (CouchDB's shards count them) but never answers.
    const passDesigns = (designs: readonly { id: string }[], before?: string) => {
      const passed = before === undefined ? designs.length : designs.filter((r) => (descending ? -1 : 1) * compareUtf8(r.id, before) < 0).length;
      stats.keysExamined += passed;
      stats.docsExamined += passed;
    };
    for await (const rows of db.allDocs({ start: descending ? high : low, end: descending ? low : high, descending })) {
      const designs = rows.filter((r) => isDesign(r.id) && r.id !== after?.id);
      const wanted = rows.filter((r) => !isDesign(r.id) && r.id !== after?.id);
      for (let i = 0; i < wanted.length; i += this.chunk) {
        const docs = await load(db, wanted.slice(i, i + this.chunk), o.conflicts, view);
        const out: string[] = [];
        for (const d of docs) {
          stats.docsExamined++;
          stats.keysExamined++;
          if (!matches(plan.selector, d.doc)) continue;
          if (!cursor.take({ key: d.id, id: d.id }, () => render(d, o.fields), out)) {
            if (out.length > 0) yield out;
            passDesigns(designs, d.id);
            return cursor.last;
          }
        }
        if (out.length > 0) yield out;
      }
      passDesigns(designs);
    }
    return cursor.last;
  }

  /**
   * A JSON index: the rows of its view in the plan's key range, in order, and the documents they
   * name, matched against the selector (a covering index answers from its keys alone). As in
   * CouchDB, once `limit` answers are out the scan goes on to the next match, which it examines
   * but does not answer.
   */
  private async *json(db: Database, plan: QueryPlan, after: Position | undefined, docView: DocTransform | undefined, stats: ExecutionStats): AsyncGenerator<string[], Position | undefined> {
    const o = plan.options;
    const { index } = plan;
    if (o.limit === 0) return undefined;
    const opened = await this.views.open(db, index.ddoc!);
    if (o.update && o.stale !== 'ok') await opened.update();
    const view = opened.index.viewNumber(index.name);
    if (view < 0) return undefined;
    const descending = plan.direction === 'rev';
    const range = await this.scanRange(opened.index, view, plan.ranges as Range[], descending, after);
    const covering = covers(index, o.fields, plan.selector) && !o.conflicts && docView === undefined;
    const order = (a: Position, b: Position): number => (descending ? -1 : 1) * (collate(a.key, b.key) || compareUtf8(a.id, b.id));
    const cursor = new MatchCursor(o, stats);
    const snapshot = await opened.index.store.snapshot();
    try {
      for await (const chunk of snapshot.rangeChunks(range, Math.min(this.chunk, o.skip + o.limit + 1))) {
        let rows = chunk.map((e) => JSON.parse(rowText(e.value)) as IndexRow);
        if (after) rows = rows.filter((r) => order(r, after) > 0);
        const docs = covering ? rows.map((r) => docFromKey(r, index.columns)) : await this.loadRows(db, rows, o.conflicts, docView);
        const out: string[] = [];
        for (let i = 0; i < rows.length; i++) {
          stats.keysExamined++;
          const doc = docs[i];
          if (!doc) continue;
          if (!covering) stats.docsExamined++;
          if (!matches(plan.selector, doc.doc)) continue;
          if (!cursor.take({ key: rows[i]!.key, id: rows[i]!.id }, () => render(doc, o.fields), out)) {
            if (out.length > 0) yield out;
            return cursor.last;
          }
        }
        if (out.length > 0) yield out;
      }
    } finally {
      snapshot.release();
    }
    return cursor.last;
  }

  /** The store range of the plan's key range, starting at the bookmark's row when there is one. */
  private async scanRange(index: ViewIndex, view: number, ranges: readonly Range[], descending: boolean, after: Position | undefined): Promise<RangeOptions> {
    const low: Json[] = [];
    for (const r of ranges) {
      if (r.low === MIN || r.low === MAX) break;
      low.push(r.low);
    }
    let high: Json[] | undefined = [];
    for (const r of ranges) {
      if (r.high === MIN || r.high === MAX) {
        if (high.length === 0) high = undefined;
        break;
      }
      high.push(r.high);
    }
    const range = arrayPrefixRange(index, view, low, high, descending);
    if (!after) return range;
    const from = await index.keyBounds(view, after.key);
    if (!descending && Buffer.compare(from.start, range.gte!) > 0) return { ...range, gte: from.start };
    if (descending) {
      const to = range.lte ?? range.lt!;
      if (Buffer.compare(from.end, to) < 0) return { gte: range.gte, lte: from.end, reverse: true };
    }
    return range;
  }

  /** The current documents of index rows (undefined where one is gone), as `docView` shows them. */
  private async loadRows(db: Database, rows: readonly IndexRow[], conflicts: boolean, docView: DocTransform | undefined): Promise<(Loaded | undefined)[]> {
    const infos = await db.docInfos(rows.map((r) => r.id));
    const live: { id: string; rev: string; at: number }[] = [];
    infos.forEach((info, at) => {
      const winner = info ? revtree.winner(info.tree) : undefined;
      if (winner && !winner.deleted) live.push({ id: rows[at]!.id, rev: winner.rev, at });
    });
    const loaded = await load(db, live, conflicts, docView);
    const out = new Array<Loaded | undefined>(rows.length);
    let next = 0;
    for (const l of live) {
      if (loaded[next]?.id === l.id && loaded[next]!.rev === l.rev) out[l.at] = loaded[next++];
    }
    return out;
  }
}
