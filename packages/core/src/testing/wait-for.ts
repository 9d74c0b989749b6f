import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `check` until it returns a truthy value and returns it; a check that
 * throws counts as not yet. For tests on shared, loaded machines: the timeout
 * is generous, and nothing about timing is asserted.
 */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 60_000, intervalMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(intervalMs);
  }
}
