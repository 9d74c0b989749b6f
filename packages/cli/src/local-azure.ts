import { join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import { KubeRest, corePath, isConflict, k8orPath, type ProviderPlugin } from '@k8or/core';
import { startAzurite } from '@k8or/local-clouds';
import { azureProvider } from '@k8or/provider-azure';
import type { KubeConfig } from '@kubernetes/client-node';

/** The ProviderConfig the sandbox points at Azurite; an Azure Bucket or Table names it in spec.providerConfigRef. */
export const LOCAL_AZURE = 'local-azure';

export interface LocalAzure {
  plugin: ProviderPlugin;
  /** Azurite's Blob and Table endpoints (dev account path included). */
  blob: string;
  table: string;
  /**
   * A Secret with Azurite's published dev account key and the `local-azure` ProviderConfig
   * pointed at Azurite (re-pointed at the new ports when a persisted sandbox restarts).
   */
  installProviderConfig(kubeConfig: KubeConfig, secretNamespace: string): Promise<void>;
  stop(): Promise<void>;
}

/** Azure in the sandbox: Azurite, kept in `dataDir/azurite` when given, so a restart keeps containers and tables. */
export async function startLocalAzure(dataDir: string | undefined): Promise<LocalAzure> {
  const azurite = await startAzurite(dataDir ? { dataDir: join(dataDir, 'azurite') } : {});
  const endpoints = { bucket: azurite.blobEndpoint, table: azurite.tableEndpoint };
  const installProviderConfig = async (kubeConfig: KubeConfig, secretNamespace: string): Promise<void> => {
    const kube = new KubeRest(kubeConfig, { userAgent: 'k8or-sandbox' });
    try {
      await createUnlessExists(kube, corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: secretNamespace } });
      await createUnlessExists(kube, corePath('secrets', secretNamespace), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'azurite-credentials' },
        type: 'Opaque',
        stringData: { accountKey: azurite.accountKey },
      });
      const providerConfig: ProviderConfig = {
        apiVersion: API_VERSION,
        kind: 'ProviderConfig',
        metadata: { name: LOCAL_AZURE, annotations: { 'k8or.io/description': 'Azure Blob and Table Storage served by Azurite (dev account devstoreaccount1)' } },
        spec: {
          provider: 'azure',
          storageAccount: azurite.accountName,
          endpoints,
          credentials: { source: 'Secret', secretRef: { namespace: secretNamespace, name: 'azurite-credentials' } },
        },
      };
      if (!(await createUnlessExists(kube, k8orPath('ProviderConfig', undefined), providerConfig))) {
        await kube.patch(k8orPath('ProviderConfig', undefined, LOCAL_AZURE), { spec: { endpoints } });
      }
    } finally {
      kube.close();
    }
  };
  return { plugin: azureProvider, blob: azurite.blobEndpoint, table: azurite.tableEndpoint, installProviderConfig, stop: () => azurite.stop() };
}

/** Creates the object; false when it already exists. */
async function createUnlessExists(kube: KubeRest, path: string, body: unknown): Promise<boolean> {
  try {
    await kube.create(path, body);
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}
