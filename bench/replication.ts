/**
 * The replication phase: `POST /_replicate` of N small documents local-to-local by name and by
 * full URL, a pull from a second server process, documents with 256 KiB attachments by URL, and
 * a continuous replication's write → target latency (a continuous `_changes` feed on the target
 * sees the document written to the source).
 */
import { Client } from './http.js';
import { now, percentile } from './stats.js';
import * as w from './workloads.js';

export interface ReplicationPlan {
  docs: number;
  attachmentDocs: number;
  attachmentBytes: number;
  latencyWrites: number;
  capSeconds: number;
}

const enc = encodeURIComponent;
const MiB = 2 ** 20;

/** Loads `docs` small documents into `db` (batches of 1000). */
export async function loadDocs(target: w.Target, db: string, docs: number): Promise<void> {
  await w.createDb(target, db);
  const batchSize = Math.min(1000, docs);
  await w.bulkDocs(target, db, { batches: Math.ceil(docs / batchSize), batchSize, capSeconds: 600, idPrefix: 'r-' });
}

/** Loads documents with one attachment each (standalone PUTs, 4 clients). */
export async function loadAttachments(target: w.Target, db: string, content: Buffer, p: ReplicationPlan): Promise<void> {
  await w.createDb(target, db);
  await w.attachmentUploads(target, db, content, { count: p.attachmentDocs, bytes: p.attachmentBytes, clients: 4, capSeconds: 600 });
}

async function docCount(target: w.Target, db: string): Promise<number> {
  const client = new Client(target.base, target.headers);
  try {
    const reply = await client.expect('GET', `/${enc(db)}`, [200]);
    return (JSON.parse(reply.body) as { doc_count: number }).doc_count;
  } finally {
    client.close();
  }
}

/**
 * One one-shot `POST /_replicate` (target created), timed; checks that the target holds every
 * document afterwards. Returns documents per second and the seconds taken.
 */
export async function replicateOnce(
  target: w.Target, source: string, targetDb: string, expectedDocs: number, capSeconds: number, url?: string,
): Promise<{ docsPerSecond: number; seconds: number }> {
  const client = new Client(target.base, target.headers);
  const t0 = now();
  try {
    const body = JSON.stringify({ source, target: url ?? targetDb, create_target: true });
    await client.expect('POST', '/_replicate', [200], body, capSeconds * 1000);
  } finally {
    client.close();
  }
  const seconds = (now() - t0) / 1000;
  const copied = await docCount(target, targetDb);
  if (copied !== expectedDocs) throw new Error(`the target holds ${copied} documents, ${expectedDocs} expected`);
  return { docsPerSecond: expectedDocs / seconds, seconds };
}

/**
 * Continuous replication source → target (by URL, on one server); each write to the source is
 * timed until the target's continuous feed shows it.
 */
export async function continuousLatency(target: w.Target, p: ReplicationPlan): Promise<w.Figures> {
  const src = 'repl_live_src';
  const dst = 'repl_live_dst';
  await w.createDb(target, src);
  await w.createDb(target, dst);
  const request = { source: `${target.base}/${src}`, target: `${target.base}/${dst}`, continuous: true };
  const control = new Client(target.base, target.headers);
  await control.expect('POST', '/_replicate', [200, 202], JSON.stringify(request), 60_000);
  const feed = w.watchArrivals(target, `/${dst}/_changes?feed=continuous&since=now&heartbeat=1000`);
  const arrival = feed.arrival;
  const writer = new Client(target.base, target.headers);
  const latencies: number[] = [];
  try {
    await feed.opened;
    let live = false;
    for (let i = 0; i < 20 && !live; i++) {
      const seen = arrival(`warm-${i}`, 3000);
      await writer.expect('PUT', `/${src}/warm-${i}`, [201, 202], JSON.stringify(w.makeDoc(`warm-${i}`, i)));
      live = (await seen) !== undefined;
    }
    if (!live) throw new Error('the continuous replication delivered nothing within 20 warm-up writes');
    const deadline = now() + p.capSeconds * 1000;
    for (let i = 0; i < p.latencyWrites && now() < deadline; i++) {
      const id = `live-${i}`;
      const seen = arrival(id, 10_000);
      const t0 = now();
      await writer.expect('PUT', `/${src}/${id}`, [201, 202], JSON.stringify(w.makeDoc(id, i)));
      const at = await seen;
      if (at === undefined) throw new Error(`${id} did not reach the target within 10 s`);
      latencies.push(at - t0);
    }
  } finally {
    feed.close();
    writer.close();
    await control.request('POST', '/_replicate', JSON.stringify({ ...request, cancel: true }), 30_000).catch(() => undefined);
    control.close();
  }
  const detail = { writes: latencies.length, maxMs: Math.max(...latencies) };
  return {
    repl_live_p50: { value: percentile(latencies, 50), unit: 'ms', detail },
    repl_live_p99: { value: percentile(latencies, 99), unit: 'ms', detail },
  };
}

export const ATTACHMENT_MB = (p: ReplicationPlan): number => (p.attachmentDocs * p.attachmentBytes) / MiB;
