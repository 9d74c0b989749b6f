import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

/**
 * The cluster id the webhook and the engine put in owner tags and default external names: the
 * configured one, else the uid of kube-system (as other operators identify a cluster). Every part
 * that needs it (the operator, the sandbox) resolves it here, so they always agree.
 */
export async function resolveClusterId(kubeConfig: KubeConfig, configured?: string): Promise<string> {
  if (configured) return configured;
  try {
    const namespace = await kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
    const uid = namespace.metadata?.uid;
    if (uid) return uid;
  } catch {
    // Reported below with the fix.
  }
  throw new Error('--cluster-id (K8OR_CLUSTER_ID) is required when the kube-system namespace cannot be read');
}
