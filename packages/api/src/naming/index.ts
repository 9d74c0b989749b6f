export * from './violation.js';
export { validateS3BucketName } from './s3.js';
export { validateGcsBucketName } from './gcs.js';
export { validateAzureContainerName } from './azure-container.js';
export { validateDynamoDbTableName, validateDynamoDbAttributeName } from './dynamodb.js';
export { validateBigtableTableName } from './bigtable.js';
export { validateAzureTableName } from './azure-table.js';
export { shortHash, withHash, dnsLabelStem, genericDefaultName, validateGenericName } from './name-parts.js';

