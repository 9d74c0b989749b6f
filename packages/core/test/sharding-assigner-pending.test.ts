// When a shard dies, the assigner moves first its objects that need work at once (a user's edit, a
// failed reconcile to retry, a reconcile asked for: all but those in sync, which wait for their
// drift-check slot): they are the ones someone waits for. It reads them while the shard is silent,
// before its Lease expires. And one a user edits while the assigner relabels moves as the edit
// comes, not when the relabel reaches it.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { pino, type Logger } from 'pino';
import { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, Annotations, FINALIZER, type ManagedResource } from '@k8or/api';
import { KubeRest, ShardAssigner, ShardLeaseReader, corePath, installCrds, isDeadShard, k8orPath, shardLabel, shardLease, type LeaderElector, type ShardSyncResult } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin, waitFor } from '@k8or/core/testing';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startHoldingProxy, type CountingProxy, type HoldingProxy } from './holding-proxy.ts';

const SHARD = shardLabel('Bucket');
const ring = 'k8or';
const namespace = 'k8or-system';
const NS = 'team-a';

/** The status a shard's engine leaves on an object in sync at `generation` (`ready`: its Ready condition's status). */
function statusAt(generation: number | undefined, ready: 'True' | 'False' = 'True', message = ''): Record<string, unknown> {
  const condition = (type: string, status: string) => ({ type, status, reason: status === 'True' ? 'ReconcileSuccess' : 'ReconcileError', message, lastTransitionTime: '2026-11-30T04:00:00Z', observedGeneration: generation });
  return { observedGeneration: generation, conditions: [condition('Ready', ready), condition('Synced', 'True')] };
}

/** A sandbox with 60 Buckets, three shards' Leases, and an assigner that relabels, with pages small enough that a shard's objects take several. */
class Fleet {
  readonly shards = new Map<string, LeaderElector>();
  sandbox!: Sandbox;
  kubeConfig!: KubeConfig;
  user!: KubeRest;
  assigner!: ShardAssigner;
  proxy: (HoldingProxy & CountingProxy) | undefined;

