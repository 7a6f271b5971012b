/**
 * CouchDB 2's replication scheduler views, for tools that watch replications:
 *
 *   GET /_scheduler/jobs[/{id}]              running jobs: identity, events, progress
 *   GET /_scheduler/docs[/{db}[/{docid}]]    `_replicator` documents and their states
 *
 * Server admins only. The states are CouchDB 2's: initializing, running, crashing (a job
 * restarting after a failure), completed and failed; the documents themselves keep CouchDB 1.6's
 * `_replication_state` fields.
 */
import { CouchError, badRequest, notFound } from '../errors.js';
import type { Job, ReplicationDocState } from '../replicator/manager.js';
import { isoSeconds } from '../replicator/replication.js';
import { json } from './reply.js';
import type { Route } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { NODE_NAME } from './server.js';

const DEFAULT_LIMIT = 100;
const STATES: readonly ReplicationDocState['state'][] = ['initializing', 'running', 'crashing', 'completed', 'failed'];

export const schedulerRoutes: Route[] = [
  {
    shape: 'global', name: '_scheduler',
    methods: {
      GET: async (req, p, svc) => {
        const [area, ...rest] = p.rest;
        if (area === 'jobs' && rest.length === 0) {
          const jobs = svc.replicator.list().sort((a, b) => (a.id.full < b.id.full ? -1 : a.id.full > b.id.full ? 1 : 0));
          const { offset, page } = paged(req, jobs);
          return json(200, { total_rows: jobs.length, offset, jobs: page.map((job) => jobJson(svc, job)) });
        }
        if (area === 'jobs' && rest.length === 1) {
          const job = svc.replicator.list().find((j) => j.id.full === rest[0] || j.id.base === rest[0]);
          if (!job) throw notFound();
          return json(200, jobJson(svc, job));
        }
        if (area === 'docs' && rest.length <= 2) {
          const database = rest[0] ?? replicatorDb(svc);
          if (database !== '_replicator' && !database.endsWith('/_replicator')) throw badRequest(`Not a replicator database: ${database}`);
          const docs = svc.replicator.documents().filter((d) => d.database === database);
          if (rest.length === 2) {
            const doc = docs.find((d) => d.docId === rest[1]);
            if (!doc) throw notFound();
            return json(200, docJson(doc));
          }
          const wanted = statesOf(req);
          const listed = docs.filter((d) => !wanted || wanted.includes(shownState(d)))
            .sort((a, b) => (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0));
          const { offset, page } = paged(req, listed);
          return json(200, { total_rows: listed.length, offset, docs: page.map(docJson) });
        }
        throw new CouchError(404, 'not_found', 'missing');
      },
    },
  },
];

function replicatorDb(svc: Services): string {
  return svc.config.getString('replicator', 'db', '_replicator');
}

function paged<T>(req: Request, all: readonly T[]): { offset: number; page: T[] } {
  const limit = req.int('limit', DEFAULT_LIMIT);
  const skip = req.int('skip', 0);
  if (limit < 0 || skip < 0) throw badRequest('limit and skip must be non-negative integers');
  const offset = Math.min(skip, all.length);
  return { offset, page: all.slice(offset, offset + limit) };
}

/** `?states=running,failed`: the states to list, or undefined for all. */
function statesOf(req: Request): string[] | undefined {
  const param = req.string('states');
  if (param === undefined || param === '') return undefined;
  const states = param.split(',').map((s) => s.trim());
  for (const state of states) {
    if (!(STATES as readonly string[]).includes(state)) throw badRequest(`Invalid replication state: ${state}`);
  }
  return states;
}

/** A document's state, `crashing` while its job restarts after a failure. */
function shownState(doc: ReplicationDocState): ReplicationDocState['state'] {
  return doc.state === 'running' && doc.job?.replication.history[0]?.type === 'crashed' ? 'crashing' : doc.state;
}

function crashes(job: Job): number {
  return job.replication.history.filter((e) => e.type === 'crashed').length;
}

function jobJson(svc: Services, job: Job): Record<string, unknown> {
  const { options, history, startTime } = job.replication;
  return {
    id: job.id.full,
    database: job.docId === null ? null : replicatorDb(svc),
    doc_id: job.docId,
    history,
    info: job.replication.progress(),
    node: NODE_NAME,
    pid: null,
    source: options.sourceDisplay,
    start_time: isoSeconds(startTime),
    target: options.targetDisplay,
    user: job.owner.name,
  };
}

function docJson(doc: ReplicationDocState): Record<string, unknown> {
  const state = shownState(doc);
  return {
    database: doc.database,
    doc_id: doc.docId,
    error_count: doc.job ? crashes(doc.job) : state === 'failed' ? 1 : 0,
    id: doc.job?.id.full ?? null,
    info: doc.job ? doc.job.replication.progress() : doc.error !== undefined ? { error: doc.error } : null,
    last_updated: isoSeconds(doc.lastUpdated),
    node: NODE_NAME,
    source: doc.source,
    start_time: isoSeconds(doc.startTime),
    state,
    target: doc.target,
  };
}
