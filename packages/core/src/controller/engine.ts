import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { GROUP, KINDS, MANAGED_KINDS, VERSION, type DeletionPolicy, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeAccess } from '../kube/access.js';
import type { Container } from 'inversify';
import type { Logger } from 'pino';
import { CachedLookups, type Secret } from '../config/lookups.js';
import { KubeEventRecorder } from '../events/recorder.js';
import { createInformer, type Informer } from '../informer/informer.js';
import { NAMESPACE_INDEX } from '../informer/indexer.js';
import { KubeManagedResources } from '../kube/resources.js';
import { KubeRest } from '../kube/rest.js';
import { ConfigMapOutputs } from '../outputs/configmap.js';
import type { CoreMetrics } from '../metrics/core-metrics.js';
import { CloudRateLimits } from '../cloud-rate-limit/cloud-rate-limits.js';
import { loadedProviders } from '../provider/registry.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import { providerConfigFor } from '../policy/provider-config-choice.js';
import { firstCheckDelay, type DriftCheckInterval, type DriftCheckPlan } from '../policy/drift-schedule.js';
import { DEFAULT_RESYNC_FLOOR_MS, DEFAULT_RESYNC_PERIOD_MS, resyncPeriodFor } from '../policy/resync.js';
import { DriftCheckPlanner } from './drift-check-planner.js';
import { DriftCheckGate } from '../policy/drift-check-gate.js';
import { operatorNamespace } from '../policy/secrets.js';
import type { NamespaceInfo, ProviderPlugins } from '../reconcile/ports.js';
import { ManagedReconciler } from '../reconcile/reconciler.js';
import { CachedManagedResources } from './cached-resources.js';
import { Controller, type ControllerMetrics, type ManagedObject } from './controller.js';
import { LeaderElector } from '../leader/index.js';
import { FleetShare } from '../sharding/fleet-share.js';
import type { ShardAdoption } from '../sharding/shard-leases.js';
import { shardLease, type ShardLeaseOptions } from '../sharding/shard-lease.js';

