import { lazyConnector, type ProviderPlugin } from '@k8or/core';
import { awsTargetOf } from './target.js';
import { awsNaming } from './naming.js';
import { awsRateLimits } from './rate-limits.js';
import { awsValidation } from './validation.js';

/** The AWS provider: Bucket -> S3, Table -> DynamoDB. */
export const awsProvider: ProviderPlugin = {
  provider: 'aws',
  packageName: '@k8or/provider-aws',
  // Each kind's module (and its SDK) loads with the first resource of that kind: S3's client only once a Bucket
  // needs it, DynamoDB's once a Table does, neither while no ProviderConfig of this cloud is used.
  connectors: {
    Bucket: lazyConnector(async () => (await import('./bucket.js')).bucketConnector, { list: true }),
    Table: lazyConnector(async () => (await import('./table.js')).tableConnector, { list: true }),
  },
  naming: awsNaming,
  rateLimits: awsRateLimits,
  validation: awsValidation,
  targetOf: awsTargetOf,
};
