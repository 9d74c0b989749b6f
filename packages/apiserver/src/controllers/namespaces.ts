/**
 * The namespace controller, as kube-controller-manager's: a deleted namespace turns Terminating,
 * everything in it is deleted through the API (so admission webhooks may refuse, and finalizers
 * hold), its status conditions say what is left and why, and the namespace goes once it is empty.
 * A refused delete is tried again with backoff; the namespace stays Terminating meanwhile.
 */
import type { KubeObject } from '../types.js';
import { clone, isObject, metadataOf, nowIso } from '../util.js';
import { finalizersOf, isTerminating } from '../registry/meta.js';
import type { ResourceRegistry } from '../registry/registry.js';
import { qualifiedResource } from '../status.js';
import type { ObjectStore, StoreEvent } from '../storage/store.js';
import type { DeleteThroughApi } from './api.js';
import { CoalescingScheduler } from './coalescing-scheduler.js';

const NAMESPACES = '/namespaces';

interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** What one pass over a terminating namespace found. */
interface ContentState {
  /** One error a resource type whose deletes failed, in the words the API answered. */
  deleteErrors: string[];
  /** `buckets.k8or.io has 2 resource instances`, sorted. */
  remaining: string[];
  /** `k8or.io/finalizer in 2 resource instances`, sorted. */
  finalizers: string[];
}

/** kube's namespace deletion conditions, in its order, each as kube words it when all is well and when not. */
function conditionsOf(state: ContentState): Array<Omit<NamespaceCondition, 'lastTransitionTime'>> {
  const failed = state.deleteErrors;
  const aggregate = failed.length === 1 ? failed[0] : `[${failed.join(', ')}]`;
  return [
    { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    failed.length > 0
      ? { type: 'NamespaceDeletionContentFailure', status: 'True', reason: 'ContentDeletionFailed', message: `Failed to delete all resource types, ${failed.length} remaining: ${aggregate}` }
      : { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    state.remaining.length > 0
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${state.remaining.join(', ')}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    state.finalizers.length > 0
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${state.finalizers.join(', ')}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
}

export class NamespaceController {
  private readonly scheduler = new CoalescingScheduler((name) => this.reconcile(name));

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly deleteThroughApi: DeleteThroughApi,
  ) {
    store.onEvent((event) => this.onEvent(event));
  }

  stop(): void {
    this.scheduler.stop();
  }

  /** Pick up namespaces left terminating (after loading a snapshot). */
  resync(): void {
    for (const ns of this.store.list(NAMESPACES)) if (isTerminating(ns)) this.scheduler.schedule(String(metadataOf(ns)['name']));
  }

  private onEvent(event: StoreEvent): void {
    if (event.resourceKey === NAMESPACES) {
      if (event.type === 'MODIFIED' && isTerminating(event.object)) this.scheduler.schedule(event.name);
      return;
    }
    // content that goes, or changes (a protection lifted, a finalizer removed), is looked at again
    if (event.type !== 'ADDED' && event.namespace) {
      const ns = this.store.get(NAMESPACES, '', event.namespace);
      if (ns && isTerminating(ns)) this.scheduler.schedule(event.namespace);
    }
  }

  private async reconcile(name: string): Promise<void> {
    const ns = this.store.get(NAMESPACES, '', name);
    if (!ns || !isTerminating(ns)) return;
    const state: ContentState = { deleteErrors: [], remaining: [], finalizers: [] };
    const finalizerCounts = new Map<string, number>();
    for (const type of this.registry.all()) {
      if (!type.namespaced || type.conversion) continue;
      let deleteError: string | undefined;
      for (const obj of this.store.list(type.key, name)) {
        if (isTerminating(obj)) continue;
        const meta = metadataOf(obj);
        try {
          await this.deleteThroughApi(type, name, String(meta['name']), String(meta['uid'] ?? ''));
        } catch (err) {
          deleteError ??= err instanceof Error ? err.message : String(err);
        }
      }
      if (deleteError !== undefined) state.deleteErrors.push(deleteError);
      const left = this.store.list(type.key, name);
      if (left.length > 0) state.remaining.push(`${qualifiedResource(type.group, type.plural)} has ${left.length} resource instances`);
      for (const obj of left) for (const finalizer of finalizersOf(obj)) finalizerCounts.set(finalizer, (finalizerCounts.get(finalizer) ?? 0) + 1);
    }
    state.remaining.sort();
    state.finalizers = [...finalizerCounts].map(([finalizer, count]) => `${finalizer} in ${count} resource instances`).sort();

    const latest = this.store.get(NAMESPACES, '', name);
    if (!latest || !isTerminating(latest)) return;
    const current = this.writeConditions(name, latest, state);
    if (state.deleteErrors.length > 0) throw new Error(`namespace ${name}: ${state.deleteErrors.join('; ')}`);
    if (state.remaining.length > 0) return;
    const next = clone(current);
    const spec = isObject(next['spec']) ? next['spec'] : {};
    delete spec['finalizers'];
    next['spec'] = spec;
    if (finalizersOf(next).length === 0) this.store.delete(NAMESPACES, '', name, next);
    else if (isObject(current['spec']) && Array.isArray(current['spec']['finalizers'])) this.store.update(NAMESPACES, '', name, next);
  }

  /** Store the conditions when they changed (a condition keeps its lastTransitionTime while its status holds). */
  private writeConditions(name: string, ns: KubeObject, state: ContentState): KubeObject {
    const status = isObject(ns['status']) ? ns['status'] : {};
    const existing = Array.isArray(status['conditions']) ? status['conditions'].filter(isObject) : [];
    const now = nowIso();
    const conditions: NamespaceCondition[] = conditionsOf(state).map((c) => {
      const before = existing.find((e) => e['type'] === c.type);
      const since = before && before['status'] === c.status && typeof before['lastTransitionTime'] === 'string' ? before['lastTransitionTime'] : now;
      return { type: c.type, status: c.status, lastTransitionTime: since, reason: c.reason, message: c.message };
    });
    const unchanged =
      existing.length === conditions.length &&
      conditions.every((c, i) => {
        const e = existing[i] ?? {};
        return e['type'] === c.type && e['status'] === c.status && e['reason'] === c.reason && e['message'] === c.message;
      });
    if (unchanged) return ns;
    const next = clone(ns);
    next['status'] = { ...status, conditions };
    return this.store.update(NAMESPACES, '', name, next);
  }
}