export interface LeaderElectionSettings {
  /** Namespace of the coordination.k8s.io Lease. */
  namespace: string;
  /** Lease name. Default `k8or-operator`. */
  name?: string;
  /** This instance's identity. Default: the engine identity. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/** Sharding: this instance is one shard of a ring (docs/sharding.md): its Lease's namespace, ring, shard name and timings. */
export type ShardingSettings = Omit<ShardLeaseOptions, 'kubeConfig' | 'logger'>;

/** Where the engine reports health: core-infra's HealthChecks fits. */
export interface HealthRegistry {
  addReadinessCheck(name: string, check: () => boolean): void;
  addLivenessCheck(name: string, check: () => boolean): void;
}

export interface EngineOptions {
  kubeConfig: KubeAccess;
  /** The loaded provider plugins: a map by provider, or the inversify container they were loaded into. */
  providers: ProviderPlugins | Container;
  /** Identifies this cluster in owner tags. */
  clusterId: string;
  /** Operator-wide default deletion policy. Default `Delete`. */
  defaultDeletionPolicy?: DeletionPolicy;
  /** Workers per kind (one number for all, or per kind). Default 10. */
  workers?: number | Partial<Record<ManagedKindName, number>>;
  /** Drift-check period. Default 1 h; each resource is checked at its slot in it (policy/drift-schedule.ts). */
  resyncPeriodMs?: number;
  pollIntervalMs?: number;
  deletionBlockedRetryMs?: number;
  /** Only watch and reconcile this namespace. Default: all. */
  namespace?: string;
  /**
   * Only watch (and cache) credentials Secrets in this namespace; `'*'` for
   * every namespace. Default: the operator's own namespace (`operatorNamespace`).
   */
  secretsNamespace?: string;
  /** The operator's own namespace. Default: POD_NAMESPACE, the service account's namespace, else k8or-system. */
  operatorNamespace?: string;
  /** Deadline of one reconcile: its cloud and API calls are aborted after it has run this long, its waits for rate-limit tokens not counted. Default 2 min. */
  reconcileTimeoutMs?: number;
  /** The shortest resync period, whatever a `k8or.io/resync-period` annotation says. Default 10 s. */
  resyncFloorMs?: number;
  /** Kinds to run controllers for. Default: Bucket and Table. */
  kinds?: readonly ManagedKindName[];
  /** Reconcile only while holding this Lease; off when omitted. */
  leaderElection?: LeaderElectionSettings;
  /**
   * Work as one shard: reconcile only while holding this shard's Lease, and only the objects
   * labelled for it; let go of drained ones. Off when omitted; never with `leaderElection`.
   */
  sharding?: ShardingSettings;
  /** Minimum time between two writes of the same aggregated Event. Default 60 s. */
  eventAggregationIntervalMs?: number;
  /**
   * The sliding window over which the drift-check gate holds each ProviderConfig to its budget
   * (the budget's share of it). Default 60 s. Tests shorten it together with the intervals.
   */
  driftCheckWindowMs?: number;
  /**
   * How long a graceful `stop` waits for in-flight reconciles before it aborts
   * them. Default 10 s. A lost Lease aborts them at once: another instance
   * may already be writing.
   */
  shutdownDeadlineMs?: number;
  /** A rate limiter per controller; default `managedResourceRateLimiter()` (5 ms .. 60 s per item, 10 qps / 100 burst overall). */
  rateLimiter?: () => RateLimiter<string>;
  /** This instance's name in logs, events and the Lease. Default random. */
  identity?: string;
  logger?: Logger;
  /** Prometheus metrics (reconciles, work queues, informers, cloud calls, leadership). */
  metrics?: CoreMetrics;
  /**
   * The cloud rate limits (a token bucket per ProviderConfig and service the
   * provider declares). Default: a new one, reporting to `metrics`.
   */
  cloudRateLimits?: CloudRateLimits;
  health?: HealthRegistry;
}

/** One leadership term's worth of running parts; rebuilt each term (a stopped work queue cannot restart). */
interface Run {
  rest: KubeRest;
  configInformers: Informer<KubernetesObject>[];
  controllers: Map<ManagedKindName, Controller>;
  /** The managed objects as the reconcilers read and write them (cache reads counted). */
  managedResources: CachedManagedResources;
  /** Each ProviderConfig's drift-check plan over this run's caches. */
  driftChecks: DriftCheckPlanner;
}

/**
 * The manager: builds a controller per managed kind for the loaded provider
 * plugins, with the shared caches (ProviderConfigs, Secrets, Namespaces) whose
 * changes re-queue the resources that depend on them; runs them only while
 * leader when leader election is on.
 */
export class Engine {
  readonly identity: string;
  /** Kept across leadership terms: a cloud account's budget does not reset when the Lease changes hands. */
  readonly cloudRateLimits: CloudRateLimits;
  readonly #options: EngineOptions;
  readonly #providers: ProviderPlugins;
  readonly #logger: Logger | undefined;
  #run: Run | undefined;
  #starting: Promise<void> | undefined;
  /** The previous run unwinding: no new run starts before it has (no two runs in one process). */
  #draining: Promise<void> | undefined;
  /** Sharded: this shard's part of the ProviderConfigs' rate limits and drift budgets, kept up to date. */
  #fleetShare: FleetShare | undefined;
  /** Sharded: the dead shards' adoptions the last read of the shard Leases found (each controller keeps those naming this shard). */
  #adoptions: readonly ShardAdoption[] = [];
  #elector: LeaderElector | undefined;
  #stopped = false;

