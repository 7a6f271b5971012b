/**
 * Virtual hosts (`[vhosts]`), as CouchDB 1.6's couch_httpd_vhost routes them: a request whose
 * Host (or `[httpd] x_forwarded_host` header) matches a rule is served from the rule's path, so
 * `example.com = /db/_design/app/_rewrite` makes a CouchApp the site's root.
 *
 * A rule's key is a host pattern, optionally with a port and a path prefix
 * (`:ddoc.:db.example.com:5984/app`): `*` as the leftmost label matches any further labels,
 * `:name` one label; its value is the target path, where `:name` is replaced by the label it
 * bound and `*` by the labels the wildcard matched. Requests whose first path segment is one of
 * `[httpd] vhost_global_handlers` keep their path. The rewritten request carries the path the
 * client asked for in `x-couchdb-vhost-path` (design functions see it as `requested_path`).
 * Rules are tried in CouchDB's order (its reverse Erlang term order of the parsed rules, which
 * puts literal host names before bindings and wildcards).
 */

/** One label (or path segment) of a rule: literal text, a `:name` binding, or the `*` wildcard. */
type Part = { kind: 'literal'; text: string } | { kind: 'bind'; name: string } | { kind: 'all' };

export interface VhostRule {
  /** Host labels, left to right. */
  host: Part[];
  /** The port the Host must name, or '*' for any. */
  port: number | '*';
  /** Path segments the request path must start with (removed from it). */
  prefix: string[];
  /** The target path's segments. */
  target: Part[];
}

/** Where a matched request goes: its new URL, and the path it asked for (`x-couchdb-vhost-path`). */
export interface VhostRoute {
  url: string;
  vhostPath: string;
}

