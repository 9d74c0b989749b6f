import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { SECRET_KEYS, accountFromUrl, azureSettingsOf, endpointFor, parseConnectionString } from './config.js';

/**
 * Where a client of this ProviderConfig points, for the engine's pinned target and its "one object
 * per cloud resource" key: the storage account (spec.storageAccount, else the one a connection
 * string or the endpoint names), the kind's endpoint override ('' for the account's public one) and
 * the endpoint suffix (sovereign clouds). Never a key or a SAS: a connection string gives only its
 * account name here, so rotating its key keeps the target.
 */
export function azureTargetOf(kind: ManagedKindName, providerConfig: ProviderConfig, credentials: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const { storageAccount, endpointSuffix } = azureSettingsOf(providerConfig);
  const connectionString = credentials?.[SECRET_KEYS.connectionString];
  const connection = connectionString ? parseConnectionString(connectionString) : {};
  const endpoint = endpointFor(providerConfig, kind) ?? connection[kind === 'Bucket' ? 'BlobEndpoint' : 'TableEndpoint'];
  const account = storageAccount ?? connection['AccountName'] ?? (endpoint ? accountFromUrl(endpoint) : undefined) ?? '';
  return { storageAccount: account, endpoint: endpoint ?? '', endpointSuffix: connection['EndpointSuffix'] ?? endpointSuffix };
}
