/**
 * Revision trees: CouchDB's history of a document as a forest of revision paths.
 *
 * A revision is `<pos>-<hash>`; pos counts edits from the document's creation. Stemming (the
 * `_revs_limit`) cuts old ancestors, so a root may start at pos > 1, and replication can bring
 * disjoint branches, hence a forest. Pure data and functions: no storage, no I/O.
 *
 * Semantics follow CouchDB's couch_key_tree (merge, stem, remove_leafs) and couch_doc (winner).
 *
 * Trees are immutable values: no function here mutates its input, and returned trees share
 * unchanged nodes (and children arrays) with their inputs, so callers must not mutate them either.
 * Every walk is iterative, so deep trees (large `_revs_limit`) cannot overflow the stack.
 */
import { type ByteReader, type ByteWriter, isMd5Hex } from './bytes.js';

export interface RevNode {
  hash: string;
  /**
   * Set on revisions that are deletions (tombstones). Meaningful on leaves; an interior node keeps
   * the flag it had when it was a leaf (a deletion later edited, i.e. "undeleted").
   */
  deleted: boolean;
  /**
   * Whether this revision's body is stored. False for ancestors only known by id (from
   * replication with `new_edits=false`, or whose bodies compaction dropped).
   */
  available: boolean;
  /** Sorted by hash. */
  children: RevNode[];
}

export interface RevRoot {
  /** pos of `node`. */
  pos: number;
  node: RevNode;
}

/** A forest, roots sorted by (pos, hash). */
export type RevTree = RevRoot[];

export interface Leaf {
  rev: string;
  pos: number;
  hash: string;
  deleted: boolean;
  available: boolean;
}

export interface RevPath {
  /** pos of the first (newest) hash. */
  pos: number;
  /** Newest first: [leaf, parent, grandparent, ...] — CouchDB's `_revisions.ids`. */
  hashes: string[];
}

const DECIMAL = /^[0-9]+$/;
const HEX_HASH = /^[0-9a-fA-F]{32}$/;
const UPPER_HEX_DIGIT = /[A-F]/;

/**
 * A hash as CouchDB reads it and renders it again (couch_doc:parse_revid, revid_to_str): 32 hex
 * digits, in either case, are 16 bytes and come back as lower-case hex; any other text is kept as
 * given.
 */
export function canonicalHash(hash: string): string {
  return hash.length === 32 && UPPER_HEX_DIGIT.test(hash) && HEX_HASH.test(hash) ? hash.toLowerCase() : hash;
}

/**
 * Parses `<pos>-<hash>`: pos is a non-negative decimal integer without sign (0 only occurs in
 * `_local` documents' `0-N`), hash is everything after the first `-`, possibly empty, in its
 * canonical form (`canonicalHash`), so `1-ABC…` and `1-abc…` name one revision.
 */
export function parseRev(rev: string): { pos: number; hash: string } | undefined {
  if (typeof rev !== 'string') return undefined;
  const dash = rev.indexOf('-');
  // An empty hash (`1-`) parses, as in couch_doc:parse_rev.
  if (dash <= 0) return undefined;
  const posText = rev.slice(0, dash);
  if (!DECIMAL.test(posText)) return undefined;
  const pos = Number(posText);
  if (!Number.isSafeInteger(pos)) return undefined;
  return { pos, hash: canonicalHash(rev.slice(dash + 1)) };
}
export function formatRev(pos: number, hash: string): string { return `${pos}-${hash}`; }

/**
 * A revision a client gave, as CouchDB parses and renders it again (`1-ABC…` is `1-abc…`, `01-x`
 * is `1-x`), or undefined when it does not parse. Revisions from requests go through here, so
 * the rest of the server compares them as strings.
 */
export function canonicalRev(rev: string): string | undefined {
  const parsed = parseRev(rev);
  return parsed && formatRev(parsed.pos, parsed.hash);
}

// ---------------------------------------------------------------------------------------------
// Ordering

const LOWER_HEX_HASH = /^[0-9a-f]{32}$/;

/** A hash as CouchDB keeps it (couch_doc:parse_revid): 32 hex digits as their 16 bytes, anything else as its UTF-8. */
function hashBytes(hash: string): Buffer {
  return HEX_HASH.test(hash) ? Buffer.from(hash, 'hex') : Buffer.from(hash, 'utf8');
}

/**
 * CouchDB's order of hashes: by the bytes it keeps, so a replica of either server picks the same
 * winner even among hashes that are not MD5s (`1-abc` from new_edits=false).
 */
