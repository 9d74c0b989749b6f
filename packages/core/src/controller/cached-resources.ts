import type { ManagedKindName, ManagedResource, ManagedStatus } from '@k8or/api';
import type { Informer } from '../informer/informer.js';
import { isConflict } from '../kube/rest.js';
import type { ManagedPatch, ManagedResourceClient } from '../reconcile/ports.js';
import type { ManagedObject } from './controller.js';

/** The resourceVersion to wait for is not known (a write was refused as stale): read live until the cache agrees. */
const UNKNOWN = Symbol('unknown resourceVersion');
/** The cache index of managed objects by spec.name (their external name). */
const EXTERNAL_NAME_INDEX = 'k8or-external-name';

/**
 * A ManagedResourceClient that reads from the controllers' informer caches
 * instead of a live GET per reconcile, and writes through to the API server.
 *
 * A cached copy is used only when it is known to be at least as new as this
 * engine's own last write to that object: after each write the object's new
 * resourceVersion is awaited, and until the informer has delivered it, reads
 * of that object go to the API server. So a reconcile never decides on a copy
 * older than what it wrote itself, and the cache is never behind a live read
 * it made. Changes by others that the cache has not seen yet are caught by the
 * writes' resourceVersion preconditions (a 409, then a live read on the retry);
 * see ManagedPatch.guarded.
 *
 * An object missing from a synced cache (and not awaited) does not exist as
 * far as a reconcile needs to know: every key reaches the queue from the
 * informer, so one that is missing was deleted (the watch said so: the pass
 * that follows the finalizer's release needs no GET to learn it), and one
 * created since the cache's last event is queued again by its ADDED event.
 * Absence decides nothing but "nothing to do"; it never releases a finalizer
 * or starts a create.
 *
 * resourceVersions are only compared for equality, never ordered (they are
 * opaque to clients).
 */
export class CachedManagedResources implements ManagedResourceClient {
  readonly #live: ManagedResourceClient;
  readonly #informers = new Map<ManagedKindName, Informer<ManagedObject>>();
  /** `kind/namespace/name` → the resourceVersion the cache must show before it is read again. */
  readonly #awaiting = new Map<string, string | typeof UNKNOWN>();
  /** Reads served from the cache and from the API server (for tests and metrics). */
  readonly reads = { cached: 0, live: 0 };

  constructor(live: ManagedResourceClient) {
    this.#live = live;
  }

  /** Reads `kind` from this informer's cache from now on. */
  track(kind: ManagedKindName, informer: Informer<ManagedObject>): void {
    this.#informers.set(kind, informer);
    informer.cache.addIndex(EXTERNAL_NAME_INDEX, (obj) => (typeof obj.spec?.name === 'string' && obj.spec.name !== '' ? [obj.spec.name] : []));
    const seen = (obj: ManagedObject): void => {
      const key = keyOf(kind, obj.metadata?.namespace, obj.metadata?.name);
      if (this.#awaiting.get(key) === obj.metadata?.resourceVersion) this.#awaiting.delete(key);
    };
    informer.on('add', seen);
    informer.on('update', seen);
    // Gone from the cache: nothing of ours to wait for; the next read finds it absent.
    informer.on('delete', (obj) => this.#awaiting.delete(keyOf(kind, obj.metadata?.namespace, obj.metadata?.name)));
  }

  async get(kind: ManagedKindName, namespace: string, name: string, signal?: AbortSignal): Promise<ManagedResource | undefined> {
    const informer = this.#informers.get(kind);
    const key = keyOf(kind, namespace, name);
    if (informer?.hasSynced() && !this.#awaiting.has(key)) {
      const cached = informer.cache.get(namespace ? `${namespace}/${name}` : name);
      this.reads.cached++;
      return cached ? (ownCopy(informer, cached) as ManagedResource) : undefined;
    }
    this.reads.live++;
    const live = await this.#live.get(kind, namespace, name, signal);
    if (informer) this.#expect(informer, key, namespace, name, live?.metadata.resourceVersion);
    return live;
  }

  withExternalName(kind: ManagedKindName, externalName: string): ManagedResource[] {
    const informer = this.#informers.get(kind);
    if (!informer?.hasSynced()) return [];
    return informer.cache.byIndex(EXTERNAL_NAME_INDEX, externalName).map((obj) => ownCopy(informer, obj) as ManagedResource);
  }

  async patch(resource: ManagedResource, patch: ManagedPatch, signal?: AbortSignal): Promise<ManagedResource> {
    return await this.#written(resource, () => this.#live.patch(resource, patch, signal));
  }

  async writeStatus(resource: ManagedResource, status: ManagedStatus, signal?: AbortSignal): Promise<ManagedResource> {
    return await this.#written(resource, () => this.#live.writeStatus(resource, status, signal));
  }

  async #written(resource: ManagedResource, write: () => Promise<ManagedResource>): Promise<ManagedResource> {
    const { namespace = '', name = '' } = resource.metadata;
    const key = keyOf(resource.kind, namespace, name);
    const informer = this.#informers.get(resource.kind);
    try {
      const stored = await write();
      if (informer) {
        // A write that took the last finalizer off a deleting object deleted it, and the cache never
        // shows that version: its DELETED event ends the wait, and when that event came before this
        // answer (the watch and the write are two connections, read in whatever order) there is
        // nothing left to wait for.
        const deleted = stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length;
        if (deleted && !informer.cache.get(namespace ? `${namespace}/${name}` : name)) this.#awaiting.delete(key);
        else this.#expect(informer, key, namespace, name, stored.metadata.resourceVersion);
      }
      return stored;
    } catch (error) {
      // Our copy was stale: read live until the cache has caught up with the object as it is.
      if (isConflict(error)) this.#awaiting.set(key, UNKNOWN);
      throw error;
    }
  }

  /** Waits for the cache to show `resourceVersion`, unless it already does (the watch event can beat the response). */
  #expect(informer: Informer<ManagedObject>, key: string, namespace: string, name: string, resourceVersion: string | undefined): void {
    const cached = informer.cache.get(namespace ? `${namespace}/${name}` : name);
    if (resourceVersion === undefined || cached?.metadata?.resourceVersion === resourceVersion) this.#awaiting.delete(key);
    else this.#awaiting.set(key, resourceVersion);
  }
}

/** Objects a cache shares with every other reader are copied: the reconcile and the provider get their own. */
function ownCopy(informer: Informer<ManagedObject>, obj: ManagedObject): ManagedObject {
  return informer.cache.copies ? obj : structuredClone(obj);
}

function keyOf(kind: string, namespace: string | undefined, name: string | undefined): string {
  return `${kind}/${namespace ?? ''}/${name ?? ''}`;
}
