import type { JSONSchemaProps, ManagedKindName, ProviderConfig } from '@k8or/api';
import { TerminalError } from '@k8or/core';

/** The fields of a service-account JSON key the clients use. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  project_id?: string;
  [field: string]: unknown;
}

/** What a GCP ProviderConfig says, resolved: where to create things and how to reach and sign in to the APIs. */
export interface GcpSettings {
  project: string;
  /** Location of buckets that name none (spec.region), GCS's own default `US` otherwise. */
  defaultLocation: string;
  /** Bigtable instance that holds Tables. */
  bigtableInstance: string | undefined;
  /** GCS JSON API endpoint (`endpoints.bucket`, else `endpoint`): a fake, or a private endpoint. */
  storageEndpoint: string | undefined;
  /** `host:port` of a Bigtable emulator (`endpoints.table`): plaintext gRPC, no credentials. */
  bigtableEmulatorHost: string | undefined;
  /** Storage class of new buckets (settings.storageClass), STANDARD by default. */
  storageClass: string;
  /** Undefined means Application Default Credentials (GKE Workload Identity, a metadata server, GOOGLE_APPLICATION_CREDENTIALS). */
  serviceAccountKey: ServiceAccountKey | undefined;
}

/** Storage class of new buckets when the ProviderConfig names none. */
export const DEFAULT_STORAGE_CLASS = 'STANDARD';
/** The storage classes a bucket can default to. */
export const STORAGE_CLASSES = ['STANDARD', 'NEARLINE', 'COLDLINE', 'ARCHIVE'] as const;

/** JSON schema of `ProviderConfig.spec.settings` for gcp (the CRD's structural subset). */
export const gcpSettingsSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Settings of the gcp provider.',
  properties: {
    storageClass: {
      type: 'string',
      description: 'Storage class of new Cloud Storage buckets (their default for new objects): STANDARD (default), NEARLINE, COLDLINE or ARCHIVE. Colder tiers for older objects come from lifecycle transitions.',
      enum: [...STORAGE_CLASSES],
    },
  },
};

/** GCS's location for buckets created without one. */
export const GCS_DEFAULT_LOCATION = 'US';
/** The Secret key that holds the service-account JSON key. */
export const CREDENTIALS_KEY = 'credentials.json';

/**
 * The service-account key from the Secret data, or undefined for Application Default Credentials.
 * The key's content never appears in an error message.
 */
export function serviceAccountKeyFrom(providerConfig: ProviderConfig, secretData: Readonly<Record<string, string>> | undefined): ServiceAccountKey | undefined {
  if ((providerConfig.spec.credentials?.source ?? 'Environment') !== 'Secret') return undefined;
  const ref = providerConfig.spec.credentials?.secretRef;
  const where = ref ? `Secret ${ref.namespace}/${ref.name}` : 'the credentials Secret';
  const text = secretData?.[CREDENTIALS_KEY];
  if (!text?.trim()) throw new TerminalError(`${where} must hold a service-account JSON key under the key ${CREDENTIALS_KEY}`, { code: 'MissingCredentials' });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TerminalError(`${where}: ${CREDENTIALS_KEY} is not JSON (expected a service-account key file)`, { code: 'InvalidCredentials' });
  }
  const key = parsed as Partial<ServiceAccountKey> | null;
  if (typeof key !== 'object' || key === null || typeof key.client_email !== 'string' || typeof key.private_key !== 'string') {
    throw new TerminalError(`${where}: ${CREDENTIALS_KEY} must be a service-account key with client_email and private_key`, { code: 'InvalidCredentials' });
  }
  return key as ServiceAccountKey;
}

/** `http://host:port` or `host:port` as the `host:port` the Bigtable client takes. */
export function emulatorHostOf(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  return URL.canParse(endpoint) && /^https?:$/.test(new URL(endpoint).protocol) ? new URL(endpoint).host : endpoint;
}

/** Resolves a GCP ProviderConfig (and its Secret) into client settings, for the kind being reconciled. */
export function gcpSettings(providerConfig: ProviderConfig, secretData: Readonly<Record<string, string>> | undefined, kind: ManagedKindName): GcpSettings {
  const { spec } = providerConfig;
  if (!spec.project) throw new TerminalError(`ProviderConfig ${providerConfig.metadata.name ?? ''}: spec.project is required for gcp`, { code: 'InvalidProviderConfig' });
  if (kind === 'Table' && !spec.bigtableInstance) {
    throw new TerminalError(`ProviderConfig ${providerConfig.metadata.name ?? ''}: spec.bigtableInstance is required for Tables on gcp`, { code: 'InvalidProviderConfig' });
  }
  return {
    project: spec.project,
    defaultLocation: spec.region ?? GCS_DEFAULT_LOCATION,
    bigtableInstance: spec.bigtableInstance,
    storageClass: typeof spec.settings?.['storageClass'] === 'string' ? spec.settings['storageClass'] : DEFAULT_STORAGE_CLASS,
    storageEndpoint: spec.endpoints?.bucket ?? spec.endpoint,
    bigtableEmulatorHost: emulatorHostOf(spec.endpoints?.table),
    serviceAccountKey: serviceAccountKeyFrom(providerConfig, secretData),
  };
}
