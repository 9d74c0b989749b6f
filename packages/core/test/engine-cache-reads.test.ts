// The engine reads managed objects from its informers' caches instead of a
// live GET per reconcile, and a cache that is behind can never make it write
// or create on a stale copy: every write decided on the copy carries its
// resourceVersion, a 409 ends the pass, and the next pass reads the object as
// it is.
import { strict as assert } from 'node:assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { Annotations, FINALIZER, type Bucket, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import {
  CachedManagedResources,
  CoreMetrics,
  KubeManagedResources,
  KubeRest,
  ManagedReconciler,
  ObjectCache,
  Reasons,
  TerminalError,
  type ConfigLookups,
  type EventRecorder,
  type Informer,
  type ManagedObject,
  type ManagedPatch,
  type ManagedResourceClient,
  type OutputsWriter,
} from '@k8or/core';
import { InMemoryCloud, InMemoryObjects, inMemoryProviderPlugin } from '@k8or/core/testing';
import { World, condition, isReadyAndSynced, waitFor } from './engine-harness.ts';

const providerConfig: ProviderConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1' } };
const lookups: ConfigLookups = {
  namespace: async () => ({ metadata: { name: 'media' } }),
  providerConfig: async (name) => (name === 'default' ? providerConfig : undefined),
  secret: async () => undefined,
};
const outputs: OutputsWriter = { publish: async () => 'unchanged', remove: async () => {} };
const events: EventRecorder = { record: async () => {} };

describe('a reconcile on a copy that is behind', () => {
  it('gets 409 on its first write and creates nothing; the next pass reads the object as it is and creates nothing either', async () => {
    const cloud = new InMemoryCloud();
    const objects = new InMemoryObjects();
    const externalName = 'media-photos-7f3a';
    // Finalizer and name already there (a webhook-defaulted name, an earlier pass): the first pass writes only create-pending.
    const asApplied = objects.put({
      apiVersion: 'k8or.io/v1alpha1',
      kind: 'Bucket',
      metadata: { name: 'photos', namespace: 'media', finalizers: [FINALIZER], annotations: { [Annotations.externalName]: externalName } },
      spec: { name: externalName },
    } as Bucket);
    // A reader that answers with the object as first applied, the way a cache that missed the engine's own writes would.
    let stale = false;
    const reader: ManagedResourceClient = {
      get: async (kind, namespace, name) => (stale ? structuredClone(asApplied) : await objects.get(kind, namespace, name)),
      patch: (resource, patch) => objects.patch(resource, patch),
      writeStatus: (resource, status) => objects.writeStatus(resource, status),
    };
    const reconciler = new ManagedReconciler('Bucket', { kube: reader, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs }, { clusterId: 'c1' });
    const request = { namespace: 'media', name: 'photos' };

    await reconciler.reconcile(request);
    assert.equal(cloud.callCount({ operation: 'create' }), 1);
    assert.ok(objects.peek('Bucket', 'media', 'photos')?.metadata.annotations?.[Annotations.createSucceeded]);

    // The cloud answers "not found" once (a read that lags its write), and the copy is the one from before the create.
    const created = cloud.buckets.get(externalName);
    assert.ok(created);
    cloud.buckets.delete(externalName);
    stale = true;
    const writesBefore = objects.writes.length;
    const outcome = await reconciler.reconcile(request);
    assert.deepEqual(outcome, { backoff: true }, 'a 409 ends the pass and asks for another');
    assert.equal(objects.writes.length, writesBefore, 'nothing was written from the stale copy');
    assert.equal(cloud.callCount({ operation: 'create' }), 1, 'no second create');

    cloud.buckets.set(externalName, created);
    stale = false;
    await reconciler.reconcile(request);
    assert.equal(cloud.callCount({ operation: 'create' }), 1);
    assert.equal(cloud.buckets.size, 1);
  });
});

