/**
 * The `_replicator` database's rules for users who are not its admins, as CouchDB 1.6's
 * replicator applies them: a document records its `owner` (the user who wrote it, under whose
 * name its job runs); users change only their own documents; and the credentials in other
 * users' sources and targets are never shown to them.
 *
 * The field checks are also stored as `_design/_replicator`'s validation function, which the
 * replicator database holds as in CouchDB 1.6, for clients and tools that read it.
 */
import { forbidden, type CouchError } from '../errors.js';
import { ADMIN_ROLE, REPLICATOR_DESIGN_DOC, REPLICATOR_ROLE } from '../couchdb-names.js';
import type { IncomingDoc } from '../core/document.js';
import type { Database } from '../core/database.js';
import type { UserContext } from './user-context.js';
import { ensureValidationDesignDoc } from './system-design-doc.js';

/**
 * Sets or checks the owner of a replication document written by `ctx` (`admin`: a database or
 * server admin, who may write anyone's). The document may be changed in place. A writer with
 * the `_replicator` role writes documents as they are, as couch_replicator_manager's
 * before_doc_update lets it.
 */
export function prepareReplicationDoc(
  doc: IncomingDoc, old: Record<string, unknown> | undefined, ctx: UserContext, admin: boolean,
): CouchError | undefined {
  const id = doc.id ?? '';
  if (id.startsWith('_design/') || id.startsWith('_local/')) return undefined;
  if (ctx.roles.includes(REPLICATOR_ROLE)) return undefined;
  // The owner is the writer's name, null in admin party (CouchDB 1.6 records it either way);
  // a document with an owner, null included, is changed only by that owner or an admin.
  const oldOwner = old?.['owner'];
  if (!admin && oldOwner !== undefined && oldOwner !== ctx.name) {
    return forbidden("Can't update replication documents from other users.");
  }
  if (doc.deleted) return undefined;
  const owner = doc.body['owner'];
  if (owner === undefined || (owner === null && admin)) {
    doc.body['owner'] = ctx.name;
    doc.bodyJson = JSON.stringify(doc.body);
    return undefined;
  }
  if (owner === ctx.name || admin) return undefined;
  return forbidden("Can't update replication documents from other users.");
}

/**
 * CouchDB 1.6's checks of a replication document's fields (its `_design/_replicator`
 * validation): endpoints, option types, and a `user_ctx` that names the writer and only roles
 * they have (admins may name anyone, and may leave it out: a `user_ctx` JavaScript counts false,
 * such as `0` or `""`, is left out). A document the replicator marked `triggered` is changed
 * only by deleting it, except by a writer with the `_replicator` role. `admin`: a database or
 * server admin.
 */
export function validateReplicationDoc(
  doc: IncomingDoc, old: Record<string, unknown> | undefined, ctx: UserContext, admin: boolean,
): CouchError | undefined {
  const id = doc.id ?? '';
  if (id.startsWith('_design/') || id.startsWith('_local/')) return undefined;
  const body = doc.body;
  if (doc.deleted) {
    const oldCtx = old?.['user_ctx'] as { name?: unknown } | undefined;
    if (!admin && old && (!oldCtx || oldCtx.name !== ctx.name) && old['owner'] !== ctx.name) {
      return forbidden('Replication documents can only be deleted by admins or by the users who created them.');
    }
    return undefined;
  }
  if (old?.['_replication_state'] === 'triggered' && !ctx.roles.includes(REPLICATOR_ROLE)) {
    return forbidden('Only the replicator can edit replication documents that are in the triggered state.');
  }
  const endpointError = endpointProblem(body['source'], 'source') ?? endpointProblem(body['target'], 'target');
  if (endpointError) return forbidden(endpointError);
  for (const field of ['create_target', 'continuous']) {
    if (body[field] !== undefined && typeof body[field] !== 'boolean') return forbidden(`The \`${field}' field must be a boolean.`);
  }
  if (body['doc_ids'] !== undefined && !Array.isArray(body['doc_ids'])) return forbidden("The `doc_ids' field must be an array of strings.");
  if (body['filter'] !== undefined && (typeof body['filter'] !== 'string' || body['filter'] === '')) {
    return forbidden("The `filter' field must be a non-empty string.");
  }
  const queryParams = body['query_params'];
  if (queryParams !== undefined && (typeof queryParams !== 'object' || queryParams === null)) {
    return forbidden("The `query_params' field must be an object.");
  }
  // The function tests these fields for JavaScript truth: `0`, `""` and `false` count as absent;
  // an array passes for an object, whose name is then absent.
  const userCtx = body['user_ctx'];
  if (!isTruthy(userCtx)) {
    return admin ? undefined : forbidden("The `user_ctx' property is missing (it is optional for admins only).");
  }
  if (typeof userCtx !== 'object') return forbidden("The `user_ctx' property must be a non-null object.");
  const { name, roles } = (Array.isArray(userCtx) ? {} : userCtx) as { name?: unknown; roles?: unknown };
  if (!(name === null || name === undefined || (typeof name === 'string' && name.length > 0))) {
    return forbidden("The `user_ctx.name' property must be a non-empty string or null.");
  }
  if (!admin && name !== ctx.name) return forbidden("The given `user_ctx.name' is not valid");
  if (isTruthy(roles) && !Array.isArray(roles)) return forbidden("The `user_ctx.roles' property must be an array of strings.");
  if (!admin && Array.isArray(roles)) {
    for (const role of roles) {
      if (typeof role !== 'string' || role === '') return forbidden('Roles must be non-empty strings.');
      if (!ctx.roles.includes(role)) return forbidden(`Invalid role (\`${role}') in the \`user_ctx'`);
    }
  }
  return undefined;
}

