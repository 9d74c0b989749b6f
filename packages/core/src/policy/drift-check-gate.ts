import { SlidingWindowBudget } from './sliding-window.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** What the gate answers a drift check due now: go (and say when its calls are made), or wait. */
export type DriftCheckAdmission = { admitted: true; done: () => void } | { admitted: false; retryAfterMs: number };

export interface DriftCheckGateOptions {
  /**
   * The calls an hour a ProviderConfig's drift checks may make here (its plan's
   * `budgetCallsPerHour`: the budget, or a shard's share of it); undefined without a budget.
   */
  budgetCallsPerHour: (providerConfig: string) => number | undefined;
  /** Told of each check deferred, for metrics. */
  onDeferred?: (provider: string, providerConfig: string) => void;
  /** Milliseconds on a monotonic clock. Default `performance.now()`. */
  now?: () => number;
  /**
   * The sliding window, in ms; it holds the budget's share of it (`budgetCallsPerHour` scaled to
   * the window). Default one minute. Tests shorten it together with the intervals.
   */
  windowMs?: number;
}

/**
 * Holds each ProviderConfig's drift checks to its budget over every sliding minute: at most
 * `budgetCallsPerHour / 60` calls in any 60 s. The schedule (drift-schedule.ts) spreads the checks
 * over their intervals by phase, which is even only on average; a check due at its slot that would
 * overfill the minute waits here until the window has room. It is deferred, never dropped. Only
 * drift checks ask: every other reconcile goes at once. Without a budget, every check goes.
 */
export class DriftCheckGate {
  readonly #options: DriftCheckGateOptions;
  readonly #now: () => number;
  readonly #windows = new Map<string, SlidingWindowBudget>();
  readonly #windowMs: number;

  constructor(options: DriftCheckGateOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#windowMs = options.windowMs ?? MINUTE_MS;
    if (!(this.#windowMs > 0 && this.#windowMs <= HOUR_MS)) throw new RangeError(`a drift-check window is longer than 0 ms and at most an hour, got ${this.#windowMs}`);
  }

  /** Asks to make a drift check of `calls` cloud calls on `providerConfig` now. */
  admit(provider: string, providerConfig: string, calls: number): DriftCheckAdmission {
    const perHour = this.#options.budgetCallsPerHour(providerConfig);
    if (perHour === undefined) return { admitted: true, done: () => {} };
    let window = this.#windows.get(providerConfig);
    if (!window) {
      window = new SlidingWindowBudget(this.#windowMs);
      this.#windows.set(providerConfig, window);
    }
    const taken = window.take(this.#now(), calls, perHour / (HOUR_MS / this.#windowMs));
    if ('retryAfterMs' in taken) {
      this.#options.onDeferred?.(provider, providerConfig);
      return { admitted: false, retryAfterMs: taken.retryAfterMs };
    }
    return { admitted: true, done: () => taken.done(this.#now()) };
  }
}
