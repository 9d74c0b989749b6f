/**
 * The namespace controller: a deleted namespace turns Terminating, everything in it is deleted
 * (finalizers respected), and the namespace goes once it is empty.
 */
import { clone, isObject, metadataOf } from '../util.js';
import { commitDeletion, planDeletion } from '../registry/lifecycle.js';
import { finalizersOf, isTerminating } from '../registry/meta.js';
import type { ResourceRegistry } from '../registry/registry.js';
import type { ObjectStore, StoreEvent } from '../storage/store.js';
import { CoalescingScheduler } from './coalescing-scheduler.js';

const NAMESPACES = '/namespaces';

export class NamespaceController {
  private readonly scheduler = new CoalescingScheduler((name) => this.reconcile(name));

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
  ) {
    store.onEvent((event) => this.onEvent(event));
  }

  stop(): void {
    this.scheduler.stop();
  }

  /** Pick up namespaces left terminating (after loading a snapshot). */
  resync(): void {
    for (const ns of this.store.list(NAMESPACES)) if (isTerminating(ns)) this.schedule(String(metadataOf(ns)['name']));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resourceKey === NAMESPACES) {
      if (event.type === 'MODIFIED' && isTerminating(event.object)) this.schedule(event.name);
      return;
    }
    if (event.type === 'DELETED' && event.namespace) {
      const ns = this.store.get(NAMESPACES, '', event.namespace);
      if (ns && isTerminating(ns)) this.schedule(event.namespace);
    }
  }

  private schedule(name: string): void {
    this.scheduler.schedule(name);
  }

  private reconcile(name: string): void {
    const ns = this.store.get(NAMESPACES, '', name);
    if (!ns || !isTerminating(ns)) return;
    let remaining = 0;
    for (const type of this.registry.all()) {
      if (!type.namespaced || type.conversion) continue;
      for (const obj of this.store.list(type.key, name)) {
        if (!isTerminating(obj)) commitDeletion(this.store, type, obj, planDeletion(type, obj));
      }
      remaining += this.store.count(type.key, name);
    }
    if (remaining > 0) return;
    const next = clone(ns);
    const spec = isObject(next['spec']) ? next['spec'] : {};
    delete spec['finalizers'];
    next['spec'] = spec;
    if (finalizersOf(next).length === 0) this.store.delete(NAMESPACES, '', name, next);
    else if (isObject(ns['spec']) && Array.isArray(ns['spec']['finalizers'])) this.store.update(NAMESPACES, '', name, next);
  }
}
