/**
 * Mango's errors as CouchDB 3's mango_error answers them: a status, an error name and a reason,
 * where values inside a reason are printed as Erlang's `~w` prints the EJSON term CouchDB held
 * (`<<102,111,111>>` for the string "foo", `{[{<<97>>,1}]}` for `{"a":1}`).
 */
import { CouchError } from '../errors.js';
import { erlangTerm } from '../erlang-terms.js';

export const mangoError = (status: number, error: string, reason: string): CouchError => new CouchError(status, error, reason);

export const badArg = (op: string, arg: unknown): CouchError => mangoError(400, 'bad_arg', `Bad argument for operator ${op}: ${erlangTerm(arg)}`);
export const invalidKey = (key: string): CouchError => mangoError(400, 'invalid_key', `Invalid key ${key} for this request.`);
export const missingRequiredKey = (key: string): CouchError => mangoError(400, 'missing_required_key', `Missing required key: ${key}`);
export const invalidFieldName = (field: string): CouchError => mangoError(400, 'invalid_field_name', `Invalid field name: ${field}`);
export const noUsableIndex = (): CouchError => mangoError(400, 'no_usable_index', 'There is no index available for this selector.');
export const noUsableSortIndex = (): CouchError =>
  mangoError(400, 'no_usable_index', 'No index exists for this sort, try indexing by the sort fields.');
