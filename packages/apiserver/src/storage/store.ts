/**
 * The object store: every object of every resource, keyed by resource then "namespace/name",
 * with one global, monotonic resourceVersion counter (as etcd's revision is for kube-apiserver).
 * Stored objects are owned by the store: callers get them read-only and clone before changing.
 */
import type { KubeObject } from '../types.js';
import { metadataOf } from '../util.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: WatchEventType;
  resourceKey: string;
  namespace: string;
  name: string;
  /** resourceVersion of this change. */
  rv: number;
  object: KubeObject;
  /** State before the change (MODIFIED and DELETED). */
  oldObject?: KubeObject;
}

export interface StoreSnapshot {
  resourceVersion: number;
  resources: Record<string, KubeObject[]>;
}

export function objectKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class ObjectStore {
  private rv = 0;
  private readonly data = new Map<string, Map<string, KubeObject>>();
  private readonly listeners: Array<(event: StoreEvent) => void> = [];

  /** The latest resourceVersion handed out. */
  get resourceVersion(): number {
    return this.rv;
  }

  onEvent(listener: (event: StoreEvent) => void): void {
    this.listeners.push(listener);
  }

  get(resourceKey: string, namespace: string, name: string): KubeObject | undefined {
    return this.data.get(resourceKey)?.get(objectKey(namespace, name));
  }

  /** Objects of one resource (optionally one namespace), ordered by namespace/name like etcd keys. */
  list(resourceKey: string, namespace?: string): KubeObject[] {
    const objects = this.data.get(resourceKey);
    if (!objects) return [];
    const keys = [...objects.keys()].sort();
    const prefix = namespace ? `${namespace}/` : undefined;
    const out: KubeObject[] = [];
    for (const k of keys) {
      if (prefix && !k.startsWith(prefix)) continue;
      out.push(objects.get(k) as KubeObject);
    }
    return out;
  }

  count(resourceKey: string, namespace?: string): number {
    const objects = this.data.get(resourceKey);
    if (!objects) return 0;
    if (!namespace) return objects.size;
    let n = 0;
    for (const k of objects.keys()) if (k.startsWith(`${namespace}/`)) n++;
    return n;
  }

  /** Store a new object; assigns its resourceVersion and emits ADDED. */
  create(resourceKey: string, namespace: string, name: string, object: KubeObject): KubeObject {
    return this.write('ADDED', resourceKey, namespace, name, object);
  }

  update(resourceKey: string, namespace: string, name: string, object: KubeObject): KubeObject {
    return this.write('MODIFIED', resourceKey, namespace, name, object);
  }

  /**
   * Remove an object; the DELETED event carries it (or `finalState`, when an update that removed the
   * last finalizer is what deletes it) with the deletion's resourceVersion.
   */
  delete(resourceKey: string, namespace: string, name: string, finalState?: KubeObject): KubeObject | undefined {
    const objects = this.data.get(resourceKey);
    const key = objectKey(namespace, name);
    const old = objects?.get(key);
    if (!objects || !old) return undefined;
    objects.delete(key);
    this.rv += 1;
    const last = finalState ?? old;
    const gone = { ...last, metadata: { ...metadataOf(last), resourceVersion: String(this.rv) } };
    this.emit({ type: 'DELETED', resourceKey, namespace, name, rv: this.rv, object: gone, oldObject: old });
    return gone;
  }

  /** Drop every object of a resource silently (CRD removal after cleanup). */
  dropResource(resourceKey: string): void {
    this.data.delete(resourceKey);
  }

  snapshot(): StoreSnapshot {
    const resources: Record<string, KubeObject[]> = {};
    for (const [key, objects] of this.data) resources[key] = [...objects.values()];
    return { resourceVersion: this.rv, resources };
  }

  load(snapshot: StoreSnapshot): void {
    this.data.clear();
    this.rv = snapshot.resourceVersion;
    for (const [resourceKey, objects] of Object.entries(snapshot.resources)) {
      const map = new Map<string, KubeObject>();
      for (const obj of objects) {
        const meta = metadataOf(obj);
        map.set(objectKey(String(meta['namespace'] ?? ''), String(meta['name'] ?? '')), obj);
      }
      this.data.set(resourceKey, map);
    }
  }

  private write(type: WatchEventType, resourceKey: string, namespace: string, name: string, object: KubeObject): KubeObject {
    let objects = this.data.get(resourceKey);
    if (!objects) this.data.set(resourceKey, (objects = new Map()));
    const key = objectKey(namespace, name);
    const old = objects.get(key);
    this.rv += 1;
    metadataOf(object)['resourceVersion'] = String(this.rv);
    objects.set(key, object);
    const event: StoreEvent = { type, resourceKey, namespace, name, rv: this.rv, object };
    if (old) event.oldObject = old;
    this.emit(event);
    return object;
  }

  private emit(event: StoreEvent): void {
    for (const l of this.listeners) l(event);
  }
}
