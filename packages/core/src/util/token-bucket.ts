/**
 * A token bucket: `burst` tokens at most, refilled at `ratePerSecond`. Two
 * ways to spend: `tryTake` takes a token that is there now (so over any `t`
 * seconds at most `burst + ratePerSecond * t` takes succeed, counted at the
 * moment they happen), and `reserve`, as golang.org/x/time/rate's
 * `Reserve()`, takes one that may not exist yet and says how long until it
 * does (the count goes negative; reservations queue in order). Pure arithmetic
 * on an injected monotonic clock: no timers.
 */
const EPSILON = 1e-9;

export class TokenBucket {
  #ratePerSecond: number;
  #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  /** `now` returns milliseconds on a monotonic clock; injectable for tests. `tokens`: what it starts with (at most `burst`, the default). */
  constructor(ratePerSecond: number, burst: number, now: () => number = () => performance.now(), tokens = burst) {
    TokenBucket.#check(ratePerSecond, burst);
    this.#ratePerSecond = ratePerSecond;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = Math.min(burst, tokens);
    this.#last = now();
  }

  static #check(ratePerSecond: number, burst: number): void {
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond) || !(burst >= 1)) throw new RangeError('the rate must be > 0 and the burst >= 1');
  }

  get ratePerSecond(): number {
    return this.#ratePerSecond;
  }

  get burst(): number {
    return this.#burst;
  }

  /** Tokens there now; negative while reservations wait for tokens still to come. */
  available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Takes one token: the milliseconds until it exists (0: it is there now). */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#ratePerSecond) * 1000;
  }

  /** Takes a token if one is there now. */
  tryTake(): boolean {
    this.#refill();
    // Refills are sums of fractions: a token due now may be a rounding error short of whole.
    if (this.#tokens < 1 - EPSILON) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is there (0: now). */
  msUntilToken(): number {
    this.#refill();
    return this.#tokens >= 1 - EPSILON ? 0 : ((1 - this.#tokens) / this.#ratePerSecond) * 1000;
  }

  /** New numbers, keeping what was earned or owed (capped at the new burst). */
  reconfigure(ratePerSecond: number, burst: number): void {
    TokenBucket.#check(ratePerSecond, burst);
    this.#refill();
    this.#ratePerSecond = ratePerSecond;
    this.#burst = burst;
    this.#tokens = Math.min(burst, this.#tokens);
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#last) / 1000) * this.#ratePerSecond);
    this.#last = now;
  }
}