/** The parts of an informer CachedManagedResources uses, driven by the test. */
class FakeInformer {
  readonly objects = new Map<string, ManagedObject>();
  readonly handlers: Record<string, ((obj: ManagedObject) => void)[]> = { add: [], update: [], delete: [] };
  readonly cache = { get: (key: string) => this.objects.get(key), addIndex: () => {}, byIndex: () => [] };
  synced = true;
  hasSynced = () => this.synced;
  on(event: string, handler: (obj: ManagedObject) => void): void {
    this.handlers[event]?.push(handler);
  }
  /** The watch delivers the object as stored. */
  deliver(obj: ManagedResource): void {
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const type = this.objects.has(key) ? 'update' : 'add';
    this.objects.set(key, structuredClone(obj) as ManagedObject);
    for (const handler of this.handlers[type] ?? []) handler(obj as ManagedObject);
  }
  /** The watch delivers the deletion. */
  remove(obj: ManagedResource): void {
    this.objects.delete(`${obj.metadata.namespace}/${obj.metadata.name}`);
    for (const handler of this.handlers['delete'] ?? []) handler(obj as ManagedObject);
  }
}

class CountingObjects extends InMemoryObjects {
  gets = 0;
  override async get(kind: ManagedKindName, namespace: string, name: string): Promise<ManagedResource | undefined> {
    this.gets++;
    return await super.get(kind, namespace, name);
  }
}

