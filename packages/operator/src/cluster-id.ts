import { KubeRest, corePath, type KubeAccess } from '@k8or/core';

/**
 * The cluster id the webhook and the engine put in owner tags and default external names: the
 * configured one, else the uid of kube-system (as other operators identify a cluster). Every part
 * that needs it (the operator, the sandbox) resolves it here, so they always agree.
 */
export async function resolveClusterId(kubeConfig: KubeAccess, configured?: string): Promise<string> {
  if (configured) return configured;
  const rest = new KubeRest(kubeConfig, { userAgent: 'k8or-operator' });
  try {
    const namespace = await rest.get<{ metadata?: { uid?: string } }>(corePath('namespaces', undefined, 'kube-system'));
    const uid = namespace?.metadata?.uid;
    if (uid) return uid;
  } catch {
    // Reported below with the fix.
  } finally {
    rest.close();
  }
  throw new Error('--cluster-id (K8OR_CLUSTER_ID) is required when the kube-system namespace cannot be read');
}
