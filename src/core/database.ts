/**
 * One CouchDB database: documents with revision trees, local documents, the by-sequence index and
 * its metadata, over one KeyValueStore.
 *
 * All writes go through a single updater queue (CouchDB's couch_db_updater): requests that arrive
 * while a commit is in flight are merged into the next batch, so concurrent writers share one
 * transaction and one fsync (group commit), and every read-modify-write of a revision tree is
 * serialised without locks.
 */
import { createHash } from 'node:crypto';
import { CouchError, conflict, notFound, badRequest, databaseClosed, toCouchError } from '../errors.js';
import type { Entry, KeyValueStore, WriteOp } from '../storage/types.js';
import { skipAndLimit } from '../storage/slice.js';
import * as revtree from './revtree.js';
import type { RevTree, Leaf } from './revtree.js';
import { newRevHash } from './revid.js';
import { DESIGN_IDS } from './names.js';
import { conflictMembers, docHeadJson, renderDoc, type AttachmentInput, type IncomingDoc, type JsonObject } from './document.js';
import { AttachmentStore, hashedAs, type AttachmentSettings, type StoredContent } from './attachments.js';
import { KeyRanks } from './key-ranks.js';
import type { PackedJsonWriter } from './packed-json.js';
import {
  Prefix, idKey, infoKey, liveKey, localKey, metaKey, prefixRange, type IdKey, purgeKey, revKey, seqFromKey, seqKey,
} from './keys.js';
import {
  type ChangeRecord, type DocInfo, type LocalRecord, decodeChange, decodeDocInfo, decodeJson, decodeRevision, carriedSizes,
  decodeText, encodeChange, encodeDocInfo, encodeJson, encodeRevision, encodeText, revisionSpans,
} from './records.js';

/** The `disk_format_version` CouchDB 1.6 reports (clients compare it; Settee's records carry their own versions). */
export const DISK_FORMAT_VERSION = 6;

/** Records per chunk when scanning an index. */
const CHUNK = 256;
/** Documents per committed part of a large non-atomic batch. */
const PART_SIZE = 250;
/** Parts of one batch handed to the store and not yet committed, at most. */
const PARTS_IN_FLIGHT = 4;

interface Meta {
  updateSeq: number;
  purgeSeq: number;
  docCount: number;
  docDelCount: number;
  revsLimit: number;
  /** Bytes of live data: document infos plus leaf revision bodies. */
  dataSize: number;
}

export interface DbInfo {
  db_name: string;
  doc_count: number;
  doc_del_count: number;
  update_seq: number;
  purge_seq: number;
  compact_running: boolean;
  disk_size: number;
  data_size: number;
  instance_start_time: string;
  disk_format_version: number;
  committed_update_seq: number;
  /** CouchDB 2's names for the sizes: `file` is disk_size, `active` and `external` data_size. */
  sizes: { file: number; active: number; external: number };
}

/** A listing by document id: bounds (the end inclusive unless told), direction, skip and limit. */
export interface IdRangeOptions {
  start?: string;
  end?: string;
  inclusiveEnd?: boolean;
  descending?: boolean;
  skip?: number;
  limit?: number;
}

export interface EditOptions {
  /** false: revisions come from elsewhere (replication) and are merged as they are. */
  newEdits: boolean;
  /** Write every document even if it creates a conflict, and all or none of them. */
  allOrNothing: boolean;
  /** Answer only once the write is on disk. */
  durable: boolean;
}

export type EditResult =
  | { id: string; ok: true; rev: string; /** false when a replicated revision was already there */ changed: boolean }
  | { id: string; ok: false; error: string; reason: string; status: number };

export interface OpenOptions {
  /** Embed attachment content (base64 `data`) instead of stubs. */
  attachments?: boolean;
  /** Embed content only for attachments newer than these revisions. */
  attsSince?: string[];
  /** Add `encoding` and `encoded_length` to compressed attachments. */
  attEncodingInfo?: boolean;
  /**
   * How requested attachment content travels: inline base64 `data` (default), or `follows`
   * (multipart: the JSON says `follows: true` and the content is listed in `OpenedDoc.follows`).
   */
  attachmentsAs?: 'data' | 'follows';
  rev?: string;
  revs?: boolean;
  revsInfo?: boolean;
  conflicts?: boolean;
  deletedConflicts?: boolean;
  localSeq?: boolean;
  latest?: boolean;
}

export interface OpenedDoc {
  id: string;
  rev: string;
  deleted: boolean;
  json: string;
  /** The revision's attachments in stub form (JSON), when it has any. */
  attachments?: string;
  /** With `attachmentsAs: 'follows'`: the attachments whose content follows, in order. */
  follows?: FollowingAttachment[];
}

export interface FollowingAttachment {
  name: string;
  contentType: string;
  digest: string;
  /** Bytes that follow: the stored (encoded) length when `encoded`. */
  length: number;
  /** The content follows as stored (gzip), as CouchDB sends it in multipart bodies. */
  encoded: boolean;
}

export interface ChangeRow extends ChangeRecord {
  seq: number;
}

interface EditRequest {
  docs: IncomingDoc[];
  options: EditOptions;
  resolve: (results: EditResult[]) => void;
  reject: (err: unknown) => void;
}

type Job = { kind: 'edit'; request: EditRequest } | { kind: 'task'; run: () => Promise<void> };

export interface DatabaseSettings {
  /** Default `_revs_limit` for new databases. */
  revsLimit: number;
  /** Attachment compression settings, read at each upload. */
  attachments: () => AttachmentSettings;
  /**
   * A system database (the users or replicator database), as CouchDB opens those with its
   * sys_db option: its reads and writes are not counted in the statistics.
   */
  system?: boolean;
}

export class Database {
  readonly name: string;
  readonly instanceStartTime: string;
  /** Opened as a system database (DatabaseSettings.system). */
  readonly system: boolean;
  private meta!: Meta;
  private security: JsonObject = {};
  private queue: Job[] = [];
  /** Ranks of live documents, for `_all_docs` offsets. */
  private readonly liveRanks = new KeyRanks(prefixRange(Prefix.Live));
  private updating = false;
  private compactRunning = false;
  private readonly compactedListeners = new Set<() => void>();
  private listeners = new Set<(seq: number) => void>();
  private holders = 0;
  private closed = false;
  /** Set when closing: what an edit fails with (404 once deleted, else 503: the server stops). */
  private refusal: CouchError | undefined;
  private closing: Promise<void> | undefined;
  /**
   * Bumped after every commit that changed a design document (and every purge): caches of
   * design-document code (validators) compare it instead of reading anything per write.
   */
  designEpoch = 0;
  /** While compaction runs: every attachment digest a revision written meanwhile uses. */
  compactionDigests: Set<string> | undefined;

  readonly attachments: AttachmentStore;

  private constructor(name: string, readonly store: KeyValueStore, settings: DatabaseSettings) {
    this.name = name;
    this.system = settings.system ?? false;
    this.instanceStartTime = String(Date.now() * 1000);
    this.attachments = new AttachmentStore(store, settings.attachments);
  }

  static async open(name: string, store: KeyValueStore, settings: DatabaseSettings): Promise<Database> {
    const db = new Database(name, store, settings);
    const meta = await store.get(metaKey('info'));
    if (meta) {
      db.meta = decodeJson<Meta>(meta);
    } else {
      db.meta = { updateSeq: 0, purgeSeq: 0, docCount: 0, docDelCount: 0, revsLimit: settings.revsLimit, dataSize: 0 };
      await store.write([{ type: 'put', key: metaKey('info'), value: encodeJson(db.meta) }], { durable: true });
    }
    const security = await store.get(metaKey('security'));
    if (security) db.security = decodeJson<JsonObject>(security);
    return db;
  }

