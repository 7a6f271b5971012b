/**
 * The replication id: a stable MD5 of everything that decides what a replication produces, so
 * the same request (after a restart, or from another client) finds its checkpoints again.
 * `replication_id_version` 3 as CouchDB 1.6 names it: the server's uuid, both endpoints, the
 * filter (its code, not only its name) and its parameters, or the document ids, or the Mango
 * selector. `continuous`
 * and `create_target` do not change the checkpoints, only the id of the running job, which
 * CouchDB writes as suffixes (`<base>+continuous+create_target`).
 */
import { createHash } from 'node:crypto';

export const REPLICATION_ID_VERSION = 3;

export interface ReplicationIdInput {
  serverUuid: string;
  /** Endpoint identities (see endpointIdentity): never secrets. */
  source: unknown;
  target: unknown;
  /** The filter's name, and the function's source for a design-document filter. */
  filter?: { name: string; code?: string };
  queryParams?: Record<string, unknown>;
  docIds?: readonly string[];
  selector?: Record<string, unknown>;
  continuous: boolean;
  createTarget: boolean;
}

export interface ReplicationId {
  /** Names the checkpoint documents: `_local/<base>`. */
  base: string;
  /** Names the running job: the base with CouchDB's option suffixes. */
  full: string;
}

export function replicationId(input: ReplicationIdInput): ReplicationId {
  const parts: unknown[] = [input.serverUuid, input.source, input.target];
  if (input.docIds) parts.push(['doc_ids', [...input.docIds].sort()]);
  else if (input.filter) parts.push(['filter', input.filter.name, input.filter.code ?? null, canonical(input.queryParams ?? {})]);
  else if (input.selector) parts.push(['selector', canonical(input.selector)]);
  const base = createHash('md5').update(JSON.stringify(parts)).digest('hex');
  const full = base + (input.continuous ? '+continuous' : '') + (input.createTarget ? '+create_target' : '');
  return { base, full };
}

/** JSON value with object keys sorted, so equal parameters hash equally whatever their order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return Object.keys(obj).sort().map((k) => [k, canonical(obj[k])]);
  }
  return value;
}
