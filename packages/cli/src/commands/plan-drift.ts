import { Annotations, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import { DEFAULT_RESYNC_FLOOR_MS, DEFAULT_RESYNC_PERIOD_MS, annotationIsTrue, formatGoDuration, planDriftChecks, providerConfigFor, resyncPeriodFor, shardLabel, type CheckedResource, type ProviderPlugin } from '@k8or/core';
import type { NamespaceInfo } from '@k8or/core';

/** What `k8or plan` says about one ProviderConfig's drift checks (on one shard, when the operator is sharded). */
export interface DriftCheckProjection {
  providerConfig: string;
  provider: string;
  /** Sharded: the shard whose objects these are ('' for objects not assigned to one yet). */
  shard?: string;
  /** Sharded: the part of the budget the shard plans with, 1/N for N shards holding objects. */
  budgetShare?: number;
  resources: number;
  /** Cloud calls an hour the drift checks make at the intervals in force. */
  projectedCallsPerHour: number;
  /** What spec.driftCheckBudget allows these resources (sharded: the shard's share); absent without one. */
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
 *
 * Where objects carry a shard label (`shard.k8or.io/<kind>`), the operator is sharded: each shard
 * plans its own objects with 1/N of every budget, so the projection is per ProviderConfig and
 * shard, N counting the shards that hold objects (objects not labelled yet are projected apart,
 * with the same share).
 */
export function projectDriftChecks(input: DriftProjectionInput): DriftCheckProjection[] {
  const groups = new Map<string, { config: string; shard: string | undefined; resources: CheckedResource[] }>();
  const configs = new Map<string, ProviderConfig>();
  const shardOf = (resource: ManagedResource): string | undefined => resource.metadata.labels?.[shardLabel(resource.kind as ManagedKindName)];
  const shards = new Set(input.resources.flatMap((r) => shardOf(r) ?? []));
  for (const resource of input.resources) {
    if (resource.metadata.deletionTimestamp || annotationIsTrue(resource, Annotations.paused)) continue;
    const providerConfig = input.providerConfigOf(providerConfigFor(resource, input.namespaceOf(resource.metadata.namespace ?? 'default')).name);
    // A resource whose ProviderConfig does not exist makes no cloud call.
    if (!providerConfig) continue;
    const config = providerConfig.metadata.name ?? '';
    configs.set(config, providerConfig);
    const shard = shards.size > 0 ? (shardOf(resource) ?? '') : undefined;
    const groupKey = JSON.stringify([config, shard ?? null]);
    const group = groups.get(groupKey) ?? { config, shard, resources: [] };
    group.resources.push({ key: `${resource.kind}/${resource.metadata.namespace ?? 'default'}/${resource.metadata.name ?? ''}`, kind: resource.kind as ManagedKindName, askedMs: resyncPeriodFor(resource, DEFAULT_RESYNC_PERIOD_MS, DEFAULT_RESYNC_FLOOR_MS) });
    groups.set(groupKey, group);
  }
  const share = shards.size > 0 ? 1 / shards.size : 1;
  const projections: DriftCheckProjection[] = [];
  for (const [, group] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const providerConfig = configs.get(group.config);
    if (!providerConfig) continue;
    const plan = planDriftChecks(providerConfig, input.providers.get(providerConfig.spec.provider), group.resources, share);
    projections.push({
      providerConfig: group.config,
      provider: providerConfig.spec.provider,
      ...(group.shard !== undefined ? { shard: group.shard, budgetShare: share } : {}),
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
    const field = `spec.driftCheckBudget.${p.budgetSource ?? 'callsPerHour'}`;
    const share = p.budgetShare !== undefined ? `1/${Math.round(1 / p.budgetShare)} of ${field}` : field;
    const budget = p.budgetCallsPerHour === undefined ? 'no budget' : `budget ${p.budgetCallsPerHour} (${share})`;
    const lengthened = p.lengthened > 0 ? `; ${p.lengthened} checked every ${p.budgetInterval ?? '?'} instead of what they ask` : '';
    const where = p.shard === undefined ? '' : p.shard === '' ? ', objects not on a shard yet' : `, shard ${p.shard}`;
    lines.push(`  ProviderConfig ${p.providerConfig}${where}: ${p.resources} resource${p.resources === 1 ? '' : 's'}, ${p.projectedCallsPerHour} cloud calls an hour, ${budget}${lengthened}`);
  }
  return lines;
}
