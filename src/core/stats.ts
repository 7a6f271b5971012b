/**
 * Server statistics as CouchDB 1.6 reports them at `/_stats`: hot paths bump plain counters
 * (no allocation); every `[stats] rate` ms (or on `?flush=true`) a sample turns each counter's
 * growth into one value per stat and folds it into an aggregate per `[stats] samples` window
 * (0 = since start-up), the way couch_stats_aggregator does.
 */

/** A stat's JSON shape in `/_stats`. */
export interface StatJson {
  description: string;
  current: number | null;
  sum: number | null;
  mean: number | null;
  stddev: number | null;
  min: number | null;
  max: number | null;
}

/** How a stat's sampled value is obtained. */
type StatKind =
  /** A running total (or a level, like open databases): each sample takes its change. */
  | 'incremental'
  /** Individual measurements (request times): each sample takes their mean since the last one. */
  | 'absolute';

interface StatDefinition {
  section: string;
  key: string;
  description: string;
  kind: StatKind;
}

const METHODS = ['COPY', 'DELETE', 'GET', 'HEAD', 'POST', 'PUT'] as const;
const STATUS_CODES: readonly [number, string][] = [
  [200, 'OK'], [201, 'Created'], [202, 'Accepted'], [301, 'Moved Permanently'], [304, 'Not Modified'],
  [400, 'Bad Request'], [401, 'Unauthorized'], [403, 'Forbidden'], [404, 'Not Found'],
  [405, 'Method Not Allowed'], [409, 'Conflict'], [412, 'Precondition Failed'], [500, 'Internal Server Error'],
];

/** CouchDB 1.6's stats, in its sections and names. */
const DEFINITIONS: readonly StatDefinition[] = [
  { section: 'couchdb', key: 'database_writes', description: 'number of times a database was changed', kind: 'incremental' },
  { section: 'couchdb', key: 'database_reads', description: 'number of times a document was read from a database', kind: 'incremental' },
  { section: 'couchdb', key: 'open_databases', description: 'number of open databases', kind: 'incremental' },
  { section: 'couchdb', key: 'open_os_files', description: 'number of file descriptors CouchDB has open', kind: 'incremental' },
  { section: 'couchdb', key: 'request_time', description: 'length of a request inside CouchDB without MochiWeb', kind: 'absolute' },
  { section: 'couchdb', key: 'auth_cache_hits', description: 'number of authentication cache hits', kind: 'incremental' },
  { section: 'couchdb', key: 'auth_cache_misses', description: 'number of authentication cache misses', kind: 'incremental' },
  { section: 'httpd', key: 'bulk_requests', description: 'number of bulk requests', kind: 'incremental' },
  { section: 'httpd', key: 'requests', description: 'number of HTTP requests', kind: 'incremental' },
  { section: 'httpd', key: 'temporary_view_reads', description: 'number of temporary view reads', kind: 'incremental' },
  { section: 'httpd', key: 'view_reads', description: 'number of view reads', kind: 'incremental' },
  { section: 'httpd', key: 'clients_requesting_changes', description: 'number of clients for continuous _changes', kind: 'incremental' },
  ...METHODS.map((m): StatDefinition => ({ section: 'httpd_request_methods', key: m, description: `number of HTTP ${m} requests`, kind: 'incremental' })),
  ...STATUS_CODES.map(([code, text]): StatDefinition => ({
    section: 'httpd_status_codes', key: String(code), description: `number of HTTP ${code} ${text} responses`, kind: 'incremental',
  })),
];

/** The counters request handling bumps: fields, so an increment is one property write. */
export class StatsCollector {
  databaseReads = 0;
  databaseWrites = 0;
  requests = 0;
  bulkRequests = 0;
  viewReads = 0;
  temporaryViewReads = 0;
  /** `_changes` feeds open now. */
  clientsRequestingChanges = 0;
  readonly methods = new Map<string, number>(METHODS.map((m) => [m, 0]));
  readonly statusCodes = new Map<number, number>(STATUS_CODES.map(([code]) => [code, 0]));
  /** Request times since the last sample (their mean is the sample). */
  requestTimeSum = 0;
  requestTimeCount = 0;

