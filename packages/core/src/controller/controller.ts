import { Annotations, GROUP, KINDS, MANAGED_KINDS, VERSION, type ManagedKindName, type ManagedResource } from '@k8or/api';
import type { KubernetesObject } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import type { KubeAccess } from '../kube/access.js';
import type { Logger } from 'pino';
import { createInformer, type Informer, type InformerMetricsProvider } from '../informer/informer.js';
import { objectKey, splitObjectKey } from '../informer/object-key.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import { managedResourceRateLimiter } from '../queue/managed-resource-rate-limiter.js';
import type { WorkQueueMetricsProvider } from '../queue/metrics.js';
import { WorkQueue } from '../queue/work-queue.js';
import type { ReconcileRequest, ReconcileOutcome } from '../reconcile/reconciler.js';
import { k8orPath } from '../kube/paths.js';
import { KubeApiError, type KubeRest } from '../kube/rest.js';
import { ShardAdoptions } from '../sharding/adoptions.js';
import type { ShardAdoption } from '../sharding/shard-leases.js';
import { drainLabel, shardLabel } from '../sharding/labels.js';

export type ManagedObject = ManagedResource & KubernetesObject;

/** How long a stop waits for aborted reconciles to unwind. */
const ABORT_UNWIND_MS = 5_000;
/** Drained objects let go of at once, beside the workers. */
const LET_GO_CONCURRENCY = 4;
/** How soon a key of an object whose adoption is paused is tried again. */
const ADOPTION_PAUSED_RETRY_MS = 1_000;

/** Anything that reconciles one key; ManagedReconciler is the one the engine uses. */
export interface Reconciler {
  reconcile(request: ReconcileRequest): Promise<ReconcileOutcome>;
}

/** What a controller reports per reconcile, for metrics. */
export interface ControllerMetrics {
  /** `result`: success, error (threw), requeue (backoff) or requeue_after. */
  reconciled(controller: string, result: 'success' | 'error' | 'requeue' | 'requeue_after', seconds: number): void;
  activeWorkers(controller: string, delta: number): void;
  maxConcurrentReconciles(controller: string, workers: number): void;
}

export interface ControllerOptions {
  kind: ManagedKindName;
  kubeConfig: KubeAccess;
  reconciler: Reconciler;
  /** Concurrent reconciles of this kind. Default 10. */
  workers?: number;
  /** Watch one namespace; all when omitted. */
  namespace?: string;
  /** Retry pace after failures; default `managedResourceRateLimiter()` (5 ms .. 60 s per item, 10 qps / 100 burst overall). */
  rateLimiter?: RateLimiter<string>;
  queueMetrics?: WorkQueueMetricsProvider;
  informerMetrics?: InformerMetricsProvider;
  metrics?: ControllerMetrics;
  logger?: Logger;
  /**
   * Work only the objects labelled for this shard (`shard.k8or.io/<kind>=<name>`), and those of
   * the dead shards it adopts (`adopt`) that fall to it, and let go of one the leader drains (see
   * docs/sharding.md). Every object when omitted.
   */
  shard?: { name: string; rest: KubeRest };
  /**
   * How long after this controller first sees an object (its initial list, or an ADDED event)
   * the object is first reconciled; 0 or omitted: at once. The engine lets an object in sync
   * wait for its drift-check slot (policy/drift-schedule.ts), so a restart reads nothing from
   * the cloud for it.
   */
  firstCheckDelayMs?: (obj: ManagedObject) => number;
  /**
   * Awaited after the informer's first list and before any object found is scheduled: the
   * engine resolves it once every controller's cache is synced, so a delay that depends on all
   * of them (a drift budget shared across kinds) is worked out on complete counts.
   */
  beforeFirstSchedule?: () => Promise<void>;
}

/**
 * Whether an update is worth a reconcile: the desired state (generation,
 * annotations other than the engine's markers, labels) or deletion changed.
 * Status, finalizer and marker writes, nearly always the engine's own, are not
 * (crossplane's DesiredStateChanged predicate); the resync catches the rest.
 */
