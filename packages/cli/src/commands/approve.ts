import { Annotations, KINDS, type DriftEntry } from '@k8or/api';
import { isConflict } from '@k8or/core';
import { ManagedObjects } from '../cluster/managed-objects.js';
import { objectRefOrUsage } from '../cluster/object-ref.js';

export interface ApproveOptions {
  /** `KIND/NAME`. */
  target: string;
  namespace?: string | undefined;
  kubeconfig?: string | undefined;
}

interface Output {
  write(text: string): unknown;
}

/**
 * `k8or approve KIND/NAME`: approves the drift the object holds under driftPolicy Hold, by
 * writing the digest from its status into `k8or.io/approve-drift`, and prints the difference it
 * approves. The operator repairs exactly that difference; one that changed since is not written.
 * Exit 0 approved, 1 nothing to approve or a failure, 2 usage.
 */
export async function approveCommand(options: ApproveOptions, out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  const ref = objectRefOrUsage(options.target, err);
  if (!ref) return 2;
  const objects = ManagedObjects.from(options.kubeconfig, options.namespace);
  const what = `${KINDS[ref.kind].singular} ${objects.namespace}/${ref.name}`;
  try {
    const object = await objects.get(ref);
    if (!object) {
      err.write(`k8or: ${what} not found\n`);
      return 1;
    }
    const digest = object.status?.heldDriftDigest;
    const held = (object.status?.drift ?? []).filter((d) => d.mode === 'Hold');
    if (!digest || held.length === 0) {
      err.write(`k8or: ${what} holds no drift for approval (status.heldDriftDigest is empty)\n`);
      return 1;
    }
    // Only on the object as read: the difference printed is the one approved.
    await objects.annotate(ref, { [Annotations.approveDrift]: digest }, object.metadata.resourceVersion);
    out.write(`Approved the drift held on ${what} (digest ${digest}):\n`);
    for (const entry of held) out.write(`  ${describeEntry(entry)}\n`);
    out.write('The operator writes the spec\'s values back at its next reconcile. If the cloud changes again first, nothing is written and a new approval is needed.\n');
    return 0;
  } catch (error) {
    if (isConflict(error)) {
      err.write(`k8or: ${what} changed while it was read; run k8or approve again to see the difference now held\n`);
      return 1;
    }
    err.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    objects.close();
  }
}

/** `spec.labels: the spec has {"team":"media"}, the cloud has {"team":"ops"}`. */
function describeEntry(entry: DriftEntry): string {
  const value = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));
  return `${entry.field}: the spec has ${value(entry.desired)}, the cloud has ${value(entry.actual)}`;
}