/** The rules of a `[vhosts]` section, in the order CouchDB tries them. */
export function parseVhostRules(section: Readonly<Record<string, string>>): VhostRule[] {
  const rules: VhostRule[] = [];
  for (const [key, value] of Object.entries(section)) {
    const split = /^[^/?#]*/.exec(key)![0];
    // A rule without a host name never matches in CouchDB (its pattern is not a label list).
    if (split === '') continue;
    const { labels, port } = splitHostPort(split);
    const rest = key.slice(split.length);
    rules.push({ host: labels.map(partOf), port, prefix: tokens(rest, '/'), target: tokens(value, '/').map(partOf) });
  }
  return rules.sort(compareRules).reverse();
}

/** The route of a request by its Host header value and raw URL, or undefined to serve it as is. */
export function routeVhost(rules: readonly VhostRule[], globals: readonly string[], hostHeader: string, rawUrl: string): VhostRoute | undefined {
  if (rules.length === 0) return undefined;
  const q = rawUrl.search(/[?#]/);
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const tail = q === -1 || rawUrl.length === q + 1 ? '' : rawUrl.slice(q);
  const pathParts = tokens(path, '/');
  const { labels, port } = splitHostPort(hostHeader);
  const reversedHost = [...labels].reverse();
  for (const rule of rules) {
    if (rule.port !== '*' && rule.port !== port) continue;
    const bound = bindHost([...rule.host].reverse(), reversedHost);
    if (!bound) continue;
    const remaining = bindPath(rule.prefix, pathParts);
    if (!remaining) continue;
    const front = path.replace(/^\//, '').split('/')[0] || '/';
    if (globals.includes(front)) return undefined;
    const target = `/${makeTarget(rule.target, bound.bindings, bound.remaining).join('/')}`;
    const vhostPath = `/${remaining.join('/')}${tail}`;
    // CouchDB appends the path to a target of `/` too ("//db"), which its router reads as "/db".
    return { url: target === '/' ? vhostPath : `${target}${vhostPath}`, vhostPath };
  }
  return undefined;
}

/** `[httpd] vhost_global_handlers`: a comma-separated list. */
export function parseGlobals(value: string | undefined): string[] {
  return (value ?? '').split(/\s*,\s*/).map((s) => s.trim()).filter((s) => s !== '');
}

function tokens(text: string, separator: string): string[] {
  return text.split(separator).filter((t) => t !== '');
}

function partOf(token: string): Part {
  if (token === '*') return { kind: 'all' };
  if (token.startsWith(':')) return { kind: 'bind', name: token.slice(1) };
  return { kind: 'literal', text: token };
}

/**
 * `host[:port]` as CouchDB splits it (couch_httpd_vhost, couch_httpd_cors:split_host_port): a
 * port only when what follows the last `:` is an integer.
 */
export function hostAndPort(text: string): { host: string; port: number | undefined } {
  const colon = text.lastIndexOf(':');
  if (colon !== -1 && /^[+-]?\d+$/.test(text.slice(colon + 1))) return { host: text.slice(0, colon), port: Number(text.slice(colon + 1)) };
  return { host: text, port: undefined };
}

function splitHostPort(text: string): { labels: string[]; port: number | '*' } {
  const { host, port } = hostAndPort(text);
  return { labels: tokens(host, '.'), port: port ?? '*' };
}

/** Matches rule labels against host labels, both right to left (couch_httpd_vhost:bind_vhost). */
function bindHost(rule: readonly Part[], host: readonly string[]): { bindings: Map<string, string>; remaining: string[] } | undefined {
  const bindings = new Map<string, string>();
  let i = 0;
  for (; i < rule.length; i++) {
    const part = rule[i]!;
    if (part.kind === 'all' && i === rule.length - 1) {
      // The wildcard, leftmost, takes one or more labels.
      if (i >= host.length) return undefined;
      return { bindings, remaining: host.slice(i) };
    }
    if (i >= host.length) return undefined;
    if (part.kind === 'literal') {
      if (part.text !== host[i]) return undefined;
    } else {
      // A later (leftmost) binding of the same name wins, as CouchDB looks bindings up.
      bindings.set(part.kind === 'bind' ? part.name : '*', host[i]!);
    }
  }
  return i === host.length ? { bindings, remaining: [] } : undefined;
}

function bindPath(prefix: readonly string[], parts: readonly string[]): string[] | undefined {
  if (prefix.length === 0) return [...parts];
  if (parts.length === 0) return undefined;
  for (let i = 0; i < prefix.length; i++) {
    if (i >= parts.length || parts[i] !== prefix[i]) return undefined;
  }
  return parts.slice(prefix.length);
}

function makeTarget(target: readonly Part[], bindings: ReadonlyMap<string, string>, remaining: readonly string[]): string[] {
  const out: string[] = [];
  for (const part of target) {
    if (part.kind === 'all') return [...out, ...remaining];
    out.push(part.kind === 'literal' ? part.text : bindings.get(part.name) ?? 'undefined');
  }
  return out;
}

// Erlang's term order over the parsed rules ({{Host, Port, Prefix}, Target}): a label is a
// string (a list), a binding the tuple {bind, Name} and the wildcard {bind, '*'}; tuples sort
// before lists, atoms before lists, numbers before atoms, and a list before any longer list it
// starts.

function compareRules(a: VhostRule, b: VhostRule): number {
  return compareLists(a.host, b.host, compareParts)
    || comparePorts(a.port, b.port)
    || compareLists(a.prefix, b.prefix, compareStrings)
    || compareLists(a.target, b.target, compareParts);
}

function compareLists<T>(a: readonly T[], b: readonly T[], compare: (x: T, y: T) => number): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compare(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function compareStrings(a: string, b: string): number {
  return compareLists([...Buffer.from(a)], [...Buffer.from(b)], (x, y) => x - y);
}

function compareParts(a: Part, b: Part): number {
  const rank = (p: Part) => (p.kind === 'literal' ? 2 : p.kind === 'bind' ? 1 : 0);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a.kind === 'literal' && b.kind === 'literal') return compareStrings(a.text, b.text);
  if (a.kind === 'bind' && b.kind === 'bind') return compareStrings(a.name, b.name);
  return 0;
}

function comparePorts(a: number | '*', b: number | '*'): number {
  if (a === b) return 0;
  if (a === '*') return 1;
  if (b === '*') return -1;
  return a - b;
}
