import { join } from 'node:path';
import { API_VERSION, type ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { startAzurite } from '@k8or/local-clouds';
import { azureProvider } from '@k8or/provider-azure';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';

/** The ProviderConfig the sandbox points at Azurite; an Azure Bucket or Table names it in spec.providerConfigRef. */
export const LOCAL_AZURE = 'local-azure';

export interface LocalAzure {
  plugin: ProviderPlugin;
  /** Azurite's Blob and Table endpoints (dev account path included). */
  blob: string;
  table: string;
  stop(): Promise<void>;
}

/**
 * Azure in the sandbox: Azurite (in `dataDir/azurite` when given, so a restart keeps containers and
 * tables), a Secret with its published dev account key, and the `local-azure` ProviderConfig
 * pointed at it (re-pointed at the new ports when a persisted sandbox restarts).
 */
export async function startLocalAzure(kubeConfig: KubeConfig, secretNamespace: string, dataDir: string | undefined): Promise<LocalAzure> {
  const azurite = await startAzurite(dataDir ? { dataDir: join(dataDir, 'azurite') } : {});
  try {
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await ignoreConflict(core.createNamespace({ body: { metadata: { name: secretNamespace } } }));
    await ignoreConflict(
      core.createNamespacedSecret({ namespace: secretNamespace, body: { metadata: { name: 'azurite-credentials' }, type: 'Opaque', stringData: { accountKey: azurite.accountKey } } }),
    );
    const endpoints = { bucket: azurite.blobEndpoint, table: azurite.tableEndpoint };
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
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const plural = { group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs' };
    try {
      await custom.createClusterCustomObject({ ...plural, body: providerConfig });
    } catch (error) {
      if (!isConflict(error)) throw error;
      await custom.patchClusterCustomObject({ ...plural, name: LOCAL_AZURE, body: { spec: { endpoints } } }, { headers: { 'Content-Type': 'application/merge-patch+json' } } as never);
    }
  } catch (error) {
    await azurite.stop();
    throw error;
  }
  return { plugin: azureProvider, blob: azurite.blobEndpoint, table: azurite.tableEndpoint, stop: () => azurite.stop() };
}

function isConflict(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: number }).code === 409;
}

async function ignoreConflict(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!isConflict(error)) throw error;
  }
}
