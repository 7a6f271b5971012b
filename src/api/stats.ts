/** `GET /_stats` and `GET /_stats/{section}/{stat}`, as couch_httpd_stats_handlers answers them. */
import { badRequest } from '../errors.js';
import { json } from './reply.js';
import type { Route } from './route.js';

export const statsRoutes: Route[] = [
  {
    // Public in CouchDB 1.6: monitoring reads it without credentials.
    shape: 'global', name: '_stats', access: 'public', allow: 'GET',
    methods: {
      GET: async (req, p, svc) => {
        // CouchDB 1.6's two reasons, the first with its typo.
        if (p.rest.length === 1) throw badRequest('Stat names must have exactly to parts.');
        if (p.rest.length > 2) throw badRequest('Stat names must have exactly two parts.');
        // As couch_httpd_stats_handlers: flush first, then list_to_integer reads the range (badarg
        // for a bad one).
        if (req.string('flush') === 'true') svc.stats.sample();
        const window = req.strictInt('range', 0);
        if (p.rest.length === 0) return json(200, svc.stats.all(window));
        const [section, key] = p.rest as [string, string];
        return json(200, { [section]: { [key]: svc.stats.get(section, key, window) } });
      },
    },
  },
];
