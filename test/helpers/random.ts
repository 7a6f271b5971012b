/** A small deterministic PRNG (mulberry32): the same seed gives the same "random" test data. */
export { prng as seededRandom } from '../../bench/stats.js';
