import { BucketRateLimiter } from './bucket-rate-limiter.js';
import { ItemExponentialFailureRateLimiter } from './item-exponential-failure-rate-limiter.js';
import { MaxOfRateLimiter } from './max-of-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * client-go's DefaultControllerRateLimiter: per-item exponential backoff from 5 ms
 * to 1000 s (with 10 % jitter), bounded overall by a 10 qps / 100 burst bucket.
 */
export function defaultControllerRateLimiter<T>(): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000, 0.1),
    new BucketRateLimiter<T>(10, 100),
  );
}
