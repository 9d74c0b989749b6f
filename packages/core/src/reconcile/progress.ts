import { ConditionTypes, type Condition } from '@k8or/api';
import type { DesiredCondition } from './conditions.js';
import { Reasons, type Reason } from './reasons.js';

/**
 * What a reason says about the operator's progress, as kstatus (sigs.k8s.io/cli-utils) and GitOps
 * tools read it:
 * - `working`: the operator goes on by itself (creating, deleting, a change the cloud has not shown
 *   yet, a ProviderConfig or Secret it waits for: GitOps tools apply objects in any order);
 * - `stalled`: nothing changes until a user acts (a name someone else owns, a moved target, an
 *   invalid ProviderConfig, a protection or a deletion block, a setting the cloud cannot take);
 * - `call`: a failed cloud call, working while it is retried, stalled when the error is terminal;
 * - `settled`: the outcome of a pass that asks nothing more (success, drift the policy reports or
 *   holds for approval, paused), and the reasons only Events carry.
 * Every reason is listed, so a new one must be placed.
 */
const progressByReason: Record<Reason, 'working' | 'stalled' | 'call' | 'settled'> = {
  [Reasons.Available]: 'settled',
  [Reasons.Creating]: 'working',
  [Reasons.Deleting]: 'working',
  [Reasons.ExternalResourceNotFound]: 'stalled',
  [Reasons.Unavailable]: 'working',
  [Reasons.ReconcileSuccess]: 'settled',
  [Reasons.Observed]: 'settled',
  [Reasons.Paused]: 'settled',
  [Reasons.NotOwned]: 'stalled',
  [Reasons.ExternalResourceReplaced]: 'stalled',
  [Reasons.TargetChanged]: 'stalled',
  [Reasons.DuplicateCloudResource]: 'stalled',
  [Reasons.ProtectionHeld]: 'stalled',
  [Reasons.ChangesPending]: 'working',
  [Reasons.DeletionBlocked]: 'stalled',
  [Reasons.IdentityUnavailable]: 'stalled',
  [Reasons.DriftDetected]: 'settled',
  [Reasons.DriftHeld]: 'settled',
  [Reasons.DriftReported]: 'settled',
  [Reasons.ProviderConfigNotFound]: 'working',
  [Reasons.ProviderNotInstalled]: 'stalled',
  [Reasons.KindNotSupported]: 'stalled',
  [Reasons.CredentialsSecretNotFound]: 'working',
  [Reasons.ImmutableFieldChanged]: 'stalled',
  [Reasons.InvalidProviderSettings]: 'stalled',
  [Reasons.SettingsNotApplied]: 'stalled',
  [Reasons.CannotConnectToProvider]: 'call',
  [Reasons.CannotObserveExternalResource]: 'call',
  [Reasons.CannotCreateExternalResource]: 'call',
  [Reasons.CannotUpdateExternalResource]: 'call',
  [Reasons.CannotDeleteExternalResource]: 'call',
  [Reasons.CannotWriteOutputs]: 'stalled',
  [Reasons.CreatedExternalResource]: 'settled',
  [Reasons.RecoveredExternalResource]: 'settled',
  [Reasons.FinishedInterruptedCreate]: 'settled',
  [Reasons.AdoptedExternalResource]: 'settled',
  [Reasons.UpdatedExternalResource]: 'settled',
  [Reasons.RepairedDrift]: 'settled',
  [Reasons.RepairedApprovedDrift]: 'settled',
  [Reasons.DeletedExternalResource]: 'settled',
  [Reasons.RetainedExternalResource]: 'settled',
  [Reasons.DriftCheckIntervalLengthened]: 'settled',
};

type Progress = 'working' | 'stalled' | 'settled';

function progressOf(reason: string, retrying: boolean): Progress {
  const kind = (progressByReason as Readonly<Record<string, 'working' | 'stalled' | 'call' | 'settled'>>)[reason] ?? 'working';
  if (kind === 'call') return retrying ? 'working' : 'stalled';
  return kind;
}

/** What one pass found, as the progress conditions are decided from it. */
export interface PassState {
  /** Ready as it stands after this pass (absent: never written yet). */
  ready: Pick<Condition, 'status' | 'reason' | 'message'> | undefined;
  /** Synced as this pass writes it. */
  synced: Pick<Condition, 'status' | 'reason' | 'message'>;
  /** The object carries a deletionTimestamp. */
  deleting: boolean;
  /** The pass ended on a failed call that is retried (backoff or Retry-After). */
  retrying: boolean;
}

/**
 * The kstatus conditions for a pass, abnormal-true as kstatus and Flux write them: `Stalled` when
 * Synced (else Ready) names a reason only a user resolves; otherwise `Reconciling` while the
 * operator works toward the spec (Ready not True yet, a change on its way, a retried call, a
 * deletion); otherwise neither. Paused is neither: nothing is being worked on, and nothing failed.
 * Returns the conditions to set and the types to remove.
 */
export function progressConditions(pass: PassState): { set: DesiredCondition[]; remove: string[] } {
  const settle = { set: [], remove: [ConditionTypes.Reconciling, ConditionTypes.Stalled] };
  if (pass.synced.reason === Reasons.Paused) return settle;
  const syncedProgress = pass.synced.status === 'True' ? 'settled' : progressOf(pass.synced.reason, pass.retrying);
  // Ready not True is never settled: the resource is not usable yet, or something stops it.
  const readyProgress = pass.ready?.status === 'True' ? 'settled' : pass.ready && progressOf(pass.ready.reason, pass.retrying) === 'stalled' ? 'stalled' : 'working';
  if (syncedProgress === 'stalled' || (syncedProgress === 'settled' && readyProgress === 'stalled')) {
    const cause = syncedProgress === 'stalled' ? pass.synced : (pass.ready ?? pass.synced);
    return {
      set: [{ type: ConditionTypes.Stalled, status: 'True', reason: cause.reason, message: cause.message }],
      remove: [ConditionTypes.Reconciling],
    };
  }
  if (syncedProgress === 'working' || readyProgress !== 'settled' || pass.deleting) {
    const cause =
      syncedProgress === 'working' ? pass.synced : pass.ready && pass.ready.status !== 'True' ? pass.ready : { reason: Reasons.Deleting, message: 'Deleting the cloud resource.' };
    return {
      set: [{ type: ConditionTypes.Reconciling, status: 'True', reason: cause.reason, message: cause.message }],
      remove: [ConditionTypes.Stalled],
    };
  }
  return settle;
}
