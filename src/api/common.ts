/** Small pieces every handler group uses: limits, commit policy, body shapes, URLs. */
import { createHash } from 'node:crypto';
import { badRequest, CouchError, invalidJson, queryParseError } from '../errors.js';
import { HEADER_FULL_COMMIT, HTTPD_SECTIONS, MAIN_CONFIG_SECTION } from '../couchdb-names.js';
import type { Database, EditOptions, EditResult } from '../core/database.js';
import type { IncomingDoc } from '../core/document.js';
import { canonicalRev } from '../core/revtree.js';
import { parseViewBoolean, type Request } from './request.js';
import type { Config } from '../config/config.js';
import type { Services } from './services.js';
import { validateWrites, type Verdicts } from '../design/validation.js';
import { queryDesignDocProblem } from '../mango/indexes.js';

export function requestLimit(services: Services): number {
  return services.config.layered(HTTPD_SECTIONS).getInt('max_http_request_size', 67108864);
}

export function maxDocumentSize(services: Services): number {
  return services.config.getInt(MAIN_CONFIG_SECTION, 'max_document_size', 67108864);
}

/** CouchDB 2's spellings of view parameters, by the 1.6 name they stand for. */
const VIEW_PARAM_SYNONYMS: Readonly<Record<string, string>> = {
  start_key: 'startkey', end_key: 'endkey', start_key_doc_id: 'startkey_docid', end_key_doc_id: 'endkey_docid',
};

/**
 * A view or `_all_docs` request's parameters as couch_mrview_http:parse_qs folds them, in order:
 * the last of a repeated parameter (or of its spellings) wins, and `key` sets both bounds, each
 * of which a later startkey or endkey sets again. Requests without such repeats are kept as
 * they are.
 */
export function foldViewParams(req: Request): Request {
  const entries = [...req.query];
  const names = entries.map(([name]) => VIEW_PARAM_SYNONYMS[name] ?? name);
  const distinct = new Set(names);
  if (distinct.size === names.length && !(distinct.has('key') && (distinct.has('startkey') || distinct.has('endkey')))) return req;
  const last = new Map<string, string>();
  let key: string | undefined;
  for (const [i, [, value]] of entries.entries()) {
    const name = names[i]!;
    if (name === 'key') {
      key = value;
      last.set('startkey', value).set('endkey', value);
    } else {
      if (name === 'startkey' || name === 'endkey') key = undefined;
      last.set(name, value);
    }
  }
  const folded = new URLSearchParams();
  for (const [name, value] of last) {
    if (key !== undefined && (name === 'startkey' || name === 'endkey')) continue;
    folded.append(name, value);
  }
  if (key !== undefined) folded.append('key', key);
  return req.rewritten(`${req.rawPath}?${folded.toString()}`, req.method);
}

/**
 * A JSON query parameter of a view or `_all_docs` (key, keys, startkey, endkey): CouchDB 1.6's
 * couch_mrview answers one that does not parse with bad_request.
 */
export function viewJsonParam(req: Request, name: string): unknown {
  const value = req.string(name);
  return value === undefined ? undefined : parseViewJson(value);
}

function parseViewJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw invalidJson();
  }
}

/** couch_mrview's reason for a `keys` parameter that is not an array. */
export const KEYS_NOT_ARRAY = '`keys` must be an array of strings.';

/** `stale`: `ok`, `update_after` or absent (couch_mrview_http's reason otherwise). */
export function viewStaleParam(req: Request): 'ok' | 'update_after' | undefined {
  const stale = req.string('stale');
  return stale === undefined ? undefined : parseStale(stale);
}

function parseStale(value: string): 'ok' | 'update_after' {
  if (value !== 'ok' && value !== 'update_after') throw queryParseError('Invalid value for `stale`.');
  return value;
}

/** Grouping, which a listing without a reduce (`_all_docs`, as a map view) refuses with couch_mrview_util:validate_args' reason. */
export function refuseGrouping(req: Request): void {
  if (groupLevelParam(req) !== 0) throw queryParseError('Invalid use of grouping on a map view.');
}

/**
 * The grouping a view query asks for: 0 none, Infinity exact (`group=true`), else a level.
 * `group` and `group_level` set one thing, so the later of them in the query says what (the
 * query's order is read only when both are there).
 */
