import { allCrds, type CustomResourceDefinition, type JSONSchemaProps } from '@k8or/api';
import type { ProviderPlugin } from '../provider/contract.js';
import type { KubeAccess } from './access.js';
import { KubeRest, isAlreadyExists } from './rest.js';

const CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Each provider's `settingsSchema`, by provider name (providers without one are left out). */
export function settingsSchemasOf(providers: Iterable<ProviderPlugin>): Record<string, JSONSchemaProps> {
  return Object.fromEntries([...providers].flatMap((plugin) => (plugin.settingsSchema ? [[plugin.provider, plugin.settingsSchema] as const] : [])));
}

/**
 * The k8or CRDs with these providers' settings listed under ProviderConfig `spec.settings`, so that
 * `kubectl explain providerconfig.spec.settings` shows them (the providers' own rules stay with the
 * webhook and the engine: see `CrdOptions.settingsSchemas`).
 */
export function crdsListingSettingsOf(providers: Iterable<ProviderPlugin>): CustomResourceDefinition[] {
  return allCrds({ settingsSchemas: settingsSchemasOf(providers) });
}

/**
 * Creates the k8or CRDs, or replaces them with the current ones, as plain JSON.
 * Not through client-node's typed API: its serializer maps JSONSchemaProps by
 * model field names and silently drops `default` and `x-kubernetes-validations`,
 * which would leave a cluster without k8or's defaults and CEL immutability rules.
 */
export async function installCrds(kubeConfig: KubeAccess, crds: readonly CustomResourceDefinition[] = allCrds()): Promise<void> {
  const rest = new KubeRest(kubeConfig, { userAgent: 'k8or-install-crds' });
  try {
    for (const crd of crds) {
      try {
        await rest.request('POST', CRDS_PATH, crd);
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        const current = await rest.get<{ metadata?: { resourceVersion?: string } }>(`${CRDS_PATH}/${crd.metadata.name}`);
        await rest.request('PUT', `${CRDS_PATH}/${crd.metadata.name}`, { ...crd, metadata: { ...crd.metadata, resourceVersion: current?.metadata?.resourceVersion } });
      }
    }
  } finally {
    rest.close();
  }
}
