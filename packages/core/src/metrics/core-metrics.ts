import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CloudRateLimitMetrics, RateLimitLabels } from '../cloud-rate-limit/cloud-rate-limits.js';
import type { InformerMetricsProvider, WatchEndReason } from '../informer/informer.js';
import type { CloudCallRecorder } from '../provider/contract.js';
import type { ShardAssignerMetrics } from '../sharding/assigner.js';
import type { InFlightWork, WorkQueueMetricsProvider } from '../queue/metrics.js';

/** controller-runtime's buckets for controller_runtime_reconcile_time_seconds. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3,
  3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets: ExponentialBuckets(10e-9, 10, 12), 10 ns .. 1000 s. */
const WORKQUEUE_BUCKETS = Array.from({ length: 12 }, (_, i) => Number((1e-8 * 10 ** i).toPrecision(1)));
/** Cloud API calls: 5 ms .. 60 s. */
const CLOUD_CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Waits for a cloud rate-limit token: 1 ms .. 2 min (a reconcile's default deadline). */
const RATE_LIMIT_WAIT_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
type RateLimitLabel = 'provider' | 'provider_config' | 'service';

/** How one reconcile ended, as controller-runtime labels it. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/**
 * Every Prometheus metric of the k8or core, named as controller-runtime and
 * client-go name theirs so existing dashboards and alerts work unchanged, plus
 * k8or's cloud-call and informer metrics. One instance per registry.
 */
export class CoreMetrics {
  readonly registry: Registry;

  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrorsTotal: Counter<'controller'>;
  readonly reconcileTimeSeconds: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;

  readonly workqueueDepth: Gauge<'name'>;
  readonly workqueueAddsTotal: Counter<'name'>;
  readonly workqueueRetriesTotal: Counter<'name'>;
  readonly workqueueQueueDurationSeconds: Histogram<'name'>;
  readonly workqueueWorkDurationSeconds: Histogram<'name'>;
  readonly workqueueUnfinishedWorkSeconds: Gauge<'name'>;
  readonly workqueueLongestRunningProcessorSeconds: Gauge<'name'>;

  readonly cloudCallsTotal: Counter<'provider' | 'operation' | 'result'>;
  readonly cloudCallDurationSeconds: Histogram<'provider' | 'operation'>;

  readonly cloudRateLimitRequestsPerSecond: Gauge<RateLimitLabel>;
  readonly cloudRateLimitBurst: Gauge<RateLimitLabel>;
  readonly cloudRateLimitCallsTotal: Counter<RateLimitLabel>;
  readonly cloudRateLimitDelayedTotal: Counter<RateLimitLabel>;
  readonly cloudRateLimitWaitSeconds: Histogram<RateLimitLabel | 'lane'>;
  readonly cloudRateLimitAbortedTotal: Counter<RateLimitLabel>;

  readonly shardAssignmentPassesTotal: Counter<'reach'>;
  readonly shardAssignmentPassSeconds: Histogram<'reach'>;
  readonly shardLabelChangesTotal: Counter<'result'>;
  readonly informerListsTotal: Counter<'resource'>;
  readonly informerWatchRestartsTotal: Counter<'resource' | 'reason'>;
  readonly informerEventsTotal: Counter<'resource' | 'event'>;

  readonly leaderElectionMasterStatus: Gauge<'name'>;

  readonly driftCheckProjectedCallsPerHour: Gauge<'provider' | 'provider_config'>;
  readonly driftCheckBudgetCallsPerHour: Gauge<'provider' | 'provider_config'>;
  readonly driftCheckBudgetIntervalSeconds: Gauge<'provider' | 'provider_config'>;
  readonly driftCheckBudgetShare: Gauge<'provider' | 'provider_config'>;
  readonly driftCheckCallsTotal: Counter<'provider' | 'provider_config'>;
  readonly driftChecksDeferredTotal: Counter<'provider' | 'provider_config'>;

  /** In-flight work of each queue, read when the unfinished/longest-running gauges are scraped. */
  private readonly inFlight = new Map<string, InFlightWork>();

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    const inFlight = this.inFlight;

    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrorsTotal = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTimeSeconds = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });

    this.workqueueDepth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers });
    this.workqueueAddsTotal = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueRetriesTotal = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.workqueueQueueDurationSeconds = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.workqueueWorkDurationSeconds = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['name'],
      buckets: WORKQUEUE_BUCKETS,
      registers,
    });
    this.workqueueUnfinishedWorkSeconds = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, work] of inFlight) this.set({ name }, work.unfinishedWorkSeconds());
      },
    });
    this.workqueueLongestRunningProcessorSeconds = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'],
      registers,
      collect() {
        for (const [name, work] of inFlight) this.set({ name }, work.longestRunningProcessorSeconds());
      },
    });

    this.cloudCallsTotal = new Counter({
      name: 'k8or_cloud_calls_total',
      help: 'Cloud API calls made by providers, by provider, operation and result (success or error)',
      labelNames: ['provider', 'operation', 'result'],
      registers,
    });
    this.cloudCallDurationSeconds = new Histogram({
      name: 'k8or_cloud_call_duration_seconds',
      help: 'Duration of cloud API calls made by providers',
      labelNames: ['provider', 'operation'],
      buckets: CLOUD_CALL_BUCKETS,
      registers,
    });

    const rateLimitLabels: RateLimitLabel[] = ['provider', 'provider_config', 'service'];
    this.cloudRateLimitRequestsPerSecond = new Gauge({
      name: 'k8or_cloud_rate_limit_requests_per_second',
      help: 'Configured sustained rate of a cloud service per ProviderConfig (the provider default or spec.rateLimits)',
      labelNames: rateLimitLabels,
      registers,
    });
    this.cloudRateLimitBurst = new Gauge({
      name: 'k8or_cloud_rate_limit_burst',
      help: 'Configured burst (token bucket size) of a cloud service per ProviderConfig',
      labelNames: rateLimitLabels,
      registers,
    });
    this.cloudRateLimitCallsTotal = new Counter({
      name: 'k8or_cloud_rate_limit_calls_total',
      help: 'Cloud call attempts (calls and the SDKs\' retries) that took a rate-limit token and went ahead, per ProviderConfig and service',
      labelNames: rateLimitLabels,
      registers,
    });
    this.cloudRateLimitDelayedTotal = new Counter({
      name: 'k8or_cloud_rate_limit_delayed_total',
      help: 'Cloud calls that had to wait for a rate-limit token',
      labelNames: rateLimitLabels,
      registers,
    });
    this.cloudRateLimitWaitSeconds = new Histogram({
      name: 'k8or_cloud_rate_limit_wait_seconds',
      help: 'Time each cloud call waited for its rate-limit token (0 when one was there), by lane: a change\'s call, or a drift check\'s (background), which waits behind every change\'s',
      labelNames: [...rateLimitLabels, 'lane'],
      buckets: RATE_LIMIT_WAIT_BUCKETS,
      registers,
    });
    this.cloudRateLimitAbortedTotal = new Counter({
      name: 'k8or_cloud_rate_limit_aborted_total',
      help: 'Waits for a rate-limit token ended by the call\'s deadline or abort (the call never went)',
      labelNames: rateLimitLabels,
      registers,
    });

    this.shardAssignmentPassesTotal = new Counter({
      name: 'k8or_shard_assignment_passes_total',
      help: 'Passes of the shard assigner (the leader), by the objects each read: all, those of departed shards, or only those without a shard',
      labelNames: ['reach'],
      registers,
    });
    this.shardAssignmentPassSeconds = new Histogram({
      name: 'k8or_shard_assignment_pass_duration_seconds',
      help: 'How long each pass of the shard assigner took, by the objects it read',
      labelNames: ['reach'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.shardLabelChangesTotal = new Counter({
      name: 'k8or_shard_label_changes_total',
      help: 'Shard and drain label changes the assigner planned: applied, or refused because the object changed since it was read (planned again from a fresh read)',
      labelNames: ['result'],
      registers,
    });
    this.informerListsTotal = new Counter({
      name: 'k8or_informer_lists_total',
      help: 'Full lists made by informers (the first one, and relists after 410 Gone)',
      labelNames: ['resource'],
      registers,
    });
    this.informerWatchRestartsTotal = new Counter({
      name: 'k8or_informer_watch_restarts_total',
      help: 'Watches that ended and were replaced, by reason (closed, gone, stalled, error)',
      labelNames: ['resource', 'reason'],
      registers,
    });
    this.informerEventsTotal = new Counter({
      name: 'k8or_informer_events_total',
      help: 'Events delivered by informers to their handlers',
      labelNames: ['resource', 'event'],
      registers,
    });

    this.leaderElectionMasterStatus = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease.',
      labelNames: ['name'],
      registers,
    });

    this.driftCheckProjectedCallsPerHour = new Gauge({
      name: 'k8or_drift_check_projected_calls_per_hour',
      help: 'Cloud calls an hour the drift checks of a ProviderConfig\'s resources make at the intervals in force (the schedule\'s projection)',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
    this.driftCheckBudgetCallsPerHour = new Gauge({
      name: 'k8or_drift_check_budget_calls_per_hour',
      help: 'Cloud calls an hour a ProviderConfig\'s spec.driftCheckBudget allows this replica\'s drift checks: the budget, or a shard\'s share of it (absent without a budget)',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
    this.driftCheckBudgetIntervalSeconds = new Gauge({
      name: 'k8or_drift_check_budget_interval_seconds',
      help: 'The shortest drift-check interval a ProviderConfig\'s budget allows (0: it lengthens none)',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
    this.driftCheckBudgetShare = new Gauge({
      name: 'k8or_drift_check_budget_share',
      help: 'The part of a ProviderConfig\'s drift-check budget this replica plans its own resources with: 1, or 1/N for one of N shards',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
    this.driftCheckCallsTotal = new Counter({
      name: 'k8or_drift_check_calls_total',
      help: 'Cloud calls made by drift checks (the reconciles of resources in sync) per ProviderConfig: compare its rate with k8or_drift_check_projected_calls_per_hour',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
    this.driftChecksDeferredTotal = new Counter({
      name: 'k8or_drift_checks_deferred_total',
      help: 'Drift checks due at their slot that waited because they would have put a ProviderConfig over its drift-check budget in a sliding minute (each wait counted)',
      labelNames: ['provider', 'provider_config'],
      registers,
    });
  }

  /** The drift-check schedule's projection per ProviderConfig (replacing the last one), for {@link DriftCheckPlanner}. */
  setDriftCheckPlans(plans: readonly { provider: string; providerConfig: string; projectedCallsPerHour: number; budgetCallsPerHour: number | undefined; budgetIntervalMs: number; budgetShare: number }[]): void {
    this.driftCheckProjectedCallsPerHour.reset();
    this.driftCheckBudgetCallsPerHour.reset();
    this.driftCheckBudgetIntervalSeconds.reset();
    this.driftCheckBudgetShare.reset();
    for (const plan of plans) {
      const labels = { provider: plan.provider, provider_config: plan.providerConfig };
      this.driftCheckProjectedCallsPerHour.set(labels, plan.projectedCallsPerHour);
      if (plan.budgetCallsPerHour !== undefined) this.driftCheckBudgetCallsPerHour.set(labels, plan.budgetCallsPerHour);
      this.driftCheckBudgetIntervalSeconds.set(labels, plan.budgetIntervalMs / 1000);
      this.driftCheckBudgetShare.set(labels, plan.budgetShare);
    }
  }

  /** Counts one cloud call of a drift check. */
  driftCheckCall(provider: string, providerConfig: string): void {
    this.driftCheckCallsTotal.inc({ provider, provider_config: providerConfig });
  }

  /** Counts one drift check deferred by the budget's sliding minute. */
  driftCheckDeferred(provider: string, providerConfig: string): void {
    this.driftChecksDeferredTotal.inc({ provider, provider_config: providerConfig });
  }

  /** Adds Node.js process metrics (CPU, memory, event loop lag) to the registry. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Hooks for a {@link WorkQueue} named `name`. */
  workQueueMetrics(name: string): WorkQueueMetricsProvider {
    const labels = { name };
    this.workqueueDepth.set(labels, 0);
    this.workqueueAddsTotal.inc(labels, 0);
    this.workqueueRetriesTotal.inc(labels, 0);
    return {
      setDepth: (depth) => this.workqueueDepth.set(labels, depth),
      incAdds: () => this.workqueueAddsTotal.inc(labels),
      incRetries: () => this.workqueueRetriesTotal.inc(labels),
      observeQueueDuration: (seconds) => this.workqueueQueueDurationSeconds.observe(labels, seconds),
      observeWorkDuration: (seconds) => this.workqueueWorkDurationSeconds.observe(labels, seconds),
      trackInFlight: (work) => this.inFlight.set(name, work),
    };
  }

  /** Counters for an informer of `resource` (for example `buckets.k8or.io`). */
  informerMetrics(resource: string): InformerMetricsProvider {
    return {
      listed: () => this.informerListsTotal.inc({ resource }),
      watchEnded: (reason: WatchEndReason) => this.informerWatchRestartsTotal.inc({ resource, reason }),
      event: (event) => this.informerEventsTotal.inc({ resource, event }),
    };
  }

  /** Records one finished reconcile of `controller` (a kind, such as `bucket`). */
  recordReconcile(controller: string, result: ReconcileResult, seconds: number): void {
    this.reconcileTotal.inc({ controller, result });
    if (result === 'error') this.reconcileErrorsTotal.inc({ controller });
    this.reconcileTimeSeconds.observe({ controller }, seconds);
  }

  /**
   * A {@link CloudCallRecorder} for `provider`: counts every call in
   * `k8or_cloud_calls_total{provider,operation,result}` (result `success` or
   * `error`) and times it in `k8or_cloud_call_duration_seconds`. The call's
   * outcome passes through unchanged.
   */
  cloudCallRecorder(provider: string): CloudCallRecorder {
    return async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
      const end = this.cloudCallDurationSeconds.startTimer({ provider, operation });
      try {
        const value = await call();
        this.cloudCallsTotal.inc({ provider, operation, result: 'success' });
        return value;
      } catch (error) {
        this.cloudCallsTotal.inc({ provider, operation, result: 'error' });
        throw error;
      } finally {
        end();
      }
    };
  }

  /** Hooks for {@link CloudRateLimits}: configured limits, admitted calls and their waits, aborted waits. */
  cloudRateLimitMetrics(): CloudRateLimitMetrics {
    const labelsOf = (l: RateLimitLabels) => ({ provider: l.provider, provider_config: l.providerConfig, service: l.service });
    return {
      configured: (labels, limit) => {
        const l = labelsOf(labels);
        this.cloudRateLimitRequestsPerSecond.set(l, limit.requestsPerSecond);
        this.cloudRateLimitBurst.set(l, limit.burst);
        this.cloudRateLimitCallsTotal.inc(l, 0);
        this.cloudRateLimitDelayedTotal.inc(l, 0);
        this.cloudRateLimitAbortedTotal.inc(l, 0);
      },
      admitted: (labels, seconds, lane) => {
        const l = labelsOf(labels);
        this.cloudRateLimitCallsTotal.inc(l);
        if (seconds > 0) this.cloudRateLimitDelayedTotal.inc(l);
        this.cloudRateLimitWaitSeconds.observe({ ...l, lane }, seconds);
      },
      aborted: (labels) => this.cloudRateLimitAbortedTotal.inc(labelsOf(labels)),
    };
  }

  /** Hooks for the ShardAssigner: each pass, and the label changes it wrote or saw refused. */
  shardAssignerMetrics(): ShardAssignerMetrics {
    for (const result of ['applied', 'skipped']) this.shardLabelChangesTotal.inc({ result }, 0);
    return {
      passed: (reach, applied, skipped, seconds) => {
        this.shardAssignmentPassesTotal.inc({ reach });
        this.shardAssignmentPassSeconds.observe({ reach }, seconds);
        if (applied > 0) this.shardLabelChangesTotal.inc({ result: 'applied' }, applied);
        if (skipped > 0) this.shardLabelChangesTotal.inc({ result: 'skipped' }, skipped);
      },
    };
  }

  /** Sets `leader_election_master_status{name}` (1 leading, 0 standby). */
  setLeader(lease: string, leading: boolean): void {
    this.leaderElectionMasterStatus.set({ name: lease }, leading ? 1 : 0);
  }

  /** The registry in Prometheus text format. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
