/** A token bucket's numbers, as a provider declares them or `spec.rateLimits` sets them. */
export interface RateLimitNumbers {
  requestsPerSecond: number;
  burst: number;
}

/** How a series of calls, timed where they arrived (a backend's log), kept to a rate limit. */
export interface CallRateReport {
  calls: number;
  /** First to last arrival. */
  spanSeconds: number;
  /** Calls after the first `burst`, per second of the span: what the bucket sustains. */
  sustainedPerSecond: number;
  /** The most calls in any window of one second. */
  maxInOneSecond: number;
  /** The window where the calls came closest to (or furthest over) what the limit allows. */
  worstWindow: { calls: number; seconds: number; allowed: number };
  /** Every window kept to `burst + requestsPerSecond × (T + latencyAllowanceSeconds)`. */
  withinLimit: boolean;
}

/**
 * Checks call arrival times (milliseconds, any clock) against a token bucket:
 * over every window of T seconds, at most `burst + requestsPerSecond × T`
 * calls may arrive. Calls reach a backend some time after they took their
 * token, and timers that fire late fire together, so a backend may see up to
 * `requestsPerSecond × latencyAllowanceSeconds` more in a window than the
 * bucket let go: give the allowance that the measurement point needs.
 */
export function callRateReport(arrivalsMs: readonly number[], limit: RateLimitNumbers, latencyAllowanceSeconds = 0): CallRateReport {
  const times = [...arrivalsMs].sort((a, b) => a - b);
  const spanSeconds = times.length > 1 ? (times.at(-1)! - times[0]!) / 1000 : 0;
  let maxInOneSecond = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while (times[j]! - times[i]! > 1000) i += 1;
    maxInOneSecond = Math.max(maxInOneSecond, j - i + 1);
  }
  let worstWindow = { calls: 0, seconds: 0, allowed: Number.POSITIVE_INFINITY };
  for (let i = 0; i < times.length; i += 1) {
    for (let j = i; j < times.length; j += 1) {
      const seconds = (times[j]! - times[i]!) / 1000;
      const allowed = limit.burst + limit.requestsPerSecond * (seconds + latencyAllowanceSeconds);
      if (j - i + 1 - allowed > worstWindow.calls - worstWindow.allowed) worstWindow = { calls: j - i + 1, seconds, allowed };
    }
  }
  return {
    calls: times.length,
    spanSeconds,
    sustainedPerSecond: spanSeconds > 0 ? Math.max(0, times.length - limit.burst) / spanSeconds : 0,
    maxInOneSecond,
    worstWindow,
    withinLimit: worstWindow.calls <= worstWindow.allowed,
  };
}
