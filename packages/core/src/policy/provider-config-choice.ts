import { Annotations, DEFAULT_PROVIDER_CONFIG_NAME } from '@k8or/api';
import { annotation, stringField } from './read.js';

/** The ProviderConfig a resource uses, and where the name came from. */
export interface ProviderConfigChoice {
  name: string;
  source: 'spec' | 'namespace-annotation' | 'cluster-default';
}

/**
 * The ProviderConfig of a managed resource: `spec.providerConfigRef.name`,
 * else its namespace's `k8or.io/provider-config` annotation, else the cluster
 * default named `default` (which may not exist: callers check).
 */
export function providerConfigFor(resource: unknown, namespace: unknown): ProviderConfigChoice {
  const explicit = stringField(resource, 'spec', 'providerConfigRef', 'name');
  if (explicit) return { name: explicit, source: 'spec' };
  const fromNamespace = annotation(namespace, Annotations.providerConfig);
  if (fromNamespace) return { name: fromNamespace, source: 'namespace-annotation' };
  return { name: DEFAULT_PROVIDER_CONFIG_NAME, source: 'cluster-default' };
}
