// The engine's ownership rules (DESIGN.md "Rules that protect data"), each through the
// reconcile algorithm over the in-memory provider and the in-memory API ports: a refused create,
// a replaced resource, a moved target, two objects on one resource, protection, and the truth of
// Synced.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Annotations, ConditionTypes, type Bucket, type ManagedKindName, type ManagedResource, type ProviderConfig, type Table } from '@k8or/api';
import { KubeApiError, ManagedReconciler, NotOwnedError, Reasons, delayAfterCheck, RetryableError, perObjectNameToken, type ExternalClient, type NamingRules, type ProviderPlugin, type ReconcileOutcome } from '@k8or/core';
import { InMemoryCloud, InMemoryEvents, InMemoryLookups, InMemoryObjects, inMemoryProviderPlugin, noOutputs, type CloudTable } from '@k8or/core/testing';

/** A fixed clock: the next drift check's slot is then a known delay. */
const NOW = Date.parse('2026-11-27T12:00:00Z');
const NS = 'media';

function providerConfig(spec: Partial<ProviderConfig['spec']> = {}): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'mem-1', ...spec } };
}

function bucket(name: string, spec: Bucket['spec'] = {}, created?: string): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: NS, ...(created ? { creationTimestamp: created } : {}) }, spec: { deletionPolicy: 'Delete', ...spec } };
}

function table(name: string, spec: Partial<Table['spec']> = {}): Table {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace: NS }, spec: { deletionPolicy: 'Delete', partitionKey: { name: 'id', type: 'string' }, ...spec } };
}

/** A table that exists in the cloud without k8or's create call having made it (or its answer having come back). */
function madeInCloud(cloud: InMemoryCloud, name: string, facts: Pick<CloudTable, 'tags' | 'state' | 'observesLeft'>): CloudTable {
  return {
    name,
    location: 'mem-1',
    partitionKey: { name: 'id', type: 'string' },
    billing: { mode: 'onDemand' },
    pointInTimeRecovery: false,
    labels: {},
    itemCount: 0,
    createdTime: cloud.timestamp(),
    ...facts,
  };
}

/** A world of one kind: in-memory cloud, API objects, lookups and events, and a reconciler over them. */
function world(kind: ManagedKindName = 'Bucket', plugin?: (cloud: InMemoryCloud) => ProviderPlugin) {
  const cloud = new InMemoryCloud();
  const objects = new InMemoryObjects();
  const lookups = new InMemoryLookups();
  const events = new InMemoryEvents();
  lookups.providerConfigs.set('default', providerConfig());
  const provider = plugin ? plugin(cloud) : inMemoryProviderPlugin(cloud);
  const reconciler = new ManagedReconciler(kind, { kube: objects, lookups, providers: new Map([['aws', provider]]), events, outputs: noOutputs }, { clusterId: 'c1', pollIntervalMs: 2_000, now: () => new Date(NOW) });
  const reconcile = async (name: string): Promise<ReconcileOutcome> => await reconciler.reconcile({ namespace: NS, name });
  const object = (name: string): ManagedResource | undefined => objects.peek(kind, NS, name);
  const synced = (name: string) => object(name)?.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
  return { cloud, objects, lookups, events, reconcile, object, synced };
}

/** The in-memory plugin whose clients' `update` is replaced (a cloud operation that has not taken effect yet, say). */
function withUpdate(base: ProviderPlugin, update: (inner: ExternalClient, ...args: Parameters<ExternalClient['update']>) => ReturnType<ExternalClient['update']>): ProviderPlugin {
  const wrap = (connector: NonNullable<ProviderPlugin['connectors']['Bucket']>) => ({
    connect: async (...args: Parameters<typeof connector.connect>) => {
      const inner = (await connector.connect(...args)) as unknown as ExternalClient;
      const client: ExternalClient = {
        observe: (r, c) => inner.observe(r, c),
        create: (r, c) => inner.create(r, c),
        update: (r, o, c) => update(inner, r, o, c),
        delete: (r, c) => inner.delete(r, c),
      };
      return client as never;
    },
  });
  return { ...base, connectors: { ...base.connectors, Bucket: wrap(base.connectors.Bucket as NonNullable<ProviderPlugin['connectors']['Bucket']>) } };
}

/** A Bucket world whose client calls `afterCreate` once each create has landed in the cloud (a spec edit meanwhile; a throw: its answer lost). */
function worldAfterCreate(afterCreate: (w: ReturnType<typeof world>) => void): ReturnType<typeof world> {
  const w: ReturnType<typeof world> = world('Bucket', (cloud) => {
    const base = inMemoryProviderPlugin(cloud);
    const connector = base.connectors.Bucket as NonNullable<ProviderPlugin['connectors']['Bucket']>;
    return {
      ...base,
      connectors: {
        ...base.connectors,
        Bucket: {
          connect: async (...args: Parameters<typeof connector.connect>) => {
            const inner = (await connector.connect(...args)) as unknown as ExternalClient;
            const client: ExternalClient = {
              observe: (r, c) => inner.observe(r, c),
              create: async (r, c) => {
                await inner.create(r, c);
                afterCreate(w);
              },
              update: (r, o, c) => inner.update(r, o, c),
              delete: (r, c) => inner.delete(r, c),
            };
            return client as never;
          },
        },
      },
    };
  });
  return w;
}

