/**
 * A budget of calls over a sliding window: at most `limit` calls in any `windowMs`. A grant is
 * held from the moment it is taken until `windowMs` after it is done, so calls made anywhere
 * between the two never share a window with more than `limit` calls, however long they take.
 * Time is given by the caller (milliseconds on any monotonic clock), so the arithmetic is
 * deterministic.
 */
export class SlidingWindowBudget {
  readonly windowMs: number;
  /** Grants in the order taken; `doneAt` undefined while the calls run. */
  readonly #grants: { cost: number; doneAt: number | undefined }[] = [];

  constructor(windowMs: number) {
    if (!(windowMs > 0)) throw new RangeError(`a window is longer than 0 ms, got ${windowMs}`);
    this.windowMs = windowMs;
  }

  /** Calls counted in the window at `nowMs`: those running, and those done less than `windowMs` ago. */
  used(nowMs: number): number {
    this.#expire(nowMs);
    return this.#grants.reduce((sum, g) => sum + g.cost, 0);
  }

  /**
   * Takes `cost` calls at `nowMs` if they fit under `limit`: a `done` to call when the calls have
   * been made. Else how long to wait before asking again: until enough grants expire, counting
   * those still running as done now (the earliest they can expire). A cost above the limit fits
   * only an empty window, so it waits but is never refused for ever.
   */
  take(nowMs: number, cost: number, limit: number): { done: (doneAtMs: number) => void } | { retryAfterMs: number } {
    const retryAfterMs = this.waitMs(nowMs, cost, limit);
    if (retryAfterMs > 0) return { retryAfterMs };
    const grant: { cost: number; doneAt: number | undefined } = { cost, doneAt: undefined };
    this.#grants.push(grant);
    return { done: (doneAtMs) => (grant.doneAt ??= doneAtMs) };
  }

  /** How long `take(nowMs, cost, limit)` would have to wait: 0 when the calls fit now. Takes nothing. */
  waitMs(nowMs: number, cost: number, limit: number): number {
    const used = this.used(nowMs);
    if (used + cost <= limit || used === 0) return 0;
    const expiries = this.#grants.map((g) => ({ cost: g.cost, at: (g.doneAt ?? nowMs) + this.windowMs })).sort((a, b) => a.at - b.at);
    let left = used;
    for (const expiry of expiries) {
      left -= expiry.cost;
      if (left + cost <= limit || left === 0) return Math.max(1, expiry.at - nowMs);
    }
    return this.windowMs;
  }

  #expire(nowMs: number): void {
    for (let i = this.#grants.length - 1; i >= 0; i--) {
      const doneAt = this.#grants[i]!.doneAt;
      if (doneAt !== undefined && doneAt + this.windowMs <= nowMs) this.#grants.splice(i, 1);
    }
  }
}
