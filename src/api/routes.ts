/** Every endpoint group's routes, in one list for the router. */
import type { Handler, Route } from './route.js';
import { countRead } from './common.js';
import { serverRoutes } from './server.js';
import { configRoutes } from './config.js';
import { nodeRoutes } from './node.js';
import { logRoutes } from './log.js';
import { databaseRoutes } from './databases.js';
import { documentRoutes } from './documents.js';
import { allDocsRoutes } from './all-docs.js';
import { bulkRoutes } from './bulk.js';
import { changesRoutes } from './changes.js';
import { attachmentRoutes } from './attachments.js';
import { formUploadRoutes } from './form-upload.js';
import { viewRoutes } from './views.js';
import { sessionRoutes } from './session.js';
import { showRoutes } from './show.js';
import { updateRoutes } from './update.js';
import { listRoutes } from './list.js';
import { rewriteRoutes } from './rewrite.js';
import { replicateRoutes } from './replicate.js';
import { schedulerRoutes } from './scheduler.js';
import { statsRoutes } from './stats.js';
import { oauthRoutes } from './oauth.js';
import { utilsRoutes } from './utils.js';
import { findRoutes } from './find.js';
import { otherDesignHandlerRoutes } from './design-request.js';

export const routes: Route[] = ([
  ...serverRoutes,
  ...configRoutes,
  ...nodeRoutes,
  ...logRoutes,
  ...databaseRoutes,
  ...documentRoutes,
  ...allDocsRoutes,
  ...bulkRoutes,
  ...changesRoutes,
  ...attachmentRoutes,
  ...formUploadRoutes,
  ...viewRoutes,
  ...sessionRoutes,
  ...showRoutes,
  ...updateRoutes,
  ...listRoutes,
  ...rewriteRoutes,
  ...replicateRoutes,
  ...schedulerRoutes,
  ...statsRoutes,
  ...oauthRoutes,
  ...utilsRoutes,
  ...findRoutes,
  ...otherDesignHandlerRoutes,
]).map(openingDesignDoc);

/**
 * A request under a design document (`/{db}/_design/{ddoc}/_name...`) opens the design document
 * first, as couch_httpd_db:handle_design_req does with couch_doc_open whatever the handler: one
 * `database_reads`, before the handler runs (its 404s and 400s included).
 */
function openingDesignDoc(route: Route): Route {
  if (route.shape !== 'designHandler') return route;
  const methods: Partial<Record<string, Handler>> = {};
  for (const [method, handler] of Object.entries(route.methods)) {
    if (!handler) continue;
    methods[method] = async (req, p, svc) => {
      countRead(svc, await svc.dbs.get(p.db));
      return handler(req, p, svc);
    };
  }
  return { ...route, methods };
}