describe('ownership, decided from evidence', () => {
  it('a create refused before any effect (SlowDown) records create-failed; a bucket someone else then makes under the name is never taken, nor deleted', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-shared' }));
    w.cloud.failWith({ operation: 'create' }, () => new RetryableError('Please reduce your request rate.', { code: 'SlowDown', noEffect: true }), 1);
    const first = await w.reconcile('photos');
    assert.equal(first.backoff, true, 'a throttle is retried');
    const annotations = w.object('photos')?.metadata.annotations ?? {};
    assert.ok(annotations[Annotations.createFailed], 'create-failed recorded');
    assert.equal(annotations[Annotations.createPending], undefined, 'the outcome is known: no pending marker');

    // Someone else creates the name by hand, untagged.
    w.cloud.buckets.set('photos-shared', { name: 'photos-shared', location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 7, createdTime: new Date().toISOString(), uid: 'theirs' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.NotOwned);
    assert.equal(w.cloud.callCount({ operation: 'update' }), 0, 'no tag or setting written');
    assert.deepEqual(w.cloud.buckets.get('photos-shared')?.tags, {}, 'not taken over');

    w.objects.markDeleted('Bucket', NS, 'photos');
    await w.reconcile('photos');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, 'never deleted');
    assert.equal(w.cloud.buckets.get('photos-shared')?.objects, 7);
    assert.equal(w.object('photos'), undefined, 'the finalizer is released: nothing of ours is there');
  });

  it('a create refused after an earlier create with an unknown outcome keeps create-pending: the earlier one may still land', async () => {
    const w = world();
    w.objects.put(bucket('media', { name: 'media-bucket' }));
    w.cloud.failWith({ kind: 'Bucket', operation: 'create' }, () => new RetryableError('InternalServerError', { code: 'InternalServerError' }), 1);
    await w.reconcile('media');
    w.cloud.failWith({ kind: 'Bucket', operation: 'create' }, () => new RetryableError('SlowDown', { code: 'SlowDown', noEffect: true }), 1);
    await w.reconcile('media');
    const annotations = w.object('media')?.metadata.annotations ?? {};
    assert.equal(annotations[Annotations.createFailed], undefined, 'no create-failed: the first create may have made the bucket');
    assert.ok(annotations[Annotations.createPending], 'create-pending kept');
  });

  it('an unknown create outcome (a 500) keeps create-pending; an untagged bucket found there is not ours', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-unknown' }));
    w.cloud.failWith({ operation: 'create' }, () => new RetryableError('InternalError', { code: 'InternalError' }), 1);
    await w.reconcile('photos');
    const annotations = w.object('photos')?.metadata.annotations ?? {};
    assert.ok(annotations[Annotations.createPending], 'outcome unknown: pending stays');
    assert.equal(annotations[Annotations.createFailed], undefined);
    w.cloud.buckets.set('photos-unknown', { name: 'photos-unknown', location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 0, createdTime: new Date().toISOString(), uid: 'who-knows' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.NotOwned);
    assert.match(w.synced('photos')?.message ?? '', /unknown outcome/);
    assert.equal(w.cloud.callCount({ operation: 'update' }), 0);
  });

  it('created, then replaced by someone else under the same name (tags gone, another identity): stops, writes nothing, deletes nothing', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-replaced' }));
    await w.reconcile('photos');
    const recorded = w.object('photos')?.status?.identity;
    assert.ok(recorded?.uid, 'the identity is recorded at creation');
    assert.deepEqual(w.object('photos')?.status?.target, { provider: 'aws', region: 'mem-1', endpoint: '' }, 'and the target');

    w.cloud.buckets.delete('photos-replaced');
    w.cloud.buckets.set('photos-replaced', { name: 'photos-replaced', location: 'mem-1', versioning: true, tags: {}, labels: {}, objects: 2, createdTime: new Date().toISOString(), uid: 'someone-elses' });
    const updates = w.cloud.callCount({ operation: 'update' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ExternalResourceReplaced);
    assert.equal(w.cloud.callCount({ operation: 'update' }), updates, 'never written');
    w.objects.markDeleted('Bucket', NS, 'photos');
    await w.reconcile('photos');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, 'never deleted');
    assert.ok(w.cloud.buckets.has('photos-replaced'));
  });

  it('replaced between its create and the observe right after: the replacement\'s identity is never recorded as ours, nothing is written to it, and the delete leaves it', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-raced' }));
    // Right after k8or's create, someone deletes the new bucket and makes their own under the name.
    let creates = 0;
    w.cloud.onCall((call) => {
      if (call.operation === 'create') creates++;
      if (call.operation === 'observe' && creates === 1 && w.cloud.buckets.get('photos-raced')?.uid !== 'theirs') {
        w.cloud.buckets.set('photos-raced', { name: 'photos-raced', location: 'mem-1', versioning: false, tags: {}, labels: {}, objects: 3, createdTime: '2026-01-01T00:00:00Z', uid: 'theirs' });
      }
    });
    await w.reconcile('photos');
    assert.notEqual(w.object('photos')?.status?.identity?.['uid'], 'theirs', 'their identity is not recorded as this object\'s');
    assert.equal(w.synced('photos')?.reason, Reasons.NotOwned);
    const updates = w.cloud.callCount({ operation: 'update' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.NotOwned, 'still not this object\'s');
    assert.equal(w.cloud.callCount({ operation: 'update' }), updates, 'no tag or setting written on their bucket');
    w.objects.markDeleted('Bucket', NS, 'photos');
    for (let i = 0; i < 3 && w.object('photos'); i++) await w.reconcile('photos');
    assert.equal(w.object('photos'), undefined, 'the object goes');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, 'their bucket is never deleted');
    assert.equal(w.cloud.buckets.get('photos-raced')?.objects, 3);
  });

  it('created, tags removed behind its back, same identity: still ours, the tags are written again', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-untagged' }));
    await w.reconcile('photos');
    const found = w.cloud.buckets.get('photos-untagged');
    assert.ok(found);
    found.tags = {};
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.cloud.buckets.get('photos-untagged')?.tags['k8or.io/cluster'], 'c1');
  });

  it('the target is pinned: a ProviderConfig moved to another region stops the object with no cloud call; rotated credentials keep working', async () => {
    const w = world();
    w.lookups.providerConfigs.set('default', providerConfig({ credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'creds' } } }));
    w.lookups.secrets.set('k8or-system/creds', { accessKeyId: 'AKIAOLD', secretAccessKey: 'S3CRET-OLD' });
    w.objects.put(bucket('photos', { name: 'photos-pinned' }));
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);

    w.lookups.secrets.set('k8or-system/creds', { accessKeyId: 'AKIANEW', secretAccessKey: 'S3CRET-NEW' });
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess, 'the same target with new keys');

    w.lookups.providerConfigs.set('default', providerConfig({ region: 'mem-2', credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'creds' } } }));
    w.cloud.buckets.delete('photos-pinned'); // as the new region would answer: not found
    const calls = w.cloud.calls.length;
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.TargetChanged);
    assert.match(w.synced('photos')?.message ?? '', /region=mem-1.*region=mem-2/);
    assert.doesNotMatch(w.synced('photos')?.message ?? '', /S3CRET|AKIA/, 'no credential in the message');
    assert.equal(w.cloud.calls.length, calls, 'no cloud call at all: no second resource');
    assert.equal(w.cloud.buckets.size, 0);

    w.objects.markDeleted('Bucket', NS, 'photos');
    await w.reconcile('photos');
    assert.equal(w.cloud.calls.length, calls, 'nor a delete somewhere else');
    assert.equal(w.synced('photos')?.reason, Reasons.TargetChanged, 'the finalizer stays until the target is back or the policy is Retain');
  });

  it('two objects naming one cloud resource: the older manages it, the newer gets a condition and never calls the cloud', async () => {
    const w = world();
    w.objects.put(bucket('first', { name: 'orders-shared' }, '2026-01-01T00:00:00Z'));
    w.objects.put(bucket('second', { name: 'orders-shared' }, '2026-01-02T00:00:00Z'));
    await w.reconcile('second');
    assert.equal(w.synced('second')?.reason, Reasons.DuplicateCloudResource);
    assert.match(w.synced('second')?.message ?? '', /media\/first/);
    assert.equal(w.cloud.calls.length, 0, 'the newer never calls the cloud');
    await w.reconcile('first');
    assert.equal(w.synced('first')?.reason, Reasons.ReconcileSuccess);
    const calls = w.cloud.calls.length;
    await w.reconcile('second');
    assert.equal(w.cloud.calls.length, calls);
    // Deleting the newer never deletes the older's resource, and makes no cloud call either.
    w.objects.markDeleted('Bucket', NS, 'second');
    await w.reconcile('second');
    assert.equal(w.cloud.calls.length, calls, 'the newer never calls the cloud, not even to delete');
    assert.ok(w.cloud.buckets.has('orders-shared'));
    assert.equal(w.object('second'), undefined);
  });

  it('two objects admitted at once: the one whose create made the resource keeps it, though the other is older; the older stops and never calls the cloud', async () => {
    // Both admitted in one moment; the younger (by creationTimestamp, or by uid within one second)
    // was reconciled before the older reached the cache, and created the bucket.
    const w = world();
    w.objects.put(bucket('younger', { name: 'orders-raced' }, '2026-01-02T00:00:00Z'));
    await w.reconcile('younger');
    assert.equal(w.synced('younger')?.reason, Reasons.ReconcileSuccess);
    w.objects.put(bucket('older', { name: 'orders-raced' }, '2026-01-01T00:00:00Z'));
    const calls = w.cloud.calls.length;
    await w.reconcile('older');
    assert.equal(w.synced('older')?.reason, Reasons.DuplicateCloudResource);
    assert.match(w.synced('older')?.message ?? '', /media\/younger/);
    assert.equal(w.cloud.calls.length, calls, 'the older never calls the cloud');
    await w.reconcile('younger');
    assert.equal(w.synced('younger')?.reason, Reasons.ReconcileSuccess, 'the object that made the resource goes on managing it');
    w.objects.markDeleted('Bucket', NS, 'younger');
    await w.reconcile('younger');
    assert.equal(w.cloud.buckets.has('orders-raced'), false, 'and its delete deletes it: nothing is left with no object');
  });
});

