import { API_VERSION, GROUP, KINDS, VERSION, type DeletionPolicy, type ProviderConfig } from '@k8or/api';
import { createInformer, type Informer, type KubeAccess, type ProviderPlugin } from '@k8or/core';
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { providerConfigFor } from '../admission/resource.js';
import type { AdmissionContext, NamespaceInfo, ResourceRef } from '../admission/types.js';

export interface ClusterContextOptions {
  /** A client-node KubeConfig fits; `loadKubeAccess` of @k8or/core gives one without loading client-node. */
  kubeConfig: KubeAccess;
  providers: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[];
  defaultDeletionPolicy: DeletionPolicy;
  secretNamespaces: readonly string[] | '*';
  /** The engine's cluster id, for default external names. */
  clusterId?: string;
  /** The engine's resync floor. */
  resyncFloorMs?: number;
  logger: Logger;
}

type CustomObject = KubernetesObject & { spec?: unknown };

/**
 * The admission context of a running webhook: ProviderConfigs, Namespaces,
 * Buckets and Tables from @k8or/core informers (list+watch caches), so every lookup answers from
 * memory within the review's timeout and no review waits on the API server.
 */
export class ClusterContext implements AdmissionContext {
  readonly providers: ReadonlyMap<string, ProviderPlugin>;
  readonly defaultDeletionPolicy: DeletionPolicy;
  readonly secretNamespaces: readonly string[] | '*';
  readonly clusterId: string | undefined;
  readonly resyncFloorMs: number | undefined;
  private readonly providerConfigs: Informer<CustomObject>;
  private readonly namespaces: Informer<V1Namespace>;
  private readonly managed: { kind: string; informer: Informer<CustomObject> }[];

  constructor(options: ClusterContextOptions) {
    this.providers = toMap(options.providers);
    this.defaultDeletionPolicy = options.defaultDeletionPolicy;
    this.secretNamespaces = options.secretNamespaces;
    this.clusterId = options.clusterId;
    this.resyncFloorMs = options.resyncFloorMs;
    const informer = <T extends KubernetesObject>(group: string, version: string, plural: string, transform?: (obj: T) => T): Informer<T> => {
      const created = createInformer<T>({ kubeConfig: options.kubeConfig, group, version, plural, logger: options.logger, ...(transform ? { transform } : {}) });
      created.on('error', (error) => options.logger.warn({ err: error, plural }, 'list/watch failed; the informer reconnects'));
      return created;
    };
    this.providerConfigs = informer<CustomObject>(GROUP, VERSION, KINDS.ProviderConfig.plural);
    this.namespaces = informer<V1Namespace>('', 'v1', 'namespaces');
    this.managed = [
      { kind: KINDS.Bucket.kind, informer: informer<CustomObject>(GROUP, VERSION, KINDS.Bucket.plural, providerConfigUse) },
      { kind: KINDS.Table.kind, informer: informer<CustomObject>(GROUP, VERSION, KINDS.Table.plural, providerConfigUse) },
    ];
  }

  private informers(): Informer<KubernetesObject>[] {
    return [this.providerConfigs, this.namespaces, ...this.managed.map((m) => m.informer)] as Informer<KubernetesObject>[];
  }

  /** Resolves once every cache holds its first list. */
  async start(): Promise<void> {
    await Promise.all(this.informers().map((informer) => informer.start()));
  }

  hasSynced(): boolean {
    return this.informers().every((informer) => informer.hasSynced());
  }

  stop(): void {
    this.informers().forEach((informer) => informer.stop());
  }

  getProviderConfig(name: string): ProviderConfig | undefined {
    const found = this.providerConfigs.cache.get(name);
    return found ? ({ apiVersion: API_VERSION, kind: 'ProviderConfig', ...found } as unknown as ProviderConfig) : undefined;
  }

  getNamespace(name: string): NamespaceInfo | undefined {
    const found = this.namespaces.cache.get(name);
    return found ? { metadata: { name, annotations: found.metadata?.annotations ?? {} } } : undefined;
  }

  resourcesUsingProviderConfig(name: string): ResourceRef[] {
    const users: ResourceRef[] = [];
    for (const { kind, informer } of this.managed) {
      for (const object of informer.cache.list()) {
        const namespace = object.metadata?.namespace ?? '';
        if (providerConfigFor(object, namespace, this)?.name === name) users.push({ kind, namespace, name: object.metadata?.name ?? '' });
      }
    }
    return users;
  }
}

/**
 * What the webhook reads of a cached Bucket or Table: which ProviderConfig it uses
 * (`resourcesUsingProviderConfig`). The rest of the object (status, the spec's settings, the
 * annotations) is dropped from the cache: in `operator --webhook` the engine caches every object
 * whole already, and the webhook's copy would double it.
 */
export function providerConfigUse(object: CustomObject): CustomObject {
  const { name, namespace, uid, resourceVersion } = object.metadata ?? {};
  const providerConfigRef = (object.spec as { providerConfigRef?: unknown } | undefined)?.providerConfigRef;
  return {
    ...(object.apiVersion ? { apiVersion: object.apiVersion } : {}),
    ...(object.kind ? { kind: object.kind } : {}),
    metadata: { name, namespace, uid, resourceVersion },
    spec: providerConfigRef === undefined ? {} : { providerConfigRef },
  };
}

export function toMap(providers: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[]): ReadonlyMap<string, ProviderPlugin> {
  return providers instanceof Map ? providers : new Map((providers as readonly ProviderPlugin[]).map((p) => [p.provider, p]));
}