  async start(options: { holdRequests?: (method: string, url: URL) => boolean; countRequests?: (method: string, url: URL) => boolean; logger?: Logger; departedConcurrency?: number } = {}): Promise<void> {
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
    if (options.holdRequests || options.countRequests) this.proxy = await startHoldingProxy(this.sandbox, options.holdRequests ?? (() => false), options.countRequests);
    this.assigner = new ShardAssigner({ kubeConfig: this.proxy?.kubeConfig ?? this.kubeConfig, namespace, ring, providers: new Map([['aws', inMemoryProviderPlugin(new InMemoryCloud())]]), clusterId: 'test-cluster', listPageSize: 5, ...(options.logger ? { logger: options.logger } : {}), ...(options.departedConcurrency ? { departedConcurrency: options.departedConcurrency } : {}) });
    for (const name of ['shard-a', 'shard-b', 'shard-c']) this.startShard(name);
    await this.syncWith(['shard-a', 'shard-b', 'shard-c']);
    // Every object in sync at its generation, as a shard's engine leaves it: its finalizer, Ready and Synced.
    for (const bucket of await this.buckets()) {
      const held = await this.user.patch<ManagedResource>(k8orPath('Bucket', NS, bucket.metadata.name), { metadata: { finalizers: [FINALIZER] } });
      await this.user.update(k8orPath('Bucket', NS, bucket.metadata.name, 'status'), { ...held, status: statusAt(held.metadata.generation) });
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

  /** Runs a shard Lease of `name` (a replica of that name, holding its Lease). */
  startShard(name: string): void {
    const lease = shardLease({ kubeConfig: this.kubeConfig, namespace, ring, shard: name, leaseDurationMs: 4000, renewDeadlineMs: 3000, retryPeriodMs: 300 });
    void lease.run({ onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
    this.shards.set(name, lease);
  }

  /** The names of the Buckets labelled for `shard`. */
  async on(shard: string): Promise<string[]> {
    return (await this.buckets()).filter((b) => b.metadata.labels?.[SHARD] === shard).map((b) => b.metadata.name!);
  }

  /** Stops `shard` as a crash does (its Lease left to expire) and waits until a reader of the Leases calls it dead; returns that reader. */
  async crash(shard: string): Promise<ShardLeaseReader> {
    await this.shards.get(shard)!.stop({ release: false });
    const reader = new ShardLeaseReader({ kubeConfig: this.kubeConfig, namespace, ring });
    await waitFor(`${shard} dead`, async () => isDeadShard(await reader.read(), shard), 60_000, 200);
    return reader;
  }

  /** Passes until one finds `shard` gone (the assigner judges expiry by its own reads: a first pass may still see it live). */
  passUntilGone(shard: string): Promise<ShardSyncResult> {
    return waitFor(`a pass that finds ${shard} gone`, async () => {
      const result = await this.assigner.sync();
      return result.membership.live.includes(shard) ? undefined : result;
    }, 60_000, 200);
  }

  async onLiveShard(name: string): Promise<boolean> {
    const label = (await this.user.get<ManagedResource>(k8orPath('Bucket', NS, name)))?.metadata.labels?.[SHARD];
    return label === 'shard-a' || label === 'shard-b';
  }
}

describe('the shard assigner: a dead shard\'s objects that need work at once', () => {
  const fleet = new Fleet();
  before(() => fleet.start());
  after(() => fleet.stop());

  it('relabels them before the dead shard\'s other objects', async () => {
    const onC = (await fleet.on('shard-c')).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    // The last ones its pages list: a user edits two; one failed its last reconcile (Ready False at
    // its generation, a retry due); on one a user asked for a reconcile (an annotation: no new generation).
    const [failed, requested, ...edited] = onC.slice(-4) as [string, string, string, string];
    for (const name of edited) await fleet.user.patch(k8orPath('Bucket', NS, name), { spec: { versioning: true } });
    const failing = (await fleet.user.get<ManagedResource>(k8orPath('Bucket', NS, failed)))!;
    await fleet.user.patch(k8orPath('Bucket', NS, failed, 'status'), { status: statusAt(failing.metadata.generation, 'False', 'AccessDenied') });
    await fleet.user.patch(k8orPath('Bucket', NS, requested), { metadata: { annotations: { [Annotations.reconcileRequestedAt]: '2026-11-30T04:10:00Z' } } });
    const first = [failed, requested, ...edited].sort();

    await fleet.shards.get('shard-c')!.stop({ release: false });
    fleet.sandbox.clearRequestLog();
    await fleet.syncWith(['shard-a', 'shard-b']);
    const moved = fleet.moves();
    assert.deepEqual([...moved].sort(), onC, 'every object of the dead shard moved, once');
    assert.deepEqual([...moved.slice(0, first.length)].sort(), first, `the ones that need work first: ${moved.join(', ')}`);
    assert.ok((await fleet.buckets()).every((b) => b.metadata.labels?.[SHARD] === 'shard-a' || b.metadata.labels?.[SHARD] === 'shard-b'));
  });
});

describe('the shard assigner: a dead shard\'s objects in sync', () => {
  // Every label patch of a Bucket counted while in flight (each sent on 50 ms late, so those sent together overlap).
  const fleet = new Fleet();
  before(() => fleet.start({ countRequests: (method, url) => method === 'PATCH' && url.pathname.includes('/buckets/'), departedConcurrency: 2 }));
  after(() => fleet.stop());

  it('moves them `departedConcurrency` at a time, after those that need work', async () => {
    const onC = (await fleet.on('shard-c')).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    const edited = onC.slice(-1);
    for (const name of edited) await fleet.user.patch(k8orPath('Bucket', NS, name), { spec: { versioning: true } });
    await fleet.shards.get('shard-c')!.stop({ release: false });
    fleet.sandbox.clearRequestLog();
    fleet.proxy!.countAfresh();
    await fleet.syncWith(['shard-a', 'shard-b']);
    const moved = fleet.moves();
    assert.deepEqual([...moved].sort(), onC, 'every object of the dead shard moved, once');
    assert.deepEqual([...moved.slice(0, edited.length)].sort(), edited, 'those that need work first');
    // Pages of 5: at the default of 16, five at once.
    assert.equal(fleet.proxy!.mostInFlight, 2, 'two at a time');
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
    const onC = (await fleet.on('shard-c')).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    // The one the relabel's reads list last.
    const listed = await fleet.buckets(deadShard);
    const edited = listed.at(-1)!.metadata.name!;
    const statusOnly = listed.at(-2)!;
    const requested = listed.at(-3)!.metadata.name!;

    await fleet.crash('shard-c');
    fleet.sandbox.clearRequestLog();
    armed = true;
    const passing = fleet.passUntilGone('shard-c');
    try {
      await waitFor('the relabel\'s second read held', () => fleet.proxy!.held === 1);
      // Its first read found nothing pending, and moved nothing.
      assert.deepEqual(fleet.moves(), []);
      // A write that leaves its object in sync (a status write, a message changed) is not one to move ahead.
      await fleet.user.patch(k8orPath('Bucket', NS, statusOnly.metadata.name, 'status'), { status: statusAt(statusOnly.metadata.generation, 'True', 'checked again') });
      await fleet.user.patch(k8orPath('Bucket', NS, edited), { spec: { versioning: true } });
      await waitFor(`${edited} relabelled for a live shard while the relabel waits`, () => fleet.onLiveShard(edited), 30_000);
      assert.deepEqual(fleet.moves(), [edited], 'only the edited object moved ahead');
      // A reconcile asked for (an annotation: no new generation) needs work at once too.
      await fleet.user.patch(k8orPath('Bucket', NS, requested), { metadata: { annotations: { [Annotations.reconcileRequestedAt]: '2026-11-30T04:20:00Z' } } });
      await waitFor(`${requested} relabelled for a live shard while the relabel waits`, () => fleet.onLiveShard(requested), 30_000);
      assert.deepEqual(fleet.moves(), [edited, requested], 'then the one asked to be reconciled');
    } finally {
      fleet.proxy!.release();
    }
    const result = await passing;
    assert.deepEqual(result.membership.live, ['shard-a', 'shard-b']);
    assert.deepEqual([...fleet.moves()].sort(), onC, 'every object of the dead shard moved, once');
    assert.ok((await fleet.buckets()).every((b) => b.metadata.labels?.[SHARD] === 'shard-a' || b.metadata.labels?.[SHARD] === 'shard-b'));
  });
});

describe('the shard assigner: a shard that went silent', () => {
  const deadShard = `${SHARD} in (shard-c)`;
  const said: { msg: string; shard?: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void said.push(JSON.parse(line) as { msg: string; shard?: string }) });
  const fleet = new Fleet();
  before(() => fleet.start({ logger }));
  after(() => fleet.stop());

  /** What the assigner logged of reading a silent shard's objects, and of stopping when it renewed, in order. */
  const events = (): string[] => said.filter((line) => line.shard !== undefined && /silent|not been renewed/.test(line.msg)).map((line) => `${line.shard}: ${line.msg.startsWith('a silent shard renewed') ? 'renewed' : 'silent'}`);

  it('stops reading a silent shard\'s objects once it renews its Lease, and moves none of them', async () => {
    const shardB = fleet.shards.get('shard-b')!;
    await shardB.stop({ release: false });
    const leading = new AbortController();
    const running = fleet.assigner.run(leading.signal, 600_000);
    try {
      await waitFor('shard-b read as silent', () => events().includes('shard-b: silent'), 30_000);
      fleet.sandbox.clearRequestLog();
      // A replica of that name back before its Lease expired (a paused process, say): it holds its Lease again.
      fleet.startShard('shard-b');
      await waitFor('shard-b read as renewed', () => events().includes('shard-b: renewed'), 30_000);
      assert.deepEqual(events(), ['shard-b: silent', 'shard-b: renewed']);
      assert.deepEqual(fleet.moves(), [], 'nothing of a shard that renewed moves');
    } finally {
      leading.abort();
      await running;
    }
  });

  it('reads its objects that need work before its Lease expires, and when it does moves them first, without reading them again', async () => {
    said.length = 0;
    const onC = (await fleet.on('shard-c')).sort();
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    const edited = onC.slice(-2);
    for (const name of edited) await fleet.user.patch(k8orPath('Bucket', NS, name), { spec: { versioning: true } });
    const leading = new AbortController();
    const running = fleet.assigner.run(leading.signal, 600_000);
    try {
      fleet.sandbox.clearRequestLog();
      await fleet.shards.get('shard-c')!.stop({ release: false });
      await waitFor('every object of shard-c on a live shard', async () => {
        for (const name of onC) if (!(await fleet.onLiveShard(name))) return false;
        return true;
      }, 60_000, 200);
    } finally {
      leading.abort();
      await running;
    }
    assert.deepEqual(events(), ['shard-c: silent']);
    const log = fleet.sandbox.requestLog;
    const fence = log.findIndex((r) => r.resource === 'leases' && r.verb === 'update' && r.name === 'shard-c' && r.userAgent?.startsWith('k8or-shard-leases'));
    assert.ok(fence >= 0, 'the assigner took shard-c\'s Lease before moving its objects');
    const readsOfC = (from: number, to: number) => log.slice(from, to).filter((r) => r.verb === 'list' && r.resource === 'buckets' && r.labelSelector === deadShard).length;
    const before = readsOfC(0, fence);
    assert.ok(before > 0, 'shard-c\'s objects were read while it was silent, before its Lease expired');
    assert.equal(readsOfC(fence, log.length), before, 'after the Lease expired, one more read of them (the rest), not two');
    const moved = fleet.moves();
    assert.deepEqual([...moved].sort(), onC, 'every object of the dead shard moved, once');
    assert.deepEqual([...moved.slice(0, edited.length)].sort(), edited, `the edited ones first: ${moved.join(', ')}`);
  });
});

describe('the shard assigner: the shards change while a dead shard\'s objects are relabelled', () => {
  const deadC = `${SHARD} in (shard-c)`;
  const said: { msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void said.push(JSON.parse(line) as { msg: string }) });
  // Once armed: the relabel's first page of shard-c's objects (the second read of them from their start) waits until released.
  let armed = false;
  let firstPages = 0;
  const fleet = new Fleet();
  before(() =>
    fleet.start({
      logger,
      holdRequests: (method, url) => {
        if (!armed || method !== 'GET' || url.searchParams.has('watch') || url.searchParams.has('continue') || url.searchParams.get('labelSelector') !== deadC) return false;
        return ++firstPages === 2;
      },
    }),
  );
  after(() => fleet.stop());

  // A shard that joins is live at the first read that lists it, where a dead one is called dead only
  // by the reader's own clock: the join makes the change this test can time.
  it('ends that pass at its next page, and the next pass plans from the shards as they are', async () => {
    const onC = await fleet.on('shard-c');
    assert.ok(onC.length >= 8, `shard-c holds ${onC.length} objects`);
    const reader = await fleet.crash('shard-c');
    fleet.sandbox.clearRequestLog();
    armed = true;
    const passing = fleet.passUntilGone('shard-c');
    try {
      await waitFor('the relabel\'s first page held', () => fleet.proxy!.held === 1, 30_000);
      fleet.startShard('shard-d');
      await waitFor('shard-d live', async () => (await reader.read()).live.includes('shard-d'), 30_000, 200);
    } finally {
      fleet.proxy!.release();
    }
    const ended = await passing;
    assert.deepEqual(ended.membership.live, ['shard-a', 'shard-b'], 'the pass began without shard-d');
    assert.ok(said.some((line) => line.msg.startsWith('the shards changed while')), 'it ended early');
    assert.ok((await fleet.buckets(deadC)).length > 0, 'shard-c\'s objects after the first page were left for the next pass');
    await fleet.syncWith(['shard-a', 'shard-b', 'shard-d']);
    assert.deepEqual(await fleet.buckets(deadC), [], 'the next pass moved the rest');
  });
});
