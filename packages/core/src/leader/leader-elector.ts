import type { KubeAccess } from '../kube/access.js';
import type { Logger } from 'pino';
import { KubeApiError, requestJson, resourcePath } from '../informer/request.js';
import { sleepUnlessAborted } from '../util/sleep.js';
import { LeaseObservation, microTime, type LeaseRecord } from './lease-observation.js';

export interface LeaderElectionOptions {
  kubeConfig: KubeAccess;
  /** Namespace and name of the coordination.k8s.io/v1 Lease. */
  namespace: string;
  name: string;
  /** This candidate's identity, unique per process (for example the pod name plus a random suffix). */
  identity: string;
  /** How long a lease stays valid after a renewal seen by a standby; default 15 s. Written rounded up to whole seconds. */
  leaseDurationMs?: number;
  /** How long the leader keeps retrying a failing renewal before it steps down; default 10 s. */
  renewDeadlineMs?: number;
  /** Time between attempts to acquire or renew; default 2 s. */
  retryPeriodMs?: number;
  /** Set the lease free on `stop()` so a standby takes over at once (client-go's ReleaseOnCancel); default true. */
  releaseOnStop?: boolean;
  /** Labels the Lease carries (written when it is created, restored on every renewal), e.g. a shard Lease's ring. */
  labels?: Readonly<Record<string, string>>;
  logger?: Logger;
}

export interface LeaderCallbacks {
  /** Called once leadership is acquired; `signal` aborts when it is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when leadership that was held ends, for whatever reason. */
  onStoppedLeading(): void;
  /** Called whenever the observed holder changes (including to this candidate). */
  onNewLeader?(identity: string): void;
}

/** How lease reads and writes show up in audit logs (and the sandbox's request log). */
const USER_AGENT = 'k8or-leader-election';

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: LeaseRecord;
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics
 * (`tools/leaderelection`):
 *
 * - a candidate acquires the lease when it has no holder, or when the holder's
 *   record has not changed for `leaseDurationSeconds` by this candidate's own
 *   clock (the time it last saw the record change, never the timestamps in the
 *   record, so clock skew between machines does not matter);
 * - the leader renews every `retryPeriod`; if renewals keep failing for
 *   `renewDeadline` it steps down (and aborts the signal it gave to
 *   `onStartedLeading`) before a standby can take over (leaseDuration >
 *   renewDeadline);
 * - every write carries the resourceVersion it read (optimistic concurrency),
 *   so two candidates can never both win;
 * - `stop()` releases a held lease (empty holder, `leaseDurationSeconds: 1`).
 *
 * `run` resolves when this candidate stops leading or is stopped; like
 * client-go, a process that lost leadership is expected to exit and restart.
 */
export class LeaderElector {
  private readonly options: LeaderElectionOptions;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly path: string;

  private readonly observation = new LeaseObservation();
  private observedLease: Lease | undefined;
  private reportedLeader: string | undefined;

  private leading = false;
  private stopped = false;
  private releaseOnStop: boolean;
  private running: Promise<void> | undefined;
  private leadership: AbortController | undefined;
  /** Aborted by stop(), which ends a retry wait at once. */
  private readonly stopping = new AbortController();

  constructor(options: LeaderElectionOptions) {
    this.options = options;
    this.leaseDurationMs = options.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 2_000;
    this.releaseOnStop = options.releaseOnStop ?? true;
    if (!(this.leaseDurationMs > this.renewDeadlineMs)) throw new RangeError('leaseDuration must be greater than renewDeadline');
    if (!(this.renewDeadlineMs > this.retryPeriodMs * 1.2)) throw new RangeError('renewDeadline must be greater than 1.2 * retryPeriod');
    if (!options.identity) throw new RangeError('identity must not be empty');
    this.path = `${resourcePath('coordination.k8s.io', 'v1', 'leases', options.namespace)}/${encodeURIComponent(options.name)}`;
  }

  /** True while this candidate holds the lease and keeps renewing it. */
  isLeader(): boolean {
    return this.leading;
  }

  /** The holder this candidate last observed (maybe itself), or undefined when the lease is free. */
  getLeader(): string | undefined {
    return this.observation.holder;
  }

  /** Competes for the lease, leads while it holds it, and resolves once it stopped leading or was stopped. */
  run(callbacks: LeaderCallbacks): Promise<void> {
    if (this.running) throw new Error('LeaderElector.run was already called');
    this.running = this.lead(callbacks);
    return this.running;
  }

  /**
   * Stops competing. A held lease is released unless `release` is false (or
   * `releaseOnStop` was false): then a standby waits for it to expire, as after a crash.
   */
  async stop(options: { release?: boolean } = {}): Promise<void> {
    if (options.release !== undefined) this.releaseOnStop = options.release;
    this.stopped = true;
    this.leadership?.abort();
    this.stopping.abort();
    await this.running;
  }

  private async lead(callbacks: LeaderCallbacks): Promise<void> {
    const log = this.options.logger;
    // Acquire: try every retryPeriod (jittered like client-go's JitterUntil with factor 1.2).
    while (!this.stopped) {
      if (await this.tryAcquireOrRenew(callbacks)) break;
      await this.sleep(this.retryPeriodMs * (1 + 1.2 * Math.random()));
    }
    if (this.stopped) {
      // stop() came while an attempt that succeeded was in flight: do not keep a lease nobody renews.
      if (this.releaseOnStop) await this.release();
      return;
    }

    this.leading = true;
    const leadership = new AbortController();
    this.leadership = leadership;
    log?.info({ lease: this.path, identity: this.options.identity }, 'acquired leadership');
    try {
      void Promise.resolve(callbacks.onStartedLeading(leadership.signal)).catch((error: unknown) =>
        log?.error({ err: error }, 'onStartedLeading failed'),
      );
    } catch (error) {
      log?.error({ err: error }, 'onStartedLeading failed');
    }

    const renewed = await this.renewUntilLost(callbacks);
    this.leading = false;
    leadership.abort();
    if (!renewed) log?.warn({ lease: this.path, identity: this.options.identity }, 'failed to renew the lease within the renew deadline; stepping down');
    if (this.stopped && this.releaseOnStop) await this.release();
    callbacks.onStoppedLeading();
  }

