import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms`, or less once `signal` aborts; never rejects, so a stop simply ends the wait. */
export async function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return;
  await delay(ms, undefined, { signal }).catch(() => undefined);
}
