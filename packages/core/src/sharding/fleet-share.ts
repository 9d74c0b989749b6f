import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/access.js';
import { SHARDS_COUNTED_ANNOTATION } from './labels.js';
import { ShardLeaseReader, type ShardMembership } from './shard-leases.js';

/** What a shard's share is set on: the engine's CloudRateLimits. */
export interface ShareTarget {
  setShare(share: number): void;
}

export interface FleetShareOptions {
  kubeConfig: KubeAccess;
  namespace: string;
  ring: string;
  /** This shard's name: always counted, whether or not its Lease is listed yet. */
  shard: string;
  target: ShareTarget;
  /** How often the shard Leases are read again. Default 2 s. */
  periodMs?: number;
  /** Expiry of a Lease record that states no duration. Default 15 s. */
  leaseDurationMs?: number;
  /** After each successful read: what it found (the engine takes its adoptions from it). */
  onRead?: (membership: ShardMembership) => void;
  logger?: Logger;
}

/**
 * A shard's part of every ProviderConfig's rate limits and drift-check budget, which are the cloud
 * account's and so the whole fleet's: one over the number of shards that may be calling the cloud, those live and
 * those expiring (their Lease was taken, or deleted, but they may still be working), this one
 * always among them. A dead shard no longer counts: by Lease expiry it has stopped calling.
 *
 * Each read that sets the share then writes the shards it counted on this shard's own Lease
 * (`SHARDS_COUNTED_ANNOTATION`), so the others can see it has lowered its share for them. A joining
 * shard must not call before every other shard has: `settle()` waits until each shard that may be
 * calling names this one on its Lease (a shard whose Lease names none, an older version, is given
 * two periods, the time it takes to read the Leases again). A failed read keeps the share it had
 * (a lower share is never raised on no answer).
 */
export class FleetShare {
  readonly #options: FleetShareOptions;
  readonly #reader: ShardLeaseReader;
  readonly #periodMs: number;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #shards: number | undefined;

  constructor(options: FleetShareOptions) {
    this.#options = options;
    this.#periodMs = options.periodMs ?? 2_000;
    this.#reader = new ShardLeaseReader({
      kubeConfig: options.kubeConfig,
      namespace: options.namespace,
      ring: options.ring,
      ...(options.leaseDurationMs !== undefined ? { defaultLeaseDurationMs: options.leaseDurationMs } : {}),
    });
  }

  /** The shards counted at the last read (undefined before one succeeded). */
  get shards(): number | undefined {
    return this.#shards;
  }

  /**
   * This shard's part of every ProviderConfig's rate limits and drift budget: 1/N at the last
   * read (1 before one succeeded; the engine makes no cloud call before `settle()` read once).
   */
  get share(): number {
    return 1 / (this.#shards ?? 1);
  }

  /**
   * Reads the shard Leases, sets the share, and then writes on this shard's Lease whom it counts;
   * throws when the read fails (the share stays). A failed write is logged and tried again at the
   * next read: it only keeps a joining shard waiting.
   */
  async refresh(): Promise<number> {
    return (await this.#refresh()).counted.length;
  }

  async #refresh(): Promise<{ membership: ShardMembership; counted: string[] }> {
    const membership = await this.#reader.read();
    this.#options.onRead?.(membership);
    const counted = [...new Set([...membership.live, ...membership.expiring, this.#options.shard])].sort();
    const shards = counted.length;
    if (shards !== this.#shards) this.#options.logger?.info({ shards, share: 1 / shards }, 'cloud rate limits and drift budgets divided among the shards');
    this.#shards = shards;
    this.#options.target.setShare(this.share);
    await this.#publish(counted.join(',')).catch((error: unknown) => {
      this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not write the shards counted on this shard\'s Lease; a joining shard waits');
    });
    return { membership, counted };
  }

  /**
   * Writes `counted` on this shard's own Lease, as the read just made listed it, unless it says so
   * already (so a Lease made anew is written again): a compare-and-swap update, as the Lease's
   * holder renews it too. Nothing while the Lease is not listed yet.
   */
  async #publish(counted: string): Promise<void> {
    const { shard } = this.#options;
    if (this.#reader.countedBy(shard)?.join(',') === counted) return;
    await this.#reader.annotate(shard, SHARDS_COUNTED_ANNOTATION, counted);
  }

  /** Re-reads every period until stopped. */
  start(): void {
    if (this.#timer || this.#stopped) return;
    const tick = (): void => {
      this.refresh()
        .catch((error: unknown) => this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'reading the shard Leases failed; the rate-limit share stays'))
        .finally(() => {
          if (!this.#stopped) this.#timer = setTimeout(tick, this.#periodMs);
        });
    };
    tick();
  }

  /**
   * Resolves once every other shard that may be calling the cloud names this one on its Lease (so
   * has lowered its share for it), and a read has set this shard's share; a shard whose Lease names
   * no shards is given two periods from the first read instead. Reads every period until then,
   * retrying a failed read. Resolves at once when stopped.
   */
  async settle(): Promise<void> {
    const graceUntil = performance.now() + 2 * this.#periodMs;
    let waitingFor = '';
    while (!this.#stopped) {
      try {
        const { membership } = await this.#refresh();
        const late = [...membership.live, ...membership.expiring].filter((other) => other !== this.#options.shard && !this.#counts(other, graceUntil));
        if (late.length === 0) return;
        if (late.join(',') !== waitingFor) {
          waitingFor = late.join(',');
          this.#options.logger?.info({ waitingFor: late }, 'no cloud call before the other shards count this one');
        }
      } catch (error) {
        this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'reading the shard Leases failed; no cloud call before this shard knows its share');
      }
      await this.#sleep(this.#periodMs);
    }
  }

  /** Whether `other` has lowered its share for this shard, as far as its Lease says (or, when it says nothing, once the grace is over). */
  #counts(other: string, graceUntil: number): boolean {
    const counted = this.#reader.countedBy(other);
    if (counted === undefined) return performance.now() >= graceUntil;
    return counted.includes(this.#options.shard);
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #sleep(ms: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}