/** Whether a JSON value is true to JavaScript (not null, false, 0 or ""). */
function isTruthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '';
}

function endpointProblem(endpoint: unknown, field: string): string | undefined {
  if (typeof endpoint === 'string') return undefined;
  if (typeof endpoint !== 'object' || endpoint === null) return `The \`${field}' property must exist and be either a string or an object.`;
  const { url, auth, headers } = endpoint as { url?: unknown; auth?: unknown; headers?: unknown };
  if (typeof url !== 'string' || url === '') return `The url property must exist in the \`${field}' field and must be a non-empty string.`;
  if (auth !== undefined && (typeof auth !== 'object' || auth === null)) return `\`${field}.auth' must be a non-null object.`;
  if (headers !== undefined && (typeof headers !== 'object' || headers === null)) return `\`${field}.headers' must be a non-null object.`;
  return undefined;
}

/**
 * `_design/_replicator`'s validation function: validateReplicationDoc's checks in JavaScript,
 * written for Settee (its verdicts match; a database admin counts as an admin, as natively).
 * While the design document holds this text the sandbox does not run it: the same checks
 * already ran natively (see `Authenticator.enforcesNatively`).
 */
export const REPLICATOR_VALIDATE_FUNCTION = `function (newDoc, oldDoc, userCtx, secObj) {
  function refuse(reason) { throw ({ forbidden: reason }); }
  function has(list, item) { return !!list && list.indexOf(item) !== -1; }
  function isObject(value) { return typeof value === 'object' && value !== null; }
  function checkEndpoint(endpoint, field) {
    if (typeof endpoint === 'string') return;
    if (!isObject(endpoint)) refuse('The \`' + field + "' property must exist and be either a string or an object.");
    if (typeof endpoint.url !== 'string' || endpoint.url === '') {
      refuse("The url property must exist in the \`" + field + "' field and must be a non-empty string.");
    }
    if (endpoint.auth !== undefined && !isObject(endpoint.auth)) refuse('\`' + field + ".auth' must be a non-null object.");
    if (endpoint.headers !== undefined && !isObject(endpoint.headers)) refuse('\`' + field + ".headers' must be a non-null object.");
  }
  var admins = (secObj && secObj.admins) || {};
  var isAdmin = has(userCtx.roles, '${ADMIN_ROLE}') || has(admins.names, userCtx.name) ||
    userCtx.roles.some(function (role) { return has(admins.roles, role); });
  var isReplicator = has(userCtx.roles, '${REPLICATOR_ROLE}');

  if (newDoc._deleted === true) {
    var creator = oldDoc && oldDoc.user_ctx;
    if (!isAdmin && oldDoc && (!creator || creator.name !== userCtx.name) && oldDoc.owner !== userCtx.name) {
      refuse('Replication documents can only be deleted by admins or by the users who created them.');
    }
    return;
  }
  if (oldDoc && oldDoc._replication_state === 'triggered' && !isReplicator) {
    refuse('Only the replicator can edit replication documents that are in the triggered state.');
  }
  checkEndpoint(newDoc.source, 'source');
  checkEndpoint(newDoc.target, 'target');
  ['create_target', 'continuous'].forEach(function (field) {
    if (newDoc[field] !== undefined && typeof newDoc[field] !== 'boolean') refuse('The \`' + field + "' field must be a boolean.");
  });
  if (newDoc.doc_ids !== undefined && !Array.isArray(newDoc.doc_ids)) refuse("The \`doc_ids' field must be an array of strings.");
  if (newDoc.filter !== undefined && (typeof newDoc.filter !== 'string' || newDoc.filter === '')) {
    refuse("The \`filter' field must be a non-empty string.");
  }
  if (newDoc.query_params !== undefined && !isObject(newDoc.query_params)) refuse("The \`query_params' field must be an object.");
  var ctx = newDoc.user_ctx;
  if (!ctx) {
    if (!isAdmin) refuse("The \`user_ctx' property is missing (it is optional for admins only).");
    return;
  }
  if (!isObject(ctx)) refuse("The \`user_ctx' property must be a non-null object.");
  if (!(ctx.name === null || ctx.name === undefined || (typeof ctx.name === 'string' && ctx.name.length > 0))) {
    refuse("The \`user_ctx.name' property must be a non-empty string or null.");
  }
  if (!isAdmin && ctx.name !== userCtx.name) refuse("The given \`user_ctx.name' is not valid");
  if (ctx.roles && !Array.isArray(ctx.roles)) {
    refuse("The \`user_ctx.roles' property must be an array of strings.");
  }
  if (!isAdmin && Array.isArray(ctx.roles)) {
    ctx.roles.forEach(function (role) {
      if (typeof role !== 'string' || role === '') refuse('Roles must be non-empty strings.');
      if (!has(userCtx.roles, role)) refuse('Invalid role (\`' + role + "') in the \`user_ctx'");
    });
  }
}`;

/**
 * Writes `_design/_replicator` into the replicator database when it is missing, as CouchDB
 * 1.6's replication manager does whenever it opens that database.
 */
export function ensureReplicatorDesignDoc(db: Database): Promise<void> {
  return ensureValidationDesignDoc(db, REPLICATOR_DESIGN_DOC, REPLICATOR_VALIDATE_FUNCTION);
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
