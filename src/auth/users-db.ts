/**
 * The rules of the authentication database (`_users`), enforced natively on every write path
 * (PUT, POST, `_bulk_docs`, COPY, attachments, replication), whether or not design-document
 * validation runs:
 *
 * - a plain `password` is replaced by PBKDF2 material before the document is stored, once it
 *   meets `[couch_httpd_auth] password_regexp` (CouchDB 3);
 * - documents are `org.couchdb.user:<name>` with `type: "user"`, a `name` and string `roles`;
 * - only database or server admins set or change roles, and no one sets `_`-roles;
 * - other callers may create their own document and change only their own (a signed-in user
 *   is told any other is not found), and never add a revision beside a live one: a conflict
 *   would lock its owner out (see `Authenticator.screenWrites`);
 * - `_design/_auth` is written by the server and changed by no one.
 *
 * The same rules are stored as `_design/_auth`'s validation function, for tools that read it.
 */
import { ADMIN_ROLE, USER_DOC_PREFIX, USERS_DESIGN_DOC } from '../couchdb-names.js';
import { type CouchError, badRequest, forbidden, notFound } from '../errors.js';
import type { IncomingDoc } from '../core/document.js';
import type { Database } from '../core/database.js';
import { hashForUserDoc } from './password.js';
import { passwordRefusal } from './password-rules.js';
import { isDbAdmin } from './access.js';
import { ensureValidationDesignDoc } from './system-design-doc.js';
import type { UserContext } from './user-context.js';

/** CouchDB's refusal of a password_sha without a salt, word for word (no space before "See"). */
const SALT_REQUIRED = 'Users with password_sha must have a salt.See /_utils/script/couch.js for example code.';

/** Fields of a user document that hold password material: never shown to other users. */
export const SECRET_USER_FIELDS = new Set(['password', 'password_sha', 'derived_key', 'salt', 'iterations', 'password_scheme']);

export interface UserWriteContext {
  ctx: UserContext;
  security: Record<string, unknown>;
  iterations: number;
  /** `[couch_httpd_auth] password_regexp` as configured ('' for none): see password-rules.ts. */
  passwordRules: string;
}

const sameRoles = (a: unknown[], b: unknown[]): boolean => {
  if (a.length !== b.length) return false;
  const x = a.map(String).sort();
  const y = b.map(String).sort();
  return x.every((role, i) => role === y[i]);
};

/**
 * What CouchDB 1.6's couch_users_db:before_doc_update does to one write to the users database,
 * before any validation: a signed-in user who is not an admin is told another's document (or a
 * design document) is not there, and a plain `password` is replaced by PBKDF2 material (once it
 * meets the password rules). Its refusal is the whole request's answer, as CouchDB's throw from
 * there is; on success the document may have been changed in place.
 */
export async function beforeUserDocUpdate(doc: IncomingDoc, w: UserWriteContext): Promise<CouchError | undefined> {
  const id = doc.id ?? '';
  if (!isDbAdmin(w.ctx, w.security) && w.ctx.name !== null && USER_DOC_PREFIX + w.ctx.name !== id) return notFound();
  const body = doc.body;
  if (typeof body['password'] === 'string') {
    const refusal = passwordRefusal(body['password'], w.passwordRules);
    if (refusal) return refusal;
    const material = await hashForUserDoc(body['password'], w.iterations);
    delete body['password'];
    delete body['password_sha'];
    body['password_scheme'] = 'pbkdf2';
    body['iterations'] = material.iterations;
    body['derived_key'] = material.derived_key;
    body['salt'] = material.salt;
    doc.bodyJson = JSON.stringify(body);
  } else if (body['password'] === null) {
    delete body['password'];
    doc.bodyJson = JSON.stringify(body);
  } else if (body['password'] !== undefined) {
    // Never stored as it came: only a string can be hashed.
    return badRequest('password must be a string');
  }
  return undefined;
}

/**
 * `_design/_auth`'s checks of one write to the users database (after beforeUserDocUpdate),
 * given the oldDoc CouchDB's validation would get (undefined for none: see
 * `validationOldDoc`). Answers the refusal, if any. These checks are all `_design/_auth`'s
 * function, as the server wrote it, would make: while it holds that text it does not run again
 * in the sandbox.
 */
