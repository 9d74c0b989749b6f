import type { ProviderConfig } from '@k8or/api';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';

const PROVIDER_CONFIGS = { group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs' };

/**
 * Creates a sandbox ProviderConfig, or, when a persisted sandbox already has it, points its
 * `spec.endpoints` at the backends of this run and leaves the rest as the user may have changed it.
 * The backends come back on their recorded ports, so the endpoints stay the same unless a port was
 * taken (then they move, and the objects pinned to the old endpoint stop with TargetChanged).
 */
export async function applySandboxProviderConfig(kubeConfig: KubeConfig, providerConfig: ProviderConfig): Promise<void> {
  const name = providerConfig.metadata.name;
  if (!name) throw new Error('a sandbox ProviderConfig needs metadata.name');
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await custom.createClusterCustomObject({ ...PROVIDER_CONFIGS, body: providerConfig });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 409) throw error;
    // A JSON Patch: client-node 2.x sends every patch as application/json-patch+json, whatever header
    // option it is given. `add` on an existing member replaces it.
    await custom.patchClusterCustomObject({
      ...PROVIDER_CONFIGS,
      name,
      body: [{ op: 'add', path: '/spec/endpoints', value: providerConfig.spec.endpoints ?? {} }],
    });
  }
}
