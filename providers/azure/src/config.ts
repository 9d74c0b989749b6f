import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { TerminalError } from '@k8or/core';

/** How the SDK clients authenticate. Secrets never leave this object (never logged, hashed in cache keys). */
export type AzureCredential =
  | { kind: 'sharedKey'; accountName: string; accountKey: string }
  | { kind: 'sas'; token: string }
  /** DefaultAzureCredential: environment, AKS Workload Identity, managed identity, Azure CLI. */
  | { kind: 'defaultChain' };

/** What one service client (Blob or Table) needs. */
export interface AzureClientSettings {
  /** Service URL, such as https://acct.blob.core.windows.net or http://127.0.0.1:10000/devstoreaccount1. */
  serviceUrl: string;
  accountName: string;
  credential: AzureCredential;
}

/** Azure's public cloud; sovereign clouds set `settings.endpointSuffix` (core.chinacloudapi.cn, core.usgovcloudapi.net). */
export const DEFAULT_ENDPOINT_SUFFIX = 'core.windows.net';

/** The keys a credentials Secret may hold; exactly one way to authenticate. */
export const SECRET_KEYS = { accountKey: 'accountKey', sasToken: 'sasToken', connectionString: 'connectionString' } as const;

const where = (providerConfig: ProviderConfig): string => {
  const ref = providerConfig.spec.credentials?.secretRef;
  return ref ? `Secret ${ref.namespace}/${ref.name}` : 'the credentials Secret';
};

/** The provider's settings (`spec.settings`), as its settingsSchema describes them. */
export const azureSettingsSchema = {
  type: 'object',
  description: 'Azure settings beyond the common fields.',
  properties: {
    endpointSuffix: {
      type: 'string',
      description: 'DNS suffix of the storage endpoints for sovereign clouds (core.chinacloudapi.cn, core.usgovcloudapi.net); default core.windows.net. Ignored where spec.endpoint or spec.endpoints names the endpoints.',
      pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$',
      maxLength: 253,
    },
  },
} as const;

/** The storage account and endpoint suffix of a ProviderConfig. */
export function azureSettingsOf(providerConfig: ProviderConfig): { storageAccount: string | undefined; endpointSuffix: string } {
  const suffix = providerConfig.spec.settings?.['endpointSuffix'];
  return { storageAccount: providerConfig.spec.storageAccount, endpointSuffix: typeof suffix === 'string' && suffix ? suffix : DEFAULT_ENDPOINT_SUFFIX };
}

/** A storage connection string as its `Key=Value` parts (keys as Azure writes them: AccountName, BlobEndpoint...). */
export function parseConnectionString(text: string): Record<string, string> {
  const parts: Record<string, string> = {};
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    parts[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return parts;
}

interface ResolvedCredentials {
  credential: AzureCredential;
  accountName: string | undefined;
  endpoints: Partial<Record<ManagedKindName, string>>;
  endpointSuffix: string | undefined;
  protocol: string | undefined;
}

/** Credentials from the Secret data, or the default chain when the source is not Secret. */
export function credentialsFrom(providerConfig: ProviderConfig, secretData: Readonly<Record<string, string>> | undefined): ResolvedCredentials {
  const { storageAccount } = azureSettingsOf(providerConfig);
  const none = { accountName: storageAccount, endpoints: {}, endpointSuffix: undefined, protocol: undefined };
  if ((providerConfig.spec.credentials?.source ?? 'Environment') !== 'Secret') return { credential: { kind: 'defaultChain' }, ...none };
  const given = Object.values(SECRET_KEYS).filter((key) => secretData?.[key]?.trim());
  if (given.length !== 1) {
    throw new TerminalError(
      `${where(providerConfig)} must hold exactly one of the keys ${Object.values(SECRET_KEYS).join(', ')}; found ${given.length === 0 ? 'none' : given.join(' and ')}`,
      { code: 'MissingCredentials' },
    );
  }
  const value = (secretData?.[given[0] as string] ?? '').trim();
  if (given[0] === SECRET_KEYS.accountKey) {
    if (!storageAccount) throw new TerminalError('an account key needs the storage account: set spec.storageAccount', { code: 'MissingCredentials' });
    return { credential: { kind: 'sharedKey', accountName: storageAccount, accountKey: value }, ...none };
  }
  if (given[0] === SECRET_KEYS.sasToken) return { credential: { kind: 'sas', token: value.replace(/^\?/, '') }, ...none };
  const parts = parseConnectionString(value);
  const accountName = parts['AccountName'];
  if (storageAccount && accountName && accountName !== storageAccount) {
    throw new TerminalError(`the connection string in ${where(providerConfig)} is for account "${accountName}", the ProviderConfig names "${storageAccount}"`, { code: 'MissingCredentials' });
  }
  const credential: AzureCredential | undefined = parts['AccountKey'] && accountName
    ? { kind: 'sharedKey', accountName, accountKey: parts['AccountKey'] }
    : parts['SharedAccessSignature']
      ? { kind: 'sas', token: parts['SharedAccessSignature'].replace(/^\?/, '') }
      : undefined;
  if (!credential) {
    throw new TerminalError(`the connection string in ${where(providerConfig)} needs AccountName and AccountKey, or SharedAccessSignature`, { code: 'MissingCredentials' });
  }
  return {
    credential,
    accountName: storageAccount ?? accountName,
    endpoints: { ...(parts['BlobEndpoint'] ? { Bucket: parts['BlobEndpoint'] } : {}), ...(parts['TableEndpoint'] ? { Table: parts['TableEndpoint'] } : {}) },
    endpointSuffix: parts['EndpointSuffix'],
    protocol: parts['DefaultEndpointsProtocol'],
  };
}

/** The endpoint override for one kind: `endpoints.bucket` / `endpoints.table` win over `endpoint`. */
export function endpointFor(providerConfig: ProviderConfig, kind: ManagedKindName): string | undefined {
  const perKind = kind === 'Bucket' ? providerConfig.spec.endpoints?.bucket : providerConfig.spec.endpoints?.table;
  return perKind ?? providerConfig.spec.endpoint;
}

/**
 * Client settings for one kind: Blob for Bucket, Table for Table. The service URL is the
 * ProviderConfig's endpoint, else the connection string's, else the account's public one.
 */
export function clientSettings(providerConfig: ProviderConfig, secretData: Readonly<Record<string, string>> | undefined, kind: ManagedKindName): AzureClientSettings {
  const resolved = credentialsFrom(providerConfig, secretData);
  const service = kind === 'Bucket' ? 'blob' : 'table';
  const override = endpointFor(providerConfig, kind) ?? resolved.endpoints[kind];
  const accountName = resolved.accountName ?? (override ? accountFromUrl(override) : undefined);
  if (!accountName) throw new TerminalError('an Azure ProviderConfig needs the storage account: set spec.storageAccount', { code: 'MissingStorageAccount' });
  const suffix = resolved.endpointSuffix ?? azureSettingsOf(providerConfig).endpointSuffix;
  const serviceUrl = (override ?? `${resolved.protocol ?? 'https'}://${accountName}.${service}.${suffix}`).replace(/\/+$/, '');
  return { serviceUrl, accountName, credential: resolved.credential };
}

/** The account in a service URL: the host's first label, or the first path segment on an IP or localhost (Azurite). */
export function accountFromUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { hostname, pathname } = new URL(url);
  const pathStyle = /^(\d+\.\d+\.\d+\.\d+|localhost|\[.*\])$/.test(hostname);
  return (pathStyle ? pathname.split('/').filter(Boolean)[0] : hostname.split('.')[0]) || undefined;
}
