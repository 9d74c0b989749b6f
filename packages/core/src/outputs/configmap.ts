import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, MANAGED_BY, type ManagedResource } from '@k8or/api';
import { corePath } from '../kube/paths.js';
import { isAlreadyExists, type KubeRest } from '../kube/rest.js';
import type { Outputs, OutputsWriter } from '../reconcile/ports.js';

interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
  };
  data?: Record<string, string>;
}

/** The ConfigMap data for a resource's outputs: the keys applications read. */
export function outputsData(outputs: Outputs): Record<string, string> {
  const data: Record<string, string> = { externalName: outputs.externalName, provider: outputs.provider };
  if (outputs.location) data.location = outputs.location;
  if (outputs.url) data.url = outputs.url;
  if (outputs.id) data.id = outputs.id;
  return data;
}

const ownedBy = (configMap: ConfigMap, resource: ManagedResource): boolean =>
  (configMap.metadata.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === resource.metadata.uid);

/**
 * Keeps `spec.writeOutputsTo` filled: a ConfigMap in the resource's namespace,
 * controlled by the resource (ownerReference controller=true, so Kubernetes'
 * garbage collector removes it too), written only when its data changes.
 */
export class ConfigMapOutputs implements OutputsWriter {
  readonly #rest: KubeRest;

  constructor(rest: KubeRest) {
    this.#rest = rest;
  }

  async publish(resource: ManagedResource, configMapName: string, outputs: Outputs, signal?: AbortSignal): Promise<'unchanged' | 'written' | 'foreign'> {
    const namespace = resource.metadata.namespace ?? 'default';
    const path = corePath('configmaps', namespace, configMapName);
    const data = outputsData(outputs);
    const existing = await this.#rest.get<ConfigMap>(path, signal);
    if (existing) {
      if (!ownedBy(existing, resource)) return 'foreign';
      if (isDeepStrictEqual(existing.data ?? {}, data)) return 'unchanged';
      await this.#rest.update(path, { ...existing, data }, signal);
      return 'written';
    }
    const configMap: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: configMapName,
        namespace,
        labels: { 'app.kubernetes.io/managed-by': MANAGED_BY },
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: resource.kind,
            name: resource.metadata.name ?? '',
            uid: resource.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      data,
    };
    try {
      await this.#rest.create(corePath('configmaps', namespace), configMap, signal);
    } catch (error) {
      if (isAlreadyExists(error)) return 'foreign';
      throw error;
    }
    return 'written';
  }

  async remove(resource: ManagedResource, configMapName: string, signal?: AbortSignal): Promise<void> {
    const path = corePath('configmaps', resource.metadata.namespace ?? 'default', configMapName);
    const existing = await this.#rest.get<ConfigMap>(path, signal);
    if (existing && ownedBy(existing, resource)) await this.#rest.delete(path, signal);
  }
}