function compareHash(a: string, b: string): number {
  // The usual case, two MD5s in lowercase hex: their text orders as their bytes.
  if (LOWER_HEX_HASH.test(a) && LOWER_HEX_HASH.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(hashBytes(a), hashBytes(b));
}

function compareRoots(a: RevRoot, b: RevRoot): number {
  return a.pos - b.pos || compareHash(a.node.hash, b.node.hash);
}

function compareNodes(a: RevNode, b: RevNode): number {
  return compareHash(a.hash, b.hash);
}

/**
 * CouchDB's leaf order, best first: live before deleted, then higher pos, then higher hash.
 * Negative when `a` wins over `b`.
 */
export function compareLeaves(a: { pos: number; hash: string; deleted: boolean }, b: { pos: number; hash: string; deleted: boolean }): number {
  if (a.deleted !== b.deleted) return a.deleted ? 1 : -1;
  if (a.pos !== b.pos) return b.pos - a.pos;
  return compareHash(b.hash, a.hash);
}

// ---------------------------------------------------------------------------------------------
// Walking

/** Calls `fn` for every node, depth first, roots in order, children in order. */
function walk(tree: RevTree, fn: (node: RevNode, pos: number) => void): void {
  const stack: { node: RevNode; pos: number }[] = [];
  for (const root of tree) {
    // A linear history (the usual case) is walked without the stack.
    let node = root.node;
    let pos = root.pos;
    fn(node, pos);
    while (node.children.length === 1) {
      node = node.children[0]!;
      fn(node, ++pos);
    }
    const branches = node.children;
    for (let i = branches.length - 1; i >= 0; i--) stack.push({ node: branches[i]!, pos: pos + 1 });
    while (stack.length > 0) {
      const { node, pos } = stack.pop()!;
      fn(node, pos);
      const ch = node.children;
      for (let i = ch.length - 1; i >= 0; i--) stack.push({ node: ch[i]!, pos: pos + 1 });
    }
  }
}

/**
 * The nodes from `root` down to the first node (depth first, children in order) at `depth` below
 * it with `hash`, or undefined. Only descends `depth` levels.
 */
function findAtDepth(root: RevNode, depth: number, hash: string): RevNode[] | undefined {
  if (depth < 0) return undefined;
  const trail: RevNode[] = [];
  // Fast path for the usual linear history: follow single children without a stack.
  let node = root;
  while (trail.length < depth && node.children.length === 1) {
    trail.push(node);
    node = node.children[0]!;
  }
  const base = trail.length;
  const stack: { node: RevNode; d: number }[] = [{ node, d: base }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    trail.length = top.d;
    trail.push(top.node);
    if (top.d === depth) {
      if (top.node.hash === hash) return trail;
      continue;
    }
    const ch = top.node.children;
    for (let i = ch.length - 1; i >= 0; i--) stack.push({ node: ch[i]!, d: top.d + 1 });
  }
  return undefined;
}

/** The node for (pos, hash) and the nodes from its root down to it. */
function find(tree: RevTree, pos: number, hash: string): RevNode[] | undefined {
  for (const root of tree) {
    if (root.pos > pos) continue;
    const trail = findAtDepth(root.node, pos - root.pos, hash);
    if (trail) return trail;
  }
  return undefined;
}

function findRev(tree: RevTree, rev: string): { pos: number; trail: RevNode[] } | undefined {
  const r = parseRev(rev);
  if (!r) return undefined;
  const trail = find(tree, r.pos, r.hash);
  return trail ? { pos: r.pos, trail } : undefined;
}

function toLeaf(node: RevNode, pos: number): Leaf {
  return { rev: formatRev(pos, node.hash), pos, hash: node.hash, deleted: node.deleted, available: node.available };
}

// ---------------------------------------------------------------------------------------------
// Queries

/** The leaf of a root whose history has no branches, with its position; undefined if it branches. */
function linearEnd(root: RevRoot): { node: RevNode; pos: number } | undefined {
  let { node, pos } = root;
  while (node.children.length === 1) {
    node = node.children[0]!;
    pos++;
  }
  return node.children.length === 0 ? { node, pos } : undefined;
}

/** Every leaf, winner first (CouchDB's order: live before deleted, then higher pos, then higher hash). */
export function leaves(tree: RevTree): Leaf[] {
  // A history without branches has one leaf: its end.
  const end = tree.length === 1 ? linearEnd(tree[0]!) : undefined;
  if (end) return [toLeaf(end.node, end.pos)];
  const out: Leaf[] = [];
  walk(tree, (node, pos) => {
    if (node.children.length === 0) out.push(toLeaf(node, pos));
  });
  return out.sort(compareLeaves);
}

/** The winning leaf, or undefined for an empty tree. */
export function winner(tree: RevTree): Leaf | undefined {
  let best: RevNode | undefined;
  let bestPos = 0;
  for (const root of tree) {
    // Linear stretches (the usual case) need no stack.
    const stack: { node: RevNode; pos: number }[] = [{ node: root.node, pos: root.pos }];
    while (stack.length > 0) {
      let { node, pos } = stack.pop()!;
      while (node.children.length === 1) {
        node = node.children[0]!;
        pos++;
      }
      const ch = node.children;
      if (ch.length === 0) {
        if (!best || compareLeaves({ pos, hash: node.hash, deleted: node.deleted }, { pos: bestPos, hash: best.hash, deleted: best.deleted }) < 0) {
          best = node;
          bestPos = pos;
        }
      } else {
        for (let i = ch.length - 1; i >= 0; i--) stack.push({ node: ch[i]!, pos: pos + 1 });
      }
    }
  }
  return best ? toLeaf(best, bestPos) : undefined;
}

export function hasRev(tree: RevTree, rev: string): boolean {
  return findRev(tree, rev) !== undefined;
}

/**
 * The revisions of `revs` the tree does not have, in the order couch_key_tree:find_missing gives
 * them (`_revs_diff`): a revision of a lower position than a node is set aside in front as
 * that node is reached, the rest keep their order; repeats stay. Revisions that do not parse
 * are missing.
 */
export function missingRevs(tree: RevTree, revs: readonly string[]): string[] {
  type Key = { pos: number; hash: string; rev: string };
  const keys: Key[] = revs.map((rev) => {
    const parsed = parseRev(rev);
    return { pos: parsed?.pos ?? -1, hash: parsed?.hash ?? '', rev };
  });
  const search = (pos: number, nodes: readonly RevNode[], from: number, sought: Key[]): Key[] => {
    if (from >= nodes.length || sought.length === 0) return from >= nodes.length ? sought : [];
    const node = nodes[from]!;
    const below = sought.filter((k) => k.pos < pos);
    const deeper = search(pos + 1, node.children, 0, sought.filter((k) => k.pos >= pos));
    const left = search(pos, nodes, from + 1, deeper);
    const found = left.findIndex((k) => k.pos === pos && k.hash === node.hash);
    if (found >= 0) left.splice(found, 1);
    return below.concat(left);
  };
  try {
    let sought = keys;
    for (const root of tree) sought = search(root.pos, [root.node], 0, sought);
    return sought.map((k) => k.rev);
  } catch (err) {
    // A history deeper than the stack (a huge revs_limit): the same revisions, in request order.
    if (err instanceof RangeError) return revs.filter((rev) => !hasRev(tree, rev));
    throw err;
  }
}

export function isLeaf(tree: RevTree, rev: string): boolean {
  const found = findRev(tree, rev);
  return found !== undefined && found.trail[found.trail.length - 1]!.children.length === 0;
}

/** The path from `rev` to its root, or undefined when the tree lacks it. */
export function pathTo(tree: RevTree, rev: string): RevPath | undefined {
  const found = findRev(tree, rev);
  if (!found) return undefined;
  const hashes: string[] = new Array(found.trail.length);
  for (let i = 0, j = found.trail.length - 1; j >= 0; i++, j--) hashes[i] = found.trail[j]!.hash;
  return { pos: found.pos, hashes };
}

/**
 * Like `pathTo`, with each entry's status for `_revs_info`: "deleted" (a tombstone), "available"
 * (body stored) or "missing" (no stored body).
 */
export function revsInfo(tree: RevTree, rev: string): { rev: string; status: 'available' | 'missing' | 'deleted' }[] | undefined {
  const found = findRev(tree, rev);
  if (!found) return undefined;
  const out: { rev: string; status: 'available' | 'missing' | 'deleted' }[] = [];
  const { trail } = found;
  for (let j = trail.length - 1, pos = found.pos; j >= 0; j--, pos--) {
    const node = trail[j]!;
    out.push({ rev: formatRev(pos, node.hash), status: node.deleted ? 'deleted' : node.available ? 'available' : 'missing' });
  }
  return out;
}

/** Every revision in the tree (depth first, roots in order). */
export function allRevs(tree: RevTree): string[] {
  const out: string[] = [];
  walk(tree, (node, pos) => out.push(formatRev(pos, node.hash)));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Merging (couch_key_tree:merge)

/**
 * Nodes created from the path being merged. Where such a node meets an existing one, the existing
 * node's flags win; where two existing nodes meet (roots joined), a stored body wins.
 */
type Fresh = Set<RevNode>;

function combine(ours: RevNode, theirs: RevNode, fresh: Fresh): RevNode {
  const oursFresh = fresh.has(ours);
  const theirsFresh = fresh.has(theirs);
  let src = ours;
  if (oursFresh !== theirsFresh) src = oursFresh ? theirs : ours;
  else if (ours.available !== theirs.available) src = ours.available ? ours : theirs;
  const node: RevNode = { hash: ours.hash, deleted: src.deleted, available: src.available, children: [] };
  if (oursFresh && theirsFresh) fresh.add(node);
  return node;
}

/** Merges two nodes with the same hash and their subtrees (couch_key_tree's merge_simple). */
function mergeNodes(ours: RevNode, theirs: RevNode, fresh: Fresh): RevNode {
  const top = combine(ours, theirs, fresh);
  const work: { out: RevNode; a: RevNode[]; b: RevNode[] }[] = [{ out: top, a: ours.children, b: theirs.children }];
  while (work.length > 0) {
    const { out, a, b } = work.pop()!;
    if (b.length === 0) { out.children = a; continue; }
    if (a.length === 0) { out.children = b; continue; }
    const children = a.slice();
    let grew = false;
    for (const child of b) {
      const i = children.findIndex((c) => c.hash === child.hash);
      if (i < 0) {
        children.push(child);
        grew = true;
      } else {
        const existing = children[i]!;
        const merged = combine(existing, child, fresh);
        children[i] = merged;
        work.push({ out: merged, a: existing.children, b: child.children });
      }
    }
    if (grew) children.sort(compareNodes);
    out.children = children;
  }
  return top;
}

/** Rebuilds the nodes of `trail` (root first) with its last node replaced by `replacement`. */
function replaceAlong(trail: RevNode[], replacement: RevNode, fresh: Fresh): RevNode {
  let cur = replacement;
  for (let i = trail.length - 2; i >= 0; i--) {
    const parent = trail[i]!;
    const old = trail[i + 1]!;
    const children = parent.children.slice();
    children[children.indexOf(old)] = cur;
    const copy: RevNode = { hash: parent.hash, deleted: parent.deleted, available: parent.available, children };
    if (fresh.has(parent)) fresh.add(copy);
    cur = copy;
  }
  return cur;
}

/**
 * couch_key_tree's merge_at for two roots: when one root's revision appears in the other at the
 * same pos, the trees are merged there (the merged root starts at the lower pos); otherwise
 * undefined. `ours` wins flag ties.
 */
function mergeRoots(ours: RevRoot, theirs: RevRoot, fresh: Fresh): RevRoot | undefined {
  if (theirs.pos >= ours.pos) {
    const trail = findAtDepth(ours.node, theirs.pos - ours.pos, theirs.node.hash);
    if (!trail) return undefined;
    const merged = mergeNodes(trail[trail.length - 1]!, theirs.node, fresh);
    return { pos: ours.pos, node: replaceAlong(trail, merged, fresh) };
  }
  const trail = findAtDepth(theirs.node, ours.pos - theirs.pos, ours.node.hash);
  if (!trail) return undefined;
  const merged = mergeNodes(ours.node, trail[trail.length - 1]!, fresh);
  return { pos: theirs.pos, node: replaceAlong(trail, merged, fresh) };
}

/**
 * Adds a root to a forest, merging it with every root it overlaps (repeatedly, since a merged
 * root may then overlap another one); a root that overlaps nothing stays separate.
 */
function insertRoot(forest: readonly RevRoot[], root: RevRoot, fresh: Fresh): RevTree {
  const rest = forest.slice();
  let cur = root;
  let again = true;
  while (again) {
    again = false;
    for (let i = 0; i < rest.length; i++) {
      const merged = mergeRoots(rest[i]!, cur, fresh);
      if (merged) {
        rest.splice(i, 1);
        cur = merged;
        again = true;
        break;
      }
    }
  }
  rest.push(cur);
  return rest.sort(compareRoots);
}

/**
 * Merges a revision path (from an edit or from replication) into the tree, as couch_key_tree:merge
 * does (without its stemming: call `stem` for that). The path covers revisions `pos`, `pos - 1`,
 * ..., `pos - hashes.length + 1`. Where it overlaps a root (same hash at the same pos) the missing
 * part is grafted, which may extend a stemmed root upwards or join roots that were disjoint;
 * a path overlapping nothing becomes a new root (a conflict branch).
 *
 * The path's newest revision becomes a leaf carrying `deleted` (and a stored body); ancestors the
 * tree lacks are added as unavailable, not deleted; revisions already present keep their flags.
 * `added` tells whether the newest revision is new to the tree; when it is not, the tree is still
 * merged with the path (which can only add ancestors above a stemmed root or join roots, as in
 * CouchDB), but no existing flag changes.
 *
 * Returns a new tree; the input is not mutated.
 */
export function merge(tree: RevTree, path: RevPath, deleted: boolean): { tree: RevTree; added: boolean } {
  const n = path.hashes.length;
  if (n === 0) throw new RangeError('revtree.merge: empty revision path');
  if (tree.length === 0) {
    // A new document: the path is the tree.
    let node: RevNode = { hash: path.hashes[0]!, deleted, available: true, children: [] };
    for (let i = 1; i < n; i++) node = { hash: path.hashes[i]!, deleted: false, available: false, children: [node] };
    return { tree: [{ pos: path.pos - n + 1, node }], added: true };
  }
  const added = find(tree, path.pos, path.hashes[0]!) === undefined;
  const fresh: Fresh = new Set();
  let node: RevNode = { hash: path.hashes[0]!, deleted, available: true, children: [] };
  fresh.add(node);
  for (let i = 1; i < n; i++) {
    node = { hash: path.hashes[i]!, deleted: false, available: false, children: [node] };
    fresh.add(node);
  }
  return { tree: insertRoot(tree, { pos: path.pos - n + 1, node }, fresh), added };
}

// ---------------------------------------------------------------------------------------------
// Stemming (couch_key_tree:stem)

/**
 * Keeps only the newest `limit` revisions of every root-to-leaf path, as couch_key_tree:stem does
 * (cut every leaf's path to `limit` revisions, merge the cut paths back together). A node survives
 * when some leaf below it (or itself) is fewer than `limit` revisions away, and stays attached to
 * its parent only when some cut path holds both; otherwise it starts a new root. Roots that then
 * overlap (only possible when the input forest had overlapping roots) are merged.
 */
export function stem(tree: RevTree, limit: number): RevTree {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`revtree.stem: bad limit ${limit}`);
  const end = tree.length === 1 ? linearEnd(tree[0]!) : undefined;
  if (end && end.pos - tree[0]!.pos + 1 <= limit) return tree;
  interface Frame { node: RevNode; pos: number; i: number; kids: RevNode[]; changed: boolean; minDist: number }
  const roots: RevRoot[] = [];
  let cut = false;
  for (const root of tree) {
    const stack: Frame[] = [{ node: root.node, pos: root.pos, i: 0, kids: [], changed: false, minDist: Infinity }];
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!;
      if (f.i < f.node.children.length) {
        stack.push({ node: f.node.children[f.i++]!, pos: f.pos + 1, i: 0, kids: [], changed: false, minDist: Infinity });
        continue;
      }
      stack.pop();
      // Distance from this node to the nearest leaf below it.
      const dist = f.node.children.length === 0 ? 0 : f.minDist + 1;
      let out: RevNode | undefined;
      if (dist < limit) {
        out = f.changed ? { hash: f.node.hash, deleted: f.node.deleted, available: f.node.available, children: f.kids } : f.node;
      } else {
        cut = true;
      }
      const parent = stack[stack.length - 1];
      if (parent && dist < parent.minDist) parent.minDist = dist;
      // The edge to the parent survives when some leaf path keeps both ends: a leaf below this
      // node fewer than `limit - 1` revisions away.
      if (parent && out && dist + 1 < limit) {
        parent.kids.push(out);
        if (out !== f.node) parent.changed = true;
      } else {
        if (parent) {
          parent.changed = true;
          cut = true;
        }
        if (out) roots.push({ pos: f.pos, node: out });
      }
    }
  }
  if (!cut && tree.length <= 1) return tree;
  const fresh: Fresh = new Set();
  let forest: RevTree = [];
  for (const root of roots) forest = insertRoot(forest, root, fresh);
  return forest;
}

