/**
 * Documents as they cross the API: splitting a client's JSON into its special `_` fields and
 * user body, and assembling stored parts back into CouchDB's JSON, in CouchDB's field order.
 */
import { badRequest, docValidation } from '../errors.js';
import { canonicalHash, canonicalRev, formatRev, leaves, type RevPath, type RevTree } from './revtree.js';

export type JsonObject = Record<string, unknown>;

/** A document as a client sent it, taken apart. */
export interface IncomingDoc {
  id: string | undefined;
  /** `_rev` as sent, in its canonical form (the parent revision for an edit). */
  rev: string | undefined;
  deleted: boolean;
  /** User fields only. */
  body: JsonObject;
  /** `body` serialised, computed once when the document is parsed. */
  bodyJson: string;
  /** `_revisions` as sent: the revision's ancestry, used with new_edits=false. */
  revisions: RevPath | undefined;
  /** `_attachments` as sent (handled by the attachment engine). */
  attachments: JsonObject | undefined;
  /** The attachments once prepared (content stored, stubs recognised); see Database.prepareAttachments. */
  atts?: Map<string, AttachmentInput>;
  /**
   * Set by write rules that allow this writer no conflicts (the users database's, for callers who
   * are not its admins): the updater answers 409 rather than store a revision that would stand
   * beside a live leaf it does not replace. Checked in the updater, against the tree it merges into.
   */
  noNewConflict?: boolean;
}

/** One attachment of an edit, after its content (if any) is stored. */
export type AttachmentInput =
  | {
    kind: 'content'; contentType: string; digest: string; length: number;
    /** As sent: kept by replicated writes (new_edits=false) and by `stored` content. */
    revpos?: number;
    /** Content the database already held (a COPY): keeps its revpos in interactive edits too. */
    stored?: boolean;
  }
  | { kind: 'stub'; revpos?: number; digest?: string };

/** Special fields a client may send; the rest of `_`-prefixed fields are rejected. */
const IGNORED_SPECIALS = new Set(['_revs_info', '_conflicts', '_deleted_conflicts', '_local_seq']);

/** The replicator's state fields on `_replicator` documents: kept in the body, as CouchDB keeps them. */
const REPLICATION_FIELDS = new Set([
  '_replication_state', '_replication_state_time', '_replication_state_reason', '_replication_id', '_replication_stats',
]);

export function parseIncomingDoc(value: unknown): IncomingDoc {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('Document must be a JSON object');
  }
  const input = value as JsonObject;
  const doc: IncomingDoc = { id: undefined, rev: undefined, deleted: false, body: {}, bodyJson: '{}', revisions: undefined, attachments: undefined };
  for (const key of Object.keys(input)) {
    const v = input[key];
    if (!key.startsWith('_') || REPLICATION_FIELDS.has(key)) {
      doc.body[key] = v;
      continue;
    }
    switch (key) {
      case '_id':
        if (typeof v !== 'string') throw badRequest('Document id must be a string');
        doc.id = v;
        break;
      case '_rev': {
        // After a `_revisions`, couch_doc:transfer_fields skips `_rev` unread: that names the revision.
        if (doc.revisions !== undefined) break;
        const rev = typeof v === 'string' ? canonicalRev(v) : undefined;
        if (rev === undefined) throw badRequest('Invalid rev format');
        doc.rev = rev;
        break;
      }
      // couch_doc:transfer_fields takes `_deleted` only as a boolean, `_attachments` only as an
      // object: anything else is a bad special member.
      case '_deleted':
        if (typeof v !== 'boolean') throw docValidation('Bad special document member: _deleted');
        doc.deleted = v;
        break;
      case '_revisions':
        doc.revisions = parseRevisions(v);
        break;
      case '_attachments':
        if (v === null || typeof v !== 'object' || Array.isArray(v)) throw docValidation('Bad special document member: _attachments');
        doc.attachments = v as JsonObject;
        break;
      default:
        if (!IGNORED_SPECIALS.has(key)) throw docValidation(`Bad special document member: ${key}`);
    }
  }
  // As in couch_doc, `_revisions` says which revision this is, over `_rev`.
  if (doc.revisions) doc.rev = formatRev(doc.revisions.pos, doc.revisions.hashes[0]!);
  try {
    doc.bodyJson = JSON.stringify(doc.body);
  } catch (err) {
    if (err instanceof RangeError) throw badRequest('Document is nested too deeply');
    throw err;
  }
  return doc;
}

