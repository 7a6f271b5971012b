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

/** Rounds the plain and validated writes alternate in, so both see the same machine (its other load varies). */
const ROUNDS = 5;

/**
 * Plain and validated writes, single PUTs then _bulk_docs, in alternating rounds (each round a
 * fresh pair of databases for the PUTs, one batch each for _bulk_docs); rates over all rounds.
 */
export async function validatedWrites(target: Target, p: DesignPlan): Promise<Figures> {
  const dbs = { plain: 'bench_ddoc_plain', checked: 'bench_ddoc_vdu' };
  const secondsOf = { putPlain: 0, putChecked: 0, bulkPlain: 0, bulkChecked: 0 };
  const docsOf = { putPlain: 0, putChecked: 0, bulkPlain: 0, bulkChecked: 0 };
  const rules = async (db: string): Promise<void> => {
    const client = new Client(target.base, target.headers);
    try {
      await client.expect('PUT', `/${db}/_design/rules`, [201], JSON.stringify({ validate_doc_update: VALIDATE }));
      // The validator rejects: check that it is really in force.
      const rejected = await client.expect('PUT', `/${db}/untyped`, [403], JSON.stringify({ n: 1 }));
      if (!rejected.body.includes('type required')) throw new Error(`validate_doc_update did not answer as expected: ${rejected.body}`);
    } finally {
      client.close();
    }
  };
  const add = (key: keyof typeof secondsOf, figure: w.Figure): void => {
    const detail = figure.detail as { docs: number; seconds: number };
    secondsOf[key] += detail.seconds;
    docsOf[key] += detail.docs;
  };
  const puts = { ...p.puts, docs: Math.max(1, Math.round(p.puts.docs / ROUNDS)) };
  for (let r = 0; r < ROUNDS; r++) {
    const plain = `${dbs.plain}_${r}`;
    const checked = `${dbs.checked}_${r}`;
    await w.createDb(target, plain);
    await w.createDb(target, checked);
    await rules(checked);
    const order: [string, 'putPlain' | 'putChecked'][] = [[plain, 'putPlain'], [checked, 'putChecked']];
    for (const [db, key] of r % 2 ? order.reverse() : order) add(key, (await w.singlePuts(target, db, puts)).figures.put_single!);
  }
  await w.createDb(target, dbs.plain);
  await w.createDb(target, dbs.checked);
  await rules(dbs.checked);
  for (let b = 0; b < p.bulk.batches; b++) {
    const order: [string, 'bulkPlain' | 'bulkChecked'][] = [[dbs.plain, 'bulkPlain'], [dbs.checked, 'bulkChecked']];
    for (const [db, key] of b % 2 ? order.reverse() : order) {
      add(key, (await w.bulkDocs(target, db, { ...p.bulk, batches: 1, idPrefix: `b${b}-` })).figures.bulk_docs!);
    }
  }
  const rate = (key: keyof typeof secondsOf): w.Figure => ({
    value: docsOf[key] / secondsOf[key],
    unit: 'docs/s',
    detail: { docs: docsOf[key], seconds: secondsOf[key], rounds: key.startsWith('put') ? ROUNDS : p.bulk.batches },
  });
  const pct = (validated: w.Figure, plain: w.Figure): w.Figure =>
    ({ value: (100 * validated.value) / plain.value, unit: '%', detail: { plain: plain.value, validated: validated.value, interleaved: true } });
  const figures = { putPlain: rate('putPlain'), putChecked: rate('putChecked'), bulkPlain: rate('bulkPlain'), bulkChecked: rate('bulkChecked') };
  return {
    ddoc_put_plain: figures.putPlain,
    ddoc_put_validated: figures.putChecked,
    ddoc_put_validated_pct: pct(figures.putChecked, figures.putPlain),
    ddoc_bulk_plain: figures.bulkPlain,
    ddoc_bulk_validated: figures.bulkChecked,
    ddoc_bulk_validated_pct: pct(figures.bulkChecked, figures.bulkPlain),
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
