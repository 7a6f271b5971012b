/**
 * Reduce queries answered from the index's partial reductions, checked against values computed
 * here from the documents: whole-range, grouped, ranged and descending, after a first build,
 * small (incremental) updates and large (rebuilding) ones.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverForFile } from '../helpers/server.js';

const { c } = await serverForFile();

const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const TYPES = ['apple', 'banana', 'cherry', 'date', 'elder'];

interface Doc { _id: string; _rev?: string; type: string; n: number }

/** A seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const next = random(7);
const makeDoc = (i: number): Doc => ({ _id: `doc${String(i).padStart(5, '0')}`, type: TYPES[Math.floor(next() * TYPES.length)]!, n: Math.floor(next() * 200) });

/** Rows as the view emits them, sorted as CouchDB collates [type, n % 20] keys (ASCII type names). */
function rowsOf(docs: Iterable<Doc>): { key: [string, number]; value: number; id: string }[] {
  const rows = [...docs].map((d) => ({ key: [d.type, d.n % 20] as [string, number], value: d.n, id: d._id }));
  rows.sort((a, b) => (a.key[0] < b.key[0] ? -1 : a.key[0] > b.key[0] ? 1 : a.key[1] - b.key[1] || (a.id < b.id ? -1 : 1)));
  return rows;
}

function grouped(rows: { key: [string, number]; value: number }[], level: number): { key: unknown; value: number }[] {
  const out: { key: unknown; value: number }[] = [];
  for (const row of rows) {
    const key = level === Infinity ? row.key : row.key.slice(0, level);
    const last = out[out.length - 1];
    if (last && JSON.stringify(last.key) === JSON.stringify(key)) last.value += row.value;
    else out.push({ key, value: row.value });
  }
  return out;
}

const cmp = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]);
const inRange = (key: [string, number], lo: [string, number], hi: [string, number]) => cmp(key, lo) >= 0 && cmp(key, hi) <= 0;

async function checkAll(db: string, docs: Map<string, Doc>): Promise<void> {
  const rows = rowsOf(docs.values());
  const total = rows.reduce((s, r) => s + r.value, 0);
  for (const view of ['sum', 'js_sum']) {
    const base = `/${db}/_design/r/_view/${view}`;
    const whole = await c.get(base);
    assert.equal(whole.status, 200, whole.text);
    assert.deepEqual(whole.body.rows, [{ key: null, value: total }], `${view} whole`);
    for (const level of [1, 2]) {
      const r = await c.get(`${base}?group_level=${level}`);
      assert.deepEqual(r.body.rows, grouped(rows, level), `${view} group_level=${level}`);
    }
    const exact = await c.get(`${base}?group=true`);
    assert.deepEqual(exact.body.rows, grouped(rows, Infinity), `${view} group=true`);
    const desc = await c.get(`${base}?group_level=1&descending=true`);
    assert.deepEqual(desc.body.rows, grouped(rows, 1).reverse(), `${view} descending`);
    const paged = await c.get(`${base}?group=true&skip=7&limit=11`);
    assert.deepEqual(paged.body.rows, grouped(rows, Infinity).slice(7, 18), `${view} skip/limit`);
  }
  const count = await c.get(`/${db}/_design/r/_view/count`);
  assert.deepEqual(count.body.rows, [{ key: null, value: rows.length }]);
  const stats = await c.get(`/${db}/_design/r/_view/stats?group_level=1`);
  for (const g of stats.body.rows as { key: [string]; value: { sum: number; count: number; min: number; max: number } }[]) {
    const mine = rows.filter((r) => r.key[0] === g.key[0]).map((r) => r.value);
    assert.deepEqual([g.value.sum, g.value.count, g.value.min, g.value.max],
      [mine.reduce((a, b) => a + b, 0), mine.length, Math.min(...mine), Math.max(...mine)], `stats ${g.key[0]}`);
  }
  // Random key ranges, both directions, inclusive and exclusive ends.
  for (let i = 0; i < 12; i++) {
    const a: [string, number] = [TYPES[Math.floor(next() * 5)]!, Math.floor(next() * 20)];
    const b: [string, number] = [TYPES[Math.floor(next() * 5)]!, Math.floor(next() * 20)];
    const [lo, hi] = cmp(a, b) <= 0 ? [a, b] : [b, a];
    const expected = rows.filter((r) => inRange(r.key, lo, hi)).reduce((s, r) => s + r.value, 0);
    const r = await c.get(`/${db}/_design/r/_view/sum?startkey=${q(lo)}&endkey=${q(hi)}`);
    assert.deepEqual(r.body.rows, expected === 0 && !rows.some((x) => inRange(x.key, lo, hi)) ? [] : [{ key: null, value: expected }], `range ${JSON.stringify([lo, hi])}`);
    const d = await c.get(`/${db}/_design/r/_view/sum?startkey=${q(hi)}&endkey=${q(lo)}&descending=true&group=true`);
    assert.deepEqual(d.body.rows, grouped(rows.filter((x) => inRange(x.key, lo, hi)), Infinity).reverse(), `descending range ${JSON.stringify([lo, hi])}`);
    const excl = await c.get(`/${db}/_design/r/_view/sum?startkey=${q(lo)}&endkey=${q(hi)}&inclusive_end=false&group_level=1`);
    const exclRows = rows.filter((x) => inRange(x.key, lo, hi) && JSON.stringify(x.key) !== JSON.stringify(hi));
    assert.deepEqual(excl.body.rows, grouped(exclRows, 1), `exclusive range ${JSON.stringify([lo, hi])}`);
  }
  // Offsets of a map view come from the stored counts.
  const key: [string, number] = ['cherry', 10];
  const before = rows.filter((r) => !inRange(r.key, key, ['zzz', 0])).length;
  const offset = await c.get(`/${db}/_design/r/_view/sum?reduce=false&startkey=${q(key)}&limit=1`);
  assert.equal(offset.body.offset, before);
  const after = rows.filter((r) => inRange(r.key, ['cherry', 11], ['zzz', 0])).length;
  const descOffset = await c.get(`/${db}/_design/r/_view/sum?reduce=false&descending=true&startkey=${q(key)}&limit=1`);
  assert.equal(descOffset.body.offset, after);
}

