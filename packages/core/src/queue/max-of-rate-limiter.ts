import type { RateLimiter } from './rate-limiter.js';

/** Waits as long as the strictest of its limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(item: T): number {
    // Every limiter must see the failure, so no short-circuit.
    return Math.max(...this.limiters.map((limiter) => limiter.when(item)));
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }

  numRequeues(item: T): number {
    return Math.max(...this.limiters.map((limiter) => limiter.numRequeues(item)));
  }
}
