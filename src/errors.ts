/**
 * The CouchDB-shaped error every layer throws: `{error, reason}` with its HTTP status.
 * Lives below every layer so engines can say "conflict" or "not_found" without knowing HTTP.
 */
export class CouchError extends Error {
  readonly status: number;
  readonly error: string;
  readonly reason: string;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, error: string, reason: string, headers?: Record<string, string>) {
    super(`${error}: ${reason}`);
    this.status = status;
    this.error = error;
    this.reason = reason;
    this.headers = headers;
  }
}

export const badRequest = (reason: string): CouchError => new CouchError(400, 'bad_request', reason);
/** A body (or `_doc` field) that is not JSON: CouchDB 1.6's answer. */
export const invalidJson = (): CouchError => badRequest('invalid_json');
export const notFound = (reason = 'missing'): CouchError => new CouchError(404, 'not_found', reason);
export const conflict = (): CouchError => new CouchError(409, 'conflict', 'Document update conflict.');
export const queryParseError = (reason: string): CouchError => new CouchError(400, 'query_parse_error', reason);
/** CouchDB 1.6 has no status of its own for doc_validation: it answers the generic 500. */
export const docValidation = (reason: string): CouchError => new CouchError(500, 'doc_validation', reason);
export const forbidden = (reason: string): CouchError => new CouchError(403, 'forbidden', reason);
export const unauthorized = (reason: string): CouchError => new CouchError(401, 'unauthorized', reason);
export const tooLarge = (reason = 'Document too large'): CouchError => new CouchError(413, 'too_large', reason);
export const badContentType = (reason = 'Content-Type must be application/json'): CouchError =>
  new CouchError(415, 'bad_content_type', reason);
/** Work cut short because the server is stopping or restarting: clients retry a 503. */
export const serverStopping = (): CouchError => new CouchError(503, 'service_unavailable', 'The server is restarting');
/** What work on a closed database fails with: 404 once it is deleted, else 503 (the server stops). */
export const databaseClosed = (deleted: boolean): CouchError => (deleted ? notFound('no_db_file') : serverStopping());
/** 405 with the `Allow` header CouchDB sends (`allowed`: comma-separated methods). */
export const methodNotAllowed = (allowed: string): CouchError =>
  new CouchError(405, 'method_not_allowed', `Only ${allowed} allowed`, { Allow: allowed });
export const preconditionFailed = (error: string, reason: string): CouchError => new CouchError(412, error, reason);

/** Turns anything thrown into a CouchError; unknown failures become 500s without leaking internals. */
export function toCouchError(err: unknown): CouchError {
  if (err instanceof CouchError) return err;
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return badRequest('Request body is nested too deeply');
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CouchError(500, 'unknown_error', message);
}