test('reduce results match the documents after a build, small updates and large updates', async () => {
  const db = 'reductions';
  assert.equal((await c.put(`/${db}`)).status, 201);
  const docs = new Map<string, Doc>();
  for (let i = 0; i < 4000; i++) {
    const d = makeDoc(i);
    docs.set(d._id, d);
  }
  const put = async (list: Doc[]) => {
    const r = await c.post(`/${db}/_bulk_docs`, { docs: list });
    assert.equal(r.status, 201, r.text);
    (r.body as { id: string; rev: string }[]).forEach((res) => {
      const d = docs.get(res.id);
      if (d) d._rev = res.rev;
    });
  };
  await put([...docs.values()]);
  const map = 'function(doc) { if (doc.type) emit([doc.type, doc.n % 20], doc.n); }';
  const ddoc = await c.put(`/${db}/_design/r`, {
    views: {
      sum: { map, reduce: '_sum' },
      count: { map, reduce: '_count' },
      stats: { map, reduce: '_stats' },
      js_sum: { map, reduce: 'function(keys, values, rereduce) { return sum(values); }' },
    },
  });
  assert.equal(ddoc.status, 201);
  await checkAll(db, docs);

  // Small changes (maintained segment by segment): edits, deletions, new documents.
  for (let round = 0; round < 3; round++) {
    const edits: (Doc & { _deleted?: boolean })[] = [];
    const ids = [...docs.keys()];
    for (let i = 0; i < 60; i++) {
      const d = docs.get(ids[Math.floor(next() * ids.length)]!)!;
      if (edits.some((e) => e._id === d._id)) continue;
      if (next() < 0.3) {
        edits.push({ ...d, _deleted: true });
        docs.delete(d._id);
      } else {
        d.n = Math.floor(next() * 200);
        d.type = TYPES[Math.floor(next() * TYPES.length)]!;
        edits.push(d);
      }
    }
    for (let i = 0; i < 20; i++) {
      const d = makeDoc(10_000 + round * 100 + i);
      docs.set(d._id, d);
      edits.push(d);
    }
    await put(edits);
    await checkAll(db, docs);
  }

  // A large change (more than an eighth of the rows): rebuilt in one pass.
  const large = [...docs.values()].slice(0, 1500);
  for (const d of large) d.n = Math.floor(next() * 200);
  await put(large);
  await checkAll(db, docs);
});

