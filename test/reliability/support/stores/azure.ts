// Azure Blob containers and Table Storage tables, straight at Azurite with the Storage SDKs.
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import type { Azurite } from '@k8or/local-clouds';
import { DATA_PER_HOLDER, isNotFound, objectBody, type Store } from './store.ts';

export function azureContainers(azurite: Azurite): Store {
  const blobs = new BlobServiceClient(azurite.blobEndpoint, new StorageSharedKeyCredential(azurite.accountName, azurite.accountKey));
  return {
    cloud: 'azure',
    kind: 'Bucket',
    dialect: 'azure-blob',
    writes: { create: 'PUT /container', delete: 'DELETE /container', settings: ['PUT /container?comp=metadata', 'PUT /container?comp=acl'] },
    // an observe: Get Container Properties; an update: Set Container Metadata, Get and Set Container
    // ACL: 1 + 3 + 1. (A create: Create Container, and the properties after ContainerAlreadyExists; a
    // delete: List Blobs (one page: Azurite answers an empty container without a marker) and Delete
    // Container.)
    callsPerReconcile: 5,
    editable: true,
    exists: async (name) => await blobs.getContainerClient(name).exists(),
    names: async () => {
      const names: string[] = [];
      for await (const container of blobs.listContainers()) names.push(container.name);
      return names;
    },
    // the suite's edit here is the labels (container metadata); Azure has no versioning per container
    settingsProblems: async (entry) => {
      const metadata = (await blobs.getContainerClient(entry.externalName).getProperties()).metadata ?? {};
      return metadata['round'] === entry.desired.round ? [] : [`label round ${metadata['round'] ?? 'unset'} in the container's metadata, spec says ${entry.desired.round ?? 'unset'}`];
    },
    writeData: async (entry) => {
      const container = blobs.getContainerClient(entry.externalName);
      for (let i = 0; i < DATA_PER_HOLDER; i++) {
        const body = objectBody(entry.externalName, i);
        await container.getBlockBlobClient(`data/${i}.txt`).upload(body, Buffer.byteLength(body));
      }
    },
    lostData: async (entry) => {
      const container = blobs.getContainerClient(entry.externalName);
      const lost: string[] = [];
      try {
        const listed: string[] = [];
        for await (const blob of container.listBlobsFlat()) listed.push(blob.name);
        for (let i = 0; i < DATA_PER_HOLDER; i++) {
          const key = `data/${i}.txt`;
          const got = await container
            .getBlobClient(key)
            .downloadToBuffer()
            .then((bytes) => bytes.toString('utf8'))
            .catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
          if (got === undefined) lost.push(`azure://${entry.externalName}/${key}: missing`);
          else if (got !== objectBody(entry.externalName, i)) lost.push(`azure://${entry.externalName}/${key}: content changed`);
        }
        if (listed.length !== DATA_PER_HOLDER) lost.push(`container ${entry.externalName} lists ${listed.length} blobs, not ${DATA_PER_HOLDER}`);
      } catch (error) {
        return [`container ${entry.externalName}: ${String(error)}`];
      }
      return lost;
    },
  };
}

export function azureTables(azurite: Azurite): Store {
  const credential = new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey);
  const service = new TableServiceClient(azurite.tableEndpoint, credential, { allowInsecureConnection: true });
  const table = (name: string): TableClient => new TableClient(azurite.tableEndpoint, name, credential, { allowInsecureConnection: true });
  const names = async (): Promise<string[]> => {
    const found: string[] = [];
    for await (const t of service.listTables()) if (t.name) found.push(t.name);
    return found;
  };
  return {
    cloud: 'azure',
    kind: 'Table',
    dialect: 'azure-table',
    writes: { create: 'POST Tables', delete: 'DELETE Tables(NAME)', settings: [] },
    // an observe: Query Tables (one page, filtered by the name); a create: Create Table; an update:
    // nothing; a delete: Delete Table
    callsPerReconcile: 3,
    // an Azure table has no setting the portable spec changes (no TTL, no tags)
    editable: false,
    exists: async (name) => (await names()).includes(name),
    names,
    settingsProblems: async () => [],
    writeData: async (entry) => {
      for (let i = 0; i < DATA_PER_HOLDER; i++) await table(entry.externalName).createEntity({ partitionKey: 'data', rowKey: `item-${i}`, value: i * 7, owner: entry.name });
    },
    lostData: async (entry) => {
      const client = table(entry.externalName);
      const lost: string[] = [];
      try {
        let count = 0;
        for await (const _ of client.listEntities()) count++;
        for (let i = 0; i < DATA_PER_HOLDER; i++) {
          const got = await client.getEntity<{ value: number; owner: string }>('data', `item-${i}`).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(error)));
          if (!got) lost.push(`${entry.externalName}[item-${i}]: missing`);
          else if (got.value !== i * 7 || got.owner !== entry.name) lost.push(`${entry.externalName}[item-${i}]: changed`);
        }
        if (count !== DATA_PER_HOLDER) lost.push(`table ${entry.externalName} holds ${count} entities, not ${DATA_PER_HOLDER}`);
      } catch (error) {
        return [`table ${entry.externalName}: ${String(error)}`];
      }
      return lost;
    },
  };
}
