/**
 * Access control after routing, before the handler: the route's declared level (api/route.ts)
 * against the request's `userCtx` and the database's security object, with CouchDB 1.6's
 * answers: server- and database-admin checks fail with 401, and so does membership, for
 * anonymous and signed-in callers alike (couch_db:check_is_member).
 *
 * The users database adds its own read rules for callers who are not its admins: a user reads
 * only their own document (others' are 404, or only their `public_fields`); listings, changes,
 * views and replication reads are refused. Its write rules live in the auth engine
 * (auth/users-db.ts) and apply on every write path.
 */
import { forbidden, notFound, unauthorized, type CouchError } from '../errors.js';
import { isDbAdmin, isDbReader } from '../auth/access.js';
import { isServerAdmin, type UserContext } from '../auth/user-context.js';
import { parsePublicFields, publicFieldsOnly, publicView } from '../auth/users-db.js';
import { withoutCredentials } from '../auth/replicator-db.js';
import { USER_DOC_PREFIX } from '../couchdb-names.js';
import { json, type Reply } from './reply.js';
import { readObject } from './common.js';
import { readRevsMap } from './databases.js';
import type { Access, RouteParams, RouteShape } from './route.js';
import type { Request } from './request.js';
import type { Database } from '../core/database.js';
import type { Services } from './services.js';

export interface RouteTarget {
  access: Access;
  shape: RouteShape;
  name: string | undefined;
  params: RouteParams;
}

/** Refuses a request its caller may not make; may answer it instead (users' public fields). */
export async function authorize(req: Request, target: RouteTarget, svc: Services): Promise<Reply | undefined> {
  const ctx = req.userCtx;
  if (isServerAdmin(ctx) || target.access === 'public') return undefined;
  if (target.access === 'server_admin') throw unauthorized('You are not a server admin.');

  const db = await svc.dbs.get(target.params.db);
  const security = db.getSecurity();
  if (isDbAdmin(ctx, security)) return undefined;
  checkMember(ctx, security);
  if (target.access === 'db_admin') throw unauthorized('You are not a db or server admin.');
  if (db.name === svc.auth.usersDbName) return usersDbRead(req, target, svc);
  if (db.name === svc.auth.replicatorDbName) return replicatorDbRead(req, target, svc);
  return undefined;
}

/**
 * CouchDB 1.6 (couch_db:check_is_member, as it opens the database) answers 401 to anyone not
 * a member, signed in or not, before a handler asks for a database admin.
 */
function checkMember(ctx: UserContext, security: Record<string, unknown>): void {
  if (!isDbReader(ctx, security)) throw unauthorized('You are not authorized to access this db.');
}

/**
 * What CouchDB 1.6's couch_httpd_db:do_db_req does before any database handler runs, for routes
 * that look at the request before the caller's rights: it opens the database (404 when there is
 * none) as the caller, which couch_db:open refuses to anyone not a member.
 */
export async function openAsMember(req: Request, target: RouteTarget, svc: Services): Promise<void> {
  if (target.shape === 'root' || target.shape === 'global') return;
  const db = await svc.dbs.get(target.params.db);
  if (!isServerAdmin(req.userCtx)) checkMember(req.userCtx, db.getSecurity());
}

/** For handlers that check other things before the caller's rights: a server admin or a 401. */
export function requireServerAdmin(req: Request): void {
  if (!isServerAdmin(req.userCtx)) throw unauthorized('You are not a server admin.');
}

/** For handlers that check other things before the caller's rights: a database admin or a 401. */
export function requireDbAdmin(req: Request, db: Database): void {
  if (isServerAdmin(req.userCtx) || isDbAdmin(req.userCtx, db.getSecurity())) return;
  throw unauthorized('You are not a db or server admin.');
}

/**
 * The replicator database for a caller who is not its admin: other users' documents read
 * without the credentials in their endpoints; reads that would show whole documents in bulk
 * (include_docs, _bulk_get, open_revs, attachments) are for the owner's own documents only.
 */
async function replicatorDbRead(req: Request, target: RouteTarget, svc: Services): Promise<Reply | undefined> {
  const { params } = target;
  // System databases keep _all_docs and design-document actions to their admins (CouchDB 1.6).
  if (target.shape === 'designHandler') throw forbidden(SYSTEM_DESIGN_ACTIONS);
  if (target.shape === 'dbHandler' && target.name === '_all_docs') throw forbidden('Only admins can access _all_docs of system databases.');
  if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') return undefined;
  if (target.shape === 'document' && (req.method === 'GET' || req.method === 'HEAD') && !params.docId.startsWith('_')) {
    const db = await svc.dbs.get(params.db);
    const doc = await db.openDoc(params.docId).catch(() => undefined);
    if (!doc || doc.deleted) return undefined;
    const body = JSON.parse(doc.json) as Record<string, unknown>;
    if (body['owner'] === req.userCtx.name) return undefined;
    // Older revisions and revision listings of another user's document would show its credentials.
    if (['rev', 'open_revs', 'revs', 'revs_info', 'attachments'].some((p) => req.has(p))) {
      throw forbidden("Can't read replication documents of other users.");
    }
    return json(200, withoutCredentials(body));
  }
  if (target.shape === 'dbHandler' && (target.name === '_changes' || target.name === '_find')) {
    // As CouchDB 1.6's after_doc_read shows them: the caller's own documents whole, others'
    // without the credentials in their endpoints (`_find` matches what the caller sees).
    const name = req.userCtx.name;
    req.docView = (doc) => (name !== null && doc['owner'] === name ? doc : withoutCredentials(doc));
    return undefined;
  }
  if (target.shape === 'dbHandler' && target.name === '_bulk_get') throw forbidden('Only admins can read whole replication documents in bulk.');
  return undefined;
}