  get updateSeq(): number {
    return this.meta.updateSeq;
  }
  get purgeSeq(): number {
    return this.meta.purgeSeq;
  }
  get docCount(): number {
    return this.meta.docCount;
  }
  get revsLimit(): number {
    return this.meta.revsLimit;
  }

  async info(): Promise<DbInfo> {
    const diskSize = await this.store.diskSize();
    return {
      db_name: this.name,
      doc_count: this.meta.docCount,
      doc_del_count: this.meta.docDelCount,
      update_seq: this.meta.updateSeq,
      purge_seq: this.meta.purgeSeq,
      compact_running: this.compactRunning,
      disk_size: diskSize,
      data_size: this.meta.dataSize,
      instance_start_time: this.instanceStartTime,
      disk_format_version: DISK_FORMAT_VERSION,
      committed_update_seq: this.meta.updateSeq,
      sizes: { file: diskSize, active: this.meta.dataSize, external: this.meta.dataSize },
    };
  }

  // ---------------------------------------------------------------- change notification

  /** Calls `listener` after each compaction that finished; returns the unsubscribe function. */
  onCompacted(listener: () => void): () => void {
    this.compactedListeners.add(listener);
    return () => this.compactedListeners.delete(listener);
  }

  /** Calls `listener` with the new update_seq after every commit that changed documents. */
  onUpdate(listener: (seq: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves true once update_seq passes `seq`, false on timeout or abort. Costs nothing while
   * waiting: one listener, no polling.
   */
  waitForUpdate(seq: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.meta.updateSeq > seq) return Promise.resolve(true);
    if (signal?.aborted || this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (result: boolean) => {
        clearTimeout(timer);
        off();
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const off = this.onUpdate((s) => { if (s > seq || this.closed) finish(s > seq); });
      const onAbort = () => finish(false);
      // setTimeout treats delays past 2^31-1 ms as 1 ms: clamp "forever" to about 24 days.
      const timer = setTimeout(() => finish(false), Math.min(Math.max(0, timeoutMs), 0x7fffffff));
      signal?.addEventListener('abort', onAbort);
    });
  }

  // ---------------------------------------------------------------- reading documents

  async docInfo(id: string, key?: IdKey): Promise<DocInfo | undefined> {
    const [info] = await this.store.decodeMany([infoKey(key ?? id)], (bytes) => (bytes ? decodeDocInfo(bytes) : undefined));
    return info?.id === id ? info : undefined;
  }

  /** The infos of many documents in one storage round trip (undefined where there is none). */
  async docInfos(ids: readonly string[]): Promise<(DocInfo | undefined)[]> {
    return this.store.decodeMany(ids.map((id) => infoKey(id)), (bytes, i) => {
      if (!bytes) return undefined;
      const info = decodeDocInfo(bytes);
      return info.id === ids[i] ? info : undefined;
    });
  }

  private async revision(id: string, rev: string): Promise<{ body: string; attachments: string | undefined } | undefined> {
    const [record] = await this.store.decodeMany([revKey(id, rev)], (bytes) => (bytes ? decodeRevision(bytes) : undefined));
    return record;
  }

  /** Opens one revision (the winner by default) as CouchDB's JSON, with the requested metadata. */
  async openDoc(id: string, options: OpenOptions = {}): Promise<OpenedDoc> {
    const info = await this.docInfo(id);
    if (!info) throw notFound('missing');
    return this.openFromInfo(info, options);
  }

  async openFromInfo(info: DocInfo, options: OpenOptions = {}): Promise<OpenedDoc> {
    const win = revtree.winner(info.tree)!;
    let rev = options.rev;
    if (rev === undefined) {
      if (win.deleted) throw notFound('deleted');
      rev = win.rev;
    } else if (options.latest) {
      rev = latestLeafOf(info.tree, rev) ?? rev;
    }
    const found = await this.renderRevision(info, rev, options, rev === win.rev ? win.deleted : undefined);
    if (!found) throw notFound('missing');
    return found;
  }

  /**
   * Renders a specific revision, or undefined when it is unknown or its body is gone.
   * `knownDeleted` (when the caller has the leaf at hand) spares a walk of the tree.
   */
  async renderRevision(info: DocInfo, rev: string, options: OpenOptions = {}, knownDeleted?: boolean): Promise<OpenedDoc | undefined> {
    if (knownDeleted === undefined && !revtree.hasRev(info.tree, rev)) return undefined;
    const record = await this.revision(info.id, rev);
    if (!record) return undefined;
    const deleted = knownDeleted ?? nodeDeleted(info.tree, rev);
    const extras: [string, unknown][] = [];
    if (options.revs) {
      const path = revtree.pathTo(info.tree, rev)!;
      extras.push(['_revisions', { start: path.pos, ids: path.hashes }]);
    }
    if (options.revsInfo) extras.push(['_revs_info', revtree.revsInfo(info.tree, rev)]);
    if (options.conflicts || options.deletedConflicts) {
      const leaves = revtree.leaves(info.tree);
      const winRev = leaves[0]!.rev;
      if (options.conflicts) {
        const c = leaves.filter((l) => !l.deleted && l.rev !== winRev).map((l) => l.rev);
        if (c.length > 0) extras.push(['_conflicts', c]);
      }
      if (options.deletedConflicts) {
        const d = leaves.filter((l) => l.deleted && l.rev !== winRev).map((l) => l.rev);
        if (d.length > 0) extras.push(['_deleted_conflicts', d]);
      }
    }
    if (options.localSeq) extras.push(['_local_seq', info.seq]);
    let attachments = record.attachments;
    const follows: FollowingAttachment[] | undefined = options.attachmentsAs === 'follows' ? [] : undefined;
    if (attachments !== undefined && (options.attachments || options.attsSince || options.attEncodingInfo)) {
      attachments = await this.expandAttachments(info, rev, attachments, options, follows);
    }
    return {
      id: info.id, rev, deleted,
      json: renderDoc(info.id, rev, deleted, record.body, extras, attachments),
      ...(record.attachments !== undefined ? { attachments: record.attachments } : {}),
      ...(follows ? { follows } : {}),
    };
  }

  /**
   * Attachments with their content inline (`attachments=true`, or only those newer than
   * `atts_since`) and/or their encoding (`att_encoding_info=true`).
   */
  private async expandAttachments(info: DocInfo, rev: string, stubsJson: string, options: OpenOptions, follows?: FollowingAttachment[]): Promise<string> {
    const stubs = JSON.parse(stubsJson) as Record<string, StoredAttachment>;
    let sincePos = options.attachments ? 0 : Infinity;
    if (options.attsSince) {
      // Content the client lacks: attachments added after the newest listed revision it has
      // (with or without attachments=true: CouchDB's atts_since stubs the older ones either way).
      const path = revtree.pathTo(info.tree, rev)!;
      sincePos = 0;
      for (const known of options.attsSince) {
        const parsed = revtree.parseRev(known);
        if (!parsed) continue;
        const idx = path.pos - parsed.pos;
        if (idx >= 0 && idx < path.hashes.length && path.hashes[idx] === parsed.hash) sincePos = Math.max(sincePos, parsed.pos);
      }
    }
    const out: Record<string, Record<string, unknown>> = {};
    for (const [name, stub] of Object.entries(stubs)) {
      let entry: Record<string, unknown>;
      if (stub.revpos > sincePos && follows) {
        entry = { content_type: stub.content_type, revpos: stub.revpos, digest: stub.digest, length: stub.length, follows: true };
        const content = await this.attachments.info(stub.digest);
        if (content?.encoding) {
          entry['encoding'] = content.encoding;
          entry['encoded_length'] = content.encodedLength;
        }
        const encoded = content?.encoding !== undefined;
        follows.push({ name, contentType: stub.content_type, digest: stub.digest, length: encoded ? content.encodedLength! : stub.length, encoded });
        out[name] = entry;
        continue;
      } else if (stub.revpos > sincePos) {
        const data = await this.attachments.readAll(stub.digest, true);
        entry = { content_type: stub.content_type, revpos: stub.revpos, digest: stub.digest, data: data.toString('base64') };
      } else {
        entry = { ...stub };
      }
      if (options.attEncodingInfo) {
        const content = await this.attachments.info(stub.digest);
        if (content?.encoding) {
          entry['encoding'] = content.encoding;
          entry['encoded_length'] = content.encodedLength;
        }
      }
      out[name] = entry;
    }
    return JSON.stringify(out);
  }

  /**
   * Stores the content of a document's new attachments (inline base64 `data`, or `follows`
   * parts streamed by `follow`) and notes stubs, filling `doc.atts` for `edit`. Returns the
   * uploads, to release once the edit is done (compaction keeps them until then).
   */
  async prepareAttachments(doc: IncomingDoc, follow?: (name: string) => AsyncIterable<Buffer>): Promise<StoredContent[]> {
    const uploads: StoredContent[] = [];
    if (!doc.attachments) return uploads;
    const atts = new Map<string, AttachmentInput>();
    try {
      for (const [name, value] of Object.entries(doc.attachments)) {
        if (name === '') throw badRequest('Attachment name must not be empty');
        if (name.startsWith('_')) throw badRequest("Attachment name can't start with '_'");
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`Invalid attachment entry for ${name}`);
        const entry = value as Record<string, unknown>;
        const revpos = typeof entry['revpos'] === 'number' ? entry['revpos'] : undefined;
        if (entry['stub'] === true) {
          atts.set(name, { kind: 'stub', revpos, digest: typeof entry['digest'] === 'string' ? entry['digest'] : undefined });
          continue;
        }
        const contentType = typeof entry['content_type'] === 'string' ? entry['content_type'] : 'application/octet-stream';
        // Only content that follows may come encoded (couch_doc's att_encoding_info is read for
        // stubs and follows): inline data is the identity bytes, whatever `encoding` it carries,
        // as a document read with attachments=true&att_encoding_info=true gives it back.
        let encoding: 'gzip' | undefined;
        let source: AsyncIterable<Buffer>;
        if (typeof entry['data'] === 'string') {
          const bytes = decodeBase64(entry['data'], name);
          source = (async function* () { yield bytes; })();
        } else if (entry['follows'] === true && follow) {
          encoding = entry['encoding'] === 'gzip' ? 'gzip' : undefined;
          source = follow(name);
        } else if (entry['follows'] === true) {
          throw badRequest(`Attachment ${name} needs data, follows or stub`);
        } else {
          // Data missing or not a string: CouchDB 3's couch_att:inline_from_json says so (1.6's
          // base64:decode crashes on it).
          throw badRequest(`Invalid attachment data for ${name}`);
        }
        // A part that follows must have the digest its entry gives (couch_db's check_md5): of
        // the bytes as sent, which the store hashes itself unless it compresses them.
        const expected = entry['follows'] === true && typeof entry['digest'] === 'string' && entry['digest'].startsWith('md5-')
          ? entry['digest'] : undefined;
        const sentMd5 = expected !== undefined && encoding === undefined && this.attachments.isCompressible(contentType)
          ? createHash('md5') : undefined;
        if (sentMd5) source = hashedAs(source, sentMd5);
        const stored = await this.attachments.write(source, { contentType, encoding });
        uploads.push(stored);
        if (expected !== undefined && expected !== (sentMd5 ? `md5-${sentMd5.digest('base64')}` : stored.digest)) {
          throw new CouchError(400, 'content_md5_mismatch', 'Possible message corruption.');
        }
        atts.set(name, { kind: 'content', contentType, digest: stored.digest, length: stored.length, revpos });
      }
    } catch (err) {
      for (const upload of uploads) upload.release();
      throw err;
    }
    doc.atts = atts;
    return uploads;
  }

