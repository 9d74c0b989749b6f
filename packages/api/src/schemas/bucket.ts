import { arr, bool, immutable, int, notRemovable, obj, str, type JSONSchemaProps } from './json-schema.js';
import {
  deletionPolicySchema,
  driftPolicySchema,
  externalNameSchema,
  forceDeleteSchema,
  labelsSchema,
  managedStatusSchema,
  managementPolicySchema,
  providerConfigRefSchema,
  writeOutputsToSchema,
} from './common.js';

const lifecycleRuleSchema = obj(
  'One lifecycle rule. At least one action (expirationDays, noncurrentVersionExpirationDays, abortIncompleteUploadDays or transitions) is required.',
  {
    id: str('Unique name of the rule within the bucket.', { minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    enabled: bool('Whether the rule is applied.', { default: true }),
    prefix: str('Apply the rule only to objects whose key starts with this prefix. Empty means every object.', { maxLength: 1024 }),
    expirationDays: int('Delete current object versions this many days after creation.', { minimum: 1, maximum: 36500 }),
    noncurrentVersionExpirationDays: int('Delete noncurrent (overwritten) versions this many days after they became noncurrent. Needs versioning.', {
      minimum: 1,
      maximum: 36500,
    }),
    abortIncompleteUploadDays: int('Abort multipart uploads not completed this many days after they started.', { minimum: 1, maximum: 36500 }),
    transitions: arr(
      'Move objects to a colder storage tier after a number of days.',
      obj(
        'One transition.',
        {
          days: int('Days after object creation.', { minimum: 0, maximum: 36500 }),
          tier: str('Target tier: InfrequentAccess (S3 STANDARD_IA, GCS NEARLINE, Azure Cool) or Archive (S3 GLACIER, GCS ARCHIVE, Azure Archive).', {
            enum: ['InfrequentAccess', 'Archive'],
          }),
        },
        { required: ['days', 'tier'] },
      ),
      { maxItems: 2 },
    ),
  },
  {
    required: ['id'],
    'x-kubernetes-validations': [
      {
        rule: 'has(self.expirationDays) || has(self.noncurrentVersionExpirationDays) || has(self.abortIncompleteUploadDays) || (has(self.transitions) && size(self.transitions) > 0)',
        message: 'a lifecycle rule needs at least one action: expirationDays, noncurrentVersionExpirationDays, abortIncompleteUploadDays or transitions',
      },
    ],
  },
);

export const bucketSpecSchema: JSONSchemaProps = obj(
  'Desired state of the bucket.',
  {
    providerConfigRef: providerConfigRefSchema,
    name: externalNameSchema('Must satisfy the target cloud\'s bucket or container naming rules (3-63 lowercase letters, digits and hyphens is safe on every cloud).'),
    location: str(
      'Region or location of the bucket (for example us-east-1, EU, westeurope). Defaulted to the ProviderConfig\'s region. Immutable: a bucket cannot move.',
      { minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$', 'x-kubernetes-validations': [immutable('location')] },
    ),
    versioning: bool('Keep every version of every object (S3 versioning, GCS object versioning, Azure blob versioning).', { default: false }),
    publicAccess: str(
      'Blocked (default) turns on the cloud\'s public access prevention (S3 Block Public Access, GCS public access prevention, no anonymous access on Azure). Allowed turns it off; objects are still private until granted.',
      { enum: ['Blocked', 'Allowed'], default: 'Blocked' },
    ),
    encryption: obj(
      'Default encryption of objects at rest.',
      {
        type: str('ProviderManaged (default; SSE-S3, Google-managed, Microsoft-managed keys) or CustomerManaged (a KMS key named by keyId).', {
          enum: ['ProviderManaged', 'CustomerManaged'],
          default: 'ProviderManaged',
        }),
        keyId: str('Customer-managed key: KMS key ID or ARN (AWS), Cloud KMS key name (GCP), Key Vault key URI (Azure).', { minLength: 1, maxLength: 2048 }),
      },
      {
        'x-kubernetes-validations': [
          { rule: "self.type == 'CustomerManaged' ? has(self.keyId) : !has(self.keyId)", message: 'encryption.keyId is required with type CustomerManaged and not allowed otherwise' },
        ],
      },
    ),
    lifecycle: arr('Lifecycle rules: expire objects, expire old versions, abort stale uploads, move to colder tiers.', lifecycleRuleSchema, {
      maxItems: 100,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['id'],
    }),
    labels: labelsSchema,
    deletionPolicy: deletionPolicySchema,
    forceDelete: forceDeleteSchema,
    managementPolicy: managementPolicySchema,
    writeOutputsTo: writeOutputsToSchema,
    driftPolicy: driftPolicySchema,
  },
  {
    'x-kubernetes-validations': [notRemovable('name', 'spec.name'), notRemovable('location', 'spec.location')],
  },
);

export const bucketSchema: JSONSchemaProps = obj(
  'A Bucket is a portable object-storage bucket: an S3 bucket (AWS), a Cloud Storage bucket (GCP) or a Blob container (Azure), chosen by its ProviderConfig.',
  {
    apiVersion: str('APIVersion defines the versioned schema of this representation of an object.'),
    kind: str('Kind is a string value representing the REST resource this object represents.'),
    metadata: { type: 'object', description: 'Standard object metadata.' },
    spec: bucketSpecSchema,
    status: managedStatusSchema,
  },
  { required: ['spec'] },
);