describe('a kind whose cloud has neither tags nor an identity (an Azure table, a Bigtable table)', () => {
  // Two objects naming one table through two ProviderConfigs whose targets read differently
  // (an endpoint alias), so the one-object-per-resource check cannot see them as one.
  function twoObjects() {
    const w = world('Table', (cloud) => inMemoryProviderPlugin(cloud, { reports: 'none' }));
    w.lookups.providerConfigs.set('alias', { ...providerConfig({ endpoint: 'http://127.0.0.1:8000' }), metadata: { name: 'alias' } });
    w.lookups.providerConfigs.set('default', providerConfig({ endpoint: 'http://localhost:8000' }));
    w.objects.put(table('first', { name: 'orders' }));
    w.objects.put(table('second', { name: 'orders', providerConfigRef: { name: 'alias' } }));
    return w;
  }

  for (const [outcome, error, marker] of [
    ['refused (a throttle before any effect)', () => new RetryableError('Rate exceeded', { code: 'ThrottlingException', noEffect: true }), Annotations.createFailed],
    ['unknown (a 500)', () => new RetryableError('InternalServerError', { code: 'InternalServerError' }), Annotations.createPending],
  ] as const) {
    it(`a second object whose create was ${outcome} never takes the first one's table, nor deletes it`, async () => {
      const w = twoObjects();
      w.cloud.failWith({ kind: 'Table', operation: 'create' }, error, 1);
      await w.reconcile('second');
      assert.ok(w.object('second')?.metadata.annotations?.[marker], `${marker} recorded`);
      await w.reconcile('first');
      assert.equal(w.synced('first')?.reason, Reasons.ReconcileSuccess);
      await w.reconcile('second');
      assert.equal(w.synced('second')?.reason, Reasons.NotOwned);
      assert.ok(!w.object('second')?.metadata.annotations?.[Annotations.createSucceeded], 'never recorded as its own');
      w.objects.markDeleted('Table', NS, 'second');
      await w.reconcile('second');
      assert.equal(w.object('second'), undefined, 'the second object goes');
      assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, "the first one's table is not deleted");
      assert.ok(w.cloud.tables.has('orders'));
      await w.reconcile('first');
      assert.equal(w.synced('first')?.reason, Reasons.ReconcileSuccess, 'the first object still manages it: the record of its create is its evidence');
    });
  }
});

