/**
 * The map of a Mango JSON index, native (CouchDB's mango_native_proc): for each document that
 * matches the index's partial filter and has every indexed field, one row whose key is the
 * fields' values in index order and whose value is null. The view engine runs it for design
 * documents whose language is `query`, so a JSON index is an ordinary view index: built lazily
 * and incrementally, queried by key range, listed by `_info`, compacted and cleaned up.
 */
import type { PackedJson } from '../core/packed-json.js';
import { CouchError } from '../errors.js';
import type { ReduceCall, ViewProgram } from '../js/query-server.js';
import { encodeMapRows, type MapRowsContext } from '../views/map-rows.js';
import { viewNames, type DesignDoc } from '../views/view-index.js';
import { indexesOfDesignDoc, type MangoIndex } from './indexes.js';
import { getField, matches, parseField, type Json, type JsonObject } from './selector.js';

type Rows = [unknown, unknown][];

/** The view program of a `query` design document. */
export function mangoIndexProgram(ddoc: DesignDoc): ViewProgram {
  const names = viewNames(ddoc);
  const byName = new Map(indexesOfDesignDoc(ddoc as unknown as JsonObject).map((idx) => [idx.name, idx]));
  return new MangoIndexProgram(names, names.map((name) => indexMap(byName.get(name))));
}

type DocMap = (doc: Json) => Rows;

/** One index's map; a view that is not a valid index definition emits nothing. */
function indexMap(idx: MangoIndex | undefined): DocMap {
  if (!idx) return () => [];
  const paths = idx.columns.map(parseField);
  const filter = idx.partialFilter;
  return (doc) => {
    if (filter && !matches(filter, doc)) return [];
    const key: Json[] = [];
    for (const path of paths) {
      const found = getField(doc, path);
      if (typeof found === 'string') return [];
      key.push(found.value);
    }
    return [[key, null]];
  };
}

class MangoIndexProgram implements ViewProgram {
  constructor(readonly names: string[], private readonly maps: DocMap[]) {}

  async map(docs: readonly object[]): Promise<Rows[][]> {
    return docs.map((doc) => this.maps.map((map) => map(doc as Json)));
  }

  async mapJson(docs: readonly string[]): Promise<Rows[][]> {
    return docs.map((text) => this.mapText(text));
  }

  async mapEncoded(docs: PackedJson, views: readonly string[], context: (maps: number[], start: number, end: number) => unknown): Promise<Uint8Array[]> {
    const { bytes, lengths } = docs;
    if (lengths.length === 0) return [];
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const results: Rows[][] = new Array(lengths.length);
    for (let i = 0, at = 0; i < lengths.length; at += lengths[i]!, i++) {
      results[i] = this.mapText(text.toString('utf8', at, at + lengths[i]!));
    }
    const maps = views.map((name) => this.names.indexOf(name));
    return [encodeMapRows(results, context(maps, 0, lengths.length) as MapRowsContext)];
  }

  private mapText(text: string): Rows[] {
    let doc: Json;
    try {
      doc = JSON.parse(text) as Json;
    } catch {
      return this.maps.map(() => []);
    }
    return this.maps.map((map) => map(doc));
  }

  async reduce(): Promise<unknown> {
    throw noJavaScript();
  }

  async reduceMany(_name: string, _calls: readonly ReduceCall[]): Promise<unknown[]> {
    throw noJavaScript();
  }

  dispose(): void {
    // Nothing is held outside this object.
  }
}

/** A `query` design document's reduces are builtins (`_count`): no JavaScript runs for them. */
function noJavaScript(): CouchError {
  return new CouchError(500, 'query_parse_error', 'A query-language design document has no JavaScript reduce.');
}
