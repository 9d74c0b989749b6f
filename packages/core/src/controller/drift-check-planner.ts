import { Annotations, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Informer } from '../informer/informer.js';
import { joinedKey, objectKey } from '../informer/object-key.js';
import { planDriftChecks, type CheckedResource, type DriftCheckInterval, type DriftCheckPlan } from '../policy/drift-schedule.js';
import { providerConfigFor } from '../policy/provider-config-choice.js';
import { annotationIsTrue, stringField } from '../policy/read.js';
import { resyncPeriodFor } from '../policy/resync.js';
import type { NamespaceInfo, ProviderPlugins } from '../reconcile/ports.js';
import type { ManagedObject } from './controller.js';

export interface DriftCheckPlannerOptions {
  /** Every managed kind's informer: the resources that share each ProviderConfig's budget. */
  managed: ReadonlyMap<ManagedKindName, Informer<ManagedObject>>;
  providerConfigs: Informer<KubernetesObject>;
  namespaces: Informer<KubernetesObject>;
  providers: ProviderPlugins;
  defaultIntervalMs: number;
  floorMs: number;
  /**
   * The part of each ProviderConfig's budget this engine's resources may spend, read at every
   * plan: 1 unless sharded, where it is the shard's share (FleetShare). A change plans again.
   */
  budgetShare?: () => number;
  /** Where the projection goes each time it is worked out (CoreMetrics.setDriftCheckPlans). */
  onPlans?: (plans: readonly (DriftCheckPlan & { provider: string })[]) => void;
  /**
   * A changed cache is planned again at most this often (default 1 s), and no more often than
   * `REPLAN_MS_PER_RESOURCE` for each resource the last plan held: a plan reads every cached
   * resource, so a cache of 55,000 changing all the time (a shard handing on an adopted shard's
   * objects) would otherwise spend most of its CPU planning.
   */
  replanMs?: number;
  now?: () => number;
}

/** The least time between two plans, for each resource the last one held: 1 s at 10,000, 10 s at 100,000. */
export const REPLAN_MS_PER_RESOURCE = 0.1;

/**
 * The engine's view of every ProviderConfig's drift-check plan (policy/drift-schedule.ts's
 * `planDriftChecks`) over the resources in its informer caches. Plans are worked out again,
 * at most once per `replanMs`, after a change that can move them: an object added or deleted,
 * its annotations or deletion changed, a ProviderConfig or a Namespace changed.
 */
export class DriftCheckPlanner {
  readonly #options: DriftCheckPlannerOptions;
  readonly #now: () => number;
  #plans = new Map<string, DriftCheckPlan & { provider: string }>();
  #dirty = true;
  #plannedShare = 1;
  #plannedAt = Number.NEGATIVE_INFINITY;
  /** How many resources the last plan held. */
  #plannedResources = 0;
  /** What a plan reads of each cached resource, kept by each kind's cache in step with it. */
  readonly #inputs = new Map<ManagedKindName, ReadonlyMap<string, PlanInput>>();

  constructor(options: DriftCheckPlannerOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    const changed = (): void => {
      this.#dirty = true;
    };
    const shared = new SharedInputs();
    for (const [kind, informer] of options.managed) {
      this.#inputs.set(kind, informer.cache.addSummary((resource) => planInputOf(resource, options, shared)));
    }
    for (const informer of options.managed.values()) {
      informer.on('add', changed);
      informer.on('delete', changed);
      informer.on('update', (obj, old) => {
        if (obj.metadata.deletionTimestamp !== old?.metadata.deletionTimestamp || !sameAnnotations(obj, old) || obj.metadata.generation !== old?.metadata.generation) changed();
      });
    }
    for (const informer of [options.providerConfigs, options.namespaces]) {
      for (const event of ['add', 'update', 'delete'] as const) informer.on(event, changed);
    }
  }