test('keys longer than the store allows sort, range, group and update exactly', async () => {
  const db = 'long-keys';
  assert.equal((await c.put(`/${db}`)).status, 201);
  const long = 'a'.repeat(1600);
  // Keys share far more than the stored sort-key prefix; they differ only at the end.
  const docs = Array.from({ length: 60 }, (_, i) => ({ _id: `d${String((i * 37) % 60).padStart(2, '0')}`, n: (i * 7) % 20, tail: 'bca'[i % 3] }));
  assert.equal((await c.post(`/${db}/_bulk_docs`, { docs })).status, 201);
  assert.equal((await c.put(`/${db}/_design/l`, {
    views: {
      pairs: { map: `function(doc) { emit([${JSON.stringify(long)}, doc.n], doc.n); }`, reduce: '_count' },
      strings: { map: `function(doc) { emit(${JSON.stringify(long)} + doc.tail, 1); }`, reduce: '_sum' },
    },
  })).status, 201);
  type R = { id: string; key: [string, number]; value: number };
  const expected = (list: { _id: string; n: number }[]) => [...list].sort((x, y) => x.n - y.n || (x._id < y._id ? -1 : 1)).map((d) => [d.n, d._id]);
  const all = await c.get(`/${db}/_design/l/_view/pairs?reduce=false`);
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(all.body.rows.map((r: R) => [r.key[1], r.id]), expected(docs));
  // Ranges with long bounds, both directions, exclusive end, docid refinement, offset.
  const k = (n: number) => q([long, n]);
  const range = await c.get(`/${db}/_design/l/_view/pairs?reduce=false&startkey=${k(5)}&endkey=${k(9)}&inclusive_end=false`);
  assert.deepEqual(range.body.rows.map((r: R) => [r.key[1], r.id]), expected(docs.filter((d) => d.n >= 5 && d.n < 9)));
  assert.equal(range.body.offset, docs.filter((d) => d.n < 5).length);
  const desc = await c.get(`/${db}/_design/l/_view/pairs?reduce=false&descending=true&startkey=${k(9)}&endkey=${k(5)}`);
  assert.deepEqual(desc.body.rows.map((r: R) => [r.key[1], r.id]), expected(docs.filter((d) => d.n >= 5 && d.n <= 9)).reverse());
  const firstOf7 = expected(docs.filter((d) => d.n === 7))[1]![1];
  const refined = await c.get(`/${db}/_design/l/_view/pairs?reduce=false&startkey=${k(7)}&startkey_docid=${firstOf7}&endkey=${k(7)}`);
  assert.deepEqual(refined.body.rows.map((r: R) => r.id), expected(docs.filter((d) => d.n === 7)).slice(1).map((x) => x[1]));
  const missing = await c.get(`/${db}/_design/l/_view/pairs?reduce=false&startkey=${k(20)}`);
  assert.deepEqual(missing.body.rows, []);
  // Grouping by whole long keys.
  const groups = await c.get(`/${db}/_design/l/_view/pairs?group=true`);
  const counts = new Map<number, number>();
  for (const d of docs) counts.set(d.n, (counts.get(d.n) ?? 0) + 1);
  assert.deepEqual(groups.body.rows.map((r: { key: [string, number]; value: number }) => [r.key[1], r.value]), [...counts].sort((x, y) => x[0] - y[0]));
  const strings = await c.get(`/${db}/_design/l/_view/strings?group=true`);
  assert.deepEqual(strings.body.rows.map((r: { key: string; value: number }) => [r.key.slice(1600), r.value]), [['a', 20], ['b', 20], ['c', 20]]);
  // Updates move rows to their new places among existing long keys.
  const current = (await c.get(`/${db}/_all_docs?include_docs=true`)).body.rows
    .map((r: { doc: { _id: string; _rev: string; n: number; tail: string } }) => r.doc)
    .filter((d: { _id: string }) => !d._id.startsWith('_design/'));
  for (const d of current.slice(0, 15)) d.n = 30 - d.n;
  assert.equal((await c.post(`/${db}/_bulk_docs`, { docs: current.slice(0, 15) })).status, 201);
  const after = await c.get(`/${db}/_design/l/_view/pairs?reduce=false`);
  assert.deepEqual(after.body.rows.map((r: R) => [r.key[1], r.id]), expected(current));
});

