/**
 * `_list`: GET/POST `/{db}/_design/{ddoc}/_list/{list}/{view}` and
 * `.../_list/{list}/{other ddoc}/{view}` run `lists.<list>(head, req)` over a view query (its
 * parameters pass through; POST may carry `{"keys": [...]}`), and `.../_list/{list}/_all_docs`
 * over `_all_docs` (CouchDB 2).
 *
 * Streaming: rows go to the sandbox in batches as the function's getRow() asks for them, and
 * what it send()s goes to the client as it comes; the next batch of rows is fetched only once
 * the client has taken the output so far, so a slow client holds the function back and a list
 * over millions of rows holds only a batch in memory. The status and headers are the function's
 * start() (or its return value's), known at its first getRow(). An error before that is an
 * ordinary error response; after it, the body ends with the error's JSON.
 *
 * The ETag is the view answer's, with the list's design document revision, the Accept header, the
 * user (CouchDB 1.6's handle_view_list) and the URL; If-None-Match on it is a 304 before the list
 * runs.
 */
import { createHash } from 'node:crypto';
import { CouchError, toCouchError } from '../errors.js';
import { responseHead } from '../design/response.js';
import type { RenderResponse } from '../js/design-function.js';
import { raw, stream, type Reply } from './reply.js';
import type { Route, RouteParams } from './route.js';
import type { Request } from './request.js';
import type { Services } from './services.js';
import { bodyKeys, etagMatches, openDb, quote, readObject } from './common.js';
import { requestJson } from './design-request.js';
import { queryView } from './views.js';
import { queryAllDocs } from './all-docs.js';

export const listRoutes: Route[] = [
  {
    shape: 'designHandler', name: '_list', allow: 'GET,POST,HEAD',
    methods: {
      GET: (req, p, svc) => list(req, p, svc, undefined),
      // CouchDB 2 runs a list for OPTIONS too (as for GET).
      OPTIONS: (req, p, svc) => list(req, p, svc, undefined),
      POST: async (req, p, svc) => {
        const body = await readObject(req, svc);
        return list(req, p, svc, bodyKeys(body));
      },
    },
  },
];

/** Rows handed to the sandbox per getRow() round trip: at most this many, or this many bytes. */
const ROWS_PER_BATCH = 1000;
const BYTES_PER_BATCH = 256 * 1024;

