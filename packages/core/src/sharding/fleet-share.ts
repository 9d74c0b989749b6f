import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/access.js';
import { ShardLeaseReader } from './shard-leases.js';

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
  logger?: Logger;
}

/**
 * A shard's part of every ProviderConfig's rate limits and drift-check budget, which are the cloud
 * account's and so the whole fleet's: one over the number of shards that may be calling the cloud, those live and
 * those expiring (their Lease was taken, or deleted, but they may still be working), this one
 * always among them. A dead shard no longer counts: by Lease expiry it has stopped calling.
 *
 * Every shard re-reads the Leases every `periodMs`, so a joining shard must not call before the
 * others have counted it: `settle()` waits two periods after this shard holds its Lease, then
 * reads. A failed read keeps the share it had (a lower share is never raised on no answer).
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

  /** Reads the shard Leases and sets the share; throws when the read fails (the share stays). */
  async refresh(): Promise<number> {
    const membership = await this.#reader.read();
    const shards = new Set([...membership.live, ...membership.expiring, this.#options.shard]).size;
    if (shards !== this.#shards) this.#options.logger?.info({ shards, share: 1 / shards }, 'cloud rate limits and drift budgets divided among the shards');
    this.#shards = shards;
    this.#options.target.setShare(this.share);
    return shards;
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
   * Resolves once every other shard has had two periods to count this one and a read has set
   * this shard's share; retries a failed read each period. Resolves at once when stopped.
   */
  async settle(): Promise<void> {
    await this.#sleep(2 * this.#periodMs);
    while (!this.#stopped) {
      try {
        await this.refresh();
        return;
      } catch (error) {
        this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'reading the shard Leases failed; no cloud call before this shard knows its share');
        await this.#sleep(this.#periodMs);
      }
    }
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