/** A document with no user fields: deletions and internal writes. */
export function emptyDoc(id: string, rev: string | undefined, deleted: boolean): IncomingDoc {
  return { id, rev, deleted, body: {}, bodyJson: '{}', revisions: undefined, attachments: undefined };
}

/**
 * `_revisions`, checked as couch_doc checks it. An ancestry that cannot be a path in a revision
 * tree (start below 1, no ids, more ids than start) passes CouchDB's checks too; it is ignored
 * here, so the document's `_rev` alone says where it goes.
 */
function parseRevisions(v: unknown): RevPath | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw docValidation('Bad special document member: _revisions');
  const { start, ids } = v as { start?: unknown; ids?: unknown };
  if (typeof start !== 'number' || !Number.isInteger(start)) throw docValidation("_revisions.start isn't an integer.");
  if (!Array.isArray(ids)) throw docValidation("_revisions.ids isn't a array.");
  if (ids.some((id) => typeof id !== 'string')) throw docValidation("RevId isn't a string");
  if (ids.length === 0 || start < ids.length) return undefined;
  return { pos: start, hashes: (ids as string[]).map(canonicalHash) };
}

/**
 * A non-empty JSON object's text (a document, a view row) with more members appended:
 * `members` is their text, each with its leading comma (`,"_conflicts":[…]`), or '' for none.
 * Nothing is parsed again.
 */
export function withMembers(objectJson: string, members: string): string {
  return members === '' ? objectJson : `${objectJson.slice(0, -1)}${members}}`;
}

/**
 * A document's `_conflicts` (and, when asked, `_deleted_conflicts`) as JSON members to splice
 * into its rendered winner (`,"_conflicts":[…]`), or '' when it has none.
 */
export function conflictMembers(tree: RevTree, withDeleted: boolean): string {
  const [winner, ...others] = leaves(tree);
  if (!winner) return '';
  const live = others.filter((l) => !l.deleted).map((l) => l.rev);
  const deleted = withDeleted ? others.filter((l) => l.deleted).map((l) => l.rev) : [];
  return (live.length > 0 ? `,"_conflicts":${JSON.stringify(live)}` : '') +
    (deleted.length > 0 ? `,"_deleted_conflicts":${JSON.stringify(deleted)}` : '');
}

/** A rendered document's opening: `{"_id":…[,"_rev":…][,"_deleted":true]`, its body members to follow. */
export function docHeadJson(id: string, rev: string | undefined, deleted: boolean): string {
  return `{"_id":${JSON.stringify(id)}${rev !== undefined ? `,"_rev":${JSON.stringify(rev)}` : ''}${deleted ? ',"_deleted":true' : ''}`;
}

/**
 * Assembles a document's JSON text from stored parts without re-parsing the body:
 * `_id, _rev, [_deleted], body fields, extras (revisions, meta), [_attachments]` — CouchDB's order.
 */
export function renderDoc(
  id: string,
  rev: string | undefined,
  deleted: boolean,
  bodyJson: string,
  extras: readonly (readonly [string, unknown])[] = [],
  attachmentsJson?: string,
): string {
  let out = docHeadJson(id, rev, deleted);
  const inner = bodyJson.length > 2 ? bodyJson.slice(1, -1).trim() : '';
  if (inner !== '') out += `,${inner}`;
  for (const [name, value] of extras) out += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  if (attachmentsJson !== undefined) out += `,"_attachments":${attachmentsJson}`;
  return `${out}}`;
}
