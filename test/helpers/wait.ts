/** Waiting in tests for what the server does in the background, with a generous deadline (never a timing assertion). */
import assert from 'node:assert/strict';

/** Polls `probe` until it gives a value other than undefined or false, and returns it. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, deadlineMs = 30000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
