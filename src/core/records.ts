/**
 * Value encodings of a database's records (see keys.ts for where each lives).
 */
import * as revtree from './revtree.js';
import type { RevTree } from './revtree.js';
import { ByteReader, ByteWriter } from './bytes.js';

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const encodeJson = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
export const decodeJson = <T>(bytes: Uint8Array): T => JSON.parse(asBuffer(bytes).toString('utf8')) as T;
export const encodeText = (text: string): Buffer => Buffer.from(text, 'utf8');
/** The UTF-8 text of `bytes` from `offset` on (decoded in place: no view of the rest is made). */
export const decodeText = (bytes: Uint8Array, offset = 0): string => asBuffer(bytes).toString('utf8', offset);

/** Everything known about one document apart from its revision bodies. */
export interface DocInfo {
  id: string;
  /** The sequence of the document's latest change. */
  seq: number;
  tree: RevTree;
  /**
   * Stored size of each leaf revision's body, for an honest `data_size`, in `revtree.leaves(tree)`
   * order (an array, not an object keyed by revision: every key would be a new property name).
   */
  sizes: number[];
}

/** Binary record forms start with this byte; the JSON forms of disk format 6 and earlier with `[`. */
const BINARY = 1;

const writer = new ByteWriter();

/** `[BINARY] varint seq, string id, tree (revtree.encodeBinary), varint n, n × varint size` */
export function encodeDocInfo(info: DocInfo): Buffer {
  const w = writer.reset();
  w.byte(BINARY);
  w.varint(info.seq);
  w.string(info.id);
  revtree.encodeBinary(info.tree, w);
  w.varint(info.sizes.length);
  for (const size of info.sizes) w.varint(size);
  return w.finish();
}

/**
 * The sizes of the leaves of `tree`, in leaf order: `fresh.size` for the revision just written,
 * the size each other leaf had in `info` (0 if it was not a leaf there).
 */
export function carriedSizes(info: DocInfo | null, tree: RevTree, fresh?: { rev: string; size: number }): number[] {
  const before = info ? revtree.leaves(info.tree) : [];
  return revtree.leaves(tree).map((leaf) => {
    if (leaf.rev === fresh?.rev) return fresh.size;
    const i = before.findIndex((old) => old.rev === leaf.rev);
    return i < 0 ? 0 : info!.sizes[i] ?? 0;
  });
}

export function decodeDocInfo(bytes: Uint8Array): DocInfo {
  const buf = asBuffer(bytes);
  if (buf[0] !== BINARY) return decodeJsonDocInfo(buf);
  const r = new ByteReader(buf, 1);
  const seq = r.varint();
  const id = r.string();
  const tree = revtree.decodeBinary(r);
  const sizes: number[] = new Array(r.varint());
  for (let i = 0; i < sizes.length; i++) sizes[i] = r.varint();
  return { id, seq, tree, sizes };
}

function decodeJsonDocInfo(bytes: Buffer): DocInfo {
  const [id, seq, encodedTree, sizes] = decodeJson<[string, number, unknown, Record<string, number>?]>(bytes);
  const tree = revtree.decode(encodedTree);
  return { id, seq, tree, sizes: revtree.leaves(tree).map((leaf) => sizes?.[leaf.rev] ?? 0) };
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

/** `[BINARY] byte deleted, string id, string rev, varint n, n × string other` */
export function encodeChange(c: ChangeRecord): Buffer {
  const w = writer.reset();
  w.byte(BINARY);
  w.byte(c.deleted ? 1 : 0);
  w.string(c.id);
  w.string(c.rev);
  w.varint(c.others.length);
  for (const rev of c.others) w.string(rev);
  return w.finish();
}

export function decodeChange(bytes: Uint8Array): ChangeRecord {
  const buf = asBuffer(bytes);
  if (buf[0] !== BINARY) {
    const [id, rev, deleted, others] = decodeJson<[string, string, number, string[]?]>(buf);
    return { id, rev, deleted: deleted === 1, others: others ?? [] };
  }
  const r = new ByteReader(buf, 1);
  const deleted = r.byte() === 1;
  const id = r.string();
  const rev = r.string();
  const others: string[] = new Array(r.varint());
  for (let i = 0; i < others.length; i++) others[i] = r.string();
  return { id, rev, deleted, others };
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
  const { body, attachments } = revisionSpans(buf);
  return { body: buf.toString('utf8', body[0], body[1]), attachments: attachments && buf.toString('utf8', attachments[0], attachments[1]) };
}

/** Where a revision record's body and attachment stubs (JSON texts) lie in its bytes, for copying them unparsed. */
export function revisionSpans(bytes: Uint8Array): { body: [number, number]; attachments: [number, number] | undefined } {
  if (bytes[0] === 0) return { body: [1, bytes.length], attachments: undefined };
  const len = ((bytes[1]! << 24) >>> 0) + (bytes[2]! << 16) + (bytes[3]! << 8) + bytes[4]!;
  return { body: [5, 5 + len], attachments: [5 + len, bytes.length] };
}

/** A `_local` document: its own counter revision `0-N` and body. */
export interface LocalRecord {
  id: string;
  rev: number;
  body: string;
}