export function desiredStateChanged(old: ManagedObject | undefined, obj: ManagedObject): boolean {
  if (!old) return true;
  const a = old.metadata;
  const b = obj.metadata;
  return (
    (a.generation !== b.generation && !namedByTheEngine(old, obj)) ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !sameStrings(a.annotations, b.annotations, ENGINE_MARKERS) ||
    !sameStrings(a.labels, b.labels, SHARDING_LABELS)
  );
}

/**
 * k8or's own shard and drain labels: they say which replica works an object, never what it should
 * be. A shard that adopted a dead shard's objects sees their relabelling as an update, which must
 * not reconcile (and call the cloud for) every one of them.
 */
const SHARDING_LABELS: ReadonlySet<string> = new Set(MANAGED_KINDS.flatMap((kind) => [shardLabel(kind), drainLabel(kind)]));

/**
 * Whether the only spec change is the name the engine gave the object (a kind whose default name
 * carries the object's uid, written before its first create with the external-name marker): the
 * reconcile that wrote it goes on to create under it, so the new generation needs no other.
 */
function namedByTheEngine(old: ManagedObject, obj: ManagedObject): boolean {
  const name = obj.spec?.['name'];
  if (old.spec?.['name'] !== undefined || typeof name !== 'string' || obj.metadata.annotations?.[Annotations.externalName] !== name) return false;
  const { name: _named, ...rest } = obj.spec;
  return isDeepStrictEqual(rest, old.spec);
}

/** The engine's own markers: it writes them mid-reconcile, and they change nothing it should act on. */
const ENGINE_MARKERS: ReadonlySet<string> = new Set([Annotations.createPending, Annotations.createSucceeded, Annotations.createFailed, Annotations.externalName]);
const NONE: ReadonlySet<string> = new Set();

/**
 * Whether two string maps (labels, annotations) hold the same entries, not
 * counting the keys in `ignored`; a missing map is an empty one. Runs on every
 * watch event of every managed object, so it compares in place rather than
 * building filtered copies for a deep-equality check.
 */
function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined, ignored: ReadonlySet<string> = NONE): boolean {
  if (a === b) return true;
  let counted = 0;
  for (const key in a) {
    if (ignored.has(key)) continue;
    if (b === undefined || !Object.hasOwn(b, key) || b[key] !== a[key]) return false;
    counted++;
  }
  for (const key in b) if (!ignored.has(key)) counted--;
  return counted === 0;
}

/**
 * One kind's controller: an informer feeds keys into a rate-limited work
 * queue; N workers take keys and reconcile them. A key is never reconciled by
 * two workers at once, and a change that arrives mid-reconcile queues it again.
 */
export class Controller {
  readonly name: string;
  readonly kind: ManagedKindName;
  readonly informer: Informer<ManagedObject>;
  readonly queue: WorkQueue<string>;
  readonly workers: number;
  readonly #reconciler: Reconciler;
  readonly #metrics: ControllerMetrics | undefined;
  readonly #logger: Logger | undefined;
  readonly #shard: { name: string; rest: KubeRest } | undefined;
  readonly #adoptions: ShardAdoptions | undefined;
  readonly #firstCheckDelayMs: ((obj: ManagedObject) => number) | undefined;
  readonly #beforeFirstSchedule: (() => Promise<void>) | undefined;
  /** Keys added before the first schedule (see beforeFirstSchedule); undefined once it ran. */
  #unscheduled: Set<string> | undefined = new Set();
  #running: Promise<void>[] = [];
  #started = false;
  /** Keys of drained objects waiting to be let go of beside the workers, and how many are being. */
  readonly #toLetGo: string[] = [];
  #lettingGo = 0;
  /** Aborted to stop every reconcile in flight (stop past its deadline, lost leadership, kill). */
  readonly #inFlight = new AbortController();

