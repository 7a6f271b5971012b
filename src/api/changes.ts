/**
 * `_changes` in all its feeds: normal, longpoll, continuous and eventsource. Live feeds wait on
 * the database's update notification (no polling), so idle feeds cost a listener each.
 */
import { badRequest, notFound, queryParseError, toCouchError } from '../errors.js';
import { designFilter, judgedDocuments } from '../design/filter.js';
import { designMember } from '../design/service.js';
import { changesSelector, selectorFilter } from '../mango/changes-filter.js';
import type { JsonObject, Selector } from '../mango/selector.js';
import { requestJson } from './design-request.js';
import type { ChangeRow, Database } from '../core/database.js';
import { revsInfo, type RevTree } from '../core/revtree.js';
import { endedByNewline, raw, stream, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import { parseJson, viewedDocJson, type DocView, type Request } from './request.js';
import type { Services } from './services.js';
import { dbStateEtag, etagMatches, openDb } from './common.js';
import { HTTPD_SECTIONS } from '../couchdb-names.js';

export const changesRoutes: Route[] = [
  {
    shape: 'dbHandler', name: '_changes',
    methods: {
      GET: (req, p, svc) => changes(req, p, svc, undefined),
      POST: async (req, p, svc) => {
        // As couch_httpd_db: a POST says its body is JSON.
        req.requireJsonContentType();
        const body = await req.jsonBody(1 << 26);
        return changes(req, p, svc, body !== null && typeof body === 'object' && !Array.isArray(body) ? body as JsonObject : {});
      },
    },
  },
];

type Feed = 'normal' | 'longpoll' | 'continuous' | 'eventsource';

interface ChangesQuery {
  feed: Feed;
  /** Whether the answer carries the database-state ETag (a feed named `normal` only). */
  etag: boolean;
  since: number;
  limit: number;
  descending: boolean;
  includeDocs: boolean;
  conflicts: boolean;
  /** Embed attachment data / encoding info in included documents. */
  attachments: boolean;
  attEncodingInfo: boolean;
  allLeaves: boolean;
  /** ms; 0 = no heartbeat. */
  heartbeat: number;
  /** ms until an idle live feed ends. */
  timeout: number;
  filter: ((row: ChangeRow) => boolean) | undefined;
  /** `filter=_view`: the view whose map function decides. */
  viewFilter: { ddocId: string; view: string } | undefined;
  /** `filter=ddoc/name`: a filter function of a design document. */
  designFilter: { ddocId: string; name: string } | undefined;
  /** `filter=_selector`: the Mango selector of the POST body. */
  selector: Selector | undefined;
  /** How the caller may see embedded documents (Request.docView). */
  docView: DocView | undefined;
  /**
   * Filters that run code (the view's map, filter functions, selectors) work a chunk of rows at
   * a time; each row's `rev` (with its `deleted`) is the revision judged.
   */
  batchFilter: ((rows: ChangeRow[]) => Promise<ChangeRow[]>) | undefined;
  docIds: string[] | undefined;
}

/** `body`: a POST's JSON body (undefined for a GET). */
function parseQuery(req: Request, db: Database, svc: Services, body: JsonObject | undefined): ChangesQuery {
  // `live` is CouchDB's other name for `continuous`.
  const feedGiven = req.string('feed') ?? 'normal';
  const feedParam = feedGiven === 'live' ? 'continuous' : feedGiven;
  // Any other name is a normal feed, as couch_changes:handle_changes runs it, but without the
  // ETag couch_httpd_db gives only a feed named `normal`.
  const feed: Feed = (['normal', 'longpoll', 'continuous', 'eventsource'] as const).find((f) => f === feedParam) ?? 'normal';
  // The header is a browser's EventSource reconnecting: CouchDB honours it for that feed only.
  const lastEventId = (feed === 'eventsource' ? req.header('last-event-id') : undefined) ?? req.string('last-event-id');
  const sinceParam = lastEventId ?? req.string('since') ?? '0';
  let since: number;
  if (sinceParam === 'now') since = db.updateSeq;
  // A negative sequence is before the first: everything (couch_httpd_db takes any integer).
  else if (/^-?\d+$/.test(sinceParam)) since = Math.max(0, Number(sinceParam));
  else {
    // CouchDB 2 style opaque sequences start with the number.
    const m = /^(\d+)-/.exec(sinceParam);
    if (!m) throw badRequest(`since must be an integer or "now", not ${JSON.stringify(sinceParam)}`);
    since = Number(m[1]);
  }
  const limitParam = req.int('limit');
  if (limitParam !== undefined && limitParam < 0) throw queryParseError('limit must be a non-negative integer');
  // As couch_changes:get_changes_timeout: httpd/changes_timeout caps both intervals; with a
  // heartbeat the feed never times out (each idle interval sends a heartbeat instead).
  const maxTimeout = svc.config.layered(HTTPD_SECTIONS).getInt('changes_timeout', 60000);
  const heartbeatParam = req.string('heartbeat');
  let heartbeat = 0;
  if (heartbeatParam !== undefined && heartbeatParam !== 'false') {
    heartbeat = heartbeatParam === 'true' ? maxTimeout : heartbeatMs(heartbeatParam);
    heartbeat = Math.max(Math.min(heartbeat, maxTimeout), 100);
  }
  const timeoutParam = req.int('timeout');
  const timeout = heartbeat > 0 ? Infinity
    : timeoutParam !== undefined ? Math.min(Math.max(0, timeoutParam), maxTimeout) : maxTimeout;

  const filterName = req.string('filter');
  let filter: ((row: ChangeRow) => boolean) | undefined;
  let viewFilter: { ddocId: string; view: string } | undefined;
  let docIds: string[] | undefined;
  let designFilterName: { ddocId: string; name: string } | undefined;
  let selector: Selector | undefined;
  if (filterName === '_doc_ids') {
    // A query string's ids that are no JSON are couch_httpd's bad_request invalid_json (its
    // ?JSON_DECODE throws invalid_json), not a view parameter's query_parse_error.
    const given = req.string('doc_ids');
    const ids = body?.['doc_ids'] ?? (given === undefined ? undefined : parseJson(given));
    if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) {
      throw badRequest('`doc_ids` filter parameter is not a list.');
    }
    docIds = [...new Set(ids as string[])];
    const set = new Set(docIds);
    filter = (row) => set.has(row.id);
  } else if (filterName === '_design') {
    filter = (row) => row.id.startsWith('_design/');
  } else if (filterName === '_selector') {
    selector = changesSelector(body);
  } else if (filterName === '_view') {
    const viewParam = req.string('view');
    if (!viewParam) throw badRequest('`view` filter parameter is not provided.');
    const [ddocName, viewName] = viewParam.split('/');
    if (!ddocName || !viewName) throw badRequest('`view` must be of the form `designname/viewname`');
    viewFilter = { ddocId: `_design/${ddocName}`, view: viewName };
  } else if (filterName?.startsWith('_')) {
    throw badRequest('unknown builtin filter name');
  } else if (filterName !== undefined) {
    const parts = filterName.split('/').filter((part) => part !== '');
    // A name of no parts (`filter=`, `filter=/`) filters nothing, as couch_changes:make_filter_fun
    // reads the tokens of "" (the default filter) or "/".
    if (parts.length !== 0 && parts.length !== 2) {
      throw badRequest('filter parameter must be of the form `designname/filtername`');
    }
    if (parts.length === 2) designFilterName = { ddocId: `_design/${parts[0]}`, name: parts[1]! };
  }

  // A live feed asked to go backwards starts at the current sequence and goes forward, as
  // couch_changes runs it (it waits for what comes next).
  const descending = req.flag('descending');
  const backwardsLive = descending && feed !== 'normal';
  return {
    feed,
    etag: feedParam === 'normal',
    since: backwardsLive ? db.updateSeq : since,
    limit: limitParam === undefined ? Infinity : Math.max(1, limitParam),
    descending: descending && !backwardsLive,
    includeDocs: req.flag('include_docs'),
    conflicts: req.flag('conflicts'),
    attachments: req.flag('attachments'),
    attEncodingInfo: req.flag('att_encoding_info'),
    docView: req.docView,
    allLeaves: (req.string('style') ?? 'main_only') === 'all_docs',
    heartbeat,
    timeout,
    filter,
    viewFilter,
    designFilter: designFilterName,
    selector,
    batchFilter: undefined,
    docIds,
  };
}

