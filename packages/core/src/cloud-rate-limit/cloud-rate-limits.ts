import { formatViolations, type ProviderConfig } from '@k8or/api';
import { effectiveRateLimits, rateLimitViolations, type EffectiveRateLimit } from '../policy/rate-limits.js';
import type { CloudCallOptions, CloudCallRecorder, ProviderPlugin } from '../provider/contract.js';
import { RetryableError, TerminalError } from '../provider/errors.js';
import type { QueueLane } from '../queue/work-queue.js';
import { TokenBucket } from '../util/token-bucket.js';
import { runWithAttemptTokens } from './attempt-tokens.js';

/** Which bucket: one per ProviderConfig and service. */
export interface RateLimitLabels {
  provider: string;
  providerConfig: string;
  service: string;
}

/** Hooks for metrics (CoreMetrics.cloudRateLimitMetrics()). */
export interface CloudRateLimitMetrics {
  /** The limit now in force for a bucket. */
  configured(labels: RateLimitLabels, limit: EffectiveRateLimit): void;
  /** A call of `lane` took its token after waiting `seconds` (0: at once) and went ahead. */
  admitted(labels: RateLimitLabels, seconds: number, lane: QueueLane): void;
  /** A wait for a token ended with the call's signal: the call never went. */
  aborted(labels: RateLimitLabels): void;
}

/** One bucket's limit and what went through it, for tests, benches and fault checks. */
export interface RateLimitState extends RateLimitLabels, EffectiveRateLimit {
  /** Attempts that took a token and went ahead: calls, and the SDKs' retries inside them. */
  calls: number;
  /** Of those, the drift checks' (the background lane, behind every change's). */
  backgroundCalls: number;
  /** Of those, the calls that had to wait for their token. */
  delayed: number;
  /** Total seconds those calls waited. */
  waitedSeconds: number;
  /** Waits that ended with an aborted signal (the call never went). */
  aborted: number;
  /** The part of the limit this process may spend (1 unless sharded: see `setShare`). */
  share: number;
}

/** Calls `callback` after `ms`; returns what cancels it. */
export type SetTimer = (callback: () => void, ms: number) => () => void;

export interface CloudRateLimitsOptions {
  metrics?: CloudRateLimitMetrics;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  now?: () => number;
  /** The timer that releases waiting calls; injectable for tests. */
  setTimer?: SetTimer;
}

interface Waiter {
  release(): void;
}

interface Bucket {
  labels: RateLimitLabels;
  limit: EffectiveRateLimit;
  tokens: TokenBucket;
  state: RateLimitState;
  /** Calls waiting for a token, by lane, each first come first served; a change's go first. */
  waiters: Record<QueueLane, Waiter[]>;
  /** Cancels the one timer armed for the first waiter, if any. */
  cancelTimer: (() => void) | undefined;
}

type RateLimitPlugin = Pick<ProviderPlugin, 'provider' | 'rateLimits'>;

const realTimer: SetTimer = (callback, ms) => {
  const timer = setTimeout(callback, ms);
  return () => clearTimeout(timer);
};

/**
 * The engine's cloud rate limits: one token bucket per ProviderConfig and
 * declared service (ProviderPlugin.rateLimits, overridden by
 * `spec.rateLimits`), shared by every reconcile that uses the ProviderConfig.
 * A call waits for its token in order of arrival, for as long as its signal
 * allows, but a change's call goes before every drift check's call that waits
 * (the lanes of `QueueLane`): a drift-check budget leaves the rest of a limit
 * to changes over its minute, and this keeps a burst of checks within that
 * minute from holding a change's calls behind theirs. A token is taken at
 * the moment its call is released, never booked ahead, so the calls
 * released in any T seconds number at most
 * `burst + rate × T` even when the process stalls and timers fire late. A
 * wait that is aborted leaves the queue and rejects with a RetryableError, so
 * a lost leadership never leaves a worker stuck behind the limit, and never
 * costs another call its turn. The engine stops a reconcile's deadline while
 * it waits (`onWait`): reconciles that share a bucket finish in turn rather
 * than all reaching their deadlines in the queue.
 */
export class CloudRateLimits {
  readonly #buckets = new Map<string, Bucket>();
  readonly #metrics: CloudRateLimitMetrics | undefined;
  readonly #now: () => number;
  readonly #setTimer: SetTimer;
  #share = 1;
  /** One of a fleet (`shareFleetWide`): a new bucket starts with no tokens, and each keeps back its transit allowance. */
  #fleetWide = false;

  constructor(options: CloudRateLimitsOptions = {}) {
    this.#metrics = options.metrics;
    this.#now = options.now ?? (() => performance.now());
    this.#setTimer = options.setTimer ?? realTimer;
  }

