// The provider conformance kit (@k8or/core/testing) against Azure: the real Blob and Table
// clients against Azurite.
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient } from '@azure/storage-blob';
import type { BucketSpec, TableSpec } from '@k8or/api';
import { runProviderConformance } from '@k8or/core/testing';
import { startAzurite, type Azurite } from '@k8or/local-clouds';
import { azureProvider, clearAzureClients } from '@k8or/provider-azure';
import { accountSas, azureProviderConfig } from './support.ts';

const wrongKey = { accountKey: Buffer.from('not-the-account-key').toString('base64') };

let blobAzurite: Azurite;
let blobs: BlobServiceClient;
runProviderConformance({
  plugin: azureProvider,
  kind: 'Bucket',
  start: async () => {
    blobAzurite = await startAzurite();
    blobs = BlobServiceClient.fromConnectionString(blobAzurite.connectionString);
    return {
      providerConfig: azureProviderConfig({ bucket: blobAzurite.blobEndpoint }),
      credentials: { accountKey: blobAzurite.accountKey },
      // Only what a container holds: versioning, lifecycle and customer-managed keys are account settings (reported as not applied).
      spec: (): Omit<BucketSpec, 'name'> => ({ publicAccess: 'Blocked', labels: { team: 'storage', app: 'photos', costCentre: 'cc42' } }),
      drift: [
        { field: 'spec.publicAccess', change: async (name) => void (await blobs.getContainerClient(name).setAccessPolicy('container')) },
        {
          field: 'spec.labels',
          change: async (name) => {
            const container = blobs.getContainerClient(name);
            const metadata = (await container.getProperties()).metadata ?? {};
            await container.setMetadata({ ...metadata, team: 'someone-else' });
          },
        },
      ],
      deniedAccess: () => ({ credentials: wrongKey }),
      optOut: {
        protection: 'the kit\'s spec asks for private access, and Azurite has no legal hold or immutability policy; bucket.integration.test.ts holds private access out of band',
        identity: 'a container has none: its etag and last-modified change with every metadata or access write, and Azure gives it no creation time',
      },
    };
  },
  stop: async () => {
    clearAzureClients();
    await blobAzurite?.stop();
  },
});

let tableAzurite: Azurite;
let tables: TableServiceClient;
runProviderConformance({
  plugin: azureProvider,
  kind: 'Table',
  start: async () => {
    tableAzurite = await startAzurite();
    tables = new TableServiceClient(tableAzurite.tableEndpoint, new AzureNamedKeyCredential(tableAzurite.accountName, tableAzurite.accountKey), { allowInsecureConnection: true });
    return {
      providerConfig: azureProviderConfig({ table: tableAzurite.tableEndpoint }),
      credentials: { accountKey: tableAzurite.accountKey },
      // Keys only document the mapping to PartitionKey and RowKey; billing, TTL, PITR and labels do not exist on an Azure table.
      spec: (): Omit<TableSpec, 'name'> => ({ partitionKey: { type: 'string', name: 'customerId' }, sortKey: { name: 'orderId', type: 'string' }, deletionProtection: false }),
      drift: [],
      noManagedFields: 'an Azure table has no setting, tag or metadata: its name is all there is',
      deniedAccess: () => ({ credentials: wrongKey }),
      // An account SAS may neither set nor read a table's access policies, where the identity is kept.
      accessWithoutEvidence: () => ({ credentials: { sasToken: accountSas(tableAzurite) } }),
      // Tables carry no owner tags, so someone else's table is just a table k8or did not create.
      createForeign: async (name) => void (await tables.createTable(name)),
      deleteForeign: async (name) => void (await tables.deleteTable(name)),
      optOut: { protection: 'Azure has no protection on a table (k8or enforces spec.deletionProtection itself)' },
    };
  },
  stop: async () => {
    clearAzureClients();
    await tableAzurite?.stop();
  },
});
