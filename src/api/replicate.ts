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
        // Jobs reach local databases as the requester, however it authenticated (the manager
        // signs its identity for the loopback requests).
        const reply = await svc.replicator.replicate(body, { name: req.userCtx.name, roles: req.userCtx.roles });
        // CouchDB answers a continuous replication it started with 202, everything else with 200.
        return json(body['continuous'] === true && body['cancel'] !== true ? 202 : 200, reply);
      },
    },
  },
];