  /**
   * The recorder a connector gets for `providerConfig`: a call that names its
   * service takes a token of that ProviderConfig's bucket, then runs through
   * `inner` (metrics), so the call's own duration excludes the wait. The SDK's
   * retries inside the call take further tokens of the same bucket
   * (`beforeCloudAttempt`). The
   * limits in force are brought up to date with the ProviderConfig here
   * (see `configure`: an invalid `spec.rateLimits` throws).
   * `onWait`, when given, is called as a call starts waiting for its token,
   * and what it returns as the wait ends (the reconcile's deadline stops).
   * `laneOf`, asked at each call, says whether it is a drift check's
   * (`background`) or a change's (the default).
   *
   * Every path that calls a cloud for a ProviderConfig goes through here: the
   * engine's reconciles, and `k8or plan` and `k8or import` in their process.
   */
  recorder(plugin: RateLimitPlugin, providerConfig: ProviderConfig, inner: CloudCallRecorder, onWait?: () => () => void, laneOf?: () => QueueLane): CloudCallRecorder {
    if (!plugin.rateLimits) return inner;
    this.configure(plugin, providerConfig);
    const configName = providerConfig.metadata.name ?? '';
    return async <T>(operation: string, call: () => Promise<T>, options?: CloudCallOptions): Promise<T> => {
      if (!options) return await inner(operation, call, options);
      const lane = laneOf?.() ?? 'change';
      const takeToken = (): Promise<void> => this.acquire(plugin.provider, configName, options.service, options.signal, operation, onWait, lane);
      await takeToken();
      return await inner(operation, () => runWithAttemptTokens(takeToken, call), options);
    };
  }

