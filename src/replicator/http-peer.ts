/**
 * A replication peer over HTTP: CouchDB's replication protocol as requests to one database URL,
 * through a keep-alive agent of at most `http_connections` sockets. Transient failures (the
 * peer unreachable, a reset connection, a 5xx, a timeout) are retried with exponential backoff;
 * the error finally thrown never carries credentials.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { CouchError } from '../errors.js';
import { stripCredentials } from './endpoint.js';
import {
  unauthorizedPeer,
  type AttachmentContent, type ChangesBatch, type ChangesRequest, type DocJson, type MissingRevs, type PeerInfo, type ReplicationPeer,
  type RevsDiff, type WriteFailure,
} from './peer.js';
import { sleep } from './sleep.js';
import type { PeerTlsOptions } from './peer-tls.js';

export interface HttpPeerOptions {
  /** The database URL, no credentials, ending in `/`. */
  url: string;
  headers: Record<string, string>;
  /** Printable form of the endpoint. */
  display: string;
  maxSessions: number;
  /** For an `https:` URL: certificate checks and a client certificate (`[replicator]`). */
  tls?: PeerTlsOptions;
  /** Milliseconds a request may stay silent before it counts as failed. */
  timeoutMs: number;
  retries: number;
  signal: AbortSignal;
  /** Told about each retry (for the log). */
  onRetry?: (message: string) => void;
  /** Creates the database instead of a PUT (a database of this server: see manager.ts). */
  create?: () => Promise<void>;
}

interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  timeoutMs?: number;
  /** Statuses that are answers, not failures (e.g. 404 for a missing checkpoint). */
  accept?: number[];
  /** A streamed body (made anew for each attempt) instead of JSON. */
  stream?: { body: () => AsyncIterable<Buffer>; length: number; contentType: string };
}

/** Failures worth trying again: the network, the peer restarting, overload. */
class TransientError extends Error {}

const FIRST_BACKOFF_MS = 200;
/** Bytes of JSON per `_bulk_docs` request at most (documents larger than this go alone). */
const MAX_BULK_BYTES = 8 * 1024 * 1024;
const MAX_BACKOFF_MS = 5000;

export class HttpPeer implements ReplicationPeer {
  readonly display: string;
  private readonly base: URL;
  private readonly agent: HttpAgent;
  /** Unknown until the first fetch; peers without `_bulk_get` get `open_revs` requests. */
  private bulkGet: boolean | undefined;

  constructor(private readonly options: HttpPeerOptions) {
    this.display = options.display;
    this.base = new URL(options.url);
    const agentOptions = { keepAlive: true, maxSockets: Math.max(1, options.maxSessions) };
    this.agent = this.base.protocol === 'https:' ? new HttpsAgent({ ...agentOptions, ...options.tls }) : new HttpAgent(agentOptions);
  }

  async info(): Promise<PeerInfo> {
    const r = await this.call({ method: 'GET', path: '', accept: [400, 401, 404] });
    const notFound = new CouchError(404, 'db_not_found', `could not open ${this.display}`);
    if (r.status === 404) throw notFound;
    if (r.status === 401) throw unauthorizedPeer(this.display);
    if (r.status === 400) {
      // A name no database can have is a database that is not there (CouchDB 1.6).
      const error = peerError(r, `GET ${this.display}`);
      throw error.error === 'illegal_database_name' ? notFound : error;
    }
    return parse<PeerInfo>(r);
  }

  async create(): Promise<void> {
    if (this.options.create) return this.options.create();
    await this.call({ method: 'PUT', path: '', accept: [412] });
  }

