import { isDeepStrictEqual } from 'node:util';
import { MANAGED_KINDS, type ManagedKindName } from '@k8or/api';
import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/access.js';
import { mapBounded } from '../util/bounded.js';
import { sleepUnlessAborted } from '../util/sleep.js';
import { k8orPath } from '../kube/paths.js';
import { KubeApiError, KubeRest } from '../kube/rest.js';
import type { ProviderPlugin } from '../provider/contract.js';
import { AssignmentCache } from './assignment-cache.js';
import { shardKeyHash } from './keys.js';
import { drainLabel, shardLabel } from './labels.js';
import { planShardLabels, type ShardLabelChange } from './plan.js';
import { shardKeySourceOf, type ShardKeyContext } from './resource-key.js';
import type { ShardRecord } from './shard-record.js';
import { ShardLeaseReader, type ShardMembership } from './shard-leases.js';

export interface ShardAssignerOptions {
  kubeConfig: KubeAccess;
  /** The operator's namespace, where the ring's shard Leases live. */
  namespace: string;
  ring: string;
  providers: ReadonlyMap<string, ProviderPlugin>;
  clusterId: string;
  kinds?: readonly ManagedKindName[];
  /** Written as the holder of a dead shard's Lease while its objects move; default `k8or-shard-assigner`. */
  identity?: string;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  /** Label patches in flight at once; default 16. */
  concurrency?: number;
  logger?: Logger;
}

/** What one pass did. */
export interface ShardSyncResult {
  membership: ShardMembership;
  /** Changes written. */
  applied: ShardLabelChange<ShardRecord>[];
  /** Changes refused because the object changed (or went) since it was read: the next pass looks again. */
  skipped: ShardLabelChange<ShardRecord>[];
}

/** After a change of objects, how long a pass waits for more to come, so a burst of them makes one pass. */
const SETTLE_MS = 100;
/** Between passes, how often `run()` reads the shard Leases for a shard that died or joined. */
const LEASE_POLL_MS = 500;

function sameMembership(a: ShardMembership, b: ShardMembership): boolean {
  return isDeepStrictEqual([a.live, a.expiring], [b.live, b.expiring]);
}

/**
 * The leader's assigner: one `sync()` reads the live shards and writes the label changes
 * `planShardLabels` asks for, planned from watched caches of the Buckets and Tables (compact
 * records: `ShardRecord`) and of the Namespaces and ProviderConfigs their keys depend on. Each
 * write is a merge patch that carries the resourceVersion the cache holds, so it lands only on
 * the object as planned: a shard letting go, or a user's edit, in between turns it into a 409,
 * and a later pass plans from the newer record the watch brings.
 */
export class ShardAssigner {
  readonly #options: ShardAssignerOptions;
  readonly #rest: KubeRest;
  readonly #reader: ShardLeaseReader;
  /** The cache of `sync()` called on its own (outside `run()`), kept until `close()`. */
  #standing: AssignmentCache | undefined;

  constructor(options: ShardAssignerOptions) {
    this.#options = options;
    this.#rest = new KubeRest(options.kubeConfig, { userAgent: 'k8or-shard-assigner', timeoutMs: options.timeoutMs ?? 30_000 });
    this.#reader = new ShardLeaseReader({ kubeConfig: options.kubeConfig, namespace: options.namespace, ring: options.ring });
  }

  /**
   * One pass; `signal` (a lost leadership) stops it before any further write and aborts the
   * ones in flight. Outside `run()`, the first call starts watches that last until `close()`;
   * a pass sees what they have delivered, so a write made just before may show in a later pass.
   */
  async sync(signal?: AbortSignal): Promise<ShardSyncResult> {
    if (!this.#standing) {
      const cache = this.#newCache();
      await cache.start(signal);
      signal?.throwIfAborted();
      this.#standing = cache;
    }
    return await this.#pass(this.#standing, signal);
  }