describe('a create with an unknown outcome whose table is not usable yet (DynamoDB lists tags only once ACTIVE)', () => {
  it('waits, writing nothing, until the tags can be read; then the tags prove it ours and the create is finished', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-creating' }));
    // The create landed with our tags, but its answer was lost (a 500 after the effect).
    w.cloud.failWith({ kind: 'Table', operation: 'create' }, () => new RetryableError('InternalServerError', { code: 'InternalServerError' }), 1);
    await w.reconcile('orders');
    assert.ok(w.object('orders')?.metadata.annotations?.[Annotations.createPending]);
    const expected = { 'k8or.io/managed-by': 'k8or', 'k8or.io/cluster': 'c1', 'k8or.io/namespace': NS, 'k8or.io/name': 'orders', 'k8or.io/kind': 'Table' };
    w.cloud.tables.set('orders-creating', madeInCloud(w.cloud, 'orders-creating', { tags: expected, state: 'CREATING', observesLeft: 1 }));
    const first = await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.Creating, 'not NotOwned: the tags are not readable yet');
    assert.ok((first.requeueAfterMs ?? Infinity) <= 2_000, 'looked at again at the poll interval');
    assert.equal(w.cloud.callCount({ operation: 'update' }), 0);
    for (let i = 0; i < 3 && w.synced('orders')?.reason !== Reasons.ReconcileSuccess; i++) await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess);
    assert.ok(w.object('orders')?.metadata.annotations?.[Annotations.createSucceeded]);
  });

  it('an untagged table made by someone else is still not taken once it is usable', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-theirs' }));
    w.cloud.failWith({ kind: 'Table', operation: 'create' }, () => new RetryableError('InternalServerError', { code: 'InternalServerError' }), 1);
    await w.reconcile('orders');
    w.cloud.tables.set('orders-theirs', madeInCloud(w.cloud, 'orders-theirs', { tags: {}, state: 'CREATING', observesLeft: 1 }));
    for (let i = 0; i < 4; i++) await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.NotOwned);
    assert.equal(w.cloud.callCount({ operation: 'update' }), 0);
  });
});

