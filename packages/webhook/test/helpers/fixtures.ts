import { validateS3BucketName, validateDynamoDbTableName, type ManagedKindName, type ManagedResource, type ProviderConfig, type Violation } from '@k8or/api';
import type { ProviderPlugin, ProviderValidation } from '@k8or/core';
import { staticContext, type AdmissionContext, type NamespaceInfo } from '@k8or/webhook';

/**
 * A small stand-in provider for the pure rules (the real AWS provider's rules
 * are exercised end to end in cluster.test.ts): S3 and DynamoDB naming, and one
 * portability warning, as a provider package exports them.
 */
export const testValidation: ProviderValidation = {
  validate(kind: ManagedKindName, resource: ManagedResource): { violations: Violation[]; warnings: string[] } {
    const name = resource.spec.name;
    const violations = name ? (kind === 'Bucket' ? validateS3BucketName(name) : validateDynamoDbTableName(name)) : [];
    const warnings: string[] = [];
    if (kind === 'Bucket' && 'lifecycle' in resource.spec) {
      for (const rule of resource.spec.lifecycle ?? []) {
        for (const t of rule.transitions ?? []) {
          if (t.tier === 'InfrequentAccess' && t.days < 30) warnings.push(`spec.lifecycle[${rule.id}]: S3 moves objects to STANDARD_IA after 30 days at the earliest; ${t.days} becomes 30`);
        }
      }
    }
    return { violations, warnings };
  },
  validateProviderConfig(pc: ProviderConfig) {
    const violations: Violation[] = [];
    if (pc.spec.region && !/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(pc.spec.region)) violations.push({ field: 'spec.region', rule: 'aws.region', message: `"${pc.spec.region}" is not an AWS region` });
    return { violations, warnings: [] };
  },
};

export const testAws: ProviderPlugin = { provider: 'aws', packageName: 'test-provider-aws', connectors: {}, validation: testValidation };

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
export function testWorld(overrides: Partial<Parameters<typeof staticContext>[0]> = {}): AdmissionContext {
  return staticContext({
    providers: [testAws],
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
