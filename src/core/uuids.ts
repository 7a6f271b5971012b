import { randomBytes } from 'node:crypto';

export type UuidAlgorithm = 'random' | 'sequential' | 'utc_random' | 'utc_id';

/**
 * CouchDB's uuid algorithms: `random` (128 random bits), `sequential` (a random 26-hex prefix
 * with an increasing 6-hex suffix, re-prefixed on overflow), `utc_random` (14 hex of
 * microseconds since the epoch + 18 random hex) and `utc_id` (the same time + a fixed suffix).
 */
export class UuidGenerator {
  private prefix = randomBytes(13).toString('hex');
  private counter = randomInt(0xfff);

  constructor(
    private readonly settings: () => { algorithm: string; utcIdSuffix: string },
  ) {}

  next(): string {
    const { algorithm, utcIdSuffix } = this.settings();
    switch (algorithm) {
      case 'sequential': return this.sequential();
      case 'utc_random': return utcHex() + randomBytes(9).toString('hex');
      case 'utc_id': return utcHex() + utcIdSuffix;
      default: return randomBytes(16).toString('hex');
    }
  }

  many(count: number): string[] {
    const out: string[] = new Array(count);
    for (let i = 0; i < count; i++) out[i] = this.next();
    return out;
  }

  private sequential(): string {
    this.counter += 1 + randomInt(0xffe);
    if (this.counter > 0xfff000) {
      this.prefix = randomBytes(13).toString('hex');
      this.counter = randomInt(0xfff);
    }
    return this.prefix + this.counter.toString(16).padStart(6, '0');
  }
}

function randomInt(max: number): number {
  return Math.floor(Math.random() * max);
}

let lastMicros = 0;

/**
 * Microseconds since the epoch as 14 hex digits, strictly increasing within the process like
 * Erlang's now() that CouchDB uses, so utc_random and utc_id ids sort by creation order.
 */
function utcHex(): string {
  // Wall-clock milliseconds (no drift) plus a sub-millisecond part from the high-resolution clock.
  const now = Date.now() * 1000 + Math.floor((performance.now() % 1) * 1000);
  lastMicros = now > lastMicros ? now : lastMicros + 1;
  return lastMicros.toString(16).padStart(14, '0');
}