export function groupLevelParam(req: Request): number {
  const level = viewPositiveInt(req, 'group_level');
  const group = req.bool('group');
  const laterOf = (a: string, b: string): boolean => {
    const order = [...req.query.keys()];
    return order.lastIndexOf(a) > order.lastIndexOf(b);
  };
  const groupSays = req.has('group') && (level === undefined || laterOf('group', 'group_level'));
  return groupSays ? (group ? Infinity : 0) : level ?? 0;
}

/** A non-negative integer parameter of a view or `_all_docs`, with couch_mrview's messages for bad ones. */
export function viewPositiveInt(req: Request, name: string): number | undefined {
  const value = req.string(name);
  return value === undefined ? undefined : parsePositiveInt(value);
}

function parsePositiveInt(value: string): number {
  // As Erlang's list_to_integer: a sign and digits, nothing around them (not even spaces).
  if (!/^[-+]?\d+$/.test(value)) throw queryParseError(`Invalid value for integer: ${JSON.stringify(value)}`);
  const n = Number.parseInt(value, 10);
  if (n < 0) throw queryParseError(`Invalid value for positive integer: ${JSON.stringify(value)}`);
  return n;
}

/** How couch_mrview_http:parse_qs reads each view parameter it knows (the others it keeps as they are). */
const VIEW_PARAM_READERS: Readonly<Record<string, (value: string) => unknown>> = {
  key: parseViewJson, keys: parseViewJson, startkey: parseViewJson, start_key: parseViewJson, endkey: parseViewJson, end_key: parseViewJson,
  limit: parsePositiveInt, skip: parsePositiveInt, group_level: parsePositiveInt,
  reduce: parseViewBoolean, descending: parseViewBoolean, group: parseViewBoolean, inclusive_end: parseViewBoolean,
  include_docs: parseViewBoolean, attachments: parseViewBoolean, att_encoding_info: parseViewBoolean,
  update_seq: parseViewBoolean, conflicts: parseViewBoolean,
  stale: parseStale,
  // CouchDB 0.x's name for limit, refused by name since.
  count: () => { throw queryParseError('QS param `count` is not `limit`'); },
};

/**
 * Reads a view or `_all_docs` query string as couch_mrview_http:parse_qs does before anything
 * else is looked at (the view's existence, validate_args' checks, the ETag): every parameter, in
 * the order given and repeats included, so the first that does not parse is the answer.
 */
export function checkViewQuerySyntax(req: Request): void {
  for (const [name, value] of req.query) VIEW_PARAM_READERS[name]?.(value);
}

/** A POST body's `keys` (views, `_all_docs`, lists): an array, or absent; anything else is a 400. */
export function bodyKeys(body: Record<string, unknown>): unknown[] | undefined {
  const keys = body['keys'];
  if (keys !== undefined && !Array.isArray(keys)) throw badRequest('`keys` member must be a array.');
  return keys;
}