  constructor(options: EngineOptions) {
    this.#options = options;
    this.identity = options.identity ?? `k8or-${randomUUID().slice(0, 8)}`;
    this.cloudRateLimits = options.cloudRateLimits ?? new CloudRateLimits(options.metrics ? { metrics: options.metrics.cloudRateLimitMetrics() } : {});
    this.#providers = options.providers instanceof Map ? options.providers : loadedProviders(options.providers as Container);
    this.#logger = options.logger?.child({ engine: this.identity });
    options.health?.addReadinessCheck('informers', () => this.hasSynced());
    options.health?.addLivenessCheck('engine', () => !this.#stopped);
  }

  /** Controllers of the current run (empty while not leading). */
  get controllers(): ReadonlyMap<ManagedKindName, Controller> {
    return this.#run?.controllers ?? new Map();
  }

  /** Each ProviderConfig's drift-check plan now: the intervals in force and the projected calls an hour (empty while not leading). */
  driftCheckPlans(): DriftCheckPlan[] {
    return this.#run?.driftChecks.plans() ?? [];
  }

  /** True while this instance reconciles (leading, or leader election off and started). */
  isActive(): boolean {
    return this.#run !== undefined;
  }

  /** Ready: not leading (a standby is ready), or every informer has its first list. */
  hasSynced(): boolean {
    const run = this.#run;
    if (!run) return true;
    return run.configInformers.every((i) => i.hasSynced()) && [...run.controllers.values()].every((c) => c.hasSynced());
  }

  /**
   * Starts reconciling: at once without leader election (resolves when the
   * caches are synced and workers run); with it, campaigns for the Lease and
   * resolves at once, reconciling whenever this instance leads.
   */
  async start(): Promise<void> {
    const { leaderElection: election, sharding } = this.#options;
    if (election && sharding) throw new Error('leaderElection and sharding exclude each other: a shard holds its own Lease');
    if (sharding) {
      this.cloudRateLimits.shareFleetWide();
      this.#fleetShare = new FleetShare({
        kubeConfig: this.#options.kubeConfig,
        namespace: sharding.namespace,
        ring: sharding.ring,
        shard: sharding.shard,
        target: this.cloudRateLimits,
        ...(sharding.retryPeriodMs !== undefined ? { periodMs: sharding.retryPeriodMs } : {}),
        ...(sharding.leaseDurationMs !== undefined ? { leaseDurationMs: sharding.leaseDurationMs } : {}),
        onRead: (membership) => {
          this.#adoptions = membership.adoptions ?? [];
          for (const controller of this.#run?.controllers.values() ?? []) controller.adopt(this.#adoptions);
        },
        ...(this.#logger ? { logger: this.#logger } : {}),
      });
      this.#fleetShare.start();
      void this.#campaign(() => shardLease({ kubeConfig: this.#options.kubeConfig, ...sharding, ...(this.#logger ? { logger: this.#logger } : {}) }), sharding.retryPeriodMs);
      return;
    }
    if (!election) {
      await this.#startRun();
      return;
    }
    const leaseName = election.name ?? 'k8or-operator';
    const newElector = (): LeaderElector =>
      new LeaderElector({
        kubeConfig: this.#options.kubeConfig,
        namespace: election.namespace,
        name: leaseName,
        identity: election.identity ?? this.identity,
        ...(election.leaseDurationMs !== undefined ? { leaseDurationMs: election.leaseDurationMs } : {}),
        ...(election.renewDeadlineMs !== undefined ? { renewDeadlineMs: election.renewDeadlineMs } : {}),
        ...(election.retryPeriodMs !== undefined ? { retryPeriodMs: election.retryPeriodMs } : {}),
        ...(this.#logger ? { logger: this.#logger } : {}),
      });
    void this.#campaign(newElector, election.retryPeriodMs, (leading) => this.#options.metrics?.setLeader(leaseName, leading));
  }

  /** Competes for the Lease; reconciles while holding it; competes again after losing it, until stopped. */
  async #campaign(newElector: () => LeaderElector, retryPeriodMs = 2_000, reportLeading?: (leading: boolean) => void): Promise<void> {
    while (!this.#stopped) {
      const elector = newElector();
      this.#elector = elector;
      try {
        await elector.run({
          onStartedLeading: async () => {
            this.#logger?.info('started leading');
            reportLeading?.(true);
            await this.#startRun();
          },
          onStoppedLeading: () => {
            this.#logger?.info('stopped leading; aborting every reconcile in flight');
            reportLeading?.(false);
            void this.#stopRun({ abort: true });
          },
        });
      } catch (error) {
        this.#logger?.error({ err: error instanceof Error ? error.message : String(error) }, 'leader election failed');
      }
      await this.#stopRun({ abort: true });
      if (!this.#stopped) await new Promise((resolve) => setTimeout(resolve, retryPeriodMs));
    }
  }

  /** True while this instance holds the Lease (or leader election is off and it runs). */
  isLeader(): boolean {
    return this.#options.leaderElection || this.#options.sharding ? (this.#elector?.isLeader() ?? false) : this.#run !== undefined;
  }

  /** Stops gracefully: in-flight reconciles finish (within the deadline), then the Lease is released. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#fleetShare?.stop();
    await this.#stopRun();
    await this.#elector?.stop();
  }

  /**
   * Stops dead, as a killed process would: no draining, no Lease release, no
   * further writes from this instance's workers. For crash tests.
   */
  kill(): void {
    this.#stopped = true;
    this.#fleetShare?.stop();
    // Stop renewing without releasing: a standby takes over once the Lease expires, as after a crash.
    void this.#elector?.stop({ release: false });
    const run = this.#run;
    this.#run = undefined;
    if (!run) return;
    for (const informer of run.configInformers) informer.stop();
    for (const controller of run.controllers.values()) controller.kill();
    run.rest.close();
  }

  async #startRun(): Promise<void> {
    if (this.#draining) await this.#draining;
    if (this.#stopped) return;
    if (this.#starting) return await this.#starting;
    if (this.#fleetShare) {
      // Sharded: no cloud call before the other shards count this one and it knows its share.
      await this.#fleetShare.settle();
      if (this.#stopped || !this.isLeader()) return;
      if (this.#starting) return await this.#starting;
    }
    this.#starting = this.#buildAndStart();
    try {
      await this.#starting;
    } finally {
      this.#starting = undefined;
    }
  }

  async #buildAndStart(): Promise<void> {
    const o = this.#options;
    const rest = new KubeRest(o.kubeConfig, { userAgent: `k8or-engine/${this.identity}` });
    // Never every Secret of the cluster: the operator's own namespace unless told otherwise.
    const secretsNamespace = o.secretsNamespace ?? o.operatorNamespace ?? operatorNamespace();
    const informerMetrics = (resource: string) => (o.metrics ? { metrics: o.metrics.informerMetrics(resource) } : {});
    const providerConfigs = createInformer<KubernetesObject>({
      kubeConfig: o.kubeConfig,
      group: GROUP,
      version: VERSION,
      plural: 'providerconfigs',
      ...informerMetrics(`providerconfigs.${GROUP}`),
    });
    const secrets = createInformer<KubernetesObject>({
      kubeConfig: o.kubeConfig,
      group: '',
      version: 'v1',
      plural: 'secrets',
      ...informerMetrics('secrets'),
      ...(secretsNamespace === '*' ? {} : { namespace: secretsNamespace }),
    });
    const namespaces = createInformer<KubernetesObject>({ kubeConfig: o.kubeConfig, group: '', version: 'v1', plural: 'namespaces', ...informerMetrics('namespaces') });
    // Reconciles read the controllers' informer caches (tracked below), never a copy older than their own writes.
    const managedResources = new CachedManagedResources(new KubeManagedResources(rest));
    const reconcilerDeps = {
      kube: managedResources,
      lookups: new CachedLookups({ namespaces: namespaces.cache, providerConfigs: providerConfigs.cache, secrets: secrets.cache }, rest),
      providers: this.#providers,
      events: new KubeEventRecorder(rest, {
        component: 'k8or',
        ...(o.eventAggregationIntervalMs !== undefined ? { aggregationIntervalMs: o.eventAggregationIntervalMs } : {}),
        ...(this.#logger ? { logger: this.#logger } : {}),
      }),
      outputs: new ConfigMapOutputs(rest),
    };
    const controllers = new Map<ManagedKindName, Controller>();
    const metrics = o.metrics;
    const controllerMetrics: ControllerMetrics | undefined = metrics && {
      reconciled: (controller, result, seconds) => metrics.recordReconcile(controller, result, seconds),
      activeWorkers: (controller, delta) => metrics.activeWorkers.inc({ controller }, delta),
      maxConcurrentReconciles: (controller, workers) => metrics.maxConcurrentReconciles.set({ controller }, workers),
    };
    const kinds = o.kinds ?? MANAGED_KINDS;
    // Objects found at start are scheduled once every kind's cache is complete (Controller.beforeFirstSchedule).
    let listed = 0;
    let allListed: () => void = () => {};
    const everyCacheListed = new Promise<void>((resolve) => (allListed = resolve));
    const beforeFirstSchedule = async (): Promise<void> => {
      if (++listed === kinds.length) allListed();
      await everyCacheListed;
    };
    // Bound once the controllers (whose caches it reads) exist; reconciles start only after that.
    const bound: { planner?: DriftCheckPlanner } = {};
    // Holds each ProviderConfig's drift checks to its budget (this shard's share) over every sliding minute.
    const driftCheckGate = new DriftCheckGate({
      budgets: (providerConfig) => bound.planner?.budgetOf(providerConfig),
      ...(metrics ? { onDeferred: (provider: string, providerConfig: string) => metrics.driftCheckDeferred(provider, providerConfig) } : {}),
      ...(o.driftCheckWindowMs !== undefined ? { windowMs: o.driftCheckWindowMs } : {}),
    });
    const driftCheckInterval = (kind: ManagedKindName, resource: ManagedResource): DriftCheckInterval => {
      if (bound.planner) return bound.planner.intervalFor(kind, resource);
      const asked = resyncPeriodFor(resource, o.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS, o.resyncFloorMs ?? DEFAULT_RESYNC_FLOOR_MS);
      return { intervalMs: asked, askedMs: asked };
    };
    for (const kind of kinds) {
      const reconciler = new ManagedReconciler(kind, reconcilerDeps, {
        clusterId: o.clusterId,
        ...(o.defaultDeletionPolicy ? { defaultDeletionPolicy: o.defaultDeletionPolicy } : {}),
        ...(o.resyncPeriodMs !== undefined ? { resyncPeriodMs: o.resyncPeriodMs } : {}),
        ...(o.pollIntervalMs !== undefined ? { pollIntervalMs: o.pollIntervalMs } : {}),
        ...(o.deletionBlockedRetryMs !== undefined ? { deletionBlockedRetryMs: o.deletionBlockedRetryMs } : {}),
        ...(o.reconcileTimeoutMs !== undefined ? { reconcileTimeoutMs: o.reconcileTimeoutMs } : {}),
        ...(o.resyncFloorMs !== undefined ? { resyncFloorMs: o.resyncFloorMs } : {}),
        ...(metrics ? { cloudCallRecorder: (provider: string) => metrics.cloudCallRecorder(provider) } : {}),
        ...(metrics ? { driftCheckCall: (provider: string, providerConfig: string) => metrics.driftCheckCall(provider, providerConfig) } : {}),
        driftCheckInterval,
        driftCheckGate,
        cloudRateLimits: this.cloudRateLimits,
        ...(this.#logger ? { logger: this.#logger } : {}),
      });
      const workers = typeof o.workers === 'number' ? o.workers : o.workers?.[kind];
      const queueMetrics = metrics?.workQueueMetrics(kind.toLowerCase());
      const informerMetrics = metrics?.informerMetrics(`${KINDS[kind].plural}.${GROUP}`);
      controllers.set(
        kind,
        new Controller({
          kind,
          kubeConfig: o.kubeConfig,
          reconciler,
          ...(workers !== undefined ? { workers } : {}),
          ...(o.namespace ? { namespace: o.namespace } : {}),
          ...(o.sharding ? { shard: { name: o.sharding.shard, rest } } : {}),
          ...(o.rateLimiter ? { rateLimiter: o.rateLimiter() } : {}),
          ...(queueMetrics ? { queueMetrics } : {}),
          ...(informerMetrics ? { informerMetrics } : {}),
          ...(controllerMetrics ? { metrics: controllerMetrics } : {}),
          ...(this.#logger ? { logger: this.#logger } : {}),
          // A restart reads nothing from the cloud for objects in sync: they wait for their slot.
          firstCheckDelayMs: (obj) => firstCheckDelay(obj, reconciler.checkIntervalMs(obj), Date.now()),
          beforeFirstSchedule,
        }),
      );
    }
    for (const [kind, controller] of controllers) {
      // Before its informer lists: the adopted shards' objects come with its first list.
      controller.adopt(this.#adoptions);
      managedResources.track(kind, controller.informer);
    }
    const planner = new DriftCheckPlanner({
      managed: new Map([...controllers].map(([kind, controller]) => [kind, controller.informer])),
      providerConfigs,
      namespaces,
      providers: this.#providers,
      defaultIntervalMs: o.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS,
      floorMs: o.resyncFloorMs ?? DEFAULT_RESYNC_FLOOR_MS,
      // Sharded: this shard's own objects, with its share of each budget (as of the rate limits).
      budgetShare: () => this.#fleetShare?.share ?? 1,
      ...(metrics ? { onPlans: (plans) => metrics.setDriftCheckPlans(plans) } : {}),
    });
    bound.planner = planner;
    const run: Run = { rest, configInformers: [providerConfigs, secrets, namespaces], controllers, managedResources, driftChecks: planner };
    this.#wireDependents(run, { providerConfigs, secrets, namespaces });
    this.#run = run;
    await Promise.all(run.configInformers.map((i) => i.start()));
    if (this.#run !== run) return;
    await Promise.all([...controllers.values()].map((c) => c.start()));
  }

  /** A ProviderConfig, credentials Secret or Namespace changed: re-queue every resource that resolves through it. */
  #wireDependents(
    run: Run,
    informers: { providerConfigs: Informer<KubernetesObject>; secrets: Informer<KubernetesObject>; namespaces: Informer<KubernetesObject> },
  ): void {
    const namespaceOf = (name: string | undefined): NamespaceInfo | undefined =>
      name ? (informers.namespaces.cache.get(name) as NamespaceInfo | undefined) : undefined;
    const requeueUsers = (configName: string): void => {
      for (const controller of run.controllers.values()) {
        if (!controller.hasSynced()) continue;
        for (const resource of controller.informer.cache.list()) {
          if (providerConfigFor(resource, namespaceOf(resource.metadata.namespace)).name === configName) controller.enqueue(resource);
        }
      }
    };
    const onProviderConfig = (obj: KubernetesObject): void => requeueUsers(obj.metadata?.name ?? '');
    const onSecret = (obj: KubernetesObject): void => {
      const secret = obj as Secret;
      for (const config of informers.providerConfigs.cache.list() as ProviderConfig[]) {
        const ref = config.spec.credentials?.secretRef;
        if (ref && ref.name === secret.metadata?.name && ref.namespace === secret.metadata?.namespace) requeueUsers(config.metadata.name ?? '');
      }
    };
    const onNamespace = (obj: KubernetesObject): void => {
      for (const controller of run.controllers.values()) {
        if (!controller.hasSynced()) continue;
        for (const key of controller.informer.cache.keysByIndex(NAMESPACE_INDEX, obj.metadata?.name ?? '')) controller.enqueueKey(key);
      }
    };
    for (const event of ['add', 'update', 'delete'] as const) {
      informers.providerConfigs.on(event, (obj, old) => {
        // A status-only update of a ProviderConfig changes nothing its users depend on.
        if (event !== 'update' || obj.metadata?.generation !== old?.metadata?.generation) onProviderConfig(obj);
      });
      informers.secrets.on(event, onSecret);
      informers.namespaces.on(event, (obj, old) => {
        if (event !== 'update' || !isDeepStrictEqual(obj.metadata?.annotations ?? {}, old?.metadata?.annotations ?? {})) onNamespace(obj);
      });
    }
  }

  /** Stops the current run: drains it (within shutdownDeadlineMs), or with `abort` aborts its reconciles at once. */
  async #stopRun(options: { abort?: boolean } = {}): Promise<void> {
    const run = this.#run;
    this.#run = undefined;
    if (!run) return await this.#draining;
    const deadline = options.abort ? 0 : (this.#options.shutdownDeadlineMs ?? 10_000);
    const draining = (async () => {
      for (const informer of run.configInformers) informer.stop();
      const drained = await Promise.all([...run.controllers.values()].map((c) => c.stop(deadline)));
      if (!options.abort && !drained.every(Boolean)) this.#logger?.warn('shutdown deadline passed; reconciles in flight were aborted');
      run.rest.close();
    })();
    this.#draining = draining;
    try {
      await draining;
    } finally {
      if (this.#draining === draining) this.#draining = undefined;
    }
  }
}

export type { ManagedObject };
