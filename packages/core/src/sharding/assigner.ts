import { MANAGED_KINDS, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import type { KubeAccess } from '../kube/access.js';
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

  async sync(): Promise<ShardSyncResult> {
    const membership = await this.#reader.read();
    const result: ShardSyncResult = { membership, applied: [], skipped: [] };
    if (membership.live.length === 0) return result;
    const namespaces = await this.#list<NamespaceInfo>(corePath('namespaces', undefined));
    const providerConfigs = await this.#list<ProviderConfig>(k8orPath('ProviderConfig', undefined));
    const context = {
      namespace: byName(namespaces),
      providerConfig: byName(providerConfigs),
      providers: this.#options.providers,
      clusterId: this.#options.clusterId,
    };
    const resources = new Map<ShardedObject, ManagedResource>();
    for (const kind of this.#options.kinds ?? MANAGED_KINDS) {
      for (const resource of await this.#list<ManagedResource>(k8orPath(kind, undefined))) {
        resources.set({ ...shardKeySourceOf(kind, resource, context), labels: resource.metadata.labels ?? {} }, resource);
      }
    }
    const changes = planShardLabels(resources.keys(), membership);
    // The fence: hold each dead shard's Lease before its objects move, so no replica of that name
    // can hold it, and work them, meanwhile. A shard that renewed after all keeps its objects.
    const fenced = new Map<string, boolean>();
    for (const change of changes) {
      if (change.action !== 'assign' || change.from === undefined || fenced.has(change.from)) continue;
      fenced.set(change.from, await this.#reader.takeOver(change.from, this.#options.identity ?? 'k8or-shard-assigner'));
    }
    for (const change of changes) {
      const resource = resources.get(change.object)!;
      const fencedOff = change.action === 'assign' && change.from !== undefined && !fenced.get(change.from);
      const written = !fencedOff && (await this.#apply(change, resource));
      (written ? result.applied : result.skipped).push(change);
    }
    return result;
  }

  close(): void {
    this.#rest.close();
  }

  /** One compare-and-swap label patch; false when the object changed or went since it was read. */
  async #apply(change: ShardLabelChange, resource: ManagedResource): Promise<boolean> {
    const kind = change.object.kind;
    const labels: Record<string, string | null> =
      change.action === 'assign' ? { [shardLabel(kind)]: change.shard, [drainLabel(kind)]: null }
      : change.action === 'drain' ? { [drainLabel(kind)]: 'true' }
      : { [drainLabel(kind)]: null };
    try {
      await this.#rest.patch(k8orPath(kind, resource.metadata.namespace, resource.metadata.name), {
        metadata: { resourceVersion: resource.metadata.resourceVersion, labels },
      });
      return true;
    } catch (error) {
      if (error instanceof KubeApiError && (error.status === 409 || error.status === 404)) return false;
      throw error;
    }
  }

  async #list<T>(path: string): Promise<T[]> {
    const list = (await this.#rest.request('GET', path)).body as List<T>;
    return list.items ?? [];
  }
}

function byName<T extends { metadata: { name?: string } }>(items: readonly T[]): (name: string) => T | undefined {
  const map = new Map(items.map((item) => [item.metadata.name ?? '', item]));
  return (name) => map.get(name);
}
