/**
 * Replication endpoints: a local database name, a URL (`http://user:pass@host:port/db`) or a
 * `{url, headers}` object. Credentials become an Authorization header and are stripped from
 * every form of the endpoint that is printed (responses, logs, `_active_tasks`).
 */
import { badRequest } from '../errors.js';

export interface LocalEndpoint {
  kind: 'local';
  /** The database name on this server. */
  db: string;
}

export interface RemoteEndpoint {
  kind: 'remote';
  /** The database URL without credentials, ending in `/`. */
  url: string;
  /** Headers sent with every request, Authorization included when the URL carried credentials. */
  headers: Record<string, string>;
  /** The user named in the URL or Basic header, if any (part of the replication id). */
  user: string | undefined;
}

export type Endpoint = LocalEndpoint | RemoteEndpoint;

/** Parses `source` or `target` of a replication request. */
export function parseEndpoint(value: unknown, role: 'source' | 'target'): Endpoint {
  if (typeof value === 'string') {
    if (value === '') throw badRequest(`${role} must not be empty`);
    return /^https?:\/\//i.test(value) ? remote(value, {}, role) : { kind: 'local', db: value };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (typeof obj['url'] !== 'string') throw badRequest(`${role} must have a url`);
    const headers: Record<string, string> = {};
    const given = obj['headers'];
    if (given !== undefined) {
      if (given === null || typeof given !== 'object' || Array.isArray(given)) throw badRequest(`${role} headers must be an object`);
      for (const [k, v] of Object.entries(given)) {
        if (typeof v !== 'string') throw badRequest(`${role} header ${k} must be a string`);
        headers[k] = v;
      }
    }
    const url = obj['url'];
    return /^https?:\/\//i.test(url) ? remote(url, headers, role) : { kind: 'local', db: url };
  }
  throw badRequest(`${role} must be a database name, a URL or an object with a url`);
}

function remote(text: string, given: Record<string, string>, role: string): RemoteEndpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest(`${role} is not a valid URL`);
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(given)) headers[k.toLowerCase()] = v;
  let user: string | undefined;
  if (url.username !== '' || url.password !== '') {
    user = decodeURIComponent(url.username);
    const pass = decodeURIComponent(url.password);
    headers['authorization'] ??= `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  } else if (headers['authorization']?.startsWith('Basic ')) {
    const decoded = Buffer.from(headers['authorization'].slice(6), 'base64').toString();
    user = decoded.slice(0, Math.max(0, decoded.indexOf(':')));
  }
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return { kind: 'remote', url: url.toString(), headers, user };
}

/**
 * The endpoint as it may be shown: a local name, or the URL with the password masked as
 * CouchDB does (`http://user:*****@host/db/`).
 */
export function displayEndpoint(endpoint: Endpoint): string {
  if (endpoint.kind === 'local') return endpoint.db;
  if (endpoint.user === undefined) return endpoint.url;
  const url = new URL(endpoint.url);
  url.username = encodeURIComponent(endpoint.user);
  url.password = '*****';
  return url.toString();
}

/** Removes any `user:password@` from URLs inside a message (errors may quote a URL). */
export function stripCredentials(text: string): string {
  return text.replace(/(https?:\/\/)[^/@\s]*@/gi, '$1');
}

/**
 * What identifies the endpoint for the replication id: stable across runs, free of secrets
 * (the user name is kept, the password and Authorization header are not). A local database is
 * reached as the job's identity (`as`), which is part of it, as in CouchDB 1.6's
 * `{local, DbName, UserCtx}`: the same replication as another user has checkpoints of its own.
 */
export function endpointIdentity(endpoint: Endpoint, as: { name: string | null; roles: readonly string[] }): unknown {
  if (endpoint.kind === 'local') return ['local', endpoint.db, as.name, [...as.roles].sort()];
  const headers = Object.entries(endpoint.headers)
    .filter(([k]) => k !== 'authorization' && k !== 'cookie')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return ['remote', endpoint.url, endpoint.user ?? null, headers];
}
