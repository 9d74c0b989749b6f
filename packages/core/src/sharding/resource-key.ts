import type { ManagedKindName, ProviderConfig } from '@k8or/api';
import { cloudTargetFor, cloudTargetKey, resourceKeyIn } from '../policy/cloud-target.js';
import { externalNameFor, namingRulesFor } from '../policy/naming.js';
import { providerConfigFor } from '../policy/provider-config-choice.js';
import type { ProviderPlugin } from '../provider/contract.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import type { ShardKeySource } from './keys.js';

/** What resolving an object's cloud resource reads; all of it at hand, no request per object. */
export interface ShardKeyContext {
  namespace(name: string): NamespaceInfo | undefined;
  providerConfig(name: string): ProviderConfig | undefined;
  providers: ReadonlyMap<string, ProviderPlugin>;
  clusterId: string;
}

/**
 * A Bucket or Table, or the assigner's compact record of one: the rest of what the key reads
 * (`spec.name`, the external-name annotation, `metadata.uid`, `spec.providerConfigRef`) is read
 * where present.
 */
export interface ShardKeyObject {
  metadata: { name?: string | undefined; namespace?: string | undefined };
}

/**
 * What an object hashes by: the cloud resource it names by the engine's rules (its
 * ProviderConfig's target, its kind, its external name), else the object alone. The target is
 * resolved without credentials, as the admission webhook's one-object check resolves it, so the
 * key never needs a Secret and never changes when the engine records the target at creation.
 * No ProviderConfig, provider not installed, a target the provider cannot tell without
 * credentials, or no external name yet: the object alone.
 */
export function shardKeySourceOf(kind: ManagedKindName, resource: ShardKeyObject, context: ShardKeyContext): ShardKeySource {
  const namespace = resource.metadata.namespace ?? '';
  const source: ShardKeySource = { kind, namespace, name: resource.metadata.name ?? '' };
  const providerConfig = context.providerConfig(providerConfigFor(resource, context.namespace(namespace)).name);
  const plugin = providerConfig ? context.providers.get(providerConfig.spec.provider) : undefined;
  if (!providerConfig || !plugin) return source;
  const externalName = externalNameFor(resource, namingRulesFor(plugin, kind), context.clusterId);
  if (!externalName) return source;
  const targetKey = targetKeyOf(plugin, kind, providerConfig);
  return targetKey === null ? source : { ...source, cloudResourceKey: resourceKeyIn(targetKey, kind, externalName) };
}

/**
 * The target part of the key of every `kind` object of one ProviderConfig, kept per
 * ProviderConfig object: a full pass keys every object of the cluster, and they share a handful
 * of targets. The caches replace a ProviderConfig that changed with a new object (never change
 * one in place), so a kept part is never stale.
 */
const targetKeys = new WeakMap<ProviderConfig, WeakMap<ProviderPlugin, Map<ManagedKindName, string | null>>>();

/** `cloudTargetKey` of the target, or null when the provider's `targetOf` needs the credentials for this ProviderConfig. */
function targetKeyOf(plugin: ProviderPlugin, kind: ManagedKindName, providerConfig: ProviderConfig): string | null {
  let byPlugin = targetKeys.get(providerConfig);
  if (!byPlugin) targetKeys.set(providerConfig, (byPlugin = new WeakMap()));
  let byKind = byPlugin.get(plugin);
  if (!byKind) byPlugin.set(plugin, (byKind = new Map()));
  let key = byKind.get(kind);
  if (key === undefined) {
    try {
      key = cloudTargetKey(cloudTargetFor(plugin, kind, providerConfig));
    } catch {
      key = null;
    }
    byKind.set(kind, key);
  }
  return key;
}
