import type { ProviderPlugin } from '@k8or/core';
import { bucketConnector } from './bucket.js';
import { azureSettingsSchema } from './config.js';
import { containerNaming, tableNaming } from './naming.js';
import { azureRateLimits } from './rate-limits.js';
import { tableConnector } from './table.js';
import { azureValidation } from './validation.js';

/** The Azure provider: Bucket -> Blob container, Table -> Table Storage table. */
export const azureProvider: ProviderPlugin = {
  provider: 'azure',
  packageName: '@k8or/provider-azure',
  connectors: { Bucket: bucketConnector, Table: tableConnector },
  naming: { Bucket: containerNaming, Table: tableNaming },
  settingsSchema: azureSettingsSchema,
  rateLimits: azureRateLimits,
  validation: azureValidation,
};
