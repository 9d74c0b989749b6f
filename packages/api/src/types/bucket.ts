import type { ObjectMeta } from './meta.js';
import type { ManagedSpec, ManagedStatus } from './common.js';

export type PublicAccess = 'Blocked' | 'Allowed';
export type EncryptionType = 'ProviderManaged' | 'CustomerManaged';
export type StorageTier = 'InfrequentAccess' | 'Archive';

export interface BucketEncryption {
  type: EncryptionType;
  /** Key ID or ARN (AWS KMS), key resource name (Cloud KMS) or key URI (Key Vault). */
  keyId?: string;
}

export interface LifecycleTransition {
  days: number;
  tier: StorageTier;
}

export interface LifecycleRule {
  id: string;
  enabled?: boolean;
  prefix?: string;
  expirationDays?: number;
  noncurrentVersionExpirationDays?: number;
  abortIncompleteUploadDays?: number;
  transitions?: LifecycleTransition[];
}

export interface BucketSpec extends ManagedSpec {
  location?: string;
  versioning?: boolean;
  publicAccess?: PublicAccess;
  encryption?: BucketEncryption;
  lifecycle?: LifecycleRule[];
  forceDelete?: boolean;
}

export interface Bucket {
  apiVersion: 'k8or.io/v1alpha1';
  kind: 'Bucket';
  metadata: ObjectMeta;
  spec: BucketSpec;
  status?: ManagedStatus;
}
