/** isDbAdmin: server admins, and the names and roles of a security object's `admins`. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDbAdmin } from '../../src/auth/access.js';

test('server admins are admins of every database', () => {
  assert.equal(isDbAdmin({ name: null, roles: ['_admin'] }, {}), true);
  assert.equal(isDbAdmin({ name: 'bob', roles: ['_admin'] }, { admins: { names: [], roles: [] } }), true);
});

test('database admins by name or role; members and others are not', () => {
  const sec = { admins: { names: ['ann'], roles: ['editors'] }, members: { names: ['bob'], roles: ['readers'] } };
  assert.equal(isDbAdmin({ name: 'ann', roles: [] }, sec), true);
  assert.equal(isDbAdmin({ name: 'carl', roles: ['editors'] }, sec), true);
  assert.equal(isDbAdmin({ name: 'bob', roles: ['readers'] }, sec), false);
  assert.equal(isDbAdmin({ name: null, roles: [] }, sec), false);
  assert.equal(isDbAdmin({ name: 'ann', roles: [] }, {}), false);
  assert.equal(isDbAdmin({ name: 'ann', roles: [] }, { admins: { names: 'ann' } }), false); // malformed: not a list
});
