import type { Condition, ObjectMeta } from './meta.js';

export type CloudProvider = 'aws' | 'gcp' | 'azure';
export const CLOUD_PROVIDERS: readonly CloudProvider[] = ['aws', 'gcp', 'azure'];

export type CredentialsSource = 'Secret' | 'InjectedIdentity' | 'Environment';

export interface SecretReference {
  namespace: string;
  name: string;
}

export interface ProviderCredentials {
  source: CredentialsSource;
  secretRef?: SecretReference;
}

/** Per-kind endpoint overrides, for emulators whose services listen apart. */
export interface ProviderEndpoints {
  bucket?: string;
  table?: string;
}

export interface ProviderConfigSpec {
  provider: CloudProvider;
  /** AWS region, and the default location for resources that name none. */
  region?: string;
  /** GCP project ID. */
  project?: string;
  /** Azure storage account name. */
  storageAccount?: string;
  /** Bigtable instance ID that holds tables. */
  bigtableInstance?: string;
  endpoint?: string;
  endpoints?: ProviderEndpoints;
  credentials?: ProviderCredentials;
}

export interface ProviderConfigStatus {
  conditions?: Condition[];
  observedGeneration?: number;
}

export interface ProviderConfig {
  apiVersion: 'k8or.io/v1alpha1';
  kind: 'ProviderConfig';
  metadata: ObjectMeta;
  spec: ProviderConfigSpec;
  status?: ProviderConfigStatus;
}
