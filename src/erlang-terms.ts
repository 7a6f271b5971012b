/**
 * JSON values as Erlang prints the EJSON terms CouchDB holds for them, for error reasons CouchDB
 * builds with io_lib:format: `~w` (every string as bytes, `<<102,111,111>>`) and `~p` (printable
 * strings quoted, `<<"foo">>`); objects are `{[{Key,Value},...]}`.
 */

/** A JSON value as Erlang's `~w` prints its EJSON form. */
export function erlangTerm(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return erlangNumber(value);
  if (typeof value === 'string') return `<<${[...Buffer.from(value, 'utf8')].join(',')}>>`;
  if (Array.isArray(value)) return `[${value.map(erlangTerm).join(',')}]`;
  const members = Object.entries(value as Record<string, unknown>).map(([k, v]) => `{${erlangTerm(k)},${erlangTerm(v)}}`);
  return `{[${members.join(',')}]}`;
}

/** Integers as digits; floats as Erlang's shortest round-trip form (`1.5`, `1.0e21`). */
function erlangNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 53) return String(n);
  const text = String(n);
  const [mantissa, exponent] = text.split('e');
  const m = mantissa!.includes('.') ? mantissa! : `${mantissa}.0`;
  return exponent === undefined ? m : `${m}e${exponent.replace(/^\+/, '')}`;
}

/** A JSON value as Erlang's `~p` prints it: like `~w`, but printable strings quoted (`<<"foo">>`). */
export function erlangPretty(value: unknown): string {
  if (typeof value === 'string') return /^[\x20-\x7e]*$/.test(value) ? `<<${JSON.stringify(value)}>>` : erlangTerm(value);
  if (Array.isArray(value)) return `[${value.map(erlangPretty).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{[${Object.entries(value as Record<string, unknown>).map(([k, v]) => `{${erlangPretty(k)},${erlangPretty(v)}}`).join(',')}]}`;
  }
  return erlangTerm(value);
}
