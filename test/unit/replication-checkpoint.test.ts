import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkpointBody, findStartPoint, MAX_HISTORY, type HistoryEntry } from '../../src/replicator/checkpoint.js';
import { replicationId } from '../../src/replicator/replication-id.js';
import { attachmentsToSend } from '../../src/replicator/attachments.js';
import { displayEndpoint, endpointIdentity, parseEndpoint, stripCredentials } from '../../src/replicator/endpoint.js';

const entry = (session_id: string, recorded_seq: number): HistoryEntry => ({
  session_id, recorded_seq, start_last_seq: 0, end_last_seq: recorded_seq, start_time: 'x', end_time: 'y',
  missing_checked: 0, missing_found: 0, docs_read: 0, docs_written: 0, doc_write_failures: 0,
});

test('no checkpoint on either end starts from 0', () => {
  assert.deepEqual(findStartPoint(undefined, undefined), { since: 0, history: [] });
  assert.deepEqual(findStartPoint({ session_id: 'a', source_last_seq: 5, history: [entry('a', 5)] }, undefined), { since: 0, history: [] });
});

test('the same last session on both ends resumes from its sequence', () => {
  const log = { session_id: 'b', source_last_seq: 9, history: [entry('b', 9), entry('a', 4)] };
  assert.deepEqual(findStartPoint(log, { ...log }), { since: 9, history: log.history });
});

test('different last sessions resume from the newest session both histories hold', () => {
  // The target missed session c (its checkpoint write failed, or it was restored from a backup).
  const source = { session_id: 'c', source_last_seq: 20, history: [entry('c', 20), entry('b', 9), entry('a', 4)] };
  const target = { session_id: 'b', source_last_seq: 9, history: [entry('b', 9), entry('a', 4)] };
  assert.deepEqual(findStartPoint(source, target), { since: 9, history: [entry('a', 4)] });
  // And the other way round: the source missed a session.
  assert.deepEqual(findStartPoint(target, source).since, 9);
});

test('histories with nothing in common start from 0', () => {
  const source = { session_id: 'x', history: [entry('x', 3)] };
  const target = { session_id: 'y', history: [entry('y', 7)] };
  assert.deepEqual(findStartPoint(source, target), { since: 0, history: [] });
});

test('a checkpoint keeps at most 50 sessions, newest first', () => {
  const previous = Array.from({ length: 60 }, (_, i) => entry(`s${i}`, 60 - i));
  const body = checkpointBody('new', entry('new', 100), previous);
  assert.equal(body.history.length, MAX_HISTORY);
  assert.equal(body.history[0]!.session_id, 'new');
  assert.equal(body.session_id, 'new');
  assert.equal(body.source_last_seq, 100);
  assert.equal(body.replication_id_version, 3);
});

const ADMIN = { name: null, roles: ['_admin'] };

test('the replication id is stable and depends on what changes the result', () => {
  const base = {
    serverUuid: 'u1', source: endpointIdentity(parseEndpoint('a', 'source'), ADMIN),
    target: endpointIdentity(parseEndpoint('http://h:5984/b', 'target'), ADMIN), continuous: false, createTarget: false,
  };
  const id = replicationId(base);
  assert.match(id.base, /^[0-9a-f]{32}$/);
  assert.equal(id.full, id.base);
  assert.deepEqual(replicationId({ ...base }), id);
  assert.notEqual(replicationId({ ...base, serverUuid: 'u2' }).base, id.base);
  assert.notEqual(replicationId({ ...base, docIds: ['x'] }).base, id.base);
  assert.notEqual(replicationId({ ...base, filter: { name: 'd/f', code: 'function(){}' } }).base,
    replicationId({ ...base, filter: { name: 'd/f', code: 'function(){ return true; }' } }).base);
  assert.equal(replicationId({ ...base, filter: { name: '_view' }, queryParams: { a: 1, view: 'd/v' } }).base,
    replicationId({ ...base, filter: { name: '_view' }, queryParams: { view: 'd/v', a: 1 } }).base);
  // continuous and create_target name the job, not the checkpoints.
  const both = replicationId({ ...base, continuous: true, createTarget: true });
  assert.equal(both.base, id.base);
  assert.equal(both.full, `${id.base}+continuous+create_target`);
  // A local database is reached as the job's identity: another identity, other checkpoints
  // (CouchDB 1.6's {local, DbName, UserCtx}); a remote endpoint's id does not depend on it.
  const asBob = { name: 'bob', roles: ['reader'] };
  assert.notEqual(replicationId({ ...base, source: endpointIdentity(parseEndpoint('a', 'source'), asBob) }).base, id.base);
  assert.deepEqual(endpointIdentity(parseEndpoint('http://h:5984/b', 'target'), asBob), base.target);
});

test('credentials become a header, stay out of the id and are masked when shown', () => {
  const withCreds = parseEndpoint('http://bob:s3cret@host:5984/db', 'source');
  const otherPassword = parseEndpoint('http://bob:changed@host:5984/db', 'source');
  assert.equal(withCreds.kind, 'remote');
  if (withCreds.kind !== 'remote') return;
  assert.equal(withCreds.url, 'http://host:5984/db/');
  assert.equal(withCreds.headers['authorization'], `Basic ${Buffer.from('bob:s3cret').toString('base64')}`);
  assert.deepEqual(endpointIdentity(withCreds, ADMIN), endpointIdentity(otherPassword, ADMIN));
  assert.doesNotMatch(JSON.stringify(endpointIdentity(withCreds, ADMIN)), /s3cret/);
  assert.equal(displayEndpoint(withCreds), 'http://bob:*****@host:5984/db/');
  assert.equal(stripCredentials('GET http://bob:s3cret@host/db/_changes failed'), 'GET http://host/db/_changes failed');
  const object = parseEndpoint({ url: 'http://host/db', headers: { Authorization: 'Basic Ym9iOngK' } }, 'target');
  assert.equal(object.kind === 'remote' && object.headers['authorization'], 'Basic Ym9iOngK');
  assert.deepEqual(parseEndpoint('albums', 'source'), { kind: 'local', db: 'albums' });
});

test('attachments the target has on the same branch are not sent again', () => {
  const doc = {
    _id: 'd', _rev: '3-c', _revisions: { start: 3, ids: ['c', 'b', 'a'] },
    _attachments: { old: { stub: true, revpos: 1 }, mid: { stub: true, revpos: 2 }, new: { stub: true, revpos: 3 } },
  };
  assert.deepEqual(attachmentsToSend(doc, []), ['old', 'mid', 'new'], 'a new document needs everything');
  assert.deepEqual(attachmentsToSend(doc, ['1-a']), ['mid', 'new']);
  assert.deepEqual(attachmentsToSend(doc, ['2-b', '1-a']), ['new']);
  assert.deepEqual(attachmentsToSend(doc, ['2-x']), ['old', 'mid', 'new'], 'an ancestor on another branch does not count');
  assert.deepEqual(attachmentsToSend({ _id: 'e', _rev: '1-a' }, ['1-a']), []);
});
