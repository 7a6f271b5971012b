/** Database endpoints: create, info, delete, POST a document, and per-database maintenance. */
import { badRequest, CouchError, notFound } from '../errors.js';
import { parseIncomingDoc } from '../core/document.js';
import { validateDocId } from '../core/names.js';
import type { Database } from '../core/database.js';
import { compactDatabase } from '../core/compaction-daemon.js';
import { viewSignature, type DesignDoc } from '../views/view-index.js';
import { json, ok, type Reply } from './reply.js';
import type { Route } from './route.js';
import { requireDbAdmin, requireServerAdmin } from './authorize.js';
import {
  absoluteUrl, couchUrlEncode, docPath, durableWrite, givenRev, maxDocumentSize, openDb, quote, raiseResult, readObject, requestLimit, editDocs } from './common.js';
import type { Services } from './services.js';
import { parseJson, type Request } from './request.js';
import { tooLarge } from '../errors.js';

export const databaseRoutes: Route[] = [
  {
    shape: 'database',
    // As couch_httpd_db:db_req words it (PUT creates, yet is not listed).
    allow: 'DELETE,GET,HEAD,POST',
    // DELETE checks its ?rev= mistake before the caller's rights, as couch_httpd_db:handle_request
    // does before delete_db_req.
    access: { PUT: 'server_admin', DELETE: 'public' },
    methods: {
      GET: async (req, p, svc) => json(200, await (await openDb(svc, p.db, req)).info()),
      PUT: async (req, p, svc) => {
        await svc.dbs.create(p.db);
        // couch_httpd_db:create_db_req writes the name with couch_util:url_encode (`(` is %28).
        return json(201, { ok: true }, { Location: absoluteUrl(req, `/${couchUrlEncode(p.db)}`, svc.config) });
      },
      DELETE: async (req, p, svc) => {
        if (req.has('rev')) {
          throw badRequest('You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?');
        }
        requireServerAdmin(req);
        await svc.dbs.delete(p.db);
        return ok();
      },
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        req.requireJsonContentType();
        checkDocSize(req, svc);
        // max_document_size bounds the body even when no Content-Length announced it (chunked).
        const body = await req.jsonBody(Math.min(requestLimit(svc), maxDocumentSize(svc)));
        if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          throw badRequest('Document must be a JSON object');
        }
        const doc = parseIncomingDoc(body as Record<string, unknown>);
        // An empty _id gets a fresh one too, as CouchDB treats it as absent. A new id makes a new
        // document: couch_httpd_db's POST drops `_rev` and `_revisions` with it (revs {0, []}).
        if (doc.id === undefined || doc.id === '') {
          doc.id = svc.uuids.next();
          doc.rev = undefined;
          doc.revisions = undefined;
        }
        validateDocId(doc.id);
        if (doc.id.startsWith('_local/')) {
          const rev = await db.putLocal(doc, durableWrite(req, svc));
          return json(201, { ok: true, id: doc.id, rev }, { Location: absoluteUrl(req, docPath(p.db, doc.id), svc.config) });
        }
        if (req.string('batch') === 'ok') {
          void editDocs(req, svc, db, [doc], { newEdits: true, allOrNothing: false, durable: false }).catch(() => undefined);
          return json(202, { ok: true, id: doc.id });
        }
        const [result] = await editDocs(req, svc, db, [doc], { newEdits: true, allOrNothing: false, durable: durableWrite(req, svc) });
        if (!result!.ok) raiseResult(result!);
        return json(201, { ok: true, id: doc.id, rev: result!.rev }, {
          ETag: quote(result!.rev),
          Location: absoluteUrl(req, docPath(p.db, doc.id), svc.config),
        });
      },
    },
  },
  {
    // Members reach the handler: a design document's compaction checks its existence before the
    // caller's rights (compactViews).
    shape: 'dbHandler', name: '_compact',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        // Only the segment after `_compact` names the design document; more are ignored, as
        // couch_httpd_db:handle_compact_req matches `[_, <<"_compact">>, DesignName | _]`.
        if (p.rest.length > 0) return compactViews(req, db, `_design/${p.rest[0]!}`, svc);
        requireDbAdmin(req, db);
        req.requireJsonContentType();
        startCompaction(db, svc);
        return json(202, { ok: true });
      },
    },
  },
  {
    // `/{db}/_design/{ddoc}/_compact`: the same as `/{db}/_compact/{ddoc}` (couch_mrview_http).
    shape: 'designHandler', name: '_compact',
    methods: {
      POST: async (req, p, svc) => compactViews(req, await openDb(svc, p.db, req), p.docId, svc),
    },
  },
  {
    shape: 'dbHandler', name: '_view_cleanup', access: 'db_admin',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        req.requireJsonContentType();
        await svc.views.cleanup(db, await liveSignatures(db));
        return json(202, { ok: true });
      },
    },
  },
  {
    shape: 'dbHandler', name: '_ensure_full_commit',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        req.requireJsonContentType();
        const required = req.int('seq');
        if (required !== undefined && required > db.updateSeq) {
          throw badRequest("can't do a full commit ahead of current update_seq");
        }
        await db.ensureFullCommit();
        return json(201, { ok: true, instance_start_time: db.instanceStartTime });
      },
    },
  },
  {
    // Members reach PUT: CouchDB 1.6 reads and checks the limit before couch_db:set_revs_limit
    // asks for a database admin.
    shape: 'dbHandler', name: '_revs_limit', allow: 'PUT,GET',
    methods: {
      GET: async (req, p, svc) => json(200, (await openDb(svc, p.db, req)).revsLimit),
      PUT: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const text = await req.text(requestLimit(svc));
        const limit = text.trim() === '' ? undefined : parseJson(text);
        // couch_httpd_db takes only a JSON integer: a number written with a fraction or an
        // exponent (1.0, 1e3) is an Erlang float to it.
        if (typeof limit !== 'number' || !/^\s*-?\d+\s*$/.test(text)) throw badRequest('Rev limit has to be an integer');
        // couch_db:set_revs_limit throws the bare atom for one below 1: CouchDB's 500 unknown_error.
        if (limit <= 0) throw new CouchError(500, 'unknown_error', 'invalid_revs_limit');
        requireDbAdmin(req, db);
        await db.setRevsLimit(limit);
        return ok();
      },
    },
  },
  {
    // Members reach PUT: CouchDB 1.6 reads the body, and couch_db:set_security refuses one that
    // is no object, before it asks for a database admin (and then validates the groups).
    shape: 'dbHandler', name: '_security', allow: 'PUT,GET',
    methods: {
      GET: async (req, p, svc) => json(200, (await openDb(svc, p.db, req)).getSecurity()),
      PUT: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const security = await readObject(req, svc);
        requireDbAdmin(req, db);
        checkSecurityGroups(security);
        await db.setSecurity(security);
        return ok();
      },
    },
  },
  {
    shape: 'dbHandler', name: '_purge', access: 'db_admin',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        req.requireJsonContentType();
        return json(200, await db.purge(readRevsMap(await readObject(req, svc))));
      },
    },
  },
  {
    shape: 'dbHandler', name: '_revs_diff',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        return json(200, await db.revsDiff(readRevsMap(await readObject(req, svc))));
      },
    },
  },
  {
    shape: 'dbHandler', name: '_missing_revs',
    methods: {
      POST: async (req, p, svc) => {
        const db = await openDb(svc, p.db, req);
        const diff = await db.revsDiff(readRevsMap(await readObject(req, svc)));
        const missed: Record<string, string[]> = {};
        for (const [id, entry] of Object.entries(diff)) missed[id] = entry.missing;
        // CouchDB's code sends `missing_revs`, its documentation `missed_revs`: clients exist
        // for both, and carrying both costs nothing.
        return json(200, { missing_revs: missed, missed_revs: missed });
      },
    },
  },
];

