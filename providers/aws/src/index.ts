/** The ContainerModule the operator loads (see ./module.ts). */
export { default } from './module.js';

export { awsProvider } from './plugin.js';
export { bucketConnector, destroyS3Clients, S3BucketClient } from './bucket.js';
export * as s3Mapping from './bucket.js';
export { tableConnector, destroyDynamoDbClients, DynamoDbTableClient } from './table.js';
export * as dynamoDbMapping from './table.js';
export { awsNaming, defaultS3BucketName, defaultDynamoDbTableName } from './naming.js';
export { awsValidation, validateBucket, validateTable, validateProviderConfig } from './validation.js';
export { classifyAwsError, awsErrorCode, isAccessDenied } from './errors.js';
export { clientSettings, credentialsFrom, endpointFor, type AwsClientSettings, type StaticCredentials } from './config.js';
export { awsRateLimits, AwsServices, s3ServiceFor, type AwsService } from './rate-limits.js';
export { retryWithoutQuota } from './retry-strategy.js';