  constructor(options: ControllerOptions) {
    this.kind = options.kind;
    this.name = options.kind.toLowerCase();
    this.workers = options.workers ?? 10;
    this.#reconciler = options.reconciler;
    this.#metrics = options.metrics;
    this.#logger = options.logger?.child({ controller: this.name });
    this.#shard = options.shard;
    this.#adoptions = options.shard
      ? new ShardAdoptions({ kind: options.kind, self: options.shard.name, onSourcesChange: (sources) => this.informer.watchAlso(sources) })
      : undefined;
    this.#firstCheckDelayMs = options.firstCheckDelayMs;
    this.#beforeFirstSchedule = options.beforeFirstSchedule;
    this.queue = new WorkQueue<string>({
      name: this.name,
      rateLimiter: options.rateLimiter ?? managedResourceRateLimiter<string>(),
      ...(options.queueMetrics ? { metrics: options.queueMetrics } : {}),
    });
    this.informer = createInformer<ManagedObject>({
      kubeConfig: options.kubeConfig,
      group: GROUP,
      version: VERSION,
      plural: KINDS[options.kind].plural,
      ...(options.namespace ? { namespace: options.namespace } : {}),
      ...(this.#adoptions ? { labelSelector: this.#adoptions.selector } : {}),
      ...(this.#logger ? { logger: this.#logger } : {}),
      ...(options.informerMetrics ? { metrics: options.informerMetrics } : {}),
      // Thousands of objects, each read whole only when it is reconciled.
      compact: true,
    });
    this.informer.on('add', (obj) => {
      if (!this.#mayWork(obj)) return;
      if (this.#unscheduled) this.#unscheduled.add(objectKey(obj));
      else this.#firstLook(obj);
    });
    this.informer.on('update', (obj, old) => {
      if (!this.#mayWork(obj)) return;
      if (this.#drained(obj) && this.#unscheduled === undefined) this.#letGoSoon(objectKey(obj));
      else if (desiredStateChanged(old, obj)) this.enqueue(obj);
      // Relabelled for this shard while it was cached as another adopter's: new to this shard.
      else if (old && !this.#mayWork(old) && this.#unscheduled === undefined) this.#firstLook(obj);
    });
    // Sharded, an object leaves the cache when it leaves this shard (or the cluster): nothing to
    // reconcile. One that moved from an adopted shard's watch into this shard's own may already be
    // back (or come back before its key is worked): it waits for its first look, as a new one does.
    this.informer.on('delete', (obj) => {
      if (!this.#shard) this.enqueue(obj);
    });
    this.informer.on('error', (err) => this.#logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'informer error'));
  }

  /**
   * Sharded: the dead shards this shard adopts now, as the last read of the shard Leases granted
   * them; every adoption not granted lapses (its reconciles in flight abort, its objects leave the
   * watch).
   */
  adopt(grants: readonly ShardAdoption[]): void {
    this.#adoptions?.set(grants);
  }

  enqueue(obj: KubernetesObject): void {
    this.queue.add(objectKey(obj));
  }

  /** Queues the object under `key` (`namespace/name`, or `name` for a cluster-scoped one). */
  enqueueKey(key: string): void {
    this.queue.add(key);
  }

  /** Starts the informer, waits for its first list, then starts the workers. */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#metrics?.maxConcurrentReconciles(this.name, this.workers);
    await this.informer.start();
    await this.#beforeFirstSchedule?.();
    if (this.queue.shuttingDown) return;
    const found = this.#unscheduled ?? new Set<string>();
    this.#unscheduled = undefined;
    for (const key of found) {
      const obj = this.informer.cache.get(key);
      if (obj && this.#mayWork(obj)) this.#firstLook(obj);
    }
    for (let i = 0; i < this.workers; i++) this.#running.push(this.#work());
  }

  /**
   * Queues an object seen for the first time: at once, or after its first-check delay. One the
   * leader is draining from this shard (drained while this replica was down or starting) is let
   * go at once: its new shard waits for that, not for a drift-check slot.
   */
  #firstLook(obj: ManagedObject): void {
    if (this.#drained(obj)) {
      this.#letGoSoon(objectKey(obj));
      return;
    }
    const delay = this.#firstCheckDelayMs?.(obj) ?? 0;
    // In sync: its first look is its drift check, which waits behind changes.
    if (delay > 0) this.queue.addAfter(objectKey(obj), delay, 'background');
    else this.enqueue(obj);
  }

  hasSynced(): boolean {
    return this.informer.hasSynced();
  }

  /**
   * Stops watching and handing out keys, then waits up to `deadlineMs` for
   * in-flight reconciles to finish; past it, aborts them (their cloud and API
   * calls fail, no new one starts) and waits for them to unwind. True when
   * they all finished within the deadline. `deadlineMs: 0` aborts at once,
   * as after a lost Lease, when another instance may already be writing.
   */
  async stop(deadlineMs = 10_000): Promise<boolean> {
    this.informer.stop();
    this.#adoptions?.stop();
    if (deadlineMs <= 0) this.#inFlight.abort(new Error(`controller ${this.name} stopped`));
    const drained = await this.queue.shutDownWithDrain(deadlineMs);
    if (!drained) {
      this.#inFlight.abort(new Error(`controller ${this.name} stopped: shutdown deadline passed`));
      // An aborted reconcile unwinds at its next call; the bound covers a provider that ignores its signal.
      await Promise.race([Promise.all(this.#running), new Promise((resolve) => setTimeout(resolve, ABORT_UNWIND_MS).unref())]);
    } else {
      await Promise.all(this.#running);
    }
    this.#running = [];
    return drained && !this.#inFlight.signal.aborted;
  }

  /** Stops at once, as a dead process would: nothing in flight makes another call. */
  kill(): void {
    this.informer.stop();
    this.#adoptions?.stop();
    this.queue.shutDown();
    this.#inFlight.abort(new Error(`controller ${this.name} killed`));
    this.#running = [];
  }

  /** Not sharded, or `obj` is this shard's to work (its own, or adopted and falling to it). */
  works(obj: ManagedObject): boolean {
    return this.#adoptions?.works(obj) ?? true;
  }

  /** This shard works `obj`, or will once its paused adoption resumes: its key is queued, and waits (`#shardWorks`). */
  #mayWork(obj: ManagedObject): boolean {
    return this.works(obj) || (this.#adoptions?.awaits(obj) ?? false);
  }

  /** Sharded, and the leader asks this shard to let go of `obj`. */
  #drained(obj: ManagedObject): boolean {
    return this.#shard !== undefined && obj.metadata.labels?.[drainLabel(this.kind)] !== undefined;
  }

  /**
   * Lets go of a drained object beside the workers, so its new shard need not wait while every
   * worker waits on the cloud (a drift check at the rate limit): it takes the key from the queue
   * as a worker would, so no reconcile of it is in flight, and lets go. A key a worker holds is
   * queued instead: its worker's `done` hands it out again, and the next worker lets go.
   */
  #letGoSoon(key: string): void {
    this.#toLetGo.push(key);
    this.#pumpLetGo();
  }

  #pumpLetGo(): void {
    while (this.#lettingGo < LET_GO_CONCURRENCY && this.#toLetGo.length > 0) {
      const next = this.#toLetGo.shift()!;
      const claimed = this.queue.claim(next);
      if (!claimed) {
        this.queue.add(next);
        continue;
      }
      this.#lettingGo++;
      void this.#letGo(next, claimed.waited).finally(() => {
        this.#lettingGo--;
        this.#pumpLetGo();
      });
    }
  }

  async #letGo(key: string, waited: boolean): Promise<void> {
    const reconcile = await this.#shardWorksOrRetry(key, this.#shard!.rest);
    this.queue.done(key);
    // No longer drained (the leader undrained it): what it waited for is still to do.
    if (reconcile && waited) this.queue.add(key);
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      await this.#process(key);
    }
  }

  async #process(key: string): Promise<void> {
    if (this.#shard) {
      // A key is never processed twice at once, so whatever reconcile of it was in flight has finished.
      if (!(await this.#shardWorksOrRetry(key, this.#shard.rest))) {
        this.queue.done(key);
        return;
      }
    }
    await this.#reconcile(key);
  }

  /** `#shardWorks`, but a failed let-go is logged and the key retried with backoff (false: nothing to reconcile now). */
  async #shardWorksOrRetry(key: string, rest: KubeRest): Promise<boolean> {
    try {
      return await this.#shardWorks(key, rest);
    } catch (error) {
      this.#logger?.warn({ resource: key, err: error instanceof Error ? error.message : String(error) }, 'could not let go of a drained object; retrying');
      this.queue.addRateLimited(key);
      return false;
    }
  }

  /**
   * Sharded: true when this shard should reconcile the key. An object no longer in the cache
   * has left this shard (or the cluster): not ours to touch. A drained one is let go: both
   * labels off in one patch carrying the resourceVersion read, so it lands only if nothing
   * changed since (a 409 throws, and the key is tried again on a fresher copy).
   */
  async #shardWorks(key: string, rest: KubeRest): Promise<boolean> {
    const object = this.informer.cache.get(key);
    if (object && !this.works(object) && this.#adoptions?.awaits(object)) {
      // Its adoption is paused: try again soon, rather than lose what it was queued for.
      this.queue.addAfter(key, ADOPTION_PAUSED_RETRY_MS);
      return false;
    }
    if (!object || !this.works(object)) {
      this.queue.forget(key);
      return false;
    }
    if (object.metadata.labels?.[drainLabel(this.kind)] === undefined) return true;
    try {
      await rest.patch(k8orPath(this.kind, object.metadata.namespace, object.metadata.name), {
        metadata: { resourceVersion: object.metadata.resourceVersion, labels: { [shardLabel(this.kind)]: null, [drainLabel(this.kind)]: null } },
      }, 'merge', this.#inFlight.signal);
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    }
    this.#logger?.info({ resource: key }, 'let go of a drained object');
    this.queue.forget(key);
    return false;
  }

  async #reconcile(key: string): Promise<void> {
    const { namespace, name } = splitObjectKey(key);
    const started = performance.now();
    this.#metrics?.activeWorkers(this.name, 1);
    // An adopted object's calls stop when the adoption lapses, as its own objects' do when the shard loses its Lease.
    // Read (decoded) only while adopting: not on every reconcile of a shard.
    const cached = this.#adoptions?.adopting ? this.informer.cache.get(key) : undefined;
    const lapse = cached ? this.#adoptions?.lapseSignal(cached) : undefined;
    const signal = lapse ? AbortSignal.any([this.#inFlight.signal, lapse]) : this.#inFlight.signal;
    try {
      // Whatever this pass ends in sets the next wake; one left from an earlier pass (a backoff the
      // pass just made good) would only repeat it.
      const result = await this.#reconciler
        .reconcile({ namespace: namespace ?? '', name, signal })
        .finally(() => this.queue.dropWakeSetBeforeProcessing(key));
      const seconds = (performance.now() - started) / 1000;
      if (result.backoff) {
        this.queue.addRateLimited(key);
        this.#metrics?.reconciled(this.name, 'requeue', seconds);
      } else {
        this.queue.forget(key);
        if (result.requeueAfterMs !== undefined) {
          this.queue.addAfter(key, result.requeueAfterMs, result.driftCheck ? 'background' : 'change');
          this.#metrics?.reconciled(this.name, 'requeue_after', seconds);
        } else {
          this.#metrics?.reconciled(this.name, 'success', seconds);
        }
      }
    } catch (error) {
      this.#logger?.warn({ resource: key, err: error instanceof Error ? error.message : String(error) }, 'reconcile error; backing off');
      this.#metrics?.reconciled(this.name, 'error', (performance.now() - started) / 1000);
      this.queue.addRateLimited(key);
    } finally {
      this.#metrics?.activeWorkers(this.name, -1);
      this.queue.done(key);
    }
  }
}
