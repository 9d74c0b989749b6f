// The engine's drift-check planner over informer caches: the interval in force for a resource is
// the larger of what it asks for now and the budget's floor from the last plan.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type ProviderConfig } from '@k8or/api';
import { DriftCheckPlanner, ObjectCache, REPLAN_MS_PER_RESOURCE, type Informer, type ManagedObject, type ProviderPlugins } from '@k8or/core';
import type { KubernetesObject } from '@kubernetes/client-node';

type Handler<T> = (obj: T, old?: T) => void;

/** An informer whose cache and events the test drives by hand: the planner only reads both. */
class HandFedInformer<T extends KubernetesObject & { metadata: NonNullable<KubernetesObject['metadata']> }> implements Informer<T> {
  readonly cache = new ObjectCache<T>();
  readonly #handlers = new Map<string, Handler<T>[]>();
  async start(): Promise<void> {}
  stop(): void {}
  hasSynced(): boolean {
    return true;
  }
  lastResourceVersion(): string | undefined {
    return undefined;
  }
  /** The planner never changes what an informer watches. */
  reselect(): void {}
  watchAlso(): void {}
  on(event: 'add' | 'update' | 'delete' | 'resync' | 'error', handler: Handler<T> | ((err: unknown) => void)): void {
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), handler as Handler<T>]);
  }
  put(obj: T): void {
    const old = this.cache.set(obj);
    for (const handler of this.#handlers.get(old ? 'update' : 'add') ?? []) handler(obj, old);
  }
}

function bucket(name: string, resyncPeriod: string): ManagedObject {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name, namespace: 'media', uid: `uid-${name}`, generation: 1, finalizers: [FINALIZER], annotations: { [Annotations.resyncPeriod]: resyncPeriod } },
    spec: { providerConfigRef: { name: 'budgeted' } },
  };
}

function providerConfig(budget?: { callsPerHour: number }): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'budgeted' },
    spec: { provider: 'aws', region: 'eu-west-1', ...(budget ? { driftCheckBudget: budget } : {}) },
  } as ProviderConfig;
}

function world(config: ProviderConfig, onPlans?: () => void): { planner: DriftCheckPlanner; buckets: HandFedInformer<ManagedObject>; clock: { now: number } } {
  const buckets = new HandFedInformer<ManagedObject>();
  const providerConfigs = new HandFedInformer<KubernetesObject & { metadata: NonNullable<KubernetesObject['metadata']> }>();
  providerConfigs.put(config as KubernetesObject & { metadata: NonNullable<KubernetesObject['metadata']> });
  const clock = { now: 0 };
  const planner = new DriftCheckPlanner({
    managed: new Map([['Bucket', buckets]]),
    providerConfigs,
    namespaces: new HandFedInformer(),
    providers: new Map() as ProviderPlugins,
    defaultIntervalMs: 3_600_000,
    floorMs: 1_000,
    replanMs: 1_000,
    now: () => clock.now,
    ...(onPlans ? { onPlans } : {}),
  });
  return { planner, buckets, clock };
}

describe('the drift-check planner', () => {
  it('takes a shortened resync-period at once, though the last plan is younger than replanMs', () => {
    const { planner, buckets, clock } = world(providerConfig());
    const photos = bucket('photos', '1h');
    buckets.put(photos);
    assert.equal(planner.intervalFor('Bucket', photos).intervalMs, 3_600_000);
    // Within the same second the user asks for a check every 10 s: no budget says otherwise.
    clock.now += 100;
    const shortened = bucket('photos', '10s');
    buckets.put(shortened);
    assert.deepEqual(planner.intervalFor('Bucket', shortened), { intervalMs: 10_000, askedMs: 10_000 });
  });

  it('plans a large cache again no more often than its size allows: each plan reads every resource', () => {
    let plans = 0;
    const { planner, buckets, clock } = world(providerConfig({ callsPerHour: 3_600_000 }), () => plans++);
    const count = 30_000;
    for (let i = 0; i < count; i++) buckets.put(bucket(`b-${i}`, '1h'));
    planner.intervalFor('Bucket', bucket('b-0', '1h'));
    assert.equal(plans, 1);
    const every = count * REPLAN_MS_PER_RESOURCE;
    // Changing all the time: planned again only once `every` has passed, not every replanMs.
    for (let at = 1_000; at < every; at += 1_000) {
      clock.now = at;
      buckets.put(bucket(`new-${at}`, '1h'));
      planner.intervalFor('Bucket', bucket('b-0', '1h'));
    }
    assert.equal(plans, 1, `planned again within ${every} ms`);
    clock.now = every;
    buckets.put(bucket('last', '1h'));
    planner.intervalFor('Bucket', bucket('b-0', '1h'));
    assert.equal(plans, 2);
  });

  it("keeps the budget's floor for an ask shortened since the last plan", () => {
    // One Bucket, a budget of 360 calls an hour: no check more often than every 10 s.
    const { planner, buckets, clock } = world(providerConfig({ callsPerHour: 360 }));
    const photos = bucket('photos', '20s');
    buckets.put(photos);
    assert.equal(planner.intervalFor('Bucket', photos).intervalMs, 20_000);
    clock.now += 2_000;
    const faster = bucket('photos', '2s');
    buckets.put(faster);
    const interval = planner.intervalFor('Bucket', faster);
    assert.equal(interval.intervalMs, 10_000);
    assert.equal(interval.askedMs, 2_000);
    assert.equal(interval.lengthenedBy?.budgetIntervalMs, 10_000);
  });
});
