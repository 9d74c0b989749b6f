import { Annotations } from '@k8or/api';
import { externalNameFor, namingRulesFor } from '@k8or/core/policy';
import { isPlainObject, PatchBuilder } from './patch.js';
import { annotation, deletionPolicyFor, field, isManagedKind, namespaceOf, providerConfigFor, stringField } from './resource.js';
import type { AdmissionContext, DefaultingOutcome } from './types.js';

export interface DefaultingOptions {
  /** CREATE (default) or UPDATE; on UPDATE a field still missing takes the stored object's value first. */
  operation?: 'CREATE' | 'UPDATE';
  /** The stored object, on UPDATE. */
  oldObject?: unknown;
  /** The request's namespace, when the object's metadata does not say. */
  namespace?: string;
}

/**
 * Fills what k8or can decide for a Bucket or Table, in this order:
 *
 * 1. `spec.providerConfigRef`: the stored value (UPDATE), else the namespace
 *    annotation `k8or.io/provider-config`, else the cluster's `default` ProviderConfig.
 * 2. `spec.name` (external name): the stored value (UPDATE), else the
 *    `k8or.io/external-name` annotation, else the default name of the chosen
 *    ProviderConfig's provider for this cluster (its NamingRules, as the engine
 *    computes it). Left empty (for the engine) when the provider or the
 *    cluster id is unknown or the object has no name yet.
 * 3. `spec.deletionPolicy`: the stored value (UPDATE), else what the engine
 *    would apply (core's deletionPolicyFor: the object's annotation, then its
 *    namespace's, else the operator default).
 *
 * Pure and idempotent: it only adds what is absent, so running it on its own
 * result adds nothing. Other kinds (ProviderConfig) get no patch.
 */
export function defaultObject(object: unknown, context: AdmissionContext, options: DefaultingOptions = {}): DefaultingOutcome {
  const kind = stringField(object, 'kind');
  if (!isPlainObject(object) || !kind || !isManagedKind(kind)) return { patch: [], object, warnings: [] };
  if (field(object, 'metadata', 'deletionTimestamp') !== undefined) return { patch: [], object, warnings: [] };
  const builder = new PatchBuilder(object);
  const warnings: string[] = [];
  const namespace = namespaceOf(object, options.namespace);
  const stored = options.operation === 'UPDATE' ? options.oldObject : undefined;

  const storedRef = stringField(stored, 'spec', 'providerConfigRef', 'name');
  const choice = storedRef ? { name: storedRef } : providerConfigFor(object, namespace, context);
  if (choice) {
    builder.addIfAbsent(['spec', 'providerConfigRef', 'name'], choice.name);
  } else {
    warnings.push(
      `no ProviderConfig for ${kind} ${namespace ?? ''}/${stringField(object, 'metadata', 'name') ?? ''}: set spec.providerConfigRef.name, annotate the namespace with ${Annotations.providerConfig}, or create the ProviderConfig named "default"`,
    );
  }

  const externalName = stringField(stored, 'spec', 'name') ?? annotation(object, Annotations.externalName) ?? generatedName(object, kind, namespace, choice?.name, context);
  if (externalName) builder.addIfAbsent(['spec', 'name'], externalName);

  const storedPolicy = stringField(stored, 'spec', 'deletionPolicy');
  builder.addIfAbsent(['spec', 'deletionPolicy'], storedPolicy ?? deletionPolicyFor(object, namespace, context).policy);

  return { patch: builder.operations, object: builder.object, warnings };
}

/**
 * The provider's default external name for this cluster, or undefined when it
 * cannot be decided yet (no name: generateName on CREATE; no namespace; an
 * unknown ProviderConfig or provider; no cluster id): the engine decides it then.
 */
function generatedName(object: unknown, kind: 'Bucket' | 'Table', namespace: string | undefined, providerConfigName: string | undefined, context: AdmissionContext): string | undefined {
  const provider = providerConfigName ? stringField(context.getProviderConfig(providerConfigName), 'spec', 'provider') : undefined;
  const plugin = provider ? context.providers.get(provider) : undefined;
  if (!plugin || !namespace || !context.clusterId) return undefined;
  const named = { ...(object as Record<string, unknown>), metadata: { ...(field(object, 'metadata') as Record<string, unknown>), namespace } };
  return externalNameFor(named, namingRulesFor(plugin, kind), context.clusterId);
}
