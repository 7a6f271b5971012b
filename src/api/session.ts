/**
 * `/_session`, CouchDB 1.6's cookie login (couch_httpd_auth:handle_session_req):
 *
 *   POST   name and password (JSON or form) → AuthSession cookie, `{ok, name, roles}`;
 *          `?next=` answers 302 to it (a `next` in the body is only a field, as in CouchDB);
 *          wrong credentials 401
 *   GET    `{ok, userCtx, info}` for whoever the request authenticated as; `?basic=true`
 *          asks an anonymous caller for credentials (401)
 *   DELETE clears the cookie (`?next=` redirects)
 */
import { badRequest, CouchError, unauthorized } from '../errors.js';
import { json, type HeaderMap } from './reply.js';
import type { Handler, Route } from './route.js';
import { absoluteUrl, requestLimit } from './common.js';
import { parseJson, type Request } from './request.js';
import type { Services } from './services.js';

async function credentials(req: Request, svc: Services): Promise<{ name: unknown; password: unknown }> {
  const text = await req.text(requestLimit(svc));
  const type = req.contentType();
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    // `username` is CouchDB 2's other name for the field.
    return { name: form.get('name') ?? form.get('username') ?? undefined, password: form.get('password') ?? undefined };
  }
  // As CouchDB: a body of any other type carries no credentials (the login then fails, 401).
  if (type !== 'application/json') return { name: undefined, password: undefined };
  // As couch_httpd_auth:handle_session_req: the body is decoded whatever it holds (an empty one
  // is invalid_json), and every field's value must be a string (binary_to_list, badarg).
  const body = parseJson(text);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('Request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  // 1.6 crashes on a value that is not a string (binary_to_list, badarg): an invalid body here.
  if (Object.values(fields).some((value) => typeof value !== 'string')) throw badRequest('Login fields must be strings');
  return { name: fields['name'] ?? fields['username'], password: fields['password'] };
}

/** A `next` target: only paths on this server, so login cannot be turned into an open redirect. */
function redirectTarget(req: Request, next: string | undefined, svc: Services): string | undefined {
  if (next === undefined || !next.startsWith('/') || next.startsWith('//')) return undefined;
  return absoluteUrl(req, next, svc.config);
}

const login: Handler = async (req, _p, svc) => {
  const given = await credentials(req, svc);
  const name = typeof given.name === 'string' ? given.name : '';
  const password = typeof given.password === 'string' ? given.password : '';
  const creds = name === '' ? undefined : await svc.auth.checkPassword(name, password);
  if (!creds) {
    // A failed login also ends the session the client had, and `?fail=` sends it there, as
    // CouchDB's does.
    const failed = { 'Set-Cookie': svc.auth.clearedCookie(req.secure) };
    const location = redirectTarget(req, req.string('fail'), svc);
    // A plain answer, not an error: no challenge and no redirect to the login page.
    const refused = { error: 'unauthorized', reason: 'Name or password is incorrect.' };
    return location ? json(302, refused, { ...failed, Location: location }) : json(401, refused, failed);
  }
  const headers: HeaderMap = { 'Set-Cookie': svc.auth.sessionCookie(creds, req.secure) };
  // couch_httpd_auth:handle_session_req reads `next` from the query string only.
  const location = redirectTarget(req, req.string('next'), svc);
  if (location) headers['Location'] = location;
  return json(location ? 302 : 200, { ok: true, name: creds.name, roles: creds.roles }, headers);
};

const session: Handler = async (req, _p, svc) => {
  const ctx = req.userCtx;
  if (ctx.name === null && req.string('basic') === 'true') throw unauthorized('Please login.');
  const info: Record<string, unknown> = {
    authentication_db: svc.auth.usersDbName,
    authentication_handlers: svc.auth.handlers(),
  };
  if (req.authMethod !== undefined) info['authenticated'] = req.authMethod;
  return json(200, { ok: true, userCtx: { name: ctx.name, roles: ctx.roles }, info });
};

const logout: Handler = async (req, _p, svc) => {
  const headers: HeaderMap = { 'Set-Cookie': svc.auth.clearedCookie(req.secure) };
  const location = redirectTarget(req, req.string('next'), svc);
  if (location) headers['Location'] = location;
  return json(location ? 302 : 200, { ok: true }, headers);
};

export const sessionRoutes: Route[] = [
  { shape: 'global', name: '_session', access: 'public', allow: 'GET,HEAD,POST,DELETE', methods: { GET: session, POST: login, DELETE: logout } },
];
