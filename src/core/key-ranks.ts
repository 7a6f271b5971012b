/**
 * Counts of keys in a range of the store without walking the range every time.
 *
 * The `offset` of an `_all_docs` query is the number of live documents before its start key, and
 * LMDB keeps no counts in its tree, so a plain count costs the position (~5 ms per 100k keys
 * here). A database paged through while nobody writes keeps a sample instead: every STEP-th key
 * with its rank, taken at one update sequence. A rank is then the nearest sample's rank plus a
 * count of at most STEP keys. Any write makes the sample stale; it is retaken only when a second
 * count is asked at one same sequence, so a database under steady writes pays what it paid
 * before and no more.
 */
import type { ReadView } from '../storage/types.js';

const STEP = 1024;

interface Sample {
  seq: number;
  /** keys[i] has rank i × STEP. */
  keys: Buffer[];
  total: number;
}

export class KeyRanks {
  private sample: Sample | undefined;
  /** The sequence of the last count made without a sample. */
  private unsampledAt = -1;

  constructor(private readonly bounds: { gte: Buffer; lt: Buffer }) {}

  /** Keys in [gte, lt), both within the bounds, as `view` holds them at update sequence `seq`. */
  async count(view: ReadView, seq: number, gte: Buffer, lt: Buffer): Promise<number> {
    if (Buffer.compare(gte, lt) >= 0) return 0;
    const sample = await this.sampleAt(view, seq);
    if (!sample) return view.count({ gte, lt });
    return (await this.rank(view, sample, lt)) - (await this.rank(view, sample, gte));
  }

  private async sampleAt(view: ReadView, seq: number): Promise<Sample | undefined> {
    if (this.sample?.seq === seq) return this.sample;
    if (this.unsampledAt !== seq) {
      this.unsampledAt = seq;
      return undefined;
    }
    const keys: Buffer[] = [];
    let total = 0;
    for await (const entries of view.rangeChunks(this.bounds, 256)) {
      for (const { key } of entries) {
        if (total % STEP === 0) keys.push(Buffer.from(key));
        total++;
      }
    }
    this.sample = { seq, keys, total };
    return this.sample;
  }

  /** How many keys sort before `key`. */
  private async rank(view: ReadView, sample: Sample, key: Buffer): Promise<number> {
    if (Buffer.compare(key, this.bounds.lt) >= 0) return sample.total;
    // The last sampled key at or before `key`.
    let lo = 0;
    let hi = sample.keys.length - 1;
    if (hi < 0 || Buffer.compare(sample.keys[0]!, key) >= 0) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (Buffer.compare(sample.keys[mid]!, key) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo * STEP + (await view.count({ gte: sample.keys[lo]!, lt: key }));
  }
}