  /**
   * Renders a revision whose id and deleted flag the caller already knows (from the live index
   * or the by-sequence index): one body read, no revision-tree decoding. Undefined if gone.
   */
  async renderKnown(id: string, rev: string, deleted: boolean): Promise<OpenedDoc | undefined> {
    const record = await this.revision(id, rev);
    if (!record) return undefined;
    return { id, rev, deleted, json: renderDoc(id, rev, deleted, record.body, [], record.attachments) };
  }

  /** `open_revs`: each requested revision (or every leaf for 'all'), found or missing. */
  async openRevs(id: string, revs: 'all' | string[], options: OpenOptions = {}): Promise<({ ok: OpenedDoc } | { missing: string })[]> {
    const info = await this.docInfo(id);
    if (revs === 'all') {
      if (!info) throw notFound('missing');
      const out: { ok: OpenedDoc }[] = [];
      for (const leaf of revtree.leaves(info.tree)) {
        const doc = await this.renderRevision(info, leaf.rev, options);
        if (doc) out.push({ ok: doc });
      }
      return out;
    }
    const out: ({ ok: OpenedDoc } | { missing: string })[] = [];
    const seen = new Set<string>();
    for (const asked of revs) {
      // latest=true: every leaf descending from the asked revision (couch_key_tree:get_key_leafs).
      const under = info && options.latest ? leavesUnder(info.tree, asked) : [];
      const found = under.length > 0 ? under : [asked];
      for (const rev of found) {
        if (seen.has(rev)) continue;
        seen.add(rev);
        const doc = info ? await this.renderRevision(info, rev, options) : undefined;
        out.push(doc ? { ok: doc } : { missing: asked });
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- writing documents

  /** Applies edits through the updater queue; resolves with one result per document, in order. */
  edit(docs: IncomingDoc[], options: EditOptions): Promise<EditResult[]> {
    // A database closes under a request that holds it (see retain) only when it is deleted, or
    // the server stops or restarts.
    if (this.refusal) return Promise.reject(this.refusal);
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'edit', request: { docs, options, resolve, reject } });
      this.kick();
    });
  }

  /** Runs `run` alone on the updater, between write batches (compaction, purge, settings). */
  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind: 'task', run: () => run().then(resolve, reject) });
      this.kick();
    });
  }

  private kick(): void {
    if (this.updating) return;
    this.updating = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0]!;
        if (head.kind === 'task') {
          this.queue.shift();
          await head.run();
          continue;
        }
        const batch: EditRequest[] = [];
        while (this.queue.length > 0 && this.queue[0]!.kind === 'edit') {
          batch.push((this.queue.shift() as { request: EditRequest }).request);
        }
        await this.applyBatch(batch);
      }
    } finally {
      this.updating = false;
    }
  }

  /**
   * Stages and commits one batch. The next batch may start as soon as this one is committed
   * (visible); its fsync runs meanwhile, and only then are durable writers answered. So the
   * disk flush of one batch overlaps the work of the next instead of serialising them.
   */
  private async applyBatch(batch: EditRequest[]): Promise<void> {
    const before = this.meta.updateSeq;
    const staged = new Batch(this);
    const outcomes: (EditResult[] | CouchError)[] = [];
    // Large non-atomic batches commit in parts: while the store commits one part, the next is
    // staged, so document work and storage work overlap instead of taking turns. At most
    // PARTS_IN_FLIGHT parts are uncommitted at once, so no transaction holds more than that
    // many parts: LMDB keeps the pages a transaction dirtied for reuse until the database
    // closes (one transaction of 10,000 scattered edits held ~30 MB for good).
    const commits: Promise<void>[] = [];
    const commitPart = async () => {
      const earlier = commits[commits.length - PARTS_IN_FLIGHT];
      if (earlier) await earlier;
      commits.push(this.store.write(staged.take(), { durable: false }));
      await new Promise<void>((resolve) => setImmediate(resolve));
    };
    try {
      for (const request of batch) {
        outcomes.push(await staged.applyRequest(request, commitPart));
      }
      commits.push(this.store.write(staged.take(), { durable: false }));
      await Promise.all(commits);
      this.meta = staged.meta;
      if (staged.touchedDesign) this.designEpoch++;
    } catch (err) {
      await Promise.allSettled(commits);
      // Some parts may have committed: take the metadata back from what the store holds.
      const stored = await this.store.get(metaKey('info')).catch(() => undefined);
      if (stored) this.meta = decodeJson<Meta>(stored);
      for (const request of batch) request.reject(err);
      return;
    }
    const answer = (request: EditRequest, i: number) => {
      const outcome = outcomes[i]!;
      if (outcome instanceof CouchError) request.reject(outcome);
      else request.resolve(outcome);
    };
    const durable = batch.filter((r) => r.options.durable);
    batch.forEach((request, i) => { if (!request.options.durable) answer(request, i); });
    if (durable.length > 0) {
      this.store.sync().then(
        () => batch.forEach((request, i) => { if (request.options.durable) answer(request, i); }),
        (err: unknown) => durable.forEach((request) => request.reject(err)),
      );
    }
    if (this.meta.updateSeq !== before) this.notify();
  }

  private notify(): void {
    const seq = this.meta.updateSeq;
    for (const listener of [...this.listeners]) listener(seq);
  }

  /** @internal used by Batch */
  get currentMeta(): Meta {
    return this.meta;
  }

  // ---------------------------------------------------------------- _local documents

  async getLocal(id: string): Promise<LocalRecord | undefined> {
    const bytes = await this.store.get(localKey(id));
    if (!bytes) return undefined;
    const rec = decodeJson<LocalRecord>(bytes);
    return rec.id === id ? rec : undefined;
  }

  openLocal(rec: LocalRecord, withRevs = false): string {
    const extras: [string, unknown][] = withRevs ? [['_revisions', { start: 0, ids: [String(rec.rev)] }]] : [];
    return renderDoc(rec.id, `0-${rec.rev}`, false, rec.body, extras);
  }

  /** Writes or deletes a local document; its revision is `0-N`, checked like any other. */
  putLocal(doc: IncomingDoc, durable: boolean): Promise<string> {
    const id = doc.id!;
    return this.exclusive(async () => {
      const current = await this.getLocal(id);
      const given = doc.rev === undefined ? undefined : Number(doc.rev.split('-')[1]);
      if (current ? given !== current.rev : given !== undefined && given !== 0) throw conflict();
      if (doc.deleted) {
        // Deleting what is not there, from revision 0, changes nothing and answers 0-0 (as
        // couch_db_updater:update_local_docs: a DELETE looks the document up first, a 404).
        if (current) await this.store.write([{ type: 'del', key: localKey(id) }], { durable });
        return `0-0`;
      }
      const rec: LocalRecord = { id, rev: (current?.rev ?? 0) + 1, body: JSON.stringify(doc.body) };
      await this.store.write([{ type: 'put', key: localKey(id), value: encodeJson(rec) }], { durable });
      return `0-${rec.rev}`;
    });
  }

  // ---------------------------------------------------------------- listings

  /**
   * Live documents by id (byte order of the UTF-8 id, as CouchDB's raw collation), in chunks,
   * read from one snapshot.
   */
  allDocs(options: IdRangeOptions): AsyncIterable<{ id: string; rev: string }[]> {
    return this.listById(Prefix.Live, options, (e) => decodeLive(e.key, e.value));
  }

  /** The live design documents by id, in chunks, read from one snapshot. */
  designDocs(): AsyncIterable<{ id: string; rev: string }[]> {
    return this.allDocs({ start: DESIGN_IDS.low, end: DESIGN_IDS.high, inclusiveEnd: false });
  }

  /** `_local` documents by id (`_local_docs`), in chunks, read from one snapshot. */
  localDocs(options: IdRangeOptions): AsyncIterable<LocalRecord[]> {
    return this.listById(Prefix.Local, options, (e) => decodeJson<LocalRecord>(e.value));
  }

  private async *listById<T>(prefix: Prefix.Live | Prefix.Local, options: IdRangeOptions, decode: (entry: Entry) => T): AsyncIterable<T[]> {
    const range = idRange(prefix, options);
    if (range.empty) return;
    const snapshot = await this.store.snapshot();
    try {
      const chunks = snapshot.rangeChunks({ ...range.bounds, reverse: options.descending ?? false }, CHUNK);
      for await (const entries of skipAndLimit(chunks, options.skip ?? 0, options.limit ?? Infinity)) yield entries.map(decode);
    } finally {
      snapshot.release();
    }
  }

  /** How many live documents sort before `start` (the `offset` of an _all_docs query). */
  async countLiveBefore(start: string | undefined, descending: boolean): Promise<number> {
    if (start === undefined) return 0;
    const { gte, lt } = prefixRange(Prefix.Live);
    const startKey = liveKey(start);
    const snapshot = await this.store.snapshot();
    try {
      // The sequence this snapshot holds: every committed part of a batch writes its metadata.
      const stored = await snapshot.get(metaKey('info'));
      const seq = stored ? decodeJson<Meta>(stored).updateSeq : -1;
      if (!descending) return await this.liveRanks.count(snapshot, seq, gte, startKey);
      // Descending: the documents after `start`, i.e. from the first key past it.
      return await this.liveRanks.count(snapshot, seq, Buffer.concat([startKey, ZERO_BYTE]), lt);
    } finally {
      snapshot.release();
    }
  }

  /**
   * How many documents changed after `since` (couch_db:count_changes_since): one by-sequence
   * entry each. From the start that is every document, deleted ones included: no count needed.
   */
  async changeCount(since: number): Promise<number> {
    if (since <= 0) return this.meta.docCount + this.meta.docDelCount;
    return this.store.count({ gt: seqKey(since), lt: prefixRange(Prefix.Seq).lt });
  }

  /** Changes after `since`, one per document (its latest), in sequence order, in chunks. */
  async *changes(since: number, options: { descending?: boolean; limit?: number } = {}): AsyncIterable<ChangeRow[]> {
    const { lt } = prefixRange(Prefix.Seq);
    const bounds = options.descending ? { gte: seqKey(0), lt, reverse: true } : { gt: seqKey(Math.max(0, since)), lt };
    let limit = options.limit ?? Infinity;
    if (limit <= 0) return;
    const snapshot = await this.store.snapshot();
    try {
      for await (const entries of snapshot.rangeChunks(bounds, Math.min(CHUNK, limit))) {
        const take = Math.min(entries.length, limit);
        const rows = new Array<ChangeRow>(take);
        for (let i = 0; i < take; i++) {
          const { key, value } = entries[i]!;
          const change = decodeChange(value) as ChangeRow;
          change.seq = seqFromKey(key);
          rows[i] = change;
        }
        yield rows;
        limit -= take;
        if (limit <= 0) break;
      }
    } finally {
      snapshot.release();
    }
  }

  /**
   * A document's `_conflicts` (and, when asked, `_deleted_conflicts`) as JSON members to splice
   * into its rendered winner, or '' when it has none: what map functions see of a document with
   * other leaves.
   */
  async conflictMembers(id: string, withDeleted: boolean): Promise<string> {
    const info = await this.docInfo(id);
    return info ? conflictMembers(info.tree, withDeleted) : '';
  }

  /**
   * Renders many revisions known from an index at once (see `renderKnown`); one storage round
   * trip for the whole list.
   */
  async renderKnownMany(items: readonly { id: string; rev: string; deleted: boolean }[]): Promise<(OpenedDoc | undefined)[]> {
    return this.store.decodeMany(items.map((item) => revKey(item.id, item.rev)), (bytes, i) => {
      if (!bytes) return undefined;
      const { id, rev, deleted } = items[i]!;
      const record = decodeRevision(bytes);
      return { id, rev, deleted, json: renderDoc(id, rev, deleted, record.body, [], record.attachments) };
    });
  }

  /**
   * Writes the JSON of many revisions known from an index to `out`, one text each, as
   * renderKnownMany renders them, with `members(i)` spliced in before item i's closing brace:
   * the body and attachment stubs are copied from the store's bytes, unparsed and undecoded.
   * Says for each item whether its revision was found (and a text written).
   */
  async packKnownMany(items: readonly { id: string; rev: string; deleted: boolean }[], out: PackedJsonWriter, members: (index: number) => string): Promise<boolean[]> {
    return this.store.decodeMany(items.map((item) => revKey(item.id, item.rev)), (bytes, i) => {
      if (!bytes) return false;
      const { id, rev, deleted } = items[i]!;
      const { body, attachments } = revisionSpans(bytes);
      out.text(docHeadJson(id, rev, deleted));
      out.objectMembers(bytes, body[0], body[1]);
      if (attachments) {
        out.text(',"_attachments":');
        out.bytes(bytes, attachments[0], attachments[1]);
      }
      out.text(`${members(i)}}`);
      out.endText();
      return true;
    });
  }

  // ---------------------------------------------------------------- replication support

  /** `_revs_diff`: which of the given revisions this database lacks, with possible ancestors. */
  async revsDiff(request: Record<string, string[]>): Promise<Record<string, { missing: string[]; possible_ancestors?: string[] }>> {
    const out: Record<string, { missing: string[]; possible_ancestors?: string[] }> = {};
    for (const [id, revs] of Object.entries(request)) {
      const info = await this.docInfo(id);
      // As couch_db:get_missing_revs: in couch_key_tree's order, and the possible ancestors (leaves
      // below some missing revision) in the reverse of the winner-first order.
      const missing = info ? revtree.missingRevs(info.tree, revs) : [...revs];
      // couch_db:find_missing answers an unknown document with the revisions asked, even none;
      // a known one only when something is missing.
      if (info && missing.length === 0) continue;
      const entry: { missing: string[]; possible_ancestors?: string[] } = { missing };
      if (info) {
        const maxPos = Math.max(...missing.map((r) => revtree.parseRev(r)?.pos ?? 0));
        const ancestors = revtree.leaves(info.tree).filter((l) => l.pos < maxPos).map((l) => l.rev).reverse();
        if (ancestors.length > 0) entry.possible_ancestors = ancestors;
      }
      out[id] = entry;
    }
    return out;
  }

  // ---------------------------------------------------------------- maintenance

  async setRevsLimit(limit: number): Promise<void> {
    await this.exclusive(async () => {
      const meta = { ...this.meta, revsLimit: limit };
      await this.store.write([{ type: 'put', key: metaKey('info'), value: encodeJson(meta) }], { durable: true });
      this.meta = meta;
    });
  }

  getSecurity(): JsonObject {
    return this.security;
  }

  async setSecurity(security: JsonObject): Promise<void> {
    await this.exclusive(async () => {
      await this.store.write([{ type: 'put', key: metaKey('security'), value: encodeJson(security) }], { durable: true });
      this.security = security;
    });
  }

  /** Removes the given leaf revisions entirely, as if they had never been written. */
  purge(request: Record<string, string[]>): Promise<{ purge_seq: number; purged: Record<string, string[]> }> {
    return this.exclusive(async () => {
      const purged: Record<string, string[]> = {};
      const ops: WriteOp[] = [];
      const meta = { ...this.meta };
      for (const [id, revs] of Object.entries(request)) {
        const info = await this.docInfo(id);
        if (!info) continue;
        const { tree, removed } = revtree.removeLeaves(info.tree, revs);
        if (removed.length === 0) continue;
        purged[id] = removed;
        const oldWin = revtree.winner(info.tree)!;
        // The bodies of every revision the tree lost: the purged leaves and the ancestors that
        // led only to them, which compaction, walking the trees, would never find again (CouchDB's
        // compaction copies only what the trees hold, so a purged branch leaves no trace).
        const kept = new Set(revtree.allRevs(tree));
        for (const rev of revtree.allRevs(info.tree)) if (!kept.has(rev)) ops.push({ type: 'del', key: revKey(id, rev) });
        ops.push({ type: 'del', key: seqKey(info.seq) });
        countWinner(meta, oldWin, -1);
        const oldInfoBytes = encodeDocInfo(info);
        meta.dataSize -= oldInfoBytes.length + leafBytes(info);
        if (tree.length === 0) {
          ops.push({ type: 'del', key: infoKey(id) }, { type: 'del', key: liveKey(id) });
          continue;
        }
        meta.updateSeq += 1;
        const next: DocInfo = { id, seq: meta.updateSeq, tree, sizes: carriedSizes(info, tree) };
        writeInfo(ops, meta, next);
      }
      // A purge request is itself an update, as in CouchDB 1.6: both sequences move even when
      // nothing matched (couch_db_updater counts the request, not what it removed).
      meta.updateSeq += 1;
      meta.purgeSeq += 1;
      ops.push({ type: 'put', key: purgeKey(meta.purgeSeq), value: encodeJson(purged) });
      ops.push({ type: 'put', key: metaKey('info'), value: encodeJson(meta) });
      await this.store.write(ops, { durable: true });
      this.meta = meta;
      this.designEpoch++;
      this.notify();
      return { purge_seq: this.meta.purgeSeq, purged };
    });
  }

  /** Purges recorded after `since`, for views catching up. */
  async *purgesSince(since: number): AsyncIterable<{ seq: number; purged: Record<string, string[]> }> {
    for await (const { key, value } of this.store.range({ gt: purgeKey(since), lt: prefixRange(Prefix.Purge).lt })) {
      yield { seq: seqFromKey(key), purged: decodeJson<Record<string, string[]>>(value) };
    }
  }

  /**
   * Keeps the database open for a long-lived reader (a live changes feed) even while it waits
   * between changes; call the returned function when done.
   */
  retain(): () => void {
    this.holders++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.holders--;
      }
    };
  }

  /** Closed or closing: it takes no new work. */
  get isClosed(): boolean {
    return this.refusal !== undefined;
  }

  /** Closed because it is deleted (or being deleted). */
  get isDeleted(): boolean {
    return this.refusal?.status === 404;
  }

  /** Nothing queued, running or held: safe for the LRU to close. */
  get isIdle(): boolean {
    return !this.updating && this.queue.length === 0 && this.holders === 0 && !this.compactRunning;
  }

  get isCompacting(): boolean {
    return this.compactRunning;
  }

  /**
   * Drops bodies of revisions that are no longer leaves, then rewrites the store to give the
   * space back. Writes go on throughout: the first phase works in short turns between write
   * batches, and the store's rewrite journals and replays what is written meanwhile.
   */
  compact(progress?: (done: number, total: number) => void): Promise<void> {
    if (this.compactRunning) return Promise.resolve();
    this.compactRunning = true;
    const run = async () => {
      const total = this.meta.docCount + this.meta.docDelCount;
      // Attachment content the surviving (leaf) revisions use; the rest goes after this pass.
      // Edits made meanwhile add theirs (see Batch), so content they use is kept too.
      const referenced = new Set<string>();
      this.compactionDigests = referenced;
      let done = 0;
      let after: Uint8Array | undefined;
      for (;;) {
        // Deleted meanwhile (or closing): nothing left to compact. Checked from the start of the
        // close, before a chunk queues behind it and finds the store refusing reads.
        if (this.refusal) return;
        const chunk = await this.exclusive(async () => {
          const { gte, lt } = prefixRange(Prefix.Info);
          const ops: WriteOp[] = [];
          let last: Uint8Array | undefined;
          let n = 0;
          const leafKeys: Uint8Array[] = [];
          for await (const { key, value } of this.store.range({ ...(after ? { gt: after } : { gte }), lt, limit: 500 })) {
            last = key;
            n++;
            const info = decodeDocInfo(value);
            const leafRevs = new Set(revtree.leaves(info.tree).map((l) => l.rev));
            leafKeys.push(...[...leafRevs].map((rev) => revKey(info.id, rev)));
            const stale = revtree.allRevs(info.tree).filter((rev) => !leafRevs.has(rev) && nodeAvailable(info.tree, rev));
            // Histories longer than `_revs_limit` (edits made before it was lowered) are stemmed
            // here, as CouchDB's compactor does; stemming only ever drops ancestors.
            const stemmed = revtree.stem(info.tree, this.meta.revsLimit);
            const wasStemmed = stemmed !== info.tree && revtree.allRevs(stemmed).length < revtree.allRevs(info.tree).length;
            if (stale.length === 0 && !wasStemmed) continue;
            for (const rev of stale) ops.push({ type: 'del', key: revKey(info.id, rev) });
            const next: DocInfo = { ...info, tree: revtree.markUnavailable(wasStemmed ? stemmed : info.tree, new Set(stale)) };
            ops.push({ type: 'put', key: infoKey(info.id), value: encodeDocInfo(next) });
          }
          const leafAtts = await this.store.decodeMany(leafKeys, (bytes) => (bytes ? decodeRevision(bytes).attachments : undefined));
          for (const atts of leafAtts) {
            if (atts) for (const att of Object.values(JSON.parse(atts) as Record<string, StoredAttachment>)) referenced.add(att.digest);
          }
          if (ops.length > 0) await this.store.write(ops, { durable: false });
          return { last, n };
        });
        done += chunk.n;
        progress?.(done, total);
        if (!chunk.last || chunk.n < 500) break;
        after = chunk.last;
        // A chunk can complete without touching the event loop (reads answered at once, nothing
        // to delete): let requests in between, or the whole pass would hold the server.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (this.refusal) return;
      await this.attachments.collectGarbage(referenced);
      await this.store.compact();
      for (const listener of this.compactedListeners) listener();
    };
    return run().finally(() => {
      this.compactRunning = false;
      this.compactionDigests = undefined;
    });
  }

  /** Makes every acknowledged write durable (`_ensure_full_commit`). */
  async ensureFullCommit(): Promise<void> {
    await this.store.sync();
  }

  /** Closes after the writes queued so far; `deleted` when its store is about to be destroyed. */
  close(options: { deleted?: boolean } = {}): Promise<void> {
    this.closing ??= (async () => {
      this.refusal = databaseClosed(options.deleted ?? false);
      await this.exclusive(async () => {});
      this.closed = true;
      this.notify();
      await this.store.close(options);
    })();
    return this.closing;
  }
}

