import type { ProviderConfig } from '@k8or/api';
import { awsProvider } from '@k8or/provider-aws';
import { staticContext, type AdmissionContext, type NamespaceInfo } from '@k8or/webhook';

/** The real AWS provider package: its exported validation is what the webhook runs. */
export const aws = awsProvider;

export function providerConfig(name: string, spec: Record<string, unknown>): ProviderConfig {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: spec as unknown as ProviderConfig['spec'] };
}

export function bucket(namespace: string, name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace, ...metadata }, spec };
}

export function table(namespace: string, name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace, ...metadata }, spec: { partitionKey: { name: 'id', type: 'string' }, ...spec } };
}

export function namespace(name: string, annotations: Record<string, string> = {}): NamespaceInfo {
  return { metadata: { name, annotations } };
}

/**
 * The world most admission tests run in: an AWS default ProviderConfig, a GCP
 * one (no GCP provider installed), namespace `team-a` pointing at `staging`
 * with Retain, and two Buckets already using `default`.
 */
/** The cluster id the webhook tests default names with. */
export const TEST_CLUSTER_ID = 'webhook-test-cluster';

export function testWorld(overrides: Partial<Parameters<typeof staticContext>[0]> = {}): AdmissionContext {
  return staticContext({
    clusterId: TEST_CLUSTER_ID,
    providers: [aws],
    providerConfigs: [
      providerConfig('default', { provider: 'aws', region: 'us-east-1' }),
      providerConfig('staging', { provider: 'aws', region: 'eu-west-1' }),
      providerConfig('google', { provider: 'gcp', project: 'my-project-1' }),
    ],
    namespaces: [namespace('apps'), namespace('team-a', { 'k8or.io/provider-config': 'staging', 'k8or.io/deletion-policy': 'Retain' }), namespace('team-b', { 'k8or.io/provider-config': 'missing' })],
    resources: [bucket('apps', 'logs', { name: 'apps-logs', providerConfigRef: { name: 'default' } }), bucket('apps', 'media', { name: 'apps-media' })],
    secretNamespaces: ['k8or-system'],
    ...overrides,
  });
}
