import type { ProviderPlugin } from '@k8or/core';
import { bucketConnector } from './bucket.js';
import { awsNaming } from './naming.js';
import { awsRateLimits } from './rate-limits.js';
import { tableConnector } from './table.js';
import { awsValidation } from './validation.js';

/** The AWS provider: Bucket -> S3, Table -> DynamoDB. */
export const awsProvider: ProviderPlugin = {
  provider: 'aws',
  packageName: '@k8or/provider-aws',
  connectors: { Bucket: bucketConnector, Table: tableConnector },
  naming: awsNaming,
  rateLimits: awsRateLimits,
  validation: awsValidation,
};
