import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { newRevHash } from '../../src/core/revid.js';

test('revision ids are the ones CouchDB gives the same edits', () => {
  // CouchDB 1.6's conflicts.js (COUCHDB-1178) and the examples of CouchDB's document API docs.
  assert.equal(newRevHash(false, null, { foo: 'bar' }), '4c6114c65e295552ab1019e2b046b10e');
  assert.equal(newRevHash(false, '1-4c6114c65e295552ab1019e2b046b10e', { foo: 'baz' }), 'cfcd6781f13994bde69a1c3320bfdadb');
  assert.equal(newRevHash(false, null, {
    description: 'An Italian-American dish that usually consists of spaghetti, tomato sauce and meatballs.',
    ingredients: ['spaghetti', 'tomato sauce', 'meatballs'],
    name: 'Spaghetti with meatballs',
  }), '917fa2381192822767f010b95b45325b');
  assert.equal(newRevHash(false, null, { servings: 4, subtitle: 'Delicious with fresh bread', title: 'Fish Stew' }), '9c65296036141e575d32ba9c034dd3ee');
  // Its deletion (DELETE ?rev=1-9c65…): the deleted flag, the parent, an empty body.
  assert.equal(newRevHash(true, '1-9c65296036141e575d32ba9c034dd3ee', {}), '056f5f44046ecafc08a2bc2b9c229e20');
});

/** md5 of an Erlang external term written out by hand. */
const md5 = (bytes: number[]): string => createHash('md5').update(Buffer.from(bytes)).digest('hex');
const bin = (text: string): number[] => { const b = Buffer.from(text, 'utf8'); return [109, 0, 0, (b.length >> 8) & 0xff, b.length & 0xff, ...b]; };

test('the term is Erlang\'s external format of [Deleted, Pos, Rev, {Body}, Atts], as term_to_binary writes it', () => {
  // {"a":[1,2],"b":[300,-1,1.5,null,true],"c":{}} with no parent: byte lists are STRING_EXT,
  // other lists LIST_EXT, 300 INTEGER_EXT, 1.5 NEW_FLOAT_EXT, null/true atoms, {} {[]}.
  const term = [131, 108, 0, 0, 0, 5, 100, 0, 5, ...Buffer.from('false'), 97, 0, 97, 0,
    104, 1, 108, 0, 0, 0, 3,
    104, 2, ...bin('a'), 107, 0, 2, 1, 2,
    104, 2, ...bin('b'), 108, 0, 0, 0, 5, 98, 0, 0, 1, 44, 98, 255, 255, 255, 255, 70, ...Buffer.from([0x3f, 0xf8, 0, 0, 0, 0, 0, 0]),
    100, 0, 4, ...Buffer.from('null'), 100, 0, 4, ...Buffer.from('true'), 106,
    104, 2, ...bin('c'), 104, 1, 106,
    106,
    106, 106];
  assert.equal(newRevHash(false, null, { a: [1, 2], b: [300, -1, 1.5, null, true], c: {} }), md5(term));
  // A parent's 32 hex digits are its 16 bytes; an attachment is {Name, Type, Md5}.
  const digest = createHash('md5').update('content').digest();
  const withAtt = [131, 108, 0, 0, 0, 5, 100, 0, 4, ...Buffer.from('true'), 97, 3, 109, 0, 0, 0, 16, ...Buffer.from('00112233445566778899aabbccddeeff', 'hex'),
    104, 1, 106,
    108, 0, 0, 0, 1, 104, 3, ...bin('a.txt'), ...bin('text/plain'), 109, 0, 0, 0, 16, ...digest, 106,
    106];
  assert.equal(newRevHash(true, '3-00112233445566778899aabbccddeeff', {}, [{ name: 'a.txt', contentType: 'text/plain', digest: `md5-${digest.toString('base64')}` }]), md5(withAtt));
});

test('every part of the edit changes the hash', () => {
  const body = { a: 1, b: [true, null, 'x'] };
  const att = [{ name: 'f', contentType: 'text/plain', digest: 'md5-AAAAAAAAAAAAAAAAAAAAAA==' }];
  const base = newRevHash(false, '1-abc', body, att);
  assert.notEqual(newRevHash(true, '1-abc', body, att), base, 'deleted flag');
  assert.notEqual(newRevHash(false, '1-abd', body, att), base, 'parent');
  assert.notEqual(newRevHash(false, '2-abc', body, att), base, 'parent position');
  assert.notEqual(newRevHash(false, null, body, att), base, 'no parent');
  assert.notEqual(newRevHash(false, '1-abc', { a: 2, b: [true, null, 'x'] }, att), base, 'body');
  assert.notEqual(newRevHash(false, '1-abc', body, [{ ...att[0]!, digest: 'md5-AQAAAAAAAAAAAAAAAAAAAA==' }]), base, 'attachment digest');
  assert.notEqual(newRevHash(false, '1-abc', body, [{ ...att[0]!, contentType: 'text/html' }]), base, 'attachment type');
  assert.notEqual(newRevHash(false, '1-abc', body), base, 'no attachments');
  assert.equal(newRevHash(false, '1-abc', body, att), base, 'the same edit, the same hash');
});
