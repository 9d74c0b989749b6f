export * from './violation.js';
export { validateS3BucketName } from './s3.js';
export { validateGcsBucketName } from './gcs.js';
export { validateAzureContainerName } from './azure-container.js';
export { validateDynamoDbTableName, validateDynamoDbAttributeName } from './dynamodb.js';
export { validateBigtableTableName } from './bigtable.js';
export { validateAzureTableName } from './azure-table.js';
export { defaultExternalName } from './external-name.js';
export { shortHash, withHash, dnsLabelStem, genericDefaultName, validateGenericName } from './name-parts.js';

import type { ManagedKindName } from '../group.js';
import type { BuiltinProvider } from '../types/provider-config.js';
import type { NameValidator } from './violation.js';
import { validateS3BucketName } from './s3.js';
import { validateGcsBucketName } from './gcs.js';
import { validateAzureContainerName } from './azure-container.js';
import { validateDynamoDbTableName } from './dynamodb.js';
import { validateBigtableTableName } from './bigtable.js';
import { validateAzureTableName } from './azure-table.js';

/** The naming rule for each kind on each cloud. */
export const NAME_VALIDATORS: Record<ManagedKindName, Record<BuiltinProvider, NameValidator>> = {
  Bucket: { aws: validateS3BucketName, gcp: validateGcsBucketName, azure: validateAzureContainerName },
  Table: { aws: validateDynamoDbTableName, gcp: validateBigtableTableName, azure: validateAzureTableName },
};