// ---------------------------------------------------------------------------------------------
// Rewriting

/**
 * Rebuilds one root bottom-up (iteratively). `visit` gets a node, its pos, the rewritten children
 * that survived, and whether they differ from the node's own; it returns the node to keep (the
 * same object when unchanged) or null to drop it.
 */
function rewrite(root: RevRoot, visit: (node: RevNode, pos: number, kids: RevNode[], changed: boolean) => RevNode | null): RevNode | null {
  interface Frame { node: RevNode; pos: number; i: number; kids: RevNode[]; changed: boolean }
  const stack: Frame[] = [{ node: root.node, pos: root.pos, i: 0, kids: [], changed: false }];
  let result: RevNode | null = null;
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.i < f.node.children.length) {
      stack.push({ node: f.node.children[f.i++]!, pos: f.pos + 1, i: 0, kids: [], changed: false });
      continue;
    }
    stack.pop();
    const out = visit(f.node, f.pos, f.kids, f.changed);
    const parent = stack[stack.length - 1];
    if (!parent) result = out;
    else {
      if (out) parent.kids.push(out);
      if (out !== f.node) parent.changed = true;
    }
  }
  return result;
}

function rewriteTree(tree: RevTree, visit: (node: RevNode, pos: number, kids: RevNode[], changed: boolean) => RevNode | null): RevTree {
  const out: RevTree = [];
  for (const root of tree) {
    const node = rewrite(root, visit);
    if (node) out.push(node === root.node ? root : { pos: root.pos, node });
  }
  return out;
}

