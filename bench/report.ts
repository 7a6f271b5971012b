import type { ServerName } from './servers.js';
import type { Figures } from './workloads.js';

/** What one server's run produced. */
export interface ServerResult {
  name: ServerName;
  /** ok: every workload ran; partial: some failed; failed: the server did not start; skipped: not selected. */
  status: 'ok' | 'partial' | 'failed' | 'skipped';
  mode?: string;
  version?: string;
  error?: string;
  figures: Figures;
  /** Workload name → error message, for workloads that failed. */
  errors: Record<string, string>;
  /** Workload name → wall time and CPU seconds of the server and of this benchmark process. */
  timings: Record<string, { wallS: number; serverCpuS: number; benchCpuS: number }>;
}

type Target =
  /** `>=`: Settee / pouchdb-server should be at least `ratio`; `<=`: at most. */
  | { op: '>=' | '<='; ratio: number }
  /** A bound on Settee's own figure, whatever pouchdb-server does. */
  | { op: '>=' | '<='; absolute: number }
  /** For times: pouchdb-server / Settee should be at least `faster` (Settee that many times faster). */
  | { op: '>='; faster: number };

interface RowSpec {
  key: string;
  unit: string;
  /** `{large}` stands for the large attachment's size. */
  label: string;
  target?: Target;
  /** Measured in the large-attachment phase (left out with --skip-large). */
  large?: boolean;
  /** Measured in the view phase (left out with --skip-views; the only rows with --views-only). */
  views?: boolean;
  /** Measured in the design-function phase (left out with --skip-design; the only rows with --design-only). */
  design?: boolean;
  /** A time: the ratio column also says how many times faster Settee is. */
  lowerIsBetter?: boolean;
  /** Measured in the replication phase (left out with --skip-replication; the only rows with --replication-only). */
  replication?: boolean;
}

