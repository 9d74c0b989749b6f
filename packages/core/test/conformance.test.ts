// The provider conformance kit run against the in-memory provider: the kit's
// own test (every rule holds for a provider that keeps the contract), and the
// example a provider package copies with its own backend.
import { InMemoryCloud, inMemoryProviderPlugin, runProviderConformance } from '@k8or/core/testing';
import type { ProviderConfig, TableSpec } from '@k8or/api';

const GOOD = { accessKeyId: 'AKIAGOOD', secretAccessKey: 'good' };
const cloud = new InMemoryCloud({ acceptCredentials: (credentials) => credentials?.accessKeyId === GOOD.accessKeyId });
const plugin = inMemoryProviderPlugin(cloud, { provider: 'mem' });
const providerConfig: ProviderConfig = { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'mem' }, spec: { provider: 'mem', region: 'mem-1' } };
const bucket = (name: string) => {
  const found = cloud.buckets.get(name);
  if (!found) throw new Error(`no bucket ${name}`);
  return found;
};
const table = (name: string) => {
  const found = cloud.tables.get(name);
  if (!found) throw new Error(`no table ${name}`);
  return found;
};

runProviderConformance({
  plugin,
  kind: 'Bucket',
  start: async () => ({
    providerConfig,
    credentials: GOOD,
    spec: () => ({ versioning: true, labels: { team: 'storage', app: 'photos' } }),
    drift: [
      { field: 'spec.versioning', change: async (name) => void (bucket(name).versioning = false) },
      { field: 'spec.labels', change: async (name) => void (bucket(name).labels = { team: 'someone-else' }) },
    ],
    deniedAccess: () => ({ credentials: { accessKeyId: 'AKIAWRONG', secretAccessKey: 'wrong' } }),
    // Versioning is asked for by the spec: the protection set out of band is a retention lock.
    protect: async (name) => {
      bucket(name).retentionLocked = true;
      return { field: 'retentionPolicy', undo: async () => void (cloud.buckets.get(name) && (bucket(name).retentionLocked = false)) };
    },
  }),
});

runProviderConformance({
  plugin,
  kind: 'Table',
  start: async () => ({
    providerConfig,
    credentials: GOOD,
    spec: (): Omit<TableSpec, 'name'> => ({
      partitionKey: { name: 'id', type: 'string' },
      sortKey: { type: 'number', name: 'at' },
      billing: { writeCapacity: 5, mode: 'provisioned', readCapacity: 10 },
      pointInTimeRecovery: true,
      ttlAttribute: 'expiresAt',
      labels: { team: 'orders' },
    }),
    drift: [
      { field: 'spec.billing', change: async (name) => void (table(name).billing = { mode: 'onDemand' }) },
      { field: 'spec.pointInTimeRecovery', change: async (name) => void (table(name).pointInTimeRecovery = false) },
      { field: 'spec.ttlAttribute', change: async (name) => void delete table(name).ttlAttribute },
      { field: 'spec.labels', change: async (name) => void (table(name).labels = {}) },
    ],
    deniedAccess: () => ({ credentials: { accessKeyId: 'AKIAWRONG', secretAccessKey: 'wrong' } }),
    protect: async (name) => {
      table(name).deletionProtection = true;
      return { field: 'spec.deletionProtection', undo: async () => void (cloud.tables.get(name) && (table(name).deletionProtection = false)) };
    },
  }),
});