describe('a kind without tags whose create makes its own identity marker (a Bigtable table, an Azure table)', () => {
  /**
   * The in-memory Table client as a cloud without tags whose create makes the table's identity
   * itself (Bigtable's marker family, the Azure table's marker policy): no owner tags, the identity
   * reported while `readable` (an Azure SAS may not read a table's ACL), and create returning the
   * identity it made (none while the marker cannot be made). `afterCreate` runs after each create.
   */
  function markerWorld() {
    const settings = { readable: true, afterCreate: (): void => undefined };
    const w = world('Table', (cloud) => {
      const base = inMemoryProviderPlugin(cloud);
      const tables = base.connectors.Table as NonNullable<ProviderPlugin['connectors']['Table']>;
      const marker = (name: string) => {
        const found = cloud.tables.get(name);
        return found ? { marker: `k8or-id-${found.uid ?? found.createdTime}` } : undefined;
      };
      const facts = <T extends { ownerTags?: unknown; identity?: unknown }>(found: T, name: string): T => {
        const { ownerTags: _tags, identity: _identity, ...rest } = found;
        const identity = settings.readable && 'exists' in found && found.exists ? marker(name) : undefined;
        return { ...rest, ...(identity ? { identity } : {}) } as T;
      };
      const connector = {
        connect: async (...args: Parameters<typeof tables.connect>) => {
          const inner = (await tables.connect(...args)) as unknown as ExternalClient;
          const name = args[1].externalName;
          const client: ExternalClient = {
            observe: async (r, c) => facts(await inner.observe(r, c), name),
            probe: async (r, c) => facts(await inner.probe!(r, c), name),
            create: async (r, c) => {
              if (cloud.tables.has(name)) throw new NotOwnedError(`"${name}" already exists`, { code: 'AlreadyExists' });
              await inner.create(r, c);
              settings.afterCreate();
              const identity = settings.readable ? marker(name) : undefined;
              return identity ? { identity } : {};
            },
            update: (r, o, c) => inner.update(r, o, c),
            delete: (r, c) => inner.delete(r, c),
          };
          return client as never;
        },
      };
      return { ...base, connectors: { ...base.connectors, Table: connector } };
    });
    return { ...w, settings };
  }

  it('an observe throttled right after the create still leaves the identity recorded: the table stays the object\'s, and its delete removes it', async () => {
    const w = markerWorld();
    w.objects.put(table('orders', { name: 'orders-by-hand' }));
    // The observe right after the create meets a throttle (Bigtable's RESOURCE_EXHAUSTED).
    w.settings.afterCreate = () => void w.cloud.failWith({ kind: 'Table', operation: 'observe' }, () => new RetryableError('Quota exceeded', { code: 'RESOURCE_EXHAUSTED' }), 1);
    const first = await w.reconcile('orders');
    assert.equal(first.backoff, true, 'the throttled observe is retried');
    assert.ok(w.object('orders')?.metadata.annotations?.[Annotations.createSucceeded], 'the create is recorded');
    assert.match(w.object('orders')?.status?.identity?.['marker'] ?? '', /^k8or-id-/, 'and the identity it made, although no observe read it');
    w.settings.afterCreate = () => undefined;
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess, 'the recorded identity proves the table this object\'s');
    w.objects.markDeleted('Table', NS, 'orders');
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined);
    assert.ok(!w.cloud.tables.has('orders-by-hand'), 'the table is deleted with its object, not left behind');
  });

  it('moved to credentials that cannot read its identity: nothing proves the table the object\'s, so it is left on delete, and the condition says why', async () => {
    const w = markerWorld();
    w.objects.put(table('orders', { name: 'orders-by-hand' }));
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess);
    w.settings.readable = false;
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.NotOwned, 'a table without the recorded identity may be someone else\'s');
    assert.match(w.synced('orders')?.message ?? '', /identity recorded at creation \(marker=k8or-id-[^)]+\) is not found on it.*credentials cannot read it/);
    w.objects.markDeleted('Table', NS, 'orders');
    await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined, 'the object goes');
    assert.ok(w.cloud.tables.has('orders-by-hand'), 'and the table it cannot prove its own stays');
  });

  it('a table made again by its object (someone deleted it) where the marker cannot be made: the identity of the deleted one does not stay, and the delete, with nothing but the create record to go on, is blocked', async () => {
    const w = markerWorld();
    w.objects.put(table('orders', { name: 'orders-by-hand' }));
    await w.reconcile('orders');
    assert.ok(w.object('orders')?.status?.identity, 'the first table\'s identity is recorded');
    // Credentials that can neither read nor make the marker from now on (an Azure account SAS and a
    // table's ACL); someone deletes the table, and the object makes it again.
    w.settings.readable = false;
    w.cloud.tables.delete('orders-by-hand');
    await w.reconcile('orders');
    assert.ok(w.cloud.tables.has('orders-by-hand'), 'made again');
    assert.equal(w.object('orders')?.status?.identity, undefined, 'the deleted table\'s identity is gone from status');
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess, 'its own create is the evidence to manage it: nothing contradicts it');
    w.objects.markDeleted('Table', NS, 'orders');
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.DeletionBlocked, 'but not to delete it: nothing on the table shows it is still the one k8or made');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0);
    assert.ok(w.cloud.tables.has('orders-by-hand'), 'the table stays, and so does its object: nothing is leaked');
  });
});

