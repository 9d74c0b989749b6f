import { InterceptingCall, status, type Interceptor } from '@grpc/grpc-js';
import { RetryableError } from '@k8or/core';

/**
 * Runs one SDK call under the reconcile's signal. Nothing starts once the signal is aborted, and the
 * call rejects (retryable) as soon as it aborts. The Google clients take no AbortSignal for these
 * calls, so an HTTP request already sent may still finish: every call made here is idempotent, and
 * the engine observes again before it acts. A Bigtable RPC is cancelled too (`cancelOnAbort`).
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

/**
 * Runs one SDK call that may take at most `timeoutMs`: past it the call rejects with ETIMEDOUT, a
 * network error (retryable, never absence). For a client that cannot bound a request itself: the
 * Storage client's `timeout` reaches node-fetch 3 through teeny-request, which has no such option
 * any more, so a request that gets no answer is never ended by the client. As with `underSignal`,
 * the request may still be answered later; every call made this way is idempotent.
 */
export async function withinTimeout<T>(timeoutMs: number, call: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s (the request timeout)`), { code: 'ETIMEDOUT' })), timeoutMs);
  });
  try {
    return await Promise.race([call(), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A gRPC interceptor that cancels the RPC when `signal` aborts. The Bigtable admin methods take no
 * AbortSignal and return a promise without gax's `cancel`, so without it an RPC the reconcile gave up
 * on stays open until gax's own timeout for the method, and a CreateTable held by a slow Bigtable may
 * land after the engine has observed the name free again (its next CreateTable then meets
 * ALREADY_EXISTS from our own table). Cancelled, the RPC ends on the wire with the reconcile.
 */
export function cancelOnAbort(signal: AbortSignal): Interceptor {
  return (options, nextCall) => {
    let onAbort: (() => void) | undefined;
    const call: InterceptingCall = new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        onAbort = () => call.cancelWithStatus(status.CANCELLED, `aborted: ${String(signal.reason ?? 'the reconcile was cancelled')}`);
        if (signal.aborted) queueMicrotask(onAbort);
        else signal.addEventListener('abort', onAbort, { once: true });
        // a partial listener: what it leaves out passes through unchanged
        next(metadata, {
          onReceiveStatus(received, nextStatus) {
            if (onAbort) signal.removeEventListener('abort', onAbort);
            nextStatus(received);
          },
        });
      },
    });
    return call;
  };
}
