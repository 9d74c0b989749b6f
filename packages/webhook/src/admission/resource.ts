import { Annotations, DEFAULT_PROVIDER_CONFIG_NAME, DELETION_POLICIES, type DeletionPolicy, type ManagedKindName } from '@k8or/api';
import { isPlainObject } from './patch.js';
import type { AdmissionContext } from './types.js';

/** Reads fields of an object that arrived as untrusted JSON, without assuming its shape. */
export function field(object: unknown, ...path: string[]): unknown {
  let node = object;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return node;
}

export function stringField(object: unknown, ...path: string[]): string | undefined {
  const value = field(object, ...path);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function annotation(object: unknown, key: string): string | undefined {
  return stringField(object, 'metadata', 'annotations', key);
}

export function isManagedKind(kind: string): kind is ManagedKindName {
  return kind === 'Bucket' || kind === 'Table';
}

export function isDeletionPolicy(value: unknown): value is DeletionPolicy {
  return typeof value === 'string' && (DELETION_POLICIES as readonly string[]).includes(value);
}

/** Where a resource's ProviderConfig name comes from. */
export interface ProviderConfigChoice {
  name: string;
  source: 'spec' | 'namespace-annotation' | 'cluster-default';
}

/**
 * The ProviderConfig a managed resource uses: `spec.providerConfigRef.name`,
 * else the namespace annotation `k8or.io/provider-config`, else the cluster's
 * ProviderConfig named `default` if it exists. undefined when none applies.
 */
export function providerConfigFor(object: unknown, namespace: string | undefined, context: AdmissionContext): ProviderConfigChoice | undefined {
  const explicit = stringField(object, 'spec', 'providerConfigRef', 'name');
  if (explicit) return { name: explicit, source: 'spec' };
  const fromNamespace = namespace ? annotation(context.getNamespace(namespace), Annotations.providerConfig) : undefined;
  if (fromNamespace) return { name: fromNamespace, source: 'namespace-annotation' };
  if (context.getProviderConfig(DEFAULT_PROVIDER_CONFIG_NAME)) return { name: DEFAULT_PROVIDER_CONFIG_NAME, source: 'cluster-default' };
  return undefined;
}

/** Where a deletion policy comes from: the resource's annotation, its namespace's annotation, or the operator default. */
export interface DeletionPolicyChoice {
  policy: DeletionPolicy;
  source: 'resource-annotation' | 'namespace-annotation' | 'operator-default';
}

/** The deletion policy for a resource that has none in its spec. Invalid annotation values are skipped (and warned about by validation). */
export function deletionPolicyFor(object: unknown, namespace: string | undefined, context: AdmissionContext): DeletionPolicyChoice {
  const own = annotation(object, Annotations.deletionPolicy);
  if (isDeletionPolicy(own)) return { policy: own, source: 'resource-annotation' };
  const fromNamespace = namespace ? annotation(context.getNamespace(namespace), Annotations.deletionPolicy) : undefined;
  if (isDeletionPolicy(fromNamespace)) return { policy: fromNamespace, source: 'namespace-annotation' };
  return { policy: context.defaultDeletionPolicy, source: 'operator-default' };
}

/** Namespace of an object: the request's, else its metadata's. */
export function namespaceOf(object: unknown, requestNamespace?: string): string | undefined {
  return requestNamespace || stringField(object, 'metadata', 'namespace');
}
