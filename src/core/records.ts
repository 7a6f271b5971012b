/**
 * Value encodings of a database's records (see keys.ts for where each lives).
 */
import * as revtree from './revtree.js';
import type { RevTree } from './revtree.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeJson = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
export const decodeJson = <T>(bytes: Uint8Array): T => JSON.parse(decoder.decode(bytes)) as T;
export const encodeText = (text: string): Uint8Array => encoder.encode(text);
export const decodeText = (bytes: Uint8Array): string => decoder.decode(bytes);

/** Everything known about one document apart from its revision bodies. */
export interface DocInfo {
  id: string;
  /** The sequence of the document's latest change. */
  seq: number;
  tree: RevTree;
  /** Stored size of each leaf revision's body, for an honest `data_size`. */
  sizes: Record<string, number>;
}

export function encodeDocInfo(info: DocInfo): Uint8Array {
  return encodeJson([info.id, info.seq, revtree.encode(info.tree), info.sizes]);
}

export function decodeDocInfo(bytes: Uint8Array): DocInfo {
  const [id, seq, tree, sizes] = decodeJson<[string, number, unknown, Record<string, number>?]>(bytes);
  return { id, seq, tree: revtree.decode(tree), sizes: sizes ?? {} };
}

/** The by-sequence record: what `_changes` needs without opening the document. */
export interface ChangeRecord {
  id: string;
  /** Winning revision. */
  rev: string;
  deleted: boolean;
  /** Other leaf revisions, winner excluded (for style=all_docs). */
  others: string[];
}

export function encodeChange(c: ChangeRecord): Uint8Array {
  return encodeJson(c.others.length > 0 ? [c.id, c.rev, c.deleted ? 1 : 0, c.others] : [c.id, c.rev, c.deleted ? 1 : 0]);
}

export function decodeChange(bytes: Uint8Array): ChangeRecord {
  const [id, rev, deleted, others] = decodeJson<[string, string, number, string[]?]>(bytes);
  return { id, rev, deleted: deleted === 1, others: others ?? [] };
}

/**
 * A revision's stored content: the user body as JSON text (kept as text so reads can splice it
 * into responses) and the attachment stubs, if any, as JSON text.
 */
export interface RevisionRecord {
  body: string;
  attachments: string | undefined;
}

export function encodeRevision(rec: RevisionRecord): Uint8Array {
  if (rec.attachments === undefined) {
    const body = encoder.encode(rec.body);
    const out = new Uint8Array(body.length + 1);
    out[0] = 0;
    out.set(body, 1);
    return out;
  }
  const body = encoder.encode(rec.body);
  const atts = encoder.encode(rec.attachments);
  const out = new Uint8Array(5 + body.length + atts.length);
  out[0] = 1;
  new DataView(out.buffer).setUint32(1, body.length);
  out.set(body, 5);
  out.set(atts, 5 + body.length);
  return out;
}

export function decodeRevision(bytes: Uint8Array): RevisionRecord {
  if (bytes[0] === 0) return { body: decoder.decode(bytes.subarray(1)), attachments: undefined };
  const len = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  return {
    body: decoder.decode(bytes.subarray(5, 5 + len)),
    attachments: decoder.decode(bytes.subarray(5 + len)),
  };
}

/** A `_local` document: its own counter revision `0-N` and body. */
export interface LocalRecord {
  id: string;
  rev: number;
  body: string;
}
