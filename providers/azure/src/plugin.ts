import type { Connector, ProviderPlugin } from '@k8or/core';
import { bucketConnector } from './bucket.js';
import { tableConnector } from './table.js';
import { azureValidation } from './validation.js';

/** The Azure provider: Bucket -> Blob container, Table -> Table Storage table. */
export const azureProvider: ProviderPlugin = {
  provider: 'azure',
  packageName: '@k8or/provider-azure',
  connectors: { Bucket: bucketConnector as Connector, Table: tableConnector as Connector },
  validation: azureValidation,
};