  /** Called by the http layer as a request arrives: CouchDB counts its method before handling it. */
  countMethod(method: string): void {
    const m = this.methods.get(method);
    if (m !== undefined) this.methods.set(method, m + 1);
  }

  /** Called once per finished request by the http layer. */
  recordRequest(status: number, elapsedMs: number): void {
    this.requests++;
    const s = this.statusCodes.get(status);
    if (s !== undefined) this.statusCodes.set(status, s + 1);
    this.requestTimeSum += elapsedMs;
    this.requestTimeCount++;
  }
}

/** Levels the collector does not own, read at each sample. */
export interface StatsGauges {
  openDatabases(): number;
  authCache(): { hits: number; misses: number };
}

/** One stat over one window: couch_stats_aggregator's running count, mean and variance. */
class Aggregate {
  count = 0;
  current: number | null = null;
  sum: number | null = null;
  mean: number | null = null;
  variance = 0;
  stddev: number | null = null;
  min: number | null = null;
  max: number | null = null;
  /** Values with their time, newest first; kept only for windows (seconds > 0). */
  samples: { at: number; value: number }[] = [];

  constructor(readonly description: string, readonly seconds: number) {}

  add(at: number, value: number): void {
    if (this.seconds > 0) this.samples.unshift({ at, value });
    if (this.count < 1) {
      this.count = 1;
      this.current = this.sum = this.mean = this.min = this.max = value;
      this.variance = 0;
      this.stddev = null;
      return;
    }
    const mean = this.mean!;
    const count = this.count + 1;
    const newMean = mean + (value - mean) / count;
    this.variance += (value - mean) * (value - newMean);
    this.count = count;
    this.current = this.current! + value;
    this.sum = this.sum! + value;
    this.mean = newMean;
    this.stddev = Math.sqrt(this.variance / (count - 1));
    this.min = Math.min(this.min!, value);
    this.max = Math.max(this.max!, value);
  }

  /** Drops the values older than the window. */
  expire(now: number): void {
    if (this.seconds === 0) return;
    const cutoff = now - this.seconds * 1000;
    while (this.samples.length > 0 && this.samples[this.samples.length - 1]!.at < cutoff) {
      this.remove(this.samples.pop()!.value);
    }
  }

  private remove(value: number): void {
    if (this.count <= 1) {
      // As 1.6: the last value leaving empties the aggregate entirely.
      Object.assign(this, new Aggregate(this.description, this.seconds), { samples: this.samples });
      return;
    }
    const count = this.count - 1;
    const oldMean = (this.mean! * this.count - value) / count;
    const oldVariance = this.variance - (value - oldMean) * (value - this.mean!);
    this.count = count;
    this.sum = this.sum! - value;
    this.mean = clamp(oldMean);
    this.variance = clamp(oldVariance);
    this.stddev = count > 1 ? Math.sqrt(clamp(this.variance / (count - 1))) : null;
  }

  toJson(): StatJson {
    let { min, max } = this;
    if (this.seconds > 0) {
      const values = this.samples.map((s) => s.value);
      min = values.length > 0 ? Math.min(...values) : null;
      max = values.length > 0 ? Math.max(...values) : null;
    }
    // 1.6 reports the (window's) sum as `current` too.
    return { description: this.description, current: round(this.sum), sum: round(this.sum), mean: round(this.mean), stddev: round(this.stddev), min, max };
  }
}

function clamp(value: number): number {
  return value > 1e-14 ? value : 0;
}

function round(value: number | null): number | null {
  return value === null || value === 0 ? value : Math.round(value * 1000) / 1000;
}