/** Revisions grouped by pos, for quick membership tests while walking. */
function revIndex(revs: Iterable<string>): Map<number, Set<string>> {
  const index = new Map<number, Set<string>>();
  for (const rev of revs) {
    const r = parseRev(rev);
    if (!r) continue;
    let set = index.get(r.pos);
    if (!set) index.set(r.pos, (set = new Set()));
    set.add(r.hash);
  }
  return index;
}

function withChildren(node: RevNode, children: RevNode[]): RevNode {
  return { hash: node.hash, deleted: node.deleted, available: node.available, children };
}

/** Marks the bodies of the listed revisions as no longer stored (compaction). */
export function markUnavailable(tree: RevTree, revs: ReadonlySet<string>): RevTree {
  if (revs.size === 0) return tree;
  const index = revIndex(revs);
  return rewriteTree(tree, (node, pos, kids, changed) => {
    const hit = node.available && index.get(pos)?.has(node.hash) === true;
    if (!hit) return changed ? withChildren(node, kids) : node;
    return { hash: node.hash, deleted: node.deleted, available: false, children: changed ? kids : node.children };
  });
}

/**
 * Removes the listed leaf revisions (purge) as couch_key_tree:remove_leafs does: each listed leaf
 * goes with every ancestor that leads to no other remaining leaf, so purging a conflict drops its
 * branch back to where it forked, and purging every leaf of a root drops the root (an empty tree
 * means the document is gone). Listed revisions that are not leaves are ignored. `removed` lists
 * the revisions actually removed, once each, in remove_leafs' order (the purge's answer lists
 * them so): roots in order, each root's removed leaves last first (depth first, children in
 * order, reversed), as its filter_leafs walks the leaves of get_all_leafs_full (later roots
 * first) and puts each match in front of those before.
 * (See `removeLeafNodes` for removing only the leaf nodes themselves.)
 */
