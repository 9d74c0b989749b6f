import {
  Annotations,
  DEFAULT_PROVIDER_CONFIG_NAME,
  MANAGED_BY,
  OwnerTags,
  defaultExternalName,
  type CloudProvider,
  type DeletionPolicy,
  type ManagedResource,
} from '@k8or/api';
import type { Observation } from '../provider/contract.js';

/** The metadata of a Namespace the engine reads (its annotations). */
export interface NamespaceInfo {
  metadata: { name?: string; annotations?: Record<string, string> };
}

const annotation = (resource: { metadata: { annotations?: Record<string, string> } }, key: string): string | undefined =>
  resource.metadata.annotations?.[key];

const asDeletionPolicy = (value: string | undefined): DeletionPolicy | undefined =>
  value === 'Delete' || value === 'Retain' ? value : undefined;

/**
 * Which deletion policy applies: the resource's annotation, else its
 * spec.deletionPolicy, else the namespace annotation, else the operator default.
 */
export function deletionPolicyFor(resource: ManagedResource, namespace: NamespaceInfo | undefined, operatorDefault: DeletionPolicy): DeletionPolicy {
  return (
    asDeletionPolicy(annotation(resource, Annotations.deletionPolicy)) ??
    resource.spec.deletionPolicy ??
    asDeletionPolicy(namespace ? annotation(namespace, Annotations.deletionPolicy) : undefined) ??
    operatorDefault
  );
}

/** The ProviderConfig a resource uses: spec.providerConfigRef, else the namespace annotation, else `default`. */
export function providerConfigNameFor(resource: ManagedResource, namespace: NamespaceInfo | undefined): string {
  return (
    resource.spec.providerConfigRef?.name ||
    (namespace ? annotation(namespace, Annotations.providerConfig) : undefined) ||
    DEFAULT_PROVIDER_CONFIG_NAME
  );
}

/** The external name: spec.name, else the external-name annotation, else the deterministic default. */
export function externalNameFor(resource: ManagedResource, provider: CloudProvider): string {
  return (
    resource.spec.name ||
    annotation(resource, Annotations.externalName) ||
    defaultExternalName(resource.kind, provider, resource.metadata.namespace ?? '', resource.metadata.name ?? '')
  );
}

/** The owner tags k8or writes on (and expects to find on) the cloud resource of this object. */
export function ownerTagsFor(resource: ManagedResource, clusterId: string): Record<string, string> {
  return {
    [OwnerTags.managedBy]: MANAGED_BY,
    [OwnerTags.cluster]: clusterId,
    [OwnerTags.namespace]: resource.metadata.namespace ?? '',
    [OwnerTags.name]: resource.metadata.name ?? '',
    [OwnerTags.kind]: resource.kind,
  };
}

export const isTrue = (resource: { metadata: { annotations?: Record<string, string> } }, key: string): boolean =>
  annotation(resource, key) === 'true';

/**
 * Whose the observed cloud resource is. `ours`: every owner tag matches.
 * Where the cloud has no tags (ownerTags undefined) only a create we recorded
 * as succeeded proves it. `adopt`: not provably ours, but the user asked to take
 * it over. `foreign`: leave it alone.
 */
export function ownershipOf(
  resource: ManagedResource,
  observation: Observation,
  expectedTags: Readonly<Record<string, string>>,
): 'ours' | 'adopt' | 'foreign' {
  const found = observation.ownerTags;
  const ours =
    found === undefined
      ? annotation(resource, Annotations.createSucceeded) !== undefined
      : Object.entries(expectedTags).every(([key, value]) => found[key] === value);
  if (ours) return 'ours';
  return isTrue(resource, Annotations.adopt) ? 'adopt' : 'foreign';
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go duration (`30s`, `5m`, `1h30m`, `1.5h`) to milliseconds; undefined when malformed or not positive. */
export function parseGoDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(match[1]) * (DURATION_UNITS[match[2] as string] ?? 0);
  }
  return total > 0 ? total : undefined;
}

/**
 * The resource's drift-check period: its `k8or.io/resync-period` annotation
 * when valid (never below `minMs`, the operator's floor), else the default.
 */
export function resyncPeriodFor(resource: ManagedResource, defaultMs: number, minMs = 0): number {
  const text = annotation(resource, Annotations.resyncPeriod);
  const asked = text !== undefined ? parseGoDuration(text) : undefined;
  return asked === undefined ? defaultMs : Math.max(asked, minMs);
}

/** `periodMs` spread by ±fraction, so resources created together do not resync together. */
export function withJitter(periodMs: number, fraction: number, random: () => number = Math.random): number {
  return Math.round(periodMs * (1 + fraction * (2 * random() - 1)));
}
