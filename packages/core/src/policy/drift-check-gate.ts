import { EVERY_SERVICE, totalCalls } from './drift-schedule.js';
import { SlidingWindowBudget } from './sliding-window.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** What the gate answers a drift check due now: go (and say when its calls are made), or wait. */
export type DriftCheckAdmission = { admitted: true; done: () => void } | { admitted: false; retryAfterMs: number };

export interface DriftCheckGateOptions {
  /**
   * The calls an hour a ProviderConfig's drift checks may make here, by service (its plan's
   * `budgetByService`: the budget, or a shard's share of it; all calls together under
   * EVERY_SERVICE for `callsPerHour`); undefined without a budget.
   */
  budgets: (providerConfig: string) => ReadonlyMap<string, number> | undefined;
  /** Told of each check deferred, for metrics. */
  onDeferred?: (provider: string, providerConfig: string) => void;
  /** Milliseconds on a monotonic clock. Default `performance.now()`. */
  now?: () => number;
  /**
   * The sliding window, in ms; it holds the budget's share of it (each budget's calls an hour
   * scaled to the window). Default one minute. Tests shorten it together with the intervals.
   */
  windowMs?: number;
}

/**
 * Holds each ProviderConfig's drift checks to its budget over every sliding minute: at most a
 * sixtieth of each service's calls an hour (`rateLimitPercent`), or of all calls together
 * (`callsPerHour`), in any 60 s. The schedule (drift-schedule.ts) spreads the checks over their
 * intervals by phase, which is even only on average; a check due at its slot that would overfill
 * the minute of any service it calls waits here until every one has room. It is deferred, never
 * dropped. Only drift checks ask: every other reconcile goes at once. Without a budget, every check goes.
 */
export class DriftCheckGate {
  readonly #options: DriftCheckGateOptions;
  readonly #now: () => number;
  /** A window per ProviderConfig and budgeted service. */
  readonly #windows = new Map<string, SlidingWindowBudget>();
  readonly #windowMs: number;

  constructor(options: DriftCheckGateOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#windowMs = options.windowMs ?? MINUTE_MS;
    if (!(this.#windowMs > 0 && this.#windowMs <= HOUR_MS)) throw new RangeError(`a drift-check window is longer than 0 ms and at most an hour, got ${this.#windowMs}`);
  }

  /** Asks to make a drift check on `providerConfig` now, of `calls` cloud calls by service (`checkCallsOf`). */
  admit(provider: string, providerConfig: string, calls: Readonly<Record<string, number>>): DriftCheckAdmission {
    const budgets = this.#options.budgets(providerConfig);
    if (budgets === undefined) return { admitted: true, done: () => {} };
    const now = this.#now();
    const asks: { window: SlidingWindowBudget; cost: number; limit: number }[] = [];
    for (const [service, perHour] of budgets) {
      const cost = service === EVERY_SERVICE ? totalCalls(calls) : (calls[service] ?? 0);
      if (cost > 0) asks.push({ window: this.#window(`${providerConfig}/${service}`), cost, limit: perHour / (HOUR_MS / this.#windowMs) });
    }
    // Taken from every window or from none: a check that waits holds no service's share meanwhile.
    const retryAfterMs = Math.max(0, ...asks.map((ask) => ask.window.waitMs(now, ask.cost, ask.limit)));
    if (retryAfterMs > 0) {
      this.#options.onDeferred?.(provider, providerConfig);
      return { admitted: false, retryAfterMs };
    }
    const grants = asks.map((ask) => ask.window.take(now, ask.cost, ask.limit)).filter((grant) => 'done' in grant);
    return { admitted: true, done: () => grants.forEach((grant) => grant.done(this.#now())) };
  }

  #window(key: string): SlidingWindowBudget {
    let window = this.#windows.get(key);
    if (!window) {
      window = new SlidingWindowBudget(this.#windowMs);
      this.#windows.set(key, window);
    }
    return window;
  }
}
