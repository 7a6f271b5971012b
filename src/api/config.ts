import type { Handler, Route } from './route.js';
import { json } from './reply.js';
import { CouchError, badRequest, invalidJson, methodNotAllowed, notFound } from '../errors.js';
import { HEADER_PERSIST, HTTPD_SECTIONS } from '../couchdb-names.js';
import { parseErlangTerm, termText, type ErlTerm } from '../config/erlang-term.js';
import type { Services } from './services.js';
import { requireServerAdmin } from './authorize.js';

/**
 * /_config, as CouchDB 1.6's couch_httpd_misc_handlers:handle_config_req answers it:
 *
 *   GET    /_config                  every section
 *   GET    /_config/{section}        one section ({} when unknown)
 *   GET    /_config/{section}/{key}  the value as a JSON string
 *   PUT    /_config/{section}/{key}  body is a JSON string; answers the old value ("" if none)
 *   DELETE /_config/{section}/{key}  answers the removed value
 *   POST   /_config/_reload          reads the ini files again (CouchDB 2)
 *
 * `X-Couch-Persist: false` keeps a change in memory only. Values are trimmed unless the section
 * is [admins] or `?raw=true` is given; an [admins] value is hashed as a password unless raw.
 * When `[httpd] config_whitelist` is set (an Erlang list of `{Section, Key}` pairs, `*` for any
 * key), PUT and DELETE of pairs not on it are 400 modification_not_allowed. Sections that name
 * programs to run are never changed over HTTP (403, as CouchDB since its fix of CVE-2017-12636).
 * Each handler asks for a server admin once the path has the shape it takes.
 */

const DEFAULT_MAX_REQUEST_SIZE = 67108864;

/** Sections that name programs or handlers to run: not writable over HTTP. */
const BLACKLISTED_SECTIONS = new Set(['daemons', 'external', 'httpd_design_handlers', 'httpd_db_handlers', 'native_query_servers', 'os_daemons', 'query_servers']);

/** Whether `section`/`key` may be changed over HTTP: not a blacklisted section, and whitelisted when a whitelist is set. */
function checkWritable(services: Services, section: string, key: string): void {
  if (BLACKLISTED_SECTIONS.has(section)) throw new CouchError(403, 'forbidden', 'Config section blacklisted for modification over HTTP API.');
  checkWhitelist(services.config.get('httpd', 'config_whitelist'), section, key);
}

/** CouchDB's answer to a /_config path or method it does not take. */
const keyMethodsOnly = (): CouchError => methodNotAllowed('GET,PUT,DELETE');

const unknownConfigValue = (): CouchError => notFound('unknown_config_value');

/** A config value as a JSON string body (a bare string given to json() would be sent as is). */
const jsonString = (value: string) => json(200, JSON.stringify(value));

const getConfig: Handler = async (req, params, services) => {
  const rest = params.rest;
  if (rest.length > 2) throw keyMethodsOnly();
  requireServerAdmin(req);
  switch (rest.length) {
    case 0:
      return json(200, services.config.all());
    case 1:
      return json(200, services.config.section(rest[0]!));
    default: {
      const value = services.config.get(rest[0]!, rest[1]!);
      if (value === undefined) throw unknownConfigValue();
      return jsonString(value);
    }
  }
};

const putConfig: Handler = async (req, params, services) => {
  if (params.rest.length !== 2) throw keyMethodsOnly();
  requireServerAdmin(req);
  const [section, key] = params.rest as [string, string];
  checkWritable(services, section, key);
  const persist = req.header(HEADER_PERSIST) !== 'false';
  const rawParam = req.string('raw');
  let raw: boolean;
  if (rawParam === undefined || rawParam === '' || rawParam === 'false') raw = false;
  else if (rawParam === 'true') raw = true;
  else return json(400, { error: `Bad value for 'raw' option: ${rawParam}` });

  const limit = services.config.layered(HTTPD_SECTIONS).getInt('max_http_request_size', DEFAULT_MAX_REQUEST_SIZE);
  const body = await req.jsonBody(limit);
  if (body === undefined) throw invalidJson();
  // Without ?raw=true an [admins] value is a password, hashed even when it looks like a hash
  // already (CouchDB 1.6 hashes every one); other values are trimmed.
  const admin = section === 'admins' && !raw;
  // A value that is not a string is an invalid body, CouchDB 3's 400 (CouchDB 1.6 crashes on it
  // with a 500 badarg, storing it with binary_to_list).
  if (typeof body !== 'string') throw badRequest('config values must be json-encoded strings');
  const value = raw ? body : admin ? await services.auth.hashAdminPassword(body) : body.trim();

  const previous = await services.config.set(section, key, value, persist, { raw: raw || admin });
  return jsonString(previous ?? '');
};

const deleteConfig: Handler = async (req, params, services) => {
  if (params.rest.length !== 2) throw keyMethodsOnly();
  requireServerAdmin(req);
  const [section, key] = params.rest as [string, string];
  checkWritable(services, section, key);
  const persist = req.header(HEADER_PERSIST) !== 'false';
  const previous = await services.config.delete(section, key, persist);
  if (previous === undefined) throw unknownConfigValue();
  return jsonString(previous);
};

// ------------------------------------------------------------------------------ whitelist

/**
 * Refuses a change to a pair that `[httpd] config_whitelist` does not list. As in CouchDB, a value
 * that is not a valid term, or not a list, whitelists only the whitelist itself (so it can be
 * fixed); list elements other than 2-tuples are ignored.
 */
function checkWhitelist(whitelist: string | undefined, section: string, key: string): void {
  if (whitelist === undefined) return;
  const term = parseErlangTerm(whitelist);
  const entries: ErlTerm[] = term?.t === 'list'
    ? term.items
    : [{ t: 'tuple', items: [{ t: 'text', v: 'httpd' }, { t: 'text', v: 'config_whitelist' }] }];
  const allowed = entries.some((e) => {
    if (e.t !== 'tuple' || e.items.length !== 2) return false;
    const [s, k] = e.items.map(termText);
    return s === section && (k === key || k === '*');
  });
  if (!allowed) throw new CouchError(400, 'modification_not_allowed', 'This config variable is read-only');
}

/** `POST /_config/_reload` (CouchDB 2): the settings read again from the ini files; changes kept only in memory are dropped. */
const reloadConfig: Handler = async (req, params, services) => {
  if (params.rest.length !== 1 || params.rest[0] !== '_reload') throw keyMethodsOnly();
  requireServerAdmin(req);
  await services.config.reload();
  return json(200, { ok: true });
};

/** The handlers of `/_config`, also reached as `/_node/{node}/_config` (api/node.ts). */
export const configHandlers = { GET: getConfig, PUT: putConfig, DELETE: deleteConfig, POST: reloadConfig } as const;

// The handlers check the caller themselves, after the path's shape: CouchDB 1.6 answers a path
// or method handle_config_req has no clause for with a 405, whoever asks.
export const configRoutes: Route[] = [{ shape: 'global', name: '_config', allow: 'GET,PUT,DELETE', access: 'public', methods: configHandlers }];