  /** The interval in force for `resource` of `kind`. */
  intervalFor(kind: ManagedKindName, resource: ManagedResource): DriftCheckInterval {
    const askedMs = resyncPeriodFor(resource, this.#options.defaultIntervalMs, this.#options.floorMs);
    this.#replanIfDue();
    const cacheKey = objectKey(resource);
    const key = joinedKey(kind, cacheKey);
    const input = this.#inputs.get(kind)?.get(cacheKey);
    const plan = input ? this.#plans.get(this.#providerConfigOf(input)) : undefined;
    // The budget's floor from the plan, the ask as it is now: an annotation edited since the
    // plan was worked out counts at once, and the plan catches up within replanMs.
    const floor = plan?.budgetFloors.get(key);
    if (!plan || floor === undefined || floor <= askedMs) return { intervalMs: askedMs, askedMs };
    return { intervalMs: floor, askedMs, lengthenedBy: plan };
  }

  /** The calls an hour `providerConfig`'s drift checks may make here (its budget, or this shard's share), by service (`DriftCheckPlan.budgetByService`); undefined without one. */
  budgetOf(providerConfig: string): ReadonlyMap<string, number> | undefined {
    this.#replanIfDue();
    const budget = this.#plans.get(providerConfig)?.budgetByService;
    return budget && budget.size > 0 ? budget : undefined;
  }

  /** Every ProviderConfig's plan, worked out now. */
  plans(): (DriftCheckPlan & { provider: string })[] {
    this.#dirty = true;
    this.#replanIfDue(true);
    return [...this.#plans.values()];
  }

  /** The ProviderConfig of a planned resource, with its Namespace as it is now. */
  #providerConfigOf(input: NonNullable<PlanInput>): string {
    const namespace = this.#options.namespaces.cache.get(input.namespace) as NamespaceInfo | undefined;
    return providerConfigFor({ spec: { providerConfigRef: input.providerConfigRef === undefined ? undefined : { name: input.providerConfigRef } } }, namespace).name;
  }

  #replanIfDue(force = false): void {
    const share = this.#options.budgetShare?.() ?? 1;
    if (share !== this.#plannedShare) this.#dirty = true;
    const every = Math.max(this.#options.replanMs ?? 1_000, this.#plannedResources * REPLAN_MS_PER_RESOURCE);
    if (!this.#dirty || (!force && this.#now() - this.#plannedAt < every)) return;
    this.#dirty = false;
    this.#plannedAt = this.#now();
    this.#plannedShare = share;
    const o = this.#options;
    const byConfig = new Map<string, CheckedResource[]>();
    for (const [kind, inputs] of this.#inputs) {
      for (const [cacheKey, input] of inputs) {
        if (!input) continue;
        const config = this.#providerConfigOf(input);
        const key = joinedKey(kind, cacheKey);
        const list = byConfig.get(config) ?? [];
        list.push({ key, kind, askedMs: input.askedMs });
        byConfig.set(config, list);
      }
    }
    const plans = new Map<string, DriftCheckPlan & { provider: string }>();
    for (const [name, resources] of byConfig) {
      const providerConfig = o.providerConfigs.cache.get(name) as ProviderConfig | undefined;
      if (!providerConfig) continue;
      const provider = providerConfig.spec.provider;
      plans.set(name, { ...planDriftChecks(providerConfig, o.providers.get(provider), resources, share), provider });
    }
    this.#plans = plans;
    this.#plannedResources = [...byConfig.values()].reduce((sum, resources) => sum + resources.length, 0);
    o.onPlans?.([...plans.values()]);
  }
}

/**
 * What a plan reads of a resource (kept under its cache key): its namespace, the ProviderConfig its spec names (see
 * `providerConfigFor`), and the interval it asks for; undefined for one that makes no drift
 * checks (being deleted, or paused). Resources alike share one (`SharedInputs`).
 */
type PlanInput = { namespace: string; providerConfigRef: string | undefined; askedMs: number } | undefined;

function planInputOf(resource: ManagedObject, options: DriftCheckPlannerOptions, inputs: SharedInputs): PlanInput {
  if (resource.metadata.deletionTimestamp || annotationIsTrue(resource, Annotations.paused)) return undefined;
  return inputs.of(resource.metadata.namespace ?? '', stringField(resource, 'spec', 'providerConfigRef', 'name'), resyncPeriodFor(resource, options.defaultIntervalMs, options.floorMs));
}

/**
 * One shared input per combination: most resources of a namespace name the same ProviderConfig
 * and ask the same interval, so a cache of thousands keeps a handful of these. Values, never
 * changed: the table is only a saving, and starts over past `MAX_SHARED_INPUTS` (Namespaces come
 * and go).
 */
class SharedInputs {
  readonly #inputs = new Map<string, NonNullable<PlanInput>>();
  of(namespace: string, providerConfigRef: string | undefined, askedMs: number): NonNullable<PlanInput> {
    const key = `${askedMs}/${providerConfigRef === undefined ? '' : `=${providerConfigRef}`}/${namespace}`;
    const known = this.#inputs.get(key);
    if (known) return known;
    if (this.#inputs.size >= MAX_SHARED_INPUTS) this.#inputs.clear();
    const input = Object.freeze({ namespace, providerConfigRef, askedMs });
    this.#inputs.set(key, input);
    return input;
  }
}

const MAX_SHARED_INPUTS = 10_000;

function sameAnnotations(a: ManagedObject, b: ManagedObject | undefined): boolean {
  const x = a.metadata.annotations ?? {};
  const y = b?.metadata.annotations ?? {};
  return Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => y[k] === v);
}
