/**
 * A replication request as `POST /_replicate` and `_replicator` documents state it: endpoints,
 * `continuous`, `create_target`, `cancel`, `filter` + `query_params`, `doc_ids`, `since_seq`,
 * and CouchDB 2's `selector` (a Mango selector the source's `_changes` applies).
 */
import { badRequest } from '../errors.js';
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
}

export function parseReplicationRequest(body: Record<string, unknown>): ReplicationRequest {
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
  if (filterName !== undefined && filterName !== '_view' && filterName !== '_design' && !/^[^/]+\/[^/]+$/.test(filterName)) {
    throw badRequest('filter must be of the form ddoc/name');
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
