// When a shard dies, the assigner moves first its objects with a user's change pending (generation
// ahead of status.observedGeneration): they are the ones someone waits for.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type ManagedResource } from '@k8or/api';
import { KubeRest, ShardAssigner, corePath, installCrds, k8orPath, shardLabel, shardLease, type LeaderElector } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin, waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

const SHARD = shardLabel('Bucket');
const ring = 'k8or';
const namespace = 'k8or-system';
const NS = 'team-a';

describe('the shard assigner: a dead shard\'s objects with a change pending', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  let user: KubeRest;
  let assigner: ShardAssigner;
  const shards = new Map<string, LeaderElector>();

  before(async () => {
    sandbox = await startSandbox({ recordRequests: true });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    user = new KubeRest(kubeConfig, { userAgent: 'test-user' });
    await installCrds(kubeConfig);
    await waitFor('CRDs served', async () => (await user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [namespace, NS]) await user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-west-1' } });
    for (let i = 0; i < 60; i++) {
      await user.create(k8orPath('Bucket', NS), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: `bucket-${i}`, namespace: NS }, spec: { name: `data-${i}` } });
    }
    // Relabelling, with pages small enough that the dead shard's objects take several.
    assigner = new ShardAssigner({ kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', listPageSize: 5 });
  });

  after(async () => {
    await Promise.all([...shards.values()].map((lease) => lease.stop({ release: false })));
    assigner?.close();
    user?.close();
    await sandbox?.stop();
  });

  function startShard(name: string): void {
    const lease = shardLease({ kubeConfig, namespace, ring, shard: name, leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 });
    void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    shards.set(name, lease);
  }

  const buckets = async (): Promise<ManagedResource[]> => (await user.get<{ items: ManagedResource[] }>(k8orPath('Bucket', NS)))?.items ?? [];

  async function syncWith(live: string[]): Promise<void> {
    await waitFor(`live shards ${live.join(', ')}`, async () => (JSON.stringify((await assigner.sync()).membership.live) === JSON.stringify(live) ? true : undefined), 60_000, 200);
  }

  it('relabels them before the dead shard\'s other objects', async () => {
    for (const name of ['shard-a', 'shard-b', 'shard-c']) startShard(name);
    await syncWith(['shard-a', 'shard-b', 'shard-c']);
    // Every object reconciled at its generation, as a shard's engine leaves it.
    for (const bucket of await buckets()) {
      await user.update(k8orPath('Bucket', NS, bucket.metadata.name, 'status'), { ...bucket, status: { observedGeneration: bucket.metadata.generation } });
    }
    const onC = (await buckets()).filter((b) => b.metadata.labels?.[SHARD] === 'shard-c').map((b) => b.metadata.name).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    // A user edits two of shard-c's objects, the last ones its pages list.
    const edited = onC.slice(-2);
    for (const name of edited) await user.patch(k8orPath('Bucket', NS, name), { spec: { versioning: true } });

    await shards.get('shard-c')!.stop({ release: false });
    sandbox.clearRequestLog();
    await syncWith(['shard-a', 'shard-b']);
    const moved = sandbox.requestLog.filter((r) => r.verb === 'patch' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner')).map((r) => r.name);
    assert.deepEqual([...moved].sort(), onC, 'every object of the dead shard moved, once');
    assert.deepEqual([...moved.slice(0, 2)].sort(), edited, `the edited ones first: ${moved.join(', ')}`);
    assert.ok((await buckets()).every((b) => b.metadata.labels?.[SHARD] === 'shard-a' || b.metadata.labels?.[SHARD] === 'shard-b'));
  });
});
