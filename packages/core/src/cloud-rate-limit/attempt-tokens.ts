import { AsyncLocalStorage } from 'node:async_hooks';

/** The rate-limited cloud call now running: how to take one more token of its bucket. */
interface CurrentCall {
  /** Attempts started so far; the first one went on the token the call took. */
  attempts: number;
  /** Waits for one more token of the call's bucket, under the call's signal. */
  acquire(): Promise<void>;
}

const currentCall = new AsyncLocalStorage<CurrentCall>();

/**
 * Runs `call` (one SDK call that has taken its token) so that the SDK's own
 * retries can take theirs through `beforeCloudAttempt`. The SDK clients are
 * shared across ProviderConfigs, so the bucket travels with the call's async
 * context rather than with the client.
 */
export function runWithAttemptTokens<T>(acquire: () => Promise<void>, call: () => Promise<T>): Promise<T> {
  return currentCall.run({ attempts: 0, acquire }, call);
}

/**
 * For a provider's per-attempt hook (AWS SDK middleware below the retry
 * middleware, Azure `perRetry` pipeline policy): call it before every HTTP
 * attempt. A cloud counts every attempt, retries included, so each attempt
 * after the first waits for a token of the same bucket as the call, for as
 * long as the call's signal allows (rejecting with a RetryableError once it
 * aborts). Outside a rate-limited call it returns at once.
 */
export async function beforeCloudAttempt(): Promise<void> {
  const call = currentCall.getStore();
  if (!call) return;
  call.attempts += 1;
  if (call.attempts > 1) await call.acquire();
}
