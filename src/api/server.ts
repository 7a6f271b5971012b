/**
 * Server-level endpoints: welcome, _all_dbs, _uuids, _restart, _active_tasks, _membership,
 * _db_updates, favicon; and CouchDB 2's `_up` and `_dbs_info`.
 */
import { CouchError, badRequest, forbidden } from '../errors.js';
import { HTTPD_SECTIONS, MAIN_CONFIG_SECTION, ROOT_FIELD, SERVER_VERSION, VENDOR_NAME, WELCOME } from '../couchdb-names.js';
import { endedByNewline, json, raw, stream } from './reply.js';
import type { Route } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { readObject } from './common.js';
import { parseAllDocsQuery } from './all-docs.js';
import { FAVICON } from './favicon.js';

const PACKAGE_VERSION = '0.1.0';

/** This server's node name, as `_membership` and `/_node/{name}` know it. */
export const NODE_NAME = 'settee@127.0.0.1';

/** How long the icon may be cached: 365 days. */
const FAVICON_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/** The longest wait one Node timer can take. */
const MAX_TIMER_MS = 0x7fffffff;

/** How many databases one `POST /_dbs_info` may name, unless `[chttpd] max_db_number_for_dbs_info_req` says. */
const MAX_DBS_INFO_KEYS = 100;

export const serverRoutes: Route[] = [
  {
    shape: 'root',
    methods: {
      // As couch_httpd_misc_handlers: the uuid and the [vendor] section as configured now.
      GET: async (_req, _p, svc) => json(200, {
        [ROOT_FIELD]: WELCOME,
        uuid: svc.config.get(MAIN_CONFIG_SECTION, 'uuid') || svc.serverUuid,
        version: SERVER_VERSION,
        vendor: { name: VENDOR_NAME, version: PACKAGE_VERSION, ...svc.config.section('vendor') },
      }),
    },
  },
  {
    shape: 'global', name: '_all_dbs', access: 'public',
    // CouchDB 2's paging parameters (startkey, endkey, descending, skip, limit...) apply too.
    methods: { GET: async (req, _p, svc) => json(200, pageOfNames(await svc.dbs.list(), req)) },
  },
  {
    shape: 'global', name: '_uuids', access: 'public', allow: 'GET',
    methods: {
      GET: async (req, _p, svc) => {
        // As couch_httpd_misc_handlers:handle_uuids_req: list_to_integer reads the count and too
        // many is 403; a bad or negative count, on which 1.6 crashes (badarg, function_clause),
        // is an invalid parameter (400), as CouchDB 3 answers it.
        const count = req.strictInt('count', 1);
        const max = svc.config.getInt('uuids', 'max_count', svc.config.layered(HTTPD_SECTIONS).getInt('max_uuid_count', 1000));
        if (count > max) throw forbidden('count parameter too large');
        if (count < 0) throw badRequest('count must be a non-negative integer');
        const uuids = svc.uuids.many(count);
        return json(200, { uuids }, {
          ETag: `"${uuids.length > 0 ? uuids[0] : 'none'}"`,
          // couch_httpd_misc_handlers:handle_uuids_req's date, to the letter (1 January 1990 was a Monday).
          Expires: 'Mon, 01 Jan 1990 00:00:00 GMT',
          Pragma: 'no-cache',
          'Cache-Control': 'must-revalidate, no-cache',
        });
      },
    },
  },
  {
    shape: 'global', name: '_restart', jsonBeforeAccess: true,
    methods: {
      POST: async (_req, _p, svc) => {
        setImmediate(() => svc.restart());
        return json(202, { ok: true });
      },
    },
  },
  {
    shape: 'global', name: '_active_tasks',
    methods: { GET: async (_req, _p, svc) => json(200, svc.tasks.list()) },
  },
  {
    shape: 'global', name: '_membership', access: 'public',
    methods: { GET: async () => json(200, { all_nodes: [NODE_NAME], cluster_nodes: [NODE_NAME] }) },
  },
  {
    // CouchDB 2's health check for load balancers: 404 while `[couchdb] maintenance_mode` is set.
    shape: 'global', name: '_up', access: 'public',
    methods: {
      GET: async (_req, _p, svc) => {
        const mode = svc.config.get('couchdb', 'maintenance_mode');
        if (mode === 'true') return json(404, { status: 'maintenance_mode' });
        if (mode === 'nolb') return json(404, { status: 'nolb' });
        return json(200, { status: 'ok', seeds: {} });
      },
    },
  },
  {
    // CouchDB 2.2's many-database info (POST, by name) and 3.2's (GET, every database by name).
    shape: 'global', name: '_dbs_info',
    methods: {
      GET: async (req, _p, svc) => {
        const names = pageOfNames(await svc.dbs.list(), req);
        const infos = [];
        for (const name of names) {
          const info = await dbInfo(svc, name);
          if (info) infos.push({ key: name, info });
        }
        return json(200, infos);
      },
      POST: async (req, _p, svc) => {
        req.requireJsonContentType();
        const body = await readObject(req, svc);
        const keys = body['keys'];
        if (keys === undefined) throw badRequest('`keys` member must exist.');
        if (!Array.isArray(keys)) throw badRequest('`keys` member must be a array.');
        if (keys.length > svc.config.getInt('chttpd', 'max_db_number_for_dbs_info_req', MAX_DBS_INFO_KEYS)) throw badRequest('too_many_keys');
        const out = [];
        for (const key of keys) {
          const info = typeof key === 'string' ? await dbInfo(svc, key) : undefined;
          out.push(info ? { key, info } : { key, error: 'not_found' });
        }
        return json(200, out);
      },
    },
  },
  {
    shape: 'global', name: '_db_updates', allow: 'GET',
    methods: {
      // CouchDB 1.6's couch_dbupdates_httpd: `timeout` is how long the feed waits for an event;
      // with a heartbeat (the default, except for longpoll) it sends a newline then and goes on.
      GET: async (req, _p, svc) => {
        const feed = req.string('feed') ?? 'longpoll';
        const timeout = nonNegativeInt(req, 'timeout', 60000);
        const heartbeat = feed !== 'longpoll' && req.string('heartbeat') !== 'false';
        const updates = dbUpdates(svc.dbs, feed, timeout, heartbeat, req.signal);
        // Whatever ends the feed (longpoll's one event, a timeout without heartbeat), it ends with
        // end_json_response's newline.
        return endedByNewline(feed === 'eventsource'
          ? stream(200, updates, { 'Cache-Control': 'no-cache' }, 'text/event-stream')
          : stream(200, updates), req.signal);
      },
    },
  },
  {
    shape: 'global', name: 'favicon.ico', access: 'public',
    // As couch_httpd_misc_handlers:handle_favicon_req: cached for a year, by Cache-Control and
    // by an Expires date 365 days ahead.
    methods: {
      GET: async () => raw(200, FAVICON, 'image/x-icon', {
        'Cache-Control': `public, max-age=${FAVICON_LIFETIME_MS / 1000}`,
        Expires: new Date(Date.now() + FAVICON_LIFETIME_MS).toUTCString(),
      }),
    },
  },
];