/**
 * One updater batch: the edits of several requests staged in memory (document infos cached so
 * several edits to one document chain correctly), turned into one atomic write.
 */
class Batch {
  meta: Meta;
  private readonly infos = new Map<string, DocInfo | null>();
  /** Attachments of revisions stubs may point at (null: revision not stored), by attsKey. */
  private readonly parentAtts = new Map<string, Record<string, StoredAttachment> | null>();
  private readonly ops: WriteOp[] = [];
  private stagedDocs = 0;
  /** Whether an edit of this batch changed a design document. */
  touchedDesign = false;

  constructor(private readonly db: Database) {
    this.meta = { ...db.currentMeta };
  }

  /**
   * Reads, at once, the attachments of the revisions that stub attachments of `docs` may refer
   * to: the edited revision, or for replicated revisions their nearest stored ancestors.
   */
  private async prefetchStubSources(docs: readonly IncomingDoc[], newEdits: boolean): Promise<void> {
    const wanted: { id: string; rev: string }[] = [];
    for (const doc of docs) {
      if (!doc.atts || ![...doc.atts.values()].some((a) => a.kind === 'stub')) continue;
      for (const rev of stubSourceCandidates(doc, newEdits)) {
        if (!this.parentAtts.has(attsKey(doc.id!, rev))) wanted.push({ id: doc.id!, rev });
      }
    }
    if (wanted.length === 0) return;
    const records = await this.db.store.decodeMany(wanted.map((w) => revKey(w.id, w.rev)), (bytes) => (bytes ? decodeRevision(bytes) : undefined));
    records.forEach((rec, i) => {
      this.parentAtts.set(attsKey(wanted[i]!.id, wanted[i]!.rev), rec?.attachments ? JSON.parse(rec.attachments) as Record<string, StoredAttachment> : rec ? {} : null);
    });
  }

