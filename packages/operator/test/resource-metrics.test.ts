// The gauges of the Buckets and Tables in the controllers' caches, read from the summaries each
// cache keeps in step with its objects: counts by Ready status, the longest not Ready, the longest
// holding drift, across writes and deletes after the first scrape.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CoreMetrics, ObjectCache, compactJsonCodec, type Engine, type ManagedObject } from '@k8or/core';
import { registerResourceMetrics } from '../dist/resource-metrics.js';

const NOW = Date.parse('2026-11-28T10:00:00Z');
const minutesAgo = (minutes: number) => new Date(NOW - minutes * 60_000).toISOString();

function bucket(name: string, conditions: Array<{ type: string; status: string; reason: string; minutesAgo: number }>): ManagedObject {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name, namespace: 'media', uid: `uid-${name}`, creationTimestamp: minutesAgo(120) },
    spec: {},
    status: { conditions: conditions.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: '', lastTransitionTime: minutesAgo(c.minutesAgo) })) },
  } as unknown as ManagedObject;
}

/**
 * An engine with one controller over `cache`: the gauges read nothing else of it. Its shard works
 * every object but those named `elsewhere-*` (a dead shard's objects adopted by another shard).
 */
function engineOver(cache: ObjectCache<ManagedObject>): Engine {
  const works = (obj: ManagedObject) => !obj.metadata.name?.startsWith('elsewhere-');
  return { controllers: new Map([['Bucket', { name: 'bucket', informer: { cache }, works }]]) } as unknown as Engine;
}

async function gauges(metrics: CoreMetrics): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    for (const value of metric.values) {
      const labels = Object.entries(value.labels).map(([k, v]) => `${k}=${String(v)}`).sort().join(',');
      found.set(`${metric.name}{${labels}}`, value.value);
    }
  }
  return found;
}

for (const mode of ['kept as they are', 'compact'] as const) {
  describe(`resource gauges over a cache of objects ${mode}`, () => {
    it('counts by Ready status and times the longest not Ready and the longest holding drift, in step with the cache', async () => {
      const cache = new ObjectCache<ManagedObject>(mode === 'compact' ? compactJsonCodec() : undefined);
      const metrics = new CoreMetrics();
      registerResourceMetrics(metrics, [engineOver(cache)], () => NOW);
      cache.set(bucket('ready', [{ type: 'Ready', status: 'True', reason: 'Available', minutesAgo: 50 }, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', minutesAgo: 50 }]));
      cache.set(bucket('failing', [{ type: 'Ready', status: 'False', reason: 'ReconcileError', minutesAgo: 10 }]));
      cache.set(bucket('new', []));
      cache.set(bucket('holding', [{ type: 'Ready', status: 'True', reason: 'Available', minutesAgo: 90 }, { type: 'Synced', status: 'False', reason: 'DriftHeld', minutesAgo: 30 }]));
      // In the cache, but another shard's to work: not counted, and not timed.
      cache.set(bucket('elsewhere-1', [{ type: 'Ready', status: 'False', reason: 'ReconcileError', minutesAgo: 100 }]));
      cache.set(bucket('elsewhere-2', [{ type: 'Ready', status: 'True', reason: 'Available', minutesAgo: 90 }]));

      let found = await gauges(metrics);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=True}'), 2);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=False}'), 1);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=Unknown}'), 1);
      // "new" has no Ready condition: not Ready since it was created, 120 minutes ago.
      assert.equal(found.get('k8or_managed_resource_not_ready_max_seconds{controller=bucket}'), 120 * 60);
      assert.equal(found.get('k8or_managed_resource_drift_held_max_seconds{controller=bucket}'), 30 * 60);

      // After the first scrape: the summaries follow writes and deletes.
      cache.delete('media/new');
      cache.set(bucket('holding', [{ type: 'Ready', status: 'True', reason: 'Available', minutesAgo: 90 }, { type: 'Synced', status: 'True', reason: 'ReconcileSuccess', minutesAgo: 1 }]));
      cache.set(bucket('ready', [{ type: 'Ready', status: 'False', reason: 'ReconcileError', minutesAgo: 5 }]));
      found = await gauges(metrics);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=True}'), 1);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=False}'), 2);
      assert.equal(found.get('k8or_managed_resources{controller=bucket,ready=Unknown}'), 0);
      assert.equal(found.get('k8or_managed_resource_not_ready_max_seconds{controller=bucket}'), 10 * 60);
      assert.equal(found.get('k8or_managed_resource_drift_held_max_seconds{controller=bucket}'), 0);
    });
  });
}
