/**
 * `_design/_replicator`'s validation function, run in the QuickJS sandbox, gives the same
 * verdict as the native replicator-database checks (auth/replicator-db.ts) on the same cases:
 * the server skips the stored function because the native checks already ran, so the two must
 * not drift apart.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryServer } from '../../src/js/query-server.js';
import { REPLICATOR_VALIDATE_FUNCTION, validateReplicationDoc } from '../../src/auth/replicator-db.js';
import { isDbAdmin } from '../../src/auth/access.js';
import type { IncomingDoc } from '../../src/core/document.js';
import type { UserContext } from '../../src/auth/user-context.js';
import { sandboxVerdicts, type ValidationCase } from '../helpers/validate-verdicts.js';

let qs: QueryServer;

before(async () => {
  qs = await QueryServer.create({ timeoutMs: 5000, memoryLimitBytes: 64 * 1024 * 1024, workers: 1, log: () => undefined });
});
after(async () => {
  await qs.close();
});

interface Case extends ValidationCase {
  /** CouchDB 1.6's verdict, where a case pins it: 'ok', or the start of its forbidden reason. */
  couchdb?: string;
}

const mia: UserContext = { name: 'mia', roles: ['crew'] };
const admin: UserContext = { name: 'root', roles: ['_admin'] };
const job = (extra: Record<string, unknown> = {}) => ({ _id: 'job', source: 'a', target: 'b', ...extra });
const dbAdmins = { admins: { names: ['mia'], roles: [] } };
const replicator: UserContext = { name: 'repl', roles: ['_replicator'] };
const MISSING = "The `user_ctx' property is missing";

const cases: Case[] = [
  { newDoc: job({ user_ctx: { name: 'mia' } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: 'mia', roles: ['crew'] } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: 'mia', roles: ['boss'] } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: 'mia', roles: [''] } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: 'mia', roles: 'crew' } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: 'otto' } }), userCtx: mia },
  { newDoc: job({ user_ctx: { name: '' } }), userCtx: admin },
  { newDoc: job({ user_ctx: 'mia' }), userCtx: mia },
  // The function tests user_ctx and its roles for JavaScript truth; an array is an object to it.
  { newDoc: job({ user_ctx: ['mia'] }), userCtx: admin, couchdb: 'ok' },
  { newDoc: job({ user_ctx: [] }), userCtx: mia, couchdb: "The given `user_ctx.name' is not valid" },
  { newDoc: job({ user_ctx: 0 }), userCtx: mia, couchdb: MISSING },
  { newDoc: job({ user_ctx: '' }), userCtx: mia, couchdb: MISSING },
  { newDoc: job({ user_ctx: 0 }), userCtx: admin, couchdb: 'ok' },
  { newDoc: job({ user_ctx: '' }), userCtx: admin, couchdb: 'ok' },
  { newDoc: job({ user_ctx: true }), userCtx: admin, couchdb: "The `user_ctx' property must be a non-null object." },
  { newDoc: job({ user_ctx: { name: 'mia', roles: false } }), userCtx: mia, couchdb: 'ok' },
  { newDoc: job({ user_ctx: { name: 'mia', roles: '' } }), userCtx: mia, couchdb: 'ok' },
  { newDoc: job({ user_ctx: { name: 'mia', roles: 1 } }), userCtx: mia, couchdb: "The `user_ctx.roles' property must be an array" },
  { newDoc: job(), userCtx: mia },
  { newDoc: job(), userCtx: admin },
  { newDoc: job(), userCtx: mia, secObj: dbAdmins },
  { newDoc: job({ user_ctx: { name: 'otto', roles: ['god'] } }), userCtx: admin },
  { newDoc: job({ source: 1 }), userCtx: admin },
  { newDoc: job({ target: null }), userCtx: admin },
  { newDoc: job({ source: { url: '' } }), userCtx: admin },
  { newDoc: job({ source: { url: 'http://x/db', auth: 'secret' } }), userCtx: admin },
  { newDoc: job({ target: { url: 'http://x/db', headers: null } }), userCtx: admin },
  { newDoc: job({ target: { url: 'http://x/db', headers: {}, auth: {} } }), userCtx: admin },
  { newDoc: job({ continuous: 'yes' }), userCtx: admin },
  { newDoc: job({ create_target: 1 }), userCtx: admin },
  { newDoc: job({ doc_ids: 'a' }), userCtx: admin },
  { newDoc: job({ filter: '' }), userCtx: admin },
  { newDoc: job({ query_params: 'x=1' }), userCtx: admin },
  { newDoc: job({ user_ctx: { name: 'mia' } }), oldDoc: job({ _replication_state: 'triggered' }), userCtx: admin, couchdb: 'Only the replicator' },
  // The replicator's role may edit a triggered document; its other fields are checked as anyone's.
  { newDoc: job({ user_ctx: { name: 'repl' } }), oldDoc: job({ _replication_state: 'triggered' }), userCtx: replicator, couchdb: 'ok' },
  { newDoc: job(), oldDoc: job({ _replication_state: 'triggered' }), userCtx: replicator, couchdb: MISSING },
  { newDoc: job({ user_ctx: { name: 'repl' }, continuous: 1 }), oldDoc: job({ _replication_state: 'triggered' }), userCtx: replicator, couchdb: "The `continuous' field" },
  { newDoc: { _id: 'job', _deleted: true }, oldDoc: job({ user_ctx: { name: 'otto' } }), userCtx: mia },
  { newDoc: { _id: 'job', _deleted: true }, oldDoc: job({ user_ctx: { name: 'mia' } }), userCtx: mia },
  { newDoc: { _id: 'job', _deleted: true }, oldDoc: job({ owner: 'mia' }), userCtx: mia },
  { newDoc: { _id: 'job', _deleted: true }, oldDoc: job({ user_ctx: { name: 'otto' }, _replication_state: 'triggered' }), userCtx: admin },
];

function nativeVerdict(c: Case): string | undefined {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c.newDoc)) if (!k.startsWith('_')) body[k] = v;
  const doc: IncomingDoc = {
    id: c.newDoc['_id'] as string, rev: c.oldDoc ? '1-0' : undefined, deleted: c.newDoc['_deleted'] === true, body,
    bodyJson: JSON.stringify(body), revisions: undefined, attachments: undefined,
  };
  return validateReplicationDoc(doc, c.oldDoc, c.userCtx, isDbAdmin(c.userCtx, c.secObj ?? {}))?.reason;
}

test('the stored validation function and the native checks agree on every case', async () => {
  const js = await sandboxVerdicts(qs, REPLICATOR_VALIDATE_FUNCTION, cases);
  let refusedCount = 0;
  for (const [i, c] of cases.entries()) {
    const native = nativeVerdict(c);
    if (native !== undefined) refusedCount++;
    assert.equal(js[i], native, `case ${i}: ${JSON.stringify(c)}`);
    if (c.couchdb === 'ok') assert.equal(native, undefined, `case ${i} is allowed by CouchDB: ${JSON.stringify(c)}`);
    else if (c.couchdb !== undefined) assert.ok(native?.startsWith(c.couchdb), `case ${i} is refused by CouchDB with ${c.couchdb}: ${native}`);
  }
  // Both outcomes are exercised.
  assert.ok(refusedCount > 5 && refusedCount < cases.length - 3);
});
