import type { KubeAccess } from '../kube/access.js';
import { KubeApiError, requestJson, resourcePath } from '../informer/request.js';
import { LeaseObservation, microTime, type LeaseRecord } from '../leader/lease-observation.js';
import { ADOPTED_BY_ANNOTATION, SHARDS_COUNTED_ANNOTATION, SHARD_LEASE_LABEL } from './labels.js';

/** Who may hold objects, as one reader saw the ring's Leases. */
export interface ShardMembership {
  /** Held by the shard itself and not expired: may be given objects. Sorted. */
  live: string[];
  /**
   * Not live, yet maybe still working: its Lease was taken by another name or deleted, and what
   * the shard itself last wrote has not expired. Give it nothing, and take nothing from it
   * until it joins `live` or drops out. Sorted.
   */
  expiring: string[];
  /**
   * Dead shards whose Lease the leader holds with `ADOPTED_BY_ANNOTATION`, while that record has not
   * expired: their objects may be worked by their adopters. Absent: none.
   */
  adoptions?: ShardAdoption[];
  /** Every shard whose Lease was listed, sorted: a dead one among them is adopted when its Lease is taken. Absent: not known. */
  leased?: string[];
  /**
   * Live shards whose Lease record has not changed for `SILENT_SHARE` of its duration (a shard
   * renews every 2 s): likely dead, but live until their record expires, and nothing of theirs
   * moves before. Sorted; absent: none.
   */
  silent?: string[];
}

/** The share of a Lease's duration without a renewal after which its live shard counts as silent. */
export const SILENT_SHARE = 1 / 3;

/** A dead shard whose objects live shards work without relabelling them (`ADOPTED_BY_ANNOTATION`). */
export interface ShardAdoption {
  /** The dead shard: the label its objects carry. */
  shard: string;
  /** The shards that adopt them, sorted: each object goes to the one its key falls to on their ring. */
  adopters: string[];
  /**
   * Until when (`performance.now()`) an adopter may work them, by this reader's clock: two thirds of
   * the Lease duration after the earliest moment the record can have been written (when the read
   * before the one that saw it change was sent), so an adopter has stopped before anyone may call
   * the record expired and the dead shard may hold its Lease again, however slow the reads. A
   * record this reader has not seen change (a reader just started) is not workable yet: it may be
   * almost expired.
   */
  workableUntil: number;
}

/** The share of the Lease duration, from the leader's last write seen, for which an adopter may work. */
const ADOPTER_WINDOW = 2 / 3;

/** A shard is dead, so its objects may move at once, when it is neither live nor expiring. */
export function isDeadShard(membership: ShardMembership, shard: string): boolean {
  return !membership.live.includes(shard) && !membership.expiring.includes(shard);
}

export interface ShardLeaseReaderOptions {
  kubeConfig: KubeAccess;
  namespace: string;
  ring: string;
  /** Expiry for a record that states no duration; default 15 s, the shard Lease's own default. */
  defaultLeaseDurationMs?: number;
  /** Per list request; default 10 s. */
  timeoutMs?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: LeaseRecord;
}

interface LeaseList {
  items?: Lease[];
}

/** What the reader remembers of one shard's Lease. */
interface Seen {
  /** The Lease as last listed. */
  lease: LeaseObservation;
  /** Only the records the shard wrote itself: the fence runs from the last of them. */
  own: LeaseObservation;
  /** The shard released its Lease since it last held it: it has stopped. */
  released: boolean;
  /** The Lease as listed, for a compare-and-swap takeover. */
  raw: Lease;
  /** Its record last changed after this moment (the send of the read before the one that saw the change); undefined: not seen to change. */
  changedAfter: number | undefined;
}

/**
 * Lists the ring's shard Leases and says which shards are live. Expiry is leader election's
 * rule (LeaseObservation: by this reader's clock, from when it saw a record change), so a new
 * reader counts a silent shard live for one lease duration before it calls it dead: Lease expiry
 * is the fence, never a guess. A shard that released its Lease (empty holder: it has stopped)
 * is dead at once. A failed list throws: no answer is never "no shards".
 */
export class ShardLeaseReader {
  readonly #options: ShardLeaseReaderOptions;
  readonly #seen = new Map<string, Seen>();
  /** The dead shards' Leases this reader holds: when it last wrote each (sent), and a write in flight. */
  readonly #held = new Map<string, { holder: string; at: number; durationMs: number; writing?: Promise<boolean> }>();
  /** When the last read that answered was sent. */
  #lastReadSentAt: number | undefined;