  /**
   * Passes until `signal` aborts: the leader runs this while it leads. A pass runs every
   * `intervalMs` (default 2 s); soon after a change in the caches, so a new object or one a shard
   * let go of is assigned at once; and as soon as a read of the shard Leases between passes (every
   * 500 ms) finds a shard dead, expiring or new, so a dead shard's objects move without waiting for
   * the interval. The watches start with the run and stop when it ends. A failed pass is logged and
   * retried at the next interval.
   */
  async run(signal: AbortSignal, intervalMs = 2_000): Promise<void> {
    const cache = this.#newCache();
    try {
      await cache.start(signal);
      let membership: ShardMembership | undefined;
      while (!signal.aborted) {
        const changed = cache.changed(signal);
        try {
          const result = await this.#pass(cache, signal);
          membership = result.membership;
          if (result.applied.length > 0 || result.skipped.length > 0) {
            this.#options.logger?.info({ live: result.membership.live, applied: result.applied.length, skipped: result.skipped.length }, 'shard assignment changed');
          }
        } catch (error) {
          if (signal.aborted) return;
          this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'shard assignment pass failed; retrying');
        }
        const waiting = new AbortController();
        const stopWaiting = (): void => waiting.abort();
        signal.addEventListener('abort', stopWaiting, { once: true });
        const watchingLeases = this.#membershipChange(membership, waiting.signal).then(() => 'leases' as const);
        const woken = await Promise.race([changed.then(() => 'objects' as const), sleepUnlessAborted(intervalMs, waiting.signal).then(() => 'timer' as const), watchingLeases]);
        waiting.abort();
        signal.removeEventListener('abort', stopWaiting);
        // No two reads of the Leases at once: the pass reads them next.
        await watchingLeases;
        if (woken === 'objects') await sleepUnlessAborted(SETTLE_MS, signal);
      }
    } finally {
      cache.stop();
    }
  }

  /**
   * Reads the shard Leases every `LEASE_POLL_MS` until the live or expiring shards differ from
   * `since` (or `signal` aborts): a read is a small list, where a pass plans every object, so an
   * expiry or a new shard is noticed within that much rather than at the next pass. A failed read
   * is left to the next one.
   */
  async #membershipChange(since: ShardMembership | undefined, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleepUnlessAborted(LEASE_POLL_MS, signal);
      if (signal.aborted || since === undefined) continue;
      const now = await this.#reader.read().catch(() => undefined);
      if (now && !sameMembership(now, since)) return;
    }
  }

  close(): void {
    this.#standing?.stop();
    this.#rest.close();
  }

  #newCache(): AssignmentCache {
    return new AssignmentCache({ kubeConfig: this.#options.kubeConfig, kinds: this.#options.kinds ?? MANAGED_KINDS, ...(this.#options.logger ? { logger: this.#options.logger } : {}) });
  }

  async #pass(cache: AssignmentCache, signal: AbortSignal | undefined): Promise<ShardSyncResult> {
    signal?.throwIfAborted();
    const membership = await this.#reader.read();
    const result: ShardSyncResult = { membership, applied: [], skipped: [] };
    if (membership.live.length === 0) return result;
    const context: ShardKeyContext = {
      namespace: (name) => cache.namespace(name),
      providerConfig: (name) => cache.providerConfig(name),
      providers: this.#options.providers,
      clusterId: this.#options.clusterId,
    };
    const changes = planShardLabels(this.#keyed(cache, context), membership);
    // The fence: hold each dead shard's Lease before its objects move, so no replica of that name
    // can hold it, and work them, meanwhile. A shard that renewed after all keeps its objects.
    const fenced = new Map<string, boolean>();
    for (const change of changes) {
      if (change.action !== 'assign' || change.from === undefined || fenced.has(change.from)) continue;
      signal?.throwIfAborted();
      fenced.set(change.from, await this.#reader.takeOver(change.from, this.#options.identity ?? 'k8or-shard-assigner'));
    }
    const written = await mapBounded(changes, this.#options.concurrency ?? 16, (change) => {
      const fencedOff = change.action === 'assign' && change.from !== undefined && !fenced.get(change.from);
      if (fencedOff) return Promise.resolve(false);
      return this.#apply(change, signal).then((applied) => {
        // Written or refused: the cached record is older than the object now.
        cache.outdated(change.object.kind, change.object);
        return applied;
      });
    }, signal);
    changes.forEach((change, i) => (written[i] ? result.applied : result.skipped).push(change));
    return result;
  }

  /** Every record, its shard key's ring position computed where the record is new or the Namespaces or ProviderConfigs changed since. */
  *#keyed(cache: AssignmentCache, context: ShardKeyContext): Generator<ShardRecord> {
    const contextVersion = cache.contextVersion;
    for (const kind of this.#options.kinds ?? MANAGED_KINDS) {
      for (const record of cache.records(kind)) {
        record.keyHashAt(contextVersion, () => shardKeyHash(shardKeySourceOf(kind, record.keyObject(), context)));
        yield record;
      }
    }
  }

  /** One compare-and-swap label patch; false when the object changed or went since it was read. */
  async #apply(change: ShardLabelChange<ShardRecord>, signal: AbortSignal | undefined): Promise<boolean> {
    const record = change.object;
    const kind = record.kind;
    const labels: Record<string, string | null> =
      change.action === 'assign' ? { [shardLabel(kind)]: change.shard, [drainLabel(kind)]: null }
      : change.action === 'drain' ? { [drainLabel(kind)]: 'true' }
      : { [drainLabel(kind)]: null };
    try {
      await this.#rest.patch(k8orPath(kind, record.metadata.namespace, record.metadata.name), {
        metadata: { resourceVersion: record.metadata.resourceVersion, labels },
      }, 'merge', signal);
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && (error.status === 409 || error.status === 404)) return false;
      throw error;
    }
  }
}
