import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { badRequest } from '../errors.js';

/**
 * Layered ini configuration, read the way CouchDB 1.6's couch_config reads it:
 *
 *   default.ini  (shipped, never written)
 *   local.ini    (optional; PUT/DELETE /_config with persistence write here)
 *   overrides    (command-line settings; win over both files when loading)
 *
 * Everything is a string. A key given with an empty value (`key =`) in a later layer removes
 * the key set by an earlier one, which is also how a persisted delete is recorded in local.ini.
 * Runtime changes (set/delete) apply to memory at once, whatever the layer the key came from;
 * `reload()` rebuilds memory from the files and overrides, dropping non-persisted changes.
 */

export type ConfigValues = Record<string, Record<string, string>>;
/**
 * Hears a change; a promise it returns is awaited before the change's set or delete answers
 * (outside the change queue, so the listener may itself change the configuration).
 */
export type ConfigListener = (section: string, key: string, value: string | undefined) => unknown;
/** Turns a value on its way in (the security layer hashes [admins] passwords with it). */
export type ConfigWriteFilter = (section: string, key: string, value: string) => Promise<string> | string;

export interface ConfigLoadOptions {
  defaultFile: string;
  localFile: string;
  /** Command-line settings, section → key → value; an empty value removes the key. */
  overrides?: Record<string, Record<string, string>>;
}

export interface ConfigSetOptions {
  /** Store the value exactly as given: skip the write filter (CouchDB's `?raw=true`). */
  raw?: boolean;
}

/** One `key = value` line of an ini file; an empty value means "remove the key". */
export interface IniEntry {
  section: string;
  key: string;
  value: string;
}

type Store = Map<string, Map<string, string>>;

const COMMENT_SPLIT = /[ \t];/;

/** Strips a trailing ` ;comment` the way CouchDB does (only when preceded by a space or tab). */
function stripComment(text: string): string {
  const m = COMMENT_SPLIT.exec(text);
  return (m ? text.slice(0, m.index) : text).trim();
}

function isCommentLine(trimmed: string): boolean {
  return trimmed.startsWith(';') || trimmed.startsWith('#');
}

function sectionHeader(trimmed: string): string | undefined {
  if (!trimmed.startsWith('[')) return undefined;
  const close = trimmed.indexOf(']');
  // An end bracket that is not at the end makes CouchDB ignore the line.
  if (close !== trimmed.length - 1) return undefined;
  return trimmed.slice(1, close);
}

/** A continuation line: starts with whitespace and carries no `=`; its text joins the previous value. */
function isContinuation(line: string): boolean {
  if (!/^[ \t]+\S/.test(line)) return false;
  const trimmed = line.trim();
  return !isCommentLine(trimmed) && !trimmed.includes('=') && sectionHeader(trimmed) === undefined;
}

function keyOf(line: string): string | undefined {
  const trimmed = line.trim();
  if (trimmed === '' || isCommentLine(trimmed) || sectionHeader(trimmed) !== undefined) return undefined;
  const eq = trimmed.indexOf('=');
  if (eq <= 0) return undefined;
  const key = trimmed.slice(0, eq).trim();
  return key === '' ? undefined : key;
}

/** Parses ini text into its entries, in file order (CouchDB's couch_config:parse_ini_file rules). */
export function parseIni(text: string): IniEntry[] {
  const entries: IniEntry[] = [];
  let section = '';
  let last: IniEntry | undefined;
  for (const line of text.split(/\r\n|\n|\r|\x1a/)) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const header = sectionHeader(trimmed);
    if (header !== undefined) {
      section = header;
      last = undefined;
      continue;
    }
    if (trimmed.startsWith('[') || isCommentLine(trimmed)) continue;
    if (isContinuation(line)) {
      const part = stripComment(trimmed);
      if (last && last.value !== '' && part !== '') last.value = `${last.value} ${part}`;
      continue;
    }
    const key = keyOf(line);
    if (key === undefined) {
      last = undefined;
      continue;
    }
    if (section === '') {
      // A key before any [section] header has nowhere to go.
      last = undefined;
      continue;
    }
    const value = stripComment(trimmed.slice(trimmed.indexOf('=') + 1));
    last = { section, key, value };
    entries.push(last);
  }
  return entries;
}

function applyEntry(store: Store, section: string, key: string, value: string): void {
  if (value === '') {
    const sec = store.get(section);
    if (!sec) return;
    sec.delete(key);
    if (sec.size === 0) store.delete(section);
    return;
  }
  let sec = store.get(section);
  if (!sec) store.set(section, (sec = new Map()));
  sec.set(key, value);
}

/** Formats a value for one ini line: line breaks would end the value early, so they become spaces. */
function iniValue(value: string): string {
  return value.replace(/\r\n|\n|\r/g, ' ');
}

/**
 * Returns `text` with `key` in `section` set to `value` (an empty value writes `key =`, the
 * removal marker), keeping every other line, comment and section as it was.
 */
