// Drift policy (spec.driftPolicy): what a resync does with a setting changed in the cloud behind
// k8or's back (Repair, Report, Hold and its approval), through the reconcile algorithm over the
// in-memory provider and the in-memory API ports.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, ConditionTypes, type Bucket, type DriftPolicy, type ManagedKindName, type ManagedResource, type ProviderConfig, type Table } from '@k8or/api';
import { ManagedReconciler, Reasons, delayAfterCheck, driftDigest, driftModeFor } from '@k8or/core';
import { InMemoryCloud, InMemoryEvents, InMemoryLookups, InMemoryObjects, inMemoryProviderPlugin, noOutputs } from '@k8or/core/testing';

/** A fixed clock: the next drift check's slot is then a known delay. */
const NOW = Date.parse('2026-11-27T12:00:00Z');
const NS = 'media';

function providerConfig(): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } };
}

function bucket(name: string, spec: Bucket['spec'] = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: NS }, spec: { deletionPolicy: 'Delete', ...spec } };
}

function table(name: string, spec: Partial<Table['spec']> = {}): Table {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace: NS }, spec: { deletionPolicy: 'Delete', partitionKey: { name: 'id', type: 'string' }, ...spec } };
}

function world(kind: ManagedKindName = 'Bucket') {
  const cloud = new InMemoryCloud();
  const objects = new InMemoryObjects();
  const lookups = new InMemoryLookups();
  const events = new InMemoryEvents();
  lookups.providerConfigs.set('default', providerConfig());
  const reconciler = new ManagedReconciler(
    kind,
    { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs: noOutputs },
    { clusterId: 'c1', pollIntervalMs: 2_000, now: () => new Date(NOW) },
  );
  const reconcile = async (name: string) => await reconciler.reconcile({ namespace: NS, name });
  const object = (name: string): ManagedResource | undefined => objects.peek(kind, NS, name);
  const synced = (name: string) => object(name)?.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
  const annotate = (name: string, key: string, value: string) =>
    objects.editMetadata(kind, NS, name, (metadata) => {
      metadata.annotations = { ...metadata.annotations, [key]: value };
    });
  return { cloud, objects, events, reconcile, object, synced, annotate };
}

/** A bucket in sync with the spec, then its labels changed in the cloud by hand. */
async function driftedBucket(policy: DriftPolicy | undefined, labels: Record<string, string> = { team: 'ops' }) {
  const w = world();
  w.objects.put(bucket('photos', { name: 'photos-drift', labels: { team: 'media' }, ...(policy ? { driftPolicy: policy } : {}) }));
  await w.reconcile('photos');
  assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
  const found = w.cloud.buckets.get('photos-drift');
  assert.ok(found);
  found.labels = labels;
  return { ...w, updatesBefore: w.cloud.callCount({ operation: 'update' }) };
}