  /**
   * Sets the buckets of `providerConfig` to its effective limits (a changed
   * limit applies from the next call). A `spec.rateLimits` that breaks the
   * rules (`rateLimitViolations`) throws a TerminalError naming each field and
   * rule, and changes nothing: no call may go out under a limit nobody set.
   */
  configure(plugin: RateLimitPlugin, providerConfig: ProviderConfig): void {
    const configName = providerConfig.metadata.name ?? '';
    const violations = rateLimitViolations(plugin, providerConfig);
    if (violations.length > 0) {
      throw new TerminalError(`ProviderConfig "${configName}" has invalid rate limits: ${formatViolations(violations).replace(/\n/g, '; ')}`, { code: 'InvalidRateLimits' });
    }
    for (const [service, limit] of effectiveRateLimits(plugin, providerConfig)) {
      const key = bucketKey(configName, service);
      const bucket = this.#buckets.get(key);
      if (!bucket) {
        const labels = { provider: plugin.provider, providerConfig: configName, service };
        const pace = sharePace(limit, this.#share, this.#fleetWide);
        const tokens = new TokenBucket(pace.requestsPerSecond, pace.burst, this.#now, this.#fleetWide ? 0 : pace.burst);
        const state = { ...labels, ...limit, calls: 0, backgroundCalls: 0, delayed: 0, waitedSeconds: 0, aborted: 0, share: this.#share };
        this.#buckets.set(key, { labels, limit, tokens, state, waiters: { change: [], background: [] }, cancelTimer: undefined });
        this.#metrics?.configured(labels, limit);
      } else if (bucket.limit.requestsPerSecond !== limit.requestsPerSecond || bucket.limit.burst !== limit.burst || bucket.limit.source !== limit.source) {
        bucket.limit = limit;
        Object.assign(bucket.state, limit);
        this.#metrics?.configured(bucket.labels, limit);
        this.#repace(bucket);
      }
    }
  }

  /**
   * This process is one of a fleet that spends one limit: from now on a bucket starts with no
   * tokens, earning them at its rate, rather than with its burst. The other shards may have spent
   * the whole burst a moment ago; a shard that joined (or came back) with a fresh burst of its own
   * would let the fleet's calls in a window exceed `burst + rate × T`. And each bucket keeps back
   * `FLEET_TRANSIT_ALLOWANCE_S` of its rate from its burst.
   */
  shareFleetWide(): void {
    if (this.#fleetWide) return;
    this.#fleetWide = true;
    for (const bucket of this.#buckets.values()) this.#repace(bucket);
  }

  /**
   * Sharded: this process may spend `share` (0 < share <= 1) of every ProviderConfig's limits,
   * the rest being the other shards'. Each bucket's rate becomes `share × rate` and its burst
   * `share × burst`, but never below one call (a bucket must let a call go); tokens saved
   * beyond the new burst are dropped at once, so a smaller share holds from now on.
   */
  setShare(share: number): void {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a share of the rate limits must be in (0, 1], not ${share}`);
    if (share === this.#share) return;
    this.#share = share;
    for (const bucket of this.#buckets.values()) {
      bucket.state.share = share;
      this.#repace(bucket);
    }
  }

  /** Sets a bucket's tokens to its limit and this process's share, and re-times its waiters. */
  #repace(bucket: Bucket): void {
    const pace = sharePace(bucket.limit, this.#share, this.#fleetWide);
    bucket.tokens.reconfigure(pace.requestsPerSecond, pace.burst);
    // The armed timer was set for the old rate.
    this.#disarm(bucket);
    this.#release(bucket);
  }

  /**
   * Waits for one token of `service` in ProviderConfig `providerConfig`'s
   * bucket, behind the calls of its `lane` already waiting (and, in the
   * background lane, behind every change's). Rejects with a RetryableError
   * once `signal` aborts (taking no token), and with a TerminalError for a
   * service the provider never declared. `onWait` is called when the call
   * has to queue, and what it returns when the wait ends either way.
   */
  async acquire(provider: string, providerConfig: string, service: string, signal: AbortSignal, operation = 'a call', onWait?: () => () => void, lane: QueueLane = 'change'): Promise<void> {
    const bucket = this.#buckets.get(bucketKey(providerConfig, service));
    if (!bucket) throw new TerminalError(`provider "${provider}" sent ${operation} under rate-limit service "${service}", which it does not declare`, { code: 'UndeclaredRateLimitService' });
    if (signal.aborted) throw aborted(bucket, signal.reason);
    const ahead = lane === 'change' ? bucket.waiters.change.length : waiting(bucket);
    if (ahead === 0 && bucket.tokens.tryTake()) {
      this.#admit(bucket, 0, lane);
      return;
    }
    const started = this.#now();
    const waited = onWait?.();
    try {
      await this.#wait(bucket, signal, bucket.waiters[lane]);
    } finally {
      waited?.();
    }
    const seconds = (this.#now() - started) / 1000;
    bucket.state.delayed += 1;
    bucket.state.waitedSeconds += seconds;
    this.#admit(bucket, seconds, lane);
  }

  /** Queues in `line` until a token is there for it, or `signal` aborts. */
  async #wait(bucket: Bucket, signal: AbortSignal, line: Waiter[]): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = line.indexOf(waiter);
        if (index >= 0) line.splice(index, 1);
        if (waiting(bucket) === 0) this.#disarm(bucket);
        bucket.state.aborted += 1;
        this.#metrics?.aborted(bucket.labels);
        reject(aborted(bucket, signal.reason));
      };
      const waiter: Waiter = {
        release: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      line.push(waiter);
      this.#arm(bucket);
    });
  }

  /** One timer per bucket, for when the first waiter's token will be there. */
  #arm(bucket: Bucket): void {
    if (bucket.cancelTimer || waiting(bucket) === 0) return;
    bucket.cancelTimer = this.#setTimer(() => {
      bucket.cancelTimer = undefined;
      this.#release(bucket);
    }, bucket.tokens.msUntilToken());
  }

  #disarm(bucket: Bucket): void {
    bucket.cancelTimer?.();
    bucket.cancelTimer = undefined;
  }

  /** Releases waiters in order, changes first, while tokens are there now; the rest wait for the next timer. */
  #release(bucket: Bucket): void {
    const { change, background } = bucket.waiters;
    while (change.length + background.length > 0 && bucket.tokens.tryTake()) (change.length > 0 ? change : background).shift()?.release();
    this.#arm(bucket);
  }

  #admit(bucket: Bucket, seconds: number, lane: QueueLane): void {
    bucket.state.calls += 1;
    if (lane === 'background') bucket.state.backgroundCalls += 1;
    this.#metrics?.admitted(bucket.labels, seconds, lane);
  }

  /** Every bucket's limit and counts, a copy. */
  snapshot(): RateLimitState[] {
    return [...this.#buckets.values()].map((bucket) => ({ ...bucket.state }));
  }

  /** One bucket's state, if a call or a connect has made it. */
  state(providerConfig: string, service: string): RateLimitState | undefined {
    const bucket = this.#buckets.get(bucketKey(providerConfig, service));
    return bucket && { ...bucket.state };
  }
}

/**
 * Of a fleet member's burst, the seconds of its rate it keeps back for its calls' time on the way to
 * the cloud. The limit holds where the calls arrive, and each replica's calls take a path of their
 * own (the SDK's signing, a connection, a proxy), whose time varies: calls one replica let go over
 * T + 0.2 s arrived within T at a load of 4 to 6 (docs/benchmarks.md, "What held the edits at
 * 100,000"). Kept back, the fleet's calls arriving in any T stay within `burst + rate × T` while
 * that variation is at most this.
 */
export const FLEET_TRANSIT_ALLOWANCE_S = 0.25;

/** A limit's pace for a process that may spend `share` of it (one of a fleet: less its transit allowance, `FLEET_TRANSIT_ALLOWANCE_S`). */
function sharePace(limit: EffectiveRateLimit, share: number, fleetWide: boolean): { requestsPerSecond: number; burst: number } {
  const requestsPerSecond = limit.requestsPerSecond * share;
  const keptBack = fleetWide ? requestsPerSecond * FLEET_TRANSIT_ALLOWANCE_S : 0;
  return { requestsPerSecond, burst: Math.max(1, limit.burst * share - keptBack) };
}

/** Calls waiting for a token of `bucket`, both lanes. */
function waiting(bucket: Bucket): number {
  return bucket.waiters.change.length + bucket.waiters.background.length;
}

function bucketKey(providerConfig: string, service: string): string {
  return `${providerConfig}\u0000${service}`;
}

function aborted(bucket: Bucket, reason: unknown): RetryableError {
  const why = reason instanceof Error ? reason.message : String(reason);
  return new RetryableError(
    `waiting for a "${bucket.labels.service}" rate-limit token of ProviderConfig "${bucket.labels.providerConfig}" was aborted: ${why}`,
    { code: 'RateLimitWaitAborted', cause: reason },
  );
}
