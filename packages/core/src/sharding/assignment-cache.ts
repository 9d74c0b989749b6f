import { GROUP, KINDS, VERSION, type ManagedKindName, type ProviderConfig } from '@k8or/api';
import type { Logger } from 'pino';
import { createInformer, type Informer } from '../informer/informer.js';
import type { ObjectWithMetadata } from '../informer/object-key.js';
import type { KubeAccess } from '../kube/access.js';
import type { NamespaceInfo } from '../reconcile/ports.js';
import { shardLabel } from './labels.js';
import { StringPool, namespaceRecordOf, providerConfigRecordOf, sameButVersion, shardRecordOf, type ShardRecord } from './shard-record.js';

type NamespaceRecord = NamespaceInfo & ObjectWithMetadata;

export interface AssignmentCacheOptions {
  kubeConfig: KubeAccess;
  kinds: readonly ManagedKindName[];
  logger?: Logger;
}

/**
 * What the assigner watches between its full passes: a flat record (`ShardRecord`) of every
 * Bucket and Table that has no shard (new, or let go by a drained shard), and the Namespaces and
 * ProviderConfigs the shard keys depend on. An object leaves the watch when it gets its shard,
 * so what this holds falls to nothing once everything is assigned: the leader keeps no record
 * of the objects the shards hold. `changed()` tells when something a plan depends on changed; a
 * write that touches nothing of it (a status update, a user's label) does not count.
 */
export class AssignmentCache {
  readonly #records = new Map<ManagedKindName, Informer<ShardRecord>>();
  readonly #namespaces: Informer<NamespaceRecord>;
  readonly #providerConfigs: Informer<ProviderConfig>;
  /** Records known to be older than the object (the assigner wrote it since), by kind: cache key → that record's resourceVersion. */
  readonly #outdated = new Map<ManagedKindName, Map<string, string | undefined>>();
  #waiters: (() => void)[] = [];
  /** Bumped on every change of a Namespace or ProviderConfig: the shard keys computed before may be stale. */
  #contextVersion = 0;

  constructor(options: AssignmentCacheOptions) {
    const common = { kubeConfig: options.kubeConfig, ...(options.logger ? { logger: options.logger } : {}) };
    const pool = new StringPool();
    for (const kind of options.kinds) {
      // A record made for an update keeps the key string of the record it replaces: the one the map holds.
      const keptKey = (key: string): string | undefined => informer.cache.get(key)?.cacheKey;
      const informer: Informer<ShardRecord> = createInformer<ShardRecord>({
        ...common,
        group: GROUP,
        version: VERSION,
        plural: KINDS[kind].plural,
        labelSelector: `!${shardLabel(kind)}`,
        transform: (object) => shardRecordOf(kind, object, pool, keptKey),
        namespaceIndex: false,
      });
      this.#watch(informer, () => undefined, (a, b) => a.samePlanInputs(b));
      const outdated = new Map<string, string | undefined>();
      informer.on('delete', (record) => outdated.delete(record.cacheKey));
      this.#outdated.set(kind, outdated);
      this.#records.set(kind, informer);
    }
    this.#namespaces = createInformer<NamespaceRecord>({ ...common, group: '', version: 'v1', plural: 'namespaces', transform: namespaceRecordOf });
    this.#providerConfigs = createInformer<ProviderConfig>({ ...common, group: GROUP, version: VERSION, plural: KINDS.ProviderConfig.plural, transform: providerConfigRecordOf });
    for (const informer of [this.#namespaces, this.#providerConfigs] as Informer<ObjectWithMetadata>[]) {
      this.#watch(informer, () => this.#contextVersion++, sameButVersion);
      informer.on('delete', () => {
        this.#contextVersion++;
        this.#notify();
      });
    }
  }

  /** Lists and starts watching; resolves once every cache holds its first list, or `signal` aborted (then stopped). */
  async start(signal?: AbortSignal): Promise<void> {
    const stop = (): void => this.stop();
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) this.stop();
    try {
      await Promise.all(this.#informers().map((informer) => informer.start()));
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  }

  stop(): void {
    for (const informer of this.#informers()) informer.stop();
    this.#notify();
  }

  /** The records of one kind's objects without a shard, but for those known to be outdated (see `outdated`). */
  *records(kind: ManagedKindName): Generator<ShardRecord> {
    const informer = this.#records.get(kind);
    const outdated = this.#outdated.get(kind);
    if (!informer || !outdated) return;
    for (const record of informer.cache.list()) {
      // Looked up by the key the record keeps: a pass makes no string per record.
      if (outdated.size > 0 && outdated.has(record.cacheKey)) {
        if (outdated.get(record.cacheKey) === record.metadata.resourceVersion) continue;
        outdated.delete(record.cacheKey);
      }
      yield record;
    }
  }

  /**
   * The object of `record` changed since (the assigner wrote it, or a write of its was refused):
   * leave this cache's record of it out of plans until the watch brings a newer one, so no write
   * is made from a copy known to be old. `record` may come from a full pass's list.
   */
  outdated(kind: ManagedKindName, record: ShardRecord): void {
    // Only a record this cache holds: the watch's delete of it is what forgets the mark again.
    if (this.#records.get(kind)?.cache.get(record.cacheKey) === undefined) return;
    this.#outdated.get(kind)?.set(record.cacheKey, record.metadata.resourceVersion);
  }

  namespace(name: string): NamespaceInfo | undefined {
    return this.#namespaces.cache.get(name);
  }

  providerConfig(name: string): ProviderConfig | undefined {
    return this.#providerConfigs.cache.get(name);
  }

  /** Changes with every change of a Namespace or ProviderConfig. */
  get contextVersion(): number {
    return this.#contextVersion;
  }

  /** Resolves at the next change a plan depends on, or at once when `signal` aborts. */
  changed(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.#waiters.push(done);
    });
  }

  #informers(): Informer<ObjectWithMetadata>[] {
    return [...this.#records.values(), this.#namespaces, this.#providerConfigs] as Informer<ObjectWithMetadata>[];
  }

  /** Wakes the waiters of `changed()` on an add, and on an update unless `same` says the plan reads nothing new. */
  #watch<T extends ObjectWithMetadata>(informer: Informer<T>, onChange: () => void, same: (a: T, b: T) => boolean): void {
    informer.on('add', () => {
      onChange();
      this.#notify();
    });
    informer.on('update', (record, old) => {
      if (old && same(old, record)) return;
      onChange();
      this.#notify();
    });
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
