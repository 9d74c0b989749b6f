import type { Condition, ObjectMeta } from './meta.js';

/**
 * The name of a provider (`ProviderConfig.spec.provider`): any DNS label. k8or
 * ships `aws`, `gcp` and `azure`; a third-party package serves its own name.
 */
export type ProviderName = string;
/** @deprecated the provider is an open name now; use ProviderName. */
export type CloudProvider = ProviderName;
/** The providers k8or ships; not a limit (a third party's provider works too). */
export type BuiltinProvider = 'aws' | 'gcp' | 'azure';
export const BUILTIN_PROVIDERS: readonly BuiltinProvider[] = ['aws', 'gcp', 'azure'];
/** @deprecated not a closed list any more; use BUILTIN_PROVIDERS. */
export const CLOUD_PROVIDERS = BUILTIN_PROVIDERS;

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

/**
 * A ProviderConfig's pace for one rate-limited service of its provider (a key
 * of the provider's declared `rateLimits`). A field left out keeps the
 * provider's default.
 */
export interface CloudRateLimit {
  /** Sustained calls per second; fractions allowed (`0.5` is one call every two seconds). */
  requestsPerSecond?: number;
  /** Calls that may go at once after a quiet spell (the token bucket's size). */
  burst?: number;
}

/**
 * How many cloud calls an hour the drift checks of this ProviderConfig's
 * resources may make, together: set exactly one field. The engine lengthens
 * the check interval of the resources that ask for more than it allows.
 */
export interface DriftCheckBudget {
  /** Cloud calls an hour for the drift checks of every resource of this ProviderConfig. */
  callsPerHour?: number;
  /**
   * A percentage (1 to 100) of each rate-limited service's rate in force
   * (`rateLimits`, else the provider's default), for the drift checks whose
   * calls draw on that service.
   */
  rateLimitPercent?: number;
}

export interface ProviderConfigSpec {
  provider: ProviderName;
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
  /**
   * Provider-specific settings, validated by the provider's own schema
   * (`ProviderPlugin.settingsSchema`) in the webhook and the engine.
   */
  settings?: Record<string, unknown>;
  /**
   * Overrides of the provider's declared control-plane rate limits, by
   * service name (`dynamodb-control-plane`, `gcs-bucket-create-delete`...).
   * The engine keeps every cloud call of this ProviderConfig within them.
   */
  rateLimits?: Record<string, CloudRateLimit>;
  /** The drift checks' share of the cloud account's calls; none: every resource is checked at the interval it asks for. */
  driftCheckBudget?: DriftCheckBudget;
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