describe('drift policy modes', () => {
  it('Repair (the default) writes the spec back and says so', async () => {
    const w = await driftedBucket(undefined);
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'media' });
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.object('photos')?.status?.driftCount, 0);
    assert.ok(w.events.about('photos').some((e) => e.reason === Reasons.RepairedDrift));
  });

  it('Report shows the drift in status, the count and a Warning Event, and never writes it', async () => {
    const w = await driftedBucket({ default: 'Report' });
    const outcome = await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops' }, 'never written');
    assert.equal(w.cloud.callCount({ operation: 'update' }), w.updatesBefore, 'no update call');
    assert.equal(w.synced('photos')?.reason, Reasons.DriftReported);
    assert.deepEqual(w.object('photos')?.status?.drift, [{ field: 'spec.labels', desired: { team: 'media' }, actual: { team: 'ops' }, mode: 'Report' }]);
    assert.equal(w.object('photos')?.status?.driftCount, 1);
    assert.equal(w.object('photos')?.status?.heldDriftDigest, undefined);
    const event = w.events.about('photos').find((e) => e.reason === Reasons.DriftReported);
    assert.equal(event?.type, 'Warning');
    assert.match(event?.message ?? '', /spec\.labels/);
    assert.equal(outcome.requeueAfterMs, delayAfterCheck(w.object('photos')?.metadata.uid ?? '', 3_600_000, NOW), 'looked at again at its slot of the resync, not polled');
  });

  it('a per-field mode overrides the default; the longest path wins', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-fields', labels: { team: 'a' }, pointInTimeRecovery: false, driftPolicy: { default: 'Report', fields: [{ path: 'spec.labels', mode: 'Repair' }] } }));
    await w.reconcile('orders');
    const found = w.cloud.tables.get('orders-fields');
    assert.ok(found);
    found.labels = {};
    found.pointInTimeRecovery = true;
    await w.reconcile('orders');
    assert.deepEqual(w.cloud.tables.get('orders-fields')?.labels, { team: 'a' }, 'labels repaired (their own entry)');
    assert.equal(w.cloud.tables.get('orders-fields')?.pointInTimeRecovery, true, 'the rest only reported (the default)');
    assert.equal(w.synced('orders')?.reason, Reasons.DriftReported);
    assert.deepEqual(
      w.object('orders')?.status?.drift?.map((d) => [d.field, d.mode]),
      [['spec.pointInTimeRecovery', 'Report']],
    );
    assert.equal(driftModeFor({ default: 'Hold', fields: [{ path: 'spec', mode: 'Report' }, { path: 'spec.labels', mode: 'Repair' }] }, 'spec.labels.team'), 'Repair');
    assert.equal(driftModeFor({ fields: [{ path: 'spec.label', mode: 'Hold' }] }, 'spec.labels'), 'Repair', 'a path covers whole segments only');
  });

  it('a change of spec.driftPolicy alone is no request to apply the spec: the drift stays under the policy', async () => {
    const w = await driftedBucket({ default: 'Report' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.DriftReported);
    w.objects.editSpec('Bucket', NS, 'photos', (spec) => {
      spec.driftPolicy = { default: 'Hold' };
    });
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops' }, 'not repaired by the policy edit');
    assert.equal(w.synced('photos')?.reason, Reasons.DriftHeld);
    assert.equal(w.object('photos')?.status?.observedGeneration, w.object('photos')?.metadata.generation);
  });

  it('a new generation is applied whatever the mode: the user asked for the spec', async () => {
    const w = await driftedBucket({ default: 'Hold' });
    w.objects.editSpec('Bucket', NS, 'photos', (spec) => {
      spec.labels = { team: 'web' };
    });
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'web' });
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
  });
});