async function list(req: Request, p: RouteParams, svc: Services, bodyKeys: unknown[] | undefined): Promise<Reply> {
  const [listName, ...viewPath] = p.rest;
  if (listName === undefined || viewPath.length === 0 || viewPath.length > 2) throw new CouchError(404, 'list_error', 'Bad path.');
  const db = await openDb(svc, p.db, req);
  const ddoc = await svc.design.designDoc(db, p.docId);
  const viewDdocId = viewPath.length === 2 ? `_design/${viewPath[0]}` : p.docId;
  const viewName = viewPath[viewPath.length - 1]!;
  // `_list/{list}/_all_docs` lists the documents, as CouchDB 2 allows.
  const result = viewPath.length === 1 && viewName === '_all_docs'
    ? await queryAllDocs(req, db, bodyKeys, undefined, true)
    : await queryView(req, svc, db, await svc.views.open(db, viewDdocId), viewName, bodyKeys);
  // The URL too: the list and the parameters only it reads (req.query) shape the answer as well.
  const etag = quote(createHash('md5')
    .update(JSON.stringify([result.etag, ddoc.rev, req.header('accept') ?? '', req.userCtx.name, req.userCtx.roles, req.url]))
    .digest('hex'));
  if (etagMatches(req, etag)) return raw(304, '', 'application/json', { ETag: etag });
  // The function is looked up only now: CouchDB's query server is first asked for it when the
  // view's fold starts the list (couch_mrview_show:start_list_resp), so the query's parameters,
  // the view and the ETag are all checked before a missing list is a 404.
  const fn = await svc.design.function(db, ddoc, 'lists', listName);
  const reqJson = await requestJson(req, svc, db, null);

  const pipe = new OutputPipe();
  const rows = result.rows[Symbol.asyncIterator]();
  // However the exchange ends (read to the end, client gone, HEAD, error), the function stops
  // waiting on it and the view's snapshot is let go.
  req.onFinish(() => {
    pipe.close();
    void rows.return?.();
  });
  let rowsDone = false;
  // The response head: the function's start() at its first output, or its end; a failure before that is an error reply.
  let announce!: (start: RenderResponse) => void;
  let abort!: (err: unknown) => void;
  const head = new Promise<RenderResponse>((resolve, reject) => { announce = resolve; abort = reject; });
  const run = fn.list(JSON.stringify(result.head), reqJson, {
    output: async (chunk) => {
      if (chunk.start) announce(chunk.start);
      pipe.push(chunk.chunks);
      await pipe.taken();
    },
    rows: async () => {
      if (rowsDone || pipe.closed) return '[]';
      const batch: string[] = [];
      let bytes = 0;
      while (batch.length < ROWS_PER_BATCH && bytes < BYTES_PER_BATCH) {
        const next = await rows.next();
        if (next.done) {
          rowsDone = true;
          break;
        }
        batch.push(next.value);
        bytes += next.value.length;
      }
      return `[${batch.join(',')}]`;
    },
  });
  run.then(
    (last) => {
      announce(last.start ?? {});
      pipe.push(last.chunks);
      pipe.end();
    },
    (err: unknown) => {
      abort(err); // no effect once the head is out: the error then ends the body
      pipe.fail(err);
    },
  );
  let start: RenderResponse;
  try {
    start = await head;
  } catch (err) {
    throw toCouchError(err);
  }
  // CouchDB's default for a list's response is JSON (couch_httpd_external).
  const { status, headers, contentType } = responseHead(start, 'application/json');
  const body = (async function* () {
    try {
      yield* pipe.read();
    } finally {
      pipe.close();
      void rows.return?.();
    }
  })();
  // The ETag is ours whatever the function set: its own could not be checked without running it.
  // `Vary: Accept` too, as a show's (couch_mrview_show:apply_etag).
  for (const name of Object.keys(headers)) if (['etag', 'vary'].includes(name.toLowerCase())) delete headers[name];
  return stream(status, body, { ...headers, ETag: etag, Vary: 'Accept' }, contentType);
}

/**
 * Output of the list function on its way to the client: chunks are queued as the function sends
 * them and read by the HTTP layer (which waits for the socket to drain); `taken()` resolves once
 * the reader has taken everything queued.
 */
class OutputPipe {
  private queue: string[] = [];
  private wake: (() => void) | undefined;
  private takers: (() => void)[] = [];
  private ended = false;
  error: unknown;
  closed = false;

  push(chunks: readonly string[]): void {
    for (const c of chunks) if (c !== '') this.queue.push(c);
    this.signal();
  }

  end(): void {
    this.ended = true;
    this.signal();
  }

  fail(err: unknown): void {
    this.error ??= err;
    this.ended = true;
    this.signal();
  }

  /** The reader is gone (client closed): producers stop waiting. */
  close(): void {
    this.closed = true;
    this.queue = [];
    this.release();
  }

  taken(): Promise<void> {
    if (this.closed || this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.takers.push(resolve));
  }

  async *read(): AsyncIterable<string> {
    for (;;) {
      if (this.queue.length > 0) {
        // Coalesce what is queued into one write.
        const out = this.queue.join('');
        this.queue = [];
        this.release();
        yield out;
        continue;
      }
      if (this.ended) {
        if (this.error !== undefined) {
          const e = toCouchError(this.error);
          // As couch_httpd:send_chunked_error ends a body already under way.
          yield `\n${JSON.stringify({ code: e.status, error: e.error, reason: e.reason })}\n`;
        }
        return;
      }
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private release(): void {
    const takers = this.takers;
    this.takers = [];
    for (const t of takers) t();
  }
}