  async changes(request: ChangesRequest, signal: AbortSignal): Promise<ChangesBatch> {
    const query: Record<string, string> = {
      style: 'all_docs', since: String(request.since), limit: String(request.limit), feed: request.feed,
    };
    if (request.feed === 'longpoll') {
      query['heartbeat'] = '10000';
    }
    let body: unknown;
    if (request.docIds) {
      query['filter'] = '_doc_ids';
      body = { doc_ids: request.docIds };
    } else if (request.selector) {
      query['filter'] = '_selector';
      body = { selector: request.selector };
    } else if (request.filter) {
      query['filter'] = request.filter;
      for (const [k, v] of Object.entries(request.queryParams ?? {})) query[k] = typeof v === 'string' ? v : JSON.stringify(v);
    }
    const r = await this.call({
      method: body ? 'POST' : 'GET', path: '_changes', query, body,
      // A live feed is silent between heartbeats; three missed ones mean the peer is gone.
      timeoutMs: request.feed === 'longpoll' ? 30000 : undefined,
    }, signal);
    return parse<ChangesBatch>(r);
  }

  async revsDiff(revs: Record<string, string[]>): Promise<RevsDiff> {
    return parse<RevsDiff>(await this.call({ method: 'POST', path: '_revs_diff', body: revs }));
  }

  async fetch(missing: readonly MissingRevs[]): Promise<DocJson[]> {
    if (missing.length === 0) return [];
    if (this.bulkGet !== false) {
      const docs = await this.fetchBulk(missing);
      if (docs) return docs;
    }
    const perDoc = await Promise.all(missing.map((m) => this.fetchOpenRevs(m)));
    return perDoc.flat();
  }

  /** `_bulk_get` (CouchDB 2+, Settee, PouchDB Server); undefined when the peer lacks it. */
  private async fetchBulk(missing: readonly MissingRevs[]): Promise<DocJson[] | undefined> {
    const items = missing.flatMap((m) => m.revs.map((rev) => ({ id: m.id, rev })));
    const r = await this.call({
      method: 'POST', path: '_bulk_get', query: { revs: 'true', latest: 'true' },
      body: { docs: items }, accept: this.bulkGet === undefined ? [400, 404, 405, 501] : [],
    });
    if (r.status !== 200) {
      this.bulkGet = false;
      return undefined;
    }
    this.bulkGet = true;
    const body = parse<{ results: { id: string; docs: ({ ok: DocJson } | { error: Record<string, unknown> })[] }[] }>(r);
    const out: DocJson[] = [];
    for (const result of body.results) for (const d of result.docs) if ('ok' in d) out.push(d.ok);
    return out;
  }

  /** `GET /db/id?open_revs=[...]` as CouchDB 1.6's replicator asks it, in JSON. */
  private async fetchOpenRevs(m: MissingRevs): Promise<DocJson[]> {
    const query: Record<string, string> = { revs: 'true', latest: 'true', open_revs: JSON.stringify(m.revs) };
    const r = await this.call({ method: 'GET', path: docPath(m.id), query, accept: [404] });
    if (r.status === 404) return [];
    const rows = parse<({ ok: DocJson } | { missing: string })[]>(r);
    return rows.flatMap((row) => ('ok' in row ? [row.ok] : []));
  }