describe('CachedManagedResources', () => {
  it('finds every object naming one external name from the cache index, and none before the cache has synced', () => {
    const cache = new ObjectCache<ManagedObject>();
    const informer = { cache, synced: false, hasSynced(): boolean { return this.synced; }, on: () => {} };
    const client = new CachedManagedResources(new InMemoryObjects());
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    const named = (name: string, external: string) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: 'media', resourceVersion: '1' }, spec: { name: external } }) as ManagedObject;
    cache.set(named('first', 'orders'));
    cache.set(named('second', 'orders'));
    cache.set(named('other', 'photos'));
    assert.deepEqual(client.withExternalName('Bucket', 'orders'), [], 'an unsynced cache answers nothing');
    informer.synced = true;
    assert.deepEqual(client.withExternalName('Bucket', 'orders').map((o) => o.metadata.name).sort(), ['first', 'second']);
    assert.deepEqual(client.withExternalName('Table', 'orders'), [], 'per kind');
  });

  const bucket = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: {} } as Bucket;

  it('reads from the cache once it shows the last write, and live until then', async () => {
    const live = new CountingObjects();
    const informer = new FakeInformer();
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    informer.deliver(live.put(bucket));

    const read = await client.get('Bucket', 'media', 'photos');
    assert.equal(live.gets, 0, 'a fresh cache answers');
    assert.ok(read);
    const written = await client.patch(read, { annotations: { team: 'media' }, guarded: true });
    await client.get('Bucket', 'media', 'photos');
    assert.equal(live.gets, 1, 'the cache has not shown the write yet: live');
    informer.deliver(written);
    const again = await client.get('Bucket', 'media', 'photos');
    assert.equal(live.gets, 1, 'the cache caught up: cached again');
    assert.equal(again?.metadata.annotations?.team, 'media');
    again!.metadata.annotations!.team = 'changed';
    assert.equal(informer.objects.get('media/photos')?.metadata.annotations?.team, 'media', 'callers get their own copy');
  });

  it('after a 409 reads live until the cache agrees with the API server', async () => {
    const live = new CountingObjects();
    const informer = new FakeInformer();
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    const stored = live.put(bucket);
    informer.deliver(stored);
    // Someone else writes; the cache has not seen it yet.
    const changed = await live.patch(stored, { annotations: { owner: 'someone' } });
    const copy = await client.get('Bucket', 'media', 'photos');
    assert.equal(copy?.metadata.resourceVersion, stored.metadata.resourceVersion, 'the cache is behind');
    await assert.rejects(client.patch(copy!, { annotations: { x: 'y' }, guarded: true }), (error: { status?: number }) => error.status === 409);

    const fresh = await client.get('Bucket', 'media', 'photos');
    assert.equal(fresh?.metadata.resourceVersion, changed.metadata.resourceVersion, 'read live after the conflict');
    assert.equal(live.gets, 1);
    informer.deliver(changed);
    await client.get('Bucket', 'media', 'photos');
    assert.equal(live.gets, 1, 'the cache shows what the live read saw: cached again');
  });

  it('answers "absent" from a synced cache without a GET: the watch said the object is gone', async () => {
    const live = new CountingObjects();
    const informer = new FakeInformer();
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    const stored = live.put({ ...bucket, metadata: { ...bucket.metadata, finalizers: [FINALIZER] } });
    informer.deliver(stored);
    live.markDeleted('Bucket', 'media', 'photos');
    const deleting = await live.get('Bucket', 'media', 'photos');
    informer.deliver(deleting!);
    live.gets = 0;

    // The engine releases its finalizer (the object goes); until the watch says so, reads are live.
    const released = await client.patch(deleting!, { finalizers: [] });
    assert.equal(await client.get('Bucket', 'media', 'photos'), undefined);
    assert.equal(live.gets, 1, 'the cache has not seen the release yet: live');
    informer.remove(released);
    assert.equal(await client.get('Bucket', 'media', 'photos'), undefined);
    assert.equal(live.gets, 1, 'the watch delivered the deletion: no GET');

    // Created again under the same name: its ADDED event brings it into the cache.
    informer.deliver(live.put(bucket));
    assert.equal((await client.get('Bucket', 'media', 'photos'))?.metadata.name, 'photos');
    assert.equal(live.gets, 1);
  });

  it('answers "absent" without a GET when the watch told of the deletion before the release was answered', async () => {
    // The watch and the write come on two connections: the DELETED event can be read first.
    const informer = new FakeInformer();
    class DeletedBeforeAnswered extends CountingObjects {
      override async patch(resource: ManagedResource, patch: ManagedPatch): Promise<ManagedResource> {
        const stored = await super.patch(resource, patch);
        if (stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length) informer.remove(stored);
        return stored;
      }
    }
    const live = new DeletedBeforeAnswered();
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    informer.deliver(live.put({ ...bucket, metadata: { ...bucket.metadata, finalizers: [FINALIZER] } }));
    live.markDeleted('Bucket', 'media', 'photos');
    const deleting = await live.get('Bucket', 'media', 'photos');
    informer.deliver(deleting!);
    live.gets = 0;

    await client.patch(deleting!, { finalizers: [] });
    assert.equal(await client.get('Bucket', 'media', 'photos'), undefined);
    assert.equal(live.gets, 0, 'the cache already lacks it, and there is nothing of ours left to see');
  });

  it('reads live while the cache has not synced', async () => {
    const live = new CountingObjects();
    const informer = new FakeInformer();
    informer.synced = false;
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    live.put(bucket);
    assert.equal((await client.get('Bucket', 'media', 'photos'))?.metadata.name, 'photos', 'found by the live read');
    assert.equal(live.gets, 1);
  });
});

