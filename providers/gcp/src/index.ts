/** The ContainerModule the operator loads (see ./module.ts). */
export { default } from './module.js';

export { gcpProvider } from './plugin.js';
export { bucketConnector, gcsBucketConnector, destroyStorageClients, GcsBucketClient, REQUEST_TIMEOUT_MS, type GcsConnectorOptions } from './bucket.js';
export { gcsBucketNaming, bigtableTableNaming } from './naming.js';
export * as gcsMapping from './bucket.js';
export { tableConnector, destroyBigtableClients, BigtableTableClient, rowKeyFor, COLUMN_FAMILIES_ANNOTATION, DEFAULT_COLUMN_FAMILY, IDENTITY_FAMILY_PREFIX } from './table.js';
export * as bigtableMapping from './table.js';
export { gcpValidation, validateBucket, validateTable, validateProviderConfig } from './validation.js';
export { classifyGcpError, gcpErrorCode, isNotFound } from './errors.js';
export { ownerLabelKey, ownerLabelValue, ownerTagsFromLabels } from './labels.js';
export { gcpSettings, gcpSettingsSchema, serviceAccountKeyFrom, emulatorHostOf, CREDENTIALS_KEY, type GcpSettings, type ServiceAccountKey } from './settings.js';
export { gcpRateLimits, GcpServices, gcsServiceFor, bigtableServiceFor, type GcpService } from './rate-limits.js';
