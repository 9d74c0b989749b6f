import { TokenBucket } from '../util/token-bucket.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * An overall token bucket shared by every item: `burst` retries may go at once,
 * then `qps` per second. Like client-go's BucketRateLimiter (golang.org/x/time/rate
 * `Reserve().Delay()`), each call reserves a token, possibly in the future, and
 * returns how long until that token exists. It tracks no items.
 */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly qps: number;
  readonly burst: number;
  readonly #bucket: TokenBucket;

  /** `now` returns milliseconds on a monotonic clock; injectable for tests. */
  constructor(qps = 10, burst = 100, now: () => number = () => performance.now()) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError('qps must be > 0 and burst >= 1');
    this.qps = qps;
    this.burst = burst;
    this.#bucket = new TokenBucket(qps, burst, now);
  }

  when(_item: T): number {
    return this.#bucket.reserve();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}
