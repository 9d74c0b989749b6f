/**
 * The Azure provider's own rules, exported for the webhook and `k8or validate`: what Blob and Table
 * Storage would reject (violations) and what they cannot honour (portability warnings). Pure functions.
 */
import {
  type Bucket,
  type ManagedKindName,
  type ManagedResource,
  type ProviderConfig,
  type Table,
  type Violation,
} from '@k8or/api';
import type { ProviderValidation, ValidationResult } from '@k8or/core';
import { OWNER_METADATA_PREFIX } from './metadata.js';
import { unappliedBucketSettings, unappliedTableSettings } from './unapplied.js';

/** A metadata name: a C# identifier (ASCII letters, digits and underscores, not starting with a digit). */
const METADATA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Metadata values travel as HTTP header values: printable ASCII. */
const METADATA_VALUE = /^[\x20-\x7e]*$/;
/** Azure's limit on all of a container's metadata names and values together. */
export const MAX_METADATA_BYTES = 8 * 1024;
/** What k8or's owner metadata takes of that (five names and values of at most 253 characters). */
const OWNER_METADATA_BYTES = 5 * (OWNER_METADATA_PREFIX.length + 12 + 253);
/** Storage account names: 3-24 lowercase letters and digits. */
export const STORAGE_ACCOUNT = /^[a-z0-9]{3,24}$/;

/** Rules for labels written as container metadata. */
export function metadataViolations(labels: Readonly<Record<string, string>> | undefined): Violation[] {
  const violations: Violation[] = [];
  const seen = new Map<string, string>();
  let bytes = 0;
  for (const [key, value] of Object.entries(labels ?? {})) {
    const field = `spec.labels.${key}`;
    bytes += key.length + value.length;
    if (!METADATA_NAME.test(key)) {
      violations.push({ field, rule: 'azure.metadata-name', message: 'Azure metadata names must be C# identifiers: ASCII letters, digits and underscores, not starting with a digit' });
    }
    if (key.toLowerCase().startsWith(OWNER_METADATA_PREFIX)) {
      violations.push({ field, rule: 'azure.metadata-owner', message: `metadata names starting with "${OWNER_METADATA_PREFIX}" are k8or's owner metadata` });
    }
    const other = seen.get(key.toLowerCase());
    if (other !== undefined) {
      violations.push({ field, rule: 'azure.metadata-case', message: `Azure metadata names ignore case, so "${key}" and "${other}" are the same name` });
    }
    seen.set(key.toLowerCase(), key);
    if (!METADATA_VALUE.test(value) || value !== value.trim()) {
      violations.push({ field, rule: 'azure.metadata-value', message: 'Azure metadata values must be printable ASCII without leading or trailing spaces (they travel as HTTP headers)' });
    }
  }
  if (bytes + OWNER_METADATA_BYTES > MAX_METADATA_BYTES) {
    violations.push({ field: 'spec.labels', rule: 'azure.metadata-size', message: `Azure allows ${MAX_METADATA_BYTES} bytes of metadata per container and k8or's owner metadata needs up to ${OWNER_METADATA_BYTES}; the labels take ${bytes}` });
  }
  return violations;
}

/** Rules and warnings for a Bucket as an Azure Blob container (the name: `containerNaming`). */
export function validateBucket(bucket: Bucket): ValidationResult {
  const { spec } = bucket;
  const violations: Violation[] = [];
  violations.push(...metadataViolations(spec.labels));
  const warnings = unappliedBucketSettings(bucket).map((issue) => `${issue.field}: ${issue.message}; it will be reported as not applied`);
  if (spec.publicAccess === 'Allowed') {
    warnings.push('spec.publicAccess: Allowed sets the container\'s public access level to "blob": anyone can read a blob whose URL they know (listing stays private); the storage account must allow public access (allowBlobPublicAccess), else Azure answers PublicAccessNotPermitted');
  }
  return { violations, warnings };
}

/** Rules and warnings for a Table as an Azure Table Storage table (the name: `tableNaming`). */
export function validateTable(table: Table): ValidationResult {
  const { spec } = table;
  const violations: Violation[] = [];
  const keys = [`partitionKey "${spec.partitionKey.name}" (${spec.partitionKey.type})`, ...(spec.sortKey ? [`sortKey "${spec.sortKey.name}" (${spec.sortKey.type})`] : [])];
  const warnings = [
    `spec.partitionKey${spec.sortKey ? ', spec.sortKey' : ''}: Azure fixes every table's keys as the string properties PartitionKey and RowKey; ${keys.join(' and ')} only document which of your attributes go there`,
    ...unappliedTableSettings(table).map((issue) => `${issue.field}: ${issue.message}; it will be reported as not applied`),
  ];
  if (spec.deletionProtection) {
    warnings.push('spec.deletionProtection: k8or refuses to delete the table, but Azure itself does not protect it; add a CanNotDelete lock on the storage account to stop deletes from elsewhere');
  }
  return { violations, warnings };
}

/** Rules for an Azure ProviderConfig. */
export function validateProviderConfig(providerConfig: ProviderConfig): ValidationResult {
  const { spec } = providerConfig;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (spec.storageAccount === undefined) {
    violations.push({ field: 'spec.storageAccount', rule: 'azure.storage-account-required', message: 'an Azure ProviderConfig needs the storage account that holds its containers and tables' });
  } else if (!STORAGE_ACCOUNT.test(spec.storageAccount)) {
    violations.push({ field: 'spec.storageAccount', rule: 'azure.storage-account', message: `"${spec.storageAccount}" is not a storage account name: 3 to 24 lowercase letters and digits` });
  }
  for (const [field, value] of [['spec.endpoint', spec.endpoint], ['spec.endpoints.bucket', spec.endpoints?.bucket], ['spec.endpoints.table', spec.endpoints?.table]] as const) {
    if (value === undefined) continue;
    if (!URL.canParse(value)) violations.push({ field, rule: 'azure.endpoint', message: `"${value}" is not a URL` });
    else if (new URL(value).protocol === 'http:' && !/^(localhost|127\.|\[::1\])/.test(new URL(value).host)) {
      warnings.push(`${field}: plain http to ${new URL(value).host} sends data unencrypted; only emulators such as Azurite should be reached this way`);
    }
  }
  if (spec.endpoint !== undefined && (spec.endpoints?.bucket === undefined || spec.endpoints?.table === undefined)) {
    warnings.push('spec.endpoint: Blob and Table services have separate endpoints in Azure; set spec.endpoints.bucket and spec.endpoints.table unless both answer at one URL');
  }
  for (const field of ['region', 'project', 'bigtableInstance'] as const) {
    if (spec[field] !== undefined) warnings.push(`spec.${field}: ignored by the azure provider`);
  }
  return { violations, warnings };
}

/** The provider's validation, as the webhook calls it. */
export const azureValidation: ProviderValidation = {
  validate(kind: ManagedKindName, resource: ManagedResource): ValidationResult {
    return kind === 'Bucket' ? validateBucket(resource as Bucket) : validateTable(resource as Table);
  },
  validateProviderConfig,
};
