/**
 * Value encodings of a database's records (see keys.ts for where each lives).
 */
import * as revtree from './revtree.js';
import type { RevTree } from './revtree.js';

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const encodeJson = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
export const decodeJson = <T>(bytes: Uint8Array): T => JSON.parse(asBuffer(bytes).toString('utf8')) as T;
export const encodeText = (text: string): Buffer => Buffer.from(text, 'utf8');
export const decodeText = (bytes: Uint8Array): string => asBuffer(bytes).toString('utf8');

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

export function encodeRevision(rec: RevisionRecord): Buffer {
  const bodyLength = Buffer.byteLength(rec.body, 'utf8');
  if (rec.attachments === undefined) {
    const out = Buffer.allocUnsafe(bodyLength + 1);
    out[0] = 0;
    out.write(rec.body, 1, 'utf8');
    return out;
  }
  const out = Buffer.allocUnsafe(5 + bodyLength + Buffer.byteLength(rec.attachments, 'utf8'));
  out[0] = 1;
  out.writeUInt32BE(bodyLength, 1);
  out.write(rec.body, 5, 'utf8');
  out.write(rec.attachments, 5 + bodyLength, 'utf8');
  return out;
}

export function decodeRevision(bytes: Uint8Array): RevisionRecord {
  const buf = asBuffer(bytes);
  if (buf[0] === 0) return { body: buf.toString('utf8', 1), attachments: undefined };
  const len = buf.readUInt32BE(1);
  return { body: buf.toString('utf8', 5, 5 + len), attachments: buf.toString('utf8', 5 + len) };
}

/** A `_local` document: its own counter revision `0-N` and body. */
export interface LocalRecord {
  id: string;
  rev: number;
  body: string;
}
