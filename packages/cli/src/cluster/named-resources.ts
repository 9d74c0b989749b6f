import { KINDS, type ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';
import { staticContext, type AdmissionContext, type NamespaceInfo } from '@k8or/webhook';
import type { ClusterReader } from './reads.js';

/**
 * The cluster's Buckets and Tables, with the ProviderConfigs and Namespaces that decide which
 * cloud resource each one names, as an admission context: `objectsNaming` of @k8or/webhook then
 * tells which object already names a cloud resource, exactly as the webhook decides it. Lists
 * only; a denied or failed list is an error, never an empty cluster.
 */
export async function clusterObjects(cluster: ClusterReader, providers: ReadonlyMap<string, ProviderPlugin>, clusterId: string): Promise<AdmissionContext> {
  const [providerConfigs, namespaces, buckets, tables] = await Promise.all([
    cluster.listAll(KINDS.ProviderConfig.plural),
    cluster.namespaces(),
    cluster.listAll(KINDS.Bucket.plural),
    cluster.listAll(KINDS.Table.plural),
  ]);
  // A list's items carry no kind in some servers' answers: give each its own.
  const ofKind = (kind: string, items: unknown[]): unknown[] => items.map((item) => ({ ...(item as object), kind }));
  return staticContext({
    providers,
    clusterId,
    providerConfigs: providerConfigs as ProviderConfig[],
    namespaces: namespaces.map((ns) => ({ metadata: (ns as NamespaceInfo).metadata })),
    resources: [...ofKind(KINDS.Bucket.kind, buckets), ...ofKind(KINDS.Table.kind, tables)],
  });
}
