// The container client with the real @azure/storage-blob against Azurite, checked by direct reads.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BlobServiceClient } from '@azure/storage-blob';
import { DeletionBlockedError, NotOwnedError, RetryableError, TerminalError } from '@k8or/core';
import { bucketConnector, clearAzureClients } from '@k8or/provider-azure';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { accountKeySecret, accountSas, azureProviderConfig, bucket, connectionContext, startFaultProxy, stringsIn, type FaultProxy } from './support.ts';

/** The engine's call options: a signal that never aborts here. */
const call = { signal: new AbortController().signal };

describe('Bucket -> Azure Blob container, against Azurite', () => {
  let azurite: Azurite;
  let blobs: BlobServiceClient;
  let proxy: FaultProxy;

  before(async () => {
    azurite = await startAzurite();
    blobs = BlobServiceClient.fromConnectionString(azurite.connectionString);
    proxy = await startFaultProxy(azurite.blobEndpoint);
  });
  after(async () => {
    clearAzureClients();
    await proxy?.close();
    await azurite?.stop();
  });

  const connect = async (resource: ReturnType<typeof bucket>, options: { endpoint?: string; secret?: Record<string, string>; cluster?: string } = {}) => {
    const context = connectionContext(azureProviderConfig({ bucket: options.endpoint ?? azurite.blobEndpoint }), resource, options.secret ?? accountKeySecret(azurite), options.cluster);
    return { client: await bucketConnector.connect(resource, context), context };
  };

  it('creates a private container with labels and owner metadata in the one create call, and observes it up to date', async () => {
    const photos = bucket('photos', { labels: { team: 'a', costCentre: 'x1' } });
    const { client, context } = await connect(photos);
    assert.equal((await client.observe(photos, call)).exists, false);
    await client.create(photos, call);
    assert.deepEqual(context.calls, ['GetContainerProperties', 'CreateContainer']);

    const properties = await blobs.getContainerClient('photos').getProperties();
    assert.equal(properties.blobPublicAccess, undefined, 'no public access');
    assert.deepEqual(properties.metadata, {
      team: 'a',
      costcentre: 'x1',
      k8or_managed_by: 'k8or',
      k8or_cluster: 'test-cluster',
      k8or_namespace: 'team-a',
      k8or_name: 'photos',
      k8or_kind: 'Bucket',
    });
    const observation = await client.observe(photos, call);
    assert.equal(observation.upToDate, true, JSON.stringify(observation.diff));
    assert.deepEqual(observation.ownerTags, context.ownerTags);
    assert.equal(observation.atProvider?.url, `${azurite.blobEndpoint}/photos`);
    assert.equal((observation.atProvider as { etag?: string }).etag, properties.etag);
    assert.equal((observation.atProvider as { lastModified?: string }).lastModified, properties.lastModified?.toISOString());
  });

  it('publishes no SAS: with sasToken credentials, atProvider (id, url) carries no query string and no signature', async () => {
    const sasToken = accountSas(azurite);
    const signature = new URLSearchParams(sasToken).get('sig') ?? '';
    assert.ok(signature.length > 10, 'the account SAS is signed');
    const shared = bucket('shared-by-sas');
    const { client } = await connect(shared, { secret: { sasToken } });
    await client.create(shared, call);
    const observation = await client.observe(shared, call);
    assert.equal(observation.exists, true);
    assert.equal(observation.atProvider?.url, `${azurite.blobEndpoint}/shared-by-sas`);
    assert.equal(observation.atProvider?.id, `${azurite.blobEndpoint}/shared-by-sas`);
    for (const text of stringsIn(observation)) {
      assert.ok(!text.includes(signature) && !text.includes('sig='), `no SAS in ${text}`);
      if (URL.canParse(text)) assert.equal(new URL(text).search, '', `no query string in ${text}`);
    }
  });

  it('reports its protections as facts (private access, legal hold, immutability policy), and no identity (etag and last-modified change with every write)', async () => {
    const resource = bucket('protected-facts');
    const { client } = await connect(resource);
    await client.create(resource, call);
    const observation = await client.observe(resource, call);
    assert.equal(observation.identity, undefined);
    assert.deepEqual(observation.protection, [
      { field: 'spec.publicAccess', enabled: true },
      { field: 'legalHold', enabled: false, blocksDeletion: true },
      { field: 'immutabilityPolicy', enabled: false, blocksDeletion: true },
    ]);
    // The engine holds private access on a resync: update gets the spec with the container's own value, and writes no access level.
    const opened = bucket('protected-facts', { publicAccess: 'Allowed' });
    const drifted = await client.observe(opened, call);
    assert.deepEqual(drifted.diff?.map((d) => d.field), ['spec.publicAccess']);
    const { client: held, context } = await connect(resource);
    await held.update(resource, drifted, call);
    assert.deepEqual(context.calls, [], 'nothing written for a held protection');
    assert.equal((await blobs.getContainerClient('protected-facts').getProperties()).blobPublicAccess, undefined);
  });

  it('releases ownership for Retain: the owner metadata goes, labels and access stay; a missing container is success', async () => {
    const resource = bucket('released-container', { labels: { team: 'a' } });
    const { client } = await connect(resource);
    await client.create(resource, call);
    await client.release?.(resource, call);
    assert.deepEqual((await blobs.getContainerClient('released-container').getProperties()).metadata, { team: 'a' });
    await client.release?.(resource, call);
    await client.delete(resource, call);
    await client.release?.(resource, call);
  });

  it('finds opened public access and removed owner metadata as drift, and repairs only those, keeping stored access policies', async () => {
    const media = bucket('media', { labels: { team: 'a' } });
    const { client } = await connect(media);
    await client.create(media, call);
    const container = blobs.getContainerClient('media');
    const policy = [{ id: 'readers', accessPolicy: { permissions: 'r', startsOn: new Date('2026-01-01T00:00:00Z'), expiresOn: new Date('2030-01-01T00:00:00Z') } }];
    await container.setAccessPolicy('container', policy);
    const { k8or_cluster: _removed, ...rest } = (await container.getProperties()).metadata ?? {};
    await container.setMetadata(rest);

    const drifted = await client.observe(media, call);
    assert.equal(drifted.upToDate, false);
    assert.deepEqual(drifted.diff, [
      { field: 'spec.publicAccess', desired: 'Blocked', actual: 'Allowed' },
      { field: 'ownerTags.k8or.io/cluster', desired: 'test-cluster', actual: undefined },
    ]);
    await client.update(media, drifted, call);
    const repaired = await container.getProperties();
    assert.equal(repaired.blobPublicAccess, undefined);
    assert.equal(repaired.metadata?.['k8or_cluster'], 'test-cluster');
    assert.deepEqual((await container.getAccessPolicy()).signedIdentifiers.map((s) => s.id), ['readers']);
    assert.equal((await client.observe(media, call)).upToDate, true);
  });

  it('maps publicAccess Allowed to the "blob" level, and a label changed to the metadata set', async () => {
    const open = bucket('open', { publicAccess: 'Allowed', labels: { team: 'a', old: 'yes' } });
    const { client } = await connect(open);
    await client.create(open, call);
    assert.equal((await blobs.getContainerClient('open').getProperties()).blobPublicAccess, 'blob');
    const changed = bucket('open', { publicAccess: 'Blocked', labels: { team: 'b' } });
    const observation = await client.observe(changed, call);
    assert.deepEqual(observation.diff?.map((d) => d.field), ['spec.publicAccess', 'spec.labels.old', 'spec.labels.team']);
    await client.update(changed, observation, call);
    const properties = await blobs.getContainerClient('open').getProperties();
    assert.equal(properties.blobPublicAccess, undefined);
    assert.equal(properties.metadata?.['team'], 'b');
    assert.equal(properties.metadata?.['old'], undefined);
  });

  it('reports what a container cannot hold (versioning, lifecycle, customer-managed keys, location) as settings not applied', async () => {
    const asked = bucket('asks-much', { versioning: true, lifecycle: [{ id: 'tmp', expirationDays: 7 }], encryption: { type: 'CustomerManaged', keyId: 'https://kv.vault.azure.net/keys/k' }, location: 'westeurope' });
    const { client } = await connect(asked);
    await client.create(asked, call);
    const observation = (await client.observe(asked, call)) as { settingIssues?: { field: string; problem: string }[] };
    assert.deepEqual(observation.settingIssues?.map((i) => `${i.field} ${i.problem}`), ['spec.versioning unapplied', 'spec.lifecycle unapplied', 'spec.encryption unapplied', 'spec.location unapplied']);
  });

  it('leaves a non-empty container without forceDelete, and deletes it with its blobs when set', async () => {
    const full = bucket('full');
    const { client } = await connect(full);
    await client.create(full, call);
    await blobs.getContainerClient('full').getBlockBlobClient('album/1.jpg').upload('jpeg', 4);
    await assert.rejects(client.delete(full, call), (error: unknown) => error instanceof DeletionBlockedError && error.code === 'ContainerNotEmpty' && /album\/1\.jpg/.test(error.message));
    assert.equal(await blobs.getContainerClient('full').exists(), true);
    await client.delete(bucket('full', { forceDelete: true }), call);
    assert.equal(await blobs.getContainerClient('full').exists(), false);
    assert.equal((await client.observe(full, call)).exists, false);
    await client.delete(full, call); // missing is success
  });

  it('deletes an empty container without forceDelete', async () => {
    const empty = bucket('empty');
    const { client } = await connect(empty);
    await client.create(empty, call);
    await client.delete(empty, call);
    assert.equal(await blobs.getContainerClient('empty').exists(), false);
  });

  it('takes a repeated create as success when the container is ours, and NotOwnedError when it is another cluster\'s', async () => {
    const shared = bucket('shared');
    const { client } = await connect(shared);
    await client.create(shared, call);
    await client.create(shared, call);
    const { client: other } = await connect(shared, { cluster: 'other-cluster' });
    await assert.rejects(other.create(shared, call), (error: unknown) => error instanceof NotOwnedError && error.code === 'ContainerAlreadyExists');
    await blobs.getContainerClient('bare').create();
    const bare = bucket('bare');
    const { client: ours } = await connect(bare);
    const observation = await ours.observe(bare, call);
    assert.deepEqual(observation.ownerTags, {}, 'no owner metadata at all: none of it ours, never "this kind has no tags"');
    await assert.rejects(ours.create(bare, call), NotOwnedError);
  });

  it('answers a wrong key with a terminal AuthorizationFailure on observe, never "missing"', async () => {
    const photos = bucket('photos');
    const { client } = await connect(photos, { secret: { accountKey: Buffer.from('not-the-key').toString('base64') } });
    await assert.rejects(client.observe(photos, call), (error: unknown) => error instanceof TerminalError && error.code === 'AuthorizationFailure' && /GetContainerProperties failed with AuthorizationFailure/.test(error.message));
  });

  it("probes with observe's one Get Container Properties: owner metadata as observe reads it, absence only on ContainerNotFound, a wrong key thrown", async () => {
    const probed = bucket('probed', { labels: { team: 'a' } });
    const { client, context } = await connect(probed);
    await client.create(probed, call);
    const observation = await client.observe(probed, call);
    context.calls.length = 0;
    assert.deepEqual(await client.probe?.(probed, call), { exists: true, ownerTags: observation.ownerTags, protection: observation.protection });
    assert.deepEqual(context.calls, ['GetContainerProperties']);
    assert.deepEqual(observation.ownerTags, context.ownerTags);
    await blobs.getContainerClient('probed-bare').create();
    const bare = bucket('probed-bare');
    const barePresence = await (await connect(bare)).client.probe?.(bare, call);
    assert.deepEqual({ exists: barePresence?.exists, ownerTags: barePresence?.ownerTags }, { exists: true, ownerTags: {} }, 'no owner metadata at all: none of it k8or\'s ({}), never "this kind has no tags"');
    const { client: wrongKey } = await connect(probed, { secret: { accountKey: Buffer.from('not-the-key').toString('base64') } });
    await assert.rejects(wrongKey.probe?.(probed, call) ?? Promise.resolve(), (error: unknown) => error instanceof TerminalError && error.code === 'AuthorizationFailure');
    await client.delete(probed, call);
    assert.deepEqual(await client.probe?.(probed, call), { exists: false });
  });

  it('passes the engine\'s signal to the SDK: an aborted call rejects as retryable and writes nothing', async () => {
    const late = bucket('late');
    const { client } = await connect(late);
    const aborted = { signal: AbortSignal.abort() };
    await assert.rejects(client.create(late, aborted), (error: unknown) => error instanceof RetryableError && error.code === 'AbortError');
    assert.equal(await blobs.getContainerClient('late').exists(), false);
  });

  it('refuses an invalid container name with a terminal InvalidResourceName', async () => {
    const bad = bucket('Bad_Name');
    const { client } = await connect(bad);
    await assert.rejects(client.create(bad, call), (error: unknown) => error instanceof TerminalError && error.code === 'InvalidResourceName');
  });

  for (const [status, code] of [[503, 'ServerBusy'], [500, 'OperationTimedOut'], [429, 'TooManyRequests']] as const) {
    it(`classifies ${status} ${code} as retryable, once the SDK's own tries are spent`, async () => {
      const busy = bucket('busy');
      const { client } = await connect(busy, { endpoint: proxy.endpoint });
      proxy.fail(3, status, code);
      await assert.rejects(client.observe(busy, call), (error: unknown) => error instanceof RetryableError && error.code === code && error.message.includes(code));
      proxy.clear();
      assert.equal((await client.observe(busy, call)).exists, false);
    });
  }

  it('retries a name Azure is still deleting (ContainerBeingDeleted) after a delay', async () => {
    const again = bucket('again');
    const { client } = await connect(again, { endpoint: proxy.endpoint });
    proxy.fail(1, 409, 'ContainerBeingDeleted');
    await assert.rejects(client.create(again, call), (error: unknown) => error instanceof RetryableError && error.code === 'ContainerBeingDeleted' && (error.retryAfterMs ?? 0) > 0);
  });
});