export const ROWS: readonly RowSpec[] = [
  { key: 'put_single', unit: 'docs/s', label: 'single-doc PUT, 16 clients', target: { op: '>=', ratio: 7 } },
  { key: 'bulk_docs', unit: 'docs/s', label: '_bulk_docs, batches of 1000', target: { op: '>=', ratio: 7 } },
  { key: 'get_random', unit: 'req/s', label: 'random GET, 32 clients', target: { op: '>=', ratio: 12 } },
  { key: 'all_docs_scan', unit: 'rows/s', label: '_all_docs full scan', target: { op: '>=', ratio: 4 } },
  { key: 'all_docs_scan_docs', unit: 'rows/s', label: '_all_docs full scan, include_docs', target: { op: '>=', ratio: 4 } },
  { key: 'all_docs_page_skip1', unit: 'pages/s', label: '_all_docs pages of 100, startkey+skip=1' },
  { key: 'all_docs_page_keyed', unit: 'pages/s', label: '_all_docs pages of 100, keyed (limit=101)' },
  { key: 'rmw', unit: 'updates/s', label: 'read-modify-write, 16 clients', target: { op: '>=', ratio: 4 } },
  { key: 'changes_scan', unit: 'rows/s', label: '_changes?since=0 full read', target: { op: '>=', ratio: 6 } },
  { key: 'feed_latency_p50', unit: 'ms', label: 'PUT -> continuous feed, median' },
  { key: 'feed_latency_p99', unit: 'ms', label: 'PUT -> continuous feed, p99' },
  { key: 'att_upload', unit: 'MB/s', label: 'attachment PUT, 256 KiB, 4 clients', target: { op: '>=', ratio: 5 } },
  { key: 'att_upload_rate', unit: 'uploads/s', label: 'attachment PUT, 256 KiB, 4 clients' },
  { key: 'att_download', unit: 'MB/s', label: 'attachment GET, 256 KiB, 4 clients', target: { op: '>=', ratio: 2 } },
  { key: 'peak_rss', unit: 'MB', label: 'server peak RSS', target: { op: '<=', ratio: 0.5 } },
  { key: 'att_large_upload', unit: 'MB/s', label: 'attachment PUT, {large} streamed', target: { op: '>=', ratio: 5 }, large: true },
  { key: 'att_large_download', unit: 'MB/s', label: 'attachment GET, {large} streamed', target: { op: '>=', ratio: 2 }, large: true },
  { key: 'att_large_peak_rss', unit: 'MB', label: 'server peak RSS during the {large} PUT+GET', target: { op: '<=', absolute: 150 }, large: true },
  { key: 'att_large_peak_rss_anon', unit: 'MB', label: '  of which anonymous (RssAnon), sampled', large: true },
  { key: 'view_build', unit: 'docs/s', label: 'view build, {viewDocs} docs (first ?limit=1)', target: { op: '>=', ratio: 45 }, views: true },
  { key: 'view_range_cold', unit: 'queries/s', label: 'view key-range queries, 8 clients, first round (cold)', views: true },
  { key: 'view_range', unit: 'queries/s', label: 'view key-range queries, 8 clients, second round', target: { op: '>=', ratio: 12 }, views: true },
  { key: 'view_reduce', unit: 'ms', label: 'view reduce=true, whole index, median', target: { op: '>=', faster: 250 }, views: true, lowerIsBetter: true },
  { key: 'view_group_level', unit: 'ms', label: 'view group_level=1, median', views: true, lowerIsBetter: true },
  { key: 'view_incremental', unit: 'ms', label: 'view update after editing {viewEdits} docs', views: true, lowerIsBetter: true },
  { key: 'view_peak_rss', unit: 'MB', label: 'server peak RSS during the view phase', target: { op: '<=', ratio: 0.3 }, views: true },
  { key: 'view_peak_rss_anon', unit: 'MB', label: '  of which anonymous (RssAnon), sampled', views: true },
  { key: 'ddoc_put_plain', unit: 'docs/s', label: 'single-doc PUT, 16 clients, no validator', design: true },
  { key: 'ddoc_put_validated', unit: 'docs/s', label: 'single-doc PUT, 16 clients, validate_doc_update', design: true },
  { key: 'ddoc_put_validated_pct', unit: '%', label: '  validated / plain PUT rate', target: { op: '>=', absolute: 70 }, design: true },
  { key: 'ddoc_bulk_plain', unit: 'docs/s', label: '_bulk_docs of 1000, no validator', design: true },
  { key: 'ddoc_bulk_validated', unit: 'docs/s', label: '_bulk_docs of 1000, validate_doc_update', design: true },
  { key: 'ddoc_bulk_validated_pct', unit: '%', label: '  validated / plain bulk rate', target: { op: '>=', absolute: 70 }, design: true },
  { key: 'ddoc_list', unit: 'rows/s', label: '_list over {listRows} view rows', design: true },
  { key: 'ddoc_list_peak_rss', unit: 'MB', label: 'server peak RSS during the _list', design: true },
  { key: 'repl_by_name', unit: 'docs/s', label: 'replicate {replDocs} docs local→local by name', replication: true },
  { key: 'repl_by_url', unit: 'docs/s', label: 'replicate {replDocs} docs local→local by URL', target: { op: '>=', ratio: 6 }, replication: true },
  { key: 'repl_pull', unit: 'docs/s', label: 'pull {replDocs} docs from a second server', replication: true },
  { key: 'repl_att', unit: 'MB/s', label: 'replicate {replAttDocs} docs × 256 KiB attachments by URL', replication: true },
  { key: 'repl_live_p50', unit: 'ms', label: 'continuous replication, write -> target, median', target: { op: '<=', absolute: 100 }, replication: true, lowerIsBetter: true },
  { key: 'repl_live_p99', unit: 'ms', label: 'continuous replication, write -> target, p99', replication: true, lowerIsBetter: true },
];

export interface ComparisonRow {
  key: string;
  label: string;
  unit: string;
  settee: number | null;
  pouchdbServer: number | null;
  /** Settee / pouchdb-server. */
  ratio: number | null;
  /** For times: pouchdb-server / Settee, how many times faster Settee is. */
  faster?: number | null;
  /** pouchdb-server's figure was scaled from a smaller run (shown with ~; see the notes). */
  pouchExtrapolated?: boolean;
  target: string | null;
}

