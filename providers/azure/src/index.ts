/** The ContainerModule the operator loads (see ./module.ts). */
export { default } from './module.js';

export { azureProvider } from './plugin.js';
export { azureBucketConnector, bucketConnector, BlobContainerClient } from './bucket.js';
export * as blobMapping from './bucket.js';
export { azureTableConnector, tableConnector, AzureTableClient } from './table.js';
export type { AzureConnectorOptions } from './paging.js';
export { containerNaming, tableNaming } from './naming.js';
export { azureValidation, validateBucket, validateTable, validateProviderConfig, metadataViolations } from './validation.js';
export { unappliedBucketSettings, unappliedTableSettings } from './unapplied.js';
export { classifyAzureError, azureErrorCode, BEING_DELETED_RETRY_MS } from './errors.js';
export { azureSettingsSchema, clientSettings, credentialsFrom, endpointFor, parseConnectionString, accountFromUrl, type AzureClientSettings, type AzureCredential } from './config.js';
export { desiredMetadata, diffMetadata, ownerMetadataName, ownerTagsIn } from './metadata.js';
export { clearAzureClients } from './clients.js';
export { retryAfterMsOf } from '@k8or/core';
export { azureRateLimits, AzureServices, type AzureService } from './rate-limits.js';