  constructor(options: ShardLeaseReaderOptions) {
    this.#options = options;
  }

  async read(): Promise<ShardMembership> {
    const { kubeConfig, namespace, ring } = this.#options;
    const sentAt = performance.now();
    const list = (await requestJson(kubeConfig, 'GET', resourcePath('coordination.k8s.io', 'v1', 'leases', namespace), {
      query: { labelSelector: `${SHARD_LEASE_LABEL}=${ring}` },
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      userAgent: 'k8or-shard-leases',
    })) as LeaseList;
    const now = performance.now();
    const durationMs = this.#options.defaultLeaseDurationMs ?? 15_000;
    const listed = new Set<string>();
    const live: string[] = [];
    const expiring: string[] = [];
    const silent: string[] = [];
    const adoptions: ShardAdoption[] = [];

    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      if (!name) continue;
      listed.add(name);
      const record = item.spec ?? {};
      const known = this.#seen.get(name);
      const seen = known ?? { lease: new LeaseObservation(), own: new LeaseObservation(), released: false, raw: item, changedAfter: undefined };
      this.#seen.set(name, seen);
      seen.raw = item;
      if (seen.lease.observe(record, now)) seen.changedAfter = known ? this.#lastReadSentAt : undefined;
      if (record.holderIdentity === name) seen.released = false;
      else if (!record.holderIdentity) seen.released = true;
      // A Lease first seen under another holder: its shard may have written it a moment ago.
      if (record.holderIdentity === name || !seen.own.record) seen.own.observe(record, now);
      if (!record.holderIdentity) continue; // released by the shard after it stopped
      if (record.holderIdentity === name) {
        if (seen.lease.unexpired(durationMs, now)) {
          live.push(name);
          const recordMs = record.leaseDurationSeconds !== undefined ? record.leaseDurationSeconds * 1000 : durationMs;
          if (seen.lease.unchangedFor(now) >= recordMs * SILENT_SHARE) silent.push(name);
        }
      } else if (!seen.released && seen.own.unexpired(durationMs, now)) {
        expiring.push(name);
      }
      const adopters = item.metadata?.annotations?.[ADOPTED_BY_ANNOTATION];
      if (record.holderIdentity !== name && adopters !== undefined && seen.lease.unexpired(durationMs, now)) {
        const recordMs = record.leaseDurationSeconds !== undefined ? record.leaseDurationSeconds * 1000 : durationMs;
        const workableUntil = seen.changedAfter === undefined ? -Infinity : seen.changedAfter + recordMs * ADOPTER_WINDOW;
        adoptions.push({ shard: name, adopters: adopters.split(',').filter(Boolean).sort(), workableUntil });
      }
    }
    // A Lease deleted under a shard that may still be working: expiring until its last record expires.
    for (const [name, seen] of this.#seen) {
      if (listed.has(name)) continue;
      if (!seen.released && seen.own.unexpired(durationMs, now)) expiring.push(name);
      else this.#seen.delete(name);
    }
    this.#lastReadSentAt = sentAt;
    return {
      live: live.sort(),
      expiring: expiring.sort(),
      leased: [...listed].sort(),
      ...(adoptions.length > 0 ? { adoptions: adoptions.sort((a, b) => (a.shard < b.shard ? -1 : 1)) } : {}),
      ...(silent.length > 0 ? { silent: silent.sort() } : {}),
    };
  }

  /**
   * The shards `shard` said at the last read it divides the cloud limits among (its Lease's
   * `SHARDS_COUNTED_ANNOTATION`); undefined when its Lease was not listed or says nothing.
   */
  countedBy(shard: string): readonly string[] | undefined {
    const value = this.#seen.get(shard)?.raw.metadata?.annotations?.[SHARDS_COUNTED_ANNOTATION];
    return value === undefined ? undefined : value.split(',').filter(Boolean);
  }

  /**
   * Sets annotation `key` to `value` on `shard`'s Lease as last listed: a compare-and-swap update
   * (it throws a 409 when the Lease changed since). False when the Lease was not listed.
   */
  async annotate(shard: string, key: string, value: string): Promise<boolean> {
    const seen = this.#seen.get(shard);
    if (!seen) return false;
    const { kubeConfig, namespace } = this.#options;
    const metadata = { ...seen.raw.metadata, annotations: { ...seen.raw.metadata?.annotations, [key]: value } };
    seen.raw = (await requestJson(kubeConfig, 'PUT', `${resourcePath('coordination.k8s.io', 'v1', 'leases', namespace)}/${encodeURIComponent(shard)}`, {
      body: { ...seen.raw, metadata },
      timeoutMs: this.#options.timeoutMs ?? 10_000,
      userAgent: 'k8or-shard-leases',
    })) as Lease;
    return true;
  }

  /**
   * Takes a dead shard's Lease before its objects move, and holds it while they do: writes
   * `holder` over the Lease as last read, carrying its resourceVersion, so it fails (false) if the
   * shard renewed meanwhile. A replica of that name must then wait for this record to expire before
   * it holds its Lease again, which keeps it from working objects that are being moved. Called
   * again before each move, it writes again once a fifth of the Lease duration has passed since its
   * last write (by this reader's clock), so the record never expires while moves go on: a move that
   * takes longer than one Lease duration is still fenced. Concurrent calls for one shard share one
   * write. True when there is no Lease to take (nothing can come back through it but a new Lease,
   * which starts live).
   *
   * With `adopters`, the record names them (`ADOPTED_BY_ANNOTATION`) unless it names adopters
   * already and may still be in effect (held by `holder`, and written within one Lease duration as
   * far as this reader knows): an adoption's ring never changes while an adopter may be working by
   * it.
   */
  async takeOver(shard: string, holder: string, adopters?: readonly string[]): Promise<boolean> {
    const held = this.#held.get(shard);
    if (held?.holder === holder) {
      if (held.writing) return await held.writing;
      // A fifth: an adopter, which may work only two thirds of the duration from the write before
      // last it saw, sees the next one in time even when its reads take a second or more.
      if (performance.now() - held.at < held.durationMs / 5) return true;
    }
    const writing = this.#writeHolder(shard, holder, adopters, held?.holder === holder ? held.at : undefined);
    this.#held.set(shard, { holder, at: held?.at ?? 0, durationMs: held?.durationMs ?? this.#defaultDurationMs, writing });
    try {
      return await writing;
    } finally {
      const after = this.#held.get(shard);
      if (after?.writing === writing) delete after.writing;
    }
  }

  get #defaultDurationMs(): number {
    return this.#options.defaultLeaseDurationMs ?? 15_000;
  }

  async #writeHolder(shard: string, holder: string, adopters: readonly string[] | undefined, lastWrittenAt: number | undefined): Promise<boolean> {
    const seen = this.#seen.get(shard);
    if (!seen) return true;
    const { kubeConfig, namespace } = this.#options;
    const sentAt = performance.now();
    const now = microTime(new Date());
    const path = `${resourcePath('coordination.k8s.io', 'v1', 'leases', namespace)}/${encodeURIComponent(shard)}`;
    const durationSeconds = seen.raw.spec?.leaseDurationSeconds && seen.raw.spec.leaseDurationSeconds > 1 ? seen.raw.spec.leaseDurationSeconds : Math.ceil(this.#defaultDurationMs / 1000);
    const taking = seen.raw.spec?.holderIdentity !== holder;
    const annotations = seen.raw.metadata?.annotations;
    const adoptionInEffect =
      !taking && annotations?.[ADOPTED_BY_ANNOTATION] !== undefined &&
      (seen.lease.unexpired(this.#defaultDurationMs, sentAt) || (lastWrittenAt !== undefined && sentAt - lastWrittenAt < durationSeconds * 1000));
    const metadata = adopters === undefined || adoptionInEffect ? seen.raw.metadata : { ...seen.raw.metadata, annotations: { ...annotations, [ADOPTED_BY_ANNOTATION]: [...adopters].sort().join(',') } };
    try {
      seen.raw = (await requestJson(kubeConfig, 'PUT', path, {
        body: {
          ...seen.raw,
          ...(metadata ? { metadata } : {}),
          spec: {
            ...seen.raw.spec,
            holderIdentity: holder,
            leaseDurationSeconds: durationSeconds,
            renewTime: now,
            ...(taking ? { acquireTime: now, leaseTransitions: (seen.raw.spec?.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
        timeoutMs: this.#options.timeoutMs ?? 10_000,
        userAgent: 'k8or-shard-leases',
      })) as Lease;
      // Counted from when the write was sent: the shard may have seen it from then on.
      this.#held.set(shard, { holder, at: sentAt, durationMs: durationSeconds * 1000 });
      return true;
    } catch (error) {
      this.#held.delete(shard);
      if (error instanceof KubeApiError && error.status === 409) return false;
      if (error instanceof KubeApiError && error.status === 404) return true;
      throw error;
    }
  }
}
