import type { ManagedResource } from '@k8or/api';
import { KubeRest, k8orPath } from '@k8or/core';
import { KubeConfig } from '@kubernetes/client-node';
import type { ObjectRef } from './object-ref.js';

/** Reads one managed object and sets its annotations: all `k8or approve` and `k8or reconcile` write. */
export class ManagedObjects {
  readonly namespace: string;
  readonly #rest: KubeRest;

  constructor(kubeConfig: KubeConfig, namespace: string | undefined) {
    this.#rest = new KubeRest(kubeConfig, { userAgent: 'k8or-cli' });
    // Like kubectl: -n, else the current context's namespace, else default.
    this.namespace = namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ?? 'default';
  }

  /** From `--kubeconfig FILE`, else KUBECONFIG, else in-cluster or ~/.kube/config. */
  static from(file: string | undefined, namespace: string | undefined): ManagedObjects {
    const kubeConfig = new KubeConfig();
    if (file) kubeConfig.loadFromFile(file);
    else kubeConfig.loadFromDefault();
    return new ManagedObjects(kubeConfig, namespace);
  }

  /** The object, or undefined on a definite 404 (any other failure is thrown). */
  async get(ref: ObjectRef): Promise<ManagedResource | undefined> {
    return await this.#rest.get<ManagedResource>(k8orPath(ref.kind, this.namespace, ref.name));
  }

  /**
   * Sets annotations in one merge patch. With `resourceVersion`, only on the object as read
   * (a 409 if it changed since).
   */
  async annotate(ref: ObjectRef, annotations: Record<string, string>, resourceVersion?: string): Promise<ManagedResource> {
    const metadata = { annotations, ...(resourceVersion ? { resourceVersion } : {}) };
    return await this.#rest.patch<ManagedResource>(k8orPath(ref.kind, this.namespace, ref.name), { metadata }, 'merge');
  }

  close(): void {
    this.#rest.close();
  }
}
