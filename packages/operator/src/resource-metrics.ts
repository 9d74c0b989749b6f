import type { Controller, CoreMetrics, Engine } from '@k8or/core';
import { Gauge } from 'prom-client';

type ReadyStatus = 'True' | 'False' | 'Unknown';

interface WithReady {
  metadata?: { creationTimestamp?: string | Date };
  status?: { conditions?: Array<{ type?: string; status?: string; reason?: string; lastTransitionTime?: string | Date }> };
}

/**
 * Gauges of the Buckets and Tables this process reconciles, read from the engines' informer caches
 * at each scrape (no API call): `k8or_managed_resources{controller,ready}`, how many have each Ready
 * status, and `k8or_managed_resource_not_ready_max_seconds{controller}`, how long the longest
 * not-Ready one has been so (since its Ready condition last changed, else since it was created; 0
 * when all are Ready), and `k8or_managed_resource_drift_held_max_seconds{controller}`, how long the
 * longest-waiting one has held drift for approval. Only the instance that leads reports them: a standby's engines have no controllers.
 * It also gives `controller_runtime_reconcile_errors_total` its 0 for each controller, as controller-runtime does.
 */
export function registerResourceMetrics(metrics: CoreMetrics, engines: readonly Engine[], now: () => number = Date.now): void {
  // Each cache keeps the conditions' summary of its objects in step with them (a compact cache
  // would otherwise decode every object at every scrape); made at a cache's first scrape.
  // A shard's cache also holds the objects of a dead shard it adopts that fall to another adopter:
  // not its own to count (undefined).
  const summaries = new WeakMap<object, ReadonlyMap<string, ConditionsSummary | undefined>>();
  const summaryOf = (controller: Controller): ConditionsSummary[] => {
    let summary = summaries.get(controller.informer.cache);
    if (!summary) summaries.set(controller.informer.cache, (summary = controller.informer.cache.addSummary((object) => (controller.works(object) ? conditionsOf(object as WithReady) : undefined))));
    return [...summary.values()].filter((s) => s !== undefined);
  };
  const byStatus = (): Map<string, Array<{ ready: ReadyStatus; since: number }>> => {
    const found = new Map<string, Array<{ ready: ReadyStatus; since: number }>>();
    const at = now();
    for (const engine of engines) {
      for (const controller of engine.controllers.values()) {
        // controller-runtime starts each controller's error counter at 0: without a sample, rate() over
        // it is empty until the first error, and an alert on it misses the first ones.
        metrics.reconcileErrorsTotal.inc({ controller: controller.name }, 0);
        const list = found.get(controller.name) ?? [];
        for (const summary of summaryOf(controller)) list.push({ ready: summary.ready, since: summary.readySince ?? at });
        found.set(controller.name, list);
      }
    }
    return found;
  };
  new Gauge({
    name: 'k8or_managed_resources',
    help: 'Buckets and Tables the reconciling instance works (a shard: its own, and the adopted objects of a dead shard that fall to it), by controller and the status of their Ready condition (True, False, Unknown: none yet)',
    labelNames: ['controller', 'ready'],
    registers: [metrics.registry],
    collect() {
      this.reset();
      for (const [controller, objects] of byStatus()) {
        for (const ready of ['True', 'False', 'Unknown'] as const) this.set({ controller, ready }, objects.filter((o) => o.ready === ready).length);
      }
    },
  });
  new Gauge({
    name: 'k8or_managed_resource_drift_held_max_seconds',
    help: 'Seconds the longest-waiting Bucket or Table of a controller has held drift for approval (Synced False, reason DriftHeld, since that condition last changed); 0 when none waits',
    labelNames: ['controller'],
    registers: [metrics.registry],
    collect() {
      this.reset();
      const at = now();
      for (const engine of engines) {
        for (const controller of engine.controllers.values()) {
          const held: number[] = [];
          for (const summary of summaryOf(controller)) if (summary.driftHeld) held.push(summary.driftHeldSince ?? at);
          this.set({ controller: controller.name }, held.length > 0 ? Math.max(0, (at - Math.min(...held)) / 1000) : 0);
        }
      }
    },
  });
  new Gauge({
    name: 'k8or_managed_resource_not_ready_max_seconds',
    help: 'Seconds the longest not-Ready Bucket or Table of a controller has been so (since its Ready condition last changed, else since it was created); 0 when every one is Ready',
    labelNames: ['controller'],
    registers: [metrics.registry],
    collect() {
      this.reset();
      const at = now();
      for (const [controller, objects] of byStatus()) {
        const oldest = Math.min(...objects.filter((o) => o.ready !== 'True').map((o) => o.since));
        this.set({ controller }, Number.isFinite(oldest) ? Math.max(0, (at - oldest) / 1000) : 0);
      }
    },
  });
}

/** What the gauges read of an object's conditions; a time that does not parse is undefined (counted as now). */
interface ConditionsSummary {
  ready: ReadyStatus;
  /** Since when Ready has its status (its last transition), else since the object was created; not kept for a Ready one (no gauge reads it). */
  readySince: number | undefined;
  /** Whether the object holds drift for approval (its Synced condition is False, reason DriftHeld). */
  driftHeld: boolean;
  driftHeldSince: number | undefined;
}

/** The summary of most objects, shared: Ready, holding no drift (no gauge reads a Ready one's time). */
const READY_HOLDING_NONE: ConditionsSummary = Object.freeze({ ready: 'True', readySince: undefined, driftHeld: false, driftHeldSince: undefined });

function conditionsOf(object: WithReady): ConditionsSummary {
  const readyCondition = object.status?.conditions?.find((c) => c.type === 'Ready');
  const ready: ReadyStatus = readyCondition?.status === 'True' || readyCondition?.status === 'False' ? readyCondition.status : 'Unknown';
  const synced = object.status?.conditions?.find((c) => c.type === 'Synced');
  const driftHeld = synced?.status === 'False' && synced.reason === 'DriftHeld';
  if (ready === 'True' && !driftHeld) return READY_HOLDING_NONE;
  return {
    ready,
    readySince: timeOf(readyCondition?.lastTransitionTime ?? object.metadata?.creationTimestamp),
    driftHeld,
    driftHeldSince: driftHeld ? timeOf(synced.lastTransitionTime) : undefined,
  };
}

function timeOf(value: string | Date | undefined): number | undefined {
  const parsed = Date.parse(String(value ?? ''));
  return Number.isNaN(parsed) ? undefined : parsed;
}