export function updateIni(text: string, section: string, key: string, value: string): string {
  const lines = text === '' ? [] : text.split(/\r\n|\n|\r/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const newLine = value === '' ? `${key} =` : `${key} = ${iniValue(value)}`;

  let current: string | undefined;
  let keyLine = -1;
  let sectionEnd = -1; // index after the last non-blank line of the last block of `section`
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i]!.trim();
    const header = sectionHeader(trimmed);
    if (header !== undefined) {
      current = header;
      if (current === section) sectionEnd = i + 1;
      continue;
    }
    if (current !== section) continue;
    if (trimmed !== '') sectionEnd = i + 1;
    if (keyOf(lines[i]!) === key) keyLine = i;
  }

  if (keyLine !== -1) {
    let end = keyLine + 1;
    while (end < lines.length && isContinuation(lines[end]!)) end++;
    lines.splice(keyLine, end - keyLine, newLine);
  } else if (sectionEnd !== -1) {
    lines.splice(sectionEnd, 0, newLine);
  } else {
    if (lines.length > 0 && lines[lines.length - 1]!.trim() !== '') lines.push('');
    lines.push(`[${section}]`, newLine);
  }
  return `${lines.join('\n')}\n`;
}

function checkName(section: string, key: string): void {
  if (section === '' || /[\]\r\n]/.test(section) || section !== section.trim()) {
    throw badRequest(`Invalid config section name: ${JSON.stringify(section)}`);
  }
  if (key === '' || /[=\r\n]/.test(key) || key !== key.trim() || /^[;#[]/.test(key)) {
    throw badRequest(`Invalid config key name: ${JSON.stringify(key)}`);
  }
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

function sortedObject(map: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...map.keys()].sort()) out[key] = map.get(key)!;
  return out;
}

export class Config {
  readonly defaultFile: string | undefined;
  /** Where persisted changes go; undefined for an in-memory Config (persist is then a no-op). */
  readonly localFile: string | undefined;
  private readonly overrides: Record<string, Record<string, string>>;
  private values: Store = new Map();
  private readonly listeners = new Set<ConfigListener>();
  private writeFilter: ConfigWriteFilter = (_section, _key, value) => value;
  /** Serialises changes so concurrent writers never lose each other's lines in local.ini. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(defaultFile: string | undefined, localFile: string | undefined, overrides: Record<string, Record<string, string>>) {
    this.defaultFile = defaultFile;
    this.localFile = localFile;
    this.overrides = overrides;
  }

  /** Reads default.ini (must exist), then local.ini (may not exist yet), then the overrides. */
  static async load(options: ConfigLoadOptions): Promise<Config> {
    const config = new Config(options.defaultFile, options.localFile, structuredClone(options.overrides ?? {}));
    config.values = await config.readLayers();
    return config;
  }

  /** A Config with no files behind it, for tests and tools; persisted changes stay in memory. */
  static fromValues(values: ConfigValues = {}): Config {
    const config = new Config(undefined, undefined, {});
    for (const [section, keys] of Object.entries(values)) {
      for (const [key, value] of Object.entries(keys)) applyEntry(config.values, section, key, value);
    }
    return config;
  }

  private async readLayers(): Promise<Store> {
    const store: Store = new Map();
    if (this.defaultFile !== undefined) {
      let text: string;
      try {
        text = await readFile(this.defaultFile, 'utf8');
      } catch (err) {
        throw new Error(`Couldn't read server configuration file ${this.defaultFile}: ${(err as Error).message}`);
      }
      for (const e of parseIni(text)) applyEntry(store, e.section, e.key, e.value);
    }
    if (this.localFile !== undefined) {
      const text = await readOptional(this.localFile);
      if (text !== undefined) for (const e of parseIni(text)) applyEntry(store, e.section, e.key, e.value);
    }
    for (const [section, keys] of Object.entries(this.overrides)) {
      for (const [key, value] of Object.entries(keys)) applyEntry(store, section, key, value);
    }
    return store;
  }

  get(section: string, key: string): string | undefined {
    return this.values.get(section)?.get(key);
  }

  has(section: string, key: string): boolean {
    return this.get(section, key) !== undefined;
  }

  getString(section: string, key: string, fallback: string): string {
    return this.get(section, key) ?? fallback;
  }

  /** The value as a base-10 integer; missing or not an integer gives the fallback. */
  getInt(section: string, key: string, fallback: number): number {
    const value = this.get(section, key)?.trim();
    if (value === undefined || !/^[-+]?\d+$/.test(value)) return fallback;
    const n = Number.parseInt(value, 10);
    return Number.isSafeInteger(n) ? n : fallback;
  }

  /** `true`/`false` (any case); anything else gives the fallback. */
  getBool(section: string, key: string, fallback: boolean): boolean {
    const value = this.get(section, key)?.trim().toLowerCase();
    if (value === 'true') return true;
    if (value === 'false') return false;
    return fallback;
  }

  private readonly layeredViews = new WeakMap<readonly string[], LayeredSection>();

  /** A view that reads each key from the first of `sections` that has it (kept per list: pass a constant). */
  layered(sections: readonly [string, ...string[]]): LayeredSection {
    let view = this.layeredViews.get(sections);
    if (!view) {
      view = new LayeredSection(this, sections);
      this.layeredViews.set(sections, view);
    }
    return view;
  }