/** A heartbeat interval in ms, with CouchDB's reasons for one that is not a positive integer. */
function heartbeatMs(value: string): number {
  if (!/^[+-]?\d+$/.test(value)) throw badRequest('Invalid heartbeat value. Expecting a positive integer value (in milliseconds).');
  const ms = Number(value);
  if (ms <= 0) throw badRequest('The heartbeat value should be a positive integer (in milliseconds).');
  return ms;
}

async function changes(req: Request, p: RouteParams, svc: Services, body: JsonObject | undefined): Promise<Reply> {
  const db = await openDb(svc, p.db, req);
  const q = parseQuery(req, db, svc, body);
  if (q.selector) q.batchFilter = selectorFilter(db, q.selector);
  if (q.viewFilter) q.batchFilter = await viewBatchFilter(svc, db, q.viewFilter);
  if (q.designFilter) {
    q.batchFilter = await designFilter(svc.design, db, q.designFilter.ddocId, q.designFilter.name, await requestJson(req, svc, db, null));
  }
  if (q.feed === 'normal') {
    const etag = q.etag ? dbStateEtag(db) : undefined;
    if (etag !== undefined && etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
    const feed = normalFeed(db, q);
    return endedByNewline(stream(200, q.batchFilter ? await failingClearly(feed, q.feed) : feed, etag === undefined ? {} : { ETag: etag }), req.signal);
  }
  const feed = liveFeed(svc, db, q, req.signal);
  const live = q.batchFilter ? await failingClearly(feed, q.feed) : feed;
  if (q.feed === 'eventsource') return endedByNewline(stream(200, live, { 'Cache-Control': 'no-cache' }, 'text/event-stream'), req.signal);
  return endedByNewline(stream(200, live), req.signal);
}

/**
 * A feed whose filter runs code can fail part way (a function throwing on some document). The
 * normal feed is started before the headers go, so an early failure is a plain error response;
 * a later one (or one in a live feed) ends the feed with a last `{"error", "reason"}` line
 * rather than a dropped connection.
 */
async function failingClearly(feed: AsyncIterable<string>, kind: Feed): Promise<AsyncIterable<string>> {
  const it = feed[Symbol.asyncIterator]();
  const first = kind === 'normal' ? await it.next() : undefined;
  return (async function* () {
    try {
      if (first) {
        if (first.done) return;
        yield first.value;
      }
      for (;;) {
        const next = await it.next();
        if (next.done) return;
        yield next.value;
      }
    } catch (err) {
      const e = toCouchError(err);
      const line = JSON.stringify({ error: e.error, reason: e.reason });
      yield kind === 'eventsource' ? `event: error\ndata: ${line}\n\n` : `\n${line}\n`;
    } finally {
      await it.return?.();
    }
  })();
}

/** Longpoll, continuous and eventsource; the deletion listener lives only while the feed runs. */
async function* liveFeed(svc: Services, db: Database, q: ChangesQuery, client: AbortSignal): AsyncIterable<string> {
  const life = follow(svc, db, client);
  const release = db.retain();
  svc.stats.collector.clientsRequestingChanges++;
  try {
    yield* q.feed === 'longpoll' ? longpollFeed(db, q, life) : continuousFeed(db, q, life, q.feed === 'eventsource');
  } finally {
    svc.stats.collector.clientsRequestingChanges--;
    release();
    life.dispose();
  }
}

/**
 * What ends a live feed besides its own timeout and limit: the client going away (`client`), or
 * the database being deleted (`stop` fires too). CouchDB's feed wakes on the deletion, fails to
 * reopen the database and ends as on a timeout.
 */
interface FeedLife {
  client: AbortSignal;
  /** Aborted when the client goes or the database is deleted. */
  stop: AbortSignal;
  dispose: () => void;
}

function follow(svc: Services, db: Database, client: AbortSignal): FeedLife {
  const deleted = new AbortController();
  const off = svc.dbs.onEvent((name, type) => {
    if (name === db.name && type === 'deleted') deleted.abort();
  });
  return { client, stop: AbortSignal.any([client, deleted.signal]), dispose: off };
}

/**
 * Waits up to `ms` for a sequence past `since`. 'closed' when the Database answered "no" before
 * the wait was over without being aborted: it was closed under the feed (deleted or evicted), and
 * waiting on it again would return at once, forever.
 */
async function waitForChange(db: Database, since: number, ms: number, stop: AbortSignal): Promise<'changed' | 'idle' | 'closed'> {
  const started = Date.now();
  if (await db.waitForUpdate(since, ms, stop)) return 'changed';
  // Timers may fire a millisecond early; a closed database answers at once.
  if (!stop.aborted && Date.now() - started + 2 < ms) return 'closed';
  return 'idle';
}

/** A change as the feed lists it: `revs`, when set, are the revisions it names instead of its leaves. */
interface FeedRow extends ChangeRow {
  revs?: readonly string[];
}

/**
 * Rows after `since` that pass the filter, up to `limit`, in chunks; `out.end` is the last
 * sequence looked at. A chunk may be empty (changes looked at, none passed): live feeds take it
 * as a moment to see whether a heartbeat is due.
 */
async function* rowsSince(db: Database, q: ChangesQuery, since: number, limit: number, out: { end: number }): AsyncIterable<FeedRow[]> {
  out.end = q.descending ? since : Math.max(since, db.updateSeq);
  if (limit <= 0) return;
  let count = 0;
  if (q.docIds && !q.descending && q.docIds.length <= 100) {
    // A few ids: look them up instead of scanning the whole sequence index. The lookups see the
    // database as it is at each; the answer is the database as of `seen` (later writes are the
    // next request's), so no write between two lookups is skipped.
    const seen = db.updateSeq;
    const found: ChangeRow[] = [];
    for (const id of q.docIds) {
      const info = await db.docInfo(id);
      if (!info || info.seq <= since) continue;
      if (info.seq > seen) continue;
      for await (const rows of db.changes(info.seq - 1, { limit: 1 })) {
        for (const row of rows) if (row.id === id) found.push(row);
      }
    }
    found.sort((a, b) => a.seq - b.seq);
    const chosen = found.slice(0, limit);
    if (chosen.length > 0) out.end = chosen[chosen.length - 1]!.seq;
    yield chosen;
    if (found.length <= limit) out.end = Math.max(since, seen);
    return;
  }
  for await (const rows of db.changes(since, { descending: q.descending })) {
    const candidates = q.filter ? rows.filter(q.filter) : rows;
    const kept = q.batchFilter ? await passingRows(db, q.batchFilter, candidates, q.allLeaves) : new Map(candidates.map((row) => [row, row]));
    const passed: FeedRow[] = [];
    for (const row of rows) {
      out.end = row.seq;
      const listed = kept.get(row);
      if (!listed) continue;
      passed.push(listed);
      if (++count >= limit) break;
    }
    yield passed;
    if (count >= limit) return;
  }
  if (!q.descending) out.end = Math.max(out.end, since);
}

/**
 * The rows a filter that runs code passes, each as the feed lists it. With style=all_docs every
 * leaf of a change is judged on its own, as couch_changes judges one doc_info per leaf (its
 * other leaves unknown to it, so no `_conflicts`), and the change lists the leaves that pass,
 * or is left out when none does; otherwise its winner decides for the change.
 */
async function passingRows(db: Database, filter: (rows: ChangeRow[]) => Promise<ChangeRow[]>, rows: ChangeRow[], allLeaves: boolean): Promise<Map<ChangeRow, FeedRow>> {
  const conflicted = allLeaves ? rows.filter((row) => row.others.length > 0) : [];
  if (conflicted.length === 0) return new Map((await filter(rows)).map((row) => [row, row]));
  const infos = await db.docInfos(conflicted.map((row) => row.id));
  const leavesOf = new Map<ChangeRow, ChangeRow[]>();
  conflicted.forEach((row, i) => {
    const tree = infos[i]?.tree;
    // A leaf the document no longer has (purged meanwhile) is not judged, as CouchDB cannot open it.
    const deletedOf = (rev: string): boolean | undefined => (rev === row.rev ? row.deleted : tree && isDeletion(tree, rev));
    leavesOf.set(row, [row.rev, ...row.others].flatMap((rev) => {
      const deleted = deletedOf(rev);
      return deleted === undefined ? [] : [{ seq: row.seq, id: row.id, rev, deleted, others: [] }];
    }));
  });
  const judgedRows = rows.flatMap((row) => leavesOf.get(row) ?? [row]);
  const passes = new Set(await filter(judgedRows));
  const out = new Map<ChangeRow, FeedRow>();
  for (const row of rows) {
    const leaves = leavesOf.get(row);
    if (!leaves) {
      if (passes.has(row)) out.set(row, row);
      continue;
    }
    const revs = leaves.filter((leaf) => passes.has(leaf)).map((leaf) => leaf.rev);
    if (revs.length > 0) out.set(row, revs.length === row.others.length + 1 ? row : { ...row, revs });
  }
  return out;
}

/** Whether revision `rev` of a tree is a deletion; undefined when the tree lacks it. */
function isDeletion(tree: RevTree, rev: string): boolean | undefined {
  const status = revsInfo(tree, rev)?.[0]?.status;
  return status === undefined ? undefined : status === 'deleted';
}

/**
 * `filter=_view`: a change passes when the view's map function emits at least one row for its
 * document (run directly, not through the index; design documents are mapped too), the document
 * as a filter function gets it (couch_changes:filter_view opens and renders it so).
 */
async function viewBatchFilter(svc: Services, db: Database, target: { ddocId: string; view: string }): Promise<(rows: ChangeRow[]) => Promise<ChangeRow[]>> {
  const view = await svc.views.open(db, target.ddocId);
  designMember(view.ddoc, ['views', target.view]);
  if (view.index.viewNumber(target.view) < 0) throw notFound('missing_named_view');
  // Deletions too: couch_changes hands the map the tombstone, which passes if the map emits for it.
  return async (rows) => {
    const { present, texts } = await judgedDocuments(db, rows);
    if (present.length === 0) return [];
    const program = await view.program();
    const slot = program.names.indexOf(target.view);
    const emitted = await program.mapJson(texts);
    return present.filter((_, i) => (emitted[i]![slot]?.length ?? 0) > 0);
  };
}

/** Each row as its JSON line (without separators), documents embedded when asked. */
async function renderRows(db: Database, q: ChangesQuery, rows: FeedRow[]): Promise<string[]> {
  let docs: (string | undefined)[] | undefined;
  if (q.includeDocs) {
    if (q.conflicts || q.attachments || q.attEncodingInfo) {
      docs = await Promise.all(rows.map(async (row) => {
        const info = await db.docInfo(row.id);
        const options = { conflicts: q.conflicts, attachments: q.attachments, attEncodingInfo: q.attEncodingInfo };
        return info ? (await db.renderRevision(info, row.rev, options))?.json : undefined;
      }));
    } else {
      docs = (await db.renderKnownMany(rows)).map((d) => d?.json);
    }
    if (q.docView) docs = docs.map((json) => (json === undefined ? undefined : viewedDocJson(q.docView, json)));
  }
  return rows.map((row, i) => {
    const revs = row.revs ?? (q.allLeaves && row.others.length > 0 ? [row.rev, ...row.others] : [row.rev]);
    let text = `{"seq":${row.seq},"id":${JSON.stringify(row.id)},"changes":[${revs.map((r) => `{"rev":"${r}"}`).join(',')}]`;
    if (row.deleted) text += ',"deleted":true';
    if (docs) text += `,"doc":${docs[i] ?? 'null'}`;
    return `${text}}`;
  });
}

/**
 * When a live feed last sent something, for its heartbeats. As couch_changes:maybe_heartbeat, a
 * heartbeat is due not only after an idle interval but also when changes the filter rejects are
 * looked at a whole interval after the last thing sent: changes that keep waking a filtered feed
 * must not silence it (a replicator hearing nothing gives the connection up).
 */
class HeartbeatClock {
  private last = Date.now();

  /** `interval` in ms; 0 for a feed without heartbeats. */
  constructor(private readonly interval: number) {}

  /** Something (a change, a heartbeat) just went out. */
  sent(): void {
    this.last = Date.now();
  }

  /** Whether a heartbeat should go out now, between changes. */
  due(): boolean {
    return this.interval > 0 && Date.now() - this.last >= this.interval;
  }
}

async function* normalFeed(db: Database, q: ChangesQuery): AsyncIterable<string> {
  const out = { end: q.since };
  let buffered = '{"results":[\n';
  let first = true;
  for await (const rows of rowsSince(db, q, q.since, q.limit, out)) {
    if (rows.length === 0) continue;
    const lines = await renderRows(db, q, rows);
    buffered += (first ? '' : ',\n') + lines.join(',\n');
    first = false;
    if (buffered.length >= 16384) {
      yield buffered;
      buffered = '';
    }
  }
  yield `${buffered}\n],\n"last_seq":${out.end}}\n`;
}

/**
 * As CouchDB's: the opening `{"results":[` goes out once the first look found nothing (so a
 * failure there is still an error status), heartbeat newlines follow it while the feed waits.
 */
async function* longpollFeed(db: Database, q: ChangesQuery, life: FeedLife): AsyncIterable<string> {
  const heartbeat = new HeartbeatClock(q.heartbeat);
  let since = q.since;
  let opened = false;
  for (;;) {
    const out = { end: since };
    const rows: string[] = [];
    for await (const chunk of rowsSince(db, q, since, q.limit, out)) {
      if (chunk.length > 0) rows.push(...(await renderRows(db, q, chunk)));
      else if (rows.length === 0 && heartbeat.due()) {
        yield opened ? '\n' : '{"results":[\n\n';
        opened = true;
        heartbeat.sent();
      }
    }
    // As couch_changes:keep_sending_changes, `timeout` is waited afresh after every look: the
    // feed ends once that long passes without an update, whether the filter passed any or not.
    const deadline = Date.now() + q.timeout;
    let ended = rows.length > 0 || life.stop.aborted || q.timeout <= 0;
    since = out.end;
    if (!ended && !opened) {
      opened = true;
      yield '{"results":[\n';
    }
    // Wait for a change, sending heartbeat newlines meanwhile.
    while (!ended) {
      const wait = Math.min(deadline - Date.now(), q.heartbeat > 0 ? q.heartbeat : Infinity);
      const result = await waitForChange(db, since, wait, life.stop);
      if (result === 'changed') break;
      if (result === 'closed' || life.stop.aborted || Date.now() >= deadline) ended = true;
      else if (q.heartbeat > 0) {
        // (Without heartbeats a wait ends early only when its timer fires a moment before the
        // deadline: the loop then waits out the rest.)
        yield '\n';
        heartbeat.sent();
      }
    }
    if (life.client.aborted) return;
    if (ended) {
      yield `${opened ? '' : '{"results":[\n'}${rows.join(',\n')}\n],\n"last_seq":${since}}\n`;
      return;
    }
  }
}

async function* continuousFeed(db: Database, q: ChangesQuery, life: FeedLife, eventSource: boolean): AsyncIterable<string> {
  let since = q.since;
  let remaining = q.limit;
  const heartbeat = new HeartbeatClock(q.heartbeat);
  const heartbeatText = eventSource ? 'event: heartbeat\ndata: \n\n' : '\n';
  for (;;) {
    const out = { end: since };
    let sent = 0;
    for await (const chunk of rowsSince(db, q, since, remaining, out)) {
      if (chunk.length === 0) {
        if (heartbeat.due()) {
          yield heartbeatText;
          heartbeat.sent();
        }
        continue;
      }
      const lines = await renderRows(db, q, chunk);
      yield lines.map((line, i) => (eventSource ? `data: ${line}\nid: ${chunk[i]!.seq}\n\n` : `${line}\n`)).join('');
      heartbeat.sent();
      sent += chunk.length;
    }
    since = out.end;
    remaining -= sent;
    // Waited afresh after every look, as for longpoll.
    const deadline = Date.now() + q.timeout;
    if (remaining <= 0 || q.descending) break;
    let ended = false;
    for (;;) {
      if (life.stop.aborted) { ended = true; break; }
      const left = deadline - Date.now();
      if (left <= 0) { ended = true; break; }
      const result = await waitForChange(db, since, Math.min(left, q.heartbeat > 0 ? q.heartbeat : left), life.stop);
      if (result === 'changed') break;
      if (result === 'closed') { ended = true; break; }
      if (q.heartbeat > 0 && !life.stop.aborted && Date.now() < deadline) {
        yield heartbeatText;
        heartbeat.sent();
      }
    }
    if (ended) break;
  }
  if (life.client.aborted) return;
  if (!eventSource) yield `{"last_seq":${since}}\n`;
}