  /** Reads the infos of every document the request names that the batch has not seen, at once. */
  private async prefetch(docs: readonly IncomingDoc[]): Promise<void> {
    const ids: string[] = [];
    const keys: Buffer[] = [];
    for (const doc of docs) {
      const id = doc.id!;
      if (this.infos.has(id)) continue;
      this.infos.set(id, null);
      ids.push(id);
      keys.push(infoKey(id));
    }
    if (ids.length === 0) return;
    await this.db.store.decodeMany(keys, (bytes, i) => {
      if (!bytes) return;
      const info = decodeDocInfo(bytes);
      // A cut key may be shared by two long ids: the record says whose it is.
      if (info.id === ids[i]) this.infos.set(ids[i]!, info);
    });
  }

  /**
   * Stages a request's edits: one result per document, or the error that refuses the whole
   * request (nothing of it staged). Unless the request must be staged whole, `commitPart` is
   * called between documents every PART_SIZE of them, to hand what is staged so far to the store.
   */
  async applyRequest(request: EditRequest, commitPart: () => Promise<void>): Promise<EditResult[] | CouchError> {
    const { options } = request;
    await this.prefetch(request.docs);
    await this.prefetchStubSources(request.docs, options.newEdits);
    // all_or_nothing, or stubs that may name nothing: stage on a copy, kept only if the
    // request goes through (staged whole, no part committed before the end).
    const saved = options.allOrNothing || request.docs.some(hasStubs)
      ? { meta: { ...this.meta }, ops: this.ops.length, infos: new Map(this.infos) }
      : undefined;
    const restore = () => {
      this.meta = saved!.meta;
      this.ops.length = saved!.ops;
      this.infos.clear();
      for (const [k, v] of saved!.infos) this.infos.set(k, v);
    };
    const results: EditResult[] = [];
    for (const doc of request.docs) {
      if (!saved && this.staged >= PART_SIZE) await commitPart();
      try {
        results.push(this.applyEdit(doc, options));
      } catch (err) {
        const e = toCouchError(err);
        // A stub naming no attachment fails the whole request, as couch_doc:merge_stubs' throw
        // leaves CouchDB's update_docs.
        if (e.error === 'missing_stub') {
          restore();
          return e;
        }
        // Whatever else one document does wrong is that document's error, never its batch-mates'.
        results.push({ id: doc.id ?? '', ok: false, error: e.error, reason: e.reason, status: e.status });
      }
    }
    if (options.allOrNothing && results.some((r) => !r.ok)) restore();
    return results;
  }