  /** A copy of one section, keys sorted; `{}` when the section does not exist. */
  section(name: string): Record<string, string> {
    const sec = this.values.get(name);
    return sec ? sortedObject(sec) : {};
  }

  /** A copy of everything, sections and keys sorted. */
  all(): Record<string, Record<string, string>> {
    const out: Record<string, Record<string, string>> = {};
    for (const name of [...this.values.keys()].sort()) out[name] = sortedObject(this.values.get(name)!);
    return out;
  }

  /** Installs the filter set() applies to values before storing them (identity by default). */
  setWriteFilter(fn: ConfigWriteFilter): void {
    this.writeFilter = fn;
  }

  /** Calls `listener(section, key, value)` after each change; `value` is undefined for a delete. */
  onChange(listener: ConfigListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Sets a value (after the write filter) and answers the previous one. With `persist` the
   * change is first written to local.ini; if that fails, memory is left unchanged.
   */
  async set(section: string, key: string, value: string, persist: boolean, options: ConfigSetOptions = {}): Promise<string | undefined> {
    checkName(section, key);
    const { previous, heard } = await this.enqueue(async () => {
      const stored = options.raw ? value : await this.writeFilter(section, key, value);
      if (persist) await this.persist(section, key, stored);
      const previous = this.get(section, key);
      let sec = this.values.get(section);
      if (!sec) this.values.set(section, (sec = new Map()));
      sec.set(key, stored);
      return { previous, heard: this.notify(section, key, stored) };
    });
    await heard;
    return previous;
  }

  /**
   * Removes a key and answers the removed value (undefined, and nothing written, when it was
   * not set). With `persist` the removal is recorded in local.ini as `key =`.
   */
  async delete(section: string, key: string, persist: boolean): Promise<string | undefined> {
    checkName(section, key);
    const { previous, heard } = await this.enqueue(async () => {
      const previous = this.get(section, key);
      if (previous === undefined) return { previous, heard: Promise.resolve() };
      if (persist) await this.persist(section, key, '');
      applyEntry(this.values, section, key, '');
      return { previous, heard: this.notify(section, key, undefined) };
    });
    await heard;
    return previous;
  }

  /** Re-reads the files and overrides (POST /_restart); listeners hear about every key that changed. */
  async reload(): Promise<void> {
    await this.enqueue(async () => {
      const next = await this.readLayers();
      const before = this.values;
      this.values = next;
      const changed: Array<[string, string, string | undefined]> = [];
      for (const [section, keys] of before) {
        for (const [key, value] of keys) {
          const now = next.get(section)?.get(key);
          if (now !== value) changed.push([section, key, now]);
        }
      }
      for (const [section, keys] of next) {
        for (const [key, value] of keys) {
          if (before.get(section)?.get(key) === undefined) changed.push([section, key, value]);
        }
      }
      for (const [section, key, value] of changed) void this.notify(section, key, value);
    });
  }

  /** Resolves once every change queued so far has been applied. */
  async settled(): Promise<void> {
    await this.enqueue(async () => undefined);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Rewrites local.ini with one key changed: temp file + rename, so readers never see half a file. */
  private async persist(section: string, key: string, value: string): Promise<void> {
    const file = this.localFile;
    if (file === undefined) return;
    const current = (await readOptional(file)) ?? '';
    const next = updateIni(current, section, key, value);
    await mkdir(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, next, { encoding: 'utf8', mode: 0o600 });
      await rename(tmp, file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /** Tells every listener; resolves when the work they returned is done (failed or not). */
  private async notify(section: string, key: string, value: string | undefined): Promise<void> {
    const pending: unknown[] = [];
    for (const listener of [...this.listeners]) {
      try {
        pending.push(listener(section, key, value));
      } catch {
        // A failing listener must not undo or block a change that has already been applied.
      }
    }
    await Promise.allSettled(pending);
  }
}

/**
 * One setting looked up in several sections, the first that has it winning: CouchDB 3 moved
 * settings to new sections (`[chttpd_auth]` for `[couch_httpd_auth]`) and reads the old ones
 * after, so configurations of either line work.
 */
export class LayeredSection {
  constructor(private readonly config: Config, readonly sections: readonly [string, ...string[]]) {}

  /** The section a key is read from: the first that has it, else the last (the 1.6 one). */
  sectionOf(key: string): string {
    const last = this.sections.length - 1;
    for (let i = 0; i < last; i++) if (this.config.has(this.sections[i]!, key)) return this.sections[i]!;
    return this.sections[last]!;
  }

  get(key: string): string | undefined {
    return this.config.get(this.sectionOf(key), key);
  }

  getString(key: string, fallback: string): string {
    return this.config.getString(this.sectionOf(key), key, fallback);
  }

  getInt(key: string, fallback: number): number {
    return this.config.getInt(this.sectionOf(key), key, fallback);
  }

  getBool(key: string, fallback: boolean): boolean {
    return this.config.getBool(this.sectionOf(key), key, fallback);
  }
}
