import type { ManagedKindName, ManagedResource, ManagedStatus } from '@k8or/api';
import type { ManagedPatch, ManagedResourceClient } from '../reconcile/ports.js';
import { k8orPath } from './paths.js';
import type { KubeRest } from './rest.js';

/** ManagedResourceClient over the REST API: live GETs, merge patches, PUT on /status. */
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
    if (patch.finalizers) {
      // A merge patch replaces the whole list; the precondition keeps us from
      // dropping a finalizer someone else added since we read the object.
      metadata.finalizers = patch.finalizers;
      metadata.resourceVersion = resource.metadata.resourceVersion;
    }
    const body: Record<string, unknown> = { metadata };
    if (patch.specName !== undefined) body.spec = { name: patch.specName };
    return await this.#rest.patch<ManagedResource>(k8orPath(resource.kind, resource.metadata.namespace, resource.metadata.name), body, 'merge', signal);
  }

  async writeStatus(resource: ManagedResource, status: ManagedStatus, signal?: AbortSignal): Promise<ManagedResource> {
    return await this.#rest.update<ManagedResource>(
      k8orPath(resource.kind, resource.metadata.namespace, resource.metadata.name, 'status'),
      { ...resource, status },
      signal,
    );
  }
}