describe('a kind with neither tags nor an identity, reached through credentials that can give it none (an Azure table through an account SAS)', () => {
  const NO_IDENTITY = 'these credentials may neither set nor read the identity';
  /** The in-memory Table client without tags or identity; `fact` also says so before any create (ExternalClient.identityUnavailable). */
  const sasWorld = (fact: boolean) => world('Table', (cloud) => inMemoryProviderPlugin(cloud, { reports: 'none', ...(fact ? { identityUnavailable: NO_IDENTITY } : {}) }));

  it('a table k8or made, deleted by someone else and made again by them under the name, is not deleted with the object: DeletionBlocked says why, and Retain lets the object go', async () => {
    // The fact unsaid (credentials whose ACL call is refused only at run time): k8or creates, under Delete.
    const w = sasWorld(false);
    w.objects.put(table('orders', { name: 'orders-sas' }));
    await w.reconcile('orders');
    assert.ok(w.object('orders')?.metadata.annotations?.[Annotations.createSucceeded], 'created');
    assert.equal(w.object('orders')?.status?.identity, undefined, 'with no identity to record');
    // Someone deletes it and makes their own under the name, with data.
    w.cloud.tables.delete('orders-sas');
    w.cloud.tables.set('orders-sas', { ...madeInCloud(w.cloud, 'orders-sas', { tags: {}, state: 'ACTIVE', observesLeft: 0 }), itemCount: 12 });
    w.objects.markDeleted('Table', NS, 'orders');
    for (let i = 0; i < 2; i++) await w.reconcile('orders');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, "the stranger's table is not deleted");
    assert.equal(w.cloud.tables.get('orders-sas')?.itemCount, 12);
    const blocked = w.synced('orders');
    assert.equal(blocked?.reason, Reasons.DeletionBlocked);
    assert.match(blocked?.message ?? '', /nothing on it shows it is still the one k8or created/);
    assert.match(blocked?.message ?? '', /spec\.deletionPolicy: Retain/);
    assert.ok(w.object('orders'), 'the object stays, holding the finalizer');

    const retained = { ...(w.object('orders') as Table), spec: { ...(w.object('orders') as Table).spec, deletionPolicy: 'Retain' as const } };
    w.objects.put(retained);
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined, 'Retain releases it');
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0);
    assert.ok(w.cloud.tables.has('orders-sas'));
  });

  it('deleted by the user first, the object goes: absent is absent', async () => {
    const w = sasWorld(false);
    w.objects.put(table('orders', { name: 'orders-sas' }));
    await w.reconcile('orders');
    w.objects.markDeleted('Table', NS, 'orders');
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.DeletionBlocked);
    w.cloud.tables.delete('orders-sas');
    for (let i = 0; i < 2 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined);
  });

  it('deletion policy Delete on credentials that say so is refused before any create, naming spec.deletionPolicy and the rule; Retain creates the table', async () => {
    const w = sasWorld(true);
    w.objects.put(table('orders', { name: 'orders-sas' }));
    await w.reconcile('orders');
    assert.equal(w.cloud.callCount({ operation: 'create' }), 0, 'nothing created');
    assert.ok(!w.cloud.tables.has('orders-sas'));
    const refused = w.synced('orders');
    assert.equal(refused?.status, 'False');
    assert.equal(refused?.reason, Reasons.IdentityUnavailable);
    assert.match(refused?.message ?? '', /spec\.deletionPolicy: Delete is refused .*rule deletion-policy\.needs-evidence/);
    assert.ok(refused?.message?.includes(NO_IDENTITY), 'and says why');
    assert.ok(!w.object('orders')?.metadata.finalizers?.length, 'no finalizer: the object goes freely');
    assert.equal(w.object('orders')?.metadata.annotations?.[Annotations.createPending], undefined, 'no create marker');

    const retained = { ...(w.object('orders') as Table), spec: { ...(w.object('orders') as Table).spec, deletionPolicy: 'Retain' as const } };
    w.objects.put(retained);
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess);
    assert.ok(w.cloud.tables.has('orders-sas'), 'created under Retain');
    w.objects.markDeleted('Table', NS, 'orders');
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined, 'and let go on delete');
    assert.ok(w.cloud.tables.has('orders-sas'));
  });
});

describe('a default name that carries the object\'s uid token (a kind without tags)', () => {
  // The naming rule of an Azure table or a Bigtable table, over the in-memory provider that reports neither tags nor an identity.
  const naming: NamingRules = {
    validate: () => [],
    defaultName: ({ namespace, name, uid }) => `${namespace}-${name}-${uid ? perObjectNameToken(uid) : 'none'}`,
    perObjectName: true,
  };
  const plugin = (cloud: InMemoryCloud): ProviderPlugin => ({ ...inMemoryProviderPlugin(cloud, { reports: 'none' }), naming: { Table: naming } });

  it('an unknown create outcome whose table did land is finished, and a delete removes it', async () => {
    const w = world('Table', plugin);
    w.objects.put(table('orders'));
    const uid = w.object('orders')?.metadata.uid ?? '';
    const external = `${NS}-orders-${perObjectNameToken(uid)}`;
    w.cloud.failWith({ kind: 'Table', operation: 'create' }, () => new RetryableError('InternalServerError', { code: 'InternalServerError' }), 1);
    await w.reconcile('orders');
    assert.equal(w.object('orders')?.spec.name, external, 'the engine names it, with the uid token, before the create');
    assert.ok(w.object('orders')?.metadata.annotations?.[Annotations.createPending]);
    // The create had its effect after all: the table is there, and nothing but its name is known about it.
    w.cloud.tables.set(external, madeInCloud(w.cloud, external, { tags: {}, state: 'ACTIVE', observesLeft: 0 }));
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess, 'the name proves it is this object\'s: the create is finished');
    w.objects.markDeleted('Table', NS, 'orders');
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined);
    assert.ok(!w.cloud.tables.has(external), 'the table is deleted with its object');
  });

  it('a second object named like the first gets another name, so it never shares the first one\'s table', async () => {
    const w = world('Table', plugin);
    w.objects.put(table('orders'));
    await w.reconcile('orders');
    const first = w.object('orders')?.spec.name ?? '';
    w.objects.markDeleted('Table', NS, 'orders');
    const retained = { ...(w.object('orders') as Table), spec: { ...(w.object('orders') as Table).spec, deletionPolicy: 'Retain' as const } };
    w.objects.put(retained);
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined, 'the first object goes, its table stays (Retain)');
    w.objects.put(table('orders'));
    await w.reconcile('orders');
    const second = w.object('orders')?.spec.name ?? '';
    assert.notEqual(second, first, 'the object made again under the same name gets another table');
    assert.ok(w.cloud.tables.has(first) && w.cloud.tables.has(second));
  });
});