export function removeLeaves(tree: RevTree, revs: readonly string[]): { tree: RevTree; removed: string[] } {
  return removeImpl(tree, revs, true);
}

/**
 * Like `removeLeaves`, but removes only the listed leaf nodes themselves: a parent whose children
 * were all removed becomes a leaf again (keeping its own flags), as PouchDB's purge does. A root
 * that was itself a removed leaf is dropped. `removed` is in the order given, without duplicates.
 */
export function removeLeafNodes(tree: RevTree, revs: readonly string[]): { tree: RevTree; removed: string[] } {
  return removeImpl(tree, revs, false);
}

function removeImpl(tree: RevTree, revs: readonly string[], prune: boolean): { tree: RevTree; removed: string[] } {
  if (revs.length === 0) return { tree, removed: [] };
  const index = revIndex(revs);
  const hit = new Set<string>();
  // The leaves removed, per root, in the order the walk (depth first, children in order) met them.
  const hitsByRoot: string[][] = [];
  const out: RevTree = [];
  for (const root of tree) {
    const rootHits: string[] = [];
    hitsByRoot.push(rootHits);
    const node = rewrite(root, (node, pos, kids, changed) => {
      if (node.children.length === 0) {
        if (index.get(pos)?.has(node.hash) !== true) return node;
        const rev = formatRev(pos, node.hash);
        hit.add(rev);
        rootHits.push(rev);
        return null;
      }
      if (!changed) return node;
      if (kids.length === 0 && prune) return null;
      return withChildren(node, kids);
    });
    if (node) out.push(node === root.node ? root : { pos: root.pos, node });
  }
  if (hit.size === 0) return { tree, removed: [] };
  if (prune) return { tree: out, removed: hitsByRoot.flatMap((hits) => hits.reverse()) };
  const removed: string[] = [];
  for (const rev of revs) {
    const r = parseRev(rev);
    if (!r) continue;
    const canonical = formatRev(r.pos, r.hash);
    if (hit.delete(canonical)) removed.push(canonical);
  }
  return { tree: removed.length === 0 ? tree : out, removed };
}

