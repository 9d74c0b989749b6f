/**
 * A token bucket: `burst` tokens at most, refilled at `ratePerSecond`. As in
 * golang.org/x/time/rate's `Reserve()`, a caller reserves a token, possibly
 * one that does not exist yet, and learns how long until it does; reservations
 * queue in order (the count goes negative). Over any interval of `t` seconds
 * the reservations that come due number at most `burst + ratePerSecond * t`.
 * Pure arithmetic on an injected monotonic clock: no timers.
 */
export class TokenBucket {
  #ratePerSecond: number;
  #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  /** `now` returns milliseconds on a monotonic clock; injectable for tests. */
  constructor(ratePerSecond: number, burst: number, now: () => number = () => performance.now()) {
    TokenBucket.#check(ratePerSecond, burst);
    this.#ratePerSecond = ratePerSecond;
    this.#burst = burst;
    this.#now = now;
    this.#tokens = burst;
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

  /**
   * Gives back a reserved token whose call never happened (its wait was
   * aborted). Reservations made after it keep their times, so the bucket is
   * never ahead of one that never saw the cancelled reservation.
   */
  cancel(): void {
    this.#refill();
    this.#tokens = Math.min(this.#burst, this.#tokens + 1);
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
