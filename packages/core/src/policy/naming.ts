import { Annotations, genericDefaultName, validateGenericName, type ManagedKindName } from '@k8or/api';
import type { NamingRules, ProviderPlugin } from '../provider/contract.js';
import { annotation, stringField } from './read.js';

/** The rules for a provider that declares none: a DNS label, `<namespace>-<name>-<hash>`. */
export const genericNamingRules: NamingRules = {
  validate: (name, field) => validateGenericName(name, field),
  defaultName: (input) => genericDefaultName(input),
};

/** The naming rules of a provider for a kind (its own, else the generic ones). */
export function namingRulesFor(plugin: Pick<ProviderPlugin, 'naming'> | undefined, kind: ManagedKindName): NamingRules {
  return plugin?.naming?.[kind] ?? genericNamingRules;
}

/**
 * The external name of a resource: `spec.name`, else the
 * `k8or.io/external-name` annotation, else the provider's default for this
 * cluster. undefined when there is nothing to build a default from (no
 * metadata.name or namespace yet, or no uid for a rule whose default carries
 * the object's token: `NamingRules.perObjectName`).
 */
export function externalNameFor(resource: unknown, rules: NamingRules, clusterId: string): string | undefined {
  const given = stringField(resource, 'spec', 'name') ?? annotation(resource, Annotations.externalName);
  if (given) return given;
  const namespace = stringField(resource, 'metadata', 'namespace');
  const name = stringField(resource, 'metadata', 'name');
  if (!namespace || !name) return undefined;
  const uid = stringField(resource, 'metadata', 'uid');
  if (rules.perObjectName && !uid) return undefined;
  return rules.defaultName({ clusterId, namespace, name, ...(uid ? { uid } : {}) });
}
