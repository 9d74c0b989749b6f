import type { ManagedKindName, ManagedResource, ManagedStatus } from '@k8or/api';
import type { ManagedPatch, ManagedResourceClient } from '../reconcile/ports.js';
import { k8orPath } from './paths.js';
import type { KubeRest } from './rest.js';

/** ManagedResourceClient over the REST API: live GETs, merge patches, PUT on /status. (The engine reads through CachedManagedResources.) */
export class KubeManagedResources implements ManagedResourceClient {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  async get(kind: ManagedKindName, namespace: string, name: string, signal?: AbortSignal): Promise<ManagedResource | undefined> {
    return await this.#rest.get<ManagedResource>(k8orPath(kind, namespace, name), signal);
  }

  async patch(resource: ManagedResource, patch: ManagedPatch, signal?: AbortSignal): Promise<ManagedResource> {
    const metadata: Record<string, unknown> = {};
    if (patch.annotations) metadata.annotations = patch.annotations;
    // A merge patch replaces the whole finalizer list; the precondition keeps us
    // from dropping a finalizer someone else added since we read the object.
    if (patch.finalizers) metadata.finalizers = patch.finalizers;
    if (patch.finalizers || patch.guarded) metadata.resourceVersion = resource.metadata.resourceVersion;
    const body: Record<string, unknown> = { metadata };
    if (patch.specName !== undefined) body.spec = { name: patch.specName };
    return await this.#rest.patch<ManagedResource>(k8orPath(resource.kind, resource.metadata.namespace, resource.metadata.name), body, 'merge', signal);
  }

  /**
   * A PUT on /status with only what the server reads from it: identity, the
   * resourceVersion precondition, and status. The server keeps the stored
   * metadata and spec (and managedFields, which would be half the body).
   */
  async writeStatus(resource: ManagedResource, status: ManagedStatus, signal?: AbortSignal): Promise<ManagedResource> {
    const { name, namespace, uid, resourceVersion } = resource.metadata;
    return await this.#rest.update<ManagedResource>(
      k8orPath(resource.kind, namespace, name, 'status'),
      { apiVersion: resource.apiVersion, kind: resource.kind, metadata: { name, namespace, uid, resourceVersion }, status },
      signal,
    );
  }
}
