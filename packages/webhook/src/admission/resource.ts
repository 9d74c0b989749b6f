import { DEFAULT_PROVIDER_CONFIG_NAME, type ManagedKindName } from '@k8or/api';
import {
  annotation,
  deletionPolicyFor as sharedDeletionPolicyFor,
  field,
  isDeletionPolicy,
  providerConfigFor as sharedProviderConfigFor,
  stringField,
  type DeletionPolicyChoice,
  type ProviderConfigChoice,
} from '@k8or/core/policy';
import type { AdmissionContext } from './types.js';

// The readers and rules are core's (@k8or/core/policy), shared with the engine: one decision, one place.
export { annotation, field, isDeletionPolicy, stringField, type DeletionPolicyChoice, type ProviderConfigChoice };

export function isManagedKind(kind: string): kind is ManagedKindName {
  return kind === 'Bucket' || kind === 'Table';
}

/**
 * The ProviderConfig a managed resource uses, by the engine's rule
 * (`spec.providerConfigRef.name`, else the namespace annotation
 * `k8or.io/provider-config`, else `default`); undefined when that is the
 * cluster default and it does not exist.
 */
export function providerConfigFor(object: unknown, namespace: string | undefined, context: AdmissionContext): ProviderConfigChoice | undefined {
  const choice = sharedProviderConfigFor(object, namespace ? context.getNamespace(namespace) : undefined);
  if (choice.source === 'cluster-default' && !context.getProviderConfig(DEFAULT_PROVIDER_CONFIG_NAME)) return undefined;
  return choice;
}

/** The deletion policy that applies to a resource, by the engine's rule (annotation, spec, namespace annotation, operator default). */
export function deletionPolicyFor(object: unknown, namespace: string | undefined, context: AdmissionContext): DeletionPolicyChoice {
  return sharedDeletionPolicyFor(object, namespace ? context.getNamespace(namespace) : undefined, context.defaultDeletionPolicy);
}

/** Namespace of an object: the request's, else its metadata's. */
export function namespaceOf(object: unknown, requestNamespace?: string): string | undefined {
  return requestNamespace || stringField(object, 'metadata', 'namespace');
}
