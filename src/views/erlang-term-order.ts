/**
 * Erlang's term order over JSON values as CouchDB 1.6 holds them (EJSON). CouchDB sorts the
 * rows one document emits with `lists:sort`, so this order, not collation, decides how rows of
 * the same key and document follow each other.
 *
 * Types: number < atom < tuple < list < binary, where
 *   - numbers compare by value (an integer and an equal float are equal);
 *   - null, true and false are atoms, compared by name: false < null < true;
 *   - an object is the 1-tuple {[{Key, Value}, ...]}: compared as its member list, in the order
 *     the members are held, each member the 2-tuple {KeyBinary, Value};
 *   - an array is a list: element by element, a prefix first (the empty list, nil, is still
 *     after every tuple and before every binary);
 *   - a string is a UTF-8 binary: byte by byte, a prefix first.
 * JavaScript orders integer-like object keys first, so such members are compared in that order
 * (the order in which the row's value is also written out).
 */

const NUMBER = 0;
const ATOM = 1;
const TUPLE = 2;
const LIST = 3;
const BINARY = 4;

/** Atoms by name: "false" < "null" < "true". */
const ATOM_RANK = { false: 0, null: 1, true: 2 } as const;

function typeRank(value: unknown): number {
  switch (typeof value) {
    case 'number': return NUMBER;
    case 'string': return BINARY;
    case 'object': return value === null ? ATOM : Array.isArray(value) ? LIST : TUPLE;
    // booleans; undefined is written out as null, and nothing else comes out of JSON.
    default: return ATOM;
  }
}

function atomRank(value: unknown): number {
  return value === true ? ATOM_RANK.true : value === false ? ATOM_RANK.false : ATOM_RANK.null;
}

/** Negative, zero or positive as `a` is before, equal to or after `b` in Erlang's term order. */
export function compareErlangTerms(a: unknown, b: unknown): number {
  const ta = typeRank(a);
  const tb = typeRank(b);
  if (ta !== tb) return ta - tb;
  switch (ta) {
    case NUMBER: return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case ATOM: return atomRank(a) - atomRank(b);
    case BINARY: return compareUtf8(a as string, b as string);
    case LIST: {
      const la = a as unknown[];
      const lb = b as unknown[];
      const common = Math.min(la.length, lb.length);
      for (let i = 0; i < common; i++) {
        const c = compareErlangTerms(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length;
    }
    default: {
      const ma = Object.keys(a as object);
      const mb = Object.keys(b as object);
      const common = Math.min(ma.length, mb.length);
      for (let i = 0; i < common; i++) {
        const key = compareUtf8(ma[i]!, mb[i]!);
        if (key !== 0) return key;
        const value = compareErlangTerms((a as Record<string, unknown>)[ma[i]!], (b as Record<string, unknown>)[mb[i]!]);
        if (value !== 0) return value;
      }
      return ma.length - mb.length;
    }
  }
}

/**
 * Strings in the order of their UTF-8 bytes, which is code point order, without encoding them.
 * UTF-16 units differ from it only where a surrogate (a code point above U+FFFF) meets a unit
 * of U+E000..U+FFFF, so those two ranges swap places before comparing.
 */
export function compareUtf8(a: string, b: string): number {
  const common = Math.min(a.length, b.length);
  for (let i = 0; i < common; i++) {
    const ua = a.charCodeAt(i);
    const ub = b.charCodeAt(i);
    if (ua !== ub) return codePointRank(ua) - codePointRank(ub);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}
