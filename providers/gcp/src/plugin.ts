import { lazyConnector, type ProviderPlugin } from '@k8or/core';
import { bigtableTableNaming, gcsBucketNaming } from './naming.js';
import { GcpServices, gcpRateLimits } from './rate-limits.js';
import { gcpSettingsSchema } from './settings.js';
import { gcpTargetOf } from './target.js';
import { gcpValidation } from './validation.js';

/** The GCP provider: Bucket -> Cloud Storage, Table -> Bigtable. */
export const gcpProvider: ProviderPlugin = {
  provider: 'gcp',
  packageName: '@k8or/provider-gcp',
  // Each kind's module (and its SDK) loads with the first resource of that kind: GCS's client only once a Bucket
  // needs it, Bigtable's once a Table does, neither while no ProviderConfig of this cloud is used.
  connectors: {
    Bucket: lazyConnector(async () => (await import('./bucket.js')).bucketConnector, { list: true }),
    Table: lazyConnector(async () => (await import('./table.js')).tableConnector, { list: true }),
  },
  naming: { Bucket: gcsBucketNaming, Table: bigtableTableNaming },
  settingsSchema: gcpSettingsSchema,
  rateLimits: gcpRateLimits,
  // What one drift check of a resource in sync sends (the conformance kit checks it): buckets.get for a
  // Bucket (every setting, labels and identity in one read); GetTable for a Table.
  observeCalls: { Bucket: { [GcpServices.gcsBucketMetadata]: 1 }, Table: { [GcpServices.bigtableTableReads]: 1 } },
  validation: gcpValidation,
  targetOf: gcpTargetOf,
};
