import { BucketRateLimiter } from './bucket-rate-limiter.js';
import { ItemExponentialFailureRateLimiter } from './item-exponential-failure-rate-limiter.js';
import { MaxOfRateLimiter } from './max-of-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

/** The longest a managed resource waits between two attempts after failures. */
export const MANAGED_RESOURCE_MAX_BACKOFF_MS = 60_000;

/**
 * The engine's retry pace for managed resources: per-item exponential backoff
 * from 5 ms to 60 s (10 % jitter), bounded overall by a 10 qps / 100 burst
 * bucket. client-go's default caps at 1000 s, made for API server work; a
 * cloud call fails in streaks (a throttling storm, an outage, a client whose
 * retry quota ran dry), and past the streak a resource would sit idle for up
 * to 17 minutes with the cloud long healthy. crossplane-runtime's managed
 * reconcilers cap at 60 s too (`ratelimiter.NewController`).
 */
export function managedResourceRateLimiter<T>(): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, MANAGED_RESOURCE_MAX_BACKOFF_MS, 0.1),
    new BucketRateLimiter<T>(10, 100),
  );
}
