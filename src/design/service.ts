/**
 * The design-document functions of a server (everything but views): finds a design document's
 * function, compiles it once per design-document revision in the sandbox, and keeps each
 * database's validate_doc_update functions ready, reloaded only when a design document changed
 * (Database.designEpoch), so writes to databases without validators pay one map lookup.
 */
import { CouchError, notFound } from '../errors.js';
import type { Database } from '../core/database.js';
import { languageOf, type QueryServer } from '../js/query-server.js';
import type { DesignFunction } from '../js/design-function.js';

/** A design document as stored: its id, revision and parsed body. */
export interface DesignDocument {
  id: string;
  rev: string;
  body: Record<string, unknown>;
}

/** The kinds of functions a design document holds besides views, by their member name. */
export type FunctionGroup = 'shows' | 'lists' | 'updates' | 'filters';

/** One database's validators: each design document's validate_doc_update, in id order. */
export interface Validator {
  ddocId: string;
  fn: DesignFunction;
}

/** A validate_doc_update left out of a database's validators because the server enforces it natively. */
interface SkippedValidator {
  ddocId: string;
  source: unknown;
}

/** A database's validators as loaded at one design epoch. */
interface ValidatorSet {
  epoch: number;
  validators: Promise<Validator[]>;
  skipped: SkippedValidator[];
}

const MAX_CACHED_FUNCTIONS = 256;

/**
 * A member of a design document's body by its path (`['filters', name]`), as couch_changes
 * finds a filter or a view before running it: 404 `missing json key: <key>` for the first key
 * absent.
 */
export function designMember(body: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let value: unknown = body;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw notFound('json_mismatch');
    const members = value as Record<string, unknown>;
    if (!Object.hasOwn(members, key)) throw notFound(`missing json key: ${key}`);
    value = members[key];
  }
  return value;
}

export class DesignService {
  /** Compiled functions by database, design document revision and function path (LRU by insertion). */
  private readonly functions = new Map<string, Promise<DesignFunction>>();
  private readonly validatorSets = new WeakMap<Database, ValidatorSet>();

  /**
   * `enforcedNatively` names the validate_doc_update functions whose checks the server already
   * applies natively to every write of that database: they are not run again in the sandbox.
   */
  constructor(
    private readonly queryServer: () => Promise<QueryServer>,
    private readonly enforcedNatively: (dbName: string, ddocId: string, validateSource: unknown) => boolean = () => false,
  ) {}

  /** A design document of `db`; 404 `missing` (or `deleted`) if there is none. */
  async designDoc(db: Database, ddocId: string): Promise<DesignDocument> {
    return runnable(await this.anyDesignDoc(db, ddocId));
  }

  /** A design document whatever its language; 404 `missing` (or `deleted`) if there is none. */
  private async anyDesignDoc(db: Database, ddocId: string): Promise<DesignDocument> {
    const opened = await db.openDoc(ddocId);
    if (opened.deleted) throw notFound('deleted');
    return { id: opened.id, rev: opened.rev, body: JSON.parse(opened.json) as Record<string, unknown> };
  }

  /**
   * `shows.<name>` (etc.) of a design document, compiled; 404 as CouchDB's query server says when
   * missing, which is any falsy member (loop.js DDoc.ddoc tests `!fun`): an empty string too.
   */
  async function(db: Database, ddoc: DesignDocument, group: FunctionGroup, name: string): Promise<DesignFunction> {
    const members = ddoc.body[group];
    const source = members !== null && typeof members === 'object' ? (members as Record<string, unknown>)[name] : undefined;
    if (!source || !Object.hasOwn(members as object, name)) {
      throw notFound(`missing ${group} function ${name} on design doc ${ddoc.id}`);
    }
    return this.compiled(db, ddoc, `${group}/${name}`, source);
  }

  /** The design document's `rewrites` when it is a function (CouchDB 2), compiled. */
  rewriteFunction(db: Database, ddoc: DesignDocument): Promise<DesignFunction> {
    return this.compiled(db, ddoc, 'rewrites', ddoc.body['rewrites']);
  }

  /**
   * The validate_doc_update functions of `db`'s design documents (cached until one changes, or
   * until one left out as enforced natively no longer is: the database stopped being the
   * users or replicator database).
   */
  validators(db: Database): Promise<Validator[]> {
    const cached = this.validatorSets.get(db);
    if (cached && cached.epoch === db.designEpoch && cached.skipped.every((v) => this.enforcedNatively(db.name, v.ddocId, v.source))) {
      return cached.validators;
    }
    const epoch = db.designEpoch;
    const skipped: SkippedValidator[] = [];
    const validators = this.loadValidators(db, skipped);
    this.validatorSets.set(db, { epoch, validators, skipped });
    validators.catch(() => {
      if (this.validatorSets.get(db)?.validators === validators) this.validatorSets.delete(db);
    });
    return validators;
  }

  /** The validators to run; those enforced natively go to `skipped` instead. */
  private async loadValidators(db: Database, skipped: SkippedValidator[]): Promise<Validator[]> {
    const out: Validator[] = [];
    for await (const chunk of db.designDocs()) {
      for (const { id } of chunk) {
        let ddoc: DesignDocument;
        try {
          ddoc = await this.anyDesignDoc(db, id);
        } catch (err) {
          if (err instanceof CouchError && err.status === 404) continue; // deleted meanwhile
          throw err;
        }
        const source = ddoc.body['validate_doc_update'];
        if (source === undefined || source === null || source === '') continue;
        if (this.enforcedNatively(db.name, id, source)) {
          skipped.push({ ddocId: id, source });
          continue;
        }
        // Only a design document with a validator needs a language this server runs.
        out.push({ ddocId: id, fn: await this.compiled(db, runnable(ddoc), 'validate_doc_update', source) });
      }
    }
    return out;
  }

  private compiled(db: Database, ddoc: DesignDocument, path: string, source: unknown): Promise<DesignFunction> {
    const key = `${db.name}\u0000${db.instanceStartTime}\u0000${ddoc.id}\u0000${ddoc.rev}\u0000${path}`;
    let fn = this.functions.get(key);
    if (fn) {
      // Move to the back: recently used functions are evicted last.
      this.functions.delete(key);
      this.functions.set(key, fn);
      return fn;
    }
    fn = this.queryServer().then((qs) => qs.designFunction(ddoc.body, source));
    this.functions.set(key, fn);
    fn.catch(() => {
      if (this.functions.get(key) === fn) this.functions.delete(key);
    });
    while (this.functions.size > MAX_CACHED_FUNCTIONS) {
      const [oldestKey, oldest] = this.functions.entries().next().value!;
      this.functions.delete(oldestKey);
      void oldest.then((f) => f.dispose(), () => undefined);
    }
    return fn;
  }

  async close(): Promise<void> {
    const all = [...this.functions.values()];
    this.functions.clear();
    for (const fn of all) (await fn.catch(() => undefined))?.dispose();
  }
}

/** The design document when its language is one this server runs (languages.ts); a 500 `EXIT` otherwise. */
function runnable(ddoc: DesignDocument): DesignDocument {
  languageOf(ddoc.body['language']);
  return ddoc;
}
