import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Bigtable } from '@google-cloud/bigtable';
import { Storage } from '@google-cloud/storage';
import { bucketConnector, destroyBigtableClients, destroyStorageClients, tableConnector } from '@k8or/provider-gcp';
import { findCbtemulator, startBigtableEmulator, startGcsFake, type BigtableEmulator, type GcsFake } from '@k8or/local-clouds';
import { INSTANCE, PROJECT, call, gcpProviderConfig } from './support.ts';

const inventoryContext = (endpoints: { bucket?: string; table?: string }, calls: string[]) => ({
  providerConfig: gcpProviderConfig(endpoints),
  credentials: undefined,
  recordCall: async <T>(operation: string, run: () => Promise<T>): Promise<T> => {
    calls.push(operation);
    return await run();
  },
});

describe('Connector.list (k8or import) on GCP: what the project holds, read only', () => {
  let fake: GcsFake;

  before(async () => {
    fake = await startGcsFake();
  });
  after(async () => {
    await destroyStorageClients();
    await fake.stop();
  });

  it("lists every Cloud Storage bucket of the ProviderConfig's project with its location and versioning, through buckets.list only", async () => {
    const storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
    await storage.createBucket('inventory-eu', { location: 'EUROPE-WEST1', versioning: { enabled: true } });
    await storage.createBucket('inventory-us', { location: 'US-CENTRAL1' });
    await new Storage({ apiEndpoint: fake.endpoint, projectId: 'other-project-1' }).createBucket('inventory-elsewhere', { location: 'US-CENTRAL1' });
    const calls: string[] = [];
    const before = fake.requests.length;
    const items = await bucketConnector.list?.(inventoryContext({ bucket: fake.endpoint }, calls), call());
    assert.deepEqual(
      items?.filter((i) => i.externalName.startsWith('inventory-')).sort((a, b) => a.externalName.localeCompare(b.externalName)),
      [
        { externalName: 'inventory-eu', spec: { location: 'europe-west1', versioning: true } },
        { externalName: 'inventory-us', spec: { location: 'us-central1', versioning: false } },
      ],
    );
    assert.deepEqual(calls, ['buckets.list']);
    assert.deepEqual(fake.requests.slice(before).map((r) => r.method), ['GET']);
  });
});

const located = findCbtemulator();
const skip = 'missing' in located ? `${located.missing} (this test needs it)` : false;

describe('Connector.list (k8or import) on Bigtable: the tables of the instance', { skip }, () => {
  let emulator: BigtableEmulator;
  let bigtable: Bigtable;

  before(async () => {
    emulator = await startBigtableEmulator();
    bigtable = new Bigtable({ projectId: PROJECT, apiEndpoint: emulator.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
  });
  after(async () => {
    await destroyBigtableClients();
    await bigtable?.close();
    await emulator?.stop();
  });

  it("lists every table of the ProviderConfig's instance, each with Bigtable's one row key (bytes) as its partition key, through ListTables only", async () => {
    const admin = bigtable.admin.getTableAdminClient();
    const parent = `projects/${PROJECT}/instances/${INSTANCE}`;
    await admin.createTable({ parent, tableId: 'inventory-events', table: { columnFamilies: { d: {} } } });
    await admin.createTable({ parent, tableId: 'inventory-users', table: { columnFamilies: { d: {} } } });
    await admin.createTable({ parent: `projects/${PROJECT}/instances/other-instance`, tableId: 'inventory-elsewhere', table: { columnFamilies: { d: {} } } });
    const calls: string[] = [];
    const items = await tableConnector.list?.(inventoryContext({ table: `http://${emulator.host}` }, calls), call());
    assert.deepEqual(
      items?.filter((i) => i.externalName.startsWith('inventory-')).sort((a, b) => a.externalName.localeCompare(b.externalName)),
      [
        { externalName: 'inventory-events', spec: { partitionKey: { name: 'rowKey', type: 'binary' } } },
        { externalName: 'inventory-users', spec: { partitionKey: { name: 'rowKey', type: 'binary' } } },
      ],
    );
    assert.deepEqual(calls, ['ListTables']);
    const [tables] = await admin.listTables({ parent });
    assert.deepEqual(tables.map((t) => t.name).sort(), [`${parent}/tables/inventory-events`, `${parent}/tables/inventory-users`], 'listing wrote nothing');
  });
});
