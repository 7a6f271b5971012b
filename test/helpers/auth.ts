/** Credentials for tests: Basic headers, and a server with a server admin defined. */
import { client } from './http.js';

export const basic = (name: string, password: string): Record<string, string> =>
  ({ Authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}` });

/** Ends admin party on a server: defines `name` as its server admin. */
export async function defineAdmin(base: string, name: string, password: string): Promise<void> {
  const r = await client(base).put(`/_config/admins/${name}`, password);
  if (r.status !== 200) throw new Error(`defining admin ${name}: ${r.status} ${r.text}`);
}

/** Creates a user document as the admin; answers its revision. */
export async function createUser(base: string, admin: Record<string, string>, name: string, password: string, roles: string[] = []): Promise<string> {
  const r = await client(base).put(`/_users/org.couchdb.user:${encodeURIComponent(name)}`, { name, password, roles, type: 'user' }, { headers: admin });
  if (r.status !== 201) throw new Error(`creating user ${name}: ${r.status} ${r.text}`);
  return r.body.rev as string;
}

/** The AuthSession cookie (name=value) a Set-Cookie header carries. */
export function sessionCookie(setCookie: string | string[] | undefined): string | undefined {
  const values = Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie];
  for (const value of values) {
    const m = /^(AuthSession=[^;]*)/.exec(value);
    if (m) return m[1];
  }
  return undefined;
}
