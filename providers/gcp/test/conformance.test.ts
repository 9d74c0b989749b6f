// The provider conformance kit (@k8or/core/testing) against GCP: the real @google-cloud/storage
// against the GCS fake, and the real @google-cloud/bigtable against Google's Bigtable emulator.
import { Bigtable } from '@google-cloud/bigtable';
import { Storage } from '@google-cloud/storage';
import type { BucketSpec, ProviderConfig, TableSpec } from '@k8or/api';
import { runProviderConformance } from '@k8or/core/testing';
import { findCbtemulator, startBigtableEmulator, startGcsFake, type BigtableEmulator, type GcsFake } from '@k8or/local-clouds';
import { destroyBigtableClients, destroyStorageClients, gcpProvider } from '@k8or/provider-gcp';
import { INSTANCE, PROJECT, serviceAccountKey } from './support.ts';

/** The provider's write calls: GCS JSON API methods by name, Bigtable admin RPCs. */
const isWrite = (operation: string): boolean => /\.(insert|patch|delete)$/.test(operation) || /^(Create|Modify|Update|Delete)/.test(operation);

function providerConfig(endpoints: { bucket?: string; table?: string }): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'gcp' }, spec: { provider: 'gcp', project: PROJECT, region: 'europe-west1', bigtableInstance: INSTANCE, endpoints } };
}

const operator = serviceAccountKey('conformance@k8or-test-project.iam.gserviceaccount.com');
const denied = serviceAccountKey('denied@k8or-test-project.iam.gserviceaccount.com');
let fake: GcsFake;
let storage: Storage;
runProviderConformance({
  plugin: gcpProvider,
  kind: 'Bucket',
  start: async () => {
    fake = await startGcsFake({
      serviceAccounts: {
        [operator.key['client_email'] as string]: { project: PROJECT, publicKeyPem: operator.publicKeyPem },
        [denied.key['client_email'] as string]: { project: PROJECT, publicKeyPem: denied.publicKeyPem },
      },
    });
    fake.deny(denied.key['client_email'] as string);
    storage = new Storage({ apiEndpoint: fake.endpoint, projectId: PROJECT });
    return {
      providerConfig: providerConfig({ bucket: fake.endpoint }),
      credentials: { 'credentials.json': operator.json },
      isWrite,
      spec: (): Omit<BucketSpec, 'name'> => ({
        location: 'europe-west1',
        versioning: true,
        encryption: { keyId: 'projects/k8or-test-project/locations/europe-west1/keyRings/k8or/cryptoKeys/photos', type: 'CustomerManaged' },
        labels: { app: 'photos', team: 'media' },
        lifecycle: [
          { id: 'cold', transitions: [{ tier: 'Archive', days: 365 }, { days: 30, tier: 'InfrequentAccess' }], prefix: 'raw/' },
          { noncurrentVersionExpirationDays: 14, id: 'versions' },
        ],
      }),
      drift: [
        { field: 'spec.versioning', change: async (name) => void (await storage.bucket(name).setMetadata({ versioning: { enabled: false } })) },
        { field: 'spec.publicAccess', change: async (name) => void (await storage.bucket(name).setMetadata({ iamConfiguration: { publicAccessPrevention: 'inherited' } })) },
        { field: 'spec.encryption', change: async (name) => void (await storage.bucket(name).setMetadata({ encryption: null })) },
        { field: 'spec.lifecycle', change: async (name) => void (await storage.bucket(name).setMetadata({ lifecycle: { rule: [{ action: { type: 'Delete' }, condition: { age: 1 } }] } })) },
        { field: 'spec.labels', change: async (name) => void (await storage.bucket(name).setMetadata({ labels: { team: 'someone-else' } })) },
        { field: 'storageClass', change: async (name) => void (await storage.bucket(name).setMetadata({ storageClass: 'COLDLINE' })) },
      ],
      deniedAccess: () => ({ credentials: { 'credentials.json': denied.json } }),
      // The spec asks for versioning and public access prevention; the GCS fake has no retention policy.
      optOut: { protection: 'the kit\'s spec asks for versioning and public access prevention, and the GCS fake has no retention policy; bucket.integration.test.ts holds them out of band' },
    };
  },
  stop: async () => {
    await destroyStorageClients();
    await fake?.stop();
  },
});

const emulator = findCbtemulator();
if ('missing' in emulator) {
  console.log(`# skipping the Bigtable conformance cases: ${emulator.missing}`);
} else {
  let bigtable: BigtableEmulator;
  let client: Bigtable;
  const tablePath = (id: string): string => `projects/${PROJECT}/instances/${INSTANCE}/tables/${id}`;
  runProviderConformance({
    plugin: gcpProvider,
    kind: 'Table',
    start: async () => {
      bigtable = await startBigtableEmulator();
      client = new Bigtable({ projectId: PROJECT, apiEndpoint: bigtable.host, metricsEnabled: false, universeDomain: 'googleapis.com' });
      const admin = client.admin.getTableAdminClient();
      return {
        providerConfig: providerConfig({ table: `http://${bigtable.host}` }),
        isWrite,
        spec: (): Omit<TableSpec, 'name'> => ({ partitionKey: { name: 'customerId', type: 'string' }, sortKey: { type: 'string', name: 'orderedAt' }, deletionProtection: false }),
        drift: [
          { field: 'columnFamilies.d', change: async (id) => void (await admin.modifyColumnFamilies({ name: tablePath(id), modifications: [{ id: 'd', drop: true }] })) },
          { field: 'columnFamilies.d', change: async (id) => void (await admin.modifyColumnFamilies({ name: tablePath(id), modifications: [{ id: 'd', update: { gcRule: { maxNumVersions: 7 } } }] })) },
          // Deletion protection turned on out of band is drift k8or reports and never repairs (it never lowers a protection): table.integration.test.ts.
        ],
        // The emulator has no credentials or IAM: a ProviderConfig pointing where no Bigtable answers stands for denied access.
        deniedAccess: () => ({ providerConfig: providerConfig({ table: 'http://127.0.0.1:1' }) }),
        protect: async (id) => {
          const set = (deletionProtection: boolean) => admin.updateTable({ table: { name: tablePath(id), deletionProtection }, updateMask: { paths: ['deletion_protection'] } });
          await set(true);
          return {
            field: 'spec.deletionProtection',
            undo: async () => void (await set(false).catch((error: { code?: number }) => {
              if (error.code !== 5) throw error;
            })),
          };
        },
      };
    },
    stop: async () => {
      await destroyBigtableClients();
      await client?.close();
      await bigtable?.stop();
    },
  });
}
