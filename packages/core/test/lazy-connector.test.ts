import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { Bucket, ProviderConfig } from '@k8or/api';
import { lazyConnector, type Connector, type ConnectionContext } from '@k8or/core';
import { InMemoryCloud, inMemoryProviderPlugin } from '@k8or/core/testing';

const providerConfig: ProviderConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'mem' }, spec: { provider: 'mem', region: 'mem-1' } };
const credentials = { accessKeyId: 'AKIAGOOD', secretAccessKey: 'good' };
const photos: Bucket = { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name: 'photos', namespace: 'media' }, spec: { name: 'photos-bucket' } };
const context: ConnectionContext = { providerConfig, credentials, externalName: 'photos-bucket', ownerTags: { 'k8or.io/owner': 'media/photos' }, recordCall: async (_operation, call) => await call() };
const call = { signal: new AbortController().signal };

/** The in-memory provider's Bucket connector behind a lazyConnector, with the imports it made. */
function lazyBucket(options: { list?: boolean; failFirst?: boolean } = {}): { connector: Connector<Bucket>; cloud: InMemoryCloud; loads: () => number } {
  const cloud = new InMemoryCloud();
  const memory = inMemoryProviderPlugin(cloud, { provider: 'mem' }).connectors.Bucket;
  if (!memory) throw new Error('the in-memory provider has no Bucket connector');
  // The in-memory provider has no inventory: this one lists the cloud's buckets by name.
  const inner: Connector<Bucket> = { connect: memory.connect.bind(memory), list: async () => [...cloud.buckets.keys()].map((externalName) => ({ externalName, spec: {} })) };
  let loads = 0;
  const connector = lazyConnector<Bucket>(async () => {
    loads++;
    await Promise.resolve();
    if (options.failFirst && loads === 1) throw new Error('Cannot find module @aws-sdk/client-s3');
    return inner;
  }, options.list === undefined ? {} : { list: options.list });
  return { connector, cloud, loads: () => loads };
}

describe('lazyConnector', () => {
  it('imports nothing until the first connect, then once for every later and concurrent call', async () => {
    const { connector, cloud, loads } = lazyBucket();
    assert.equal(loads(), 0);
    const clients = await Promise.all([connector.connect(photos, context), connector.connect(photos, context), connector.connect(photos, context)]);
    assert.equal(loads(), 1);
    await clients[0]!.create(photos, call);
    assert.equal((await clients[1]!.observe(photos, call)).exists, true, 'the loaded connector reached the cloud');
    assert.ok(cloud.buckets.has('photos-bucket'));
    await connector.connect(photos, context);
    assert.equal(loads(), 1);
  });

  it('tries a failed import again on the next call instead of keeping the failure', async () => {
    const { connector, loads } = lazyBucket({ failFirst: true });
    await assert.rejects(connector.connect(photos, context), /Cannot find module/);
    const client = await connector.connect(photos, context);
    assert.equal((await client.observe(photos, call)).exists, false);
    assert.equal(loads(), 2);
  });

  it('has list only when declared, and lists through the loaded connector', async () => {
    assert.equal(lazyBucket().connector.list, undefined);
    const { connector, loads } = lazyBucket({ list: true });
    assert.equal(loads(), 0);
    await (await connector.connect(photos, context)).create(photos, call);
    const items = await connector.list!({ providerConfig, credentials, recordCall: context.recordCall }, call);
    assert.deepEqual(items.map((item) => item.externalName), ['photos-bucket']);
    assert.equal(loads(), 1);
  });
});
