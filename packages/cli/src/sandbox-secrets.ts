import { KubeRest, corePath, isConflict } from '@k8or/core';
import type { KubeConfig } from '@kubernetes/client-node';

/** Creates a sandbox Secret, unless a persisted sandbox has it already (its credentials are kept with it). */
export async function createSandboxSecret(kubeConfig: KubeConfig, namespace: string, name: string, stringData: Record<string, string>): Promise<void> {
  const kube = new KubeRest(kubeConfig, { userAgent: 'k8or-sandbox' });
  try {
    await kube.create(corePath('secrets', namespace), { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', stringData });
  } catch (error) {
    if (!isConflict(error)) throw error;
  } finally {
    kube.close();
  }
}