/** Signatures of the indexes the database's current design documents use. */
async function liveSignatures(db: Database): Promise<Set<string>> {
  const live = new Set<string>();
  for await (const rows of db.designDocs()) {
    for (const { id, rev } of rows) {
      const doc = await db.renderKnown(id, rev, false);
      if (doc) live.add(viewSignature(JSON.parse(doc.json) as DesignDoc));
    }
  }
  return live;
}

/** Compacts a design document's indexes, behind the 202; opening first gives a missing one its 404. */
/**
 * A design document's view compaction. CouchDB 1.6 opens the design document first (404
 * `missing` or `deleted`, whoever asks), then wants a database admin (401), then a JSON body
 * (415): couch_httpd_db:handle_compact_req and couch_mrview_http:handle_compact_req.
 */
async function compactViews(req: Request, db: Database, ddocId: string, svc: Services): Promise<Reply> {
  await db.openDoc(ddocId);
  requireDbAdmin(req, db);
  req.requireJsonContentType();
  await svc.views.open(db, ddocId, false);
  void svc.views.compact(db, ddocId).catch((err) => svc.log.error(`view compaction failed: ${String(err)}`));
  return json(202, { ok: true });
}

/**
 * The groups of a security object, checked as couch_db:validate_security_object does: `admins`,
 * and `members` or else their old name `readers`. A names or roles list that is not all strings
 * is CouchDB's 500 unknown_error (it throws the bare message); a group that is no object crashes
 * CouchDB (function_clause), a 400 here.
 */
function checkSecurityGroups(security: Record<string, unknown>): void {
  for (const field of ['admins', security['members'] !== undefined ? 'members' : 'readers']) {
    const value = security[field];
    if (value === undefined) continue;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw badRequest(`${field} must be an object with names and roles arrays of strings`);
    }
    for (const list of ['names', 'roles']) {
      const entries = (value as Record<string, unknown>)[list];
      if (entries !== undefined && !(Array.isArray(entries) && entries.every((entry) => typeof entry === 'string'))) {
        throw new CouchError(500, 'unknown_error', `${list} must be a JSON list of strings`);
      }
    }
  }
}

/** `{docid: [rev, ...]}` bodies of _revs_diff, _missing_revs and _purge. */
export function readRevsMap(body: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [id, revs] of Object.entries(body)) {
    if (!Array.isArray(revs)) throw badRequest(`Revisions for ${id} must be an array of strings`);
    // A revision that is no string is couch_doc:parse_rev's "Invalid rev format", as a bad string is.
    out[id] = (revs as unknown[]).map((r) => {
      if (typeof r !== 'string') throw badRequest('Invalid rev format');
      return givenRev(r);
    });
  }
  return out;
}

function startCompaction(db: Database, svc: Services): void {
  compactDatabase(db, svc.tasks).catch((err) => svc.log.error(`compaction of ${db.name} failed: ${String(err)}`));
}

/** Rejects a document body above `max_document_size` with 413. */
export function checkDocSize(req: Request, svc: Services): void {
  const length = Number(req.header('content-length') ?? 0);
  if (length > maxDocumentSize(svc)) throw tooLarge();
}

export { CouchError, notFound };
