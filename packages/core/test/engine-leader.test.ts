import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { corePath, type Engine } from '@k8or/core';
import { inMemoryProviderPlugin, type CloudCall } from '@k8or/core/testing';
import type { ProviderPlugin } from '@k8or/core';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: leader election between two instances', () => {
  let world: World;

  before(async () => {
    world = await World.start();
    await world.user.create(corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'k8or-system' } });
  });
  after(async () => world?.stop());

  const election = { namespace: 'k8or-system', leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 };

  /** Identities of engines that wrote to Buckets since `from`. */
  function writers(from: number): Set<string> {
    return new Set(
      world
        .engineRequests(from)
        .filter((r) => r.resource === 'buckets' && ['create', 'update', 'patch', 'delete'].includes(r.verb))
        .map((r) => (r.userAgent ?? '').replace(/^k8or-engine\//, '')),
    );
  }

  it('only the leader reconciles; the standby takes over when the leader stops, and again when a leader dies', async () => {
    const first = await world.startEngine({ identity: 'engine-a', leaderElection: election });
    const second = await world.startEngine({ identity: 'engine-b', leaderElection: election });
    const leader = await waitFor('a leader', () => [first, second].find((e) => e.isLeader()));
    const standby: Engine = leader === first ? second : first;
    assert.equal(standby.isActive(), false, 'the standby runs no controllers');

    const ns = await world.newNamespace();
    let from = world.sandbox.requestLog.length;
    await world.createBucket(ns, 'led');
    await world.waitForBucket(ns, 'led', 'Ready', isReadyAndSynced);
    assert.deepEqual([...writers(from)], [leader.identity]);

    await leader.stop(); // releases the Lease
    await waitFor('the standby leads', () => standby.isLeader() && standby.isActive());
    from = world.sandbox.requestLog.length;
    await world.createBucket(ns, 'after-handover');
    await world.waitForBucket(ns, 'after-handover', 'Ready', isReadyAndSynced);
    assert.deepEqual([...writers(from)], [standby.identity]);

    // A third instance stands by; the leader now dies without releasing the Lease.
    const third = await world.startEngine({ identity: 'engine-c', leaderElection: election });
    standby.kill();
    await waitFor('the third leads once the Lease expires', () => third.isLeader() && third.isActive());
    from = world.sandbox.requestLog.length;
    await world.createBucket(ns, 'after-crash');
    await world.waitForBucket(ns, 'after-crash', 'Ready', isReadyAndSynced);
    assert.deepEqual([...writers(from)], [third.identity]);
    assert.equal(world.cloud.buckets.size, 3);
  });

  it('a leader that loses its Lease while a slow cloud call is in flight aborts it: no cloud write after the new leader starts', async () => {
    const lease = '/apis/coordination.k8s.io/v1/namespaces/k8or-system/leases/slow-lease';
    const slowElection = { ...election, name: 'slow-lease' };
    // Only the two instances of this story reconcile.
    for (const engine of world.engines) await engine.stop();
    const mine = (caller: string) => ({ providers: new Map([['aws', inMemoryProviderPlugin(world.cloud, { caller })]]) });
    const old = await world.startEngine({ identity: 'engine-old', leaderElection: slowElection, ...mine('engine-old') });
    await waitFor('engine-old leads', () => old.isLeader() && old.isActive());
    const next = await world.startEngine({ identity: 'engine-new', leaderElection: slowElection, ...mine('engine-new') });

    const ns = await world.newNamespace();
    await world.createBucket(ns, 'slow');
    const ready = await world.waitForBucket(ns, 'slow', 'Ready', isReadyAndSynced);
    const externalName = ready.spec.name ?? '';

    // The old leader's next write to this bucket hangs in the cloud (a slow call) until its signal aborts; 30 s at most.
    let held: { call: CloudCall; released?: 'aborted' | 'timed out' } | undefined;
    const removeHook = world.cloud.onCall(async (call, signal) => {
      if (call.caller !== 'engine-old' || call.operation !== 'update' || call.name !== externalName || held) return;
      held = { call };
      const current = held;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          current.released = 'timed out';
          resolve();
        }, 30_000);
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          current.released = 'aborted';
          resolve();
        });
      });
    });
    try {
      await world.patchBucket(ns, 'slow', { spec: { versioning: true } });
      await waitFor('the old leader is inside a slow update', () => held);

      // Its renewals now fail: the Lease names the other instance, fresh (as if the old leader's renewals had not reached the API server).
      const current = (await world.user.get<{ spec: Record<string, unknown> }>(lease)) ?? { spec: {} };
      await world.user.update(lease, { ...current, spec: { ...current.spec, holderIdentity: 'engine-new', renewTime: new Date().toISOString().replace('Z', '000Z'), leaseTransitions: 1 } });
      await waitFor('the new leader runs', () => next.isLeader() && next.isActive());
      const newLeaderStarted = Date.now();

      await waitFor('the old leader lets go of its slow call', () => held?.released, 40_000);
      assert.equal(held?.released, 'aborted', "the lost Lease aborted the old leader's call");
      assert.equal(held?.call.outcome, 'error', 'and the call failed before it wrote');
      await waitFor('the new leader repairs the bucket', () => world.cloud.buckets.get(externalName)?.versioning === true);
      const oldWrites = world.cloud.calls.filter((c) => c.caller === 'engine-old' && c.operation !== 'observe' && c.outcome === 'ok' && c.at >= newLeaderStarted);
      assert.deepEqual(oldWrites, [], 'no cloud write from the old leader once the new one runs');
      assert.ok(
        world.cloud.calls.some((c) => c.caller === 'engine-new' && c.operation === 'update' && c.name === externalName && c.outcome === 'ok'),
        'the write was made by the new leader',
      );
      assert.equal(old.isActive(), false, 'the old leader runs nothing');
    } finally {
      removeHook();
    }
  });
  it('a Lease lost and regained while the first run still unwinds: the second run waits, never two runs at work', async () => {
    const lease = '/apis/coordination.k8s.io/v1/namespaces/k8or-system/leases/drain-lease';
    // A short Lease, so that it can be won back well within the bound a stop waits for aborted reconciles (5 s).
    const drainElection = { namespace: 'k8or-system', name: 'drain-lease', leaseDurationMs: 1_000, renewDeadlineMs: 700, retryPeriodMs: 200 };
    for (const engine of world.engines) await engine.stop();
    // One worker per run: two reconciles at work at once means two runs at work at once.
    let active = 0;
    let maxActive = 0;
    const inner = inMemoryProviderPlugin(world.cloud, { caller: 'engine-drain' });
    const bucketConnector = inner.connectors.Bucket;
    assert.ok(bucketConnector);
    const counted = <T>(work: () => Promise<T>) => async (): Promise<T> => {
      maxActive = Math.max(maxActive, ++active);
      try {
        return await work();
      } finally {
        active--;
      }
    };
    const plugin: ProviderPlugin = {
      ...inner,
      connectors: {
        Bucket: {
          connect: async (resource, context) => {
            const client = await bucketConnector.connect(resource, context);
            return {
              observe: (r, call) => counted(() => client.observe(r, call))(),
              create: (r, call) => counted(() => client.create(r, call))(),
              update: (r, observation, call) => counted(() => client.update(r, observation, call))(),
              delete: (r, call) => counted(() => client.delete(r, call))(),
            };
          },
        },
      },
    };
    const engine = await world.startEngine({ identity: 'engine-drain', leaderElection: drainElection, kinds: ['Bucket'], workers: 1, providers: new Map([['aws', plugin]]) });
    await waitFor('engine-drain leads', () => engine.isLeader() && engine.isActive());
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'unwinding');
    const externalName = (await world.waitForBucket(ns, 'unwinding', 'Ready', isReadyAndSynced)).spec.name ?? '';

    // Its next update hangs, and keeps hanging after the abort (a provider slow to unwind) until the test lets go.
    let held: { aborted: boolean; endedAt?: number } | undefined;
    let letGo: () => void = () => {};
    const unwound = new Promise<void>((resolve) => (letGo = resolve));
    const removeHook = world.cloud.onCall(async (call, signal) => {
      if (call.operation !== 'update' || call.name !== externalName || held) return;
      const current: { aborted: boolean; endedAt?: number } = { aborted: false };
      held = current;
      signal?.addEventListener('abort', () => (current.aborted = true));
      await unwound;
      current.endedAt = Date.now();
    });
    try {
      await world.patchBucket(ns, 'unwinding', { spec: { versioning: true } });
      await waitFor('the first run is inside a slow update', () => held);
      // Someone else holds the Lease, and its hold runs out at once: the engine loses it, then can win it back.
      // The engine renews every 200 ms: a write from a read it renewed since is refused (409); waitFor reads and writes again.
      await waitFor('someone else holds the Lease', async () => {
        const current = (await world.user.get<{ spec: Record<string, unknown> }>(lease)) ?? { spec: {} };
        const renewTime = new Date().toISOString().replace('Z', '000Z');
        await world.user.update(lease, { ...current, spec: { ...current.spec, holderIdentity: 'someone-else', renewTime, leaseTransitions: 1 } });
        return true;
      });
      await waitFor('the lost Lease aborts the first run', () => held?.aborted);
      const abortedAt = Date.now();
      assert.equal(engine.isActive(), false, 'the first run stopped leading');
      // Work for a second run, while the first one still unwinds.
      await world.createBucket(ns, 'meanwhile');
      // Long enough for the Lease to be won back (twice its duration), yet within the 5 s bound on unwinding.
      await waitFor('the Lease could be won back', () => Date.now() > abortedAt + 3 * drainElection.leaseDurationMs);
      assert.equal(maxActive, 1, 'no second run at work while the first one unwinds');
      letGo();
      await waitFor('engine-drain leads again', () => engine.isLeader() && engine.isActive(), 30_000);
      await world.waitForBucket(ns, 'meanwhile', 'Ready', isReadyAndSynced);
      await waitFor('the update is made again', () => world.cloud.buckets.get(externalName)?.versioning === true);
      assert.equal(maxActive, 1, 'at most one run has a worker at work at any time');
      const meanwhile = (await world.bucket(ns, 'meanwhile'))?.spec.name ?? '';
      const firstCallForMeanwhile = world.cloud.calls.find((c) => c.name === meanwhile);
      assert.ok(firstCallForMeanwhile && held?.endedAt !== undefined && firstCallForMeanwhile.at >= held.endedAt, 'the second run began after the first one unwound');
    } finally {
      letGo();
      removeHook();
    }
  });
});
