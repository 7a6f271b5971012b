/**
 * Who is making a request: CouchDB's `userCtx`. Authentication fills it in for each request;
 * until server admins are defined every request is an admin ("admin party").
 */
export interface UserContext {
  /** The authenticated user's name, or null for an anonymous request. */
  name: string | null;
  roles: string[];
}

/** The context of every request while `[admins]` is empty. */
export function adminPartyContext(): UserContext {
  return { name: null, roles: ['_admin'] };
}

export function isServerAdmin(ctx: UserContext): boolean {
  return ctx.roles.includes('_admin');
}