  /** One document's edit against the batch's staged state (prefetched: no I/O here). */
  private applyEdit(doc: IncomingDoc, options: EditOptions): EditResult {
    const id = doc.id!;
    const key = idKey(id);
    const info = this.infos.get(id) ?? null;
    const tree: RevTree = info?.tree ?? [];
    let path: revtree.RevPath;
    let newRev: string;
    let atts: Record<string, StoredAttachment> | undefined;

    if (options.newEdits) {
      let parent: string | null = null;
      let pos = 1;
      const win = revtree.winner(tree);
      if (doc.rev !== undefined) {
        const parsed = revtree.parseRev(doc.rev)!;
        if (!info) {
          // A new document's stubs name nothing: missing_stub comes before the conflict
          // (couch_db:prep_and_validate_updates merges stubs first).
          const stub = [...(doc.atts ?? [])].find(([, att]) => att.kind === 'stub');
          if (stub) throw missingStub(id, stub[0]);
          throw conflict();
        }
        if (!options.allOrNothing && !revtree.isLeaf(tree, doc.rev)) throw conflict();
        parent = doc.rev;
        pos = parsed.pos + 1;
      } else if (win) {
        if (!win.deleted && !options.allOrNothing) throw conflict();
        if (win.deleted) {
          parent = win.rev;
          pos = win.pos + 1;
        }
      }
      atts = this.resolveAttachments(doc, pos, parent ? [parent] : [], true);
      const hash = newRevHash(doc.deleted, parent, doc.body, atts ? Object.entries(atts).map(([name, a]) => ({ name, contentType: a.content_type, digest: a.digest })) : []);
      path = { pos, hashes: parent ? [hash, revtree.parseRev(parent)!.hash] : [hash] };
      newRev = revtree.formatRev(pos, hash);
    } else {
      if (doc.rev === undefined) throw badRequest('new_edits=false requires _rev');
      const parsed = revtree.parseRev(doc.rev)!;
      // parseIncomingDoc made `_rev` the head of `_revisions` when there is one.
      path = doc.revisions ?? { pos: parsed.pos, hashes: [parsed.hash] };
      newRev = doc.rev;
      if (revtree.hasRev(tree, newRev)) return { id, ok: true, rev: newRev, changed: false };
      atts = this.resolveAttachments(doc, parsed.pos, stubSourceCandidates(doc, false), false);
    }

    const merged = revtree.merge(tree, path, doc.deleted);
    if (!merged.added) {
      // The revision exists already: all_or_nothing merges it silently (CouchDB's merge_conflicts).
      if (options.newEdits && !options.allOrNothing) throw conflict();
      return { id, ok: true, rev: newRev, changed: false };
    }
    if (doc.noNewConflict && liveLeafCount(merged.tree) > Math.max(1, liveLeafCount(tree))) throw conflict();
    const stemmed = revtree.stem(merged.tree, this.meta.revsLimit);
    const attachmentsJson = atts ? JSON.stringify(atts) : undefined;
    if (atts && this.db.compactionDigests) for (const att of Object.values(atts)) this.db.compactionDigests.add(att.digest);
    const record = encodeRevision({ body: doc.bodyJson, attachments: attachmentsJson });
    this.ops.push({ type: 'put', key: revKey(key, newRev), value: record });
    // Stubs of later documents in the batch may name this revision (one without attachments can
    // serve no stub, so it needs no entry).
    if (atts) this.parentAtts.set(attsKey(id, newRev), atts);
    if (stemmed !== merged.tree) {
      const kept = new Set(revtree.allRevs(stemmed));
      for (const rev of revtree.allRevs(merged.tree)) {
        if (!kept.has(rev)) this.ops.push({ type: 'del', key: revKey(key, rev) });
      }
    }

    if (info) {
      this.ops.push({ type: 'del', key: seqKey(info.seq) });
      countWinner(this.meta, revtree.winner(info.tree)!, -1);
      this.meta.dataSize -= encodeDocInfo(info).length + leafBytes(info);
    }
    this.meta.updateSeq += 1;
    const sizes = carriedSizes(info, stemmed, { rev: newRev, size: record.length + attachmentBytes(atts) });
    const next: DocInfo = { id, seq: this.meta.updateSeq, tree: stemmed, sizes };
    writeInfo(this.ops, this.meta, next, key);
    this.infos.set(id, next);
    this.stagedDocs++;
    if (id.startsWith('_design/')) this.touchedDesign = true;
    return { id, ok: true, rev: newRev, changed: true };
  }

