/**
 * pickAcceptedEncodings against the cases mochiweb's own tests give for parse_qvalues and
 * pick_accepted_encodings (the Accept-Encoding reading CouchDB inherits).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickAcceptedEncodings } from '../../src/api/request.js';

const GI = ['gzip', 'identity'];
const GDI = ['gzip', 'deflate', 'identity'];

test('no header, or a header naming nothing supported, is identity alone', () => {
  assert.deepEqual(pickAcceptedEncodings('', GI), ['identity']);
  assert.deepEqual(pickAcceptedEncodings('deflate', GI), ['identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip;q=0', GI), ['identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip;q=0, deflate;q=0', GI), ['identity']);
});

test('accepted encodings by descending q, ties in header order, identity last unless refused', () => {
  assert.deepEqual(pickAcceptedEncodings('gzip', GI), ['gzip', 'identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip;q=0.5, deflate', GI), ['gzip', 'identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip, deflate, identity;q=0', GI), ['gzip']);
  assert.deepEqual(pickAcceptedEncodings('gzip, deflate', GDI), ['gzip', 'deflate', 'identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip;q=0.2, deflate', GDI), ['deflate', 'gzip', 'identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip, deflate, identity;q=0', GDI), ['gzip', 'deflate']);
  assert.deepEqual(pickAcceptedEncodings(' GZIP ; Q = 0.5 , identity', GI), ['identity', 'gzip']);
});

test('* stands for every supported encoding not named', () => {
  assert.deepEqual(pickAcceptedEncodings('*', GI), ['gzip', 'identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip; q=0.1, *;q=0', GDI), ['gzip']);
  assert.deepEqual(pickAcceptedEncodings('*;q=0', GI), []);
  assert.deepEqual(pickAcceptedEncodings('identity;q=0', GI), []);
  assert.deepEqual(pickAcceptedEncodings('deflate, *;q=0.5', GI), ['gzip', 'identity']);
});

test('q-values past three decimals, above 1, or not numbers make the header invalid', () => {
  for (const header of ['gzip; q=1.1, deflate', 'gzip; q=0.5, deflate;q=2', 'gzip, deflate;q=AB', 'gzip; q=0.1234, deflate', 'gzip; q=, *;q=0', 'gzip;q=2.0, *;q=0', 'gzip; ;q=1']) {
    assert.equal(pickAcceptedEncodings(header, GI), 'invalid', header);
  }
  // Parameters other than q are part of the name.
  assert.deepEqual(pickAcceptedEncodings('gzip;level=1', GI), ['identity']);
  assert.deepEqual(pickAcceptedEncodings('gzip;level=1;q=0.5, gzip', GI), ['gzip', 'identity']);
});
