/**
 * The CRD controller: serves a CRD's resource as soon as it is stored (names permitting), writes its
 * status (NamesAccepted, Established, acceptedNames, storedVersions), and on deletion removes every
 * custom resource before letting the CRD go.
 */
import type { KubeObject } from '../types.js';
import { clone, isObject, jsonEqual, metadataOf, nowIso } from '../util.js';
import { commitDeletion, CRD_CLEANUP_FINALIZER, CRD_KEY, planDeletion } from '../registry/lifecycle.js';
import { finalizersOf, isTerminating } from '../registry/meta.js';
import { crdNames, resourceTypeFromCrd, type ResourceRegistry } from '../registry/registry.js';
import type { ObjectStore, StoreEvent } from '../storage/store.js';
import type { SchemaCache } from '../registry/schema-cache.js';
import { CoalescingScheduler } from './coalescing-scheduler.js';

export class CrdController {
  private readonly scheduler = new CoalescingScheduler((name) => this.reconcile(name));

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: ResourceRegistry,
    private readonly schemas: SchemaCache,
  ) {
    store.onEvent((event) => this.onEvent(event));
  }

  /** Serve every stored CRD (after loading a snapshot). */
  resync(): void {
    for (const crd of this.store.list(CRD_KEY)) this.serve(crd);
  }

  stop(): void {
    this.scheduler.stop();
  }

  private onEvent(event: StoreEvent): void {
    if (event.resourceKey === CRD_KEY) {
      if (event.type === 'DELETED') {
        const type = this.registry.crdType(event.name);
        this.registry.stopServingCrd(event.name);
        if (type) this.store.dropResource(type.key);
        this.schemas.forget();
        return;
      }
      // served synchronously, so a CR can be created right after the CRD's create returns
      if (!isTerminating(event.object)) this.serve(event.object);
      this.schedule(event.name);
      return;
    }
    if (event.type === 'DELETED') {
      const type = this.registry.byKey(event.resourceKey);
      if (type?.crdName) {
        const crd = this.store.get(CRD_KEY, '', type.crdName);
        if (crd && isTerminating(crd)) this.schedule(type.crdName);
      }
    }
  }

  private serve(crd: KubeObject): void {
    if (this.registry.namesConflict(crd)) return;
    const previous = this.registry.crdType(String(metadataOf(crd)['name']));
    const next = resourceTypeFromCrd(crd);
    if (previous && previous.key !== next.key) this.registry.stopServingCrd(previous.crdName ?? '');
    this.registry.serveCrd(crd);
  }

  private schedule(name: string): void {
    this.scheduler.schedule(name);
  }

  private reconcile(name: string): void {
    const crd = this.store.get(CRD_KEY, '', name);
    if (!crd) return;
    if (isTerminating(crd)) {
      this.cleanUp(crd);
      return;
    }
    const status = this.desiredStatus(crd);
    if (jsonEqual(status, crd['status'])) return;
    const next = clone(crd);
    next['status'] = status;
    this.store.update(CRD_KEY, '', name, next);
  }

  private desiredStatus(crd: KubeObject): Record<string, unknown> {
    const old = isObject(crd['status']) ? crd['status'] : {};
    const oldConditions = Array.isArray(old['conditions']) ? old['conditions'].filter(isObject) : [];
    const conflict = this.registry.namesConflict(crd);
    const condition = (type: string, ok: boolean, reason: string, message: string): Record<string, unknown> => {
      const previous = oldConditions.find((c) => c['type'] === type);
      const status = ok ? 'True' : 'False';
      const lastTransitionTime = previous && previous['status'] === status && typeof previous['lastTransitionTime'] === 'string' ? previous['lastTransitionTime'] : nowIso();
      return { type, status, lastTransitionTime, reason, message };
    };
    const names = crdNames(crd);
    const acceptedNames: Record<string, unknown> = { plural: names.plural, singular: names.singular, kind: names.kind, listKind: names.listKind };
    if (names.shortNames.length > 0) acceptedNames['shortNames'] = names.shortNames;
    if (names.categories.length > 0) acceptedNames['categories'] = names.categories;
    const spec = isObject(crd['spec']) ? crd['spec'] : {};
    const versions = Array.isArray(spec['versions']) ? spec['versions'].filter(isObject) : [];
    const stored = new Set(Array.isArray(old['storedVersions']) ? old['storedVersions'].filter((v): v is string => typeof v === 'string') : []);
    for (const v of versions) if (v['storage'] === true && typeof v['name'] === 'string') stored.add(v['name']);
    return {
      conditions: conflict
        ? [condition('NamesAccepted', false, 'MultipleNamesNotAllowed', conflict), condition('Established', false, 'NotAccepted', 'not all names are accepted')]
        : [condition('NamesAccepted', true, 'NoConflicts', 'no conflicts found'), condition('Established', true, 'InitialNamesAccepted', 'the initial names have been accepted')],
      acceptedNames: conflict ? (old['acceptedNames'] ?? { plural: '', kind: '' }) : acceptedNames,
      storedVersions: [...stored],
    };
  }

  /** Delete every custom resource of a terminating CRD; drop the cleanup finalizer once none remain. */
  private cleanUp(crd: KubeObject): void {
    const name = String(metadataOf(crd)['name']);
    const type = this.registry.crdType(name) ?? resourceTypeFromCrd(crd);
    for (const obj of this.store.list(type.key)) {
      if (isTerminating(obj)) continue;
      commitDeletion(this.store, type, obj, planDeletion(type, obj));
    }
    if (this.store.count(type.key) > 0) return;
    const finalizers = finalizersOf(crd).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    if (finalizers.length === finalizersOf(crd).length) return;
    const next = clone(crd);
    metadataOf(next)['finalizers'] = finalizers;
    if (finalizers.length === 0) {
      delete metadataOf(next)['finalizers'];
      this.store.delete(CRD_KEY, '', name, next);
    } else {
      this.store.update(CRD_KEY, '', name, next);
    }
  }
}