test('a build of many batches orders long keys exactly (their tags come from the batches already written)', async () => {
  const db = 'long-keys-build';
  assert.equal((await c.put(`/${db}`)).status, 201);
  const long = 'b'.repeat(1500);
  // Several of the build's batches; ids in an order unrelated to the keys.
  const docs = Array.from({ length: 2000 }, (_, i) => ({ _id: `d${String((i * 7919) % 2000).padStart(4, '0')}`, n: i }));
  assert.equal((await c.post(`/${db}/_bulk_docs`, { docs })).status, 201);
  const map = `function(doc) { emit([${JSON.stringify(long)}, doc.n % 7, -doc.n], null); if (doc.n % 3 === 0) emit(${JSON.stringify(long)} + (doc.n % 5), doc.n); }`;
  assert.equal((await c.put(`/${db}/_design/l`, { views: { v: { map, reduce: '_count' } } })).status, 201);
  const rows = await c.get(`/${db}/_design/l/_view/v?reduce=false`);
  assert.equal(rows.status, 200, rows.text);
  const strings = docs.filter((d) => d.n % 3 === 0).sort((x, y) => x.n % 5 - y.n % 5 || (x._id < y._id ? -1 : 1)).map((d) => `${d.n % 5} ${d._id}`);
  const arrays = [...docs].sort((x, y) => x.n % 7 - y.n % 7 || y.n - x.n).map((d) => `${d.n % 7},${-d.n} ${d._id}`);
  // Strings sort before arrays.
  assert.deepEqual(rows.body.rows.map((r: { id: string; key: unknown }) => (typeof r.key === 'string' ? `${r.key.slice(1500)} ${r.id}` : `${(r.key as unknown[]).slice(1).join(',')} ${r.id}`)), [...strings, ...arrays]);
  const count = await c.get(`/${db}/_design/l/_view/v`);
  assert.deepEqual(count.body.rows, [{ key: null, value: strings.length + arrays.length }]);
});

test('documents whose ids leave no room in a row key are indexed, updated and removed', async () => {
  const db = 'long-ids';
  assert.equal((await c.put(`/${db}`)).status, 201);
  const id = 'x'.repeat(1900);
  const put = await c.put(`/${db}/${id}`, { n: 1 });
  assert.equal(put.status, 201, put.text);
  assert.equal((await c.put(`/${db}/short`, { n: 2 })).status, 201);
  assert.equal((await c.put(`/${db}/_design/i`, {
    views: { v: { map: `function(doc) { emit(${JSON.stringify('k'.repeat(1500))} + doc.n, doc.n); emit(doc.n, null); }`, reduce: '_count' } },
  })).status, 201);
  const rows = await c.get(`/${db}/_design/i/_view/v?reduce=false`);
  assert.equal(rows.status, 200, rows.text);
  assert.deepEqual(rows.body.rows.map((r: { id: string; key: unknown }) => [r.id.length, typeof r.key === 'string' ? r.key.slice(1500) : r.key]), [[1900, 1], [5, 2], [1900, '1'], [5, '2']]);
  assert.equal((await c.del(`/${db}/${id}?rev=${put.body.rev}`)).status, 200);
  const after = await c.get(`/${db}/_design/i/_view/v`);
  assert.deepEqual(after.body.rows, [{ key: null, value: 2 }]);
});