describe('Hold and its approval', () => {
  it('holds the drift with a condition and a digest; repairs exactly that drift once approved, then drops the approval', async () => {
    const w = await driftedBucket({ default: 'Hold' });
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops' }, 'held: not written');
    assert.equal(w.cloud.callCount({ operation: 'update' }), w.updatesBefore);
    assert.equal(w.synced('photos')?.reason, Reasons.DriftHeld);
    const digest = w.object('photos')?.status?.heldDriftDigest;
    assert.ok(digest, 'the digest to approve is in status');
    assert.match(w.synced('photos')?.message ?? '', /k8or approve bucket\/photos/);
    assert.deepEqual(w.object('photos')?.status?.drift?.map((d) => d.mode), ['Hold']);

    // A wrong digest approves nothing.
    w.annotate('photos', Annotations.approveDrift, 'not-the-digest');
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops' });
    assert.equal(w.synced('photos')?.reason, Reasons.DriftHeld);

    w.annotate('photos', Annotations.approveDrift, digest);
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'media' }, 'repaired once approved');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.object('photos')?.status?.heldDriftDigest, undefined);
    assert.equal(w.object('photos')?.status?.driftCount, 0);
    assert.equal(w.object('photos')?.metadata.annotations?.[Annotations.approveDrift], undefined, 'an approval is for one repair');
    assert.ok(w.events.about('photos').some((e) => e.reason === Reasons.RepairedApprovedDrift));

    // The same drift again later needs a new approval.
    const found = w.cloud.buckets.get('photos-drift');
    assert.ok(found);
    found.labels = { team: 'ops' };
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops' });
    assert.equal(w.synced('photos')?.reason, Reasons.DriftHeld);
  });

  it('a drift that changed since the approval is not applied, and shows a new digest', async () => {
    const w = await driftedBucket({ default: 'Hold' });
    await w.reconcile('photos');
    const approved = w.object('photos')?.status?.heldDriftDigest;
    assert.ok(approved);
    // Between the user's look and the next pass, someone changes the cloud again.
    const found = w.cloud.buckets.get('photos-drift');
    assert.ok(found);
    found.labels = { team: 'ops', env: 'prod' };
    w.annotate('photos', Annotations.approveDrift, approved);
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'ops', env: 'prod' }, 'not the approved diff: not applied');
    assert.equal(w.cloud.callCount({ operation: 'update' }), w.updatesBefore);
    assert.equal(w.synced('photos')?.reason, Reasons.DriftHeld);
    const now = w.object('photos')?.status?.heldDriftDigest;
    assert.ok(now);
    assert.notEqual(now, approved, 'the changed drift has its own digest');
  });

  it('an approval never lowers a protection: versioning turned on in the cloud stays on', async () => {
    const w = await driftedBucket({ default: 'Hold' });
    const found = w.cloud.buckets.get('photos-drift');
    assert.ok(found);
    found.versioning = true;
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ProtectionHeld, 'the protection is named first');
    const digest = w.object('photos')?.status?.heldDriftDigest;
    assert.ok(digest);
    assert.deepEqual(
      w.object('photos')?.status?.drift?.map((d) => [d.field, d.mode]),
      [['spec.versioning', 'Protected'], ['spec.labels', 'Hold']],
    );
    w.annotate('photos', Annotations.approveDrift, digest);
    await w.reconcile('photos');
    assert.deepEqual(w.cloud.buckets.get('photos-drift')?.labels, { team: 'media' }, 'the approved drift is repaired');
    assert.equal(w.cloud.buckets.get('photos-drift')?.versioning, true, 'the protection is not lowered');
    assert.equal(w.synced('photos')?.reason, Reasons.ProtectionHeld);
  });

  it('the digest compares values: key order does not change it, a value does', () => {
    const a = driftDigest([{ field: 'spec.labels', desired: { a: '1', b: '2' }, actual: { b: '3', a: '1' } }, { field: 'spec.versioning', desired: false, actual: true }]);
    const b = driftDigest([{ field: 'spec.versioning', actual: true, desired: false }, { field: 'spec.labels', actual: { a: '1', b: '3' }, desired: { b: '2', a: '1' } }]);
    assert.equal(a, b);
    assert.notEqual(a, driftDigest([{ field: 'spec.labels', desired: { a: '1', b: '2' }, actual: { b: '4', a: '1' } }, { field: 'spec.versioning', desired: false, actual: true }]));
    assert.notEqual(driftDigest([{ field: 'spec.x', desired: 1, actual: undefined }]), driftDigest([{ field: 'spec.x', desired: undefined, actual: 1 }]));
  });
});

describe('the interval in force', () => {
  it('status.driftCheckInterval shows the resync period: the annotation, else the default', async () => {
    const w = await driftedBucket(undefined);
    assert.equal(w.object('photos')?.status?.driftCheckInterval, '1h');
    w.annotate('photos', Annotations.resyncPeriod, '90s');
    await w.reconcile('photos');
    assert.equal(w.object('photos')?.status?.driftCheckInterval, '1m30s');
  });
});

describe('reconcile now', () => {
  it('echoes k8or.io/reconcile-requested-at into status.lastHandledReconcileAt', async () => {
    const w = await driftedBucket({ default: 'Report' });
    w.annotate('photos', Annotations.reconcileRequestedAt, '2026-11-27T18:00:00Z');
    await w.reconcile('photos');
    assert.equal(w.object('photos')?.status?.lastHandledReconcileAt, '2026-11-27T18:00:00Z');
    assert.equal(w.synced('photos')?.reason, Reasons.DriftReported, 'the drift check ran');
  });

  it('echoes it on an object in sync too, where nothing else in status changes', async () => {
    const w = world();
    w.objects.put(bucket('quiet', { name: 'quiet-bucket' }));
    await w.reconcile('quiet');
    assert.equal(w.synced('quiet')?.reason, Reasons.ReconcileSuccess);
    w.annotate('quiet', Annotations.reconcileRequestedAt, 'now-1');
    await w.reconcile('quiet');
    assert.equal(w.object('quiet')?.status?.lastHandledReconcileAt, 'now-1');
  });
});