describe('protection only goes up on its own', () => {
  it('a resync never lowers deletion protection set in the cloud; it repairs the rest and reports the held field', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-protected', labels: { team: 'a' } }));
    await w.reconcile('orders');
    const found = w.cloud.tables.get('orders-protected');
    assert.ok(found);
    found.deletionProtection = true; // set in the console
    found.labels = {}; // and drift elsewhere
    const outcome = await w.reconcile('orders');
    assert.equal(w.cloud.tables.get('orders-protected')?.deletionProtection, true, 'never lowered on a resync');
    assert.deepEqual(w.cloud.tables.get('orders-protected')?.labels, { team: 'a' }, 'other drift repaired');
    assert.equal(w.synced('orders')?.reason, Reasons.ProtectionHeld);
    assert.match(w.synced('orders')?.message ?? '', /spec\.deletionProtection/);
    assert.deepEqual(w.object('orders')?.status?.drift, [{ field: 'spec.deletionProtection', desired: false, actual: true, mode: 'Protected' }]);
    assert.equal(w.object('orders')?.status?.driftCount, 1);
    assert.equal(outcome.requeueAfterMs, delayAfterCheck(w.object('orders')?.metadata.uid ?? '', 3_600_000, NOW), 'held for the user: looked at again at its slot of the resync');

    // The delete never removes it: it stops, naming the setting, and calls no delete.
    w.objects.markDeleted('Table', NS, 'orders');
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.DeletionBlocked);
    assert.match(w.synced('orders')?.message ?? '', /spec\.deletionProtection/);
    // What lets it go while deleting: the cloud's own switch, or Retain; a spec edit is never applied to a deleting object.
    assert.match(w.synced('orders')?.message ?? '', /off on the cloud resource itself/);
    assert.match(w.synced('orders')?.message ?? '', /deletion-policy: Retain/);
    assert.doesNotMatch(w.synced('orders')?.message ?? '', /in the spec, then wait/);
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0);
    assert.equal(w.cloud.tables.get('orders-protected')?.deletionProtection, true);

    // Turned off in the cloud by the user: the next try deletes it.
    const held = w.cloud.tables.get('orders-protected');
    if (held) held.deletionProtection = false;
    for (let i = 0; i < 3 && w.object('orders'); i++) await w.reconcile('orders');
    assert.equal(w.object('orders'), undefined);
    assert.ok(!w.cloud.tables.has('orders-protected'));
  });

  it('a spec edited while the create was on its way: the status speaks for the spec created from, and the edit lowers the protection', async () => {
    // The user turns versioning off between the create call and the record of its success.
    const w = worldAfterCreate((w) => w.objects.editSpec('Bucket', NS, 'photos', (spec) => void (spec['versioning'] = false)));
    w.objects.put(bucket('photos', { name: 'photos-edited', versioning: true }));
    await w.reconcile('photos');
    assert.equal(w.cloud.buckets.get('photos-edited')?.versioning, true, 'created from the spec as it was');
    assert.equal(w.object('photos')?.metadata.generation, 2);
    assert.equal(w.object('photos')?.status?.observedGeneration, 1, 'the status speaks for the spec the cloud got, not the edit');
    await w.reconcile('photos');
    assert.equal(w.cloud.buckets.get('photos-edited')?.versioning, false, "the user's edit is applied: it asked to lower it");
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.object('photos')?.status?.observedGeneration, 2);
  });

  /** A Bucket world whose creates land in the cloud, their answer lost (the operator died with the call on its way) while `lost.answer` is set. */
  function answerLostWorld() {
    const lost = { answer: true };
    const w = worldAfterCreate(() => {
      if (lost.answer) throw new Error('socket hang up');
    });
    return { w, lost };
  }

  it("a create whose answer was lost, then an edit that lowers the protection it turned on: the edit is the user's ask, applied", async () => {
    const { w, lost } = answerLostWorld();
    w.objects.put(bucket('photos', { name: 'photos-lost', versioning: true }));
    await w.reconcile('photos');
    assert.equal(w.cloud.buckets.get('photos-lost')?.versioning, true, 'the create landed');
    assert.equal(w.object('photos')?.metadata.annotations?.[Annotations.createSucceeded], undefined, 'its outcome unknown to k8or');
    lost.answer = false;
    w.objects.editSpec('Bucket', NS, 'photos', (spec) => void (spec['versioning'] = false));
    for (let i = 0; i < 3 && w.synced('photos')?.reason !== Reasons.ReconcileSuccess; i++) await w.reconcile('photos');
    assert.equal(w.cloud.buckets.get('photos-lost')?.versioning, false, "the user's edit is applied: the create had turned it on from the spec before it");
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.object('photos')?.status?.observedGeneration, w.object('photos')?.metadata.generation);
  });

  it('a create whose answer was lost, then versioning turned on in the cloud by someone else: held, not lowered', async () => {
    const { w, lost } = answerLostWorld();
    w.objects.put(bucket('photos', { name: 'photos-lost-drift', versioning: false }));
    await w.reconcile('photos');
    lost.answer = false;
    const found = w.cloud.buckets.get('photos-lost-drift');
    assert.ok(found, 'the create landed');
    found.versioning = true;
    for (let i = 0; i < 3 && w.synced('photos')?.reason !== Reasons.ProtectionHeld; i++) await w.reconcile('photos');
    assert.equal(w.cloud.buckets.get('photos-lost-drift')?.versioning, true, 'the protection is not lowered: the spec never changed');
    assert.equal(w.synced('photos')?.reason, Reasons.ProtectionHeld);
  });

  it('a new generation that edits another field asks nothing of a protection set in the cloud: it is held', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-edited', labels: { team: 'a' } }));
    await w.reconcile('orders');
    const found = w.cloud.tables.get('orders-edited');
    assert.ok(found);
    found.deletionProtection = true; // set in the console
    w.objects.editSpec('Table', NS, 'orders', (spec) => {
      spec.labels = { team: 'b' };
    });
    await w.reconcile('orders');
    assert.deepEqual(w.cloud.tables.get('orders-edited')?.labels, { team: 'b' }, 'the edit is applied');
    assert.equal(w.cloud.tables.get('orders-edited')?.deletionProtection, true, 'the protection is not lowered: the edit did not ask');
    assert.equal(w.synced('orders')?.reason, Reasons.ProtectionHeld);
    w.objects.markDeleted('Table', NS, 'orders');
    await w.reconcile('orders');
    assert.equal(w.synced('orders')?.reason, Reasons.DeletionBlocked);
    assert.equal(w.cloud.callCount({ operation: 'delete' }), 0, 'and the delete deletes nothing');
  });

  it('a new generation of the spec may lower it: the user asked', async () => {
    const w = world('Table');
    w.objects.put(table('orders', { name: 'orders-lowered', deletionProtection: true }));
    await w.reconcile('orders');
    assert.equal(w.cloud.tables.get('orders-lowered')?.deletionProtection, true);
    w.objects.editSpec('Table', NS, 'orders', (spec) => {
      spec.deletionProtection = false;
    });
    await w.reconcile('orders');
    assert.equal(w.cloud.tables.get('orders-lowered')?.deletionProtection, false);
    assert.equal(w.synced('orders')?.reason, Reasons.ReconcileSuccess);
  });
});

