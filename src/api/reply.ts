/**
 * What a handler answers. Handlers never touch the socket: they return one of these and the
 * http layer serialises it, negotiates the content type and pumps streams with backpressure.
 */
export type HeaderMap = Record<string, string | number | string[]>;

export interface JsonReply {
  kind: 'json';
  status: number;
  /** An object to serialise, or a pre-serialised JSON text (hot paths skip a round trip). */
  body: unknown;
  headers?: HeaderMap;
}

export interface RawReply {
  kind: 'raw';
  status: number;
  body: Uint8Array | string;
  contentType: string;
  headers?: HeaderMap;
}

export interface StreamReply {
  kind: 'stream';
  status: number;
  /** Chunks written as they come; the iterator is closed when the client goes away. */
  body: AsyncIterable<string | Uint8Array>;
  /** Defaults to JSON negotiated by Accept. */
  contentType?: string;
  headers?: HeaderMap;
  /**
   * The body's last `\n` ends the response, not the JSON (CouchDB's end_json_response writes it
   * after view rows): a JSONP callback's `);` goes before it.
   */
  finalNewlineEndsResponse?: boolean;
}

/**
 * A reply relayed as another server gave it (the HTTP proxy): its headers in order, duplicates
 * kept and nothing added but the transport's own (Server when absent, CORS, a refreshed cookie);
 * they decide the framing (Content-Length, chunked, or to the end of the connection).
 */
export interface RelayReply {
  kind: 'relay';
  status: number;
  headers: readonly (readonly [string, string])[];
  /** Written as it comes, with backpressure; closed early when the client goes away. */
  body: AsyncIterable<Uint8Array>;
}

export type Reply = JsonReply | RawReply | StreamReply | RelayReply;

export const json = (status: number, body: unknown, headers?: HeaderMap): JsonReply => ({ kind: 'json', status, body, headers });
export const ok = (headers?: HeaderMap): JsonReply => json(200, { ok: true }, headers);
export const raw = (status: number, body: Uint8Array | string, contentType: string, headers?: HeaderMap): RawReply =>
  ({ kind: 'raw', status, body, contentType, headers });
export const stream = (status: number, body: AsyncIterable<string | Uint8Array>, headers?: HeaderMap, contentType?: string): StreamReply =>
  ({ kind: 'stream', status, body, headers, contentType });
/**
 * A live feed ended as couch_httpd:end_json_response ends one (`_changes`, `_db_updates`): one
 * more newline after the feed's own last line, unless the client has gone; a JSONP callback's
 * `);` goes before that newline.
 */
export function endedByNewline(reply: StreamReply, client: AbortSignal): StreamReply {
  const feed = reply.body;
  async function* body(): AsyncIterable<string | Uint8Array> {
    yield* feed;
    if (!client.aborted) yield '\n';
  }
  return { ...reply, body: body(), finalNewlineEndsResponse: true };
}

/** View and `_all_docs` rows, streamed as JSON ending in the response's newline. */
export const rowsStream = (status: number, body: AsyncIterable<string>, headers?: HeaderMap): StreamReply =>
  ({ kind: 'stream', status, body, headers, finalNewlineEndsResponse: true });
