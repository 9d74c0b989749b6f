import { setTimeout as sleep } from 'node:timers/promises';
import { seededRandom } from './prng.js';

/** Which calls fail, and how. Shares are of all calls, 0 to 1, drawn independently per call. */
export interface FaultPlan {
  /** Share answered with the cloud's own throttling error (S3 SlowDown 503, DynamoDB ThrottlingException 400, GCS 429, Azure ServerBusy 503, Bigtable RESOURCE_EXHAUSTED). */
  throttle?: number;
  /** Share answered with one of the cloud's own 5xx errors (Bigtable: UNAVAILABLE or INTERNAL). */
  serverError?: number;
  /** Share held without an answer for `stallMs`, or until the client gives up. */
  stall?: number;
  /** How long a stalled call is held. Default 60 s: longer than any reconcile deadline a test sets. */
  stallMs?: number;
  /**
   * Of the stalled calls, the share that reaches the backend before the stall: the write is done and
   * only its answer is late (or never comes, when the client gives up). The rest reach the backend only
   * if the client still waits when the stall ends. Default 0.5.
   */
  stallAfterForward?: number;
  /**
   * Faults for the next calls, in order, before the shares take over: `['stall']` makes sure the
   * first call after `setFaults` stalls, whatever the draws. `'pass'` forwards one call.
   */
  script?: ReadonlyArray<'throttle' | 'serverError' | 'stall' | 'pass'>;
  /** HTTP only: throttling answers carry `Retry-After: N` (seconds), as some services send it. Absent: no header. */
  retryAfterSeconds?: number;
}

/** What a proxy does with one call. */
export type FaultDraw = { fault: 'throttle'; retryAfterSeconds?: number } | { fault: 'serverError' } | { fault: 'stall'; stallMs: number; forwardFirst: boolean } | { fault: undefined };

export interface FaultDraws {
  readonly seed: number;
  /** The next call's fate: the script's next entry, else a draw against the plan's shares. */
  next(): FaultDraw;
  /** One of `choices`, drawn from the same seeded sequence (which throttle or 5xx answer). */
  pick<T>(choices: ReadonlyArray<T>): T;
  /** Replaces the plan and its script from the next call on (`{}` turns faults off). */
  setFaults(plan: FaultPlan): void;
}

/**
 * The seeded draws every fault proxy (HTTP and gRPC) makes per call, in one place: a seed replays
 * the same sequence of fates for calls in the same arrival order.
 */
export function faultDraws(initial: FaultPlan, seed: number = Math.floor(Math.random() * 2 ** 32)): FaultDraws {
  const random = seededRandom(seed);
  let plan = initial;
  let script = [...(initial.script ?? [])];
  return {
    seed,
    next: () => {
      const scripted = script.shift();
      const draw = scripted === undefined ? random() : 0;
      // A scripted fault is a share of 1 for that one call.
      const share = (fault: 'throttle' | 'serverError' | 'stall'): number => (scripted === undefined ? (plan[fault] ?? 0) : scripted === fault ? 1 : 0);
      const throttle = share('throttle');
      const serverError = share('serverError');
      if (draw < throttle) return { fault: 'throttle', ...(plan.retryAfterSeconds !== undefined ? { retryAfterSeconds: plan.retryAfterSeconds } : {}) };
      if (draw < throttle + serverError) return { fault: 'serverError' };
      if (draw < throttle + serverError + share('stall')) return { fault: 'stall', stallMs: plan.stallMs ?? 60_000, forwardFirst: random() < (plan.stallAfterForward ?? 0.5) };
      return { fault: undefined };
    },
    pick: <T>(choices: ReadonlyArray<T>): T => choices[Math.floor(random() * choices.length)] as T,
    setFaults: (next) => {
      plan = next;
      script = [...(next.script ?? [])];
    },
  };
}

/**
 * Holds a call for `ms` while its client waits. Resolves 'elapsed' when the time ran out with the
 * client still there, 'left' when the client closed first, 'stopped' when `stopping` aborted.
 */
export async function holdWhileOpen(
  call: { readonly closed?: boolean; once(event: 'close', listener: () => void): unknown; off(event: 'close', listener: () => void): unknown },
  ms: number,
  stopping: AbortSignal,
): Promise<'elapsed' | 'left' | 'stopped'> {
  if (call.closed) return 'left';
  const left = new AbortController();
  const onClose = (): void => left.abort();
  call.once('close', onClose);
  try {
    await sleep(ms, undefined, { signal: AbortSignal.any([left.signal, stopping]) });
    return 'elapsed';
  } catch {
    return left.signal.aborted ? 'left' : 'stopped';
  } finally {
    call.off('close', onClose);
  }
}