// ---------------------------------------------------------------------------------------------
// Storage encoding

/*
 * The tree is cut into segments: maximal chains of nodes each of which (but the last) has exactly
 * one child, so a linear history is a single segment.
 *
 *   tree    = [root, ...]                       (empty tree: [])
 *   root    = [pos, H, F, ...segment]           pos of the segment's first node
 *   segment = [H, F, ...segment]                children of the chain's last node, in order
 *   H       = "base64"                          when every hash of the chain is 32 lowercase hex
 *                                               digits (CouchDB's MD5 revs): their bytes, concatenated
 *           | ["hash", ...]                     otherwise, the hashes as strings
 *   F       = flags                             when the whole chain has the same flags
 *           | [flags, count, flags, count, ...] runs of flags along the chain, oldest first
 *   flags   = (deleted ? 1 : 0) | (available ? 2 : 0)
 *
 * A 1000-revision compacted history is thus [[1,"<21336 chars>",[0,999,2,1]]].
 */

/** The chain's hashes packed as base64 when every one is 32 lowercase hex digits, else undefined. */
function packHashes(hashes: readonly string[]): string | undefined {
  // Only lowercase 32-digit hex packs: anything else would not come back identical.
  for (const h of hashes) if (!isMd5Hex(h)) return undefined;
  return Buffer.from(hashes.length === 1 ? hashes[0]! : hashes.join(''), 'hex').toString('base64');
}

