/**
 * A small garbage collector, as kube-controller-manager's does it in the background: when an object is
 * deleted, dependents whose ownerReferences all point at deleted objects are deleted too, through the
 * API as any client deletes (admission webhooks may refuse; finalizers hold), and references to the
 * deleted owner are dropped from dependents that keep another owner. A refused delete is tried again
 * with backoff. Foreground deletion is not modelled (the owner goes first, its dependents right after).
 */
import type { KubeObject } from '../types.js';
import { clone, isObject, metadataOf } from '../util.js';
import { isTerminating } from '../registry/meta.js';
import type { ResourceRegistry } from '../registry/registry.js';
import type { ResourceType } from '../registry/types.js';
import type { ObjectStore, StoreEvent } from '../storage/store.js';
import type { DeleteThroughApi } from './api.js';
import { CoalescingScheduler } from './coalescing-scheduler.js';

function ownerUids(obj: KubeObject): string[] {
  const refs = metadataOf(obj)['ownerReferences'];
  return Array.isArray(refs) ? refs.filter(isObject).map((r) => String(r['uid'] ?? '')) : [];
}

/** Same uid and the same owner references, as far as the index goes. */
function sameIdentity(a: KubeObject, b: KubeObject): boolean {
  const ma = metadataOf(a);
  const mb = metadataOf(b);
  if (ma['uid'] !== mb['uid'] || ma['namespace'] !== mb['namespace'] || ma['name'] !== mb['name']) return false;
  if (ma['ownerReferences'] === mb['ownerReferences']) return true;
  const ua = ownerUids(a);
  const ub = ownerUids(b);
  return ua.length === ub.length && ua.every((uid, i) => uid === ub[i]);
}

export class GarbageCollector {
  /** owners deleted since the last collection: "namespace\0uid" */
  private readonly pendingOwners = new Set<string>();
  /** uids of every stored object */
  private readonly liveUids = new Set<string>();
  /** owner uid -> dependents ("resourceKey\0namespace\0name") */
  private readonly dependents = new Map<string, Set<string>>();
  /** One collection at a time, run again for owners deleted meanwhile, and with backoff after a refused delete. */
  private readonly scheduler = new CoalescingScheduler(() => this.collect());

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly deleteThroughApi: DeleteThroughApi,
  ) {
    store.onEvent((event) => this.onEvent(event));
  }

  /** Index every object of every stored resource (after loading a snapshot, CRDs included). */
  resync(): void {
    this.liveUids.clear();
    this.dependents.clear();
    for (const type of this.registry.all()) for (const obj of this.store.list(type.key)) this.index(type.key, obj, true);
  }

  private index(resourceKey: string, obj: KubeObject, add: boolean): void {
    const meta = metadataOf(obj);
    const uid = meta['uid'];
    if (typeof uid === 'string') {
      if (add) this.liveUids.add(uid);
      else this.liveUids.delete(uid);
    }
    const ref = `${resourceKey}\u0000${String(meta['namespace'] ?? '')}\u0000${String(meta['name'] ?? '')}`;
    for (const owner of ownerUids(obj)) {
      let set = this.dependents.get(owner);
      if (add) {
        if (!set) this.dependents.set(owner, (set = new Set()));
        set.add(ref);
      } else if (set) {
        set.delete(ref);
        if (set.size === 0) this.dependents.delete(owner);
      }
    }
  }

  stop(): void {
    this.scheduler.stop();
  }

  /** Remove references to `ownerUid` from its dependents without deleting them (propagationPolicy Orphan). */
  orphanDependents(ownerUid: string, namespace: string): void {
    for (const { type, obj } of this.dependentsOf(ownerUid, namespace)) {
      const next = clone(obj);
      const meta = metadataOf(next);
      const refs = (meta['ownerReferences'] as unknown[]).filter((r) => !(isObject(r) && r['uid'] === ownerUid));
      if (refs.length > 0) meta['ownerReferences'] = refs;
      else delete meta['ownerReferences'];
      this.store.update(type.key, String(meta['namespace'] ?? ''), String(meta['name'] ?? ''), next);
    }
  }

  private onEvent(event: StoreEvent): void {
    // most updates keep the uid and the owners: nothing in the index changes
    if (event.type === 'MODIFIED' && event.oldObject && sameIdentity(event.oldObject, event.object)) return;
    if (event.oldObject) this.index(event.resourceKey, event.oldObject, false);
    if (event.type !== 'DELETED') {
      this.index(event.resourceKey, event.object, true);
      return;
    }
    this.index(event.resourceKey, event.object, false);
    const uid = metadataOf(event.object)['uid'];
    if (typeof uid !== 'string') return;
    this.pendingOwners.add(`${event.namespace}\u0000${uid}`);
    this.scheduler.schedule('owners');
  }

  private *dependentsOf(ownerUid: string, namespace: string): Generator<{ type: ResourceType; obj: KubeObject }> {
    for (const ref of [...(this.dependents.get(ownerUid) ?? [])]) {
      const [resourceKey = '', ns = '', name = ''] = ref.split('\u0000');
      // a namespaced owner has dependents in its namespace only; a cluster-scoped one anywhere
      if (namespace && ns !== namespace) continue;
      const type = this.registry.byKey(resourceKey);
      const obj = type ? this.store.get(resourceKey, ns, name) : undefined;
      if (type && obj) yield { type, obj };
    }
  }

  private exists(uid: string): boolean {
    return this.liveUids.has(uid);
  }

  private async collect(): Promise<void> {
    const owners = [...this.pendingOwners];
    this.pendingOwners.clear();
    const refused: string[] = [];
    for (const entry of owners) {
      const [namespace = '', uid = ''] = entry.split('\u0000');
      for (const { type, obj } of [...this.dependentsOf(uid, namespace)]) {
        const current = this.store.get(type.key, String(metadataOf(obj)['namespace'] ?? ''), String(metadataOf(obj)['name'] ?? ''));
        if (!current || isTerminating(current)) continue;
        const remaining = ownerUids(current).filter((u) => u !== uid && this.exists(u));
        if (remaining.length === 0) {
          const meta = metadataOf(current);
          try {
            await this.deleteThroughApi(type, String(meta['namespace'] ?? ''), String(meta['name'] ?? ''), String(meta['uid'] ?? ''));
          } catch (err) {
            // the owner stays pending, so the dependent is tried again
            this.pendingOwners.add(entry);
            refused.push(err instanceof Error ? err.message : String(err));
          }
        } else {
          const next = clone(current);
          const meta = metadataOf(next);
          meta['ownerReferences'] = (meta['ownerReferences'] as unknown[]).filter((r) => !(isObject(r) && r['uid'] === uid));
          this.store.update(type.key, String(meta['namespace'] ?? ''), String(meta['name'] ?? ''), next);
        }
      }
    }
    if (refused.length > 0) throw new Error(`garbage collection: ${refused.join('; ')}`);
  }
}
