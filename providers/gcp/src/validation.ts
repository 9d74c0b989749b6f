/**
 * The GCP provider's own rules, for the webhook and `k8or validate`: what Cloud Storage and Bigtable
 * would reject (violations), and what they cannot honour exactly (portability warnings). Pure functions.
 */
import { validateBigtableTableName, validateGcsBucketName, type Bucket, type ManagedKindName, type ManagedResource, type ProviderConfig, type Table, type Violation } from '@k8or/api';
import type { ProviderValidation, ValidationResult } from '@k8or/core';
import { OWNER_LABEL_PREFIX } from './labels.js';
import { COLUMN_FAMILIES_ANNOTATION, columnFamiliesOf, unappliedSettings } from './table-settings.js';

/** GCS multi-regions and predefined dual-regions (cloud.google.com/storage/docs/locations). */
const MULTI_AND_DUAL_REGIONS = new Set(['US', 'EU', 'ASIA', 'NAM4', 'EUR4', 'EUR5', 'EUR7', 'EUR8', 'ASIA1']);
/** Google Cloud region names such as us-central1, europe-west4, northamerica-northeast2. */
export const GCP_REGION = /^[a-z]+-[a-z]+\d+$/;
/** A Cloud KMS key resource name. */
const KMS_KEY = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;
/** GCS label keys: a lowercase letter first, then lowercase letters, digits, _ and -; values the same without the first-letter rule. */
const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;
/** GCS allows 64 labels per bucket; k8or writes 5 owner labels. */
export const MAX_USER_LABELS = 64 - 5;
/** Bigtable column family ids. */
const COLUMN_FAMILY = /^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,63}$/;
/** GCP project ids. */
const PROJECT_ID = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;

export const isGcsLocation = (location: string): boolean => MULTI_AND_DUAL_REGIONS.has(location.toUpperCase()) || GCP_REGION.test(location.toLowerCase());

function labelViolations(labels: Readonly<Record<string, string>> | undefined): Violation[] {
  const violations: Violation[] = [];
  const entries = Object.entries(labels ?? {});
  if (entries.length > MAX_USER_LABELS) {
    violations.push({ field: 'spec.labels', rule: 'gcs.label-count', message: `Cloud Storage allows 64 labels per bucket and k8or writes 5 owner labels, so at most ${MAX_USER_LABELS} labels; found ${entries.length}` });
  }
  for (const [key, value] of entries) {
    const field = `spec.labels.${key}`;
    if (!LABEL_KEY.test(key)) violations.push({ field, rule: 'gcs.label-key', message: 'Cloud Storage label keys start with a lowercase letter and hold 1 to 63 lowercase letters, digits, "_" and "-"' });
    if (!LABEL_VALUE.test(value)) violations.push({ field, rule: 'gcs.label-value', message: 'Cloud Storage label values hold at most 63 lowercase letters, digits, "_" and "-"' });
    if (key.startsWith(OWNER_LABEL_PREFIX)) violations.push({ field, rule: 'gcs.label-owner', message: `label keys starting with "${OWNER_LABEL_PREFIX}" are k8or's owner labels` });
    if (key.startsWith('goog')) violations.push({ field, rule: 'gcs.label-reserved', message: 'Google reserves label keys starting with "goog"' });
  }
  return violations;
}

/** Rules for a Bucket on Cloud Storage. */
export function validateBucket(bucket: Bucket, providerConfig: ProviderConfig | undefined): ValidationResult {
  const { spec } = bucket;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (spec.name) {
    violations.push(...validateGcsBucketName(spec.name));
    if (spec.name.includes('.')) warnings.push(`spec.name: Cloud Storage creates bucket names with dots ("${spec.name}") only for a verified owner of the domain (Search Console)`);
  }
  if (spec.location !== undefined && !isGcsLocation(spec.location)) {
    violations.push({ field: 'spec.location', rule: 'gcp.location', message: `"${spec.location}" is not a Cloud Storage location: a region such as europe-west1, a dual-region such as EUR4, or a multi-region US, EU or ASIA` });
  }
  if (spec.location === undefined && providerConfig?.spec.region === undefined) warnings.push('spec.location: neither the Bucket nor its ProviderConfig names a location; Cloud Storage then creates the bucket in the US multi-region');
  if (spec.encryption?.type === 'CustomerManaged' && (spec.encryption.keyId === undefined || !KMS_KEY.test(spec.encryption.keyId))) {
    violations.push({ field: 'spec.encryption.keyId', rule: 'gcp.kms-key', message: 'must be a Cloud KMS key name: projects/PROJECT/locations/LOCATION/keyRings/RING/cryptoKeys/KEY' });
  }
  if (spec.publicAccess === 'Allowed') {
    warnings.push('spec.publicAccess: Allowed sets public access prevention to inherited (an organization policy can still enforce it); uniform bucket-level access stays on, so objects become public only through IAM grants');
  }
  for (const [index, rule] of (spec.lifecycle ?? []).entries()) {
    const field = `spec.lifecycle[${index}]`;
    if (rule.enabled === false) warnings.push(`${field}.enabled: Cloud Storage lifecycle rules cannot be disabled; k8or leaves this rule out`);
    if (rule.noncurrentVersionExpirationDays !== undefined && !spec.versioning) warnings.push(`${field}.noncurrentVersionExpirationDays: has no effect while spec.versioning is false (there are no noncurrent versions)`);
    if (rule.abortIncompleteUploadDays !== undefined) warnings.push(`${field}.abortIncompleteUploadDays: applies to XML API multipart uploads only (JSON API resumable uploads expire after a week on their own)`);
    for (const transition of rule.transitions ?? []) {
      if (rule.expirationDays !== undefined && transition.days >= rule.expirationDays) {
        warnings.push(`${field}.transitions: the transition after ${transition.days} days comes no earlier than the expiration after ${rule.expirationDays} days`);
      }
      warnings.push(
        transition.tier === 'Archive'
          ? `${field}.transitions: tier Archive maps to the ARCHIVE storage class: billed for at least 365 days, with retrieval fees`
          : `${field}.transitions: tier InfrequentAccess maps to the NEARLINE storage class: billed for at least 30 days, with retrieval fees`,
      );
    }
  }
  violations.push(...labelViolations(spec.labels));
  return { violations, warnings };
}

