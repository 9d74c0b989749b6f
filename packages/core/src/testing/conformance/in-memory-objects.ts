import type { ManagedKindName, ManagedResource, ManagedStatus, ProviderConfig } from '@k8or/api';
import { KubeApiError } from '../../kube/rest.js';
import type { ConfigLookups, EventRecorder, InvolvedObject, ManagedPatch, ManagedResourceClient, NamespaceInfo, OutputsWriter, SecretData } from '../../reconcile/ports.js';

/**
 * The engine's ports held in memory, for driving a ManagedReconciler without
 * an API server: objects with resourceVersion, generation and finalizer
 * semantics, every write counted, and a hook that can fail any write (the
 * conformance kit simulates a crash with it).
 */
export class InMemoryObjects implements ManagedResourceClient {
  readonly #objects = new Map<string, ManagedResource>();
  #version = 0;
  /** Every API write, in order (`patch ns/name`, `status ns/name`). */
  readonly writes: string[] = [];
  /** Runs before every write; throw from it to make the write fail. */
  beforeWrite: ((write: { verb: 'patch' | 'status'; resource: ManagedResource; patch?: ManagedPatch }) => void) | undefined;

  static key(kind: string, namespace: string, name: string): string {
    return `${kind}/${namespace}/${name}`;
  }

