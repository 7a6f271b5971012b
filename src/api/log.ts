import type { Handler, Route } from './route.js';
import { json, ok, raw } from './reply.js';
import { badRequest } from '../errors.js';
import { HTTPD_SECTIONS } from '../couchdb-names.js';
import { readObject } from './common.js';

/**
 * /_log, as CouchDB 1.6 answers it:
 *
 *   GET  /_log?bytes=1000&offset=0   the log tail as text/plain: `bytes` bytes ending `offset`
 *                                    bytes before the end; bytes is capped by [httpd] log_max_chunk_size
 *   POST /_log {"level", "message"}  writes a line at debug, info or error
 */

const DEFAULT_MAX_CHUNK = 1000000;

const getLog: Handler = async (req, _params, services) => {
  // couch_httpd_misc_handlers:handle_log_req reads both with list_to_integer.
  const bytes = req.strictInt('bytes', 1000);
  const offset = req.strictInt('offset', 0);
  const max = services.config.layered(HTTPD_SECTIONS).getInt('log_max_chunk_size', DEFAULT_MAX_CHUNK);
  if (bytes > max) throw badRequest(`'bytes' cannot exceed ${max}`);
  if (bytes < 0) throw badRequest("'bytes' must not be negative");
  if (offset < 0) throw badRequest("'offset' must not be negative");
  const text = await services.log.tail(bytes, offset);
  return raw(200, text, 'text/plain; charset=utf-8');
};

const postLog: Handler = async (req, _params, services) => {
  const { level, message } = await readObject(req, services) as { level?: unknown; message?: unknown };
  // handle_log_req converts the message with binary_to_list before it looks at the level: anything
  // but a string is an invalid body (1.6 crashes there with a 500 badarg).
  if (typeof message !== 'string') throw badRequest('message must be a string');
  switch (level) {
    case 'debug': services.log.debug(message); break;
    case 'info': services.log.info(message); break;
    case 'error': services.log.error(message); break;
    default:
      return json(400, { error: `Unrecognized log level '${typeof level === 'string' ? level : JSON.stringify(level)}'` });
  }
  return ok();
};

// Reading the log is for admins; writing to it is for anyone, as in CouchDB 1.6
// (couch_httpd_misc_handlers checks no user on POST).
export const logRoutes: Route[] = [{ shape: 'global', name: '_log', allow: 'GET,POST', access: { POST: 'public' }, methods: { GET: getLog, POST: postLog } }];
