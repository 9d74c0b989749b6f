// The reconcile algorithm on its own: the ports (API server, lookups, events,
// outputs) are small in-memory fakes, the provider is the in-memory one. These
// tests pin down the order of effects, which the sandbox tests cannot see.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, FINALIZER, type Bucket, type ManagedKindName, type ManagedResource, type ManagedStatus, type ProviderConfig } from '@k8or/api';
import { CloudRateLimits, KubeApiError, ManagedReconciler, delayAfterCheck, NotOwnedError, perObjectNameToken, Reasons, RetryableError, TerminalError, type ConfigLookups, type ProviderPlugin, type EventRecorder, type ManagedPatch, type ManagedResourceClient, type OutputsWriter } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';

/** An API server holding one object, logging every write to the shared timeline. */
class FakeObjects implements ManagedResourceClient {
  object: ManagedResource | undefined;
  version = 1;
  /** Status writes to refuse with 409 before accepting one. */
  conflicts = 0;
  readonly timeline: string[];
  constructor(object: ManagedResource, timeline: string[]) {
    this.timeline = timeline;
    this.object = structuredClone({ ...object, metadata: { ...object.metadata, resourceVersion: '1', generation: 1, uid: 'uid-1' } });
  }
  async get(_kind: ManagedKindName, _namespace: string, _name: string): Promise<ManagedResource | undefined> {
    return structuredClone(this.object);
  }
  async patch(resource: ManagedResource, patch: ManagedPatch): Promise<ManagedResource> {
    const current = this.object;
    assert.ok(current);
    if ((patch.finalizers || patch.guarded) && resource.metadata.resourceVersion !== current.metadata.resourceVersion) throw KubeApiError.fromResponse('PATCH', '/x', 409, { reason: 'Conflict' });
    const parts = [];
    if (patch.finalizers) parts.push(`finalizers=${patch.finalizers.join(',')}`);
    if (patch.specName) parts.push('spec.name');
    for (const [key, value] of Object.entries(patch.annotations ?? {})) parts.push(`${key.replace('k8or.io/', '')}${value === null ? '-' : ''}`);
    this.timeline.push(`patch ${parts.join(' ')}`);
    const annotations = { ...current.metadata.annotations };
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      if (value === null) delete annotations[key];
      else annotations[key] = value;
    }
    current.metadata.annotations = annotations;
    if (patch.finalizers) current.metadata.finalizers = patch.finalizers;
    if (patch.specName) {
      current.spec.name = patch.specName;
      current.metadata.generation = (current.metadata.generation ?? 1) + 1;
    }
    current.metadata.resourceVersion = String(++this.version);
    return structuredClone(current);
  }
  async writeStatus(resource: ManagedResource, status: ManagedStatus): Promise<ManagedResource> {
    const current = this.object;
    assert.ok(current);
    if (this.conflicts > 0 || resource.metadata.resourceVersion !== current.metadata.resourceVersion) {
      this.conflicts = Math.max(0, this.conflicts - 1);
      current.metadata.resourceVersion = String(++this.version); // someone else wrote meanwhile
      this.timeline.push('status 409');
      throw KubeApiError.fromResponse('PUT', '/status', 409, { reason: 'Conflict' });
    }
    this.timeline.push(`status Ready=${status.conditions?.find((c) => c.type === 'Ready')?.status ?? '-'} Synced=${status.conditions?.find((c) => c.type === 'Synced')?.reason ?? '-'}`);
    current.status = structuredClone(status);
    current.metadata.resourceVersion = String(++this.version);
    return structuredClone(current);
  }
}

/** A fixed clock: the next drift check's slot is then a known delay. */
const NOW = Date.parse('2026-11-27T12:00:00Z');
const providerConfig: ProviderConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } };
const lookups: ConfigLookups = {
  namespace: async () => ({ metadata: { name: 'media' } }),
  providerConfig: async (name) => (name === 'default' ? providerConfig : undefined),
  secret: async () => undefined,
};
const outputs: OutputsWriter = { publish: async () => 'unchanged', remove: async () => {} };