  /**
   * The attachments a new revision stores: new content gets the revision's pos as revpos (in an
   * interactive edit whatever revpos the client sent, as CouchDB's set_new_att_revpos does; a
   * replicated revision keeps the sent one); a stub copies the attachment of that name from the
   * first source revision that has it, or is a 412 missing_stub.
   */
  private resolveAttachments(doc: IncomingDoc, pos: number, sources: readonly string[], interactive: boolean): Record<string, StoredAttachment> | undefined {
    if (!doc.atts || doc.atts.size === 0) return undefined;
    const out: Record<string, StoredAttachment> = {};
    for (const [name, att] of doc.atts) {
      if (att.kind === 'content') {
        const revpos = interactive && !att.stored ? pos : att.revpos ?? pos;
        out[name] = { content_type: att.contentType, revpos, digest: att.digest, length: att.length, stub: true };
        continue;
      }
      let found: StoredAttachment | undefined;
      for (const rev of sources) {
        found = this.parentAtts.get(attsKey(doc.id!, rev))?.[name];
        if (found) break;
      }
      // CouchDB matches stubs by name and, when the stub names one, revpos (couch_doc:merge_stubs);
      // a stub's digest is not compared (clients compute their own, e.g. of uncompressed bytes).
      if (!found || (att.revpos !== undefined && att.revpos !== found.revpos)) {
        // A replicated revision of a known document without any stored ancestor has no previous
        // revision to take stubs from (couch_db's make_first_doc_on_disk finds none).
        const noAncestor = !interactive && this.infos.get(doc.id!) && !sources.some((rev) => this.parentAtts.get(attsKey(doc.id!, rev)));
        if (noAncestor) throw new CouchError(412, 'missing_stub', `Previous revision missing for document ${doc.id}`);
        throw missingStub(doc.id!, name);
      }
      out[name] = found;
    }
    return out;
  }

