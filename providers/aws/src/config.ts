import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { TerminalError } from '@k8or/core';

/** Static credentials read from a Secret (keys accessKeyId, secretAccessKey, optional sessionToken). */
export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The client settings shared by the S3 and DynamoDB clients. */
export interface AwsClientSettings {
  region: string;
  endpoint?: string;
  /** Path-style addressing (http://host/bucket), which emulators and most S3-compatible stores need. */
  forcePathStyle?: boolean;
  /** Undefined means the SDK default chain: environment, IRSA web identity, EKS Pod Identity, instance role. */
  credentials?: StaticCredentials;
  maxAttempts: number;
}

export const DEFAULT_REGION = 'us-east-1';
/** SDK attempts per call; the engine retries beyond this with its own backoff. */
const MAX_ATTEMPTS = 3;

/** The endpoint for one kind: `endpoints.bucket` / `endpoints.table` win over `endpoint`. */
export function endpointFor(providerConfig: ProviderConfig, kind: ManagedKindName): string | undefined {
  const perKind = kind === 'Bucket' ? providerConfig.spec.endpoints?.bucket : providerConfig.spec.endpoints?.table;
  return perKind ?? providerConfig.spec.endpoint;
}

/** Credentials for the SDK: from the Secret data, or undefined for the SDK's default chain. */
export function credentialsFrom(providerConfig: ProviderConfig, secretData: Readonly<Record<string, string>> | undefined): StaticCredentials | undefined {
  if ((providerConfig.spec.credentials?.source ?? 'Environment') !== 'Secret') return undefined;
  const ref = providerConfig.spec.credentials?.secretRef;
  const where = ref ? `Secret ${ref.namespace}/${ref.name}` : 'the credentials Secret';
  const accessKeyId = secretData?.['accessKeyId']?.trim();
  const secretAccessKey = secretData?.['secretAccessKey']?.trim();
  if (!accessKeyId || !secretAccessKey) {
    throw new TerminalError(`${where} must hold the keys accessKeyId and secretAccessKey`, { code: 'MissingCredentials' });
  }
  const sessionToken = secretData?.['sessionToken']?.trim();
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/**
 * SDK client settings for one kind in one region (a bucket's own region, or the ProviderConfig's).
 * An endpoint override turns on path-style addressing, as emulators and S3-compatible stores need.
 */
export function clientSettings(
  providerConfig: ProviderConfig,
  secretData: Readonly<Record<string, string>> | undefined,
  kind: ManagedKindName,
  region = providerConfig.spec.region ?? DEFAULT_REGION,
): AwsClientSettings {
  const endpoint = endpointFor(providerConfig, kind);
  const credentials = credentialsFrom(providerConfig, secretData);
  return {
    region,
    maxAttempts: MAX_ATTEMPTS,
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(credentials ? { credentials } : {}),
  };
}
