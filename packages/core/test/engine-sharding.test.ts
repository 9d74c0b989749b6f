import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { HashRing, Reasons, ShardLeaseReader, adoptionHash, drainLabel, shardLabel, type Engine, type EngineOptions, type ShardAssigner, type ShardSyncResult } from '@k8or/core';
import { SHARD_RING, World, condition, shardAssigner, isReadyAndSynced, waitFor } from './engine-harness.ts';

const SHARD = shardLabel('Bucket');
const DRAIN = drainLabel('Bucket');

describe('engine: shards work only their own objects, and hand them over', () => {
  let world: World;
  let assigner: ShardAssigner;
  const sharding = SHARD_RING;

  before(async () => {
    world = await World.start();
    assigner = await shardAssigner(world);
  });
  after(async () => {
    assigner?.close();
    await world?.stop();
  });

  const startShard = (shard: string, options: Partial<EngineOptions> = {}): Promise<Engine> => world.startEngine({ identity: shard, sharding: { ...sharding, shard }, ...options });

  /** Engines that wrote to the Bucket `name` since `from`. */
  function writersOf(name: string, from: number): Set<string> {
    return new Set(
      world
        .engineRequests(from)
        .filter((r) => r.resource === 'buckets' && r.name === name && ['create', 'update', 'patch', 'delete'].includes(r.verb) && (r.userAgent ?? '').startsWith('k8or-engine/'))
        .map((r) => (r.userAgent ?? '').replace(/^k8or-engine\//, '')),
    );
  }

  async function syncUntil(live: string[], done: (result: ShardSyncResult) => boolean = () => true): Promise<void> {
    await waitFor(`assigner sees ${live.join(', ')}`, async () => {
      const result = await assigner.sync();
      return JSON.stringify(result.membership.live) === JSON.stringify(live) && done(result);
    }, 60_000, 200);
  }

  async function shardOf(ns: string, name: string): Promise<string | undefined> {
    return (await world.bucket(ns, name))?.metadata.labels?.[SHARD];
  }

  /** A user edit of every Bucket; resolves when each is Synced at it. Returns where each one is and who wrote it. */
  async function editAll(ns: string, names: string[], versioning: boolean): Promise<Map<string, { shard: string | undefined; writers: Set<string> }>> {
    const from = world.sandbox.requestLog.length;
    for (const name of names) await world.patchBucket(ns, name, { spec: { versioning } });
    const seen = new Map<string, { shard: string | undefined; writers: Set<string> }>();
    for (const name of names) {
      await world.waitForBucket(ns, name, `synced with versioning ${versioning}`, (b) => isReadyAndSynced(b) && b.status?.observedGeneration === b.metadata.generation);
      seen.set(name, { shard: await shardOf(ns, name), writers: writersOf(name, from) });
    }
    return seen;
  }

  /**
   * A shard `dead` holding `count` Ready Buckets, and `adopters` live beside it; then `dead` is
   * killed, and this resolves once its Lease expired (the test then acts as the leader).
   */
  async function killedWithObjects(dead: string, adopters: string[], prefix: string, count: number, options: Partial<EngineOptions> = {}) {
    const dying = await startShard(dead, options);
    const engines: Engine[] = [];
    for (const adopter of adopters) engines.push(await startShard(adopter, options));
    const ns = await world.newNamespace();
    const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
    for (const name of names) {
      await world.createBucket(ns, name, { name: `${ns}-${name}`, versioning: false });
      await world.patchBucket(ns, name, { metadata: { labels: { [SHARD]: dead } } });
    }
    for (const name of names) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
    dying.kill();
    const reader = new ShardLeaseReader({ kubeConfig: world.kubeConfig, namespace: sharding.namespace, ring: sharding.ring });
    await waitFor(`${dead} dead`, async () => {
      const membership = await reader.read();
      return !membership.live.includes(dead) && !membership.expiring.includes(dead);
    }, 30_000, 100);
    const adopterOf = (name: string): string => new HashRing(adopters).shardAt(adoptionHash({ kind: 'Bucket', namespace: ns, name }))!;
    return { ns, names, engines, reader, adopterOf };
  }

  /** Takes `dead`'s Lease naming `adopters`, and writes it again every 200 ms until the returned stop is called. */
  function holdAdoption(reader: ShardLeaseReader, dead: string, adopters: string[]): () => Promise<void> {
    let holding = true;
    const hold = (async () => {
      while (holding) {
        await reader.takeOver(dead, 'k8or-shard-assigner', adopters);
        await new Promise((resolve) => setTimeout(resolve, 200));
        await reader.read();
      }
    })();
    return async () => {
      holding = false;
      await hold;
    };
  }

  it('each object is reconciled by its shard alone, across a shard joining and a shard dying', async () => {
    await startShard('shard-a');
    await startShard('shard-b');
    const ns = await world.newNamespace();
    const names = Array.from({ length: 12 }, (_, i) => `b-${i}`);
    for (const name of names) await world.createBucket(ns, name);
    await syncUntil(['shard-a', 'shard-b']);
    for (const name of names) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
    for (const [name, { shard, writers }] of await editAll(ns, names, true)) {
      assert.deepEqual([...writers], [shard], `${name} on ${shard} was written by ${[...writers].join(', ')}`);
    }

    // A shard joins: objects move only through the drain handshake, the old shards letting go.
    const third = await startShard('shard-c');
    const before = new Map(await Promise.all(names.map(async (n) => [n, await shardOf(ns, n)] as const)));
    await syncUntil(['shard-a', 'shard-b', 'shard-c'], (r) => r.applied.some((c) => c.action === 'drain'));
    await waitFor('every drained object let go and reassigned', async () => {
      const result = await assigner.sync();
      const labels = await Promise.all(names.map((n) => shardOf(ns, n)));
      return result.applied.length === 0 && labels.every((l) => l !== undefined);
    }, 60_000, 200);
    const afterJoin = await editAll(ns, names, false);
    const movedToC = names.filter((n) => afterJoin.get(n)?.shard === 'shard-c');
    assert.ok(movedToC.length > 0, 'the new shard holds objects');
    for (const name of movedToC) assert.ok(before.get(name) === 'shard-a' || before.get(name) === 'shard-b', `${name} came from a live shard`);
    for (const [name, { shard, writers }] of afterJoin) assert.deepEqual([...writers], [shard], `${name} on ${shard} was written by ${[...writers].join(', ')}`);

    // The new shard dies without a word: once its Lease expired, the others adopt its objects, and
    // they move (at once, or let go of by their adopter).
    third.kill();
    await syncUntil(['shard-a', 'shard-b'], (r) => r.applied.length > 0);
    await waitFor('every object of the dead shard on a live one', async () => {
      const result = await assigner.sync();
      const labels = await Promise.all(names.map((n) => shardOf(ns, n)));
      return result.applied.length === 0 && labels.every((l) => l === 'shard-a' || l === 'shard-b');
    }, 60_000, 200);
    const afterDeath = await editAll(ns, names, true);
    for (const [name, { shard, writers }] of afterDeath) {
      assert.ok(shard === 'shard-a' || shard === 'shard-b', `${name} is on ${shard}`);
      assert.deepEqual([...writers], [shard], `${name} on ${shard} was written by ${[...writers].join(', ')}`);
    }
  });

  it('an object already drained when its shard starts is let go at once, not at its drift-check slot', async () => {
    // An hour's resync: an object in sync waits up to an hour for its first check after a start.
    const start = () => startShard('shard-late', { resyncPeriodMs: 3_600_000 });
    const first = await start();
    const ns = await world.newNamespace();
    const names = Array.from({ length: 4 }, (_, i) => `late-${i}`);
    for (const name of names) {
      await world.createBucket(ns, name);
      await world.patchBucket(ns, name, { metadata: { labels: { [SHARD]: 'shard-late' } } });
    }
    for (const name of names) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
    await first.stop();
    // The leader drains them while the shard is down (a restart of every replica at once does this).
    for (const name of names) await world.patchBucket(ns, name, { metadata: { labels: { [DRAIN]: 'true' } } });
    await start();
    await waitFor('every drained object let go', async () => (await Promise.all(names.map((n) => shardOf(ns, n)))).every((l) => l === undefined), 30_000, 200);
  });

  /**
   * A shard of one worker holding `held` and `other` (Ready, labelled for it), that worker waiting in
   * a cloud call of an edit of `held` (as every worker may wait on a rate limit) while `meanwhile`
   * runs; then released, and `held` synced at its edit.
   */
  async function whileTheOneWorkerWaits(shardName: string, other: string, options: Partial<EngineOptions>, meanwhile: (ns: string, shard: Engine) => Promise<void>): Promise<string> {
    const shard = await startShard(shardName, { ...options, workers: { Bucket: 1 } });
    const ns = await world.newNamespace();
    for (const name of ['held', other]) {
      await world.createBucket(ns, name, { name: `${ns}-${name}` });
      await world.patchBucket(ns, name, { metadata: { labels: { [SHARD]: shardName } } });
    }
    for (const name of ['held', other]) await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
    let release: () => void = () => {};
    const holding = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const removeHook = world.cloud.onCall(async (call) => {
      if (call.name === `${ns}-held`) {
        held = true;
        await holding;
      }
    });
    try {
      await world.patchBucket(ns, 'held', { spec: { versioning: true } });
      await waitFor('the one worker waiting in the cloud', () => held, 30_000, 50);
      await meanwhile(ns, shard);
    } finally {
      release();
      removeHook();
    }
    await world.waitForBucket(ns, 'held', 'synced at its edit', (b) => isReadyAndSynced(b) && b.status?.observedGeneration === b.metadata.generation);
    return ns;
  }

  it('lets go of a drained object while every worker waits on the cloud', async () => {
    await whileTheOneWorkerWaits('shard-busy', 'drained', {}, async (ns, shard) => {
      await world.patchBucket(ns, 'drained', { metadata: { labels: { [DRAIN]: 'true' } } });
      await waitFor('the drained object let go', async () => (await shardOf(ns, 'drained')) === undefined, 30_000, 100);
      const stillHeld = await world.bucket(ns, 'held');
      assert.notEqual(stillHeld?.status?.observedGeneration, stillHeld?.metadata.generation, 'the one worker still waits in the cloud on the edit of held');
      assert.ok((shard.controllers.get('Bucket')?.queue.inFlight() ?? 0) >= 1);
    });
  });

  it('an object that leaves a shard\'s watch queues no reconcile: back in it (from an adopted shard\'s watch into its own), it waits for its drift-check slot', async () => {
    // An hour's resync: a reconcile of `moving` can only come from its key being queued.
    let calls = 0;
    const ns = await whileTheOneWorkerWaits('shard-one', 'moving', { resyncPeriodMs: 3_600_000 }, async (ns, shard) => {
      const controller = shard.controllers.get('Bucket')!;
      // `moving` leaves the shard's watch and comes back, as an adopted object does when its
      // adopter's own watch brings it before the adopted shard's watch tells it left.
      await world.patchBucket(ns, 'moving', { metadata: { labels: { [SHARD]: 'shard-elsewhere' } } });
      await waitFor('moving out of the cache', () => controller.informer.cache.get(`${ns}/moving`) === undefined, 30_000, 50);
      await world.patchBucket(ns, 'moving', { metadata: { labels: { [SHARD]: 'shard-one' } } });
      await waitFor('moving back in the cache', () => controller.informer.cache.get(`${ns}/moving`) !== undefined, 30_000, 50);
      calls = world.cloud.callCount({ name: `${ns}-moving` });
    });
    // A bounded look for a reconcile that must not come, reading the object as a user would meanwhile.
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      await world.bucket(ns, 'moving');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(world.cloud.callCount({ name: `${ns}-moving` }), calls, 'moving was reconciled: its leaving queued it');
  });

  it('a dead shard\'s objects are worked by the shards that adopt it, each by one, before any is relabelled; and not once the adoption lapsed', async () => {
    const adopters = ['shard-y', 'shard-z'];
    const { ns, names, reader, adopterOf } = await killedWithObjects('shard-x', adopters, 'adopted', 8);
    const release = holdAdoption(reader, 'shard-x', adopters);
    try {
      const edited = await editAll(ns, names, true);
      for (const [name, { shard, writers }] of edited) {
        assert.equal(shard, 'shard-x', `${name} was relabelled`);
        assert.deepEqual([...writers], [adopterOf(name)], `${name}, adopted by ${adopterOf(name)}, was written by ${[...writers].join(', ')}`);
      }
      assert.ok(new Set([...edited.values()].map((e) => [...e.writers][0])).size === 2, 'both adopters work some');
    } finally {
      await release();
    }
    // The leader no longer writes the Lease: once its record could expire, no adopter works the objects.
    await waitFor('the adoption over', async () => ((await reader.read()).adoptions ?? []).length === 0, 30_000, 100);
    const from = world.sandbox.requestLog.length;
    await world.patchBucket(ns, names[0]!, { spec: { versioning: false } });
    // A bounded look for a write that must not come: two Lease durations, reading the object as a
    // user would meanwhile (an idle connection longer than the server keeps it would be reset).
    const until = Date.now() + 2 * sharding.leaseDurationMs;
    while (Date.now() < until) {
      assert.deepEqual([...writersOf(names[0]!, from)], [], 'an adopter worked an object after its adoption lapsed');
      await world.bucket(ns, names[0]!);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.deepEqual([...writersOf(names[0]!, from)], [], 'an adopter worked an object after its adoption lapsed');
  });

  it('an adopter that dies too: its part, relabelled for another adopter, gets its drift checks there', async () => {
    const adopters = ['shard-e', 'shard-f'];
    // Drift checks every 2 s: an object's first look on a shard schedules them.
    const { ns, names, engines, reader, adopterOf } = await killedWithObjects('shard-d', adopters, 'handed-on', 8, { resyncPeriodMs: 2_000 });
    const release = holdAdoption(reader, 'shard-d', adopters);
    try {
      const controllerOf = (name: string) => engines[adopters.indexOf(adopterOf(name))]!.controllers.get('Bucket')!;
      await waitFor('each adopter working its part', () => names.every((name) => {
        const cached = controllerOf(name).informer.cache.get(`${ns}/${name}`);
        return cached !== undefined && controllerOf(name).works(cached);
      }), 30_000, 50);
      // The first adopter dies too; the leader relabels its part for the other at once (its Lease fences the move).
      const [dies, lives] = adopters as [string, string];
      const part = names.filter((name) => adopterOf(name) === dies);
      assert.ok(part.length > 0 && part.length < names.length, 'each adopter has a part');
      engines[0]!.kill();
      for (const name of part) await world.patchBucket(ns, name, { metadata: { labels: { [SHARD]: lives } } });
      // Someone turns versioning on in the cloud: only a drift check of the new shard finds it
      // (and holds it: a protection is never lowered on k8or's own).
      const from = world.sandbox.requestLog.length;
      for (const name of part) world.cloud.buckets.get(`${ns}-${name}`)!.versioning = true;
      for (const name of part) {
        await world.waitForBucket(ns, name, `its drift found by ${lives}`, (b) => condition(b, 'Synced')?.reason === Reasons.ProtectionHeld);
        assert.deepEqual([...writersOf(name, from)], [lives], `${name} was written by ${[...writersOf(name, from)].join(', ')}`);
      }
    } finally {
      await release();
    }
  });

  it('an adoption without a newer write pauses: edits made meanwhile wait, and are worked by their adopter once the leader writes again', async () => {
    const adopters = ['shard-q', 'shard-r'];
    const { ns, names, engines, reader, adopterOf } = await killedWithObjects('shard-p', adopters, 'waiting', 6);
    assert.equal(await reader.takeOver('shard-p', 'k8or-shard-assigner', adopters), true);
    // As the leader would for a Lease of 30 s: the adopters may work for 20 s after this write,
    // and the record expires 10 s after that at the earliest, time for the test to act in between.
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${sharding.namespace}/leases/shard-p`;
    const lease = (await world.user.get<{ spec: Record<string, unknown> }>(leasePath))!;
    await world.user.update(leasePath, { ...lease, spec: { ...lease.spec, leaseDurationSeconds: 30, renewTime: new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') } });
    const controllerOf = (name: string) => engines[adopters.indexOf(adopterOf(name))]!.controllers.get('Bucket')!;
    const cached = (name: string) => controllerOf(name).informer.cache.get(`${ns}/${name}`);
    await waitFor('each adopter working its part', () => names.every((name) => cached(name) !== undefined && controllerOf(name).works(cached(name)!)), 30_000, 50);

    // No write follows: once the window has passed, each adopter pauses.
    await waitFor('the adoption paused', () => names.every((name) => !controllerOf(name).works(cached(name)!)), 60_000, 100);
    const from = world.sandbox.requestLog.length;
    const edited = new Map<string, number>();
    for (const name of names) edited.set(name, (await world.patchBucket(ns, name, { spec: { versioning: true } })).metadata.generation!);
    await waitFor('the edits in the adopters\' caches', () => names.every((name) => cached(name)?.metadata.generation === edited.get(name)), 30_000, 50);
    for (const name of names) assert.deepEqual([...writersOf(name, from)], [], `${name} worked while its adoption was paused`);

    // The leader writes again: what was queued meanwhile is worked, each object by its adopter.
    await reader.read();
    const release = holdAdoption(reader, 'shard-p', adopters);
    try {
      for (const name of names) {
        await world.waitForBucket(ns, name, 'synced at its edit', (b) => isReadyAndSynced(b) && b.status?.observedGeneration === edited.get(name));
        assert.deepEqual([...writersOf(name, from)], [adopterOf(name)]);
      }
    } finally {
      await release();
    }
  });
});
