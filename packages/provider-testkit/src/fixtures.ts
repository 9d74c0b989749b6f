// Fixtures for calling a provider's client directly, as the engine would: resources, the owner tags
// the engine writes, and a ConnectionContext that records every cloud call.
import type { Bucket, BucketSpec, ProviderConfig, Table, TableSpec } from '@k8or/api';
import type { CallOptions, ConnectionContext } from '@k8or/core';

/** The cluster id of the direct-call tests' owner tags. */
export const TEST_CLUSTER = 'test-cluster';

export const ownerTagsOf = (namespace: string, name: string, kind: 'Bucket' | 'Table', cluster = TEST_CLUSTER): Record<string, string> => ({
  'k8or.io/managed-by': 'k8or',
  'k8or.io/cluster': cluster,
  'k8or.io/namespace': namespace,
  'k8or.io/name': name,
  'k8or.io/kind': kind,
});

/** A Bucket of team-a at generation 1, its external name set. */
export function bucket(name: string, spec: Partial<BucketSpec> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: 'team-a', generation: 1 }, spec: { name, ...spec } };
}

/** A Table of team-a at generation 1, its external name set, keyed by a string `pk`. */
export function table(name: string, spec: Partial<TableSpec> = {}, annotations?: Record<string, string>): Table {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Table',
    metadata: { name, namespace: 'team-a', generation: 1, ...(annotations ? { annotations } : {}) },
    spec: { name, partitionKey: { name: 'pk', type: 'string' }, ...spec },
  };
}

/** A ConnectionContext as the engine builds it, recording every cloud call by operation name. */
export function connectionContext(
  providerConfig: ProviderConfig,
  resource: Bucket | Table,
  secret: Record<string, string> | undefined,
  cluster = TEST_CLUSTER,
): ConnectionContext & { calls: string[] } {
  const calls: string[] = [];
  return {
    providerConfig,
    credentials: secret,
    externalName: resource.spec.name ?? '',
    ownerTags: ownerTagsOf(resource.metadata.namespace ?? '', resource.metadata.name ?? '', resource.kind, cluster),
    calls,
    recordCall: async (operation, call) => {
      calls.push(operation);
      return await call();
    },
  };
}

/** A fresh call's options, as the engine passes them: a signal that never aborts. */
export const callOptions = (): CallOptions => ({ signal: new AbortController().signal });
