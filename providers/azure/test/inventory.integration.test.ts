// Connector.list (k8or import) with the real @azure/storage-blob and @azure/data-tables against Azurite.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { clearAzureClients, bucketConnector, tableConnector } from '@k8or/provider-azure';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { accountKeySecret, azureProviderConfig } from './support.ts';

const call = { signal: new AbortController().signal };

describe('Connector.list (k8or import) on Azure: what the storage account holds, read only', () => {
  let azurite: Azurite;

  before(async () => {
    azurite = await startAzurite();
  });
  after(async () => {
    clearAzureClients();
    await azurite?.stop();
  });

  const inventoryContext = (endpoints: { bucket?: string; table?: string }, calls: string[]) => ({
    providerConfig: azureProviderConfig(endpoints),
    credentials: accountKeySecret(azurite),
    recordCall: async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
      calls.push(operation);
      return await run();
    },
  });

  it('lists every Blob container of the account with its public access, through List Containers only', async () => {
    const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
    await blobs.createContainer('inventory-private');
    await blobs.createContainer('inventory-public', { access: 'blob' });
    const calls: string[] = [];
    const items = await bucketConnector.list?.(inventoryContext({ bucket: azurite.blobEndpoint }, calls), call);
    assert.deepEqual(
      items?.filter((i) => i.externalName.startsWith('inventory-')).sort((a, b) => a.externalName.localeCompare(b.externalName)),
      [
        { externalName: 'inventory-private', spec: { publicAccess: 'Blocked' } },
        { externalName: 'inventory-public', spec: { publicAccess: 'Allowed' } },
      ],
    );
    assert.deepEqual(calls, ['ListContainers']);
    const names: string[] = [];
    for await (const container of blobs.listContainers()) names.push(container.name);
    assert.deepEqual(names.filter((n) => n.startsWith('inventory-')).sort(), ['inventory-private', 'inventory-public'], 'listing wrote nothing');
  });

  it("lists every table of the account, each with Azure's fixed string keys PartitionKey and RowKey, through Query Tables only", async () => {
    const tables = new TableServiceClient(azurite.tableEndpoint, new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey), { allowInsecureConnection: true });
    await tables.createTable('InventoryEvents');
    await tables.createTable('InventoryUsers');
    const calls: string[] = [];
    const items = await tableConnector.list?.(inventoryContext({ table: azurite.tableEndpoint }, calls), call);
    const keys = { partitionKey: { name: 'PartitionKey', type: 'string' }, sortKey: { name: 'RowKey', type: 'string' } };
    assert.deepEqual(
      items?.filter((i) => i.externalName.startsWith('Inventory')).sort((a, b) => a.externalName.localeCompare(b.externalName)),
      [
        { externalName: 'InventoryEvents', spec: keys },
        { externalName: 'InventoryUsers', spec: keys },
      ],
    );
    assert.deepEqual(calls, ['QueryTables']);
  });
});
