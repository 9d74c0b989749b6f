import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations } from '@k8or/api';
import { Reasons, type Engine } from '@k8or/core';
import { type CrashPoint } from '@k8or/core/testing';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: a worker killed mid-create', () => {
  let world: World;

  before(async () => {
    world = await World.start();
  });
  after(async () => world?.stop());

  /**
   * Kills the engine at `point` of the first create, starts a fresh engine on
   * the same API server and cloud, and checks that exactly one cloud bucket
   * results, and none after the object is deleted.
   */
  async function crashAndRecover(point: CrashPoint, objectName: string): Promise<void> {
    const ns = await world.newNamespace();
    const running: { engine?: Engine } = {};
    let crashed = false;
    world.cloud.crashAt(point, () => {
      running.engine?.kill();
      crashed = true;
    });
    running.engine = await world.startEngine();
    await world.createBucket(ns, objectName);
    await waitFor(`the crash at ${point}`, () => crashed);

    const stranded = await world.bucket(ns, objectName);
    const externalName = stranded?.spec.name ?? '';
    assert.ok(externalName, 'the external name was persisted before the create call');
    assert.ok(stranded?.metadata.annotations?.[Annotations.createPending], 'create-pending was written before the create call');
    assert.equal(stranded?.metadata.annotations?.[Annotations.createSucceeded], undefined, 'the worker died before create-succeeded');
    assert.equal(world.cloud.buckets.has(externalName), point === 'after-create');

    await world.startEngine();
    const recovered = await world.waitForBucket(ns, objectName, 'Ready after restart', isReadyAndSynced);
    assert.equal(recovered.spec.name, externalName);
    assert.ok(recovered.metadata.annotations?.[Annotations.createSucceeded]);
    const ours = [...world.cloud.buckets.keys()].filter((name) => name === externalName);
    assert.deepEqual(ours, [externalName], 'exactly one cloud bucket');
    const creates = world.cloud.calls.filter((c) => c.operation === 'create' && c.name === externalName);
    assert.equal(creates.filter((c) => c.outcome === 'ok').length, point === 'before-create' ? 1 : 0, 'a bucket made before the crash is taken over, not made again');
    if (point === 'after-create') {
      const events = await world.events(ns, objectName);
      assert.ok(events.some((e) => e.reason === Reasons.RecoveredExternalResource));
    }

    await world.deleteBucket(ns, objectName);
    await world.waitForBucketGone(ns, objectName);
    assert.equal(world.cloud.buckets.has(externalName), false, 'deleting leaves no cloud bucket');
    await Promise.all(world.engines.splice(0).map((engine) => engine.stop()));
  }

  it('between create-pending and the create call: the restarted engine creates exactly one bucket', async () => {
    await crashAndRecover('before-create', 'crash-before');
  });

  it('between the create call and the status write: the restarted engine takes the bucket over by its owner tags', async () => {
    await crashAndRecover('after-create', 'crash-after');
  });
});