/** Rules for a Table on Bigtable, and the portable fields Bigtable cannot honour. */
export function validateTable(table: Table): ValidationResult {
  const { spec } = table;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (spec.name) violations.push(...validateBigtableTableName(spec.name));
  for (const id of columnFamiliesOf(table)) {
    if (!COLUMN_FAMILY.test(id)) {
      violations.push({
        field: `metadata.annotations[${COLUMN_FAMILIES_ANNOTATION}]`,
        rule: 'bigtable.column-family',
        message: `"${id}" is not a Bigtable column family id: 1 to 64 letters, digits, "_", "-" and ".", not starting with "-" or "."`,
      });
    }
  }
  for (const [field, key] of [['spec.partitionKey', spec.partitionKey], ['spec.sortKey', spec.sortKey]] as const) {
    if (key?.type === 'number') warnings.push(`${field}.type: Bigtable row keys are bytes with no types: number keys are stored as decimal text and sort as text ("10" before "9")`);
    if (key?.type === 'binary') warnings.push(`${field}.type: Bigtable row keys are bytes with no types: binary keys are stored as their bytes`);
  }
  if (spec.sortKey) warnings.push(`spec.sortKey: Bigtable has one row key: k8or's mapping is partitionKey#sortKey, so partition key values must not contain "#"`);
  if (spec.ttlAttribute) {
    warnings.push(
      'spec.ttlAttribute: Bigtable has no per-item expiry: the column families expire cells 1 second after their timestamp, so writers must set every cell\'s timestamp to the item\'s expiry time (a cell written with the current time is deleted at the next compaction)',
    );
  }
  for (const issue of unappliedSettings(table)) warnings.push(`${issue.field}: ${issue.message}`);
  return { violations, warnings };
}

/** Rules for a GCP ProviderConfig. */
export function validateProviderConfig(providerConfig: ProviderConfig): ValidationResult {
  const { spec } = providerConfig;
  const violations: Violation[] = [];
  const warnings: string[] = [];
  if (!spec.project) violations.push({ field: 'spec.project', rule: 'gcp.project-required', message: 'a GCP ProviderConfig needs a project id' });
  else if (!PROJECT_ID.test(spec.project)) violations.push({ field: 'spec.project', rule: 'gcp.project', message: `"${spec.project}" is not a GCP project id (6 to 30 lowercase letters, digits and hyphens, starting with a letter)` });
  if (spec.region !== undefined && !isGcsLocation(spec.region)) {
    violations.push({ field: 'spec.region', rule: 'gcp.location', message: `"${spec.region}" is not a Cloud Storage location such as europe-west1, EUR4 or US` });
  }
  if (!spec.bigtableInstance) warnings.push('spec.bigtableInstance: not set, so Tables using this ProviderConfig cannot be created (Buckets can)');
  for (const [field, value] of [['spec.endpoint', spec.endpoint], ['spec.endpoints.bucket', spec.endpoints?.bucket]] as const) {
    if (value !== undefined && !URL.canParse(value)) violations.push({ field, rule: 'gcp.endpoint', message: `"${value}" is not a URL` });
  }
  const table = spec.endpoints?.table;
  if (table !== undefined && !/^(https?:\/\/)?[^/:\s]+:\d+\/?$/.test(table)) {
    violations.push({ field: 'spec.endpoints.table', rule: 'gcp.bigtable-emulator-host', message: `"${table}" is not a Bigtable emulator address such as http://127.0.0.1:8086 or 127.0.0.1:8086` });
  } else if (table !== undefined) {
    warnings.push('spec.endpoints.table: Bigtable calls go to this emulator in plaintext, without credentials');
  }
  if (spec.storageAccount !== undefined) warnings.push('spec.storageAccount: ignored by the gcp provider');
  return { violations, warnings };
}

/** The provider's validation, as the webhook calls it. */
export const gcpValidation: ProviderValidation = {
  validate(kind: ManagedKindName, resource: ManagedResource, providerConfig: ProviderConfig | undefined): ValidationResult {
    return kind === 'Bucket' ? validateBucket(resource as Bucket, providerConfig) : validateTable(resource as Table);
  },
  validateProviderConfig,
};