  async write(docs: readonly DocJson[]): Promise<WriteFailure[]> {
    const failures: WriteFailure[] = [];
    // Requests stay well under a peer's max_http_request_size (64 MiB by default).
    let chunk: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (chunk.length === 0) return;
      const body = Buffer.from(`{"new_edits":false,"docs":[${chunk.join(',')}]}`);
      chunk = [];
      bytes = 0;
      const r = await this.call({ method: 'POST', path: '_bulk_docs', body });
      const results = parse<({ id: string; rev?: string; error?: string; reason?: string })[]>(r);
      for (const x of results) if (x.error !== undefined) failures.push({ id: x.id, rev: x.rev, error: x.error, reason: x.reason ?? '' });
    };
    for (const doc of docs) {
      const text = JSON.stringify(doc);
      if (bytes + text.length > MAX_BULK_BYTES) await flush();
      chunk.push(text);
      bytes += text.length;
    }
    await flush();
    return failures;
  }

  async openAttachment(id: string, rev: string, name: string): Promise<AsyncIterable<Buffer>> {
    const path = `${docPath(id)}/${name.split('/').map(encodeURIComponent).join('/')}`;
    return this.callStream({ method: 'GET', path, query: { rev } });
  }

  async writeWithAttachments(doc: DocJson, content: readonly AttachmentContent[]): Promise<WriteFailure | undefined> {
    const atts = { ...(doc['_attachments'] as Record<string, Record<string, unknown>>) };
    for (const { name } of content) {
      const { stub: _stub, digest: _digest, data: _data, ...rest } = atts[name] ?? {};
      atts[name] = { ...rest, follows: true };
    }
    const json = Buffer.from(JSON.stringify({ ...doc, _attachments: atts }));
    const boundary = randomBytes(16).toString('hex');
    const heads = content.map(({ name }) => Buffer.from(
      `\r\n--${boundary}\r\nContent-Disposition: attachment; filename=${JSON.stringify(name)}\r\n` +
      `Content-Type: ${String(atts[name]!['content_type'] ?? 'application/octet-stream')}\r\n` +
      `Content-Length: ${Number(atts[name]!['length'] ?? 0)}\r\n\r\n`));
    const first = Buffer.from(`--${boundary}\r\nContent-Type: application/json\r\n\r\n`);
    const last = Buffer.from(`\r\n--${boundary}--`);
    let length = first.length + json.length + last.length;
    content.forEach(({ name }, i) => { length += heads[i]!.length + Number(atts[name]!['length'] ?? 0); });
    const body = async function* (): AsyncIterable<Buffer> {
      yield first;
      yield json;
      for (let i = 0; i < content.length; i++) {
        yield heads[i]!;
        for await (const chunk of await content[i]!.open()) yield chunk;
      }
      yield last;
    };
    const r = await this.call({
      method: 'PUT', path: docPath(doc._id), query: { new_edits: 'false' }, accept: [400, 401, 403, 409, 412, 413, 415],
      stream: { body, length, contentType: `multipart/related; boundary="${boundary}"` },
    });
    if (r.status < 400) return undefined;
    const e = parse<{ error?: string; reason?: string }>(r);
    return { id: doc._id, rev: doc._rev, error: e.error ?? String(r.status), reason: e.reason ?? '' };
  }

  async getLocal(id: string): Promise<Record<string, unknown> | undefined> {
    return this.getDoc(`_local/${id}`);
  }

  async putLocal(id: string, body: Record<string, unknown>): Promise<string> {
    const r = await this.call({ method: 'PUT', path: docPath(`_local/${id}`), body: { ...body, _id: `_local/${id}` } });
    return parse<{ rev: string }>(r).rev;
  }

  async getDoc(id: string): Promise<Record<string, unknown> | undefined> {
    const r = await this.call({ method: 'GET', path: docPath(id), accept: [404] });
    return r.status === 404 ? undefined : parse<Record<string, unknown>>(r);
  }

  async ensureFullCommit(): Promise<void> {
    await this.call({ method: 'POST', path: '_ensure_full_commit', body: {} });
  }

  close(): void {
    this.agent.destroy();
  }

  /** One request, retried while the failure is transient; CouchDB errors are thrown as such. */
  private async call(spec: RequestSpec, signal: AbortSignal = this.options.signal, streamTo?: (res: IncomingMessage) => void): Promise<HttpResult> {
    let backoff = FIRST_BACKOFF_MS;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw new CouchError(500, 'cancelled', 'replication cancelled');
      try {
        const r = await this.send(spec, signal, streamTo);
        if (r.status >= 500) throw new TransientError(`${spec.method} ${this.display}${spec.path} answered ${r.status}`);
        if (r.status >= 400 && !spec.accept?.includes(r.status)) throw peerError(r, `${spec.method} ${this.display}${spec.path}`);
        return r;
      } catch (err) {
        if (!(err instanceof TransientError) || attempt >= this.options.retries || signal.aborted) {
          if (err instanceof CouchError) throw err;
          throw new CouchError(502, 'replication_peer_error', stripCredentials(err instanceof Error ? err.message : String(err)));
        }
        this.options.onRetry?.(`${err.message}; retrying in ${backoff} ms`);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  /** A request whose successful response body is consumed as a stream (attachment content). */
  private async callStream(spec: RequestSpec): Promise<AsyncIterable<Buffer>> {
    let response: IncomingMessage | undefined;
    await this.call(spec, this.options.signal, (res) => { response = res; });
    return response!;
  }

  /**
   * Sends one request. The response body is buffered, unless `streamTo` takes a successful
   * response as it arrives (the result's body is then empty).
   */
  private send(spec: RequestSpec, signal: AbortSignal, streamTo?: (res: IncomingMessage) => void): Promise<HttpResult> {
    const url = new URL(spec.path, this.base);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers };
    let payload: Buffer | undefined;
    if (spec.stream) {
      headers['content-type'] = spec.stream.contentType;
      headers['content-length'] = String(spec.stream.length);
    } else if (spec.body !== undefined) {
      payload = Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(JSON.stringify(spec.body));
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const what = `${spec.method} ${this.display}${spec.path}`;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<HttpResult>((resolve, reject) => {
      const onAbort = () => req.destroy(new TransientError('aborted'));
      const fail = (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof TransientError ? err : new TransientError(`${what}: ${err.message}`));
      };
      const req = send(url, { method: spec.method, headers, agent: this.agent }, (res) => {
        const status = res.statusCode ?? 0;
        if (streamTo && status < 400) {
          signal.removeEventListener('abort', onAbort);
          streamTo(res);
          resolve({ status, headers: res.headers, body: Buffer.alloc(0) });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          signal.removeEventListener('abort', onAbort);
          resolve({ status, headers: res.headers, body: Buffer.concat(chunks) });
        });
        res.on('error', fail);
      });
      const timeout = spec.timeoutMs ?? this.options.timeoutMs;
      req.setTimeout(timeout, () => req.destroy(new Error(`timed out after ${timeout} ms`)));
      req.on('error', fail);
      signal.addEventListener('abort', onAbort, { once: true });
      if (!spec.stream) {
        req.end(payload);
        return;
      }
      const body = spec.stream.body;
      void (async () => {
        for await (const chunk of body()) {
          if (!req.write(chunk)) await once(req, 'drain');
        }
        req.end();
      })().catch((err: unknown) => req.destroy(err instanceof Error ? err : new Error(String(err))));
    });
  }
}

function docPath(id: string): string {
  if (id.startsWith('_design/')) return `_design/${encodeURIComponent(id.slice(8))}`;
  if (id.startsWith('_local/')) return `_local/${encodeURIComponent(id.slice(7))}`;
  return encodeURIComponent(id);
}

function parse<T>(r: HttpResult): T {
  try {
    return JSON.parse(r.body.toString('utf8')) as T;
  } catch {
    throw new CouchError(502, 'replication_peer_error', 'the peer answered with invalid JSON');
  }
}

/** The peer's own CouchDB error, passed on (a 401/403 from the peer stays a failure to replicate). */
function peerError(r: HttpResult, what: string): CouchError {
  let error = 'replication_peer_error';
  let reason = `${what} answered ${r.status}`;
  try {
    const body = JSON.parse(r.body.toString('utf8')) as { error?: unknown; reason?: unknown };
    if (typeof body.error === 'string') error = body.error;
    if (typeof body.reason === 'string') reason = `${body.reason} (${what})`;
  } catch {
    // Not JSON: keep the generic reason.
  }
  return new CouchError(r.status, error, stripCredentials(reason));
}