function flagsOf(node: RevNode): number {
  return (node.deleted ? 1 : 0) | (node.available ? 2 : 0);
}

function encodeChain(start: RevNode, out: unknown[]): RevNode {
  const chain: RevNode[] = [start];
  let node = start;
  while (node.children.length === 1) {
    node = node.children[0]!;
    chain.push(node);
  }
  const hashes = chain.map((n) => n.hash);
  out.push(packHashes(hashes) ?? hashes);
  const runs: number[] = [];
  for (const n of chain) {
    const f = flagsOf(n);
    if (runs.length > 0 && runs[runs.length - 2] === f) runs[runs.length - 1]!++;
    else runs.push(f, 1);
  }
  out.push(runs.length === 2 ? runs[0] : runs);
  return node;
}

/** Compact JSON-able encoding for storage, and its inverse. */
export function encode(tree: RevTree): unknown {
  const out: unknown[] = [];
  const work: { node: RevNode; target: unknown[] }[] = [];
  for (const root of tree) {
    const arr: unknown[] = [root.pos];
    out.push(arr);
    work.push({ node: root.node, target: arr });
    while (work.length > 0) {
      const { node, target } = work.pop()!;
      const last = encodeChain(node, target);
      for (const child of last.children) {
        const seg: unknown[] = [];
        target.push(seg);
        work.push({ node: child, target: seg });
      }
    }
  }
  return out;
}

function bad(why: string): never {
  throw new Error(`revtree.decode: ${why}`);
}

function decodeHashes(h: unknown): string[] {
  if (typeof h === 'string') {
    const bytes = Buffer.from(h, 'base64');
    if (bytes.length === 0 || bytes.length % 16 !== 0 || bytes.toString('base64') !== h) bad('bad packed hashes');
    const hex = bytes.toString('hex');
    const hashes: string[] = new Array(bytes.length / 16);
    for (let i = 0; i < hashes.length; i++) hashes[i] = hex.slice(i * 32, i * 32 + 32);
    return hashes;
  }
  if (!Array.isArray(h) || h.length === 0) bad('bad hashes');
  for (const x of h) if (typeof x !== 'string' || x === '') bad('bad hash');
  return h as string[];
}

function isFlags(f: unknown): f is number {
  return f === 0 || f === 1 || f === 2 || f === 3;
}

function decodeFlags(f: unknown, count: number): number[] {
  if (isFlags(f)) return new Array<number>(count).fill(f);
  if (!Array.isArray(f) || f.length === 0 || f.length % 2 !== 0) bad('bad flags');
  const flags: number[] = [];
  for (let i = 0; i < f.length; i += 2) {
    const v: unknown = f[i];
    const n: unknown = f[i + 1];
    if (!isFlags(v) || typeof n !== 'number' || !Number.isInteger(n) || n < 1 || flags.length + n > count) bad('bad flag run');
    for (let j = 0; j < n; j++) flags.push(v);
  }
  if (flags.length !== count) bad('flag runs do not cover the chain');
  return flags;
}

/** Decodes `seg` from index `at` (H, F, child segments) into a chain; returns its first node. */
function decodeChain(seg: unknown[], at: number, work: { seg: unknown[]; parent: RevNode }[]): RevNode {
  if (seg.length < at + 2) bad('short segment');
  const hashes = decodeHashes(seg[at]);
  const flags = decodeFlags(seg[at + 1], hashes.length);
  let first: RevNode | undefined;
  let prev: RevNode | undefined;
  for (let i = 0; i < hashes.length; i++) {
    const f = flags[i]!;
    const node: RevNode = { hash: hashes[i]!, deleted: (f & 1) !== 0, available: (f & 2) !== 0, children: [] };
    if (prev) prev.children.push(node);
    else first = node;
    prev = node;
  }
  for (let i = at + 2; i < seg.length; i++) {
    const child = seg[i];
    if (!Array.isArray(child)) bad('bad child segment');
    work.push({ seg: child, parent: prev! });
  }
  return first!;
}