test('map queries: rows and offset match the documents for random ranges, both directions, skip and limit', async () => {
  const db = 'offsets';
  assert.equal((await c.put(`/${db}`)).status, 201);
  const docs: Doc[] = [];
  for (let i = 0; i < 3000; i++) docs.push(makeDoc(20_000 + i));
  assert.equal((await c.post(`/${db}/_bulk_docs`, { docs })).status, 201);
  const map = 'function(doc) { if (doc.type) emit([doc.type, doc.n % 20], doc.n); }';
  assert.equal((await c.put(`/${db}/_design/m`, { views: { plain: { map }, summed: { map, reduce: '_sum' } } })).status, 201);
  const all = rowsOf(docs);
  // Rows ordered as the view orders them: by key, then by document id.
  const order = (a: { key: [string, number]; id: string }, key: [string, number], id?: string) => cmp(a.key, key) || (id === undefined ? 0 : a.id < id ? -1 : a.id > id ? 1 : 0);
  for (let i = 0; i < 80; i++) {
    const pick = () => (next() < 0.8 ? all[Math.floor(next() * all.length)]!.key : [TYPES[Math.floor(next() * TYPES.length)]!, Math.floor(next() * 22) - 1] as [string, number]);
    let lo = pick();
    let hi = pick();
    if (cmp(lo, hi) > 0) [lo, hi] = [hi, lo];
    const descending = next() < 0.3;
    const inclusiveEnd = next() < 0.8;
    const skip = next() < 0.5 ? 0 : Math.floor(next() * (next() < 0.2 ? 400 : 8));
    const limit = next() < 0.3 ? undefined : Math.floor(next() * 40);
    const startDocId = !descending && next() < 0.3 ? all.find((r) => cmp(r.key, lo) === 0)?.id : undefined;
    const [start, end] = descending ? [hi, lo] : [lo, hi];
    // Expected: the rows of the range in the query's direction, and how many rows come before it.
    const sequence = descending ? [...all].reverse() : all;
    const afterStart = (r: (typeof all)[number]) => (descending ? order(r, start) <= 0 : order(r, start, startDocId) >= 0);
    const beforeEnd = (r: (typeof all)[number]) => {
      const c2 = order(r, end);
      return descending ? (inclusiveEnd ? c2 >= 0 : c2 > 0) : (inclusiveEnd ? c2 <= 0 : c2 < 0);
    };
    const first = sequence.findIndex(afterStart);
    const range = first < 0 ? [] : sequence.slice(first).filter((r) => afterStart(r) && beforeEnd(r));
    const before = first < 0 ? all.length : first;
    const expected = range.slice(skip, limit === undefined ? undefined : skip + limit).map((r) => r.id);
    const params = [`startkey=${q(start)}`, `endkey=${q(end)}`, `descending=${descending}`, `inclusive_end=${inclusiveEnd}`, `skip=${skip}`,
      ...(limit === undefined ? [] : [`limit=${limit}`]), ...(startDocId ? [`startkey_docid=${encodeURIComponent(startDocId)}`] : [])].join('&');
    for (const view of ['plain', 'summed']) {
      const r = await c.get(`/${db}/_design/m/_view/${view}?${params}${view === 'summed' ? '&reduce=false' : ''}`);
      assert.equal(r.status, 200, r.text);
      const what = `${view}?${decodeURIComponent(params)}`;
      assert.deepEqual((r.body.rows as { id: string }[]).map((row) => row.id), expected, `rows of ${what}`);
      assert.equal(r.body.offset, before + Math.min(skip, range.length), `offset of ${what}`);
      assert.equal(r.body.total_rows, all.length);
    }
  }
  // Document ids that end the range before it starts (the keys are equal): no rows, and the
  // offset is still where the start lies, whatever segments lie between the two bounds.
  const key = all[1500]!.key;
  const ofKey = all.filter((r) => cmp(r.key, key) === 0);
  const n = ofKey.length;
  assert.ok(n >= 20, `${n} rows of one key`);
  for (const [from, to] of [[n - 5, 2], [n >> 1, (n >> 1) - 1], [n - 1, 0]]) {
    const r = await c.get(`/${db}/_design/m/_view/summed?reduce=false&startkey=${q(key)}&endkey=${q(key)}` +
      `&startkey_docid=${encodeURIComponent(ofKey[from]!.id)}&endkey_docid=${encodeURIComponent(ofKey[to]!.id)}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.rows, []);
    assert.equal(r.body.offset, all.indexOf(ofKey[from]!));
  }
});

test('a stale=ok query during an update answers a total_rows that matches its rows (the committed state, not the update\'s)', async () => {
  await c.put('/vr_stale');
  const docs = Array.from({ length: 6000 }, (_, i) => ({ _id: `s${String(i).padStart(5, '0')}`, n: i }));
  for (let i = 0; i < docs.length; i += 1000) assert.equal((await c.post('/vr_stale/_bulk_docs', { docs: docs.slice(i, i + 1000) })).status, 201);
  // Few rows over many documents: every answer is read whole, and the build commits many batches.
  const map = 'function (doc) { var x = 0; for (var i = 0; i < 500; i++) x += i; if (doc.n % 200 === 0) emit(doc.n, null); }';
  assert.equal((await c.put('/vr_stale/_design/d', { views: { v: { map } } })).status, 201);
  assert.equal((await c.get('/vr_stale/_design/d/_view/v?stale=update_after&limit=0')).status, 200);
  const seen = new Set<number>();
  for (let round = 0; round < 2000; round++) {
    const r = await c.get('/vr_stale/_design/d/_view/v?stale=ok&update_seq=true');
    assert.equal(r.body.rows.length, r.body.total_rows, `round ${round}: ${r.text.slice(0, 200)}`);
    seen.add(r.body.total_rows);
    if (r.body.total_rows === 30) break;
  }
  assert.ok(seen.has(30), `the build finished: ${[...seen].join(', ')}`);
});
