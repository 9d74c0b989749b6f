import { isDeepStrictEqual } from 'node:util';
import type { Condition, ManagedStatus } from '@k8or/api';

/** A condition as the engine decides it; lastTransitionTime is filled in by `mergeConditions`. */
export interface DesiredCondition {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
}

/**
 * The conditions after applying `desired` to `current`: a condition keeps its
 * lastTransitionTime unless its status changes (metav1.Condition semantics);
 * conditions of other types are kept as they are.
 */
export function mergeConditions(
  current: readonly Condition[] | undefined,
  desired: readonly DesiredCondition[],
  observedGeneration: number | undefined,
  now: string,
): Condition[] {
  const result = [...(current ?? [])];
  for (const wanted of desired) {
    const index = result.findIndex((c) => c.type === wanted.type);
    const previous = index >= 0 ? result[index] : undefined;
    const next: Condition = {
      type: wanted.type,
      status: wanted.status,
      reason: wanted.reason,
      message: wanted.message,
      lastTransitionTime: previous && previous.status === wanted.status ? previous.lastTransitionTime : now,
      ...(observedGeneration !== undefined ? { observedGeneration } : {}),
    };
    if (index >= 0) result[index] = next;
    else result.push(next);
  }
  return result;
}

/** The conditions without those of the given types. */
export function withoutConditions(conditions: readonly Condition[], types: readonly string[]): Condition[] {
  return conditions.filter((c) => !types.includes(c.type));
}

export function findCondition(status: ManagedStatus | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** True when writing `next` would change nothing a user can see (so the engine skips the write). */
export function statusEqual(current: ManagedStatus | undefined, next: ManagedStatus): boolean {
  return isDeepStrictEqual(normalise(current ?? {}), normalise(next));
}

function normalise(status: ManagedStatus): unknown {
  const atProvider = status.atProvider ? Object.fromEntries(Object.entries(status.atProvider).filter(([, v]) => v !== undefined)) : undefined;
  return {
    // By code unit: localeCompare would load ICU's collation data (2 MiB resident) to order a few ASCII names.
    conditions: [...(status.conditions ?? [])].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)),
    observedGeneration: status.observedGeneration,
    provider: status.provider,
    atProvider: atProvider && Object.keys(atProvider).length > 0 ? atProvider : undefined,
    drift: status.drift && status.drift.length > 0 ? status.drift : undefined,
    target: status.target,
    identity: status.identity,
    driftCount: status.driftCount,
    heldDriftDigest: status.heldDriftDigest,
    driftCheckInterval: status.driftCheckInterval,
    lastHandledReconcileAt: status.lastHandledReconcileAt,
    appliedSpecDigest: status.appliedSpecDigest,
    appliedProtection: status.appliedProtection,
  };
}