describe('a delete decided on a cached copy that is behind', () => {
  it('keeps the finalizer another writer added meanwhile: the release gets 409, the next pass reads the object as it is', async () => {
    const cloud = new InMemoryCloud();
    const live = new InMemoryObjects();
    const informer = new FakeInformer();
    const client = new CachedManagedResources(live);
    client.track('Bucket', informer as unknown as Informer<ManagedObject>);
    const reconciler = new ManagedReconciler('Bucket', { kube: client, lookups, providers: new Map([['aws', inMemoryProviderPlugin(cloud)]]), events, outputs }, { clusterId: 'c1' });
    const request = { namespace: 'media', name: 'photos' };
    const externalName = 'media-photos-race';
    informer.deliver(live.put({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: { name: externalName } } as Bucket));
    await reconciler.reconcile(request);
    assert.ok(cloud.buckets.has(externalName));
    informer.deliver(live.peek('Bucket', 'media', 'photos')!);

    // kubectl delete, seen by the cache; then a backup tool adds its finalizer, not yet seen by the cache.
    live.markDeleted('Bucket', 'media', 'photos');
    informer.deliver(live.peek('Bucket', 'media', 'photos')!);
    const edited = live.peek('Bucket', 'media', 'photos')!;
    await live.patch(edited, { finalizers: [...(edited.metadata.finalizers ?? []), 'backup.example.com/keep'] });

    assert.deepEqual(await reconciler.reconcile(request), { backoff: true }, 'the release on the stale copy is refused');
    assert.equal(cloud.buckets.has(externalName), false, 'the cloud bucket was deleted (the copy said: deleting, policy Delete)');
    assert.deepEqual(live.peek('Bucket', 'media', 'photos')?.metadata.finalizers, [FINALIZER, 'backup.example.com/keep'], 'nothing dropped');

    await reconciler.reconcile(request);
    assert.deepEqual(live.peek('Bucket', 'media', 'photos')?.metadata.finalizers, ['backup.example.com/keep'], 'only ours released, on the live copy');
    assert.equal(cloud.callCount({ operation: 'delete' }), 1, 'the second pass found the bucket gone and deleted nothing');
  });
});

describe('the status write', () => {
  it('sends identity, the resourceVersion precondition and status only: no spec, no managedFields', async () => {
    let received: Record<string, unknown> | undefined;
    let path = '';
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        path = `${req.method} ${req.url}`;
        received = JSON.parse(body) as Record<string, unknown>;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const rest = new KubeRest(kubeConfig);
    try {
      const resource = {
        apiVersion: 'k8or.io/v1alpha1',
        kind: 'Bucket',
        metadata: { name: 'photos', namespace: 'media', uid: 'u-1', resourceVersion: '42', labels: { a: 'b' }, managedFields: [{ manager: 'kubectl', operation: 'Update' }] },
        spec: { name: 'media-photos', versioning: true },
      } as unknown as Bucket;
      await new KubeManagedResources(rest).writeStatus(resource, { observedGeneration: 1 });
      assert.equal(path, 'PUT /apis/k8or.io/v1alpha1/namespaces/media/buckets/photos/status');
      assert.deepEqual(received, {
        apiVersion: 'k8or.io/v1alpha1',
        kind: 'Bucket',
        metadata: { name: 'photos', namespace: 'media', uid: 'u-1', resourceVersion: '42' },
        status: { observedGeneration: 1 },
      });
    } finally {
      rest.close();
      server.close();
    }
  });
});

