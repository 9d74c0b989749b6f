import { Annotations, type DeletionPolicy, type ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { secretNamespacesFor } from '@k8or/core/policy';
import { annotation, providerConfigFor, stringField } from '../admission/resource.js';
import type { AdmissionContext, NamespaceInfo, ResourceRef } from '../admission/types.js';
import { toMap } from './cluster-context.js';

export interface StaticContextOptions {
  providers: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[];
  providerConfigs?: readonly ProviderConfig[];
  namespaces?: readonly NamespaceInfo[];
  /** Managed resources (Buckets, Tables) already in the cluster, for the ProviderConfig orphan checks and one object per cloud resource. */
  resources?: readonly unknown[];
  defaultDeletionPolicy?: DeletionPolicy;
  /** Default: the operator's own namespace (core's secretNamespacesFor). */
  secretNamespaces?: readonly string[] | '*';
  /** The engine's cluster id; without it, external names are left for the engine. */
  clusterId?: string;
  resyncFloorMs?: number;
}

/**
 * An admission context from fixed lists: what `k8or validate -f` builds from
 * the files it is given, and what tests use. Defaults: deletion policy
 * `Delete`, Secrets readable only in the operator's namespace (`k8or-system`).
 */
export function staticContext(options: StaticContextOptions): AdmissionContext {
  const providerConfigs = new Map((options.providerConfigs ?? []).map((pc) => [pc.metadata?.name ?? '', pc]));
  const namespaces = new Map((options.namespaces ?? []).map((ns) => [ns.metadata.name ?? '', ns]));
  const resources = options.resources ?? [];
  const ofKind = (kind: string): unknown[] => resources.filter((r) => stringField(r, 'kind') === kind);
  // A manifest without a namespace lands in `default`, as `k8or validate` reads it.
  const namespaceOf = (r: unknown): string => stringField(r, 'metadata', 'namespace') ?? 'default';
  const context: AdmissionContext = {
    providers: toMap(options.providers),
    defaultDeletionPolicy: options.defaultDeletionPolicy ?? 'Delete',
    secretNamespaces: secretNamespacesFor(options.secretNamespaces),
    ...(options.clusterId !== undefined ? { clusterId: options.clusterId } : {}),
    ...(options.resyncFloorMs !== undefined ? { resyncFloorMs: options.resyncFloorMs } : {}),
    getProviderConfig: (name) => providerConfigs.get(name),
    getNamespace: (name) => namespaces.get(name),
    resourcesUsingProviderConfig: (name): ResourceRef[] =>
      resources
        .filter((r) => providerConfigFor(r, namespaceOf(r), context)?.name === name)
        .map((r) => ({ kind: stringField(r, 'kind') ?? '', namespace: namespaceOf(r), name: stringField(r, 'metadata', 'name') ?? '' })),
    resourcesNaming: (kind, externalName) =>
      ofKind(kind).filter((r) => {
        const given = stringField(r, 'spec', 'name') ?? annotation(r, Annotations.externalName);
        return given === undefined || given === externalName;
      }),
    getResource: (kind, namespace, name) => ofKind(kind).find((r) => namespaceOf(r) === namespace && stringField(r, 'metadata', 'name') === name),
  };
  return context;
}

/**
 * A static context from a pile of manifests, as `k8or validate -f dir/` reads
 * them: ProviderConfigs and Namespaces are looked up by name, Buckets and
 * Tables count as resources using their ProviderConfig. Anything else is ignored.
 */
export function contextFromManifests(manifests: readonly unknown[], options: Omit<StaticContextOptions, 'providerConfigs' | 'namespaces' | 'resources'>): AdmissionContext {
  const ofKind = (kind: string): unknown[] => manifests.filter((m) => stringField(m, 'kind') === kind);
  return staticContext({
    ...options,
    providerConfigs: ofKind('ProviderConfig') as ProviderConfig[],
    namespaces: ofKind('Namespace').map((ns) => ({ metadata: { name: stringField(ns, 'metadata', 'name'), annotations: annotationsOf(ns) } })),
    resources: [...ofKind('Bucket'), ...ofKind('Table')],
  });
}

function annotationsOf(object: unknown): Record<string, string> {
  const found = (object as { metadata?: { annotations?: unknown } } | null)?.metadata?.annotations;
  if (!found || typeof found !== 'object') return {};
  return Object.fromEntries(Object.entries(found).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