export function decode(data: unknown): RevTree {
  if (!Array.isArray(data)) bad('not an array');
  const tree: RevTree = [];
  const work: { seg: unknown[]; parent: RevNode }[] = [];
  for (const r of data as unknown[]) {
    if (!Array.isArray(r)) bad('bad root');
    const pos: unknown = r[0];
    if (typeof pos !== 'number' || !Number.isSafeInteger(pos) || pos < 0) bad('bad root pos');
    tree.push({ pos, node: decodeChain(r, 1, work) });
    // Children were queued in order; decode them in order so each parent's list keeps it.
    for (let i = 0; i < work.length; i++) {
      const { seg, parent } = work[i]!;
      parent.children.push(decodeChain(seg, 0, work));
    }
    work.length = 0;
  }
  return tree;
}

// ---------------------------------------------------------------------------------------------
// Binary storage encoding (document info records): the same segments as above, as bytes.
//
//   tree    = varint rootCount, (varint pos, segment) per root
//   segment = varint n, hashes, varint runCount, (byte flags, varint count) per run,
//             varint childCount, child segments in order (depth first)
//   hashes  = byte 0, n × 16 bytes      when every hash of the chain is an MD5 in lowercase hex
//           | byte 1, n × string        otherwise

export function encodeBinary(tree: RevTree, w: ByteWriter): void {
  w.varint(tree.length);
  const work: RevNode[] = [];
  for (const root of tree) {
    w.varint(root.pos);
    work.push(root.node);
    while (work.length > 0) {
      let node = work.pop()!;
      const start = node;
      let n = 1;
      let md5 = isMd5Hex(node.hash);
      while (node.children.length === 1) {
        node = node.children[0]!;
        n++;
        if (md5) md5 = isMd5Hex(node.hash);
      }
      w.varint(n);
      w.byte(md5 ? 0 : 1);
      let runs = 0;
      let flags = -1;
      for (let k = start, i = 0; i < n; i++, k = k.children[0]!) {
        if (md5) w.md5(k.hash);
        else w.string(k.hash);
        if (flagsOf(k) !== flags) {
          flags = flagsOf(k);
          runs++;
        }
      }
      w.varint(runs);
      flags = flagsOf(start);
      let count = 0;
      for (let k = start, i = 0; i < n; i++, k = k.children[0]!) {
        if (flagsOf(k) !== flags) {
          w.byte(flags);
          w.varint(count);
          flags = flagsOf(k);
          count = 0;
        }
        count++;
      }
      w.byte(flags);
      w.varint(count);
      w.varint(node.children.length);
      for (let i = node.children.length - 1; i >= 0; i--) work.push(node.children[i]!);
    }
  }
}

export function decodeBinary(r: ByteReader): RevTree {
  const tree: RevTree = [];
  const roots = r.varint();
  // Chain ends still owed children, with how many.
  const open: { last: RevNode; owed: number }[] = [];
  for (let i = 0; i < roots; i++) {
    const pos = r.varint();
    const first = decodeBinaryChain(r, open);
    tree.push({ pos, node: first });
    while (open.length > 0) {
      const top = open[open.length - 1]!;
      if (top.owed === 0) {
        open.pop();
        continue;
      }
      top.owed--;
      top.last.children.push(decodeBinaryChain(r, open));
    }
  }
  return tree;
}

function decodeBinaryChain(r: ByteReader, open: { last: RevNode; owed: number }[]): RevNode {
  const n = r.varint();
  if (n === 0) bad('empty chain');
  const md5 = r.byte() === 0;
  const nodes: RevNode[] = new Array(n);
  for (let i = 0; i < n; i++) {
    nodes[i] = { hash: md5 ? r.md5() : r.string(), deleted: false, available: false, children: [] };
  }
  const runs = r.varint();
  let at = 0;
  for (let i = 0; i < runs; i++) {
    const f = r.byte();
    const count = r.varint();
    if (!isFlags(f) || count < 1 || at + count > n) bad('bad flag run');
    for (let j = 0; j < count; j++, at++) {
      nodes[at]!.deleted = (f & 1) !== 0;
      nodes[at]!.available = (f & 2) !== 0;
    }
  }
  if (at !== n) bad('flag runs do not cover the chain');
  for (let i = 1; i < n; i++) nodes[i - 1]!.children.push(nodes[i]!);
  const owed = r.varint();
  if (owed > 0) open.push({ last: nodes[n - 1]!, owed });
  return nodes[0]!;
}
