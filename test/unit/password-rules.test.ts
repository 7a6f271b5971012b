import { test } from 'node:test';
import assert from 'node:assert/strict';
import { passwordRefusal } from '../../src/auth/password-rules.js';

const RULES = '[{".{10,}"}, {"[A-Z]+", "Requirement 2."}, {"[a-z]+", ""}, {"\\\\d+", "Req 4."}, "[!.,()]+"]';

test('a password is checked against each requirement in order; the first it misses refuses it with its reason', () => {
  const refusal = (password: string) => {
    const err = passwordRefusal(password, RULES);
    return err && [err.status, err.error, err.reason];
  };
  assert.deepEqual(refusal('funnybone'), [400, 'bad_request', 'Password does not conform to requirements.']);
  assert.deepEqual(refusal('funnnnnybone'), [400, 'bad_request', 'Password does not conform to requirements. Requirement 2.']);
  assert.deepEqual(refusal('FUNNNNNYBONE'), [400, 'bad_request', 'Password does not conform to requirements.'], 'an empty reason adds nothing');
  assert.deepEqual(refusal('funnnnnyBONE'), [400, 'bad_request', 'Password does not conform to requirements. Req 4.']);
  assert.deepEqual(refusal('funnnnnyB0N3'), [400, 'bad_request', 'Password does not conform to requirements.']);
  assert.equal(refusal('funnnnnyB0N3!'), undefined);
});

test('no setting, or an empty list, accepts any password', () => {
  assert.equal(passwordRefusal('x', ''), undefined);
  assert.equal(passwordRefusal('x', '[]'), undefined);
  assert.equal(passwordRefusal('x', '[[]]'), undefined, 'the empty string (an empty list) matches everything');
});

test('a setting that is not a list of requirements refuses every password as a server error', () => {
  for (const rules of ['{{".{10,}"}}', '[{".{10,}"]', '[42]', '[{"a", "b", "c"}]', '["("]']) {
    const err = passwordRefusal('anything at all 1A!', rules);
    assert.deepEqual(err && [err.status, err.error, err.reason], [403, 'forbidden', 'Server cannot hash passwords at this time.'], rules);
  }
});
