import { createHash } from 'node:crypto';
import { Annotations, type DriftMode, type DriftPolicy, type ManagedResource } from '@k8or/api';
import { configure } from 'safe-stable-stringify';
import type { FieldDiff } from '../provider/contract.js';

/** Keys in sorted order at every level, so equal values serialise (and hash) alike whatever their key order. */
const canonical = configure({ deterministic: true, circularValue: Error, bigint: false });

/** A digest of a value that equal values share whatever their key order. */
export function canonicalDigest(value: unknown): string {
  return createHash('sha256').update(canonical(value) ?? '').digest('hex').slice(0, 32);
}

/** Whether `path` names `field` or a setting `field` lies under (`spec.labels` covers `spec.labels.team` and `spec.lifecycle` covers `spec.lifecycle[0]`). */
export function pathCovers(path: string, field: string): boolean {
  return field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
}

/** The mode a resync applies to drift on `field`: the longest matching `fields[].path`, else `default`, else Repair. */
export function driftModeFor(policy: DriftPolicy | undefined, field: string): DriftMode {
  let best: { length: number; mode: DriftMode } | undefined;
  for (const entry of policy?.fields ?? []) {
    if (pathCovers(entry.path, field) && (!best || entry.path.length > best.length)) best = { length: entry.path.length, mode: entry.mode };
  }
  return best?.mode ?? policy?.default ?? 'Repair';
}

/** A resync's drift by the mode the policy gives each entry. */
export interface DriftByMode {
  repair: FieldDiff[];
  report: FieldDiff[];
  hold: FieldDiff[];
}

export function sortDrift(policy: DriftPolicy | undefined, drift: readonly FieldDiff[]): DriftByMode {
  const sorted: DriftByMode = { repair: [], report: [], hold: [] };
  for (const d of drift) {
    const mode = driftModeFor(policy, d.field);
    (mode === 'Hold' ? sorted.hold : mode === 'Report' ? sorted.report : sorted.repair).push(d);
  }
  return sorted;
}

/**
 * A stable digest of a set of differences: field, desired and actual values, compared as values
 * (object keys in canonical order, entries sorted by field), so the same drift always gives the
 * same digest and any change of a value, or of which fields differ, gives another.
 */
export function driftDigest(drift: readonly FieldDiff[]): string {
  const entries = [...drift]
    .sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
    .map((d) => ({ field: d.field, ...(d.desired !== undefined ? { desired: d.desired } : {}), ...(d.actual !== undefined ? { actual: d.actual } : {}) }));
  return canonicalDigest(entries);
}

/** A stable digest of the spec without `driftPolicy`: equal for specs that ask the cloud for the same. */
export function specDigest(spec: Readonly<Record<string, unknown>>): string {
  const { driftPolicy: _policy, ...rest } = spec;
  return canonicalDigest(rest);
}

/**
 * Whether this pass finds drift rather than a request: the spec was brought in line before
 * (observedGeneration current), or only the drift policy changed since (the applied spec's
 * digest still matches). A spec change is the user asking, and is applied whatever the policy.
 */
export function isResync(resource: ManagedResource): boolean {
  const status = resource.status;
  if (status?.observedGeneration === undefined) return false;
  if (status.observedGeneration === resource.metadata.generation) return true;
  return status.appliedSpecDigest !== undefined && status.appliedSpecDigest === specDigest(resource.spec as unknown as Record<string, unknown>);
}

/** Whether the object's `k8or.io/approve-drift` annotation approves exactly this held drift. */
export function heldDriftApproved(resource: ManagedResource, held: readonly FieldDiff[]): boolean {
  const approval = resource.metadata.annotations?.[Annotations.approveDrift]?.trim();
  return held.length > 0 && approval !== undefined && approval === driftDigest(held);
}
