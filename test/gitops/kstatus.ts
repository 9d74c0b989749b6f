// The status kstatus computes for a custom resource, as sigs.k8s.io/cli-utils/pkg/kstatus/status
// (Compute: checkGenericProperties, then checkReadyCondition) defines it; Flux's `wait` and
// `healthChecks` read custom resources through it. There is no Go toolchain here, so this is a
// rule-for-rule transcription of that code path (no type-specific rules apply to group k8or.io).

export type KstatusStatus = 'InProgress' | 'Failed' | 'Current' | 'Terminating';

interface Conditioned {
  metadata?: { generation?: number; deletionTimestamp?: string; kind?: string };
  kind?: string;
  status?: { observedGeneration?: number; conditions?: ReadonlyArray<{ type: string; status: string; reason?: string; message?: string }> };
}

export function kstatusOf(object: Conditioned): { status: KstatusStatus; message: string } {
  // 1. Scheduled for deletion.
  if (object.metadata?.deletionTimestamp) return { status: 'Terminating', message: 'Resource scheduled for deletion' };
  // 2. A generation the controller has not observed (only when both fields are there).
  const generation = object.metadata?.generation;
  const observed = object.status?.observedGeneration;
  if (generation !== undefined && observed !== undefined && observed !== generation) {
    return { status: 'InProgress', message: `${object.kind ?? ''} generation is ${generation}, but latest observed generation is ${observed}` };
  }
  const conditions = object.status?.conditions ?? [];
  // 3. The standard conditions, in list order: the first Reconciling or Stalled that is True decides.
  for (const c of conditions) {
    if (c.type === 'Reconciling' && c.status === 'True') return { status: 'InProgress', message: c.message ?? '' };
    if (c.type === 'Stalled' && c.status === 'True') return { status: 'Failed', message: c.message ?? '' };
  }
  // 4. A Ready condition: True is Current, False or Unknown is InProgress.
  for (const c of conditions) {
    if (c.type !== 'Ready') continue;
    if (c.status === 'True') return { status: 'Current', message: 'Resource is Ready' };
    if (c.status === 'False' || c.status === 'Unknown') return { status: 'InProgress', message: c.message ?? '' };
  }
  // 5. Nothing known: assumed reconciled.
  return { status: 'Current', message: 'Resource is current' };
}
