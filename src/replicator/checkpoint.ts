/**
 * Checkpoints: the `_local/<replication id>` documents both ends keep, in CouchDB 1.6's format,
 * and how a new session finds where the last one it shares with both ends stopped.
 */
import { REPLICATION_ID_VERSION } from './replication-id.js';

/** At most this many sessions are kept in a checkpoint's history. */
export const MAX_HISTORY = 50;

export interface SessionStats {
  missing_checked: number;
  missing_found: number;
  docs_read: number;
  docs_written: number;
  doc_write_failures: number;
}

export interface HistoryEntry extends SessionStats {
  session_id: string;
  start_time: string;
  end_time: string;
  start_last_seq: number | string;
  end_last_seq: number | string;
  recorded_seq: number | string;
}

export interface CheckpointBody {
  session_id: string;
  source_last_seq: number | string;
  replication_id_version: number;
  history: HistoryEntry[];
}

export interface StartPoint {
  /** The source sequence to replicate from. */
  since: number | string;
  /** The history to continue (newest first). */
  history: HistoryEntry[];
}

/**
 * Where to resume given the checkpoint documents found on the source and the target (either
 * may be missing): if both record the same last session, its sequence; otherwise the newest
 * session both histories share; otherwise from the start.
 */
export function findStartPoint(source: Partial<CheckpointBody> | undefined, target: Partial<CheckpointBody> | undefined): StartPoint {
  if (!source || !target) return { since: 0, history: [] };
  if (source.session_id !== undefined && source.session_id === target.session_id) {
    return { since: source.source_last_seq ?? 0, history: validHistory(source.history) };
  }
  return commonHistory(validHistory(source.history), validHistory(target.history));
}

/**
 * Walks both histories newest first; the first session of either that the other also holds
 * is the last point both ends agree on.
 */
function commonHistory(source: HistoryEntry[], target: HistoryEntry[]): StartPoint {
  const holds = (list: HistoryEntry[], from: number, id: string) => list.slice(from).some((h) => h.session_id === id);
  for (let i = 0; i < Math.min(source.length, target.length); i++) {
    const s = source[i]!;
    if (holds(target, i, s.session_id)) return { since: s.recorded_seq ?? 0, history: source.slice(i + 1) };
    const t = target[i]!;
    if (holds(source, i + 1, t.session_id)) return { since: t.recorded_seq ?? 0, history: target.slice(i + 1) };
  }
  return { since: 0, history: [] };
}

function validHistory(history: unknown): HistoryEntry[] {
  if (!Array.isArray(history)) return [];
  return history.filter((h): h is HistoryEntry => h !== null && typeof h === 'object' && typeof (h as HistoryEntry).session_id === 'string');
}

/** The checkpoint body after a session: its entry first, the previous history after, at most 50. */
export function checkpointBody(sessionId: string, entry: HistoryEntry, previous: readonly HistoryEntry[]): CheckpointBody {
  return {
    session_id: sessionId,
    source_last_seq: entry.recorded_seq,
    replication_id_version: REPLICATION_ID_VERSION,
    history: [entry, ...previous].slice(0, MAX_HISTORY),
  };
}

/** CouchDB's checkpoint timestamps: RFC 1123 dates. */
export function rfc1123(date: Date): string {
  return date.toUTCString();
}