/** A JSON object body; anything else is a 400. */
export async function readObject(req: Request, services: Services): Promise<Record<string, unknown>> {
  const body = await req.jsonBody(requestLimit(services));
  // couch_httpd:json_body_obj decodes before it looks at the shape: an empty body is invalid JSON.
  if (body === undefined) throw invalidJson();
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('Request body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

/**
 * Whether a write must be on disk before it is acknowledged: yes unless `delayed_commits` is
 * on, and `X-Couch-Full-Commit` overrides either way.
 */
export function durableWrite(req: Request, services: Services): boolean {
  const header = req.header(HEADER_FULL_COMMIT);
  if (header === 'true') return true;
  if (header === 'false') return false;
  return !services.config.getBool(MAIN_CONFIG_SECTION, 'delayed_commits', false);
}

/**
 * Counts a document read (`database_reads`) as couch_db:open_doc and open_doc_revs do through
 * increment_stat: never in a system database (sys_db: the users and replicator databases).
 */
export function countRead(services: Services, db: Database): void {
  if (!db.system) services.stats.collector.databaseReads++;
}

/** Counts a write (`database_writes`) as couch_db:update_docs does, system databases excepted. */
export function countWrite(services: Services, db: Database): void {
  if (!db.system) services.stats.collector.databaseWrites++;
}

/**
 * Opens a database for the duration of a request: it stays open (the LRU cannot close it)
 * until the response, streamed or not, is finished.
 */
export async function openDb(services: Services, name: string, req: Request): Promise<Database> {
  const db = await services.dbs.get(name);
  req.onFinish(db.retain());
  return db;
}

/** The host a client addressed: a proxy's `[httpd] x_forwarded_host` header (X-Forwarded-Host), else Host. */
export function addressedHost(header: (name: string) => string | undefined, config: Config): string | undefined {
  return header(config.layered(HTTPD_SECTIONS).get('x_forwarded_host') ?? 'X-Forwarded-Host') ?? header('host');
}

/** Absolute URL of a path on this server, as CouchDB puts in Location headers. */
export function absoluteUrl(req: Request, path: string, config: Config): string {
  const httpd = config.layered(HTTPD_SECTIONS);
  const host = addressedHost((name) => req.header(name), config) ?? 'localhost';
  // As couch_httpd:absolute_uri: a proxy in front says the client's scheme (https or http only).
  const https = req.header(httpd.get('x_forwarded_ssl') ?? 'X-Forwarded-Ssl') === 'on'
    || req.header(httpd.get('x_forwarded_proto') ?? 'X-Forwarded-Proto') === 'https'
    || req.secure;
  return `${https ? 'https' : 'http'}://${host}${path}`;
}

/**
 * couch_util:url_encode: letters, digits and `_.-:` as they are, every other UTF-8 byte as an
 * upper-case `%XX`.
 */
export function couchUrlEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9_.:-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Encodes a document id for a URL, keeping the `/` after `_design` and `_local` readable. */
export function docPath(db: string, id: string): string {
  // A lone surrogate (possible in an id sent as a JSON escape) has no UTF-8 form for a URL: it is
  // written as U+FFFD there rather than failing a write that already succeeded.
  const enc = (s: string) => encodeURIComponent((s as unknown as { toWellFormed(): string }).toWellFormed());
  if (id.startsWith('_design/')) return `/${enc(db)}/_design/${enc(id.slice(8))}`;
  if (id.startsWith('_local/')) return `/${enc(db)}/_local/${enc(id.slice(7))}`;
  return `/${enc(db)}/${enc(id)}`;
}

/** Throws a result's error as the CouchError it carries (single-document writes). */
export function raiseResult(result: { ok: false; error: string; reason: string; status: number }): never {
  throw new CouchError(result.status, result.error, result.reason);
}

export const quote = (rev: string): string => `"${rev}"`;

/**
 * The ETag CouchDB gives `_all_docs` and normal `_changes` replies: it follows the database's
 * state (a digest of its info), not the query, so any write moves it.
 */
export function dbStateEtag(db: Database): string {
  return `"${createHash('md5').update(`${db.instanceStartTime}:${db.updateSeq}:${db.purgeSeq}`).digest('hex')}"`;
}

/** If-None-Match lists the given ETag (CouchDB splits the header on commas and spaces). */
export function etagMatches(req: Request, etag: string): boolean {
  const header = req.header('if-none-match');
  // A weak validator (W/"...") names the same ETag, as CouchDB 2 reads it.
  return header !== undefined && header.split(/[, ]+/).some((tag) => (tag.startsWith('W/') ? tag.slice(2) : tag) === etag);
}

/**
 * A revision a request gives (a query parameter, a header, a member of a body) as CouchDB reads
 * it (couch_doc:parse_rev): in its canonical form, so `1-ABC…` names `1-abc…`; a 400 when it
 * does not parse.
 */
export function givenRev(text: string): string;
export function givenRev(text: string | undefined): string | undefined;
export function givenRev(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const rev = canonicalRev(text);
  if (rev === undefined) throw badRequest('Invalid rev format');
  return rev;
}

/** The revision named by `If-Match` (quotes stripped). */
function ifMatchRev(req: Request): string | undefined {
  const value = req.header('if-match');
  return value === undefined ? undefined : value.replace(/^"|"$/g, '');
}

/**
 * The revision a request names by `?rev=` or `If-Match`, which must agree
 * (couch_httpd_db:extract_header_rev): an attachment edit's, or the source of a COPY.
 */
export function requestRev(req: Request): string | undefined {
  const queryRev = givenRev(req.string('rev'));
  const etagRev = givenRev(ifMatchRev(req));
  if (queryRev !== undefined && etagRev !== undefined && queryRev !== etagRev) {
    throw badRequest('Document rev and etag have different values');
  }
  return queryRev ?? etagRev;
}

/**
 * Every write of documents goes through here, as the request's user. The auth engine first
 * refuses what the user may not write (design documents, the users database's rules) and
 * hashes user passwords. Attachment content (inline `data`, or `follows` parts that `follow`
 * streams) is stored next; then validate_doc_update runs (nothing to do, and no cost, in
 * databases without validators) and the documents that pass are edited. A refused or rejected
 * document gets its error as its result; with all_or_nothing nothing is written then. Uploads
 * are released once the edit is done.
 */
export async function editDocs(
  req: Request,
  svc: Services,
  db: Database,
  docs: IncomingDoc[],
  options: EditOptions,
  follow?: (name: string) => AsyncIterable<Buffer>,
): Promise<EditResult[]> {
  // One write per request, as couch_db:update_docs counts, whatever the number of documents.
  countWrite(svc, db);
  const refusals = withDesignRefusals(await svc.auth.screenWrites(db, docs, req.userCtx, options), docs);
  const accepted = refusals ? docs.filter((_, i) => refusals[i] === undefined) : docs;
  const uploads: { release(): void }[] = [];
  let results: EditResult[];
  try {
    for (const doc of accepted) if (doc.attachments) uploads.push(...(await db.prepareAttachments(doc, follow)));
    // With all_or_nothing a refused document stops the others too, but every document is still
    // validated: CouchDB's 417 lists each one that failed.
    results = accepted.length > 0
      ? await applyVerdicts(db, accepted, await validateWrites(svc.design, db, accepted, options, req.userCtx), options, refusals !== undefined)
      : [];
  } finally {
    for (const upload of uploads) upload.release();
  }
  if (!refusals) return results;
  let next = 0;
  return docs.map((doc, i) => {
    const refusal = refusals[i];
    return refusal ? { id: doc.id!, ok: false, error: refusal.error, reason: refusal.reason, status: refusal.status } : results[next++]!;
  });
}

/** The write refusals with those of design documents whose shape their language refuses (Mango's `query`). */
function withDesignRefusals(refusals: (CouchError | undefined)[] | undefined, docs: readonly IncomingDoc[]): (CouchError | undefined)[] | undefined {
  let out = refusals;
  docs.forEach((doc, i) => {
    if (out?.[i] || doc.deleted || !doc.id?.startsWith('_design/')) return;
    const problem = queryDesignDocProblem(doc.body);
    if (problem) (out ??= new Array<CouchError | undefined>(docs.length).fill(undefined))[i] = new CouchError(400, 'invalid_design_doc', problem);
  });
  return out;
}

/**
 * Edits the documents that passed validation; the rejected ones get their error. With
 * all_or_nothing nothing is edited when any document was rejected, here or before (`othersRefused`).
 */
function applyVerdicts(db: Database, docs: IncomingDoc[], verdicts: Verdicts | undefined, options: EditOptions, othersRefused: boolean): Promise<EditResult[]> {
  const unwritten = (doc: IncomingDoc): EditResult => ({ id: doc.id ?? '', ok: true, rev: '', changed: false });
  if (!verdicts) return options.allOrNothing && othersRefused ? Promise.resolve(docs.map(unwritten)) : db.edit(docs, options);
  const rejected = (i: number): EditResult => {
    const e = verdicts[i]!;
    return { id: docs[i]!.id ?? '', ok: false, error: e.error, reason: e.reason, status: e.status };
  };
  if (options.allOrNothing) return Promise.resolve(docs.map((doc, i) => (verdicts[i] ? rejected(i) : unwritten(doc))));
  const passing = docs.filter((_, i) => !verdicts[i]);
  const edited = passing.length > 0 ? db.edit(passing, options) : Promise.resolve([]);
  return edited.then((results) => {
    let next = 0;
    return docs.map((_, i) => (verdicts[i] ? rejected(i) : results[next++]!));
  });
}

/**
 * A JSON result streamed as CouchDB writes it: `head`, then rows separated by ",\r\n", then
 * `tail`. Each chunk of `rows` holds one or more rows already joined (empty chunks are skipped);
 * output is coalesced into writes of a useful size: fewer syscalls, still bounded memory.
 */
export async function* rowsEnvelope(head: string, rows: AsyncIterable<string>, tail: string): AsyncIterable<string> {
  let out = head;
  let first = true;
  for await (const chunk of rows) {
    if (chunk === '') continue;
    out += first ? chunk : `,\r\n${chunk}`;
    first = false;
    if (out.length >= 16384) {
      yield out;
      out = '';
    }
  }
  yield `${out}${first ? '' : '\r\n'}${tail}`;
}
