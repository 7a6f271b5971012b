/**
 * Who may do what to a database, from its security object (CouchDB 1.6 couch_db:check_is_admin):
 * server admins, and the names and roles listed under `admins`.
 */
import { isServerAdmin, type UserContext } from './user-context.js';

interface NamesAndRoles {
  names?: unknown;
  roles?: unknown;
}

/** Whether the user is a server admin or an admin of the database whose security object is `secObj`. */
export function isDbAdmin(ctx: UserContext, secObj: Record<string, unknown>): boolean {
  if (isServerAdmin(ctx)) return true;
  const admins = (secObj['admins'] ?? {}) as NamesAndRoles;
  const names = Array.isArray(admins.names) ? admins.names : [];
  const roles = Array.isArray(admins.roles) ? admins.roles : [];
  if (ctx.name !== null && names.includes(ctx.name)) return true;
  return ctx.roles.some((role) => roles.includes(role));
}
