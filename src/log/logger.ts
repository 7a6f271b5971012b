import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Config } from '../config/config.js';

/** Severity names as written in log lines. */
export type LogLevel = 'debug' | 'info' | 'warning' | 'error';
/** A threshold: a level, or `none` to log nothing. */
export type LogThreshold = LogLevel | 'none';

const RANK: Record<LogThreshold, number> = { debug: 1, info: 2, warning: 3, error: 4, none: 5 };

/**
 * Reads a [log] level value. CouchDB treats an unknown level as `error`; `tmi` (CouchDB's level
 * below debug) counts as debug, `warn` as warning, `off` as none.
 */
export function parseLogLevel(value: string | undefined, fallback: LogThreshold = 'info'): LogThreshold {
  if (value === undefined) return fallback;
  switch (value.trim().toLowerCase()) {
    case 'debug': case 'tmi': return 'debug';
    case 'info': return 'info';
    case 'warn': case 'warning': return 'warning';
    case 'error': return 'error';
    case 'none': case 'off': return 'none';
    case '': return fallback;
    default: return 'error';
  }
}

export interface LoggerOptions {
  /** Level and stderr come from [log] level / [log] stderr and follow later changes. */
  config?: Config;
  /** Initial level; without a config this is the level for good. Defaults to [log] level, then info. */
  level?: string;
  /** Copy lines to stderr; overrides [log] stderr. Off by default so tests stay quiet. */
  stderr?: boolean;
  /** The process tag in each line; CouchDB prints an Erlang pid. */
  pid?: string;
}

/** Longest a logged line waits before it is written to the file. */
const FLUSH_MS = 50;

/**
 * CouchDB-format log lines, e.g.
 *   [Sat, 21 Nov 2026 20:00:00 GMT] [info] [<0.1.0>] 127.0.0.1 - - GET /db 200
 * appended to one file (and optionally stderr). Never throws: if the file cannot be written,
 * file logging is switched off with one complaint on stderr.
 */
export class Logger {
  /** The resolved path of the log file; undefined logs to stderr only (if enabled). */
  readonly file: string | undefined;
  private threshold: LogThreshold;
  private stderr: boolean;
  private readonly stderrForced: boolean;
  private readonly pid: string;
  private stream: WriteStream | undefined;
  private failed = false;
  private closed = false;
  private readonly unsubscribe: (() => void) | undefined;

  constructor(file: string | undefined, options: LoggerOptions = {}) {
    this.file = file;
    this.pid = options.pid ?? `<0.${process.pid}.0>`;
    const config = options.config;
    this.threshold = parseLogLevel(options.level ?? config?.get('log', 'level'));
    this.stderrForced = options.stderr !== undefined;
    this.stderr = options.stderr ?? config?.getBool('log', 'stderr', false) ?? false;
    this.unsubscribe = config?.onChange((section, key, value) => {
      if (section !== 'log') return;
      if (key === 'level') this.threshold = parseLogLevel(value);
      if (key === 'stderr' && !this.stderrForced) this.stderr = value?.trim().toLowerCase() === 'true';
    });
  }

  get level(): LogThreshold {
    return this.threshold;
  }

  setLevel(level: string): void {
    this.threshold = parseLogLevel(level);
  }

  /** Whether a message at `level` would be written; lets callers skip building costly messages. */
  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.threshold];
  }

  debug(message: string): void {
    this.log('debug', message);
  }

  info(message: string): void {
    this.log('info', message);
  }

  warn(message: string): void {
    this.log('warning', message);
  }

  error(message: string): void {
    this.log('error', message);
  }

  log(level: LogLevel, message: string): void {
    if (this.closed || !this.enabled(level)) return;
    const line = `[${this.timestamp()}] [${level}] [${this.pid}] ${message}\n`;
    if (this.stderr) process.stderr.write(line);
    // Lines are gathered and written together, at most every FLUSH_MS: a write per request
    // would cost more than the request itself. Readers (GET /_log) flush first.
    this.pending += line;
    if (this.pending.length >= 65536) this.writePending();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setTimeout(() => this.writePending(), FLUSH_MS).unref();
    }
  }

  private pending = '';
  private flushScheduled = false;
  private stampSecond = -1;
  private stamp = '';

  /** The date in CouchDB's format, formatted once per second. */
  private timestamp(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== this.stampSecond) {
      this.stampSecond = second;
      this.stamp = new Date(now).toUTCString();
    }
    return this.stamp;
  }

  private writePending(): void {
    this.flushScheduled = false;
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    const stream = this.openStream();
    if (stream) stream.write(text);
  }

  private openStream(): WriteStream | undefined {
    if (this.stream || this.failed || this.file === undefined) return this.stream;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      const stream = createWriteStream(this.file, { flags: 'a' });
      stream.on('error', (err) => this.fail(err));
      this.stream = stream;
    } catch (err) {
      this.fail(err);
    }
    return this.stream;
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    const stream = this.stream;
    this.stream = undefined;
    stream?.destroy();
    const reason = err instanceof Error ? err.message : String(err);
    process.stderr.write(`[${new Date().toUTCString()}] [error] [${this.pid}] cannot write log file ${this.file}: ${reason}\n`);
  }

  /** Resolves once every line logged so far has reached the file. */
  async flush(): Promise<void> {
    this.writePending();
    const stream = this.stream;
    if (!stream || stream.destroyed) return;
    await new Promise<void>((resolve) => {
      stream.write('', () => resolve());
    });
  }

  /**
   * The log tail as CouchDB's GET /_log reads it: `bytes` bytes ending `offset` bytes before the
   * end of the file (start clamped to 0). A missing file reads as empty.
   */
  async tail(bytes: number, offset: number): Promise<string> {
    if (this.file === undefined || bytes <= 0) return '';
    await this.flush();
    let handle;
    try {
      handle = await open(this.file, 'r');
    } catch {
      return '';
    }
    try {
      const { size } = await handle.stat();
      const start = Math.max(size - bytes - Math.max(offset, 0), 0);
      const length = Math.max(Math.min(bytes, size - start), 0);
      if (length === 0) return '';
      const buf = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buf, 0, length, start);
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await handle.close();
    }
  }

  /** Stops following the config and closes the file once pending lines are written. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.writePending();
    this.closed = true;
    this.unsubscribe?.();
    const stream = this.stream;
    this.stream = undefined;
    if (!stream || stream.destroyed) return;
    // 'close' follows both a clean finish and a failed write, so this cannot hang.
    await new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      stream.end();
    });
  }
}
