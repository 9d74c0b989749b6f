import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import type { ProviderPlugin } from '@k8or/core';

/** Where a ProviderConfig points: the account, region, project, storage account or instance its resources live in. */
export interface CloudTarget {
  /** Equal for two ProviderConfigs exactly when they reach the same place. */
  key: string;
  /** For messages: `aws region us-east-1`. */
  description: string;
}

/** The parts of a ProviderConfig that say where its resources are (never its endpoints or credentials). */
const TARGET_FIELDS = ['region', 'project', 'storageAccount', 'bigtableInstance'] as const;

/**
 * The cloud target of a ProviderConfig.
 *
 * Stand-in until @k8or/core decides it (with each provider's `targetOf`): provider and the
 * ProviderConfig's region, project, storage account and instance.
 */
export function cloudTargetOf(providerConfig: ProviderConfig, _plugin: ProviderPlugin): CloudTarget {
  const spec = providerConfig.spec as unknown as Record<string, unknown>;
  const parts = TARGET_FIELDS.flatMap((field) => (typeof spec[field] === 'string' ? [[field, spec[field]] as const] : []));
  const provider = providerConfig.spec.provider;
  return {
    key: JSON.stringify([provider, ...parts]),
    description: [provider, ...parts.map(([field, value]) => `${field === 'bigtableInstance' ? 'instance' : field.replace('storageAccount', 'storage account')} ${value}`)].join(' '),
  };
}

/** The one key of a cloud resource: equal for two objects exactly when they name the same resource. Stand-in, see cloudTargetOf. */
export function cloudResourceKey(target: CloudTarget, kind: ManagedKindName, externalName: string): string {
  return JSON.stringify([target.key, kind, externalName]);
}
