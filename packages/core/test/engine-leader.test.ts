import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { corePath, type Engine } from '@k8or/core';
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
});