  /** Documents staged since the last `take`. */
  get staged(): number {
    return this.stagedDocs;
  }

  /** Hands over the staged operations, with the metadata as it stands after them. */
  take(): WriteOp[] {
    const ops = this.ops.splice(0, this.ops.length);
    ops.push({ type: 'put', key: metaKey('info'), value: encodeJson(this.meta) });
    this.stagedDocs = 0;
    return ops;
  }
}

/** Stages the records of a document's new state: info, by-seq entry and live index. */
function writeInfo(ops: WriteOp[], meta: Meta, info: DocInfo, key: IdKey = idKey(info.id)): void {
  const leaves = revtree.leaves(info.tree);
  const win = leaves[0]!;
  const infoBytes = encodeDocInfo(info);
  ops.push({ type: 'put', key: infoKey(key), value: infoBytes });
  const change: ChangeRecord = { id: info.id, rev: win.rev, deleted: win.deleted, others: leaves.length > 1 ? leaves.slice(1).map((l) => l.rev) : [] };
  ops.push({ type: 'put', key: seqKey(info.seq), value: encodeChange(change) });
  if (win.deleted) ops.push({ type: 'del', key: liveKey(key) });
  else ops.push({ type: 'put', key: liveKey(key), value: encodeLive(key, win.rev, info.id) });
  countWinner(meta, win, +1);
  meta.dataSize += infoBytes.length + leafBytes(info);
}

function countWinner(meta: Meta, win: Leaf, delta: number): void {
  if (win.deleted) meta.docDelCount += delta;
  else meta.docCount += delta;
}

function leafBytes(info: DocInfo): number {
  let total = 0;
  for (const size of info.sizes) total += size;
  return total;
}

/** Whether an incoming document keeps any attachment as a stub (the request may then be refused whole). */
function hasStubs(doc: IncomingDoc): boolean {
  if (!doc.atts) return false;
  for (const att of doc.atts.values()) if (att.kind === 'stub') return true;
  return false;
}

/** A stub naming no attachment of the edited revision, in CouchDB 1.6's words (couch_doc:merge_stubs). */
function missingStub(id: string, name: string): CouchError {
  return new CouchError(412, 'missing_stub', `id:${id}, name:${name}`);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(data: string, name: string): Buffer {
  const compact = data.replace(/\s+/g, '');
  if (compact.length % 4 === 1 || !BASE64.test(compact)) throw badRequest(`Invalid attachment data for ${name}`);
  return Buffer.from(compact, 'base64');
}

/** An attachment as a revision stores it: CouchDB's stub, ready to splice into responses. */
export interface StoredAttachment {
  content_type: string;
  revpos: number;
  digest: string;
  length: number;
  stub: true;
}

const ZERO_BYTE = Buffer.of(0);

const attsKey = (id: string, rev: string): string => `${id}\u0000${rev}`;

/** The attachment bytes a revision carries, counted in its share of data_size. */
function attachmentBytes(atts: Record<string, StoredAttachment> | undefined): number {
  let total = 0;
  if (atts) for (const att of Object.values(atts)) total += att.length;
  return total;
}

/** The leaves that are not deletions: more than one is a conflict. */
function liveLeafCount(tree: RevTree): number {
  return revtree.leaves(tree).filter((leaf) => !leaf.deleted).length;
}

/**
 * Revisions whose attachments a document's stubs may refer to: the edited revision; for a
 * replicated revision, its ancestors as `_revisions` lists them, nearest first.
 */
function stubSourceCandidates(doc: IncomingDoc, newEdits: boolean): string[] {
  if (newEdits) return doc.rev !== undefined ? [doc.rev] : [];
  if (!doc.revisions) return [];
  const { pos, hashes } = doc.revisions;
  return hashes.slice(1).map((hash, i) => revtree.formatRev(pos - 1 - i, hash));
}

function nodeDeleted(tree: RevTree, rev: string): boolean {
  const info = revtree.revsInfo(tree, rev);
  return info?.[0]?.status === 'deleted';
}

function nodeAvailable(tree: RevTree, rev: string): boolean {
  const info = revtree.revsInfo(tree, rev);
  return info !== undefined && info[0]!.status !== 'missing';
}

/** The newest leaf descending from `rev` (CouchDB's `latest=true`), or undefined. */
function latestLeafOf(tree: RevTree, rev: string): string | undefined {
  return leavesUnder(tree, rev)[0];
}

/** Every leaf whose history holds `rev` (itself, when it is a leaf); none if `rev` is unknown. */
function leavesUnder(tree: RevTree, rev: string): string[] {
  if (!revtree.hasRev(tree, rev)) return [];
  const parsed = revtree.parseRev(rev)!;
  return revtree.leaves(tree).filter((leaf) => {
    const path = revtree.pathTo(tree, leaf.rev)!;
    const idx = path.pos - parsed.pos;
    return idx >= 0 && path.hashes[idx] === parsed.hash;
  }).map((leaf) => leaf.rev);
}

function encodeLive(key: IdKey, rev: string, id: string): Uint8Array {
  return encodeText(key.cut ? `${rev}\u0000${id}` : rev);
}

function decodeLive(key: Uint8Array, value: Uint8Array): { id: string; rev: string } {
  const text = decodeText(value);
  const nul = text.indexOf('\u0000');
  if (nul >= 0) return { rev: text.slice(0, nul), id: text.slice(nul + 1) };
  return { id: decodeText(key, 1), rev: text };
}

function idRange(prefix: Prefix.Live | Prefix.Local, options: IdRangeOptions): { empty: boolean; bounds: { gte?: Uint8Array; gt?: Uint8Array; lte?: Uint8Array; lt?: Uint8Array } } {
  const all = prefixRange(prefix);
  const keyOf = prefix === Prefix.Live ? liveKey : localKey;
  const inclusiveEnd = options.inclusiveEnd ?? true;
  const startKey = options.start !== undefined ? keyOf(options.start) : undefined;
  const endKey = options.end !== undefined ? keyOf(options.end) : undefined;
  let low: { gte?: Uint8Array; gt?: Uint8Array } = { gte: all.gte };
  let high: { lte?: Uint8Array; lt?: Uint8Array } = { lt: all.lt };
  if (!options.descending) {
    if (startKey) low = { gte: startKey };
    if (endKey) high = inclusiveEnd ? { lte: endKey } : { lt: endKey };
  } else {
    if (startKey) high = { lte: startKey };
    if (endKey) low = inclusiveEnd ? { gte: endKey } : { gt: endKey };
  }
  const lo = low.gte ?? low.gt!;
  const hi = high.lte ?? high.lt!;
  const c = Buffer.compare(lo, hi);
  const empty = c > 0 || (c === 0 && (low.gt !== undefined || high.lt !== undefined));
  return { empty, bounds: { ...low, ...high } };
}

