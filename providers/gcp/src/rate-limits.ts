import type { CloudServiceRateLimit } from '@k8or/core';

/** The Google Cloud services the provider's calls draw on (keys of `ProviderConfig.spec.rateLimits`). */
export const GcpServices = {
  /** buckets.insert and buckets.delete: Cloud Storage limits them per project. */
  gcsBucketCreateDelete: 'gcs-bucket-create-delete',
  /** buckets.get, buckets.patch, buckets.list: bucket metadata reads and updates. */
  gcsBucketMetadata: 'gcs-bucket-metadata',
  /** objects.list and objects.delete, made only to empty a bucket on delete with forceDelete. */
  gcsObjects: 'gcs-objects',
  /** Bigtable table admin reads: GetTable, ListTables. */
  bigtableTableReads: 'bigtable-table-reads',
  /** Bigtable table admin writes: CreateTable, DeleteTable, ModifyColumnFamilies, UpdateTable. */
  bigtableTableWrites: 'bigtable-table-writes',
} as const;
export type GcpService = (typeof GcpServices)[keyof typeof GcpServices];

/** Defaults per ProviderConfig (one project; Bigtable quotas are per project too). */
export const gcpRateLimits: Record<GcpService, CloudServiceRateLimit> = {
  // Cloud Storage "Quotas & limits": bucket creation and deletion, approximately 1 request every 2 seconds
  // per project. The limit itself, with no burst beyond one.
  [GcpServices.gcsBucketCreateDelete]: {
    requestsPerSecond: 0.5,
    burst: 1,
    description: 'Cloud Storage buckets.insert and buckets.delete; GCS allows about 1 every 2 seconds per project.',
  },
  // Cloud Storage "Quotas & limits": one metadata update per second per bucket (k8or patches a bucket at
  // most once per reconcile); no per-project rate is published for bucket reads. 50/s with a burst of 100
  // is our conservative choice.
  [GcpServices.gcsBucketMetadata]: {
    requestsPerSecond: 50,
    burst: 100,
    description: 'Cloud Storage buckets.get, buckets.patch and buckets.list; GCS publishes one update per second per bucket and no project rate for reads: a conservative choice.',
  },
  // Cloud Storage "Quotas & limits": buckets initially support roughly 1,000 object writes per second.
  [GcpServices.gcsObjects]: {
    requestsPerSecond: 100,
    burst: 100,
    description: 'Cloud Storage objects.list and objects.delete when emptying a bucket with forceDelete; a bucket starts at about 1,000 writes per second.',
  },
  // Bigtable "Quotas and limits": reading a table's metadata and listing tables, 10 operations per second
  // per project. Half of it, so other admin clients of the project keep theirs.
  [GcpServices.bigtableTableReads]: {
    requestsPerSecond: 5,
    burst: 10,
    description: 'Bigtable GetTable and ListTables; Bigtable allows 10 per second per project.',
  },
  // Bigtable "Quotas and limits": creating and deleting tables and creating, updating or deleting column
  // families, at most 1 operation per second and 5,000 per day per project. Half the rate; the daily cap
  // is not a rate and is left to Bigtable (its refusal is retryable).
  [GcpServices.bigtableTableWrites]: {
    requestsPerSecond: 0.5,
    burst: 1,
    description: 'Bigtable CreateTable, DeleteTable, ModifyColumnFamilies and UpdateTable; Bigtable allows at most 1 per second (5,000 a day) per project.',
  },
};

const BUCKET_SERVICES: Readonly<Record<string, GcpService>> = {
  'buckets.insert': GcpServices.gcsBucketCreateDelete,
  'buckets.delete': GcpServices.gcsBucketCreateDelete,
  'objects.list': GcpServices.gcsObjects,
  'objects.delete': GcpServices.gcsObjects,
};

/** The service a Cloud Storage operation draws on (bucket metadata unless listed). */
export function gcsServiceFor(operation: string): GcpService {
  return BUCKET_SERVICES[operation] ?? GcpServices.gcsBucketMetadata;
}

const TABLE_READS: ReadonlySet<string> = new Set(['GetTable', 'ListTables']);

/** The service a Bigtable table admin operation draws on (writes unless a read). */
export function bigtableServiceFor(operation: string): GcpService {
  return TABLE_READS.has(operation) ? GcpServices.bigtableTableReads : GcpServices.bigtableTableWrites;
}
