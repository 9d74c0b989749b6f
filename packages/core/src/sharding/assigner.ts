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
import { NeedsWorkFollower, needsWorkNow } from './needs-work-follower.js';
import { ShardRecordPager } from './record-pages.js';
import { StringPool, shardRecordOf, type ShardRecord } from './shard-record.js';
import { ShardLeaseReader, isDeadShard, type ShardMembership } from './shard-leases.js';

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
  /**
   * Relabelling a dead shard's objects, label patches in flight at once for those in sync (moved
   * after those that need work; they wait for their drift-check slot anyway); default 4. Each one
   * moved is an object its new shard takes in, and taking them in as fast as the leader can write
   * them slowed the live shards' work on their users' edits meanwhile (docs/benchmarks.md).
   */
  departedConcurrency?: number;
  /** Objects per list request of a pass over departed shards' objects, which moves most of what it reads; default 500. */
  listPageSize?: number;
  /**
   * Objects per list request of a full pass, which reads every object of the cluster to write
   * few or none; default 100. Each page's objects are garbage once planned: small pages let them
   * die young, where large ones outlive a young-generation collection (2 MiB in the image) and
   * grow the old generation, and the replica's RSS with it.
   */
  fullPassPageSize?: number;
  /** The longest between two full passes, which alone see an edit of an assigned object's shard key; default 5 minutes; 0: every pass is a full one. */
  fullPassEveryMs?: number;
  /**
   * Let the live shards adopt a dead shard's objects (`ADOPTED_BY_ANNOTATION`) rather than relabel
   * them before work resumes; default false. An adoption already in effect (written by a leader
   * that adopted) is respected either way.
   */
  adoptDeadShards?: boolean;
  /** Told of each pass that ended (CoreMetrics.shardAssignerMetrics()). */
  metrics?: ShardAssignerMetrics;
  logger?: Logger;
}

/** Which objects a pass read: every one, those of departed shards, or only those without a shard. */
export type AssignmentPassReach = 'all' | 'departed' | 'unassigned';

/** Hooks for metrics of the assigner's passes. */
export interface ShardAssignerMetrics {
  /** A pass over `reach` ended after `seconds`, having written `applied` label changes and seen `skipped` refused. */
  passed(reach: AssignmentPassReach, applied: number, skipped: number, seconds: number): void;
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
const FULL_PASS_EVERY_MS = 5 * 60_000;
const LIST_PAGE_SIZE = 500;
const DEPARTED_CONCURRENCY = 4;
const FULL_PASS_PAGE_SIZE = 100;
/** How often a full pass reads and plans again the objects whose changes were refused, before leaving them to the next full pass. */
const REFUSED_ROUNDS = 3;

/** What one pass plans with, across the pages of a full pass. */
interface Planning {
  membership: ShardMembership;
  contextVersion: number;
  context: ShardKeyContext;
  cache: AssignmentCache;
  /** Each dead shard whose Lease this pass tried to take: whether it holds it now. */
  fenced: Map<string, boolean>;
  result: ShardSyncResult;
}

/** A pass over departed shards' objects found the shards changed under it, and ended. */
class ShardsChanged extends Error {}

function sameMembership(a: ShardMembership, b: ShardMembership): boolean {
  return isDeepStrictEqual([a.live, a.expiring], [b.live, b.expiring]);
}

/**
 * The leader's assigner: one `sync()` reads the live shards and writes the label changes
 * `planShardLabels` asks for. It keeps no record of the objects the shards hold: it watches only
 * the Buckets and Tables without a shard (compact records: `ShardRecord`), and the Namespaces and
 * ProviderConfigs their keys depend on, and lists the objects it holds no record of, a page at a
 * time, only when a pass needs them (`#reach`). Each write
 * is a merge patch that carries the resourceVersion it planned from, so it lands only on the
 * object as planned: a shard letting go, or a user's edit, in between turns it into a 409, and a
 * later pass plans from the newer object.
 */
export class ShardAssigner {
  readonly #options: ShardAssignerOptions;
  readonly #rest: KubeRest;
  readonly #reader: ShardLeaseReader;
  /** The cache of `sync()` called on its own (outside `run()`), kept until `close()`. */
  #standing: AssignmentCache | undefined;
  readonly #pool = new StringPool();
  /**
   * Per dead shard: its adopted objects drained and not yet let go of by their adopters
   * (`<kind>/<key>`). Its Lease, and so the adoption, is held while any remain, so the adopters stay
   * to let go of them. Rebuilt by each full pass.
   */
  readonly #awaitingLetGo = new Map<string, Set<string>>();
  /**
   * Per shard that went silent (`ShardMembership.silent`) or died, per kind: its objects that need
   * work at once, read before its Lease expired, for a departed pass to move first.
   */
  readonly #followers = new Map<string, Map<ManagedKindName, NeedsWorkFollower>>();
  /** What the last full pass planned with, and whether it wrote every change it planned. */
  #lastFullPass: { membership: ShardMembership; contextVersion: number; startedAt: number; clean: boolean } | undefined;

