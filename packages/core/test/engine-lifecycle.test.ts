import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Annotations, FINALIZER, OwnerTags } from '@k8or/api';
import { Reasons, type Engine } from '@k8or/core';
import { World, condition, isReadyAndSynced, waitFor } from './engine-harness.ts';

describe('engine: a Bucket from apply to delete', () => {
  let world: World;
  let engine: Engine;

  before(async () => {
    world = await World.start();
    // A short resync so drift checks happen within the test.
    engine = await world.startEngine({ resyncPeriodMs: 400 });
  });
  after(async () => world?.stop());

  it('creates the cloud bucket, tags it as ours and reports Ready and Synced', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'photos', { versioning: true, labels: { team: 'media' } });

    const bucket = await world.waitForBucket(ns, 'photos', 'Ready', isReadyAndSynced);
    const externalName = bucket.spec.name;
    assert.ok(externalName, 'the external name is persisted in spec.name');
    assert.equal(bucket.metadata.annotations?.[Annotations.externalName], externalName);
    assert.ok(bucket.metadata.annotations?.[Annotations.createPending]);
    assert.ok(bucket.metadata.annotations?.[Annotations.createSucceeded]);
    assert.deepEqual(bucket.metadata.finalizers, [FINALIZER]);
    assert.equal(bucket.status?.provider, 'aws');
    assert.equal(bucket.status?.atProvider?.location, 'mem-west-1', 'location comes from the ProviderConfig region');
    assert.equal(bucket.status?.atProvider?.id, `arn:mem:s3:::${externalName}`);
    assert.equal(condition(bucket, 'Ready')?.reason, Reasons.Available);
    assert.equal(condition(bucket, 'Synced')?.reason, Reasons.ReconcileSuccess);
    assert.equal(condition(bucket, 'Synced')?.observedGeneration, bucket.metadata.generation);

    const cloudBucket = world.cloud.buckets.get(externalName);
    assert.ok(cloudBucket);
    assert.equal(cloudBucket.versioning, true);
    assert.deepEqual(cloudBucket.labels, { team: 'media' });
    assert.equal(cloudBucket.tags[OwnerTags.managedBy], 'k8or');
    assert.equal(cloudBucket.tags[OwnerTags.cluster], 'test-cluster');
    assert.equal(cloudBucket.tags[OwnerTags.namespace], ns);
    assert.equal(cloudBucket.tags[OwnerTags.name], 'photos');
    assert.equal(cloudBucket.tags[OwnerTags.kind], 'Bucket');
    assert.equal(world.cloud.callCount({ operation: 'create' }), 1);

    const events = await world.events(ns, 'photos');
    assert.ok(events.some((e) => e.reason === Reasons.CreatedExternalResource && e.type === 'Normal' && e.message.includes(externalName)));
  });

  it('applies a spec change and moves observedGeneration', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'logs', { versioning: false });
    const created = await world.waitForBucket(ns, 'logs', 'Ready', isReadyAndSynced);
    const readySince = condition(created, 'Ready')?.lastTransitionTime;

    await world.patchBucket(ns, 'logs', { spec: { versioning: true } });
    const generation = (created.metadata.generation ?? 0) + 1;
    const updated = await world.waitForBucket(ns, 'logs', 'the new generation observed', (b) => b.metadata.generation === generation && isReadyAndSynced(b));
    assert.equal(updated.status?.observedGeneration, generation);
    assert.equal(world.cloud.buckets.get(updated.spec.name ?? '')?.versioning, true);
    assert.equal(condition(updated, 'Ready')?.lastTransitionTime, readySince, 'Ready stayed True, so its transition time stays');
    const events = await world.events(ns, 'logs');
    assert.ok(events.some((e) => e.reason === Reasons.UpdatedExternalResource && e.message.includes('spec.versioning')));
  });

  it('repairs drift found by a resync and names the drifted field in an Event', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'assets', { versioning: true });
    const bucket = await world.waitForBucket(ns, 'assets', 'Ready', isReadyAndSynced);
    const cloudBucket = world.cloud.buckets.get(bucket.spec.name ?? '');
    assert.ok(cloudBucket);

    cloudBucket.versioning = false; // someone turned it off in the cloud console
    await waitFor('drift repaired', () => cloudBucket.versioning === true);
    const event = await waitFor('a RepairedDrift event', async () => (await world.events(ns, 'assets')).find((e) => e.reason === Reasons.RepairedDrift));
    assert.equal(event.type, 'Warning');
    assert.match(event.message, /spec\.versioning: false -> true/);
  });

  it('writes at most 4 times to create a resource, and nothing on a no-op resync', async () => {
    const ns = await world.newNamespace();
    const from = world.sandbox.requestLog.length;
    await world.createBucket(ns, 'counted');
    const bucket = await world.waitForBucket(ns, 'counted', 'Ready', isReadyAndSynced);
    // Let the reconciles triggered by the engine's own writes settle.
    const observes = world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' });
    await waitFor('a resync after creation', () => world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' }) >= observes + 2);
    const writes = world.engineWrites(from);
    const resourceWrites = writes.filter((w) => !w.startsWith('create events'));
    const eventWrites = writes.filter((w) => w.startsWith('create events') || w.startsWith('patch events'));
    // finalizer and markers, the record of what the create applies, create-succeeded, the status
    assert.ok(resourceWrites.length <= 4, `writes to the resource: ${JSON.stringify(resourceWrites)}`);
    assert.equal(eventWrites.length, 1, `one CreatedExternalResource event: ${JSON.stringify(eventWrites)}`);

    // Resyncs against an unchanged cloud write nothing at all.
    const quiet = world.sandbox.requestLog.length;
    const before = world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' });
    await waitFor('three more resyncs', () => world.cloud.callCount({ operation: 'observe', name: bucket.spec.name ?? '' }) >= before + 3);
    assert.deepEqual(world.engineWrites(quiet), []);
    const after = await world.bucket(ns, 'counted');
    assert.equal(after?.metadata.resourceVersion, bucket.metadata.resourceVersion);
  });

  it('keeps the outputs ConfigMap filled and owned by the resource, and removes it on delete', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'uploads', { writeOutputsTo: { name: 'uploads-bucket' } });
    const bucket = await world.waitForBucket(ns, 'uploads', 'Ready', isReadyAndSynced);
    const configMap = await waitFor('outputs ConfigMap', () => world.configMap(ns, 'uploads-bucket'));
    assert.deepEqual(configMap.data, {
      externalName: bucket.spec.name,
      provider: 'aws',
      location: 'mem-west-1',
      url: `https://${bucket.spec.name}.storage.mem.test`,
      id: `arn:mem:s3:::${bucket.spec.name}`,
    });
    const owner = configMap.metadata.ownerReferences?.[0];
    assert.equal(owner?.kind, 'Bucket');
    assert.equal(owner?.uid, bucket.metadata.uid);
    assert.equal(owner?.controller, true);

    await world.deleteBucket(ns, 'uploads');
    await world.waitForBucketGone(ns, 'uploads');
    assert.equal(await world.configMap(ns, 'uploads-bucket'), undefined);
  });

  it('deletes the cloud bucket before letting the object go', async () => {
    const ns = await world.newNamespace();
    await world.createBucket(ns, 'scratch');
    const bucket = await world.waitForBucket(ns, 'scratch', 'Ready', isReadyAndSynced);
    const externalName = bucket.spec.name ?? '';
    assert.ok(world.cloud.buckets.has(externalName));

    await world.deleteBucket(ns, 'scratch');
    await world.waitForBucketGone(ns, 'scratch');
    assert.equal(world.cloud.buckets.has(externalName), false);
    const events = await world.events(ns, 'scratch');
    assert.ok(events.some((e) => e.reason === Reasons.DeletedExternalResource));
  });

  it('creates a Table and waits for it to become ACTIVE', async () => {
    const ns = await world.newNamespace();
    await world.createTable(ns, 'orders', { billing: { mode: 'onDemand' } });
    const table = await waitFor('table Ready', async () => {
      const t = await world.table(ns, 'orders');
      return t && isReadyAndSynced(t) ? t : undefined;
    });
    assert.equal(table.status?.atProvider?.state, 'ACTIVE');
    assert.equal(world.cloud.tables.get(table.spec.name ?? '')?.partitionKey.name, 'id');
    assert.ok(engine.isActive());
  });
});
