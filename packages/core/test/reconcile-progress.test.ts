// The kstatus conditions (Reconciling, Stalled) the engine writes beside Ready and Synced, through
// the reconcile algorithm over the in-memory provider and the in-memory API ports: Reconciling True
// while the operator works toward the spec, Stalled True when only a user can move it on, neither
// once it is done or paused; present only while True, each stamped with the generation it is about.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, ConditionTypes, type Bucket, type Condition, type ManagedKindName, type ManagedResource, type ProviderConfig, type Table } from '@k8or/api';
import { ManagedReconciler, Reasons, RetryableError, TerminalError, progressConditions } from '@k8or/core';
import { InMemoryCloud, InMemoryEvents, InMemoryLookups, InMemoryObjects, inMemoryProviderPlugin, noOutputs, type InMemoryCloudOptions } from '@k8or/core/testing';

const NS = 'media';

function providerConfig(): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } };
}

function bucket(name: string, spec: Bucket['spec'] = {}, annotations: Record<string, string> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: NS, annotations }, spec: { deletionPolicy: 'Delete', ...spec } };
}

function table(name: string): Table {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace: NS }, spec: { deletionPolicy: 'Delete', partitionKey: { name: 'id', type: 'string' } } };
}

function world(kind: ManagedKindName = 'Bucket', cloudOptions: InMemoryCloudOptions = {}) {
  const cloud = new InMemoryCloud(cloudOptions);
  const objects = new InMemoryObjects();
  const lookups = new InMemoryLookups();
  const events = new InMemoryEvents();
  lookups.providerConfigs.set('default', providerConfig());
  const reconciler = new ManagedReconciler(
    kind,
    { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs: noOutputs },
    { clusterId: 'c1', pollIntervalMs: 2_000 },
  );
  const reconcile = async (name: string) => await reconciler.reconcile({ namespace: NS, name });
  const object = (name: string): ManagedResource | undefined => objects.peek(kind, NS, name);
  const condition = (name: string, type: string): Condition | undefined => object(name)?.status?.conditions?.find((c) => c.type === type);
  /** Reconciling and Stalled as `status reason`, or undefined when absent. */
  const progress = (name: string) => {
    const show = (c: Condition | undefined) => (c ? `${c.status} ${c.reason}` : undefined);
    return { reconciling: show(condition(name, ConditionTypes.Reconciling)), stalled: show(condition(name, ConditionTypes.Stalled)) };
  };
  return { cloud, objects, lookups, reconcile, object, condition, progress };
}

