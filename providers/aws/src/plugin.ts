import { lazyConnector, type ProviderPlugin } from '@k8or/core';
import { awsTargetOf } from './target.js';
import { awsNaming } from './naming.js';
import { AwsServices, awsRateLimits } from './rate-limits.js';
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
  // What one drift check of a resource in sync sends (the conformance kit checks it): a Bucket's observe reads
  // GetBucketLocation, GetBucketVersioning, GetPublicAccessBlock, GetBucketEncryption,
  // GetBucketLifecycleConfiguration, GetBucketTagging and ListBuckets (its creation date, its identity); a
  // Table's DescribeTable, DescribeTimeToLive, DescribeContinuousBackups and ListTagsOfResource.
  observeCalls: { Bucket: { [AwsServices.s3Buckets]: 7 }, Table: { [AwsServices.dynamodb]: 4 } },
  validation: awsValidation,
  targetOf: awsTargetOf,
};
