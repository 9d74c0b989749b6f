/** The fields of a Lease's spec that leader election and shard leases use (client-go's LeaderElectionRecord). */
export interface LeaseRecord {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/**
 * What one observer knows about one Lease, and the single rule for its expiry (client-go's):
 * a held lease has expired once its record has not changed for `leaseDurationSeconds` by the
 * observer's own clock, counted from when the observer last saw it change. The timestamps
 * written in the record are never compared with the local clock, so skew between machines does
 * not matter; the price is that a new observer waits one full duration before it calls a
 * silent holder expired.
 */
export class LeaseObservation {
  #record: LeaseRecord | undefined;
  #raw = '';
  /** performance.now() when the record last changed. */
  #changedAt = 0;

  /** Records what was read; true when the record differs from the one seen before. */
  observe(record: LeaseRecord, now = performance.now()): boolean {
    const raw = JSON.stringify([record.holderIdentity, record.leaseDurationSeconds, record.acquireTime, record.renewTime, record.leaseTransitions]);
    if (raw === this.#raw) return false;
    this.#raw = raw;
    this.#record = record;
    this.#changedAt = now;
    return true;
  }

  /** The record last seen, undefined before the first observation. */
  get record(): LeaseRecord | undefined {
    return this.#record;
  }

  /** The holder last seen, undefined when the lease is free (or never seen). */
  get holder(): string | undefined {
    return this.#record?.holderIdentity || undefined;
  }

  /** How long, by this observer's clock, the record has stayed as it is; 0 before the first observation. */
  unchangedFor(now = performance.now()): number {
    return this.#record ? now - this.#changedAt : 0;
  }

  /** The record seen has not expired yet by this observer's clock; `defaultDurationMs` when the record states none. */
  unexpired(defaultDurationMs: number, now = performance.now()): boolean {
    if (!this.#record) return false;
    const durationMs = this.#record.leaseDurationSeconds !== undefined ? this.#record.leaseDurationSeconds * 1000 : defaultDurationMs;
    return this.#changedAt + durationMs > now;
  }
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
