import type { Connector, ProviderPlugin } from '@k8or/core';
import { bucketConnector } from './bucket.js';
import { tableConnector } from './table.js';
import { gcpValidation } from './validation.js';

/** The GCP provider: Bucket -> Cloud Storage, Table -> Bigtable. */
export const gcpProvider: ProviderPlugin = {
  provider: 'gcp',
  packageName: '@k8or/provider-gcp',
  connectors: { Bucket: bucketConnector as Connector, Table: tableConnector as Connector },
  validation: gcpValidation,
};
