import type { ProviderConfig } from '@k8or/api';
import { KubeRest, corePath, isConflict, k8orPath } from '@k8or/core';
import type { KubeConfig } from '@kubernetes/client-node';

/** A Secret the sandbox writes for a local backend's credentials. */
export interface SandboxSecret {
  namespace: string;
  name: string;
  stringData: Record<string, string>;
}

/**
 * Writes a sandbox ProviderConfig (and the Secret it reads, with its namespace). On a restart
 * under --data-dir they exist already, and the backends listen on new ports: the ProviderConfig
 * is then re-pointed at them with a merge patch (an endpoint no longer served is removed).
 * Every write goes through the admission webhook, so start it first.
 */
export async function applySandboxProviderConfig(kubeConfig: KubeConfig, providerConfig: ProviderConfig, secret?: SandboxSecret): Promise<void> {
  const kube = new KubeRest(kubeConfig, { userAgent: 'k8or-sandbox' });
  try {
    if (secret) {
      await createUnlessExists(kube, corePath('namespaces', undefined), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: secret.namespace } });
      await createUnlessExists(kube, corePath('secrets', secret.namespace), {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secret.name },
        type: 'Opaque',
        stringData: secret.stringData,
      });
    }
    if (await createUnlessExists(kube, k8orPath('ProviderConfig', undefined), providerConfig)) return;
    const endpoints = providerConfig.spec.endpoints ?? {};
    await kube.patch(k8orPath('ProviderConfig', undefined, providerConfig.metadata.name), { spec: { endpoints: { bucket: endpoints.bucket ?? null, table: endpoints.table ?? null } } });
  } finally {
    kube.close();
  }
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
