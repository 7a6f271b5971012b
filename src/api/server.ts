/** Server-level endpoints: welcome, _all_dbs, _uuids, _restart, _active_tasks, _membership, _db_updates, favicon. */
import { badRequest, forbidden } from '../errors.js';
import { ROOT_FIELD, SERVER_VERSION, VENDOR_NAME, WELCOME } from '../couchdb-names.js';
import { json, raw, stream } from './reply.js';
import type { Route } from './route.js';
import { FAVICON } from './favicon.js';

const PACKAGE_VERSION = '0.1.0';

export const serverRoutes: Route[] = [
  {
    shape: 'root',
    methods: {
      GET: async (_req, _p, svc) => json(200, {
        [ROOT_FIELD]: WELCOME,
        uuid: svc.serverUuid,
        version: SERVER_VERSION,
        vendor: { name: VENDOR_NAME, version: PACKAGE_VERSION },
      }),
    },
  },
  {
    shape: 'global', name: '_all_dbs', access: 'public',
    methods: { GET: async (_req, _p, svc) => json(200, await svc.dbs.list()) },
  },
  {
    shape: 'global', name: '_uuids', access: 'public',
    methods: {
      GET: async (req, _p, svc) => {
        const count = req.int('count', 1);
        const max = svc.config.getInt('uuids', 'max_count', svc.config.getInt('httpd', 'max_uuid_count', 1000));
        if (count < 0) throw badRequest('count must be a non-negative integer');
        // CouchDB 1.6 (couch_httpd_misc_handlers:handle_uuids_req) refuses with 403, not 400.
        if (count > max) throw forbidden('count parameter too large');
        const uuids = svc.uuids.many(count);
        return json(200, { uuids }, {
          ETag: `"${uuids.length > 0 ? uuids[0] : 'none'}"`,
          Expires: 'Fri, 01 Jan 1990 00:00:00 GMT',
          Pragma: 'no-cache',
          'Cache-Control': 'must-revalidate, no-cache',
        });
      },
    },
  },
  {
    shape: 'global', name: '_restart',
    methods: {
      POST: async (req, _p, svc) => {
        req.requireJsonContentType();
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
    methods: { GET: async () => json(200, { all_nodes: ['settee@127.0.0.1'], cluster_nodes: ['settee@127.0.0.1'] }) },
  },
  {
    shape: 'global', name: '_db_updates',
    methods: {
      GET: async (req, _p, svc) => {
        const feed = req.string('feed') ?? 'longpoll';
        const timeout = req.int('timeout', 60000);
        const heartbeatParam = req.string('heartbeat');
        const heartbeat = heartbeatParam === undefined || heartbeatParam === 'false' ? 0
          : heartbeatParam === 'true' ? 60000 : req.int('heartbeat', 60000);
        return stream(200, dbUpdates(svc.dbs, feed, timeout, heartbeat, req.signal));
      },
    },
  },
  {
    shape: 'global', name: 'favicon.ico', access: 'public',
    methods: { GET: async () => raw(200, FAVICON, 'image/x-icon', { 'Cache-Control': 'public, max-age=31536000' }) },
  },
];

async function* dbUpdates(
  dbs: import('../core/registry.js').DatabaseRegistry,
  feed: string,
  timeout: number,
  heartbeat: number,
  signal: AbortSignal,
): AsyncIterable<string> {
  const pending: string[] = [];
  let wake: (() => void) | undefined;
  const off = dbs.onEvent((name, type) => {
    pending.push(JSON.stringify({ db_name: name, type, ok: true }));
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    const deadline = Date.now() + timeout;
    for (;;) {
      while (pending.length > 0) {
        const line = pending.shift()!;
        if (feed === 'longpoll') {
          yield `${line}\n`;
          return;
        }
        yield feed === 'eventsource' ? `data: ${line}\n\n` : `${line}\n`;
      }
      const left = deadline - Date.now();
      if (signal.aborted || left <= 0) return;
      const hit = await new Promise<boolean>((resolve) => {
        wake = () => resolve(true);
        setTimeout(() => resolve(false), heartbeat > 0 ? Math.min(heartbeat, left) : left);
      });
      wake = undefined;
      if (!hit && heartbeat > 0 && Date.now() < deadline) yield '\n';
    }
  } finally {
    off();
    signal.removeEventListener('abort', onAbort);
  }
}
