/**
 * The design-document functions phase: writes into a database whose design document has a simple
 * validate_doc_update, against the same writes into a plain database (the target: validated
 * writes at ≥ 70% of the plain rate), and a `_list` over a view of N rows (rows/s; the run
 * measures the server's peak RSS around it). Every answer is checked.
 */
import { Client } from './http.js';
import { now } from './stats.js';
import * as w from './workloads.js';
import type { Figures, Target } from './workloads.js';

const enc = encodeURIComponent;

export const VALIDATE = 'function(newDoc, oldDoc, userCtx) { if (!newDoc._deleted && typeof newDoc.type !== "string") throw({forbidden: "type required"}); }';
export const LIST = 'function(head, req) { start({headers: {"Content-Type": "text/plain"}}); var row; while ((row = getRow())) { send(row.id + "," + row.key + "\\n"); } }';

export interface DesignPlan {
  puts: { docs: number; clients: number; capSeconds: number };
  bulk: { batches: number; batchSize: number; capSeconds: number };
  listRows: number;
  capSeconds: number;
}

/** Plain and validated writes, single PUTs then _bulk_docs, alternating so neither runs on a warmer server. */
export async function validatedWrites(target: Target, p: DesignPlan): Promise<Figures> {
  const plain = 'bench_ddoc_plain';
  const checked = 'bench_ddoc_vdu';
  await w.createDb(target, plain);
  await w.createDb(target, checked);
  const client = new Client(target.base, target.headers);
  try {
    await client.expect('PUT', `/${checked}/_design/rules`, [201], JSON.stringify({ validate_doc_update: VALIDATE }));
    // The validator rejects: check once that it is really in force.
    const rejected = await client.expect('PUT', `/${checked}/untyped`, [403], JSON.stringify({ n: 1 }));
    if (!rejected.body.includes('type required')) throw new Error(`validate_doc_update did not answer as expected: ${rejected.body}`);
  } finally {
    client.close();
  }
  const putPlain = (await w.singlePuts(target, plain, p.puts)).figures.put_single!;
  const putChecked = (await w.singlePuts(target, checked, p.puts)).figures.put_single!;
  const bulkPlain = (await w.bulkDocs(target, plain, { ...p.bulk, idPrefix: 'b-' })).figures.bulk_docs!;
  const bulkChecked = (await w.bulkDocs(target, checked, { ...p.bulk, idPrefix: 'b-' })).figures.bulk_docs!;
  return {
    ddoc_put_plain: putPlain,
    ddoc_put_validated: putChecked,
    ddoc_put_validated_pct: { value: (100 * putChecked.value) / putPlain.value, unit: '%', detail: { plain: putPlain.value, validated: putChecked.value } },
    ddoc_bulk_plain: bulkPlain,
    ddoc_bulk_validated: bulkChecked,
    ddoc_bulk_validated_pct: { value: (100 * bulkChecked.value) / bulkPlain.value, unit: '%', detail: { plain: bulkPlain.value, validated: bulkChecked.value } },
  };
}

/** Loads N small documents and a design document with a view and a list; builds the view. */
export async function prepareList(target: Target, db: string, p: DesignPlan): Promise<void> {
  await w.createDb(target, db);
  const client = new Client(target.base, target.headers);
  const deadline = now() + p.capSeconds * 1000;
  try {
    for (let start = 0; start < p.listRows; start += 1000) {
      if (now() > deadline) throw new Error(`loading did not finish within ${p.capSeconds} s`);
      const docs = [];
      for (let i = start; i < Math.min(p.listRows, start + 1000); i++) docs.push({ _id: `r${String(i).padStart(8, '0')}`, n: i });
      await client.expect('POST', `/${enc(db)}/_bulk_docs`, [201], JSON.stringify({ docs }), 120_000);
    }
    const ddoc = { views: { by_n: { map: 'function(doc) { emit(doc.n, null); }' } }, lists: { csv: LIST } };
    await client.expect('PUT', `/${enc(db)}/_design/l`, [201], JSON.stringify(ddoc));
    await client.expect('GET', `/${enc(db)}/_design/l/_view/by_n?limit=1`, [200], undefined, p.capSeconds * 1000);
  } finally {
    client.close();
  }
}

/** The whole list, read to the end: rows/s (every row checked to be there). */
export async function listRun(target: Target, db: string, p: DesignPlan): Promise<Figures> {
  const client = new Client(target.base, target.headers);
  try {
    const t0 = now();
    const reply = await client.expect('GET', `/${enc(db)}/_design/l/_list/csv/by_n`, [200], undefined, p.capSeconds * 1000);
    const seconds = (now() - t0) / 1000;
    let lines = 0;
    for (let i = reply.body.indexOf('\n'); i >= 0; i = reply.body.indexOf('\n', i + 1)) lines++;
    if (lines !== p.listRows) throw new Error(`_list returned ${lines} rows, ${p.listRows} expected`);
    return { ddoc_list: { value: lines / seconds, unit: 'rows/s', detail: { rows: lines, expectedRows: p.listRows, seconds, bytes: reply.body.length } } };
  } finally {
    client.close();
  }
}