  /** Stores a new object (as `kubectl apply` would), with generation 1. */
  put(resource: ManagedResource): ManagedResource {
    const stored = structuredClone(resource);
    stored.metadata = {
      ...stored.metadata,
      generation: 1,
      resourceVersion: String(++this.#version),
      uid: stored.metadata.uid ?? `uid-${this.#version}`,
      creationTimestamp: stored.metadata.creationTimestamp ?? new Date().toISOString(),
    };
    this.#objects.set(InMemoryObjects.key(stored.kind, stored.metadata.namespace ?? '', stored.metadata.name ?? ''), stored);
    return structuredClone(stored);
  }

  /** Marks the object deleted (as `kubectl delete` does while finalizers remain); gone once no finalizer is left. */
  markDeleted(kind: ManagedKindName, namespace: string, name: string, at = new Date().toISOString()): void {
    const key = InMemoryObjects.key(kind, namespace, name);
    const current = this.#objects.get(key);
    if (!current) return;
    if (!current.metadata.finalizers?.length) {
      this.#objects.delete(key);
      return;
    }
    current.metadata.deletionTimestamp ??= at;
    current.metadata.resourceVersion = String(++this.#version);
  }

  /** Changes the spec of a stored object as `kubectl apply` would: a new generation and resourceVersion. */
  editSpec(kind: ManagedKindName, namespace: string, name: string, edit: (spec: Record<string, unknown>) => void): void {
    const current = this.#objects.get(InMemoryObjects.key(kind, namespace, name));
    if (!current) throw new Error(`${kind} ${namespace}/${name} not found`);
    edit(current.spec as Record<string, unknown>);
    current.metadata.generation = (current.metadata.generation ?? 1) + 1;
    current.metadata.resourceVersion = String(++this.#version);
  }

  /** Changes the metadata of a stored object (annotations, say) as a client would: a new resourceVersion, same generation. */
  editMetadata(kind: ManagedKindName, namespace: string, name: string, edit: (metadata: ManagedResource['metadata']) => void): void {
    const current = this.#objects.get(InMemoryObjects.key(kind, namespace, name));
    if (!current) throw new Error(`${kind} ${namespace}/${name} not found`);
    edit(current.metadata);
    current.metadata.resourceVersion = String(++this.#version);
  }

  /** The stored object (a copy), or undefined. */
  peek(kind: ManagedKindName, namespace: string, name: string): ManagedResource | undefined {
    const found = this.#objects.get(InMemoryObjects.key(kind, namespace, name));
    return found ? structuredClone(found) : undefined;
  }

  withExternalName(kind: ManagedKindName, externalName: string): ManagedResource[] {
    return [...this.#objects.values()].filter((o) => o.kind === kind && o.spec.name === externalName).map((o) => structuredClone(o));
  }

  async get(kind: ManagedKindName, namespace: string, name: string, signal?: AbortSignal): Promise<ManagedResource | undefined> {
    signal?.throwIfAborted();
    return this.peek(kind, namespace, name);
  }

  async patch(resource: ManagedResource, patch: ManagedPatch, signal?: AbortSignal): Promise<ManagedResource> {
    signal?.throwIfAborted();
    const key = InMemoryObjects.key(resource.kind, resource.metadata.namespace ?? '', resource.metadata.name ?? '');
    const current = this.#objects.get(key);
    if (!current) throw KubeApiError.fromResponse('PATCH', key, 404, { reason: 'NotFound', message: `${key} not found` });
    if ((patch.finalizers || patch.guarded) && resource.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw KubeApiError.fromResponse('PATCH', key, 409, { reason: 'Conflict', message: 'the object has been modified' });
    }
    this.beforeWrite?.({ verb: 'patch', resource: current, patch });
    this.writes.push(`patch ${key}`);
    const annotations = { ...current.metadata.annotations };
    for (const [name, value] of Object.entries(patch.annotations ?? {})) {
      if (value === null) delete annotations[name];
      else annotations[name] = value;
    }
    current.metadata.annotations = annotations;
    if (patch.finalizers) current.metadata.finalizers = [...patch.finalizers];
    if (patch.specName !== undefined && current.spec.name !== patch.specName) {
      current.spec.name = patch.specName;
      current.metadata.generation = (current.metadata.generation ?? 1) + 1;
    }
    current.metadata.resourceVersion = String(++this.#version);
    if (current.metadata.deletionTimestamp && !current.metadata.finalizers?.length) this.#objects.delete(key);
    return structuredClone(current);
  }

  async writeStatus(resource: ManagedResource, status: ManagedStatus, signal?: AbortSignal): Promise<ManagedResource> {
    signal?.throwIfAborted();
    const key = InMemoryObjects.key(resource.kind, resource.metadata.namespace ?? '', resource.metadata.name ?? '');
    const current = this.#objects.get(key);
    if (!current) throw KubeApiError.fromResponse('PUT', key, 404, { reason: 'NotFound', message: `${key} not found` });
    if (resource.metadata.resourceVersion !== current.metadata.resourceVersion) {
      throw KubeApiError.fromResponse('PUT', key, 409, { reason: 'Conflict', message: 'the object has been modified' });
    }
    this.beforeWrite?.({ verb: 'status', resource: current });
    this.writes.push(`status ${key}`);
    current.status = structuredClone(status);
    current.metadata.resourceVersion = String(++this.#version);
    return structuredClone(current);
  }
}

/** ConfigLookups over values a test can change at any time (a credentials switch, a ProviderConfig edit). */
export class InMemoryLookups implements ConfigLookups {
  readonly providerConfigs = new Map<string, ProviderConfig>();
  readonly secrets = new Map<string, SecretData>();
  readonly namespaces = new Map<string, NamespaceInfo>();

  async namespace(name: string): Promise<NamespaceInfo | undefined> {
    return this.namespaces.get(name);
  }
  async providerConfig(name: string): Promise<ProviderConfig | undefined> {
    return this.providerConfigs.get(name);
  }
  async secret(namespace: string, name: string): Promise<SecretData | undefined> {
    return this.secrets.get(`${namespace}/${name}`);
  }
}

/** One recorded Event. */
export interface RecordedEvent {
  object: InvolvedObject;
  type: string;
  reason: string;
  message: string;
}

/** Keeps every Event in memory. */
export class InMemoryEvents implements EventRecorder {
  readonly events: RecordedEvent[] = [];
  async record(object: InvolvedObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    this.events.push({ object, type, reason, message });
  }
  /** Events about one object. */
  about(name: string): RecordedEvent[] {
    return this.events.filter((e) => e.object.name === name);
  }
}

/** Outputs are not the provider's business: the kit publishes none. */
export const noOutputs: OutputsWriter = { publish: async () => 'unchanged', remove: async () => {} };
