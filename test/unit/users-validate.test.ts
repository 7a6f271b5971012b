/**
 * `_design/_auth`'s validation function, run in the QuickJS sandbox, gives the same verdict as
 * the native users-database rules (auth/users-db.ts) on the same cases: the stored function and
 * the enforced rules cannot drift apart unnoticed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryServer } from '../../src/js/query-server.js';
import { beforeUserDocUpdate, USERS_VALIDATE_FUNCTION, validateUserDoc } from '../../src/auth/users-db.js';
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

type Case = ValidationCase;

const user = (name: string, roles: string[] = [], extra: Record<string, unknown> = {}) =>
  ({ _id: `org.couchdb.user:${name}`, name, roles, type: 'user', ...extra });
const anon: UserContext = { name: null, roles: [] };
const bob: UserContext = { name: 'bob', roles: [] };
const admin: UserContext = { name: 'root', roles: ['_admin'] };

const cases: Case[] = [
  { newDoc: user('bob'), userCtx: anon },
  { newDoc: user('bob', ['boss']), userCtx: anon },
  { newDoc: user('bob', ['boss']), userCtx: admin },
  { newDoc: user('bob', ['_admin']), userCtx: admin },
  { newDoc: { ...user('bob'), type: 'person' }, userCtx: anon },
  { newDoc: { _id: 'org.couchdb.user:bob', type: 'user', roles: [] }, userCtx: anon },
  { newDoc: { _id: 'org.couchdb.user:bob', name: 'bob', type: 'user' }, userCtx: anon },
  { newDoc: { ...user('bob'), roles: 'x' }, userCtx: anon },
  { newDoc: { ...user('bob'), roles: [1] }, userCtx: anon },
  { newDoc: { ...user('bob'), _id: 'org.couchdb.user:eve' }, userCtx: anon },
  { newDoc: user('bob', ['a']), oldDoc: user('bob', ['a']), userCtx: bob },
  { newDoc: user('bob', ['a', 'b']), oldDoc: user('bob', ['b', 'a']), userCtx: bob },
  { newDoc: user('bob', ['a', 'c']), oldDoc: user('bob', ['a']), userCtx: bob },
  { newDoc: user('bob', []), oldDoc: user('bob', ['a']), userCtx: bob },
  { newDoc: user('eve'), oldDoc: user('eve'), userCtx: bob },
  { newDoc: user('bob', ['x']), oldDoc: user('bob'), userCtx: { name: 'dan', roles: [] }, secObj: { admins: { names: ['dan'], roles: [] } } },
  { newDoc: user('bob', ['x']), oldDoc: user('bob'), userCtx: { name: 'ada', roles: ['chiefs'] }, secObj: { admins: { names: [], roles: ['chiefs'] } } },
  { newDoc: { ...user('eve'), name: 'eve' }, oldDoc: { ...user('eve'), name: 'eva' }, userCtx: admin },
  { newDoc: user('_bob'), userCtx: admin },
  { newDoc: user('b:ob'), userCtx: admin },
  { newDoc: { ...user('bob'), password_sha: 'abc' }, userCtx: anon },
  { newDoc: { _id: 'org.couchdb.user:bob', _deleted: true }, oldDoc: user('bob'), userCtx: bob },
  { newDoc: { _id: 'org.couchdb.user:eve', _deleted: true }, oldDoc: user('eve'), userCtx: bob },
  { newDoc: { _id: 'org.couchdb.user:eve', _deleted: true }, oldDoc: user('eve'), userCtx: admin },
];

async function nativeVerdict(c: Case): Promise<string | undefined> {
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c.newDoc)) if (!k.startsWith('_')) body[k] = v;
  const doc: IncomingDoc = {
    // An edit of an existing document names its revision (without one it is a conflict, not judged here).
    id: c.newDoc['_id'] as string, rev: c.oldDoc ? '1-0' : undefined, deleted: c.newDoc['_deleted'] === true, body,
    bodyJson: JSON.stringify(body), revisions: undefined, attachments: undefined,
  };
  const w = { ctx: c.userCtx, security: c.secObj ?? {}, iterations: 1, passwordRules: '' };
  const refusal = (await beforeUserDocUpdate(doc, w)) ?? validateUserDoc(doc, c.oldDoc, w);
  return refusal?.reason;
}

test('the stored validation function and the native rules agree on every case', async () => {
  const js = await sandboxVerdicts(qs, USERS_VALIDATE_FUNCTION, cases);
  let refusedCount = 0;
  for (const [i, c] of cases.entries()) {
    const native = await nativeVerdict(c);
    if (native !== undefined) refusedCount++;
    if (native === 'missing') {
      // Another user's document, for a signed-in non-admin: not found to them before any rule
      // runs (CouchDB's before_doc_update); the function, which only sees the edit, refuses it.
      assert.notEqual(js[i], undefined, `case ${i}: ${JSON.stringify(c)}`);
    } else {
      assert.equal(js[i], native, `case ${i}: ${JSON.stringify(c)}`);
    }
  }
  // Both outcomes are exercised.
  assert.ok(refusedCount > 5 && refusedCount < cases.length - 3);
});
