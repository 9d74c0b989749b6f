import { RetryableError } from '@k8or/core';

/**
 * Runs one SDK call under the reconcile's signal. Nothing starts once the signal is aborted, and the
 * call rejects (retryable) as soon as it aborts. The Google clients take no AbortSignal for these
 * calls, so an HTTP request or RPC already sent may still finish: every call made here is idempotent,
 * and the engine observes again before it acts.
 */
export async function underSignal<T>(signal: AbortSignal | undefined, operation: string, call: () => Promise<T>): Promise<T> {
  if (!signal) return await call();
  const aborted = (): RetryableError => new RetryableError(`${operation} aborted: ${String(signal.reason ?? 'the reconcile was cancelled')}`, { code: 'Aborted' });
  if (signal.aborted) throw aborted();
  let onAbort: (() => void) | undefined;
  const abort = new Promise<never>((_, reject) => {
    onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([call(), abort]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