describe('kstatus conditions: Reconciling and Stalled', () => {
  it('a resource being created is Reconciling (Creating); once Ready and Synced, neither condition is there', async () => {
    const w = world('Table', { observesUntilActive: 1 });
    w.objects.put(table('orders'));
    await w.reconcile('orders');
    assert.equal(w.condition('orders', ConditionTypes.Ready)?.reason, Reasons.Creating);
    assert.deepEqual(w.progress('orders'), { reconciling: `True ${Reasons.Creating}`, stalled: undefined });
    assert.equal(w.condition('orders', ConditionTypes.Reconciling)?.observedGeneration, w.object('orders')?.metadata.generation);

    await w.reconcile('orders');
    assert.equal(w.condition('orders', ConditionTypes.Ready)?.status, 'True');
    assert.equal(w.condition('orders', ConditionTypes.Synced)?.status, 'True');
    assert.deepEqual(w.progress('orders'), { reconciling: undefined, stalled: undefined });
    assert.equal(w.object('orders')?.status?.observedGeneration, w.object('orders')?.metadata.generation);
  });

  it('a retried failure is Reconciling with the call\'s reason; a terminal one is Stalled, and not Reconciling', async () => {
    const w = world();
    const clear = w.cloud.failWith({ operation: 'create' }, () => new RetryableError('Rate exceeded', { code: 'SlowDown' }));
    w.objects.put(bucket('photos'));
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: `True ${Reasons.CannotCreateExternalResource}`, stalled: undefined });
    clear();

    w.cloud.failWith({ operation: 'create' }, () => new TerminalError('Access Denied', { code: 'AccessDenied' }));
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: `True ${Reasons.CannotCreateExternalResource}` });
    assert.match(w.condition('photos', ConditionTypes.Stalled)?.message ?? '', /AccessDenied/);
  });

  it('a name someone else owns is Stalled (NotOwned); adopting it clears Stalled', async () => {
    const w = world();
    w.cloud.buckets.set('taken', { name: 'taken', location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 0, createdTime: new Date().toISOString() });
    w.objects.put(bucket('photos', { name: 'taken' }));
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: `True ${Reasons.NotOwned}` });

    w.objects.editMetadata('Bucket', NS, 'photos', (m) => {
      m.annotations = { ...m.annotations, [Annotations.adopt]: 'true' };
    });
    await w.reconcile('photos');
    assert.equal(w.condition('photos', ConditionTypes.Ready)?.status, 'True');
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: undefined });
  });

  it('a missing ProviderConfig is waited for (Reconciling), an invalid one stops (Stalled)', async () => {
    const w = world();
    w.objects.put(bucket('photos', { providerConfigRef: { name: 'later' } }));
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: `True ${Reasons.ProviderConfigNotFound}`, stalled: undefined });

    w.lookups.providerConfigs.set('later', { ...providerConfig(), metadata: { name: 'later' }, spec: { provider: 'nowhere' } });
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: `True ${Reasons.ProviderNotInstalled}` });
  });

  it('paused is neither Reconciling nor Stalled, whatever came before', async () => {
    const w = world();
    w.cloud.failWith({ operation: 'create' }, () => new TerminalError('Access Denied', { code: 'AccessDenied' }));
    w.objects.put(bucket('photos'));
    await w.reconcile('photos');
    assert.equal(w.progress('photos').stalled, `True ${Reasons.CannotCreateExternalResource}`);
    w.objects.editMetadata('Bucket', NS, 'photos', (m) => {
      m.annotations = { ...m.annotations, [Annotations.paused]: 'true' };
    });
    await w.reconcile('photos');
    assert.equal(w.condition('photos', ConditionTypes.Synced)?.reason, Reasons.Paused);
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: undefined });
  });

  it('drift held for approval leaves a Ready resource settled: neither condition (the hold is in Synced)', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-held', labels: { team: 'media' }, driftPolicy: { default: 'Hold' } }));
    await w.reconcile('photos');
    const found = w.cloud.buckets.get('photos-held');
    assert.ok(found);
    found.labels = { team: 'ops' };
    await w.reconcile('photos');
    assert.equal(w.condition('photos', ConditionTypes.Synced)?.reason, Reasons.DriftHeld);
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: undefined });
  });

  it('deleting: a retried delete is Reconciling, a blocked one is Stalled (DeletionBlocked)', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-del' }));
    await w.reconcile('photos');
    const clear = w.cloud.failWith({ operation: 'delete' }, () => new RetryableError('Service Unavailable', { code: 'ServiceUnavailable' }));
    w.objects.markDeleted('Bucket', NS, 'photos');
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: `True ${Reasons.CannotDeleteExternalResource}`, stalled: undefined });
    clear();

    const found = w.cloud.buckets.get('photos-del');
    assert.ok(found);
    found.objects = 3;
    await w.reconcile('photos');
    assert.deepEqual(w.progress('photos'), { reconciling: undefined, stalled: `True ${Reasons.DeletionBlocked}` });
  });

  it('a no-op pass writes nothing: the progress conditions are stable', async () => {
    const w = world();
    w.objects.put(bucket('photos'));
    await w.reconcile('photos');
    const before = w.object('photos')?.metadata.resourceVersion;
    await w.reconcile('photos');
    assert.equal(w.object('photos')?.metadata.resourceVersion, before);
  });
});

describe('progressConditions (the one decision)', () => {
  const ready = { status: 'True' as const, reason: Reasons.Available, message: '' };
  it('every stop reason a user resolves is Stalled; a reason seen while deleting with nothing wrong is Reconciling (Deleting)', () => {
    for (const reason of [Reasons.TargetChanged, Reasons.ExternalResourceReplaced, Reasons.DuplicateCloudResource, Reasons.ImmutableFieldChanged, Reasons.InvalidProviderSettings, Reasons.ProtectionHeld]) {
      const out = progressConditions({ ready, synced: { status: 'False', reason, message: 'm' }, deleting: false, retrying: false });
      assert.deepEqual(out.set.map((c) => `${c.type} ${c.status} ${c.reason}`), [`Stalled True ${reason}`], reason);
      assert.deepEqual(out.remove, [ConditionTypes.Reconciling]);
    }
    const deleting = progressConditions({ ready, synced: { status: 'True', reason: Reasons.ReconcileSuccess, message: '' }, deleting: true, retrying: false });
    assert.deepEqual(deleting.set.map((c) => `${c.type} ${c.status} ${c.reason}`), [`Reconciling True ${Reasons.Deleting}`]);
  });

  it('a change the cloud does not show yet is Reconciling; drift only reported is settled', () => {
    const pending = progressConditions({ ready, synced: { status: 'False', reason: Reasons.ChangesPending, message: '' }, deleting: false, retrying: false });
    assert.deepEqual(pending.set.map((c) => c.type), [ConditionTypes.Reconciling]);
    const reported = progressConditions({ ready, synced: { status: 'False', reason: Reasons.DriftReported, message: '' }, deleting: false, retrying: false });
    assert.deepEqual(reported, { set: [], remove: [ConditionTypes.Reconciling, ConditionTypes.Stalled] });
  });
});
