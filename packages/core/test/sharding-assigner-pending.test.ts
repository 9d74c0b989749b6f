// When a shard dies, the assigner moves first its objects with a user's change pending (generation
// ahead of status.observedGeneration): they are the ones someone waits for. And one a user edits
// while the assigner relabels moves as the edit comes, not when the relabel reaches it.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, type ManagedResource } from '@k8or/api';
import { KubeRest, ShardAssigner, ShardLeaseReader, corePath, installCrds, isDeadShard, k8orPath, shardLabel, shardLease, type LeaderElector } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin, waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startHoldingProxy, type HoldingProxy } from './holding-proxy.ts';

const SHARD = shardLabel('Bucket');
const ring = 'k8or';
const namespace = 'k8or-system';
const NS = 'team-a';

/** A sandbox with 60 Buckets, three shards' Leases, and an assigner that relabels, with pages small enough that a shard's objects take several. */
class Fleet {
  readonly shards = new Map<string, LeaderElector>();
  sandbox!: Sandbox;
  kubeConfig!: KubeConfig;
  user!: KubeRest;
  assigner!: ShardAssigner;
  proxy: HoldingProxy | undefined;

  async start(options: { holdRequests?: (method: string, url: URL) => boolean } = {}): Promise<void> {
    this.sandbox = await startSandbox({ recordRequests: true });
    this.kubeConfig = new KubeConfig();
    this.kubeConfig.loadFromString(this.sandbox.kubeconfig);
    this.user = new KubeRest(this.kubeConfig, { userAgent: 'test-user' });
    await installCrds(this.kubeConfig);
    await waitFor('CRDs served', async () => (await this.user.get(k8orPath('ProviderConfig', undefined))) !== undefined);
    for (const name of [namespace, NS]) await this.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    await this.user.create(k8orPath('ProviderConfig', undefined), { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-west-1' } });
    for (let i = 0; i < 60; i++) {
      await this.user.create(k8orPath('Bucket', NS), { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: `bucket-${i}`, namespace: NS }, spec: { name: `data-${i}` } });
    }
    if (options.holdRequests) this.proxy = await startHoldingProxy(this.sandbox, options.holdRequests);
    this.assigner = new ShardAssigner({ kubeConfig: this.proxy?.kubeConfig ?? this.kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', listPageSize: 5 });
    for (const name of ['shard-a', 'shard-b', 'shard-c']) {
      const lease = shardLease({ kubeConfig: this.kubeConfig, namespace, ring, shard: name, leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 });
      void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
      this.shards.set(name, lease);
    }
    await this.syncWith(['shard-a', 'shard-b', 'shard-c']);
    // Every object reconciled at its generation, as a shard's engine leaves it.
    for (const bucket of await this.buckets()) {
      await this.user.update(k8orPath('Bucket', NS, bucket.metadata.name, 'status'), { ...bucket, status: { observedGeneration: bucket.metadata.generation } });
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.shards.values()].map((lease) => lease.stop({ release: false })));
    this.assigner?.close();
    this.proxy?.release();
    await this.proxy?.close();
    this.user?.close();
    await this.sandbox?.stop();
  }

  async buckets(labelSelector?: string): Promise<ManagedResource[]> {
    const query = labelSelector === undefined ? '' : `?labelSelector=${encodeURIComponent(labelSelector)}`;
    return (await this.user.get<{ items: ManagedResource[] }>(`${k8orPath('Bucket', NS)}${query}`))?.items ?? [];
  }

  async syncWith(live: string[]): Promise<void> {
    await waitFor(`live shards ${live.join(', ')}`, async () => (JSON.stringify((await this.assigner.sync()).membership.live) === JSON.stringify(live) ? true : undefined), 60_000, 200);
  }

  /** The assigner's label patches of Buckets since the request log was last cleared, by object name. */
  moves(): string[] {
    return this.sandbox.requestLog.filter((r) => r.verb === 'patch' && r.resource === 'buckets' && r.userAgent?.startsWith('k8or-shard-assigner')).map((r) => r.name ?? '');
  }

  async onLiveShard(name: string): Promise<boolean> {
    const label = (await this.user.get<ManagedResource>(k8orPath('Bucket', NS, name)))?.metadata.labels?.[SHARD];
    return label === 'shard-a' || label === 'shard-b';
  }
}

describe('the shard assigner: a dead shard\'s objects with a change pending', () => {
  const fleet = new Fleet();
  before(() => fleet.start());
  after(() => fleet.stop());

  it('relabels them before the dead shard\'s other objects', async () => {
    const onC = (await fleet.buckets()).filter((b) => b.metadata.labels?.[SHARD] === 'shard-c').map((b) => b.metadata.name).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    // A user edits two of shard-c's objects, the last ones its pages list.
    const edited = onC.slice(-2);
    for (const name of edited) await fleet.user.patch(k8orPath('Bucket', NS, name), { spec: { versioning: true } });

    await fleet.shards.get('shard-c')!.stop({ release: false });
    fleet.sandbox.clearRequestLog();
    await fleet.syncWith(['shard-a', 'shard-b']);
    const moved = fleet.moves();
    assert.deepEqual([...moved].sort(), onC, 'every object of the dead shard moved, once');
    assert.deepEqual([...moved.slice(0, 2)].sort(), edited, `the edited ones first: ${moved.join(', ')}`);
    assert.ok((await fleet.buckets()).every((b) => b.metadata.labels?.[SHARD] === 'shard-a' || b.metadata.labels?.[SHARD] === 'shard-b'));
  });
});

describe('the shard assigner: a dead shard\'s object edited while its objects are relabelled', () => {
  const deadShard = `${SHARD} in (shard-c)`;
  // Once armed: the second list of shard-c's objects from their start (the relabel's second read) waits until released.
  let armed = false;
  let firstPages = 0;
  const fleet = new Fleet();
  before(() =>
    fleet.start({
      holdRequests: (method, url) => {
        if (!armed || method !== 'GET' || url.searchParams.has('watch') || url.searchParams.has('continue') || url.searchParams.get('labelSelector') !== deadShard) return false;
        return ++firstPages === 2;
      },
    }),
  );
  after(() => fleet.stop());

  it('moves it as the edit comes, before the relabel reaches it', async () => {
    const onC = (await fleet.buckets()).filter((b) => b.metadata.labels?.[SHARD] === 'shard-c').map((b) => b.metadata.name).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    // The one the relabel's reads list last.
    const listed = await fleet.buckets(deadShard);
    const edited = listed.at(-1)!.metadata.name!;
    const statusOnly = listed.at(-2)!;

    await fleet.shards.get('shard-c')!.stop({ release: false });
    const reader = new ShardLeaseReader({ kubeConfig: fleet.kubeConfig, namespace, ring });
    await waitFor('shard-c dead', async () => isDeadShard(await reader.read(), 'shard-c'), 60_000, 200);
    fleet.sandbox.clearRequestLog();
    armed = true;
    // The assigner judges expiry by its own reads: its first pass may still see shard-c live.
    const passing = waitFor('a pass that finds shard-c gone', async () => {
      const result = await fleet.assigner.sync();
      return result.membership.live.includes('shard-c') ? undefined : result;
    }, 60_000, 200);
    try {
      await waitFor('the relabel\'s second read held', () => fleet.proxy!.held === 1);
      // Its first read found nothing pending, and moved nothing.
      assert.deepEqual(fleet.moves(), []);
      // A write with no change pending (a status write) is not one to move ahead.
      await fleet.user.patch(k8orPath('Bucket', NS, statusOnly.metadata.name, 'status'), { status: { observedGeneration: statusOnly.metadata.generation, conditions: [] } });
      await fleet.user.patch(k8orPath('Bucket', NS, edited), { spec: { versioning: true } });
      await waitFor(`${edited} relabelled for a live shard while the relabel waits`, () => fleet.onLiveShard(edited), 30_000);
      assert.deepEqual(fleet.moves(), [edited], 'only the edited object moved ahead');
    } finally {
      fleet.proxy!.release();
    }
    const result = await passing;
    assert.deepEqual(result.membership.live, ['shard-a', 'shard-b']);
    assert.deepEqual([...fleet.moves()].sort(), onC, 'every object of the dead shard moved, once');
    assert.ok((await fleet.buckets()).every((b) => b.metadata.labels?.[SHARD] === 'shard-a' || b.metadata.labels?.[SHARD] === 'shard-b'));
  });
});
