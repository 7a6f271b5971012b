/**
 * Which attachments of a fetched revision the target lacks. Revisions are fetched with stubs
 * only; an attachment whose `revpos` is at or below a revision the target already holds on the
 * same branch (one of `_revs_diff`'s possible ancestors) is already there, as with `atts_since`.
 * The rest are streamed from the source into a multipart PUT, raw bytes rather than base64.
 */
import type { DocJson } from './peer.js';

interface RevisionsField {
  start: number;
  ids: string[];
}

/** Names of the attachments whose content the target needs, in the document's order. */
export function attachmentsToSend(doc: DocJson, possibleAncestors: readonly string[]): string[] {
  const atts = doc['_attachments'] as Record<string, { revpos?: unknown }> | undefined;
  if (!atts) return [];
  const known = knownPosition(doc['_revisions'] as RevisionsField | undefined, possibleAncestors);
  return Object.entries(atts)
    .filter(([, att]) => !(typeof att.revpos === 'number' && att.revpos <= known))
    .map(([name]) => name);
}

/** Names of all of a revision's attachments. */
export function attachmentNames(doc: DocJson): string[] {
  const atts = doc['_attachments'] as Record<string, unknown> | undefined;
  return atts ? Object.keys(atts) : [];
}

/** The newest revision position on this revision's path that the target holds (0: none). */
function knownPosition(revisions: RevisionsField | undefined, possibleAncestors: readonly string[]): number {
  if (!revisions || !Array.isArray(revisions.ids)) return 0;
  let known = 0;
  for (const rev of possibleAncestors) {
    const dash = rev.indexOf('-');
    const pos = Number(rev.slice(0, dash));
    const hash = rev.slice(dash + 1);
    const index = revisions.start - pos;
    if (index >= 0 && index < revisions.ids.length && revisions.ids[index] === hash) known = Math.max(known, pos);
  }
  return known;
}