  /** Renews every retryPeriod; returns false when renewal failed for renewDeadline, true when stopped. */
  private async renewUntilLost(callbacks: LeaderCallbacks): Promise<boolean> {
    while (!this.stopped) {
      await this.sleep(this.retryPeriodMs);
      if (this.stopped) return true;
      const deadline = performance.now() + this.renewDeadlineMs;
      let renewed = false;
      while (!this.stopped) {
        renewed = await this.tryAcquireOrRenew(callbacks, deadline - performance.now());
        if (renewed || this.stopped) break;
        const left = deadline - performance.now();
        if (left <= 0) break;
        await this.sleep(Math.min(this.retryPeriodMs, left));
        if (performance.now() >= deadline) break;
      }
      if (!renewed && !this.stopped) return false;
    }
    return true;
  }

  /** One attempt (client-go's tryAcquireOrRenew): true when this candidate holds the lease afterwards. */
  private async tryAcquireOrRenew(callbacks: LeaderCallbacks, timeoutMs = this.renewDeadlineMs): Promise<boolean> {
    const now = new Date();
    const timeout = Math.max(1, Math.floor(timeoutMs));
    const identity = this.options.identity;
    try {
      let lease: Lease;
      try {
        lease = (await requestJson(this.options.kubeConfig, 'GET', this.path, { timeoutMs: timeout, userAgent: USER_AGENT })) as Lease;
      } catch (error) {
        if (!(error instanceof KubeApiError && error.status === 404)) throw error;
        const created = (await requestJson(this.options.kubeConfig, 'POST', resourcePath('coordination.k8s.io', 'v1', 'leases', this.options.namespace), {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.options.name, namespace: this.options.namespace, ...(this.options.labels ? { labels: { ...this.options.labels } } : {}) },
            spec: this.newRecord(now, undefined),
          },
          timeoutMs: timeout,
          userAgent: USER_AGENT,
        })) as Lease;
        this.observe(created, callbacks);
        return true;
      }

      this.observe(lease, callbacks);
      const record = lease.spec ?? {};
      const holder = record.holderIdentity ?? '';
      if (holder !== '' && holder !== identity && this.leaseValid()) return false;

      const updated = (await requestJson(this.options.kubeConfig, 'PUT', this.path, {
        // The resourceVersion we read makes this a compare-and-swap: a concurrent writer gets 409.
        body: {
          ...lease,
          ...(this.options.labels ? { metadata: { ...lease.metadata, labels: { ...lease.metadata?.labels, ...this.options.labels } } } : {}),
          spec: { ...lease.spec, ...this.newRecord(now, holder === identity ? record : undefined, record) },
        },
        timeoutMs: timeout,
        userAgent: USER_AGENT,
      })) as Lease;
      this.observe(updated, callbacks);
      return true;
    } catch (error) {
      const conflict = error instanceof KubeApiError && error.status === 409;
      this.options.logger?.[conflict ? 'debug' : 'warn']({ err: error, lease: this.path, identity }, 'could not acquire or renew the lease');
      return false;
    }
  }

  /** The record to write: renewals keep acquireTime and transitions; a takeover counts one more transition. */
  private newRecord(now: Date, ownRecord: LeaseRecord | undefined, previous?: LeaseRecord): LeaseRecord {
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: ownRecord?.acquireTime ?? microTime(now),
      renewTime: microTime(now),
      leaseTransitions: ownRecord ? (ownRecord.leaseTransitions ?? 0) : previous ? (previous.leaseTransitions ?? 0) + 1 : 0,
    };
  }

  /** Remembers the lease, and when its record changed by our clock (the basis of expiry). */
  private observe(lease: Lease, callbacks: LeaderCallbacks): void {
    this.observedLease = lease;
    this.observation.observe(lease.spec ?? {});
    const holder = this.observation.holder;
    if (holder !== this.reportedLeader) {
      this.reportedLeader = holder;
      if (holder) {
        this.options.logger?.info({ lease: this.path, leader: holder }, 'new leader observed');
        callbacks.onNewLeader?.(holder);
      }
    }
  }

  /** The observed holder's lease has not expired yet, by our clock. */
  private leaseValid(): boolean {
    return this.observation.unexpired(Math.ceil(this.leaseDurationMs / 1000) * 1000);
  }

  /** Sets the lease free so a standby need not wait for it to expire (client-go's release). */
  private async release(): Promise<void> {
    const lease = this.observedLease;
    if (!lease || lease.spec?.holderIdentity !== this.options.identity) return;
    const now = microTime(new Date());
    try {
      await requestJson(this.options.kubeConfig, 'PUT', this.path, {
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: lease.spec?.leaseTransitions ?? 0 },
        },
        timeoutMs: this.renewDeadlineMs,
        userAgent: USER_AGENT,
      });
      this.options.logger?.info({ lease: this.path, identity: this.options.identity }, 'released the lease');
    } catch (error) {
      this.options.logger?.warn({ err: error, lease: this.path }, 'could not release the lease; it will expire');
    }
  }

  private sleep(ms: number): Promise<void> {
    return sleepUnlessAborted(ms, this.stopping.signal);
  }
}
