import type { RateLimiter } from './rate-limiter.js';

/**
 * Per-item exponential backoff: `baseDelayMs * 2^failures`, capped at `maxDelayMs`,
 * spread by `±jitter` (a fraction) so items that failed together do not retry
 * together. The cap always holds: a jittered delay never exceeds `maxDelayMs`.
 *
 * Same model as client-go's ItemExponentialFailureRateLimiter (5 ms .. 1000 s),
 * plus jitter.
 */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly jitter: number;
  private readonly random: () => number;
  private readonly failures = new Map<T, number>();

  /** `random` returns a number in [0, 1); injectable for tests. */
  constructor(baseDelayMs = 5, maxDelayMs = 1_000_000, jitter = 0.1, random: () => number = Math.random) {
    if (!(baseDelayMs >= 0) || !(maxDelayMs >= 0)) throw new RangeError('delays must be >= 0');
    if (!(jitter >= 0 && jitter < 1)) throw new RangeError('jitter must be in [0, 1)');
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
    this.jitter = jitter;
    this.random = random;
  }

  when(item: T): number {
    const exponent = this.failures.get(item) ?? 0;
    this.failures.set(item, exponent + 1);
    // 2 ** 1100 is Infinity, which Math.min caps: no overflow to guard against.
    const backoff = Math.min(this.baseDelayMs * 2 ** exponent, this.maxDelayMs);
    const spread = 1 + this.jitter * (2 * this.random() - 1);
    return Math.min(backoff * spread, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}
