import { createHash } from 'node:crypto';
import { Annotations, ConditionTypes, FINALIZER, type ManagedResource } from '@k8or/api';
import { annotationIsTrue } from './read.js';

/**
 * When each resource is checked for drift. Every check of a resource falls on
 * its slot: the instants `phase + k × interval` on the wall clock, where the
 * phase is a fixed fraction of the interval taken from the object's uid. The
 * slots of many resources are spread evenly over the interval, so checks never
 * come in bursts, and a restarted (or newly elected) operator finds every
 * resource's schedule where the last one left it, without writing anything.
 */

/** The phase of a uid, a fraction in [0, 1): the first 48 bits of its SHA-256. */
export function phaseFraction(uid: string): number {
  return createHash('sha256').update(uid).digest().readUIntBE(0, 6) / 2 ** 48;
}

/** The first slot of `uid` strictly after `nowMs` (epoch milliseconds) for checks every `intervalMs`. */
export function nextCheckAt(uid: string, intervalMs: number, nowMs: number): number {
  const offset = Math.floor(phaseFraction(uid) * intervalMs);
  return (Math.floor((nowMs - offset) / intervalMs) + 1) * intervalMs + offset;
}

/** Milliseconds from `nowMs` to the resource's next slot: in (0, intervalMs]. */
export function delayUntilNextCheck(uid: string, intervalMs: number, nowMs: number): number {
  return nextCheckAt(uid, intervalMs, nowMs) - nowMs;
}

/**
 * Whether an object the operator finds when it starts can wait for its slot:
 * the cloud was last brought in line with its current generation (top-level
 * and conditions' observedGeneration equal its generation, Ready and Synced
 * True), it is not being deleted, it carries the finalizer, and nothing asks
 * for a look now (a `k8or.io/reconcile-requested-at` not yet handled, a pause
 * not yet recorded). Anything else is reconciled at once.
 */
export function awaitsItsSlot(resource: ManagedResource): boolean {
  const { metadata, status } = resource;
  if (metadata.deletionTimestamp || !metadata.uid || !metadata.finalizers?.includes(FINALIZER)) return false;
  if (status?.observedGeneration === undefined || status.observedGeneration !== metadata.generation) return false;
  for (const type of [ConditionTypes.Ready, ConditionTypes.Synced]) {
    const condition = status.conditions?.find((c) => c.type === type);
    if (condition?.status !== 'True') return false;
    if (condition.observedGeneration !== undefined && condition.observedGeneration !== metadata.generation) return false;
  }
  const requested = metadata.annotations?.[Annotations.reconcileRequestedAt];
  if (requested !== undefined && requested !== status.lastHandledReconcileAt) return false;
  if (annotationIsTrue(resource, Annotations.paused)) return false;
  return true;
}

/**
 * How long after the operator starts (or first sees it) the object is first
 * reconciled: 0 unless it `awaitsItsSlot`, else until its next slot.
 */
export function firstCheckDelay(resource: ManagedResource, intervalMs: number, nowMs: number): number {
  if (!awaitsItsSlot(resource)) return 0;
  return delayUntilNextCheck(resource.metadata.uid ?? '', intervalMs, nowMs);
}