function arrange(bucket: Partial<Bucket['spec']> = {}, provider: { probe?: boolean } = {}) {
  const timeline: string[] = [];
  const cloud = new InMemoryCloud();
  cloud.onCall((call) => {
    timeline.push(`cloud ${call.operation}`);
  });
  const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: bucket }, timeline);
  const events: EventRecorder = {
    record: async (_object, type, reason) => {
      timeline.push(`event ${type} ${reason}`);
    },
  };
  const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud, provider)]]), events, outputs }, { clusterId: 'c1', now: () => new Date(NOW) });
  return { timeline, cloud, objects, reconciler, request: { namespace: 'media', name: 'photos' } };
}

describe('the reconcile algorithm, effect by effect', () => {
  it('creates: markers and finalizer first, then the record of what the create applies, then the cloud, then the status', async () => {
    const { timeline, reconciler, request, objects } = arrange({ versioning: true });
    const outcome = await reconciler.reconcile(request);
    assert.deepEqual(timeline, [
      'cloud observe',
      // The create-pending marker only once the name is known to be free, with the finalizer and the name.
      `patch finalizers=${FINALIZER} spec.name external-name create-pending`,
      // status.appliedProtection: a create whose answer is lost still leaves what it applied on record.
      'status Ready=- Synced=-',
      'cloud create',
      'patch create-succeeded',
      'cloud observe',
      // After the observe, which tells whether the kind keeps the owner tags the create wrote; beside the status write.
      `event Normal ${Reasons.CreatedExternalResource}`,
      `status Ready=True Synced=${Reasons.ReconcileSuccess}`,
    ]);
    assert.equal(outcome.requeueAfterMs, delayAfterCheck('uid-1', 3_600_000, NOW), "the next look is the object's slot in the resync period");
    assert.equal(outcome.driftCheck, true, 'a drift check, which waits behind changes in the queue (a poll or a retry says nothing of the kind)');
    assert.equal(objects.object?.status?.observedGeneration, objects.object?.metadata.generation);
  });

  it('resyncs an unchanged resource with one observe and no write', async () => {
    const { timeline, reconciler, request } = arrange();
    await reconciler.reconcile(request);
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud observe']);
  });

  it('retries a status write that meets a conflict, re-reading the object', async () => {
    const { timeline, reconciler, request, objects } = arrange();
    await reconciler.reconcile(request);
    // a new generation, applied; its status write meets two conflicts
    const object = objects.object;
    assert.ok(object);
    object.spec = { ...object.spec, versioning: true } as typeof object.spec;
    object.metadata.generation = (object.metadata.generation ?? 1) + 1;
    objects.conflicts = 2;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline.slice(-3), ['status 409', 'status 409', `status Ready=True Synced=${Reasons.ReconcileSuccess}`]);
  });

  it('after a crash between create and marker, takes the bucket over instead of creating again', async () => {
    const { timeline, reconciler, request, cloud, objects } = arrange();
    await reconciler.reconcile(request);
    // As if the worker died right after the create call: the marker never got written.
    delete objects.object?.metadata.annotations?.[Annotations.createSucceeded];
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud observe', 'patch create-succeeded', `event Normal ${Reasons.RecoveredExternalResource}`]);
    assert.equal(cloud.buckets.size, 1);
  });

  // The withdrawn rule "create-pending, the resource exists, no foreign owner tags = our own
  // interrupted create" is gone: an untagged resource under a pending marker proves nothing
  // (someone else may have made it after our create failed). Only a name k8or generated for this
  // very object (its per-object token) lets the engine finish such a create.
  it('does not take an untagged bucket under its create-pending marker: NotOwned, no write, no delete', async () => {
    const { timeline, reconciler, request, cloud, objects } = arrange({ name: 'hand-made' });
    assert.ok(objects.object);
    objects.object.metadata.annotations = { [Annotations.createPending]: '2026-01-01T00:00:00Z' };
    cloud.buckets.set('hand-made', { name: 'hand-made', location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 1, createdTime: '2026-01-01T00:00:00Z', uid: 'someone-elses' });
    await reconciler.reconcile(request);
    assert.equal(objects.object?.status?.conditions?.find((c) => c.type === 'Synced')?.reason, Reasons.NotOwned);
    assert.match(objects.object?.status?.conditions?.find((c) => c.type === 'Synced')?.message ?? '', /k8or\.io\/adopt/);
    assert.equal(cloud.callCount({ operation: 'update' }) + cloud.callCount({ operation: 'create' }), 0);
    assert.ok(!timeline.some((t) => t.includes('create-succeeded')), 'no takeover recorded');
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    await reconciler.reconcile(request);
    assert.equal(cloud.callCount({ operation: 'delete' }), 0);
    assert.ok(cloud.buckets.has('hand-made'), 'never deleted');
    assert.deepEqual(objects.object?.metadata.finalizers ?? [], [], 'the finalizer goes: nothing of ours is there');
  });

  it('finishes a create with an unknown outcome under a name k8or generated for this object: tags written, one bucket, an Event', async () => {
    const name = `media-photos-${perObjectNameToken('uid-1')}`;
    const { timeline, reconciler, request, cloud, objects } = arrange({ name });
    assert.ok(objects.object);
    // As if the process died after CreateBucket and before the tags, the marker and the status.
    objects.object.metadata.annotations = { [Annotations.createPending]: '2026-01-01T00:00:00Z', [Annotations.externalName]: name };
    objects.object.metadata.finalizers = [FINALIZER];
    cloud.buckets.set(name, { name, location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 0, createdTime: '2026-01-01T00:00:00Z', uid: 'ours' });
    await reconciler.reconcile(request);
    assert.deepEqual(timeline.slice(0, 4), ['cloud observe', 'patch create-succeeded', `event Normal ${Reasons.FinishedInterruptedCreate}`, 'cloud update']);
    assert.equal(cloud.buckets.size, 1);
    assert.equal(cloud.buckets.get(name)?.tags['k8or.io/cluster'], 'c1');
    assert.deepEqual(objects.object?.status?.identity, { createdTime: '2026-01-01T00:00:00Z', uid: 'ours' }, 'the identity is recorded once ownership is proven');
  });

  it('never takes over a bucket that names another owner, even under its own create-pending marker', async () => {
    const { reconciler, request, cloud, objects } = arrange({ name: 'taken-bucket' });
    cloud.buckets.set('taken-bucket', { name: 'taken-bucket', location: 'mem-1', versioning: false, tags: { 'k8or.io/managed-by': 'k8or', 'k8or.io/cluster': 'another-cluster' }, labels: {}, objects: 3, createdTime: '2026-01-01T00:00:00Z' });
    assert.ok(objects.object);
    objects.object.metadata.annotations = { [Annotations.createPending]: '2026-01-01T00:00:00Z' };
    await reconciler.reconcile(request);
    assert.equal(objects.object.status?.conditions?.find((c) => c.type === 'Synced')?.reason, Reasons.NotOwned);
    assert.equal(objects.object.status?.conditions?.find((c) => c.type === 'Ready')?.reason, Reasons.NotOwned, 'Ready says why too');
    assert.equal(cloud.callCount({ operation: 'update' }) + cloud.callCount({ operation: 'create' }), 0);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    await reconciler.reconcile(request);
    assert.equal(cloud.buckets.get('taken-bucket')?.objects, 3, 'never deleted');
  });

  it('a failed create sets Ready False with the reason, so kubectl wait does not hang', async () => {
    const { reconciler, request, cloud, objects } = arrange();
    cloud.failWith({ operation: 'create' }, new TerminalError('PITR is not supported here', { code: 'UnknownOperationException' }));
    await reconciler.reconcile(request);
    const ready = objects.object?.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, Reasons.CannotCreateExternalResource);
    assert.match(ready?.message ?? '', /UnknownOperationException/);
  });

  it('never says Synced while a setting could not be applied or read: the field is named', async () => {
    const cloud = new InMemoryCloud();
    const plugin = inMemoryProviderPlugin(cloud);
    const inner = plugin.connectors.Bucket;
    assert.ok(inner);
    const withIssues: ProviderPlugin = {
      ...plugin,
      connectors: {
        Bucket: {
          connect: async (resource, context) => {
            const client = await inner.connect(resource, context);
            return {
              ...client,
              observe: async (r, call) => ({ ...(await client.observe(r, call)), settingIssues: [{ field: 'spec.labels', problem: 'unreadable', message: 'this backend has no tagging API' }] }),
              create: client.create.bind(client),
              update: client.update.bind(client),
              delete: client.delete.bind(client),
            };
          },
        },
      },
    };
    const timeline: string[] = [];
    const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: {} }, timeline);
    const events: EventRecorder = { record: async () => {} };
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', withIssues]]), events, outputs }, { clusterId: 'c1' });
    await reconciler.reconcile({ namespace: 'media', name: 'photos' });
    const synced = objects.object?.status?.conditions?.find((c) => c.type === 'Synced');
    assert.equal(synced?.status, 'False');
    assert.equal(synced?.reason, Reasons.SettingsNotApplied);
    assert.match(synced?.message ?? '', /spec\.labels \(cannot be read: this backend has no tagging API\)/);
    assert.equal(objects.object?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', 'the bucket itself is usable');
  });

  it("gives the Event recorder and the outputs writer the reconcile's stop signal, so a lost Lease aborts them too", async () => {
    const cloud = new InMemoryCloud();
    const objects = new FakeObjects(
      { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: { writeOutputsTo: { name: 'photos-outputs' } } },
      [],
    );
    const signals: { port: string; signal: AbortSignal | undefined }[] = [];
    const events: EventRecorder = { record: async (_object, _type, _reason, _message, signal) => void signals.push({ port: 'events', signal }) };
    const watchedOutputs: OutputsWriter = {
      publish: async (_resource, _name, _outputs, signal) => {
        signals.push({ port: 'outputs', signal });
        return 'written';
      },
      remove: async () => {},
    };
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs: watchedOutputs }, { clusterId: 'c1' });
    const lease = new AbortController();
    await reconciler.reconcile({ namespace: 'media', name: 'photos', signal: lease.signal });
    assert.deepEqual([...new Set(signals.map((s) => s.port))].sort(), ['events', 'outputs']);
    assert.ok(signals.every((s) => s.signal && !s.signal.aborted));
    lease.abort(new Error('lost the Lease'));
    assert.ok(signals.every((s) => s.signal?.aborted), 'every signal given to the ports follows the Lease');
  });

  it('names a setting once when both the write and the read after it report it', async () => {
    const cloud = new InMemoryCloud();
    const plugin = inMemoryProviderPlugin(cloud);
    const inner = plugin.connectors.Bucket;
    assert.ok(inner);
    const issue = { field: 'spec.labels', problem: 'unapplied', message: 'this backend has no tagging API' } as const;
    const withIssues: ProviderPlugin = {
      ...plugin,
      connectors: {
        Bucket: {
          connect: async (resource, context) => {
            const client = await inner.connect(resource, context);
            return {
              ...client,
              observe: async (r, call) => {
                const observation = await client.observe(r, call);
                return observation.exists ? { ...observation, settingIssues: [issue] } : observation;
              },
              create: async (r, call) => ({ ...(await client.create(r, call)), settingIssues: [issue, { ...issue }] }),
              update: client.update.bind(client),
              delete: client.delete.bind(client),
            };
          },
        },
      },
    };
    const timeline: string[] = [];
    const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: {} }, timeline);
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', withIssues]]), events: { record: async () => {} }, outputs }, { clusterId: 'c1' });
    await reconciler.reconcile({ namespace: 'media', name: 'photos' });
    const synced = objects.object?.status?.conditions?.find((c) => c.type === 'Synced');
    assert.equal(synced?.reason, Reasons.SettingsNotApplied);
    assert.equal(synced?.message.match(/spec\.labels/g)?.length, 1, synced?.message);
  });

  it("blocks on a ProviderConfig whose settings break the provider's schema, naming the field, before any cloud call", async () => {
    const cloud = new InMemoryCloud();
    const plugin: ProviderPlugin = {
      ...inMemoryProviderPlugin(cloud),
      settingsSchema: { type: 'object', properties: { zone: { type: 'string', enum: ['north', 'south'] } }, required: ['zone'] },
    };
    const timeline: string[] = [];
    const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: {} }, timeline);
    const badConfig: ProviderConfig = { ...providerConfig, spec: { ...providerConfig.spec, settings: { zone: 'east' } } };
    const settingsLookups: ConfigLookups = { ...lookups, providerConfig: async () => badConfig };
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups: settingsLookups, providers: new Map([['aws', plugin]]), events: { record: async () => {} }, outputs }, { clusterId: 'c1' });
    await reconciler.reconcile({ namespace: 'media', name: 'photos' });
    const synced = objects.object?.status?.conditions?.find((c) => c.type === 'Synced');
    assert.equal(synced?.reason, Reasons.InvalidProviderSettings);
    assert.match(synced?.message ?? '', /spec\.settings\.zone: must be equal to one of the allowed values \(rule settings\.schema\.enum\)/);
    assert.equal(cloud.calls.length, 0, 'no cloud call with settings the provider refuses');
  });

  it('gives every reconcile a deadline: a cloud call that hangs is aborted, and the condition says so', async () => {
    const cloud = new InMemoryCloud();
    cloud.onCall(async (call, signal) => {
      // A create that would never answer, as an SDK call without a timeout would not.
      if (call.operation === 'create') await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
    });
    const timeline: string[] = [];
    const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: {} }, timeline);
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events: { record: async () => {} }, outputs }, { clusterId: 'c1', reconcileTimeoutMs: 300 });
    const outcome = await reconciler.reconcile({ namespace: 'media', name: 'photos' });
    assert.equal(outcome.backoff, true, 'an aborted call is retried with backoff');
    const synced = objects.object?.status?.conditions?.find((c) => c.type === 'Synced');
    assert.equal(synced?.reason, Reasons.CannotCreateExternalResource);
    assert.match(synced?.message ?? '', /timeout|aborted/i);
    assert.equal(cloud.buckets.size, 0, 'the aborted create wrote nothing');
  });

  it('lets every reconcile that shares a rate limit finish: the wait for a token does not count against the deadline', async () => {
    // Eight reconciles at once, each with twenty paced reads (two observes of ten), through one
    // bucket of 40 calls per second: 160 calls, 4 s of the limit, where a reconcile has 3 s. Taken
    // in turn they all finish; a deadline that ran while they queued would abort every one of them
    // short of its last reads, again at each retry, and the tokens they took would be spent for nothing.
    const READS = 10;
    const inner = inMemoryProviderPlugin(new InMemoryCloud());
    const connector = inner.connectors.Bucket!;
    const plugin: ProviderPlugin = {
      ...inner,
      rateLimits: { reads: { requestsPerSecond: 40, burst: 1, description: 'the reads of this test' } },
      connectors: {
        Bucket: {
          async connect(resource, context) {
            const client = await connector.connect(resource, context);
            return {
              ...client,
              observe: async (bucket, call) => {
                for (let i = 0; i < READS; i++) await context.recordCall(`Read${i}`, async () => undefined, { service: 'reads', signal: call.signal });
                return await client.observe(bucket, call);
              },
              create: (bucket, call) => client.create(bucket, call),
              update: (bucket, observation, call) => client.update(bucket, observation, call),
              delete: (bucket, call) => client.delete(bucket, call),
            };
          },
        },
      },
    };
    const cloudRateLimits = new CloudRateLimits();
    const runs = Array.from({ length: 8 }, (_, i) => {
      const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: `photos-${i}`, namespace: 'media' }, spec: {} }, []);
      const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', plugin]]), events: { record: async () => {} }, outputs }, { clusterId: 'c1', reconcileTimeoutMs: 3_000, cloudRateLimits });
      return { objects, outcome: reconciler.reconcile({ namespace: 'media', name: `photos-${i}` }) };
    });
    const synced = await Promise.all(runs.map(async ({ objects, outcome }) => ({ outcome: await outcome, synced: objects.object?.status?.conditions?.find((c) => c.type === 'Synced') })));
    assert.deepEqual(
      synced.map(({ outcome, synced }) => [outcome.backoff ?? false, synced?.reason, synced?.reason === Reasons.ReconcileSuccess ? '' : synced?.message]),
      synced.map(() => [false, Reasons.ReconcileSuccess, '']),
    );
    assert.equal(cloudRateLimits.state('default', 'reads')?.calls, 8 * 2 * READS, 'every read went once');
    assert.equal(cloudRateLimits.state('default', 'reads')?.aborted, 0, 'no wait was cut short');
  });

  it('never resyncs faster than the floor, whatever k8or.io/resync-period the API server holds', async () => {
    for (const period of ['1ns', '-5m', '0s', 'banana']) {
      const { reconciler, request, objects } = arrange();
      assert.ok(objects.object);
      objects.object.metadata.annotations = { [Annotations.resyncPeriod]: period };
      const outcome = await reconciler.reconcile(request);
      const interval = reconciler.checkIntervalMs(objects.object);
      assert.ok(interval >= 10_000, `${period}: interval in force ${interval} ms`);
      assert.equal(outcome.requeueAfterMs, delayAfterCheck('uid-1', interval, NOW), `${period}: next look at the object's slot of that interval`);
    }
  });

  it('deletes: the cloud first, the finalizer only once the bucket is gone; existence and ownership read with the light probe', async () => {
    const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' });
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud probe', 'cloud delete', 'cloud probe', `event Normal ${Reasons.DeletedExternalResource}`, 'patch finalizers=']);
    assert.equal(cloud.buckets.size, 0);
  });

  it('deletes with observe, in the same order, when the provider has no probe (the contract keeps probe optional)', async () => {
    const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' }, { probe: false });
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud observe', 'cloud delete', 'cloud observe', `event Normal ${Reasons.DeletedExternalResource}`, 'patch finalizers=']);
    assert.equal(cloud.buckets.size, 0);
  });

  for (const [what, error] of [
    ['denied (403)', () => new TerminalError('Access Denied', { code: 'AccessDenied' })],
    ['timed out', () => new RetryableError('GetBucketTagging failed with TimeoutError', { code: 'TimeoutError' })],
  ] as const) {
    it(`keeps the finalizer and deletes nothing when the probe before the delete is ${what}: an error is not "gone"`, async () => {
      const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' });
      await reconciler.reconcile(request);
      assert.ok(objects.object);
      objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
      const clear = cloud.failWith({ operation: 'probe' }, error);
      timeline.length = 0;
      await reconciler.reconcile(request);
      clear();
      assert.equal(timeline[0], 'cloud probe');
      assert.equal(cloud.callCount({ operation: 'delete' }), 0, 'no delete without a read that decided ownership');
      assert.deepEqual(objects.object?.metadata.finalizers, [FINALIZER]);
      assert.equal(objects.object?.status?.conditions?.find((c) => c.type === 'Synced')?.reason, Reasons.CannotObserveExternalResource);
      assert.equal(cloud.buckets.size, 1);
    });

    it(`keeps the finalizer when the probe after the delete is ${what}: only a fresh "gone" releases it`, async () => {
      const { reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' });
      await reconciler.reconcile(request);
      assert.ok(objects.object);
      objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
      let probes = 0;
      const clear = cloud.onCall((call) => {
        if (call.operation === 'probe' && ++probes === 2) throw error();
      });
      await reconciler.reconcile(request);
      clear();
      assert.equal(cloud.callCount({ operation: 'delete' }), 1);
      assert.deepEqual(objects.object?.metadata.finalizers, [FINALIZER], 'the delete was asked for, but nothing said gone yet');
      await reconciler.reconcile(request);
      assert.deepEqual(objects.object?.metadata.finalizers, [], 'released once a probe says gone');
    });
  }

  it('leaves a bucket whose owner tags name another owner in the cloud, and lets the object go', async () => {
    const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' });
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    const bucket = cloud.buckets.get(objects.object.spec.name ?? '');
    assert.ok(bucket);
    bucket.tags = { ...bucket.tags, 'k8or.io/cluster': 'another-cluster' };
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud probe', `event Warning ${Reasons.NotOwned}`, 'patch finalizers=']);
    assert.equal(cloud.buckets.size, 1);
  });

  it('keeps the finalizer when the delete was accepted but the resource is still there: only the observe after it says gone', async () => {
    const timeline: string[] = [];
    const cloud = new InMemoryCloud();
    cloud.onCall((call) => {
      timeline.push(`cloud ${call.operation}`);
    });
    // A cloud whose delete returns once accepted and finishes later (DynamoDB DeleteTable, a Bigtable table).
    const plugin = inMemoryProviderPlugin(cloud);
    const finishLater: string[] = [];
    const connector = plugin.connectors.Bucket!;
    const acceptedDeletes: ProviderPlugin = {
      ...plugin,
      connectors: {
        ...plugin.connectors,
        Bucket: {
          connect: async (resource, context) => {
            const client = await connector.connect(resource, context);
            return {
              observe: (r, call) => client.observe(r, call),
              create: (r, call) => client.create(r, call),
              update: (r, observation, call) => client.update(r, observation, call),
              delete: async () => {
                timeline.push('cloud delete accepted');
                finishLater.push(context.externalName);
              },
            };
          },
        },
      },
    };
    const objects = new FakeObjects({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: { deletionPolicy: 'Delete' } }, timeline);
    const events: EventRecorder = { record: async (_object, type, reason) => void timeline.push(`event ${type} ${reason}`) };
    const reconciler = new ManagedReconciler('Bucket', { kube: objects, lookups, providers: new Map([['aws', acceptedDeletes]]), events, outputs }, { clusterId: 'c1', pollIntervalMs: 1_000 });
    const request = { namespace: 'media', name: 'photos' };
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';

    timeline.length = 0;
    assert.deepEqual(await reconciler.reconcile(request), { requeueAfterMs: 1_000 });
    assert.deepEqual(timeline, ['cloud observe', 'cloud delete accepted', 'cloud observe', `status Ready=False Synced=${Reasons.ReconcileSuccess}`]);
    assert.deepEqual(objects.object?.metadata.finalizers, [FINALIZER], 'still there: the finalizer stays');
    assert.equal(objects.object?.status?.conditions?.find((c) => c.type === 'Ready')?.reason, Reasons.Deleting);

    for (const name of finishLater) cloud.buckets.delete(name);
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(
      timeline,
      ['cloud observe', `event Normal ${Reasons.DeletedExternalResource}`, 'patch finalizers='],
      'gone at the first observe: released without another delete, and the delete an earlier pass asked for is announced',
    );
  });

  it('waits the time a retryable error names (a name still being deleted) instead of backing off', async () => {
    const { reconciler, request, cloud } = arrange();
    cloud.failWith({ operation: 'create' }, new RetryableError('CreateContainer failed with ContainerBeingDeleted', { code: 'ContainerBeingDeleted', retryAfterMs: 10_000 }), 1);
    assert.deepEqual(await reconciler.reconcile(request), { requeueAfterMs: 10_000 });
    cloud.failWith({ operation: 'create' }, new RetryableError('throttled', { code: 'SlowDown' }), 1);
    assert.deepEqual(await reconciler.reconcile(request), { backoff: true });
  });

  it("lets the object go, and leaves the cloud alone, when the read on delete says the name is another owner's", async () => {
    const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Delete' });
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    cloud.failWith({ operation: 'probe' }, new NotOwnedError('another account owns the name', { code: 'BucketAlreadyExists' }));
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud probe', `event Warning ${Reasons.NotOwned}`, 'patch finalizers=']);
    assert.equal(cloud.callCount({ operation: 'delete' }), 0);
  });

  it('retains: releases ownership (our owner tags removed, nothing else), then the finalizer', async () => {
    const { timeline, reconciler, request, objects, cloud } = arrange({ deletionPolicy: 'Retain', versioning: true });
    await reconciler.reconcile(request);
    assert.ok(objects.object);
    objects.object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    timeline.length = 0;
    await reconciler.reconcile(request);
    assert.deepEqual(timeline, ['cloud probe', 'cloud release', `event Normal ${Reasons.RetainedExternalResource}`, 'patch finalizers=']);
    assert.equal(cloud.buckets.size, 1);
    const [bucket] = cloud.buckets.values();
    assert.equal(bucket?.tags['k8or.io/managed-by'], undefined, 'another cluster may adopt it');
    assert.equal(bucket?.versioning, true, 'nothing else changed');
  });
});
