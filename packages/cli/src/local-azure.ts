import { join } from 'node:path';
import { API_VERSION } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { startAzurite } from '@k8or/local-clouds';
import { azureProvider } from '@k8or/provider-azure';
import type { KubeConfig } from '@kubernetes/client-node';
import { applySandboxProviderConfig } from './provider-configs.js';
import type { SandboxPorts } from './sandbox-ports.js';
import { createSandboxSecret } from './sandbox-secrets.js';

/** The ProviderConfig the sandbox points at Azurite; an Azure Bucket or Table names it in spec.providerConfigRef. */
export const LOCAL_AZURE = 'local-azure';

/** Where Azurite listens, and the account it serves (fake, local only: Azurite's published development account). */
export interface LocalAzureEndpoints {
  /** Azurite's Blob and Table endpoints (dev account path included). */
  blob: string;
  table: string;
  accountName: string;
  /** Azurite checks every SharedKey signature against it: another key gets 403 AuthorizationFailure. */
  accountKey: string;
  connectionString: string;
}

export interface LocalAzure extends LocalAzureEndpoints {
  plugin: ProviderPlugin;
  /** A Secret with Azurite's published dev account key, and the `local-azure` ProviderConfig pointed at Azurite. */
  installProviderConfig(kubeConfig: KubeConfig, secretNamespace: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Azure in the sandbox: Azurite, kept in `dataDir/azurite` when given, so a restart keeps containers
 * and tables, its Blob and Table services on the ports `ports` gives them.
 */
export async function startLocalAzure(dataDir: string | undefined, ports: SandboxPorts): Promise<LocalAzure> {
  const blobPort = await ports.portFor('azuriteBlob');
  const tablePort = await ports.portFor('azuriteTable');
  const azurite = await startAzurite({
    ...(dataDir ? { dataDir: join(dataDir, 'azurite') } : {}),
    ...(blobPort === undefined ? {} : { blobPort }),
    ...(tablePort === undefined ? {} : { tablePort }),
  });
  ports.listening('azuriteBlob', azurite.blobEndpoint);
  ports.listening('azuriteTable', azurite.tableEndpoint);
  const installProviderConfig = async (kubeConfig: KubeConfig, secretNamespace: string): Promise<void> => {
    await createSandboxSecret(kubeConfig, secretNamespace, 'azurite-credentials', { accountKey: azurite.accountKey });
    await applySandboxProviderConfig(kubeConfig, {
      apiVersion: API_VERSION,
      kind: 'ProviderConfig',
      metadata: { name: LOCAL_AZURE, annotations: { 'k8or.io/description': 'Azure Blob and Table Storage served by Azurite (dev account devstoreaccount1)' } },
      spec: {
        provider: 'azure',
        storageAccount: azurite.accountName,
        endpoints: { bucket: azurite.blobEndpoint, table: azurite.tableEndpoint },
        credentials: { source: 'Secret', secretRef: { namespace: secretNamespace, name: 'azurite-credentials' } },
      },
    });
  };
  return {
    plugin: azureProvider,
    blob: azurite.blobEndpoint,
    table: azurite.tableEndpoint,
    accountName: azurite.accountName,
    accountKey: azurite.accountKey,
    connectionString: azurite.connectionString,
    installProviderConfig,
    stop: () => azurite.stop(),
  };
}
