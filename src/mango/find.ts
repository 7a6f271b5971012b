/**
 * The Mango engine of a database: its indexes (read from its design documents), `_find`,
 * `_explain`, and index creation and deletion (the design documents written through a
 * `DesignWriter`, so the caller's write rules apply as to any write).
 */
import type { Database } from '../core/database.js';
import { CouchError, notFound } from '../errors.js';
import { mangoError } from './errors.js';
import type { DocTransform, ExecutionSummary, FindExecutor } from './executor.js';
import { ALL_DOCS_INDEX, compareIndexes, indexJson, indexesOfDesignDoc, newIndex, withIndex, withoutIndex, type MangoIndex } from './indexes.js';
import { optionsJson, validateBulkDelete, validateFind, validateIndexCreate, type FindOptions } from './options.js';
import { covers, indexCandidates, plan, scanKeys, selectorHints, warnings, type QueryPlan } from './planner.js';
import type { JsonObject } from './selector.js';

/** Saves a design document (with `_id`, and `_rev` unless new; `_deleted` to delete it). */
export type DesignWriter = (doc: JsonObject) => Promise<void>;

/** Every index of the database: `_all_docs`, then JSON indexes by design document and name. */
export async function listIndexes(db: Database): Promise<MangoIndex[]> {
  const out: MangoIndex[] = [ALL_DOCS_INDEX];
  for await (const rows of db.designDocs()) {
    for (const { id, rev } of rows) {
      const opened = await db.openDoc(id, { rev }).catch(() => undefined);
      if (opened) out.push(...indexesOfDesignDoc(JSON.parse(opened.json) as JsonObject));
    }
  }
  return out.sort(compareIndexes);
}

export interface FindRun {
  plan: QueryPlan;
  /** The answers in chunks of JSON texts; returns the bookmark and statistics. */
  docs: AsyncGenerator<string[], ExecutionSummary>;
}

/** Plans a `_find` body (throwing CouchDB's 400s) and starts running it. */
export async function find(db: Database, body: JsonObject, executor: FindExecutor, view?: DocTransform): Promise<FindRun> {
  const options = validateFind(body);
  const p = plan(await listIndexes(db), options);
  return { plan: p, docs: executor.run(db, p, view) };
}

/** `_explain`: the plan as CouchDB 3 shows it. */
export async function explain(db: Database, body: JsonObject): Promise<JsonObject> {
  const options: FindOptions = validateFind(body);
  const indexes = await listIndexes(db);
  const common = {
    partitioned: false,
    selector: options.selector,
    opts: optionsJson(options),
    limit: options.limit,
    skip: options.skip,
    fields: options.fields,
  };
  let p: QueryPlan;
  try {
    p = plan(indexes, options);
  } catch (err) {
    // No index can serve the sort: CouchDB 3.5 explains that rather than failing.
    if (!(err instanceof CouchError && err.error === 'no_usable_index' && options.allowFallback)) throw err;
    return { dbname: db.name, index: null, ...common, index_candidates: indexCandidates(indexes, options, undefined), selector_hints: selectorHints(options.selector) };
  }
  const { start, end } = scanKeys(p);
  const covering = covers(p.index, options.fields, p.selector);
  return {
    dbname: db.name,
    index: indexJson(p.index),
    ...common,
    mrargs: {
      include_docs: !covering,
      view_type: 'map',
      reduce: false,
      partition: null,
      start_key: start,
      end_key: end,
      direction: p.direction,
      stable: options.stable || options.stale === 'ok',
      update: options.update && options.stale !== 'ok',
      conflicts: options.conflicts ? true : 'undefined',
    },
    covering,
    index_candidates: indexCandidates(indexes, options, p.index),
    selector_hints: selectorHints(p.selector),
  };
}

/** The `_find` answer's warning, if any. */
export function findWarning(run: FindRun, summary: ExecutionSummary): string | undefined {
  const { stats } = summary;
  return warnings(run.plan, stats.docsExamined + stats.quorumDocsExamined, stats.resultsReturned);
}

async function openDesign(db: Database, id: string): Promise<JsonObject | undefined> {
  try {
    const opened = await db.openDoc(id);
    return opened.deleted ? undefined : JSON.parse(opened.json) as JsonObject;
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) return undefined;
    throw err;
  }
}

async function saveDesign(write: DesignWriter, doc: JsonObject): Promise<void> {
  try {
    await write(doc);
  } catch (err) {
    if (err instanceof CouchError && err.error === 'conflict') {
      throw mangoError(500, 'error_saving_ddoc', 'Encountered a conflict while saving the design document.');
    }
    throw err;
  }
}

/** `POST _index`: adds a JSON index to its design document (created as needed). */
export async function createIndex(db: Database, body: JsonObject, write: DesignWriter): Promise<{ result: 'created' | 'exists'; id: string; name: string }> {
  const idx = newIndex(validateIndexCreate(body));
  const existing = await openDesign(db, idx.ddoc);
  const updated = withIndex(existing, idx);
  if (updated) await saveDesign(write, updated);
  return { result: updated ? 'created' : 'exists', id: idx.ddoc, name: idx.name };
}

/** `DELETE _index/{ddoc}/json/{name}`: removes the index; its design document too once empty. */
export async function deleteIndex(db: Database, ddocName: string, type: string, name: string, write: DesignWriter): Promise<void> {
  const ddoc = ddocName.startsWith('_design/') ? ddocName : `_design/${ddocName}`;
  const found = (await listIndexes(db)).find((i) => i.ddoc === ddoc && i.type === type && i.name === name);
  if (!found) throw notFound('missing');
  await removeFrom(db, ddoc, [name], write);
}

async function removeFrom(db: Database, ddoc: string, names: readonly string[], write: DesignWriter): Promise<void> {
  const existing = await openDesign(db, ddoc);
  if (!existing) throw notFound('missing');
  let body: JsonObject | null = existing;
  for (const name of names) {
    body = withoutIndex(body, name);
    if (body === null) break;
  }
  await saveDesign(write, body ?? { _id: ddoc, _rev: existing['_rev']!, _deleted: true });
}

/** `POST _index/_bulk_delete`: removes the JSON indexes of each design document named. */
export async function bulkDeleteIndexes(db: Database, body: JsonObject, write: DesignWriter): Promise<JsonObject> {
  const { docids } = validateBulkDelete(body);
  const indexes = await listIndexes(db);
  const success: JsonObject[] = [];
  const fail: JsonObject[] = [];
  for (const given of docids) {
    const ddoc = given.startsWith('_design/') ? given : `_design/${given}`;
    const names = indexes.filter((i) => i.ddoc === ddoc).map((i) => i.name);
    try {
      if (names.length === 0) throw notFound('missing');
      await removeFrom(db, ddoc, names, write);
      success.unshift({ id: ddoc, ok: true });
    } catch (err) {
      if (!(err instanceof CouchError)) throw err;
      fail.unshift({ id: ddoc, error: err.status === 404 ? 'not_found' : err.error });
    }
  }
  return { success, fail };
}
