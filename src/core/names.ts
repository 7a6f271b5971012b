/** CouchDB's naming rules for databases and documents. */
import { CouchError, badRequest } from '../errors.js';

const DB_NAME = /^[a-z][a-z0-9_$()+/-]*$/;
const SYSTEM_DBS = new Set(['_users', '_replicator']);

export function isSystemDbName(name: string): boolean {
  return SYSTEM_DBS.has(name);
}

export function illegalDbNameReason(name: string): string {
  return `Name: '${name}'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.`;
}

/**
 * couch_server:check_dbname: the pattern alone, no length limit (CouchDB 2's 238 came later);
 * the store names a long database by a digest (storage/lmdb.ts), so any length is kept.
 */
export function validateDbName(name: string): void {
  if (isSystemDbName(name)) return;
  if (!DB_NAME.test(name) || name.split('/').includes('..')) {
    throw new CouchError(400, 'illegal_database_name', illegalDbNameReason(name));
  }
}

/** Document ids: any string, but `_`-prefixed ones are reserved for `_design/` and `_local/`. */
export function validateDocId(id: unknown): asserts id is string {
  if (typeof id !== 'string') throw badRequest('Document id must be a string');
  if (id === '') throw badRequest('Document id must not be empty');
  if (id.startsWith('_') && !id.startsWith('_design/') && !id.startsWith('_local/')) {
    throw badRequest('Only reserved document ids may start with underscore.');
  }
  // CouchDB 2's reason (1.6 stored such a document, which no URL can then reach).
  if (id === '_design/' || id === '_local/') throw badRequest(`Illegal document id \`${id}\``);
}

export const isDesignId = (id: string): boolean => id.startsWith('_design/');

/** The ids of design documents: from `_design/` (inclusive) up to `_design0` (exclusive), in byte order. */
export const DESIGN_IDS = { low: '_design/', high: '_design0' } as const;
export const isLocalId = (id: string): boolean => id.startsWith('_local/');
