import type { CloudServiceRateLimit } from '@k8or/core';

/** The Azure Storage services the provider's calls draw on (keys of `ProviderConfig.spec.rateLimits`). */
export const AzureServices = {
  /** Blob service container calls: create, get properties, metadata, ACL, list (blobs, containers), delete. */
  blobContainers: 'blob-containers',
  /** Table service table calls: Query Tables, Create Table, Delete Table. */
  tables: 'table-service',
} as const;
export type AzureService = (typeof AzureServices)[keyof typeof AzureServices];

// Azure's "Scalability and performance targets for standard storage accounts": 20,000 requests per second
// per storage account (more in some regions), shared by every client of the account, applications' blob and
// entity traffic included. k8or's container and table management goes through these data-plane APIs, not
// through Azure Resource Manager (whose storage resource provider allows 10 account writes per second and
// 800 reads per 5 minutes, per subscription and region): 100 per second each, half a percent of the
// account's target, is our conservative choice.
/** Defaults per ProviderConfig (one storage account). */
export const azureRateLimits: Record<AzureService, CloudServiceRateLimit> = {
  [AzureServices.blobContainers]: {
    requestsPerSecond: 100,
    burst: 100,
    description: 'Blob service container calls (Create/Delete Container, properties, metadata, ACL, the emptiness listing, List Containers); the account takes 20,000 requests per second from all its clients.',
  },
  [AzureServices.tables]: {
    requestsPerSecond: 100,
    burst: 100,
    description: 'Table service calls (Query Tables, Create Table, Delete Table); the account takes 20,000 requests per second from all its clients.',
  },
};
