/**
 * A replication request as `POST /_replicate` and `_replicator` documents state it: endpoints,
 * `continuous`, `create_target`, `cancel`, `filter` + `query_params`, `doc_ids`, `since_seq`,
 * CouchDB 2's `selector` (a Mango selector the source's `_changes` applies), and the tuning
 * options of CouchDB 1.6's couch_replicator_utils:convert_options, which override the
 * `[replicator]` settings for this job and leave its replication id alone.
 */
import { badRequest, CouchError } from '../errors.js';
import { normalizeOrBadRequest, type JsonObject } from '../mango/selector.js';
import { parseEndpoint, type Endpoint } from './endpoint.js';

export interface ReplicationRequest {
  source: Endpoint;
  target: Endpoint;
  continuous: boolean;
  createTarget: boolean;
  cancel: boolean;
  filter: string | undefined;
  queryParams: Record<string, unknown> | undefined;
  docIds: string[] | undefined;
  selector: JsonObject | undefined;
  /** Where to start reading the source, instead of the checkpoint's sequence. */
  sinceSeq: number | string | undefined;
  tuning: ReplicationTuning;
}

/** The request's own tuning options; each one left out takes its `[replicator]` setting. */
export interface ReplicationTuning {
  workerProcesses?: number;
  workerBatchSize?: number;
  httpConnections?: number;
  connectionTimeoutMs?: number;
  retriesPerRequest?: number;
  checkpointIntervalMs?: number;
  /** Only `false` turns checkpoints off, as couch_replicator matches it. */
  useCheckpoints?: boolean;
}

/** The integer options, by the name a request gives them. */
const INTEGER_OPTIONS = {
  worker_processes: 'workerProcesses',
  worker_batch_size: 'workerBatchSize',
  http_connections: 'httpConnections',
  connection_timeout: 'connectionTimeoutMs',
  retries_per_request: 'retriesPerRequest',
  checkpoint_interval: 'checkpointIntervalMs',
} as const satisfies Record<string, keyof ReplicationTuning>;

function parseTuning(body: Record<string, unknown>): ReplicationTuning {
  const tuning: ReplicationTuning = {};
  for (const [option, field] of Object.entries(INTEGER_OPTIONS)) {
    if (option in body) tuning[field] = couchInteger(body[option]);
  }
  if (body['use_checkpoints'] === false) tuning.useCheckpoints = false;
  else if ('use_checkpoints' in body) tuning.useCheckpoints = true;
  return tuning;
}

/**
 * An option's integer as couch_util:to_integer reads it: an integer, or a string of one; another
 * string fails in list_to_integer (badarg), anything else finds no clause (function_clause).
 * CouchDB answers either with a 500 `unknown_error` naming the Erlang error.
 */
function couchInteger(value: unknown): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string') {
    if (/^[+-]?\d+$/.test(value)) return Number(value);
    throw new CouchError(500, 'unknown_error', 'badarg');
  }
  throw new CouchError(500, 'unknown_error', 'function_clause');
}

export function parseReplicationRequest(body: Record<string, unknown>): ReplicationRequest {
  // CouchDB converts the options before it reads the endpoints, so their errors come first.
  const tuning = parseTuning(body);
  if (body['source'] === undefined) throw badRequest('Missing source');
  if (body['target'] === undefined) throw badRequest('Missing target');
  const filter = body['filter'];
  if (filter !== undefined && filter !== null && typeof filter !== 'string') throw badRequest('filter must be a string');
  const queryParams = body['query_params'];
  if (queryParams !== undefined && (queryParams === null || typeof queryParams !== 'object' || Array.isArray(queryParams))) {
    throw badRequest('query_params must be an object');
  }
  const docIds = body['doc_ids'];
  if (docIds !== undefined && docIds !== null && (!Array.isArray(docIds) || !docIds.every((x) => typeof x === 'string'))) {
    throw badRequest('doc_ids must be an array of strings');
  }
  // `filter: "_doc_ids"` with `doc_ids` is the same as `doc_ids` alone. Ids may come
  // percent-encoded (`_design%2Ffoo`), as CouchDB unquotes them.
  const ids = Array.isArray(docIds) ? (docIds as string[]).map(unquote) : undefined;
  const sinceSeq = body['since_seq'];
  if (sinceSeq !== undefined && sinceSeq !== null && typeof sinceSeq !== 'number' && typeof sinceSeq !== 'string') {
    throw badRequest('since_seq must be a sequence');
  }
  const filterName = typeof filter === 'string' && filter !== '' && !(filter === '_doc_ids' && ids) ? filter : undefined;
  if (filterName !== undefined && filterName !== '_view' && filterName !== '_design') {
    // CouchDB 1.6's reason (couch_replicator_utils:filter_code), with the 400 later CouchDB
    // answers (couch_replicator_parse:parse_transient_rep) where 1.6's throw escaped as a 500.
    if (!filterName.includes('/')) throw badRequest('Invalid filter. Must match `ddocname/filtername`.');
    if (!/^[^/]+\/[^/]+$/.test(filterName)) throw badRequest('filter must be of the form ddoc/name');
  }
  const selector = parseSelector(body['selector']);
  if (selector && (filterName !== undefined || ids)) throw badRequest('`selector`, `filter` and `doc_ids` are mutually exclusive');
  return {
    source: parseEndpoint(body['source'], 'source'),
    target: parseEndpoint(body['target'], 'target'),
    continuous: body['continuous'] === true,
    createTarget: body['create_target'] === true,
    cancel: body['cancel'] === true,
    filter: filterName,
    queryParams: queryParams as Record<string, unknown> | undefined,
    docIds: ids,
    selector,
    sinceSeq: sinceSeq ?? undefined,
    tuning,
  };
}

/** A `selector` as given, once Mango has checked it (its errors are the request's 400). */
function parseSelector(selector: unknown): JsonObject | undefined {
  if (selector === undefined || selector === null) return undefined;
  if (typeof selector !== 'object' || Array.isArray(selector)) throw badRequest('`selector` must be a JSON object');
  normalizeOrBadRequest(selector as JsonObject);
  return selector as JsonObject;
}

/** A doc id with percent-escapes decoded; one that is not valid percent-encoding stays as it is. */
function unquote(id: string): string {
  if (!id.includes('%')) return id;
  try {
    return decodeURIComponent(id);
  } catch {
    return id;
  }
}
