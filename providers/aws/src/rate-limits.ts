import type { CloudServiceRateLimit } from '@k8or/core';

/** The AWS control-plane services the provider's calls draw on (keys of `ProviderConfig.spec.rateLimits`). */
export const AwsServices = {
  /** Bucket-level S3 calls: CreateBucket, DeleteBucket, ListBuckets and every Get/Put/Delete of a bucket's configuration. */
  s3Buckets: 's3-buckets',
  /** Object-level S3 calls, made only to empty a bucket on delete with forceDelete: ListObjectVersions, DeleteObjects. */
  s3Objects: 's3-objects',
  /** DynamoDB control plane: Create/Describe/Update/Delete/ListTables, TTL, continuous backups, tags. */
  dynamodb: 'dynamodb-control-plane',
} as const;
export type AwsService = (typeof AwsServices)[keyof typeof AwsServices];

/**
 * Defaults per ProviderConfig (one account and region). The published limits
 * are per account (and region), shared with everything else the account
 * runs, so each default keeps k8or to a fraction of it.
 */
export const awsRateLimits: Record<AwsService, CloudServiceRateLimit> = {
  // S3 publishes no request rate for bucket operations; its guide says bucket operations work against a
  // centralized, global resource space and keeps them off high-availability paths (Amazon S3 User Guide,
  // "Bucket quotas, restrictions, and limitations"). 50/s with a burst of 100 is our conservative choice,
  // far below the per-prefix data-plane rates (3,500 writes, 5,500 reads per second).
  [AwsServices.s3Buckets]: {
    requestsPerSecond: 50,
    burst: 100,
    description: 'S3 bucket calls (CreateBucket, DeleteBucket, ListBuckets, Get/Put/Delete of a bucket configuration). S3 publishes no rate for them; a conservative choice.',
  },
  // S3 supports at least 3,500 PUT/COPY/POST/DELETE requests per second per partitioned prefix (Amazon S3
  // User Guide, "Best practices design patterns: optimizing Amazon S3 performance"). DeleteObjects removes
  // up to 1,000 versions per request; 100/s leaves the application's own traffic almost all of it.
  [AwsServices.s3Objects]: {
    requestsPerSecond: 100,
    burst: 100,
    description: 'S3 object calls made to empty a bucket with forceDelete (ListObjectVersions, DeleteObjects); S3 takes 3,500 writes per second per prefix.',
  },
  // DynamoDB throttles control-plane requests at 2,500 per second per account and Region (Amazon DynamoDB
  // Developer Guide, "Best practices for managing the control plane in DynamoDB"). A tenth of it, shared by
  // every table k8or manages through this ProviderConfig.
  [AwsServices.dynamodb]: {
    requestsPerSecond: 250,
    burst: 250,
    description: 'DynamoDB control plane (CreateTable, DescribeTable, UpdateTable, DeleteTable, ListTables, TTL, continuous backups, tags); DynamoDB throttles it at 2,500 requests per second per account and Region.',
  },
};

const S3_OBJECT_OPERATIONS: ReadonlySet<string> = new Set(['ListObjectVersions', 'DeleteObjects']);

/** The service an S3 operation draws on. */
export function s3ServiceFor(operation: string): AwsService {
  return S3_OBJECT_OPERATIONS.has(operation) ? AwsServices.s3Objects : AwsServices.s3Buckets;
}
