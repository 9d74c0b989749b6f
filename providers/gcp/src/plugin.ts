import type { ProviderPlugin } from '@k8or/core';
import { bucketConnector } from './bucket.js';
import { bigtableTableNaming, gcsBucketNaming } from './naming.js';
import { gcpRateLimits } from './rate-limits.js';
import { gcpSettingsSchema } from './settings.js';
import { tableConnector } from './table.js';
import { gcpValidation } from './validation.js';

/** The GCP provider: Bucket -> Cloud Storage, Table -> Bigtable. */
export const gcpProvider: ProviderPlugin = {
  provider: 'gcp',
  packageName: '@k8or/provider-gcp',
  connectors: { Bucket: bucketConnector, Table: tableConnector },
  naming: { Bucket: gcsBucketNaming, Table: bigtableTableNaming },
  settingsSchema: gcpSettingsSchema,
  rateLimits: gcpRateLimits,
  validation: gcpValidation,
};
