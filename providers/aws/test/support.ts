import type { Bucket, BucketSpec, ProviderConfig, Table, TableSpec } from '@k8or/api';
import type { CallOptions, ConnectionContext } from '@k8or/core';

export const ACCESS_KEY = 'AKIAK8ORTEST0000001';
export const SECRET_KEY = 'k8or-test-secret';
export const credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY };

export const ownerTagsOf = (namespace: string, name: string, kind: 'Bucket' | 'Table'): Record<string, string> => ({
  'k8or.io/managed-by': 'k8or',
  'k8or.io/cluster': 'test-cluster',
  'k8or.io/namespace': namespace,
  'k8or.io/name': name,
  'k8or.io/kind': kind,
});

export function awsProviderConfig(endpoints: { bucket?: string; table?: string }, region = 'us-east-1'): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'default' },
    spec: { provider: 'aws', region, endpoints, credentials: { source: 'Secret', secretRef: { namespace: 'k8or-system', name: 'aws-creds' } } },
  };
}

export function bucket(name: string, spec: Partial<BucketSpec> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: 'team-a', generation: 1 }, spec: { name, ...spec } };
}

export function table(name: string, spec: Partial<TableSpec> = {}): Table {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Table',
    metadata: { name, namespace: 'team-a', generation: 1 },
    spec: { name, partitionKey: { name: 'pk', type: 'string' }, ...spec },
  };
}

/** A ConnectionContext as the engine builds it, recording every cloud call by operation name. */
export function connectionContext(
  providerConfig: ProviderConfig,
  resource: Bucket | Table,
  secret: Record<string, string> | undefined = credentials,
): ConnectionContext & { calls: string[] } {
  const calls: string[] = [];
  return {
    providerConfig,
    credentials: secret,
    externalName: resource.spec.name ?? '',
    ownerTags: ownerTagsOf(resource.metadata.namespace ?? '', resource.metadata.name ?? '', resource.kind),
    calls,
    recordCall: async (operation, call) => {
      calls.push(operation);
      return await call();
    },
  };
}

/** Call options for direct provider calls in tests: a signal that never aborts. */
export const call: CallOptions = { signal: new AbortController().signal };