const SYSTEM_DESIGN_ACTIONS = 'Only admins can access design document actions for system databases.';

/** The users database's rules for a caller who is not its admin. */
async function usersDbRead(req: Request, target: RouteTarget, svc: Services): Promise<Reply | undefined> {
  const ctx = req.userCtx;
  const { params } = target;
  const own = (id: string) => ctx.name !== null && id === USER_DOC_PREFIX + ctx.name;
  const shared = (id: string) => id.startsWith('_design/') || id.startsWith('_local/');
  const write = req.method === 'PUT' || req.method === 'DELETE';
  // Design documents of the users database are for its admins only, and so is all that reads
  // them (views, shows, lists) (CouchDB 1.6's couch_users_db:after_doc_read).
  if (target.shape === 'designHandler') throw forbidden(SYSTEM_DESIGN_ACTIONS);
  if ((target.shape === 'document' || target.shape === 'attachment') && params.docId.startsWith('_design/') && !write) {
    throw forbidden('Only administrators can view design docs in the users database.');
  }
  switch (target.shape) {
    case 'database':
      return undefined;
    case 'document': {
      if (shared(params.docId) || own(params.docId)) return undefined;
      if (write) return undefined; // the write rules decide
      if (req.method === 'GET' || req.method === 'HEAD') return publicFieldsOf(params, svc);
      throw notFound('missing'); // COPY would read another user's document
    }
    case 'attachment':
      if (shared(params.docId) || own(params.docId) || write) return undefined;
      throw notFound('missing');
    case 'dbHandler':
      if (['_bulk_docs', '_ensure_full_commit', '_security', '_revs_limit', '_compact'].includes(target.name ?? '')) return undefined;
      if (target.name === '_revs_diff' || target.name === '_missing_revs') return ownRevsDiff(req, target, svc);
      // A public users database lists its documents once public_fields is set (couch_mrview_http's
      // all_docs_req), each cut to those fields, as its filtered_view_cb cuts them.
      if (target.name === '_all_docs' && svc.auth.settings.getBool('users_db_public', false) && svc.auth.settings.get('public_fields') !== undefined) {
        // Set whatever the query string says: include_docs may come in a POST body too.
        const fields = parsePublicFields(svc.auth.settings.get('public_fields'));
        req.docView = (doc) => publicFieldsOnly(doc, fields);
        return undefined;
      }
      // CouchDB 1.6 keeps the authentication database's _changes to its admins, signed in or not.
      if (target.name === '_changes') throw unauthorized('You are not a db or server admin.');
      throw listingRefused(ctx, target.name ?? '');
    default:
      throw listingRefused(ctx, target.name ?? '');
  }
}

/**
 * `_revs_diff` (or `_missing_revs`) limited to the caller's own document, so a user can push
 * it by replication: every other id is answered as wholly missing, existing or not.
 */
async function ownRevsDiff(req: Request, target: RouteTarget, svc: Services): Promise<Reply> {
  const body = await readObject(req, svc);
  const ownId = req.userCtx.name === null ? undefined : USER_DOC_PREFIX + req.userCtx.name;
  const asked = readRevsMap(body);
  const db = await svc.dbs.get(target.params.db);
  const own = ownId !== undefined && asked[ownId] ? await db.revsDiff({ [ownId]: asked[ownId]! }) : {};
  const diff: Record<string, { missing: string[] }> = {};
  for (const [id, revs] of Object.entries(asked)) {
    // Another's document is answered as an unknown one is, listed even when asked for no revisions.
    if (id !== ownId) diff[id] = { missing: [...new Set(revs)] };
    else if (own[id]) diff[id] = own[id];
  }
  if (target.name === '_revs_diff') return json(200, diff);
  const missing = Object.fromEntries(Object.entries(diff).map(([id, entry]) => [id, entry.missing]));
  return json(200, { missing_revs: missing, missed_revs: missing });
}

function listingRefused(ctx: UserContext, name: string): CouchError {
  const reason = `Only admins can access ${name} of system databases.`;
  // couch_mrview_http:all_docs_req refuses everyone alike; other listings ask a stranger to sign in.
  return ctx.name === null && name !== '_all_docs' ? unauthorized(reason) : forbidden(reason);
}

/**
 * Another user's document as the caller (signed in or not) may see it: only `public_fields`,
 * as CouchDB 1.6's couch_users_db:after_doc_read strips it for anyone but the owner and admins.
 */
async function publicFieldsOf(params: RouteParams, svc: Services): Promise<Reply> {
  const fields = parsePublicFields(svc.auth.settings.get('public_fields'));
  if (fields.length === 0 || !params.docId.startsWith(USER_DOC_PREFIX)) throw notFound('missing');
  const db = await svc.dbs.get(params.db);
  const doc = await db.openDoc(params.docId);
  if (doc.deleted) throw notFound('missing');
  const shown = publicView(JSON.parse(doc.json) as Record<string, unknown>, fields);
  // Nothing public in it: as missing (couch_users_db:after_doc_read).
  if (Object.keys(shown).length <= 2) throw notFound('missing');
  return json(200, shown);
}
