import type { S3ClientConfig } from '@aws-sdk/client-s3';

type SdkRetryStrategy = Extract<NonNullable<S3ClientConfig['retryStrategy']>, { acquireInitialRetryToken: unknown }>;
type RetryToken = Awaited<ReturnType<SdkRetryStrategy['acquireInitialRetryToken']>>;
type RetryErrorInfo = Parameters<SdkRetryStrategy['refreshRetryTokenForRetry']>[1];

/** The SDK's standard backoff: full jitter over base × 2^retries, capped (smithy's DefaultRetryBackoffStrategy). */
const BASE_DELAY_MS = 100;
const THROTTLING_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;
/** A Retry-After hint is honoured up to this much beyond the computed delay. */
const MAX_HINT_EXTRA_MS = 5_000;

/**
 * The SDK's standard retries (throttling and transient errors, up to
 * `maxAttempts` attempts, jittered exponential backoff) without its retry
 * quota. The standard strategy keeps 500 tokens per client, spends 5 a retry
 * and earns 1 back a success: in a throttling storm it runs dry and then
 * retries nothing, so every throttle fails its call. For k8or that makes
 * things worse, not better: the engine already takes a rate-limit token for
 * every attempt and backs off per resource, and a call that fails costs a
 * whole reconcile of calls when it is retried, where the SDK's retry costs one.
 */
export function retryWithoutQuota(maxAttempts: number, random: () => number = Math.random): SdkRetryStrategy {
  const token = (retries: number, delayMs: number): RetryToken => ({ getRetryCount: () => retries, getRetryDelay: () => delayMs });
  return {
    acquireInitialRetryToken: async () => token(0, 0),
    refreshRetryTokenForRetry: async (last: RetryToken, error: RetryErrorInfo) => {
      const retries = last.getRetryCount();
      const retryable = error.errorType === 'THROTTLING' || error.errorType === 'TRANSIENT';
      if (!retryable || retries + 1 >= maxAttempts) throw new Error('no retry: the error is not retryable or the attempts are spent');
      const base = error.errorType === 'THROTTLING' ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
      let delayMs = Math.floor(Math.min(MAX_DELAY_MS, random() * 2 ** retries * base));
      if (error.retryAfterHint instanceof Date) delayMs = Math.max(delayMs, Math.min(error.retryAfterHint.getTime() - Date.now(), delayMs + MAX_HINT_EXTRA_MS));
      return token(retries + 1, delayMs);
    },
    recordSuccess: () => {},
  };
}
