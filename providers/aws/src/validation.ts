/**
 * The AWS provider's own rules, exported for the webhook and `k8or validate`: what S3 and DynamoDB
 * would reject (violations) and what they cannot honour exactly (portability warnings). Pure functions.
 */
import {
  validateDynamoDbAttributeName,
  validateDynamoDbTableName,
  validateS3BucketName,
  type Bucket,
  type ManagedKindName,
  type ManagedResource,
  type ProviderConfig,
  type Table,
  type Violation,
} from '@k8or/api';
import type { ProviderValidation, ValidationResult } from '@k8or/core';

/** AWS region names such as us-east-1, eu-central-2, us-gov-west-1, ap-southeast-4. */
export const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$/;
/** KMS key id (UUID, multi-Region mrk- id), key ARN, alias name or alias ARN. */
const KMS_KEY = /^(arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/.+|alias\/[A-Za-z0-9/_-]+|(mrk-)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|mrk-[0-9a-f]{32})$/;
/** Characters AWS allows in tag keys and values. */
const TAG_CHARACTERS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
/** Tags AWS allows per bucket or table, less the five k8or owner tags. */
export const MAX_USER_TAGS = 50 - 5;
/** S3's minimum age for a transition to STANDARD_IA. */
const MIN_INFREQUENT_ACCESS_DAYS = 30;

function labelViolations(labels: Readonly<Record<string, string>> | undefined): Violation[] {
  const violations: Violation[] = [];
  const entries = Object.entries(labels ?? {});
  if (entries.length > MAX_USER_TAGS) {
    violations.push({ field: 'spec.labels', rule: 'aws.tag-count', message: `AWS allows 50 tags per resource and k8or writes 5 owner tags, so at most ${MAX_USER_TAGS} labels; found ${entries.length}` });
  }
  for (const [key, value] of entries) {
    const field = `spec.labels.${key}`;
    if (key.length < 1 || key.length > 128) violations.push({ field, rule: 'aws.tag-key-length', message: 'AWS tag keys must be 1 to 128 characters long' });
    if (value.length > 256) violations.push({ field, rule: 'aws.tag-value-length', message: 'AWS tag values must be at most 256 characters long' });
    if (key.toLowerCase().startsWith('aws:')) violations.push({ field, rule: 'aws.tag-reserved', message: 'AWS reserves tag keys starting with "aws:"' });
    if (key.startsWith('k8or.io/')) violations.push({ field, rule: 'aws.tag-owner', message: 'tag keys starting with "k8or.io/" are k8or\'s owner tags' });
    if (!TAG_CHARACTERS.test(key) || !TAG_CHARACTERS.test(value)) {
      violations.push({ field, rule: 'aws.tag-characters', message: 'AWS tags may contain only letters, digits, spaces and _ . : / = + - @' });
    }
  }
  return violations;
}

/** Rules for a Bucket on S3. */
export function validateBucket(bucket: Bucket, providerConfig: ProviderConfig | undefined): ValidationResult {
  const { spec } = bucket;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (spec.name) {
    violations.push(...validateS3BucketName(spec.name));
    if (spec.name.includes('.')) {
      warnings.push(`spec.name: S3 bucket names with dots ("${spec.name}") break TLS for virtual-hosted-style URLs (https://${spec.name}.s3.amazonaws.com) because the wildcard certificate does not match; clients must use path-style URLs`);
    }
  }
  const location = spec.location ?? providerConfig?.spec.region;
  if (spec.location !== undefined && !AWS_REGION.test(spec.location)) {
    violations.push({ field: 'spec.location', rule: 'aws.region', message: `"${spec.location}" is not an AWS region name such as us-east-1 or eu-west-1 (S3 answers InvalidLocationConstraint)` });
  }
  if (location === undefined) warnings.push('spec.location: neither the Bucket nor its ProviderConfig names a region; S3 buckets are then created in us-east-1');
  if (spec.encryption?.type === 'CustomerManaged' && spec.encryption.keyId !== undefined && !KMS_KEY.test(spec.encryption.keyId)) {
    violations.push({ field: 'spec.encryption.keyId', rule: 'aws.kms-key', message: 'must be a KMS key ID, key ARN, alias name (alias/...) or alias ARN' });
  }
  if (spec.publicAccess === 'Allowed') {
    warnings.push('spec.publicAccess: Allowed turns off the bucket\'s Block Public Access settings; an account-level Block Public Access setting still wins, and objects stay private until a policy or ACL grants access');
  }
  for (const [index, rule] of (spec.lifecycle ?? []).entries()) {
    const field = `spec.lifecycle[${index}]`;
    if (rule.noncurrentVersionExpirationDays !== undefined && !spec.versioning) {
      warnings.push(`${field}.noncurrentVersionExpirationDays: has no effect while spec.versioning is false (there are no noncurrent versions)`);
    }
    for (const transition of rule.transitions ?? []) {
      if (transition.tier === 'InfrequentAccess' && transition.days < MIN_INFREQUENT_ACCESS_DAYS) {
        violations.push({ field: `${field}.transitions`, rule: 's3.transition-days', message: `S3 moves objects to STANDARD_IA no earlier than ${MIN_INFREQUENT_ACCESS_DAYS} days after creation; found ${transition.days}` });
      }
      if (rule.expirationDays !== undefined && transition.days >= rule.expirationDays) {
        violations.push({ field: `${field}.transitions`, rule: 's3.transition-before-expiration', message: `S3 requires expirationDays (${rule.expirationDays}) to be greater than every transition's days (${transition.days})` });
      }
      if (transition.tier === 'Archive') {
        warnings.push(`${field}.transitions: tier Archive maps to S3 GLACIER (Flexible Retrieval): objects must be restored (minutes to hours) before they can be read, and are billed for at least 90 days`);
      }
      if (transition.tier === 'InfrequentAccess') {
        warnings.push(`${field}.transitions: tier InfrequentAccess maps to S3 STANDARD_IA: billed for at least 30 days and 128 KB per object`);
      }
    }
  }
  violations.push(...labelViolations(spec.labels));
  return { violations, warnings };
}

