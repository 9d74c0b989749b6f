/** A named check; it passes when it returns true. A check that throws fails. */
export type HealthCheck = () => boolean;

/** The outcome of one set of checks. */
export interface HealthReport {
  ok: boolean;
  checks: Record<string, boolean>;
}

/**
 * Readiness and liveness checks of the operator process, served by
 * {@link startProbeServer} as `/readyz` and `/healthz`. Readiness says "send me
 * work" (informers synced, webhook certs loaded); liveness says "do not restart
 * me" and should fail only when the process cannot recover on its own.
 */
export class HealthChecks {
  private readonly readiness = new Map<string, HealthCheck>();
  private readonly liveness = new Map<string, HealthCheck>();

  addReadinessCheck(name: string, check: HealthCheck): void {
    addCheck(this.readiness, name, check);
  }

  addLivenessCheck(name: string, check: HealthCheck): void {
    addCheck(this.liveness, name, check);
  }

  /** Liveness: ok when every liveness check passes (and with none registered). */
  healthz(): HealthReport {
    return run(this.liveness);
  }

  /** Readiness: ok when every readiness check passes (and with none registered). */
  readyz(): HealthReport {
    return run(this.readiness);
  }
}

/** A readiness check that passes once every informer has synced its first list. */
export function informersSynced(...informers: { hasSynced(): boolean }[]): HealthCheck {
  return () => informers.every((informer) => informer.hasSynced());
}

function addCheck(checks: Map<string, HealthCheck>, name: string, check: HealthCheck): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new RangeError(`invalid check name ${JSON.stringify(name)}`);
  if (checks.has(name)) throw new Error(`a check named ${JSON.stringify(name)} already exists`);
  checks.set(name, check);
}

function run(checks: Map<string, HealthCheck>): HealthReport {
  const results: Record<string, boolean> = {};
  for (const [name, check] of checks) {
    try {
      results[name] = check() === true;
    } catch {
      results[name] = false;
    }
  }
  return { ok: Object.values(results).every(Boolean), checks: results };
}
