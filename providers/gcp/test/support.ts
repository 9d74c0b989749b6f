import { generateKeyPairSync } from 'node:crypto';
import type { Bucket, BucketSpec, ProviderConfig, Table, TableSpec } from '@k8or/api';
import type { ConnectionContext } from '@k8or/core';

export const PROJECT = 'k8or-test-project';
export const INSTANCE = 'k8or-instance';

export const ownerTagsOf = (namespace: string, name: string, kind: 'Bucket' | 'Table'): Record<string, string> => ({
  'k8or.io/managed-by': 'k8or',
  'k8or.io/cluster': 'test-cluster',
  'k8or.io/namespace': namespace,
  'k8or.io/name': name,
  'k8or.io/kind': kind,
});

/** A service-account key as the Cloud console hands it out (a fresh RSA pair), and its public half for the GCS fake. */
export function serviceAccountKey(email: string, project = PROJECT): { key: Record<string, string>; json: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = { type: 'service_account', project_id: project, client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
  return { key, json: JSON.stringify(key), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

export function gcpProviderConfig(endpoints: { bucket?: string; table?: string }, spec: Partial<ProviderConfig['spec']> = {}): ProviderConfig {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: 'default' },
    spec: { provider: 'gcp', project: PROJECT, bigtableInstance: INSTANCE, endpoints, ...spec },
  };
}

export function bucket(name: string, spec: Partial<BucketSpec> = {}): Bucket {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace: 'team-a', generation: 1 }, spec: { name, ...spec } };
}

export function table(name: string, spec: Partial<TableSpec> = {}, annotations: Record<string, string> = {}): Table {
  return {
    apiVersion: 'k8or.io/v1alpha1',
    kind: 'Table',
    metadata: { name, namespace: 'team-a', generation: 1, annotations },
    spec: { name, partitionKey: { name: 'pk', type: 'string' }, ...spec },
  };
}

/** A ConnectionContext as the engine builds it, recording every cloud call by operation name. */
export function connectionContext(
  providerConfig: ProviderConfig,
  resource: Bucket | Table,
  secret: Record<string, string> | undefined = undefined,
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

/** A fresh call's options, as the engine passes them. */
export const call = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });
