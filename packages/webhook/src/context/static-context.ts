import type { DeletionPolicy, ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { providerConfigFor, stringField } from '../admission/resource.js';
import type { AdmissionContext, NamespaceInfo, ResourceRef } from '../admission/types.js';
import { toMap } from './cluster-context.js';

export interface StaticContextOptions {
  providers: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[];
  providerConfigs?: readonly ProviderConfig[];
  namespaces?: readonly NamespaceInfo[];
  /** Managed resources (Buckets, Tables) already in the cluster, for the ProviderConfig orphan checks. */
  resources?: readonly unknown[];
  defaultDeletionPolicy?: DeletionPolicy;
  secretNamespaces?: readonly string[] | '*';
}

/**
 * An admission context from fixed lists: what `k8or validate -f` builds from
 * the files it is given, and what tests use. Defaults: deletion policy
 * `Delete`, Secrets readable only in `k8or-system`.
 */
export function staticContext(options: StaticContextOptions): AdmissionContext {
  const providerConfigs = new Map((options.providerConfigs ?? []).map((pc) => [pc.metadata?.name ?? '', pc]));
  const namespaces = new Map((options.namespaces ?? []).map((ns) => [ns.metadata.name ?? '', ns]));
  const context: AdmissionContext = {
    providers: toMap(options.providers),
    defaultDeletionPolicy: options.defaultDeletionPolicy ?? 'Delete',
    secretNamespaces: options.secretNamespaces ?? ['k8or-system'],
    getProviderConfig: (name) => providerConfigs.get(name),
    getNamespace: (name) => namespaces.get(name),
    resourcesUsingProviderConfig: (name): ResourceRef[] =>
      (options.resources ?? [])
        .filter((r) => providerConfigFor(r, stringField(r, 'metadata', 'namespace'), context)?.name === name)
        .map((r) => ({ kind: stringField(r, 'kind') ?? '', namespace: stringField(r, 'metadata', 'namespace') ?? '', name: stringField(r, 'metadata', 'name') ?? '' })),
  };
  return context;
}