describe('the engine against the API server', () => {
  let world: World;
  before(async () => {
    world = await World.start();
  });
  after(async () => {
    await world.stop();
  });

  it('creates and resyncs a Bucket without a GET of it: the informer cache answers', async () => {
    await world.startEngine({ resyncPeriodMs: 300 });
    const namespace = await world.newNamespace();
    const from = world.sandbox.requestLog.length;
    // spec.name as the mutating webhook defaults it: one pass creates. (When the engine fills it in,
    // the generation moves and the second pass reads live once: the cache may not show the first pass's writes yet.)
    await world.createBucket(namespace, 'photos', { name: `${namespace}-photos-cache`, versioning: true });
    const ready = await world.waitForBucket(namespace, 'photos', 'Ready and Synced', isReadyAndSynced);
    const name = ready.spec.name ?? '';
    const observed = world.cloud.callCount({ operation: 'observe', name });
    await waitFor('three more resyncs', () => world.cloud.callCount({ operation: 'observe', name }) >= observed + 3);

    const engineGets = world.engineRequests(from).filter((r) => r.verb === 'get' && r.resource === 'buckets');
    assert.deepEqual(engineGets, [], 'no GET of the Bucket on create or on resync');
    const created = world.engineWrites(from).filter((w) => w.includes('buckets'));
    assert.ok(created.length <= 4, `writes to the Bucket: ${created.join(', ')}`);
    assert.equal(world.cloud.callCount({ operation: 'create', name }), 1);
  });

  it('deletes a Bucket without a GET of it: the pass after the finalizer goes learns from the watch that the object is gone', async () => {
    // One engine: the earlier test's would reconcile (and count) too.
    for (const earlier of world.engines) await earlier.stop();
    const metrics = new CoreMetrics();
    await world.startEngine({ resyncPeriodMs: 3_600_000, metrics });
    // Passes that ended with nothing more to do: a delete's two (below), and nothing before it.
    const finished = async () => (await metrics.reconcileTotal.get()).values.find((v) => v.labels.controller === 'bucket' && v.labels.result === 'success')?.value ?? 0;
    const namespace = await world.newNamespace();
    const names = ['a', 'b', 'c'];
    for (const name of names) await world.createBucket(namespace, name, { name: `${namespace}-${name}-delete-reads` });
    for (const name of names) await world.waitForBucket(namespace, name, 'Ready and Synced', isReadyAndSynced);
    const from = world.sandbox.requestLog.length;
    const finishedBefore = await finished();
    for (const name of names) await world.deleteBucket(namespace, name);
    for (const name of names) await world.waitForBucketGone(namespace, name);
    // Two passes per Bucket, each starting with a read: the one that deletes (deletionTimestamp set) and the one the DELETED event queues.
    await waitFor('both passes of each delete', async () => (await finished()) >= finishedBefore + 2 * names.length);

    const engineGets = world.engineRequests(from).filter((r) => r.resource === 'buckets' && r.verb === 'get');
    assert.deepEqual(engineGets.map((r) => `${r.name} ${r.status}`), [], 'no GET of a Bucket while deleting it, nor after');
    // What a delete writes: the Deleted Event and the finalizer's release, per Bucket.
    assert.deepEqual(world.engineWrites(from).filter((w) => w.includes('buckets')).sort(), names.map((name) => `patch buckets ${name}`));
    for (const name of names) assert.equal(world.cloud.buckets.has(`${namespace}-${name}-delete-reads`), false);
  });

  it('keeps the finalizer while the read on delete is denied (a 403 is not "gone"), and lets the object go once the cloud answers', async () => {
    if (world.engines.every((engine) => !engine.isActive())) await world.startEngine({ resyncPeriodMs: 3_600_000 });
    const namespace = await world.newNamespace();
    const externalName = `${namespace}-denied-delete-reads`;
    await world.createBucket(namespace, 'denied', { name: externalName });
    await world.waitForBucket(namespace, 'denied', 'Ready and Synced', isReadyAndSynced);
    const clear = world.cloud.failWith({ operation: 'probe', name: externalName }, () => new TerminalError('Access Denied', { code: 'AccessDenied' }));
    try {
      await world.deleteBucket(namespace, 'denied');
      const stuck = await world.waitForBucket(namespace, 'denied', 'the denied read reported', (b) => condition(b, 'Synced')?.reason === Reasons.CannotObserveExternalResource);
      assert.match(condition(stuck, 'Synced')?.message ?? '', /AccessDenied/);
      assert.deepEqual(stuck.metadata.finalizers, [FINALIZER]);
      assert.ok(world.cloud.buckets.has(externalName));
      assert.equal(world.cloud.callCount({ operation: 'delete', name: externalName }), 0);
    } finally {
      clear();
    }
    // The terminal error waits for the resync; a touch (as a user's edit would) brings the next pass.
    await world.patchBucket(namespace, 'denied', { metadata: { annotations: { touched: 'yes' } } });
    await world.waitForBucketGone(namespace, 'denied');
    assert.equal(world.cloud.buckets.has(externalName), false);
  });
});
