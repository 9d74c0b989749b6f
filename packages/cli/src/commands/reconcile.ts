import { Annotations, ConditionTypes, KINDS, type ManagedResource } from '@k8or/api';
import { ManagedObjects } from '../cluster/managed-objects.js';
import { objectRefOrUsage } from '../cluster/object-ref.js';

export interface ReconcileOptions {
  /** `KIND/NAME`. */
  target: string;
  namespace?: string | undefined;
  kubeconfig?: string | undefined;
  /** Wait up to this long for the operator to handle the request; 0: do not wait. */
  waitMs?: number;
  now?: () => Date;
}

interface Output {
  write(text: string): unknown;
}

const POLL_MS = 500;

/**
 * `k8or reconcile KIND/NAME`: sets `k8or.io/reconcile-requested-at` to the current time, which
 * makes the operator reconcile the object now (a drift check included) and echo the value in
 * `status.lastHandledReconcileAt`. With a wait, waits for that echo and prints Synced.
 * Exit 0 requested (and handled, when waiting), 1 a failure or the wait ran out, 2 usage.
 */
export async function reconcileCommand(options: ReconcileOptions, out: Output = process.stdout, err: Output = process.stderr): Promise<number> {
  const ref = objectRefOrUsage(options.target, err);
  if (!ref) return 2;
  const objects = ManagedObjects.from(options.kubeconfig, options.namespace);
  const what = `${KINDS[ref.kind].singular} ${objects.namespace}/${ref.name}`;
  try {
    if (!(await objects.get(ref))) {
      err.write(`k8or: ${what} not found\n`);
      return 1;
    }
    const requested = (options.now ?? (() => new Date()))().toISOString();
    await objects.annotate(ref, { [Annotations.reconcileRequestedAt]: requested });
    out.write(`Requested a reconcile of ${what} (${Annotations.reconcileRequestedAt}=${requested}).\n`);
    if (!options.waitMs) return 0;
    const deadline = Date.now() + options.waitMs;
    for (;;) {
      const object = await objects.get(ref);
      if (object?.status?.lastHandledReconcileAt === requested) {
        out.write(`${describeOutcome(object)}\n`);
        return 0;
      }
      if (Date.now() >= deadline) {
        err.write(`k8or: the operator did not handle the request within ${Math.round(options.waitMs / 1000)} s (is it running?)\n`);
        return 1;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } catch (error) {
    err.write(`k8or: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    objects.close();
  }
}

/** `Synced True (ReconcileSuccess): ...; 0 settings differ`. */
function describeOutcome(object: ManagedResource): string {
  const synced = object.status?.conditions?.find((c) => c.type === ConditionTypes.Synced);
  const count = object.status?.driftCount ?? 0;
  return `Synced ${synced?.status ?? 'Unknown'} (${synced?.reason ?? 'no reason yet'}): ${synced?.message ?? ''} ${count} setting${count === 1 ? '' : 's'} differ${count === 1 ? 's' : ''}.`;
}