export interface CompareOptions {
  largeSize: string;
  skipLarge: boolean;
  /** The view phase's document count, for labels. */
  viewDocs: string;
  /** The number of documents edited before the incremental update, for labels. */
  viewEdits: string;
  skipViews?: boolean;
  viewsOnly?: boolean;
  skipDesign?: boolean;
  designOnly?: boolean;
  /** The _list's row count, for labels. */
  listRows?: string;
  /** The replication phase's document counts, for labels. */
  replDocs?: string;
  replAttDocs?: string;
  skipReplication?: boolean;
  replicationOnly?: boolean;
}

export function compare(settee: ServerResult, pouch: ServerResult, opts: CompareOptions): ComparisonRow[] {
  const shown = (row: RowSpec): boolean => {
    if (opts.replicationOnly) return row.replication === true;
    if (row.replication) return !opts.skipReplication && !opts.viewsOnly;
    if (opts.viewsOnly) return row.views === true;
    if (opts.designOnly) return row.design === true;
    if (row.views) return !opts.skipViews;
    if (row.design) return !opts.skipDesign;
    return !(row.large && opts.skipLarge);
  };
  return ROWS.filter(shown).map((row) => {
    const s = settee.figures[row.key];
    const p = pouch.figures[row.key];
    // A figure from an aborted phase is a lower bound at best: no ratio.
    const aborted = s?.detail?.aborted === true || p?.detail?.aborted === true;
    const ratio = s && p && p.value > 0 && !aborted ? s.value / p.value : null;
    return {
      key: row.key,
      label: row.label.replace('{large}', opts.largeSize).replace('{viewDocs}', opts.viewDocs).replace('{viewEdits}', opts.viewEdits)
        .replace('{listRows}', opts.listRows ?? '').replace('{replDocs}', opts.replDocs ?? '').replace('{replAttDocs}', opts.replAttDocs ?? ''),
      unit: row.unit,
      settee: s ? s.value : null,
      pouchdbServer: p ? p.value : null,
      ratio,
      ...(row.lowerIsBetter ? { faster: ratio !== null && ratio > 0 ? 1 / ratio : null } : {}),
      ...(p?.detail?.extrapolated === true ? { pouchExtrapolated: true } : {}),
      target: targetText(row),
    };
  });
}

function targetText(row: RowSpec): string | null {
  const t = row.target;
  if (!t) return null;
  const op = t.op === '>=' ? '≥' : '≤';
  if ('faster' in t) return `${op}${t.faster}× faster`;
  return 'ratio' in t ? `${op}${t.ratio}×` : `Settee ${op}${t.absolute} ${row.unit}`;
}

export function formatNumber(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '-';
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Settee / pouchdb-server; for times also how many times faster (a ratio below 0.01 keeps two significant digits). */
function ratioText(r: ComparisonRow): string {
  if (r.ratio === null) return '-';
  const ratio = r.ratio !== 0 && Math.abs(r.ratio) < 0.01 ? r.ratio.toPrecision(2) : r.ratio.toFixed(2);
  if (r.faster === undefined || r.faster === null) return `${ratio}×`;
  return `${ratio}× (${formatNumber(r.faster)}× faster)`;
}

function cell(result: ServerResult, value: number | null): string {
  if (value !== null) return formatNumber(value);
  return result.status === 'skipped' ? 'skipped' : 'n/a';
}

/** The comparison as an aligned text table. */
export function formatTable(rows: readonly ComparisonRow[], settee: ServerResult, pouch: ServerResult): string {
  const header = ['workload', 'unit', 'Settee', 'pouchdb-server', 'Settee/pouchdb', 'target'];
  const body = rows.map((r) => [
    r.label,
    r.unit,
    cell(settee, r.settee),
    r.pouchExtrapolated && r.pouchdbServer !== null ? `~${formatNumber(r.pouchdbServer)}` : cell(pouch, r.pouchdbServer),
    ratioText(r),
    r.target ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const numeric = [false, false, true, true, true, false];
  const format = (line: string[]): string =>
    line.map((text, i) => (numeric[i] ? text.padStart(widths[i]!) : text.padEnd(widths[i]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [format(header), rule, ...body.map(format)].join('\n');
}
