import { setTimeout as delay } from 'node:timers/promises';
import type { ProviderConfig } from '@k8or/api';
import { effectiveRateLimits, type EffectiveRateLimit } from '../policy/rate-limits.js';
import type { CloudCallOptions, CloudCallRecorder, ProviderPlugin } from '../provider/contract.js';
import { RetryableError, TerminalError } from '../provider/errors.js';
import { TokenBucket } from '../util/token-bucket.js';

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
  /** A call took its token after waiting `seconds` (0: at once) and went ahead. */
  admitted(labels: RateLimitLabels, seconds: number): void;
  /** A wait for a token ended with the call's signal: the call never went. */
  aborted(labels: RateLimitLabels): void;
}

/** One bucket's limit and what went through it, for tests, benches and fault checks. */
export interface RateLimitState extends RateLimitLabels, EffectiveRateLimit {
  /** Calls that took a token and went ahead. */
  calls: number;
  /** Of those, the calls that had to wait for their token. */
  delayed: number;
  /** Total seconds those calls waited. */
  waitedSeconds: number;
  /** Waits that ended with an aborted signal (the call never went). */
  aborted: number;
}

export interface CloudRateLimitsOptions {
  metrics?: CloudRateLimitMetrics;
  /** Milliseconds on a monotonic clock; injectable for tests. */
  now?: () => number;
  /** Waits `ms` or rejects once `signal` aborts; injectable for tests. */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface Bucket {
  labels: RateLimitLabels;
  limit: EffectiveRateLimit;
  tokens: TokenBucket;
  state: RateLimitState;
}

type RateLimitPlugin = Pick<ProviderPlugin, 'provider' | 'rateLimits'>;

const waitUnlessAborted = (ms: number, signal: AbortSignal): Promise<void> => delay(ms, undefined, { signal });

/**
 * The engine's cloud rate limits: one token bucket per ProviderConfig and
 * declared service (ProviderPlugin.rateLimits, overridden by
 * `spec.rateLimits`), shared by every reconcile that uses the ProviderConfig.
 * A call waits for its token in order of arrival, for as long as its signal
 * allows; a wait that is aborted gives its token back and rejects with a
 * RetryableError, so a reconcile's deadline or a lost leadership never leaves
 * a worker stuck behind the limit, and never costs the next call its turn.
 */
export class CloudRateLimits {
  readonly #buckets = new Map<string, Bucket>();
  readonly #metrics: CloudRateLimitMetrics | undefined;
  readonly #now: () => number;
  readonly #wait: (ms: number, signal: AbortSignal) => Promise<void>;

  constructor(options: CloudRateLimitsOptions = {}) {
    this.#metrics = options.metrics;
    this.#now = options.now ?? (() => performance.now());
    this.#wait = options.wait ?? waitUnlessAborted;
  }

  /**
   * The recorder a connector gets for `providerConfig`: a call that names its
   * service takes a token of that ProviderConfig's bucket, then runs through
   * `inner` (metrics), so the call's own duration excludes the wait. The
   * limits in force are brought up to date with the ProviderConfig here.
   */
  recorder(plugin: RateLimitPlugin, providerConfig: ProviderConfig, inner: CloudCallRecorder): CloudCallRecorder {
    if (!plugin.rateLimits) return inner;
    this.configure(plugin, providerConfig);
    const configName = providerConfig.metadata.name ?? '';
    return async <T>(operation: string, call: () => Promise<T>, options?: CloudCallOptions): Promise<T> => {
      if (options) await this.acquire(plugin.provider, configName, options.service, options.signal, operation);
      return await inner(operation, call, options);
    };
  }

  /** Sets the buckets of `providerConfig` to its effective limits (a changed limit applies from the next call). */
  configure(plugin: RateLimitPlugin, providerConfig: ProviderConfig): void {
    const configName = providerConfig.metadata.name ?? '';
    for (const [service, limit] of effectiveRateLimits(plugin, providerConfig)) {
      const key = bucketKey(configName, service);
      const bucket = this.#buckets.get(key);
      if (!bucket) {
        const labels = { provider: plugin.provider, providerConfig: configName, service };
        const tokens = new TokenBucket(limit.requestsPerSecond, limit.burst, this.#now);
        this.#buckets.set(key, { labels, limit, tokens, state: { ...labels, ...limit, calls: 0, delayed: 0, waitedSeconds: 0, aborted: 0 } });
        this.#metrics?.configured(labels, limit);
      } else if (bucket.limit.requestsPerSecond !== limit.requestsPerSecond || bucket.limit.burst !== limit.burst || bucket.limit.source !== limit.source) {
        bucket.tokens.reconfigure(limit.requestsPerSecond, limit.burst);
        bucket.limit = limit;
        Object.assign(bucket.state, limit);
        this.#metrics?.configured(bucket.labels, limit);
      }
    }
  }

  /**
   * Waits for one token of `service` in ProviderConfig `providerConfig`'s
   * bucket. Rejects with a RetryableError once `signal` aborts (the token goes
   * back), and with a TerminalError for a service the provider never declared.
   */
  async acquire(provider: string, providerConfig: string, service: string, signal: AbortSignal, operation = 'a call'): Promise<void> {
    const bucket = this.#buckets.get(bucketKey(providerConfig, service));
    if (!bucket) throw new TerminalError(`provider "${provider}" sent ${operation} under rate-limit service "${service}", which it does not declare`, { code: 'UndeclaredRateLimitService' });
    if (signal.aborted) throw aborted(bucket, signal.reason);
    const waitMs = bucket.tokens.reserve();
    if (waitMs > 0) {
      const started = this.#now();
      try {
        await this.#wait(waitMs, signal);
      } catch (error) {
        bucket.tokens.cancel();
        bucket.state.aborted += 1;
        this.#metrics?.aborted(bucket.labels);
        throw aborted(bucket, signal.aborted ? signal.reason : error);
      }
      const seconds = (this.#now() - started) / 1000;
      bucket.state.delayed += 1;
      bucket.state.waitedSeconds += seconds;
      this.#admit(bucket, seconds);
      return;
    }
    this.#admit(bucket, 0);
  }

  #admit(bucket: Bucket, seconds: number): void {
    bucket.state.calls += 1;
    this.#metrics?.admitted(bucket.labels, seconds);
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
