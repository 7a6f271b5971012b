/**
 * The `_replicator` database's rules for users who are not its admins, as CouchDB 1.6's
 * replicator applies them: a document records its `owner` (the user who wrote it, under whose
 * name its job runs); users change only their own documents; and the credentials in other
 * users' sources and targets are never shown to them.
 */
import { forbidden, type CouchError } from '../errors.js';
import type { IncomingDoc } from '../core/document.js';
import type { UserContext } from './user-context.js';

/**
 * Sets or checks the owner of a replication document written by `ctx` (`admin`: a database or
 * server admin, who may write anyone's). The document may be changed in place.
 */
export function prepareReplicationDoc(
  doc: IncomingDoc, old: Record<string, unknown> | undefined, ctx: UserContext, admin: boolean,
): CouchError | undefined {
  const id = doc.id ?? '';
  if (id.startsWith('_design/') || id.startsWith('_local/')) return undefined;
  const oldOwner = old?.['owner'];
  if (!admin && typeof oldOwner === 'string' && oldOwner !== ctx.name) {
    return forbidden("Can't update replication documents from other users.");
  }
  if (doc.deleted) return undefined;
  const owner = doc.body['owner'];
  if (owner === undefined || (owner === null && admin)) {
    if (ctx.name !== null) {
      doc.body['owner'] = ctx.name;
      doc.bodyJson = JSON.stringify(doc.body);
    }
    return undefined;
  }
  if (owner === ctx.name || admin) return undefined;
  return forbidden("Can't update replication documents from other users.");
}

/** A replication document as another (non-admin) user may read it: no credentials in its endpoints. */
export function withoutCredentials(doc: Record<string, unknown>): Record<string, unknown> {
  const out = { ...doc };
  for (const field of ['source', 'target']) {
    const endpoint = out[field];
    if (typeof endpoint === 'string') out[field] = stripUrl(endpoint);
    else if (endpoint !== null && typeof endpoint === 'object' && !Array.isArray(endpoint)) {
      // `{url, headers}`: the headers (Authorization, cookies) are credentials too.
      const { url } = endpoint as { url?: unknown };
      out[field] = typeof url === 'string' ? { url: stripUrl(url) } : {};
    }
  }
  return out;
}

function stripUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}
