/**
 * `/_node/{node}/...`: CouchDB 2's per-node endpoints, for tools that address the node (Fauxton,
 * deployment scripts). This server is one node, named `_local` or by its name; under it,
 * `_config` is `/_config`.
 */
import { notFound } from '../errors.js';
import { json } from './reply.js';
import type { Handler, Route } from './route.js';
import { configHandlers } from './config.js';
import { NODE_NAME } from './server.js';

type Method = keyof typeof configHandlers;

/** The handler a method reaches under `/_node/{node}/`, with the path left after the node's part. */
function nodeHandler(method: Method): Handler {
  return async (req, params, svc) => {
    const [node, area, ...rest] = params.rest;
    if (node !== '_local' && node !== NODE_NAME) throw notFound();
    if (area === undefined && method === 'GET') return json(200, { name: NODE_NAME });
    if (area !== '_config') throw notFound();
    return configHandlers[method](req, { ...params, rest }, svc);
  };
}

export const nodeRoutes: Route[] = [
  { shape: 'global', name: '_node', methods: { GET: nodeHandler('GET'), PUT: nodeHandler('PUT'), DELETE: nodeHandler('DELETE'), POST: nodeHandler('POST') } },
];
