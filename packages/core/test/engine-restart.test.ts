// A restart costs no cloud calls for resources in sync: each waits for its drift-check slot,
// which its uid fixes, so the schedule is the one the stopped engine would have kept. Cloud calls
// are counted at the in-memory cloud, API writes at the sandbox API server.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { nextCheckAt } from '@k8or/core';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine restart: resources in sync cost no cloud calls', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  it('reads and writes nothing for objects in sync, and reconciles at once an edited spec and a reconcile request', async () => {
    const ns = await world.newNamespace();
    const names = ['photos', 'logs', 'backups', 'media', 'reports', 'edited', 'requested'];
    const first = await world.startEngine();
    for (const name of names) await world.createBucket(ns, name, { versioning: true, labels: { team: 'a' } });
    const externalNames = new Map<string, string>();
    for (const name of names) externalNames.set(name, (await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced)).spec.name ?? '');
    // The engine's own writes come back as watch events; let those reconciles finish first.
    await first.stop();

    // While no operator runs, the user edits one spec and asks for a reconcile of another.
    await world.patchBucket(ns, 'edited', { spec: { labels: { team: 'b' } } });
    await world.patchBucket(ns, 'requested', { metadata: { annotations: { [Annotations.reconcileRequestedAt]: '2026-11-27T18:00:00Z' } } });

    const since = Date.now();
    const second = await world.startEngine({ resyncPeriodMs: 3_600_000 });
    await world.waitForBucket(ns, 'edited', 'the new generation applied', isReadyAndSynced);
    await world.waitForBucket(ns, 'requested', 'the request handled', (b) => b.status?.lastHandledReconcileAt === '2026-11-27T18:00:00Z');
    const queue = bucketController(world).queue;
    await waitFor('no reconcile due', () => queue.len() === 0);

    const called = new Set(world.cloud.calls.filter((c) => c.at >= since).map((c) => c.name));
    assert.deepEqual([...called].sort(), [externalNames.get('edited'), externalNames.get('requested')].sort(), 'only the edited and the requested Bucket reached the cloud');
    assert.deepEqual(world.cloud.calls.filter((c) => c.at >= since && c.name === externalNames.get('edited')).map((c) => c.operation), ['observe', 'update', 'observe']);
    assert.deepEqual(world.cloud.calls.filter((c) => c.at >= since && c.name === externalNames.get('requested')).map((c) => c.operation), ['observe']);
    assert.deepEqual(world.cloud.buckets.get(externalNames.get('edited') ?? '')?.labels, { team: 'b' });
    for (const name of names) assert.ok(isReadyAndSynced(await world.bucket(ns, name)), `${name} still Ready and Synced`);
    // Left running, it would work the next test's objects beside that test's engine, and its calls
    // (a retry after two engines' writes collided) would count as that engine's.
    await second.stop();
    world.engines.splice(world.engines.indexOf(second), 1);
  });

  it('checks an object in sync first at its slot after a restart, as if the operator had never stopped', async () => {
    const ns = await world.newNamespace();
    const names = ['north', 'south', 'east', 'west'];
    const periodMs = 12_000;
    const first = await world.startEngine({ resyncPeriodMs: periodMs });
    for (const name of names) await world.createBucket(ns, name);
    const uids = new Map<string, string>();
    for (const name of names) {
      const bucket = await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
      uids.set(bucket.spec.name ?? '', bucket.metadata.uid ?? '');
    }
    await first.stop();

    const restartedAt = Date.now();
    await world.startEngine({ resyncPeriodMs: periodMs });
    // The engine scheduled its objects between these two instants.
    const startedAt = Date.now();
    await waitFor('every Bucket checked once after the restart', () => [...uids.keys()].every((name) => world.cloud.calls.some((c) => c.at >= restartedAt && c.name === name)));
    for (const [name, uid] of uids) {
      const firstCall = world.cloud.calls.find((c) => c.at >= restartedAt && c.name === name);
      const slot = nextCheckAt(uid, periodMs, restartedAt);
      const slots = slot <= startedAt ? [slot, slot + periodMs] : [slot];
      // Never before its slot; after it only by the time a timer and a worker take on a busy machine.
      const onSlot = slots.some((s) => firstCall !== undefined && firstCall.at >= s - 5 && firstCall.at <= s + 1_500);
      assert.ok(onSlot, `${name}: first checked at +${(firstCall?.at ?? 0) - restartedAt} ms, its slot at +${slots.map((s) => s - restartedAt).join(' or +')} ms`);
      assert.equal(firstCall?.operation, 'observe');
    }
  });
});

function bucketController(world: World) {
  const controller = world.engines.at(-1)?.controllers.get('Bucket');
  if (!controller) throw new Error('the engine runs no Bucket controller');
  return controller;
}
