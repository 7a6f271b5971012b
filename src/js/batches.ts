/** What the query server's callers share: cutting work into batches, and checking the sandbox's replies. */
import { CouchError } from '../errors.js';

/** [start, end) ranges of items of the given sizes (JSON texts' lengths): at most `perBatch` items and, past the first, `maxBytes` each. */
export function batchRanges(sizes: readonly number[], perBatch: number, maxBytes: number): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  while (start < sizes.length) {
    let end = start;
    let bytes = 0;
    while (end < sizes.length && end - start < perBatch && (end === start || bytes + sizes[end]! <= maxBytes)) {
      bytes += sizes[end]! + 1;
      end++;
    }
    out.push([start, end]);
    start = end;
  }
  return out;
}

export function invalidOutput(): CouchError {
  return new CouchError(500, 'os_process_error', 'the sandbox returned malformed output');
}

/** `[logs, results]` as the sandbox sends it, checked for shape (the sandbox is not trusted); `count` results when given. */
export function parseReply(text: string, count: number | undefined): [unknown[], unknown] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidOutput();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Array.isArray(parsed[0])) throw invalidOutput();
  if (count !== undefined && (!Array.isArray(parsed[1]) || parsed[1].length !== count)) throw invalidOutput();
  return [parsed[0] as unknown[], parsed[1]];
}

/** A map batch's answer: logs, and the rows each map function emitted for each document. */
export interface MapOutput {
  logs: unknown[];
  /** results[d][m]: the [key, value] rows map function m emitted for document d. */
  results: [unknown, unknown][][][];
}

/** The sandbox's reply to a map batch (JSON `[logs, results]`), checked for shape: `count` documents, `mapCount` maps each. */
export function parseMapReply(text: string, count: number, mapCount: number): MapOutput {
  const [logs, reply] = parseReply(text, count);
  const results = reply as unknown[];
  for (const perMap of results) {
    if (!Array.isArray(perMap) || perMap.length !== mapCount) throw invalidOutput();
    for (const rows of perMap as unknown[]) {
      if (!Array.isArray(rows)) throw invalidOutput();
      for (const row of rows as unknown[]) if (!Array.isArray(row) || row.length !== 2) throw invalidOutput();
    }
  }
  return { logs, results: results as MapOutput['results'] };
}
