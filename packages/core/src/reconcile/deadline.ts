/**
 * The deadline of one reconcile: its signal aborts once the reconcile has run
 * for `timeoutMs`, not counting the time it waited its turn at a cloud rate
 * limit (`pause`). Reconciles that share a rate limit take their tokens in
 * turn; were the wait counted, enough of them at once would each reach the
 * deadline short of their last call, at every retry, and the tokens they took
 * would be spent for nothing (none would ever finish). The wait itself is
 * bounded by the rate and the calls ahead of it, and still ends when the
 * engine stops.
 */
export class ReconcileDeadline {
  readonly #controller = new AbortController();
  readonly #timeoutMs: number;
  readonly #now: () => number;
  /** Running time left, as of `#resumedAt`. */
  #leftMs: number;
  #resumedAt: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Waits in progress: the clock stops at the first and runs again when the last ends. */
  #waits = 0;
  #cleared = false;

  /** `now` returns milliseconds on a monotonic clock; injectable for tests. */
  constructor(timeoutMs: number, now: () => number = () => performance.now()) {
    this.#timeoutMs = timeoutMs;
    this.#now = now;
    this.#leftMs = timeoutMs;
    this.#resumedAt = now();
    this.#arm();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Stops the clock (a wait for a rate-limit token begins); the returned function starts it again, once. */
  pause(): () => void {
    if (this.#controller.signal.aborted) return () => {};
    if (this.#waits++ === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#leftMs -= this.#now() - this.#resumedAt;
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.#waits > 0 || this.#controller.signal.aborted || this.#cleared) return;
      this.#resumedAt = this.#now();
      this.#arm();
    };
  }

  /** The reconcile is over: no timer left behind, nor armed again by a wait that outlives it. */
  clear(): void {
    this.#cleared = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#controller.abort(new DOMException(`The operation was aborted due to timeout: the reconcile ran for its ${this.#timeoutMs} ms`, 'TimeoutError'));
    }, Math.max(0, this.#leftMs));
  }
}
