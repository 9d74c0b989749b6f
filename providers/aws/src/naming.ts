/**
 * The AWS provider's naming rules, which the webhook and the engine use to
 * validate and default `spec.name`: S3 bucket names (global across every AWS
 * account) and DynamoDB table names (per account and region).
 */
import { dnsLabelStem, shortHash, validateDynamoDbTableName, validateS3BucketName, withHash, type ManagedKindName } from '@k8or/api';
import type { DefaultNameInput, NamingRules } from '@k8or/core';

/**
 * `<namespace>-<name>-<hash>`, at most 63 characters of lowercase letters,
 * digits and hyphens. The hash covers the cluster id too: S3 names are global,
 * so `default/photos` must not map to the same bucket in every cluster.
 */
export function defaultS3BucketName(input: DefaultNameInput): string {
  const hash = shortHash(input.clusterId, input.namespace, input.name);
  const name = withHash(dnsLabelStem(`${input.namespace}-${input.name}`), hash, { maxLength: 63 });
  // A stem that starts with a reserved prefix (sthree-, xn--...) or reads as an address gets k8or's own.
  return validateS3BucketName(name).length === 0 ? name : withHash(`k8or-${dnsLabelStem(input.name)}`, hash, { maxLength: 63 });
}

/**
 * `<namespace>.<name>-<hash>`, at most 255 characters. The hash (cluster id,
 * namespace, name) keeps two long names apart when they are cut.
 */
export function defaultDynamoDbTableName(input: DefaultNameInput): string {
  const stem = `${input.namespace}.${input.name}`.replace(/[^A-Za-z0-9_.-]/g, '-');
  return withHash(stem, shortHash(input.clusterId, input.namespace, input.name), { maxLength: 255 });
}

export const awsNaming: { [K in ManagedKindName]: NamingRules } = {
  Bucket: { validate: (name, field) => validateS3BucketName(name, field), defaultName: defaultS3BucketName },
  Table: { validate: (name, field) => validateDynamoDbTableName(name, field), defaultName: defaultDynamoDbTableName },
};
