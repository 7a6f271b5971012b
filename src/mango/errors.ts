/**
 * Mango's errors as CouchDB 3's mango_error answers them: a status, an error name and a reason,
 * where values inside a reason are printed as Erlang's `~w` prints the EJSON term CouchDB held
 * (`<<102,111,111>>` for the string "foo", `{[{<<97>>,1}]}` for `{"a":1}`).
 */
import { CouchError } from '../errors.js';

export const mangoError = (status: number, error: string, reason: string): CouchError => new CouchError(status, error, reason);

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

export const badArg = (op: string, arg: unknown): CouchError => mangoError(400, 'bad_arg', `Bad argument for operator ${op}: ${erlangTerm(arg)}`);
export const invalidKey = (key: string): CouchError => mangoError(400, 'invalid_key', `Invalid key ${key} for this request.`);
export const missingRequiredKey = (key: string): CouchError => mangoError(400, 'missing_required_key', `Missing required key: ${key}`);
export const invalidFieldName = (field: string): CouchError => mangoError(400, 'invalid_field_name', `Invalid field name: ${field}`);
export const noUsableIndex = (): CouchError => mangoError(400, 'no_usable_index', 'There is no index available for this selector.');
export const noUsableSortIndex = (): CouchError =>
  mangoError(400, 'no_usable_index', 'No index exists for this sort, try indexing by the sort fields.');

/** A JSON value as Erlang's `~p` prints it: like `~w`, but printable strings quoted (`<<"foo">>`). */
export function erlangPretty(value: unknown): string {
  if (typeof value === 'string') return /^[\x20-\x7e]*$/.test(value) ? `<<${JSON.stringify(value)}>>` : erlangTerm(value);
  if (Array.isArray(value)) return `[${value.map(erlangPretty).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{[${Object.entries(value as Record<string, unknown>).map(([k, v]) => `{${erlangPretty(k)},${erlangPretty(v)}}`).join(',')}]}`;
  }
  return erlangTerm(value);
}
