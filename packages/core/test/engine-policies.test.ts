import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Annotations, OwnerTags, genericDefaultName } from '@k8or/api';
import { Reasons } from '@k8or/core';
import { World, condition, isReadyAndSynced } from './engine-harness.ts';

describe('engine: policies a user sets', () => {
  let world: World;

  before(async () => {
    world = await World.start();
    // The operator-wide default is Retain here, so the precedence below shows.
    await world.startEngine({ defaultDeletionPolicy: 'Retain', resyncPeriodMs: 300 });
  });
  after(async () => world?.stop());

  /** Puts a bucket in the cloud as someone else (or as k8or for `owner`) would. */
  function preexisting(name: string, tags: Record<string, string>, versioning = false): void {
    world.cloud.buckets.set(name, { name, location: 'mem-west-1', versioning, tags, labels: {}, objects: 0, createdTime: new Date().toISOString() });
  }

  describe('deletion policy precedence', () => {
    async function deleteAndCheck(ns: string, name: string, spec: Record<string, unknown>, annotations: Record<string, string>, expectDeleted: boolean): Promise<void> {
      await world.createBucket(ns, name, spec, annotations);
      const bucket = await world.waitForBucket(ns, name, 'Ready', isReadyAndSynced);
      const externalName = bucket.spec.name ?? '';
      const deletes = world.cloud.callCount({ operation: 'delete', name: externalName });
      await world.deleteBucket(ns, name);
      await world.waitForBucketGone(ns, name);
      assert.equal(world.cloud.buckets.has(externalName), !expectDeleted);
      if (!expectDeleted) assert.equal(world.cloud.callCount({ operation: 'delete', name: externalName }), deletes, 'Retain never calls delete');
    }

    it('falls back to the operator default (Retain)', async () => {
      await deleteAndCheck(await world.newNamespace(), 'kept-by-default', {}, {}, false);
    });

    it('takes the namespace annotation over the operator default', async () => {
      const ns = await world.newNamespace({ [Annotations.deletionPolicy]: 'Delete' });
      await deleteAndCheck(ns, 'deleted-by-namespace', {}, {}, true);
    });

    it('takes spec.deletionPolicy over the namespace annotation', async () => {
      const ns = await world.newNamespace({ [Annotations.deletionPolicy]: 'Delete' });
      await deleteAndCheck(ns, 'kept-by-spec', { deletionPolicy: 'Retain' }, {}, false);
    });

    it('takes the resource annotation over everything', async () => {
      const ns = await world.newNamespace({ [Annotations.deletionPolicy]: 'Retain' });
      await deleteAndCheck(ns, 'deleted-by-annotation', { deletionPolicy: 'Retain' }, { [Annotations.deletionPolicy]: 'Delete' }, true);
    });
  });

  it('blocks deleting a non-empty bucket with a clear condition until forceDelete is set', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'full', { deletionPolicy: 'Delete' });
    const bucket = await world.waitForBucket(ns, 'full', 'Ready', isReadyAndSynced);
    const externalName = bucket.spec.name ?? '';
    const cloudBucket = world.cloud.buckets.get(externalName);
    assert.ok(cloudBucket);
    cloudBucket.objects = 42;

    await world.deleteBucket(ns, 'full');
    const blocked = await world.waitForBucket(ns, 'full', 'DeletionBlocked', (b) => condition(b, 'Synced')?.reason === Reasons.DeletionBlocked);
    assert.match(condition(blocked, 'Synced')?.message ?? '', /holds 42 objects.*forceDelete/);
    assert.ok(world.cloud.buckets.has(externalName));
    const events = await world.events(ns, 'full');
    assert.ok(events.some((e) => e.type === 'Warning' && e.reason === Reasons.DeletionBlocked));

    await world.patchBucket(ns, 'full', { spec: { forceDelete: true } });
    await world.waitForBucketGone(ns, 'full');
    assert.equal(world.cloud.buckets.has(externalName), false);
  });

  it('never adopts, updates or deletes a bucket it does not own', async () => {
    const ns = await world.newNamespace();
    preexisting('someone-elses-bucket', { owner: 'finance' });
    await world.createBucket(ns, 'squatter', { name: 'someone-elses-bucket', versioning: true, deletionPolicy: 'Delete' });
    const bucket = await world.waitForBucket(ns, 'squatter', 'NotOwned', (b) => condition(b, 'Synced')?.reason === Reasons.NotOwned);
    assert.match(condition(bucket, 'Synced')?.message ?? '', /k8or\.io\/adopt/);
    await sleep(800); // a few resync periods
    assert.equal(world.cloud.callCount({ operation: 'update', name: 'someone-elses-bucket' }), 0);
    assert.equal(world.cloud.callCount({ operation: 'create', name: 'someone-elses-bucket' }), 0);
    assert.equal(world.cloud.buckets.get('someone-elses-bucket')?.versioning, false);

    await world.deleteBucket(ns, 'squatter');
    await world.waitForBucketGone(ns, 'squatter');
    assert.ok(world.cloud.buckets.has('someone-elses-bucket'), 'not ours, so not deleted');
    assert.equal(world.cloud.callCount({ operation: 'delete', name: 'someone-elses-bucket' }), 0);
  });

  it('adopts a bucket it does not own when k8or.io/adopt is "true"', async () => {
    const ns = await world.newNamespace();
    preexisting('legacy-bucket', {});
    await world.createBucket(ns, 'legacy', { name: 'legacy-bucket', versioning: true }, { [Annotations.adopt]: 'true' });
    await world.waitForBucket(ns, 'legacy', 'Ready', isReadyAndSynced);
    const cloudBucket = world.cloud.buckets.get('legacy-bucket');
    assert.equal(cloudBucket?.versioning, true);
    assert.equal(cloudBucket?.tags[OwnerTags.name], 'legacy', 'now tagged as ours');
    assert.ok((await world.events(ns, 'legacy')).some((e) => e.reason === Reasons.AdoptedExternalResource));
  });

  it('ObserveOnly reads and reports drift but never writes to the cloud', async () => {
    const ns = await world.newNamespace();
    preexisting('imported-bucket', {}, false);
    await world.createBucket(ns, 'imported', { name: 'imported-bucket', versioning: true, managementPolicy: 'ObserveOnly', deletionPolicy: 'Delete' });
    const drifted = await world.waitForBucket(ns, 'imported', 'DriftDetected', (b) => condition(b, 'Synced')?.reason === Reasons.DriftDetected);
    assert.equal(condition(drifted, 'Ready')?.status, 'True');
    assert.match(condition(drifted, 'Synced')?.message ?? '', /spec\.versioning \(wanted true, found false\)/);
    assert.ok((await world.events(ns, 'imported')).some((e) => e.type === 'Warning' && e.reason === Reasons.DriftDetected));
    // Readable with kubectl get -o yaml, not only in Events: status.drift, through the CRD's schema.
    assert.deepEqual(drifted.status?.drift, [{ field: 'spec.versioning', desired: true, actual: false }]);
    const cloudBucket = world.cloud.buckets.get('imported-bucket');
    assert.ok(cloudBucket);
    cloudBucket.versioning = true;
    const matched = await world.waitForBucket(ns, 'imported', 'Observed once the cloud matches', (b) => condition(b, 'Synced')?.reason === Reasons.Observed);
    assert.equal(matched.status?.drift, undefined, 'no drift, no list');

    await world.createBucket(ns, 'imagined', { managementPolicy: 'ObserveOnly' });
    const missing = await world.waitForBucket(ns, 'imagined', 'not found', (b) => condition(b, 'Ready')?.reason === Reasons.ExternalResourceNotFound);
    assert.equal(world.cloud.buckets.has(missing.spec.name ?? ''), false);

    await world.deleteBucket(ns, 'imported');
    await world.waitForBucketGone(ns, 'imported');
    assert.ok(world.cloud.buckets.has('imported-bucket'));
    for (const operation of ['create', 'update', 'delete'] as const) {
      assert.equal(world.cloud.callCount({ operation, name: 'imported-bucket' }), 0, operation);
      assert.equal(world.cloud.callCount({ operation, name: missing.spec.name ?? '' }), 0, operation);
    }
  });

  it('stops reconciling a paused resource, with one Paused condition, and resumes when unpaused', async () => {
    const ns = await world.newNamespace();
    const externalName = genericDefaultName({ clusterId: 'test-cluster', namespace: ns, name: 'frozen' });
    await world.createBucket(ns, 'frozen', {}, { [Annotations.paused]: 'true' });
    const paused = await world.waitForBucket(ns, 'frozen', 'Paused', (b) => condition(b, 'Synced')?.reason === Reasons.Paused);
    const from = world.sandbox.requestLog.length;
    await sleep(800);
    assert.deepEqual(world.engineWrites(from), [], 'the Paused condition is written once');
    assert.equal(world.cloud.callCount({ name: externalName }), 0);
    assert.equal((await world.bucket(ns, 'frozen'))?.metadata.resourceVersion, paused.metadata.resourceVersion);

    await world.patchBucket(ns, 'frozen', { metadata: { annotations: { [Annotations.paused]: null } } });
    await world.waitForBucket(ns, 'frozen', 'Ready after unpausing', isReadyAndSynced);
    assert.ok(world.cloud.buckets.has(externalName));
  });

  it('says so when no provider package serves the ProviderConfig\'s cloud', async () => {
    await world.createProviderConfig('on-gcp', { provider: 'gcp', project: 'my-project' });
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'elsewhere', { providerConfigRef: { name: 'on-gcp' } });
    const bucket = await world.waitForBucket(ns, 'elsewhere', 'ProviderNotInstalled', (b) => condition(b, 'Synced')?.reason === Reasons.ProviderNotInstalled);
    assert.match(condition(bucket, 'Synced')?.message ?? '', /"gcp"/);
    assert.equal(bucket.metadata.finalizers, undefined, 'nothing was done, so nothing holds the object');
  });

});