/**
 * Database events as CouchDB 1.6 sends them: longpoll answers the first and ends; continuous and
 * eventsource send each as a line or an event until the client leaves, or until `timeout` passes
 * without one when there is no heartbeat. Every event is `{ok, type, db_name}` (CouchDB 1.6 puts
 * `ok` only in longpoll's answer; the interface documents it for every event).
 */
async function* dbUpdates(
  dbs: import('../core/registry.js').DatabaseRegistry,
  feed: string,
  timeout: number,
  heartbeat: boolean,
  signal: AbortSignal,
): AsyncIterable<string> {
  const pending: string[] = [];
  let wake: (() => void) | undefined;
  const off = dbs.onEvent((name, type) => {
    pending.push(JSON.stringify({ ok: true, type, db_name: name }));
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      while (pending.length > 0) {
        const event = pending.shift()!;
        if (feed === 'longpoll') {
          yield event;
          return;
        }
        yield feed === 'eventsource' ? `data: ${event}\n\n` : `${event}\n`;
      }
      if (signal.aborted) return;
      let timer: NodeJS.Timeout | undefined;
      const hit = await new Promise<boolean>((resolve) => {
        wake = () => resolve(true);
        // Erlang's `after` waits up to 2^32-1 ms, a Node timer only 2^31-1 (a longer one fires
        // at once): a long wait is several timers in turn.
        const deadline = Date.now() + timeout;
        const arm = () => {
          const left = deadline - Date.now();
          if (left <= 0) resolve(false);
          else timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
        };
        timer = setTimeout(arm, Math.min(timeout, MAX_TIMER_MS));
      });
      clearTimeout(timer);
      wake = undefined;
      if (hit || signal.aborted) continue;
      if (!heartbeat) return;
      yield '\n';
    }
  } finally {
    off();
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A count or duration in milliseconds: CouchDB 1.6 crashes on one list_to_integer cannot read (a
 * 500) or a negative one (once the feed has begun); CouchDB 3's global_changes_httpd
 * to_non_neg_int refuses both with a 400 `invalid_integer`, which Settee answers.
 */
function nonNegativeInt(req: Request, name: string, fallback: number): number {
  const parsed = req.strictInt(name, fallback, 'invalid_integer');
  if (parsed < 0) throw badRequest('invalid_integer');
  return parsed;
}

/** A database's info, or undefined when there is no such database. */
async function dbInfo(svc: Services, name: string): Promise<Record<string, unknown> | undefined> {
  if (!(await svc.dbs.exists(name))) return undefined;
  try {
    const db = await svc.dbs.get(name);
    const release = db.retain();
    try {
      return { ...(await db.info()) };
    } finally {
      release();
    }
  } catch (err) {
    if (err instanceof CouchError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * Database names as a view query pages them: CouchDB 3's chttpd_misc reads `_all_dbs`' query
 * with couch_mrview_http:parse_params, as `_all_docs` reads its own (`key` included; errors alike).
 */
function pageOfNames(all: readonly string[], req: Request): string[] {
  const { start, end, inclusiveEnd, descending, skip, limit } = parseAllDocsQuery(req, undefined);
  const ordered = descending ? [...all].reverse() : [...all];
  const after = (a: string, b: string) => (descending ? a < b : a > b);
  const names = ordered.filter((name) => {
    if (start !== undefined && after(start, name)) return false;
    if (end !== undefined && (after(name, end) || (!inclusiveEnd && name === end))) return false;
    return true;
  });
  return names.slice(skip, limit === undefined ? undefined : skip + limit);
}