  constructor(options: ShardAssignerOptions) {
    countOrTime('concurrency', options.concurrency);
    countOrTime('departedConcurrency', options.departedConcurrency);
    countOrTime('listPageSize', options.listPageSize);
    countOrTime('fullPassPageSize', options.fullPassPageSize);
    countOrTime('fullPassEveryMs', options.fullPassEveryMs, 0);
    countOrTime('timeoutMs', options.timeoutMs);
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
    let membership: ShardMembership | undefined;
    // The adoptions' Leases are written on a clock of their own: a long pass (thousands of let-go
    // objects to assign) must not leave an adoption without a write until its adopters pause.
    const holding = (async () => {
      while (!signal.aborted) {
        await sleepUnlessAborted(LEASE_POLL_MS, signal);
        if (membership && !signal.aborted) {
          await this.#holdAdoptions(membership, signal).catch((error: unknown) => {
            if (!signal.aborted) this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'writing an adopted shard\'s Lease failed; retrying');
          });
        }
      }
    })();
    try {
      await cache.start(signal);
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
      await holding;
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
      if (now) this.#followSilent(now);
      if (now && !sameMembership(now, since)) return;
    }
  }

  close(): void {
    this.#stopFollowing(() => true);
    this.#standing?.stop();
    this.#rest.close();
  }

  #newCache(): AssignmentCache {
    return new AssignmentCache({ kubeConfig: this.#options.kubeConfig, kinds: this.#options.kinds ?? MANAGED_KINDS, ...(this.#options.logger ? { logger: this.#options.logger } : {}) });
  }

  /** One pass, told to the metrics when it ends. */
  async #pass(cache: AssignmentCache, signal: AbortSignal | undefined): Promise<ShardSyncResult> {
    const started = performance.now();
    const { result, reach } = await this.#passOver(cache, signal);
    this.#options.metrics?.passed(reach, result.applied.length, result.skipped.length, (performance.now() - started) / 1000);
    return result;
  }

  async #passOver(cache: AssignmentCache, signal: AbortSignal | undefined): Promise<{ result: ShardSyncResult; reach: AssignmentPassReach }> {
    signal?.throwIfAborted();
    const read = await this.#reader.read();
    this.#followSilent(read);
    try {
      return await this.#passFrom(read, cache, signal);
    } finally {
      // Any pass at a membership where a shard is not live has moved its objects (or failed, and the next one reads them all again).
      this.#stopFollowing((shard) => !read.live.includes(shard));
    }
  }

  async #passFrom(read: ShardMembership, cache: AssignmentCache, signal: AbortSignal | undefined): Promise<{ result: ShardSyncResult; reach: AssignmentPassReach }> {
    // Without adoption, no dead shard is taken to be adopted by the live ones (`leased`), so its objects move at once.
    const membership: ShardMembership = this.#options.adoptDeadShards ? read : { ...read, leased: [] };
    const result: ShardSyncResult = { membership, applied: [], skipped: [] };
    if (membership.live.length === 0) return { result, reach: 'unassigned' };
    const context: ShardKeyContext = {
      namespace: (name) => cache.namespace(name),
      providerConfig: (name) => cache.providerConfig(name),
      providers: this.#options.providers,
      clusterId: this.#options.clusterId,
    };
    const contextVersion = cache.contextVersion;
    const planning: Planning = { membership, contextVersion, context, cache, fenced: new Map(), result };
    const kinds = this.#options.kinds ?? MANAGED_KINDS;
    const reach = this.#reach(membership, contextVersion);
    await this.#holdAdoptions(membership, signal);
    if (reach === 'all') this.#awaitingLetGo.clear();
    if (reach === 'unassigned') {
      for (const kind of kinds) await this.#planAndApply(cache.records(kind), planning, signal);
      return { result, reach };
    }
    const startedAt = Date.now();
    // An adopted shard's objects too: one whose adopter left is handed on from that adopter.
    const departed = reach === 'all' ? [] : [...new Set([...reach.departed, ...(membership.adoptions ?? []).map((adoption) => adoption.shard)])].sort();
    const selectorsOf = (kind: ManagedKindName): (string | undefined)[] => (reach === 'all' ? [undefined] : departedSelectors(kind, departed));
    // Relabelling, a departed shard's objects that need work at once move first (a user's edit, a
    // delete, a failed reconcile to retry: all but those in sync, waiting for their drift-check
    // slot): a read of its objects that moves only those (made while the shard was silent, before
    // its Lease expired, where this leader saw that), then the pass that moves the rest (each still a
    // compare-and-swap write, planned the same way). The rest waits for one more read of them.
    // Each object moved first leaves the selectors the second read uses. Not with an adoption:
    // a drain written in the first read would be planned again in the second from this pass's
    // membership, which does not show the adoption the first write made (and adopters work at once
    // what needs it anyway).
    // An object that comes to need work after that first read is followed by a watch from it, and moved as it comes.
    const adopting = this.#options.adoptDeadShards === true || (membership.adoptions ?? []).length > 0;
    const following: { stop(): Promise<void> }[] = [];
    const pageSize = reach === 'all' ? (this.#options.fullPassPageSize ?? FULL_PASS_PAGE_SIZE) : (this.#options.listPageSize ?? LIST_PAGE_SIZE);
    try {
      if (reach !== 'all' && !adopting) {
        for (const kind of kinds) {
          const drainingElsewhere = departedSelectors(kind, departed)[1];
          following.push(await this.#moveNeedingWork(kind, departed, pageSize, planning, signal));
          await this.#planPages(kind, drainingElsewhere, pageSize, planning, signal, needsWorkNow);
        }
      }
      // Relabelling, those in sync go at a pace of their own (`departedConcurrency`).
      const concurrency = reach !== 'all' && !adopting ? (this.#options.departedConcurrency ?? DEPARTED_CONCURRENCY) : undefined;
      // A departed pass ends early when the shards change under it (another one dies, or joins): the next pass
      // moves that one's objects too, rather than after this one's last page.
      const between = reach === 'all' ? undefined : () => this.#sameShardsStill(membership);
      for (const kind of kinds) for (const selector of selectorsOf(kind)) await this.#planPages(kind, selector, pageSize, planning, signal, undefined, concurrency, between);
      await this.#planRefusedAgain(planning, signal);
    } catch (error) {
      if (!(error instanceof ShardsChanged)) throw error;
      this.#options.logger?.info({ departed, moved: result.applied.length }, 'the shards changed while a dead shard\'s objects were relabelled; planning again');
      return { result, reach: 'departed' };
    } finally {
      await Promise.all(following.map((watch) => watch.stop()));
    }
    // A pass over the departed shards' objects counts as a full one at this membership, but not for the sweep.
    this.#lastFullPass = { membership, contextVersion, startedAt: reach === 'all' ? startedAt : this.#lastFullPass!.startedAt, clean: result.skipped.length === 0 };
    return { result, reach: reach === 'all' ? 'all' : 'departed' };
  }

  /**
   * Plans again, from a fresh read, each change refused because its object changed meanwhile (a
   * user's edit during a long pass), rather than waiting for the next full pass; not one held back
   * by a fence that failed: that shard keeps them until a later pass.
   */
  async #planRefusedAgain(planning: Planning, signal: AbortSignal | undefined): Promise<void> {
    const { result } = planning;
    const fencedOff = (change: ShardLabelChange<ShardRecord>): boolean => heldByFailedFence(change, planning.fenced);
    for (let round = 0; round < REFUSED_ROUNDS && result.skipped.some((change) => !fencedOff(change)); round++) {
      const refused = result.skipped.filter((change) => !fencedOff(change));
      result.skipped = result.skipped.filter(fencedOff);
      const fresh = await mapBounded(refused, this.#options.concurrency ?? 16, (change) => this.#read(change.object, signal), signal);
      await this.#planAndApply(fresh.filter((record) => record !== undefined), planning, signal);
    }
  }

  /**
   * Moves the departed shards' objects of `kind` that need work at once: those their followers read
   * while the shards were silent (each still following since), else read now, and, until `stop()`,
   * each that comes to need work later, as it comes, one page or object at a time. Resolves once
   * those read first have moved (or failed to: the pass moves every object anyway).
   */
  async #moveNeedingWork(kind: ManagedKindName, departed: readonly string[], pageSize: number, planning: Planning, signal: AbortSignal | undefined): Promise<{ stop(): Promise<void> }> {
    let moving = Promise.resolve();
    const move = (records: ShardRecord[]): void => {
      moving = moving
        .then(() => this.#planAndApply(records, planning, signal))
        .catch((error: unknown) => {
          if (!signal?.aborted) this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error), kind, objects: records.length }, 'moving a dead shard\'s objects that need work failed; the pass moves them');
        });
    };
    const early = departed.map((shard) => this.#followers.get(shard)?.get(kind));
    for (const shard of departed) this.#followers.get(shard)?.delete(kind);
    let followers = early.filter((follower) => follower !== undefined);
    // Each departed shard's early read, if every one had one that read all and follows still (one may still be reading).
    for (const follower of followers) follower.deliverTo(move);
    const readEarly = followers.length === departed.length && (await Promise.all(followers.map((follower) => follower.ready))).every(Boolean) && followers.every((follower) => follower.following);
    if (!readEarly) {
      await Promise.all(followers.map((follower) => follower.stop()));
      const now = this.#follower(kind, departedSelectors(kind, departed)[0], pageSize);
      followers = [now];
      now.deliverTo(move);
      await now.ready;
    }
    await moving;
    return {
      stop: async () => {
        await Promise.all(followers.map((follower) => follower.stop()));
        await moving;
      },
    };
  }

  #follower(kind: ManagedKindName, labelSelector: string, pageSize: number): NeedsWorkFollower {
    return new NeedsWorkFollower({ rest: this.#rest, kubeConfig: this.#options.kubeConfig, kind, labelSelector, pool: this.#pool, pageSize });
  }

  /**
   * Relabelling, starts reading the objects that need work of each shard that went silent (they
   * move first once it is dead), and stops reading a shard's that renewed its Lease since.
   */
  #followSilent(membership: ShardMembership): void {
    const silent = new Set(membership.silent ?? []);
    const renewed = (shard: string): boolean => membership.live.includes(shard) && !silent.has(shard);
    for (const shard of this.#followers.keys()) if (renewed(shard)) this.#options.logger?.info({ shard }, 'a silent shard renewed its Lease; its objects are no longer read');
    this.#stopFollowing(renewed);
    if (this.#options.adoptDeadShards) return;
    for (const shard of silent) {
      if (this.#followers.has(shard)) continue;
      const pageSize = this.#options.listPageSize ?? LIST_PAGE_SIZE;
      const kinds = this.#options.kinds ?? MANAGED_KINDS;
      this.#followers.set(shard, new Map(kinds.map((kind) => [kind, this.#follower(kind, departedSelectors(kind, [shard])[0], pageSize)])));
      this.#options.logger?.info({ shard }, 'a shard\'s Lease has not been renewed for a third of its duration; reading its objects that need work, to move them first if it dies');
    }
  }

  /** Stops and forgets the followers of each shard `which` picks. */
  #stopFollowing(which: (shard: string) => boolean): void {
    for (const [shard, followers] of [...this.#followers]) {
      if (!which(shard)) continue;
      this.#followers.delete(shard);
      for (const follower of followers.values()) void follower.stop();
    }
  }

  /**
   * Plans and writes the objects of `kind` that `labelSelector` selects (of those, only the ones
   * `keep` keeps, when given, judged on each object as read; each page's changes `concurrency` at a time, when given), listed a page at a time; the next page is read while this one's
   * changes are written. After each page it also assigns
   * the objects its watch holds without a shard (let go by a drained shard during the pass, or new):
   * a long pass must not leave them unworked until it ends; then it calls `between`, when given,
   * which may end the pass.
   */
  async #planPages(kind: ManagedKindName, labelSelector: string | undefined, pageSize: number, planning: Planning, signal: AbortSignal | undefined, keep?: (object: unknown) => boolean, concurrency?: number, between?: () => Promise<void>): Promise<void> {
    const pager = new ShardRecordPager(this.#rest, kind, this.#pool, { limit: pageSize, ...(labelSelector !== undefined ? { labelSelector } : {}), ...(keep ? { keep } : {}) }, signal);
    let reading = pager.next();
    for (;;) {
      let page = await reading;
      if (page === undefined) break;
      reading = pager.next();
      // Planning may fail with this read in flight: its failure is then nobody's.
      reading.catch(() => undefined);
      await this.#planAndApply(page.records, planning, signal, concurrency);
      // Let go of it before waiting for the next page (see ShardRecordPager): this frame would keep it through that wait.
      page = undefined;
      await this.#planAndApply(planning.cache.records(kind), planning, signal);
      await between?.();
    }
  }

  /** Reads the shard Leases (following each shard that went silent); throws `ShardsChanged` when the live or expiring ones are not those of `since`. */
  async #sameShardsStill(since: ShardMembership): Promise<void> {
    const now = await this.#reader.read();
    this.#followSilent(now);
    if (!sameMembership(now, since)) throw new ShardsChanged();
  }

  /** The object of `record` as it is now; undefined when it is gone. */
  async #read(record: ShardRecord, signal: AbortSignal | undefined): Promise<ShardRecord | undefined> {
    const object = await this.#rest.get<unknown>(k8orPath(record.kind, record.namespace, record.name), signal);
    return object === undefined ? undefined : shardRecordOf(record.kind, object, this.#pool);
  }

  /**
   * Which objects a pass must read to plan everything that may have changed since the last full
   * pass:
   * - every object (a full pass) when a shard joined (some objects on live shards now hash to
   *   it), a Namespace or ProviderConfig changed (the shard keys), that pass could not write every
   *   change, or `fullPassEveryMs` passed (an edit of an assigned object's own shard key);
   * - when shards only left (died, or began expiring), the objects labelled for them and those
   *   being drained: consistent hashing moves no other object when a shard leaves the ring;
   * - otherwise only the objects without a shard, which the cache watches.
   */
  #reach(membership: ShardMembership, contextVersion: number): 'all' | 'unassigned' | { departed: string[] } {
    const last = this.#lastFullPass;
    if (last === undefined || !last.clean || last.contextVersion !== contextVersion) return 'all';
    if (Date.now() - last.startedAt >= (this.#options.fullPassEveryMs ?? FULL_PASS_EVERY_MS)) return 'all';
    if (sameMembership(last.membership, membership)) return 'unassigned';
    const known = new Set([...last.membership.live, ...last.membership.expiring]);
    const joined = membership.live.some((shard) => !last.membership.live.includes(shard)) || membership.expiring.some((shard) => !known.has(shard));
    if (joined) return 'all';
    return { departed: [...known].filter((shard) => !membership.live.includes(shard)).sort() };
  }

  /**
   * Writes again the Lease of each dead shard whose adopters still have objects to let go of, so the
   * adoption lasts until they have; forgets a shard that is back, or whose Lease it could not hold.
   */
  async #holdAdoptions(membership: ShardMembership, signal: AbortSignal | undefined): Promise<void> {
    for (const [dead, keys] of [...this.#awaitingLetGo]) {
      signal?.throwIfAborted();
      if (keys.size === 0 || !isDeadShard(membership, dead) || !(await this.#reader.takeOver(dead, this.#options.identity ?? 'k8or-shard-assigner', membership.live))) this.#awaitingLetGo.delete(dead);
    }
  }

  async #planAndApply(records: Iterable<ShardRecord>, planning: Planning, signal: AbortSignal | undefined, concurrency = this.#options.concurrency ?? 16): Promise<void> {
    const { fenced, cache, result } = planning;
    const adopted = new Set((planning.membership.adoptions ?? []).map((adoption) => adoption.shard));
    const noted = noting(keyed(records, planning.contextVersion, planning.context), (record) => {
      // Drained earlier, still labelled for an adopted dead shard: its adopter has yet to let go.
      if (record.draining && record.shard && adopted.has(record.shard)) this.#awaitLetGo(record.shard, record);
    });
    const changes = planShardLabels(noted, planning.membership);
    const written = await mapBounded(changes, concurrency, async (change) => {
      // The fence: hold a dead shard's Lease before each of its objects moves, so no replica of
      // that name can hold it, and work them, while they do, however long that takes; the first
      // write names the live shards as its adopters, who work its objects until they are moved.
      // A shard that renewed after all keeps the objects not yet moved, until a later pass.
      for (const dead of fencesOf(change)) {
        if (fenced.get(dead) === false) continue;
        signal?.throwIfAborted();
        const held = await this.#reader.takeOver(dead, this.#options.identity ?? 'k8or-shard-assigner', this.#options.adoptDeadShards ? planning.membership.live : undefined);
        // Once lost in a pass, lost for the rest of it.
        if (!held) fenced.set(dead, false);
        else if (!fenced.has(dead)) fenced.set(dead, true);
      }
      if (heldByFailedFence(change, fenced)) return false;
      const applied = await this.#apply(change, signal);
      // Written or refused: the cached record is older than the object now.
      cache.outdated(change.object.kind, change.object);
      return applied;
    }, signal);
    changes.forEach((change, i) => {
      (written[i] ? result.applied : result.skipped).push(change);
      if (!written[i]) return;
      const labelled = change.object.shard || undefined;
      if (change.action === 'drain' && labelled !== undefined && labelled !== change.from) this.#awaitLetGo(labelled, change.object);
      else if (change.action === 'assign') this.#letGone(change.object);
    });
  }

  #awaitLetGo(dead: string, record: ShardRecord): void {
    const keys = this.#awaitingLetGo.get(dead) ?? new Set<string>();
    this.#awaitingLetGo.set(dead, keys);
    keys.add(`${record.kind}/${record.cacheKey}`);
  }

  /** `record` is on a live shard now (let go of and assigned, or moved at once). */
  #letGone(record: ShardRecord): void {
    for (const keys of this.#awaitingLetGo.values()) keys.delete(`${record.kind}/${record.cacheKey}`);
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

/** Each record, after `note` saw it. */
function* noting<T>(records: Iterable<T>, note: (record: T) => void): Generator<T> {
  for (const record of records) {
    note(record);
    yield record;
  }
}

/** Each record, its shard key's ring position computed where the record is new or the Namespaces or ProviderConfigs changed since. */
function* keyed(records: Iterable<ShardRecord>, contextVersion: number, context: ShardKeyContext): Generator<ShardRecord> {
  for (const record of records) {
    record.keyHashAt(contextVersion, () => shardKeyHash(shardKeySourceOf(record.kind, record.keyObject(), context)));
    yield record;
  }
}

/** The selectors of the objects a pass over departed shards (never none: `#reach`) reads: those labelled for them, and those being drained elsewhere. */
function departedSelectors(kind: ManagedKindName, departed: readonly string[]): [labelledDeparted: string, drainingElsewhere: string] {
  return [`${shardLabel(kind)} in (${departed.join(',')})`, `${drainLabel(kind)},${shardLabel(kind)} notin (${departed.join(',')})`];
}

/**
 * The dead shards whose Leases a change must hold: for a move off a dead shard, the shard it is
 * labelled for and, when that shard's adopter that worked it died too, that adopter; for a drain of
 * an adopted object (labelled for a dead shard, worked by an adopter), the dead shard, whose
 * adoption must last until the adopter has let go.
 */
function fencesOf(change: ShardLabelChange<ShardRecord>): string[] {
  const labelled = change.object.shard || undefined;
  if (change.action === 'assign') return change.from === undefined ? [] : [...new Set([change.from, ...(labelled ? [labelled] : [])])];
  if (change.action === 'drain' && labelled !== undefined && labelled !== change.from) return [labelled];
  return [];
}

/** A change whose dead shards' Leases this pass could not all take: those shards keep the object for now. */
function heldByFailedFence(change: ShardLabelChange<ShardRecord>, fenced: ReadonlyMap<string, boolean>): boolean {
  return fencesOf(change).some((dead) => !fenced.get(dead));
}

/** A count or a time the options give: when given, an integer of at least `least` (default 1), else a RangeError naming the option. */
function countOrTime(option: keyof ShardAssignerOptions, value: number | undefined, least = 1): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= least)) throw new RangeError(`ShardAssigner ${option} must be an integer of at least ${least}, got ${String(value)}`);
}
