import { lazyConnector, type ProviderPlugin } from '@k8or/core';
import { azureSettingsSchema } from './config.js';
import { containerNaming, tableNaming } from './naming.js';
import { AzureServices, azureRateLimits } from './rate-limits.js';
import { azureTargetOf } from './target.js';
import { azureValidation } from './validation.js';

/** The Azure provider: Bucket -> Blob container, Table -> Table Storage table. */
export const azureProvider: ProviderPlugin = {
  provider: 'azure',
  packageName: '@k8or/provider-azure',
  // Each kind's module (and its SDK) loads with the first resource of that kind: Blob's client only once a Bucket
  // needs it, Table Storage's once a Table does, neither while no ProviderConfig of this cloud is used.
  connectors: {
    Bucket: lazyConnector(async () => (await import('./bucket.js')).bucketConnector, { list: true }),
    Table: lazyConnector(async () => (await import('./table.js')).tableConnector, { list: true }),
  },
  naming: { Bucket: containerNaming, Table: tableNaming },
  settingsSchema: azureSettingsSchema,
  rateLimits: azureRateLimits,
  // What one drift check of a resource in sync sends (the conformance kit checks it): Get Container
  // Properties for a Bucket (metadata and public access in its headers); Query Tables and Get Table ACL for
  // a Table.
  observeCalls: { Bucket: { [AzureServices.blobContainers]: 1 }, Table: { [AzureServices.tables]: 2 } },
  validation: azureValidation,
  targetOf: azureTargetOf,
};
