/** `POST /_replicate`: one-shot and continuous replications, and cancelling them. */
import { json } from './reply.js';
import type { Route } from './route.js';
import { readObject } from './common.js';

export const replicateRoutes: Route[] = [
  {
    shape: 'global', name: '_replicate',
    // Open to every user, as in CouchDB: the job reaches databases with the requester's rights.
    access: 'public',
    methods: {
      POST: async (req, _p, svc) => {
        req.requireJsonContentType();
        const body = await readObject(req, svc);
        // Jobs reach local databases over loopback HTTP as the requester: pass its credentials on.
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'cookie']) {
          const value = req.header(name);
          if (value !== undefined) headers[name] = value;
        }
        const reply = await svc.replicator.replicate(body, { ...req.userCtx, headers });
        // CouchDB answers a continuous replication it started with 202, everything else with 200.
        return json(body['continuous'] === true && body['cancel'] !== true ? 202 : 200, reply);
      },
    },
  },
];
