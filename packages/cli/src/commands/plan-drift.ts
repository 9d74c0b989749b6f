import { Annotations, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import { DEFAULT_RESYNC_FLOOR_MS, DEFAULT_RESYNC_PERIOD_MS, annotationIsTrue, formatGoDuration, planDriftChecks, providerConfigFor, resyncPeriodFor, type CheckedResource, type ProviderPlugin } from '@k8or/core';
import type { NamespaceInfo } from '@k8or/core';

/** What `k8or plan` says about one ProviderConfig's drift checks. */
export interface DriftCheckProjection {
  providerConfig: string;
  provider: string;
  resources: number;
  /** Cloud calls an hour the drift checks make at the intervals in force. */
  projectedCallsPerHour: number;
  /** What spec.driftCheckBudget allows; absent without one. */
  budgetCallsPerHour?: number;
  budgetSource?: 'callsPerHour' | 'rateLimitPercent';
  /** The shortest interval the budget allows (a Go duration), when it lengthens any. */
  budgetInterval?: string;
  /** Resources checked less often than they ask for. */
  lengthened: number;
}

export interface DriftProjectionInput {
  /** The Buckets and Tables whose checks count: the cluster's stored objects with the files' in their place. */
  resources: readonly ManagedResource[];
  namespaceOf: (name: string) => NamespaceInfo | undefined;
  providerConfigOf: (name: string) => ProviderConfig | undefined;
  providers: ReadonlyMap<string, ProviderPlugin>;
}

/**
 * The drift-check calls an hour per ProviderConfig, as the operator would schedule them
 * (`planDriftChecks`, the engine's own decision), at its default interval of 1 h where a resource
 * sets no `k8or.io/resync-period`. A resource being deleted or paused makes no checks.
 */
export function projectDriftChecks(input: DriftProjectionInput): DriftCheckProjection[] {
  const byConfig = new Map<string, CheckedResource[]>();
  const configs = new Map<string, ProviderConfig>();
  for (const resource of input.resources) {
    if (resource.metadata.deletionTimestamp || annotationIsTrue(resource, Annotations.paused)) continue;
    const providerConfig = input.providerConfigOf(providerConfigFor(resource, input.namespaceOf(resource.metadata.namespace ?? 'default')).name);
    // A resource whose ProviderConfig does not exist makes no cloud call.
    if (!providerConfig) continue;
    const config = providerConfig.metadata.name ?? '';
    configs.set(config, providerConfig);
    const list = byConfig.get(config) ?? [];
    list.push({ key: `${resource.kind}/${resource.metadata.namespace ?? 'default'}/${resource.metadata.name ?? ''}`, kind: resource.kind as ManagedKindName, askedMs: resyncPeriodFor(resource, DEFAULT_RESYNC_PERIOD_MS, DEFAULT_RESYNC_FLOOR_MS) });
    byConfig.set(config, list);
  }
  const projections: DriftCheckProjection[] = [];
  for (const [name, resources] of [...byConfig].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const providerConfig = configs.get(name);
    if (!providerConfig) continue;
    const plan = planDriftChecks(providerConfig, input.providers.get(providerConfig.spec.provider), resources);
    projections.push({
      providerConfig: name,
      provider: providerConfig.spec.provider,
      resources: plan.resources,
      projectedCallsPerHour: Math.round(plan.projectedCallsPerHour),
      ...(plan.budgetCallsPerHour !== undefined ? { budgetCallsPerHour: Math.round(plan.budgetCallsPerHour) } : {}),
      ...(plan.budgetSource ? { budgetSource: plan.budgetSource } : {}),
      ...(plan.budgetIntervalMs > 0 ? { budgetInterval: formatGoDuration(plan.budgetIntervalMs) } : {}),
      lengthened: plan.lengthened,
    });
  }
  return projections;
}

/** The lines `k8or plan` prints for the projections. */
export function humanDriftChecks(projections: readonly DriftCheckProjection[], scope: string): string[] {
  if (projections.length === 0) return [];
  const lines = [`Drift checks (${scope}; 1h where no k8or.io/resync-period is set, the operator's default):`];
  for (const p of projections) {
    const budget = p.budgetCallsPerHour === undefined ? 'no budget' : `budget ${p.budgetCallsPerHour} (spec.driftCheckBudget.${p.budgetSource ?? 'callsPerHour'})`;
    const lengthened = p.lengthened > 0 ? `; ${p.lengthened} checked every ${p.budgetInterval ?? '?'} instead of what they ask` : '';
    lines.push(`  ProviderConfig ${p.providerConfig}: ${p.resources} resource${p.resources === 1 ? '' : 's'}, ${p.projectedCallsPerHour} cloud calls an hour, ${budget}${lengthened}`);
  }
  return lines;
}
