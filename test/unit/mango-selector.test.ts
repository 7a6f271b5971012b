/**
 * Mango selectors alone: normalization (CouchDB 3's mango_selector norm_ops, norm_fields,
 * norm_negations), its errors, matching with every operator, and the planning helpers
 * (required fields, constant fields, ranges), with cases from mango_selector's eunit tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  fieldRanges, getField, hasRequiredFields, indexableFields, isConstantField, matches, normalize, parseField, MAX,
  type JsonObject,
} from '../../src/mango/selector.js';
import { erlangTerm } from '../../src/erlang-terms.js';
import { extractFields, validateSort } from '../../src/mango/options.js';
import { CouchError } from '../../src/errors.js';

const norm = (s: JsonObject) => normalize(s);
const match = (s: JsonObject, doc: JsonObject) => matches(normalize(s), doc);

function assertError(fn: () => unknown, error: string, reason: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof CouchError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.error, error);
    assert.equal(err.reason, reason);
    return true;
  });
}

test('field paths: dots split, a backslash escapes a dot, empty parts are refused', () => {
  assert.deepEqual(parseField('ab'), ['ab']);
  assert.deepEqual(parseField('a.b'), ['a', 'b']);
  assert.deepEqual(parseField('a\\.b'), ['a.b']);
  assert.deepEqual(parseField('a\\.b.c'), ['a.b', 'c']);
  assertError(() => parseField('a..b'), 'invalid_field_name', 'Invalid field name: a..b');
  assert.deepEqual(getField({ a: [10, { b: 2 }] }, ['a', '1', 'b']), { value: 2 });
  assert.equal(getField({ a: [10] }, ['a', '5']), 'bad_path');
  assert.equal(getField({ a: 1 }, ['a', 'b']), 'bad_path');
  assert.equal(getField({ a: {} }, ['a', 'b']), 'not_found');
});

test('normalizing: implicit $eq and $and, nested objects become dotted fields', () => {
  assert.deepEqual(norm({}), {});
  assert.deepEqual(norm({ a: 1 }), { a: { $eq: 1 } });
  assert.deepEqual(norm({ a: 1, b: { $gt: 2 } }), { $and: [{ a: { $eq: 1 } }, { b: { $gt: 2 } }] });
  assert.deepEqual(norm({ a: { b: { $gt: 10 } } }), { 'a.b': { $gt: 10 } });
  assert.deepEqual(norm({ a: { b: 'x', c: 'y' } }), { $and: [{ 'a.b': { $eq: 'x' } }, { 'a.c': { $eq: 'y' } }] });
  assert.deepEqual(norm({ foo: { $and: [{ $gt: 5 }, { $lt: 10 }] } }), { $and: [{ foo: { $gt: 5 } }, { foo: { $lt: 10 } }] });
  assert.deepEqual(norm({ a: [1, 2] }), { a: { $eq: [1, 2] } });
  assert.deepEqual(norm({ a: { $elemMatch: { $gte: 80, $lt: 85 } } }),
    { a: { $elemMatch: { $and: [{ '': { $gte: 80 } }, { '': { $lt: 85 } }] } } });
  assert.deepEqual(norm({ a: { $elemMatch: { b: 1 } } }), { a: { $elemMatch: { b: { $eq: 1 } } } });
});

test('normalizing pushes negations to the leaves (De Morgan, $nor, double $not)', () => {
  assert.deepEqual(norm({ $not: { foo: { $gt: 10 } } }), { foo: { $lte: 10 } });
  assert.deepEqual(norm({ $not: { $and: [{ foo: { $gt: 10 } }, { foo: { $lt: 5 } }] } }), { $or: [{ foo: { $lte: 10 } }, { foo: { $gte: 5 } }] });
  assert.deepEqual(norm({ $nor: [{ a: 1 }, { b: { $in: [1] } }] }), { $and: [{ a: { $ne: 1 } }, { b: { $nin: [1] } }] });
  assert.deepEqual(norm({ a: { $not: { $not: { $eq: 1 } } } }), { a: { $eq: 1 } });
  assert.deepEqual(norm({ a: { $not: { $exists: true } } }), { a: { $exists: false } });
  assert.deepEqual(norm({ a: { $not: { $regex: '^x' } } }), { a: { $not: { $regex: '^x' } } });
});

test('normalizing refuses what CouchDB refuses, with its errors', () => {
  assertError(() => norm({ a: { $foo: 1 } }), 'invalid_operator', 'Invalid operator: $foo');
  assertError(() => norm({ a: { $where: 'x' } }), 'not_supported', 'Unsupported operator: $where');
  assertError(() => norm({ a: { $in: 1 } }), 'bad_arg', 'Bad argument for operator $in: 1');
  assertError(() => norm({ f: { $not: 5 } }), 'bad_arg', 'Bad argument for operator $not: 5');
  assertError(() => norm({ a: { $regex: '(' } }), 'bad_arg', 'Bad argument for operator $regex: <<40>>');
  assertError(() => norm({ a: { $exists: 'yes' } }), 'bad_arg', 'Bad argument for operator $exists: <<121,101,115>>');
  assertError(() => norm({ a: { $size: -1 } }), 'bad_arg', 'Bad argument for operator $size: -1');
  assertError(() => norm({ a: { $mod: [2] } }), 'bad_arg', 'Bad argument for operator $mod: [2]');
  assertError(() => norm({ $and: { a: 1 } }), 'bad_arg', 'Bad argument for operator $and: {[{<<97>>,1}]}');
  assertError(() => norm({ $gt: 5 }), 'invalid_selector', 'One or more conditions is missing a field name.');
});

test('erlang ~w printing of JSON values', () => {
  assert.equal(erlangTerm('foo'), '<<102,111,111>>');
  assert.equal(erlangTerm(''), '<<>>');
  assert.equal(erlangTerm([1, 1.5, null, true]), '[1,1.5,null,true]');
  assert.equal(erlangTerm({}), '{[]}');
});

const doc = {
  _id: 'doc1', name: 'Jimi', age: 27, tags: ['guitar', 'blues'], scores: [82, 95],
  address: { city: 'Seattle', 'zip.code': '98101' }, colors: { red: 1, blue: 2 }, nothing: null, ok: true,
};

test('comparison operators use view collation', () => {
  assert.ok(match({ age: 27 }, doc));
  assert.ok(match({ age: { $eq: 27.0 } }, doc));
  assert.ok(!match({ age: { $ne: 27 } }, doc));
  assert.ok(match({ age: { $gt: 26, $lt: 28 } }, doc));
  assert.ok(match({ age: { $gte: 27, $lte: 27 } }, doc));
  assert.ok(!match({ age: { $gt: 27 } }, doc));
  // Collation: numbers sort before strings, null before everything.
  assert.ok(match({ age: { $lt: 'a' } }, doc));
  assert.ok(match({ age: { $gt: null } }, doc));
  assert.ok(match({ name: { $gt: 'jimi' } }, doc), 'ICU order: "jimi" < "Jimi"');
  assert.ok(match({ nothing: null }, doc));
  assert.ok(!match({ missing: { $ne: 1 } }, doc), 'a missing field matches no comparison');
});

test('_id compares in raw (Erlang term) order', () => {
  assert.ok(match({ _id: { $gt: 'Doc' } }, doc), '"doc1" > "Doc" by bytes');
  assert.ok(!match({ _id: { $lt: 'Doc' } }, doc));
  assert.ok(match({ name: { $lt: 'jimi' } }, { name: 'J' }));
});

test('$exists, $type, $in, $nin, $size, $mod, $regex, $all, $beginsWith', () => {
  assert.ok(match({ age: { $exists: true } }, doc));
  assert.ok(match({ missing: { $exists: false } }, doc));
  assert.ok(!match({ age: { $exists: false } }, doc));
  for (const [field, type] of [['age', 'number'], ['name', 'string'], ['tags', 'array'], ['address', 'object'], ['nothing', 'null'], ['ok', 'boolean']]) {
    assert.ok(match({ [field!]: { $type: type! } }, doc), `${field} is ${type}`);
  }
  assert.ok(match({ age: { $in: [1, 27] } }, doc));
  assert.ok(match({ tags: { $in: ['blues', 'x'] } }, doc), 'an array matches $in by any element');
  assert.ok(!match({ tags: { $nin: ['blues'] } }, doc));
  assert.ok(match({ age: { $nin: [1, 2] } }, doc));
  assert.ok(match({ tags: { $size: 2 } }, doc));
  assert.ok(!match({ name: { $size: 4 } }, doc));
  assert.ok(match({ age: { $mod: [10, 7] } }, doc));
  assert.ok(!match({ name: { $mod: [10, 7] } }, doc));
  assert.ok(match({ name: { $regex: '^J.m' } }, doc));
  assert.ok(match({ name: { $regex: '(?i)^jimi$' } }, doc));
  assert.ok(!match({ age: { $regex: '2' } }, doc));
  assert.ok(match({ tags: { $all: ['blues', 'guitar'] } }, doc));
  assert.ok(!match({ tags: { $all: ['blues', 'piano'] } }, doc));
  assert.ok(match({ tags: { $all: [['guitar', 'blues']] } }, doc), '[A] equal to the array itself');
  assert.ok(!match({ tags: { $all: [] } }, doc));
  assert.ok(match({ name: { $beginsWith: 'Ji' } }, doc));
});

test('$and, $or, $not, $nor, empty $and/$or', () => {
  assert.ok(match({ $or: [{ age: 1 }, { name: 'Jimi' }] }, doc));
  assert.ok(!match({ $or: [{ age: 1 }, { name: 'x' }] }, doc));
  assert.ok(match({ $and: [{ age: 27 }, { name: 'Jimi' }] }, doc));
  assert.ok(match({ $not: { age: 1 } }, doc));
  assert.ok(!match({ $not: { age: 27 } }, doc));
  assert.ok(match({ $nor: [{ age: 1 }, { name: 'x' }] }, doc));
  assert.ok(match({ age: 27, $or: [] }, doc), 'an empty $or does not restrict');
  assert.ok(match({ $and: [] }, doc));
  assert.ok(!match({ $not: { missing: 1 } }, doc), '$not $eq becomes $ne, which needs the field');
});

test('$elemMatch, $allMatch, $keyMapMatch and nested fields', () => {
  assert.ok(match({ scores: { $elemMatch: { $gte: 80, $lt: 85 } } }, doc));
  assert.ok(!match({ scores: { $elemMatch: { $gte: 96 } } }, doc));
  assert.ok(match({ scores: { $allMatch: { $gt: 80 } } }, doc));
  assert.ok(!match({ scores: { $allMatch: { $gt: 90 } } }, doc));
  assert.ok(!match({ empty: { $allMatch: { $gt: 90 } } }, { empty: [] }));
  assert.ok(match({ list: { $elemMatch: { name: 'b' } } }, { list: [{ name: 'a' }, { name: 'b' }] }));
  assert.ok(match({ colors: { $keyMapMatch: { $eq: 'red' } } }, doc));
  assert.ok(!match({ colors: { $keyMapMatch: { $eq: 'green' } } }, doc));
  assert.ok(match({ 'address.city': 'Seattle' }, doc));
  assert.ok(match({ address: { city: 'Seattle' } }, doc));
  assert.ok(match({ 'address.zip\\.code': '98101' }, doc));
  assert.ok(match({ 'tags.1': 'blues' }, doc));
});

test('required and constant fields (mango_selector eunit cases)', () => {
  assert.ok(hasRequiredFields(norm({ A: 'foo' }), ['A']));
  assert.ok(!hasRequiredFields(norm({ A: 'foo' }), ['B']));
  assert.ok(!hasRequiredFields(norm({}), ['A']));
  assert.ok(!hasRequiredFields(norm({ A: { $exists: false } }), ['A']));
  assert.ok(hasRequiredFields(norm({ $and: [{ A: 'foo' }, { B: 'foo' }] }), ['A']));
  assert.ok(!hasRequiredFields(norm({ $and: [{ A: 'foo' }, { B: 'foo' }] }), ['A', 'C']));
  assert.ok(!hasRequiredFields(norm({ $or: [{ A: 'foo' }, { B: 'foo' }] }), ['A']));
  assert.ok(hasRequiredFields(norm({ A: 'foo', $or: [{ B: 'bar' }, { B: 'baz' }], C: 'qux' }), ['A', 'B', 'C']));
  assert.ok(hasRequiredFields(norm({ $and: [{ $and: [{ A: 'foo' }] }, { $and: [{ B: 'foo' }] }] }), ['A', 'B']));
  assert.ok(isConstantField(norm({ A: 'foo' }), 'A'));
  assert.ok(isConstantField(norm({ $and: [{ cars: { $eq: '2' } }, { age: { $gt: 10 } }] }), 'cars'));
  assert.ok(!isConstantField(norm({ $and: [{ cars: { $eq: '2' } }, { age: { $gt: 10 } }] }), 'age'));
  assert.ok(!isConstantField(norm({ $or: [{ A: 'foo' }, { B: 'foo' }] }), 'A'));
});

test('indexable fields and their ranges', () => {
  assert.deepEqual(indexableFields(norm({ b: { $gt: 1 }, a: 2, c: { $regex: 'x' } })), ['a', 'b']);
  assert.deepEqual(fieldRanges(norm({ age: { $gt: 5, $lte: 10 } })), [['age', { lowOp: '$gt', low: 5, highOp: '$lte', high: 10 }]]);
  assert.deepEqual(fieldRanges(norm({ age: { $gte: 5, $lte: 5 } })), [['age', { lowOp: '$eq', low: 5, highOp: '$eq', high: 5 }]]);
  assert.deepEqual(fieldRanges(norm({ age: { $gt: 5, $lt: 3 } })), [['age', 'empty']]);
  const open = fieldRanges(norm({ age: { $gt: 5 } }))[0]![1];
  assert.ok(open !== 'empty' && open.high === MAX);
});

test('sorts and field projections', () => {
  assert.deepEqual(validateSort(['a', { b: 'asc' }]), [{ field: 'a', dir: 'asc' }, { field: 'b', dir: 'asc' }]);
  assertError(() => validateSort(['a', { b: 'desc' }]), 'unsupported_mixed_sort', 'Sorts currently only support a single direction for all fields.');
  assertError(() => validateSort([{ b: 'up' }]), 'invalid_sort_field', 'Invalid sort field: {[{<<"b">>,<<"up">>}]}');
  assert.deepEqual(extractFields(doc, ['name', 'address.city', 'missing', 'tags.0']),
    { name: 'Jimi', address: { city: 'Seattle' }, tags: { 0: 'guitar' } });
});