export interface StatsSettings {
  /** ms between samples (`[stats] rate`). */
  rateMs: number;
  /** Windows in seconds (`[stats] samples`); 0 is "since start-up". */
  windows: number[];
}

/** Samples the collector on a timer and answers `/_stats`. */
export class StatsAggregator {
  readonly collector = new StatsCollector();
  /** Per stat (`section/key`), its aggregate for each window. */
  private readonly aggregates = new Map<string, Map<number, Aggregate>>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly gauges: StatsGauges, private readonly settings: StatsSettings) {
    for (const def of DEFINITIONS) {
      this.aggregates.set(`${def.section}/${def.key}`, new Map(settings.windows.map((w) => [w, new Aggregate(def.description, w)])));
    }
    this.timer = setInterval(() => this.sample(), Math.max(10, settings.rateMs));
    this.timer.unref();
  }

  /** The sampled value of each stat now, or undefined for one with nothing to report. */
  private read(def: StatDefinition): number | undefined {
    const c = this.collector;
    switch (`${def.section}/${def.key}`) {
      case 'couchdb/database_writes': return c.databaseWrites || undefined;
      case 'couchdb/database_reads': return c.databaseReads || undefined;
      case 'couchdb/open_databases': return this.gauges.openDatabases();
      case 'couchdb/open_os_files': return undefined;
      case 'couchdb/request_time': return c.requestTimeCount > 0 ? c.requestTimeSum / c.requestTimeCount : undefined;
      case 'couchdb/auth_cache_hits': return this.gauges.authCache().hits || undefined;
      case 'couchdb/auth_cache_misses': return this.gauges.authCache().misses || undefined;
      case 'httpd/bulk_requests': return c.bulkRequests || undefined;
      case 'httpd/requests': return c.requests || undefined;
      case 'httpd/temporary_view_reads': return c.temporaryViewReads || undefined;
      case 'httpd/view_reads': return c.viewReads || undefined;
      case 'httpd/clients_requesting_changes': return c.clientsRequestingChanges;
    }
    if (def.section === 'httpd_request_methods') return c.methods.get(def.key) || undefined;
    return c.statusCodes.get(Number(def.key)) || undefined;
  }

  /** Takes one sample of every stat (couch_stats_aggregator:collect_sample). */
  sample(): void {
    const now = Date.now();
    for (const def of DEFINITIONS) {
      const value = this.read(def);
      for (const agg of this.aggregates.get(`${def.section}/${def.key}`)!.values()) {
        if (value !== undefined) {
          // A running total contributes its growth since the previous sample.
          agg.add(now, def.kind === 'incremental' && agg.current !== null ? value - agg.current : value);
        }
        agg.expire(now);
      }
    }
    this.collector.requestTimeSum = 0;
    this.collector.requestTimeCount = 0;
  }

  /** Every stat for a window; `{}` for a window not configured (as 1.6). */
  all(window: number): Record<string, Record<string, StatJson>> {
    const out: Record<string, Record<string, StatJson>> = {};
    if (!this.settings.windows.includes(window)) return out;
    for (const def of DEFINITIONS) {
      (out[def.section] ??= {})[def.key] = this.aggregates.get(`${def.section}/${def.key}`)!.get(window)!.toJson();
    }
    return out;
  }

  /** One stat for a window; unknown stats and windows answer an empty aggregate, as 1.6 does. */
  get(section: string, key: string, window: number): StatJson {
    const agg = this.aggregates.get(`${section}/${key}`)?.get(window);
    return (agg ?? new Aggregate('', window)).toJson();
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** `[stats] samples` ("[0, 60, 300, 900]") as numbers; the default when unreadable. */
export function parseWindows(text: string): number[] {
  const numbers = text.replace(/[[\]\s]/g, '').split(',').filter((s) => s !== '').map(Number);
  const valid = numbers.filter((n) => Number.isInteger(n) && n >= 0);
  return valid.length > 0 ? [...new Set(valid)] : [0];
}
