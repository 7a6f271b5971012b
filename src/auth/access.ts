/**
 * Per-database access from the security object, CouchDB 1.6's rules (couch_db:check_is_admin
 * and check_is_member):
 *
 * - server admins are admins of every database;
 * - database admins are the security object's `admins` names and roles;
 * - with no `members` (or their old name, `readers`) every caller, anonymous included, is a
 *   member; otherwise only the listed names and roles, and database admins.
 */
import { ADMIN_ROLE } from '../couchdb-names.js';
import type { UserContext } from './user-context.js';

export interface SecurityGroup {
  names: string[];
  roles: string[];
}

function group(security: Record<string, unknown>, field: string): SecurityGroup {
  const value = security[field] as { names?: unknown; roles?: unknown } | null | undefined;
  const strings = (x: unknown) => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
  return value && typeof value === 'object' ? { names: strings(value.names), roles: strings(value.roles) } : { names: [], roles: [] };
}

function inGroup(ctx: UserContext, g: SecurityGroup): boolean {
  if (ctx.name !== null && g.names.includes(ctx.name)) return true;
  return ctx.roles.some((role) => g.roles.includes(role));
}

export function isDbAdmin(ctx: UserContext, security: Record<string, unknown>): boolean {
  return ctx.roles.includes(ADMIN_ROLE) || inGroup(ctx, group(security, 'admins'));
}

/** May read the database (and, in CouchDB 1.6, write its ordinary documents). */
export function isDbReader(ctx: UserContext, security: Record<string, unknown>): boolean {
  if (isDbAdmin(ctx, security)) return true;
  const members = security['members'] !== undefined ? group(security, 'members') : group(security, 'readers');
  if (members.names.length === 0 && members.roles.length === 0) return true;
  return inGroup(ctx, members);
}
