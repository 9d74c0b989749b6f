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
  private readonly now: () => number;
  private tokens: number;
  private last: number;

  /** `now` returns milliseconds on a monotonic clock; injectable for tests. */
  constructor(qps = 10, burst = 100, now: () => number = () => performance.now()) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError('qps must be > 0 and burst >= 1');
    this.qps = qps;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.last = now();
  }

  when(_item: T): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}
