import { MANAGED_KINDS, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import type { Logger } from 'pino';
import type { KubeAccess } from '../kube/access.js';
import { sleepUnlessAborted } from '../util/sleep.js';
import { corePath, k8orPath } from '../kube/paths.js';
import { KubeApiError, KubeRest } from '../kube/rest.js';
import type { ProviderPlugin } from '../provider/contract.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import { drainLabel, shardLabel } from './labels.js';
import { planShardLabels, type ShardedObject, type ShardLabelChange } from './plan.js';
import { shardKeySourceOf } from './resource-key.js';
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
  logger?: Logger;
}

/** What one pass did. */
export interface ShardSyncResult {
  membership: ShardMembership;
  /** Changes written. */
  applied: ShardLabelChange[];
  /** Changes refused because the object changed (or went) since it was listed: the next pass looks again. */
  skipped: ShardLabelChange[];
}

interface List<T> {
  items?: T[];
}

/**
 * The leader's assigner: one `sync()` reads the live shards, lists the Buckets and Tables, and
 * writes the label changes `planShardLabels` asks for. Each write is a merge patch that carries
 * the resourceVersion it read, so it lands only on the object as planned: a shard letting go,
 * or a user's edit, in between turns it into a 409, and the next pass plans afresh.
 */
export class ShardAssigner {
  readonly #options: ShardAssignerOptions;
  readonly #rest: KubeRest;
  readonly #reader: ShardLeaseReader;

  constructor(options: ShardAssignerOptions) {
    this.#options = options;
    this.#rest = new KubeRest(options.kubeConfig, { userAgent: 'k8or-shard-assigner', timeoutMs: options.timeoutMs ?? 30_000 });
    this.#reader = new ShardLeaseReader({ kubeConfig: options.kubeConfig, namespace: options.namespace, ring: options.ring });
  }

  /** One pass; `signal` (a lost leadership) stops it between writes and aborts the one in flight. */
  async sync(signal?: AbortSignal): Promise<ShardSyncResult> {
    const membership = await this.#reader.read();
    const result: ShardSyncResult = { membership, applied: [], skipped: [] };
    if (membership.live.length === 0) return result;
    const namespaces = await this.#list<NamespaceInfo>(corePath('namespaces', undefined), signal);
    const providerConfigs = await this.#list<ProviderConfig>(k8orPath('ProviderConfig', undefined), signal);
    const context = {
      namespace: byName(namespaces),
      providerConfig: byName(providerConfigs),
      providers: this.#options.providers,
      clusterId: this.#options.clusterId,
    };
    const resources = new Map<ShardedObject, ManagedResource>();
    for (const kind of this.#options.kinds ?? MANAGED_KINDS) {
      for (const resource of await this.#list<ManagedResource>(k8orPath(kind, undefined), signal)) {
        resources.set({ ...shardKeySourceOf(kind, resource, context), labels: resource.metadata.labels ?? {} }, resource);
      }
    }
    const changes = planShardLabels(resources.keys(), membership);
    // The fence: hold each dead shard's Lease before its objects move, so no replica of that name
    // can hold it, and work them, meanwhile. A shard that renewed after all keeps its objects.
    const fenced = new Map<string, boolean>();
    for (const change of changes) {
      if (change.action !== 'assign' || change.from === undefined || fenced.has(change.from)) continue;
      signal?.throwIfAborted();
      fenced.set(change.from, await this.#reader.takeOver(change.from, this.#options.identity ?? 'k8or-shard-assigner'));
    }
    for (const change of changes) {
      signal?.throwIfAborted();
      const resource = resources.get(change.object)!;
      const fencedOff = change.action === 'assign' && change.from !== undefined && !fenced.get(change.from);
      const written = !fencedOff && (await this.#apply(change, resource, signal));
      (written ? result.applied : result.skipped).push(change);
    }
    return result;
  }

  /**
   * Syncs every `intervalMs` (default 2 s) until `signal` aborts: the leader runs this while it
   * leads. Polling, not a watch, because a shard's expiry is a change of time, not of any object;
   * new objects wait at most one interval for their shard. A failed pass is logged and retried
   * at the next interval.
   */
  async run(signal: AbortSignal, intervalMs = 2_000): Promise<void> {
    while (!signal.aborted) {
      try {
        const result = await this.sync(signal);
        if (result.applied.length > 0 || result.skipped.length > 0) {
          this.#options.logger?.info({ live: result.membership.live, applied: result.applied.length, skipped: result.skipped.length }, 'shard assignment changed');
        }
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'shard assignment pass failed; retrying');
      }
      await sleepUnlessAborted(intervalMs, signal);
    }
  }

  close(): void {
    this.#rest.close();
  }

  /** One compare-and-swap label patch; false when the object changed or went since it was read. */
  async #apply(change: ShardLabelChange, resource: ManagedResource, signal: AbortSignal | undefined): Promise<boolean> {
    const kind = change.object.kind;
    const labels: Record<string, string | null> =
      change.action === 'assign' ? { [shardLabel(kind)]: change.shard, [drainLabel(kind)]: null }
      : change.action === 'drain' ? { [drainLabel(kind)]: 'true' }
      : { [drainLabel(kind)]: null };
    try {
      await this.#rest.patch(k8orPath(kind, resource.metadata.namespace, resource.metadata.name), {
        metadata: { resourceVersion: resource.metadata.resourceVersion, labels },
      }, 'merge', signal);
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && (error.status === 409 || error.status === 404)) return false;
      throw error;
    }
  }

  async #list<T>(path: string, signal: AbortSignal | undefined): Promise<T[]> {
    const list = (await this.#rest.request('GET', path, undefined, undefined, signal)).body as List<T>;
    return list.items ?? [];
  }
}

function byName<T extends { metadata: { name?: string } }>(items: readonly T[]): (name: string) => T | undefined {
  const map = new Map(items.map((item) => [item.metadata.name ?? '', item]));
  return (name) => map.get(name);
}
