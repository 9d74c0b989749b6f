// `k8or plan`'s drift-check projection (no cluster, no cloud): per ProviderConfig, and per shard
// with the shard's share of the budget where the objects carry shard labels.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ManagedResource, ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { humanDriftChecks, projectDriftChecks } from '../src/commands/plan-drift.ts';

const config: ProviderConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'mine' }, spec: { provider: 'aws', region: 'us-east-1', driftCheckBudget: { callsPerHour: 300 } } };
const plugin = { provider: 'aws', observeCalls: { Bucket: { '': 1 } } } as unknown as ProviderPlugin;

function bucket(name: string, shard?: string): ManagedResource {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Bucket',
    metadata: { name, namespace: 'default', annotations: { 'k8or.io/resync-period': '1m' }, ...(shard ? { labels: { 'shard.k8or.io/bucket': shard } } : {}) },
    spec: { providerConfigRef: { name: 'mine' } },
  } as unknown as ManagedResource;
}

const input = (resources: ManagedResource[]) => ({ resources, namespaceOf: () => undefined, providerConfigOf: (name: string) => (name === 'mine' ? config : undefined), providers: new Map([['aws', plugin]]) });

describe('k8or plan: the drift-check projection', () => {
  it('unsharded: one projection per ProviderConfig with the whole budget', () => {
    // Ten Buckets a minute: 600 calls an hour; the budget of 300 checks each every 2 minutes.
    const [projection] = projectDriftChecks(input(Array.from({ length: 10 }, (_, i) => bucket(`b${i}`))));
    assert.deepEqual(projection, { providerConfig: 'mine', provider: 'aws', resources: 10, projectedCallsPerHour: 300, budgetCallsPerHour: 300, budgetSource: 'callsPerHour', budgetInterval: '2m', lengthened: 10 });
  });

  it('sharded: each shard\'s own objects with its share of the budget, as the shards plan them', () => {
    const resources = [...Array.from({ length: 6 }, (_, i) => bucket(`a${i}`, 'shard-a')), ...Array.from({ length: 3 }, (_, i) => bucket(`b${i}`, 'shard-b')), ...Array.from({ length: 1 }, (_, i) => bucket(`c${i}`, 'shard-c')), bucket('new')];
    const projections = projectDriftChecks(input(resources));
    const byShard = new Map(projections.map((p) => [p.shard, p]));
    assert.deepEqual([...byShard.keys()].sort(), ['', 'shard-a', 'shard-b', 'shard-c']);
    for (const p of projections) {
      assert.equal(p.budgetShare, 1 / 3);
      assert.equal(p.budgetCallsPerHour, 100);
    }
    // shard-a: 6 Buckets in 100 calls an hour, one check each every 3m36s; shard-c's one fits as asked (60 an hour).
    assert.equal(byShard.get('shard-a')?.budgetInterval, '3m36s');
    assert.equal(byShard.get('shard-c')?.projectedCallsPerHour, 60);
    assert.equal(byShard.get('shard-c')?.lengthened, 0);
    const lines = humanDriftChecks(projections, 'the files\' objects');
    assert.ok(lines.some((l) => /ProviderConfig mine, shard shard-a: 6 resources, 100 cloud calls an hour, budget 100 \(1\/3 of spec\.driftCheckBudget\.callsPerHour\); 6 checked every 3m36s/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /ProviderConfig mine, objects not on a shard yet: 1 resource, 60 cloud calls an hour/.test(l)), lines.join('\n'));
  });
});