export function validateUserDoc(doc: IncomingDoc, old: Record<string, unknown> | undefined, w: UserWriteContext): CouchError | undefined {
  const id = doc.id ?? '';
  if (id === USERS_DESIGN_DOC) return forbidden('The authentication design document cannot be changed.');
  if (id.startsWith('_design/')) return undefined; // other design documents: database admins' business
  const admin = isDbAdmin(w.ctx, w.security);

  if (doc.deleted) {
    if (admin || (old !== undefined && w.ctx.name !== null && old['name'] === w.ctx.name)) return undefined;
    return forbidden('Only admins may delete other user docs.');
  }

  const body = doc.body;
  if ((old !== undefined && old['type'] !== 'user') || body['type'] !== 'user') return forbidden('doc.type must be user');
  const name = body['name'];
  if (typeof name !== 'string' || name === '') return forbidden('doc.name is required');
  const roles = body['roles'];
  if (roles === undefined) return forbidden('doc.roles must exist');
  if (!Array.isArray(roles)) return forbidden('doc.roles must be an array');
  if (roles.some((r) => typeof r !== 'string')) return forbidden('doc.roles can only contain strings');
  if (id !== USER_DOC_PREFIX + name) return forbidden(`Doc ID must be of the form ${USER_DOC_PREFIX}name`);
  if (old !== undefined && old['name'] !== name) return forbidden('Usernames can not be changed.');
  if (typeof body['password_sha'] === 'string' && typeof body['salt'] !== 'string') {
    return forbidden(SALT_REQUIRED);
  }
  if (!admin) {
    if (old !== undefined) {
      if (w.ctx.name !== name) return forbidden('You may only update your own user document.');
      const oldRoles = Array.isArray(old['roles']) ? old['roles'] as unknown[] : [];
      if (!sameRoles(oldRoles, roles)) return forbidden('Only _admin may edit roles');
    } else if (roles.length > 0) {
      return forbidden('Only _admin may set roles');
    }
  }
  if ((roles as string[]).some((r) => r.startsWith('_'))) return forbidden('No system roles (starting with underscore) in users db.');
  if (name.startsWith('_')) return forbidden('Username may not start with underscore.');
  if (name.includes(':')) return forbidden('Character `:` is not allowed in usernames.');
  return undefined;
}

/**
 * What another user may see of a user document: `_id`, `_rev` and the `public_fields`, never
 * password material.
 */
export function publicView(doc: Record<string, unknown>, publicFields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { _id: doc['_id'], _rev: doc['_rev'] };
  for (const field of publicFields) {
    if (!SECRET_USER_FIELDS.has(field) && !field.startsWith('_') && field in doc) out[field] = doc[field];
  }
  return out;
}

/** A user document cut to its public fields alone (no `_id`, `_rev`), as listings embed it. */
export function publicFieldsOnly(doc: Record<string, unknown>, publicFields: readonly string[]): Record<string, unknown> {
  const { _id: _ignoredId, _rev: _ignoredRev, ...rest } = publicView(doc, publicFields);
  return rest;
}

/** `[couch_httpd_auth] public_fields`: a comma-separated list. */
export function parsePublicFields(value: string | undefined): string[] {
  return (value ?? '').split(',').map((f) => f.trim()).filter((f) => f !== '');
}

/**
 * `_design/_auth`'s validation function: the rules above, in JavaScript, for tools that read it.
 * Written for Settee; its verdicts match beforeUserDocUpdate's and validateUserDoc's. While the
 * users database's design document holds this text the sandbox does not run it: the same checks
 * already ran natively (see `Authenticator.enforcesNatively`).
 */
export const USERS_VALIDATE_FUNCTION = `function (newDoc, oldDoc, userCtx, secObj) {
  function refuse(reason) { throw ({ forbidden: reason }); }
  function has(list, item) { return !!list && list.indexOf(item) !== -1; }
  var admins = (secObj && secObj.admins) || {};
  var isAdmin = has(userCtx.roles, '${ADMIN_ROLE}') || has(admins.names, userCtx.name) ||
    userCtx.roles.some(function (role) { return has(admins.roles, role); });

  if (newDoc._deleted === true) {
    if (isAdmin || (oldDoc && userCtx.name === oldDoc.name)) return;
    refuse('Only admins may delete other user docs.');
  }
  if (newDoc.type !== 'user' || (oldDoc && oldDoc.type !== 'user')) refuse('doc.type must be user');
  if (!newDoc.name) refuse('doc.name is required');
  if (!newDoc.roles) refuse('doc.roles must exist');
  if (!Array.isArray(newDoc.roles)) refuse('doc.roles must be an array');
  newDoc.roles.forEach(function (role) { if (typeof role !== 'string') refuse('doc.roles can only contain strings'); });
  if (newDoc._id !== '${USER_DOC_PREFIX}' + newDoc.name) refuse('Doc ID must be of the form ${USER_DOC_PREFIX}name');
  if (oldDoc && oldDoc.name !== newDoc.name) refuse('Usernames can not be changed.');
  if (newDoc.password_sha && !newDoc.salt) refuse(${JSON.stringify(SALT_REQUIRED)});
  if (!isAdmin) {
    if (oldDoc) {
      if (userCtx.name !== newDoc.name) refuse('You may only update your own user document.');
      var before = (oldDoc.roles || []).slice().sort().join('\\u0000');
      var after = newDoc.roles.slice().sort().join('\\u0000');
      if (before !== after || (oldDoc.roles || []).length !== newDoc.roles.length) refuse('Only _admin may edit roles');
    } else if (newDoc.roles.length > 0) {
      refuse('Only _admin may set roles');
    }
  }
  newDoc.roles.forEach(function (role) {
    if (role.charAt(0) === '_') refuse('No system roles (starting with underscore) in users db.');
  });
  if (newDoc.name.charAt(0) === '_') refuse('Username may not start with underscore.');
  if (newDoc.name.indexOf(':') !== -1) refuse('Character \`:\` is not allowed in usernames.');
}`;

/** Writes `_design/_auth` into the users database when it is missing. */
export function ensureAuthDesignDoc(db: Database): Promise<void> {
  return ensureValidationDesignDoc(db, USERS_DESIGN_DOC, USERS_VALIDATE_FUNCTION);
}
