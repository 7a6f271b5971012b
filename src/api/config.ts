import type { Handler, Route } from './route.js';
import { json } from './reply.js';
import { CouchError, badRequest, notFound } from '../errors.js';
import { HEADER_PERSIST } from '../couchdb-names.js';

/**
 * /_config, as CouchDB 1.6's couch_httpd_misc_handlers:handle_config_req answers it:
 *
 *   GET    /_config                  every section
 *   GET    /_config/{section}        one section ({} when unknown)
 *   GET    /_config/{section}/{key}  the value as a JSON string
 *   PUT    /_config/{section}/{key}  body is a JSON string; answers the old value ("" if none)
 *   DELETE /_config/{section}/{key}  answers the removed value
 *
 * `X-Couch-Persist: false` keeps a change in memory only. Values are trimmed unless the section
 * is [admins] or `?raw=true` is given (raw also skips the config's write filter, i.e. hashing).
 * Server-admin checks belong to the auth layer in front of these handlers.
 */

const DEFAULT_MAX_REQUEST_SIZE = 67108864;

const methodNotAllowed = (): CouchError =>
  new CouchError(405, 'method_not_allowed', 'Only GET,PUT,DELETE allowed', { Allow: 'GET,PUT,DELETE' });

const unknownConfigValue = (): CouchError => notFound('unknown_config_value');

const getConfig: Handler = async (_req, params, services) => {
  const rest = params.rest;
  switch (rest.length) {
    case 0:
      return json(200, services.config.all());
    case 1:
      return json(200, services.config.section(rest[0]!));
    case 2: {
      const value = services.config.get(rest[0]!, rest[1]!);
      if (value === undefined) throw unknownConfigValue();
      return json(200, value);
    }
    default:
      throw methodNotAllowed();
  }
};

const putConfig: Handler = async (req, params, services) => {
  if (params.rest.length !== 2) throw methodNotAllowed();
  const [section, key] = params.rest as [string, string];
  const persist = req.header(HEADER_PERSIST) !== 'false';
  const rawParam = req.string('raw');
  let raw: boolean;
  if (rawParam === undefined || rawParam === '' || rawParam === 'false') raw = false;
  else if (rawParam === 'true') raw = true;
  else return json(400, { error: `Bad value for 'raw' option: ${rawParam}` });

  const limit = services.config.getInt('httpd', 'max_http_request_size', DEFAULT_MAX_REQUEST_SIZE);
  const body = await req.jsonBody(limit);
  if (body === undefined) throw badRequest('invalid UTF-8 JSON');
  if (typeof body !== 'string') throw badRequest('config values must be json-encoded strings');
  const value = raw || section === 'admins' ? body : body.trim();

  const previous = await services.config.set(section, key, value, persist, { raw });
  return json(200, previous ?? '');
};

const deleteConfig: Handler = async (req, params, services) => {
  if (params.rest.length !== 2) throw methodNotAllowed();
  const [section, key] = params.rest as [string, string];
  const persist = req.header(HEADER_PERSIST) !== 'false';
  const previous = await services.config.delete(section, key, persist);
  if (previous === undefined) throw unknownConfigValue();
  return json(200, previous);
};

export const configRoutes: Route[] = [
  { shape: 'global', name: '_config', methods: { GET: getConfig, PUT: putConfig, DELETE: deleteConfig } },
];
