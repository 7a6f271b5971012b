/**
 * CouchDB 2's replication scheduler views over real HTTP: `/_scheduler/jobs` lists running jobs
 * (`POST /_replicate` and `_replicator` ones) with their events and progress, and
 * `/_scheduler/docs` the `_replicator` documents with their states, filtered and paged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { basic, defineAdmin } from '../helpers/auth.js';

const { server, c } = await serverForFile();

interface JobJson {
  id: string;
  database: string | null;
  doc_id: string | null;
  source: string;
  target: string;
  user: string | null;
  node: string;
  start_time: string;
  history: { timestamp: string; type: string }[];
  info: { docs_written: number; revisions_checked: number };
}

test('setup: a source with documents and targets', async () => {
  assert.equal((await c.put('/sched-src')).status, 201);
  const docs = Array.from({ length: 20 }, (_, i) => ({ _id: `d${i}`, n: i }));
  assert.equal((await c.post('/sched-src/_bulk_docs', { docs })).status, 201);
  assert.equal((await c.put('/sched-a')).status, 201);
});

test('/_scheduler/jobs lists a continuous _replicate job with its events and progress; by id too', async () => {
  const started = await c.post('/_replicate', { source: 'sched-src', target: 'sched-a', continuous: true });
  assert.equal(started.status, 202, started.text);
  const id = started.body._local_id as string;
  const job = await waitFor('the job to copy everything', async () => {
    const r = await c.get('/_scheduler/jobs');
    assert.equal(r.status, 200);
    const found = (r.body.jobs as JobJson[]).find((j) => j.id === id);
    return found && found.info.docs_written === 20 ? { listing: r.body, job: found } : undefined;
  });
  assert.equal(job.listing.total_rows, job.listing.jobs.length);
  assert.equal(job.listing.offset, 0);
  assert.equal(job.job.database, null);
  assert.equal(job.job.doc_id, null);
  assert.equal(job.job.source, 'sched-src');
  assert.equal(job.job.target, 'sched-a');
  assert.equal(job.job.node, (await c.get('/_node/_local')).body.name);
  assert.match(job.job.start_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(job.job.history.map((e) => e.type).reverse().slice(0, 2), ['added', 'started']);
  assert.ok(job.job.info.revisions_checked >= 20);

  const one = await c.get(`/_scheduler/jobs/${encodeURIComponent(id)}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.id, id);
  assert.equal((await c.get('/_scheduler/jobs/nosuchjob')).status, 404);

  const paged = await c.get('/_scheduler/jobs?skip=5&limit=1');
  assert.equal(paged.body.offset, Math.min(5, paged.body.total_rows));

  assert.equal((await c.post('/_replicate', { source: 'sched-src', target: 'sched-a', continuous: true, cancel: true })).status, 200);
  await waitFor('the job to go', async () => !(await c.get('/_scheduler/jobs')).body.jobs.some((j: JobJson) => j.id === id));
});

test('/_scheduler/docs shows _replicator documents: running, then completed or failed', async () => {
  assert.equal((await c.put('/_replicator/sched-cont', { source: 'sched-src', target: 'sched-b', create_target: true, continuous: true })).status, 201);
  assert.equal((await c.put('/_replicator/sched-once', { source: 'sched-src', target: 'sched-c', create_target: true })).status, 201);
  assert.equal((await c.put('/_replicator/sched-bad', { source: 'sched-src', target: 'not a valid name!' })).status, 201);

  const running = await waitFor('sched-cont running', async () => {
    const r = await c.get('/_scheduler/docs/_replicator/sched-cont');
    return r.status === 200 && r.body.state === 'running' ? r.body : undefined;
  });
  assert.equal(running.database, '_replicator');
  assert.equal(running.doc_id, 'sched-cont');
  assert.equal(running.source, 'sched-src');
  assert.equal(running.target, 'sched-b');
  assert.equal(running.error_count, 0);
  assert.match(running.id, /^[0-9a-f]{32}\+continuous/);
  const job = (await c.get('/_scheduler/jobs')).body.jobs.find((j: JobJson) => j.doc_id === 'sched-cont');
  assert.equal(job.database, '_replicator');

  await waitFor('sched-once completed', async () => (await c.get('/_scheduler/docs/_replicator/sched-once')).body.state === 'completed');
  const failed = await waitFor('sched-bad failed', async () => {
    const r = await c.get('/_scheduler/docs/_replicator/sched-bad');
    return r.body.state === 'failed' ? r.body : undefined;
  });
  assert.equal(typeof failed.info.error, 'string');
  assert.equal(failed.id, null);

  const all = await c.get('/_scheduler/docs');
  assert.equal(all.status, 200);
  const ids = all.body.docs.map((d: { doc_id: string }) => d.doc_id);
  for (const id of ['sched-bad', 'sched-cont', 'sched-once']) assert.ok(ids.includes(id), id);
  assert.deepEqual(ids, [...ids].sort());
  assert.equal(all.body.total_rows, ids.length);
  const same = await c.get('/_scheduler/docs/_replicator');
  assert.deepEqual(same.body.docs.map((d: { doc_id: string }) => d.doc_id), ids);

  const onlyRunning = await c.get('/_scheduler/docs?states=running');
  assert.deepEqual(onlyRunning.body.docs.map((d: { doc_id: string }) => d.doc_id), ['sched-cont']);
  const two = await c.get('/_scheduler/docs?states=completed,failed&limit=1&skip=1');
  assert.equal(two.body.total_rows, 2);
  assert.equal(two.body.offset, 1);
  assert.deepEqual(two.body.docs.map((d: { doc_id: string }) => d.doc_id), ['sched-once']);
  assert.equal((await c.get('/_scheduler/docs?states=sleeping')).status, 400);
  assert.equal((await c.get('/_scheduler/docs/_replicator/nosuchdoc')).status, 404);
  assert.equal((await c.get('/_scheduler/docs/notreplicator')).status, 400);
  assert.equal((await c.get('/_scheduler/elsewhere')).status, 404);

  // A deleted document leaves the listing and stops its job.
  const rev = (await c.get('/_replicator/sched-cont')).body._rev;
  assert.equal((await c.del(`/_replicator/sched-cont?rev=${rev}`)).status, 200);
  await waitFor('sched-cont gone', async () => (await c.get('/_scheduler/docs/_replicator/sched-cont')).status === 404);
  await waitFor('its job gone', async () => !(await c.get('/_scheduler/jobs')).body.jobs.some((j: JobJson) => j.doc_id === 'sched-cont'));
});

test('the scheduler is for server admins', async () => {
  await defineAdmin(server.url, 'boss', 'bosspw');
  assert.equal((await c.get('/_scheduler/jobs')).status, 401);
  assert.equal((await c.get('/_scheduler/docs')).status, 401);
  assert.equal((await c.get('/_scheduler/docs', { headers: basic('boss', 'bosspw') })).status, 200);
});