/** Rules for a Table on DynamoDB. */
export function validateTable(table: Table): ValidationResult {
  const { spec } = table;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (spec.name) violations.push(...validateDynamoDbTableName(spec.name));
  violations.push(...validateDynamoDbAttributeName(spec.partitionKey.name, 'spec.partitionKey.name'));
  if (spec.sortKey) violations.push(...validateDynamoDbAttributeName(spec.sortKey.name, 'spec.sortKey.name'));
  if (spec.ttlAttribute) violations.push(...validateDynamoDbAttributeName(spec.ttlAttribute, 'spec.ttlAttribute'));
  const billing = spec.billing;
  if (billing?.mode === 'provisioned' && (billing.readCapacity === undefined || billing.writeCapacity === undefined)) {
    violations.push({ field: 'spec.billing', rule: 'dynamodb.provisioned-capacity', message: 'provisioned billing needs readCapacity and writeCapacity (DynamoDB answers ValidationException)' });
  }
  if (spec.ttlAttribute) warnings.push('spec.ttlAttribute: DynamoDB deletes expired items within a few days of the expiry time, not at the exact second, and allows one TTL change per table per hour');
  violations.push(...labelViolations(spec.labels));
  return { violations, warnings };
}

/** Rules for an AWS ProviderConfig. */
export function validateProviderConfig(providerConfig: ProviderConfig): ValidationResult {
  const { spec } = providerConfig;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (!spec.region) violations.push({ field: 'spec.region', rule: 'aws.region-required', message: 'an AWS ProviderConfig needs a region' });
  else if (!AWS_REGION.test(spec.region)) violations.push({ field: 'spec.region', rule: 'aws.region', message: `"${spec.region}" is not an AWS region name such as us-east-1` });
  for (const [field, value] of [['spec.endpoint', spec.endpoint], ['spec.endpoints.bucket', spec.endpoints?.bucket], ['spec.endpoints.table', spec.endpoints?.table]] as const) {
    if (value === undefined) continue;
    if (!URL.canParse(value)) violations.push({ field, rule: 'aws.endpoint', message: `"${value}" is not a URL` });
    else if (new URL(value).protocol === 'http:' && !/^(localhost|127\.|\[::1\])/.test(new URL(value).host)) {
      warnings.push(`${field}: plain http to ${new URL(value).host} sends requests unencrypted (signatures still protect the keys)`);
    }
  }
  for (const field of ['project', 'storageAccount', 'bigtableInstance'] as const) {
    if (spec[field] !== undefined) warnings.push(`spec.${field}: ignored by the aws provider`);
  }
  return { violations, warnings };
}

/** The provider's validation, as the webhook calls it. */
export const awsValidation: ProviderValidation = {
  validate(kind: ManagedKindName, resource: ManagedResource, providerConfig: ProviderConfig | undefined): ValidationResult {
    return kind === 'Bucket' ? validateBucket(resource as Bucket, providerConfig) : validateTable(resource as Table);
  },
  validateProviderConfig,
};
