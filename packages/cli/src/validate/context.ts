import { GROUP, VERSION, type DeletionPolicy, type ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { staticContext, type AdmissionContext } from '@k8or/webhook';
import type { ClusterView } from './provider-configs.js';

export interface CheckContextOptions {
  providers: ReadonlyMap<string, ProviderPlugin>;
  defaultDeletionPolicy: DeletionPolicy;
  secretsNamespace: string;
  clusterId: string | undefined;
}

/** A ProviderConfig known only by its name, taken to be of `provider`; none of its settings is known. */
export function assumedProviderConfig(name: string, provider: string): ProviderConfig {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: 'ProviderConfig', metadata: { name }, spec: { provider } };
}

/**
 * The admission context of one check: the view's ProviderConfigs and Namespaces and, with
 * `assumedProvider`, any other ProviderConfig name taken to be of that provider (so the cluster
 * default `default` exists too). Without it, a name the view lacks does not exist, as in a cluster.
 */
export function checkContext(view: ClusterView, resources: readonly unknown[], assumedProvider: string | undefined, options: CheckContextOptions): AdmissionContext {
  const base = staticContext({
    providers: options.providers,
    providerConfigs: view.providerConfigs,
    namespaces: view.namespaces,
    resources,
    defaultDeletionPolicy: options.defaultDeletionPolicy,
    secretNamespaces: [options.secretsNamespace],
    ...(options.clusterId ? { clusterId: options.clusterId } : {}),
  });
  if (assumedProvider === undefined) return base;
  const known = base.getProviderConfig.bind(base);
  return { ...base, getProviderConfig: (name) => known(name) ?? assumedProviderConfig(name, assumedProvider) };
}
