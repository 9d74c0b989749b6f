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
  KubeManagedResources,
  KubeRest,
  ManagedReconciler,
  type ConfigLookups,
  type EventRecorder,
  type Informer,
  type ManagedObject,
  type ManagedResourceClient,
  type OutputsWriter,
} from '@k8or/core';
import { InMemoryCloud, InMemoryObjects, inMemoryProviderPlugin } from '@k8or/core/testing';
import { World, isReadyAndSynced, waitFor } from './engine-harness.ts';

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
  readonly cache = { get: (key: string) => this.objects.get(key) };
  hasSynced = () => true;
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
}

class CountingObjects extends InMemoryObjects {
  gets = 0;
  override async get(kind: ManagedKindName, namespace: string, name: string): Promise<ManagedResource | undefined> {
    this.gets++;
    return await super.get(kind, namespace, name);
  }
}

describe('CachedManagedResources', () => {
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
    await world.startEngine({ resyncPeriodMs: 300, resyncJitter: 0 });
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
});