describe('status tells the truth', () => {
  it('a 409 on the status write with a new generation meanwhile never stamps that generation as observed', async () => {
    const w = world();
    w.objects.put(bucket('photos', { name: 'photos-409' }));
    await w.reconcile('photos');
    const before = w.object('photos');
    assert.ok(before?.status?.observedGeneration);
    // The cloud changed (versioning turned on by hand: a protection, held and reported), and the
    // user edits the spec while the reconcile that found it is on its way to writing status.
    const found = w.cloud.buckets.get('photos-409');
    assert.ok(found);
    found.versioning = true;
    let edited = false;
    w.objects.beforeWrite = ({ verb }) => {
      if (verb !== 'status' || edited) return;
      edited = true;
      w.objects.editSpec('Bucket', NS, 'photos', (spec) => {
        spec.versioning = true;
      });
      throw KubeApiError.fromResponse('PUT', '/status', 409, { reason: 'Conflict', message: 'the object has been modified' });
    };
    const outcome = await w.reconcile('photos');
    w.objects.beforeWrite = undefined;
    const after = w.object('photos');
    assert.equal(outcome.backoff, true, 'the pass ends and the next decides on the new spec');
    assert.notEqual(after?.status?.observedGeneration, after?.metadata.generation, 'the new generation is not observed');
    assert.ok(!after?.status?.conditions?.some((c) => c.observedGeneration === after.metadata.generation), 'no condition claims the new generation');
    assert.ok(edited);
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess, 'the next pass decides on the new spec');
    assert.equal(w.object('photos')?.status?.observedGeneration, w.object('photos')?.metadata.generation);
  });

  it('an update the cloud does not show yet: Synced False with a reason, and another look within seconds', async () => {
    let applied = false;
    const w = world('Bucket', (cloud) =>
      withUpdate(inMemoryProviderPlugin(cloud), async (inner, resource, observation, call) => {
        // A long cloud operation: accepted now, in effect only on a later call.
        if (applied) return await inner.update(resource, observation, call);
        applied = true;
      }),
    );
    w.objects.put(bucket('photos', { name: 'photos-slow' }));
    await w.reconcile('photos');
    w.objects.editSpec('Bucket', NS, 'photos', (spec) => {
      spec.versioning = true;
    });
    const outcome = await w.reconcile('photos');
    assert.equal(w.synced('photos')?.status, 'False');
    assert.equal(w.synced('photos')?.reason, Reasons.ChangesPending);
    assert.match(w.synced('photos')?.message ?? '', /spec\.versioning/);
    assert.ok(outcome.requeueAfterMs !== undefined && outcome.requeueAfterMs <= 2_000, `looked at again within seconds, not at the resync (${outcome.requeueAfterMs})`);
    await w.reconcile('photos');
    assert.equal(w.synced('photos')?.reason, Reasons.ReconcileSuccess);
    assert.equal(w.cloud.buckets.get('photos-slow')?.versioning, true);
  });
});
