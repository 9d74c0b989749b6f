import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient } from '@azure/storage-blob';
import { AzureWorld, conditionOf, isReady, waitFor } from './e2e-world.ts';

describe('Azure provider through the engine: Kubernetes objects in, Blob and Table Storage state out', () => {
  let world: AzureWorld;
  let blobs: BlobServiceClient;
  let tables: TableServiceClient;

  before(async () => {
    world = await AzureWorld.start();
    blobs = BlobServiceClient.fromConnectionString(world.azurite.connectionString);
    tables = new TableServiceClient(world.azurite.tableEndpoint, keyCredential(), { allowInsecureConnection: true });
    await world.startEngine();
  });
  after(async () => {
    await world?.stop();
  });

  const keyCredential = () => new AzureNamedKeyCredential(world.azurite.accountName, world.azurite.accountKey);
  /** True once some Event of `reason` on the object mentions every one of `words`. */
  const eventMentions = async (objectName: string, reason: string, words: string[]): Promise<boolean> =>
    (await world.events(objectName)).some((e) => e.reason === reason && words.every((w) => e.message.includes(w)));
  const tableNames = async (): Promise<string[]> => {
    const names: string[] = [];
    for await (const t of tables.listTables()) names.push(t.name ?? '');
    return names;
  };

  it('creates, updates, repairs drift in (public access opened, owner metadata removed) and deletes a Bucket', async () => {
    const name = 'e2e-photos';
    const container = blobs.getContainerClient(name);
    await world.createBucket('photos', { name, labels: { team: 'a' } }, { 'k8or.io/resync-period': '1s' });
    const ready = await world.waitForBucket('photos', 'Ready', isReady);
    const properties = await container.getProperties();
    assert.equal(ready.status?.atProvider?.url, `${world.azurite.blobEndpoint}/${name}`);
    assert.equal(ready.status?.atProvider?.etag, properties.etag);
    assert.equal(properties.blobPublicAccess, undefined);
    assert.equal(properties.metadata?.['team'], 'a');
    assert.equal(properties.metadata?.['k8or_name'], 'photos');
    assert.equal(properties.metadata?.['k8or_cluster'], 'e2e-cluster');

    // The user changes the spec: the container follows.
    const patched = await world.patchBucket('photos', { spec: { labels: { team: 'b' }, publicAccess: 'Allowed' } });
    await world.waitForBucket('photos', 'the new generation synced', (b) => isReady(b) && b.status?.observedGeneration === patched.metadata.generation);
    const updated = await container.getProperties();
    assert.equal(updated.metadata?.['team'], 'b');
    assert.equal(updated.blobPublicAccess, 'blob');
    await world.patchBucket('photos', { spec: { publicAccess: 'Blocked' } });
    await waitFor('public access closed again', async () => (await container.getProperties()).blobPublicAccess === undefined);

    // Someone opens the container to anonymous listing: the next resync closes it.
    await container.setAccessPolicy('container');
    await waitFor('public access closed', async () => (await container.getProperties()).blobPublicAccess === undefined);
    await waitFor('a RepairedDrift event naming spec.publicAccess', () => eventMentions('photos', 'RepairedDrift', ['spec.publicAccess']));

    // Someone strips k8or's owner metadata: nothing proves the container ours any more (a container has no identity),
    // so k8or stops and writes nothing, until the user adopts it again.
    const { k8or_namespace: _ns, ...withoutOwner } = (await container.getProperties()).metadata ?? {};
    await container.setMetadata(withoutOwner);
    await world.waitForBucket('photos', 'NotOwned', (b) => conditionOf(b, 'Synced')?.reason === 'NotOwned');
    assert.equal((await container.getProperties()).metadata?.['k8or_namespace'], undefined, 'nothing written');
    await world.patchBucket('photos', { metadata: { annotations: { 'k8or.io/adopt': 'true' } } });
    await waitFor('owner metadata restored', async () => (await container.getProperties()).metadata?.['k8or_namespace'] === 'team-a');

    // A container with data is not deleted without forceDelete...
    await container.getBlockBlobClient('album/1.jpg').upload('jpeg', 4);
    await world.deleteBucket('photos');
    const blocked = await world.waitForBucket('photos', 'DeletionBlocked', (b) => conditionOf(b, 'Synced')?.reason === 'DeletionBlocked');
    assert.match(conditionOf(blocked, 'Synced')?.message ?? '', /ContainerNotEmpty|not empty/);
    assert.equal(await container.exists(), true);
    // ...and is, blobs and all, once the user sets it.
    await world.patchBucket('photos', { spec: { forceDelete: true } });
    await waitFor('the Bucket object gone', async () => (await world.bucket('photos')) === undefined);
    assert.equal(await container.exists(), false);
  });

  it('never says Synced for what a container cannot hold: versioning is named as not applied, the container is still made', async () => {
    await world.createBucket('versioned', { name: 'e2e-versioned', versioning: true });
    const reported = await world.waitForBucket('versioned', 'SettingsNotApplied', (b) => conditionOf(b, 'Synced')?.reason === 'SettingsNotApplied');
    assert.equal(conditionOf(reported, 'Synced')?.status, 'False');
    assert.match(conditionOf(reported, 'Synced')?.message ?? '', /spec\.versioning/);
    assert.equal(conditionOf(reported, 'Ready')?.status, 'True');
    assert.equal(await blobs.getContainerClient('e2e-versioned').exists(), true);
  });

  it('creates and deletes a Table, and keeps it while deletionProtection is on', async () => {
    await world.createTable('orders', { name: 'e2eOrders', sortKey: { name: 'at', type: 'string' }, deletionProtection: true }, { 'k8or.io/resync-period': '1s' });
    const ready = await world.waitForTable('orders', 'Ready', isReady);
    assert.equal(ready.status?.atProvider?.url, `${world.azurite.tableEndpoint}/e2eOrders`);
    assert.ok((await tableNames()).includes('e2eOrders'));

    await world.deleteTable('orders');
    const blocked = await world.waitForTable('orders', 'DeletionBlocked', (t) => conditionOf(t, 'Synced')?.reason === 'DeletionBlocked');
    assert.match(conditionOf(blocked, 'Synced')?.message ?? '', /deletionProtection/);
    assert.ok((await tableNames()).includes('e2eOrders'));
    await world.patchTable('orders', { spec: { deletionProtection: false } });
    await waitFor('the Table object gone', async () => (await world.table('orders')) === undefined);
    assert.ok(!(await tableNames()).includes('e2eOrders'));
  });

  it('re-creates a table deleted behind k8or\'s back on the next resync', async () => {
    await world.createTable('sessions', { name: 'e2eSessions' }, { 'k8or.io/resync-period': '1s' });
    await world.waitForTable('sessions', 'Ready', isReady);
    await tables.deleteTable('e2eSessions');
    await waitFor('the table back', async () => (await tableNames()).includes('e2eSessions'));
  });

  it('leaves a table k8or did not create alone (NotOwned), and takes it over with k8or.io/adopt', async () => {
    await tables.createTable('e2eLegacy');
    await world.createTable('legacy', { name: 'e2eLegacy' });
    const stopped = await world.waitForTable('legacy', 'NotOwned', (t) => conditionOf(t, 'Synced')?.reason === 'NotOwned');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /k8or\.io\/adopt/);
    await world.patchTable('legacy', { metadata: { annotations: { 'k8or.io/adopt': 'true' } } });
    await world.waitForTable('legacy', 'Ready after adoption', isReady);
  });

  it('through an account SAS (no identity for a table): Delete is refused before any create; a table made under Retain is never deleted on the create record alone', async () => {
    // Deletion policy Delete (the engine's default): nothing could ever prove the table this object's at its delete.
    await world.createTable('sasorders', { name: 'e2eSasOrders', providerConfigRef: { name: 'sas' } });
    const refused = await world.waitForTable('sasorders', 'IdentityUnavailable', (t) => conditionOf(t, 'Synced')?.reason === 'IdentityUnavailable');
    assert.match(conditionOf(refused, 'Synced')?.message ?? '', /spec\.deletionPolicy: Delete is refused .*rule deletion-policy\.needs-evidence.*sasToken/);
    assert.ok(!(await tableNames()).includes('e2eSasOrders'), 'nothing created');

    // Under Retain the table is made, through the SAS, with no identity marker.
    await world.patchTable('sasorders', { spec: { deletionPolicy: 'Retain' } });
    await world.waitForTable('sasorders', 'Ready', isReady);
    assert.ok((await tableNames()).includes('e2eSasOrders'));
    const ours = new TableClient(world.azurite.tableEndpoint, 'e2eSasOrders', keyCredential(), { allowInsecureConnection: true });
    assert.deepEqual([...(await ours.getAccessPolicy())], [], 'no identity marker: a SAS cannot set one');

    // The annotation asks for Delete after all (it wins over the spec); someone deletes the table and makes their own under the name.
    await world.patchTable('sasorders', { metadata: { annotations: { 'k8or.io/deletion-policy': 'Delete' } } });
    await tables.deleteTable('e2eSasOrders');
    await waitFor('the name free again', async () => {
      try {
        await tables.createTable('e2eSasOrders');
        return true;
      } catch {
        return false; // TableBeingDeleted
      }
    });
    const theirs = new TableClient(world.azurite.tableEndpoint, 'e2eSasOrders', keyCredential(), { allowInsecureConnection: true });
    await theirs.createEntity({ partitionKey: 'p', rowKey: 'r', note: 'not k8or\'s' });
    await world.deleteTable('sasorders');
    const blocked = await world.waitForTable('sasorders', 'DeletionBlocked', (t) => conditionOf(t, 'Synced')?.reason === 'DeletionBlocked');
    assert.match(conditionOf(blocked, 'Synced')?.message ?? '', /nothing on it shows it is still the one k8or created.*spec\.deletionPolicy: Retain/);
    assert.equal((await theirs.getEntity('p', 'r')).note, "not k8or's", 'their table and its data stay');

    // Retain lets the object go and leaves the table.
    await world.patchTable('sasorders', { metadata: { annotations: { 'k8or.io/deletion-policy': null } } });
    await waitFor('the Table object gone', async () => (await world.table('sasorders')) === undefined);
    assert.equal((await theirs.getEntity('p', 'r')).note, "not k8or's");
  });

  it('ends in a terminal condition carrying AuthorizationFailure when the key is wrong', async () => {
    await world.createBucket('forbidden', { name: 'e2e-forbidden', providerConfigRef: { name: 'denied' } });
    const stopped = await world.waitForBucket('forbidden', 'a terminal condition', (b) => conditionOf(b, 'Synced')?.status === 'False');
    assert.match(conditionOf(stopped, 'Synced')?.message ?? '', /AuthorizationFailure/);
    assert.notEqual(conditionOf(stopped, 'Ready')?.status, 'True');
    assert.equal(await blobs.getContainerClient('e2e-forbidden').exists(), false);
  });

  it('retries through ServerBusy until the container is made', async () => {
    world.busyBlob.fail(4, 503, 'ServerBusy');
    await world.createBucket('busy', { name: 'e2e-busy', providerConfigRef: { name: 'busy' } });
    await world.waitForBucket('busy', 'Ready', isReady);
    await waitFor('a warning Event carrying ServerBusy', () => eventMentions('busy', 'CannotObserveExternalResource', ['ServerBusy']));
    assert.equal(world.busyBlob.injected, 4);
    assert.equal(await blobs.getContainerClient('e2e-busy').exists(), true);
  });
});
