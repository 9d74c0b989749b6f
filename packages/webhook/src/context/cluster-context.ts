import { API_VERSION, Annotations, GROUP, KINDS, VERSION, type DeletionPolicy, type ManagedKindName, type ProviderConfig } from '@k8or/api';
import { createInformer, type Informer, type KubeAccess, type ProviderPlugin } from '@k8or/core';
import type { KubernetesObject, V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { annotation, providerConfigFor, stringField } from '../admission/resource.js';
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

type CustomObject = KubernetesObject & { spec?: unknown; status?: unknown };

/** The index of cached Buckets and Tables by the external name they give (`''` for none yet). */
const EXTERNAL_NAME_INDEX = 'external-name';

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
  private readonly managed: { kind: ManagedKindName; informer: Informer<CustomObject> }[];

  constructor(options: ClusterContextOptions) {
    this.providers = toMap(options.providers);
    this.defaultDeletionPolicy = options.defaultDeletionPolicy;
    this.secretNamespaces = options.secretNamespaces;
    this.clusterId = options.clusterId;
    this.resyncFloorMs = options.resyncFloorMs;
    const informer = <T extends KubernetesObject>(group: string, version: string, plural: string, transform?: (obj: T) => T): Informer<T> => {
      // Buckets and Tables (the ones with a transform) are every such object of the cluster, in every
      // replica: kept compact, each read one at a time, and found by external name, never by namespace.
      const created = createInformer<T>({ kubeConfig: options.kubeConfig, group, version, plural, logger: options.logger, ...(transform ? { transform, compact: true, namespaceIndex: false } : {}) });
      created.on('error', (error) => options.logger.warn({ err: error, plural }, 'list/watch failed; the informer reconnects'));
      return created;
    };
    this.providerConfigs = informer<CustomObject>(GROUP, VERSION, KINDS.ProviderConfig.plural);
    this.namespaces = informer<V1Namespace>('', 'v1', 'namespaces');
    this.managed = [
      { kind: KINDS.Bucket.kind, informer: informer<CustomObject>(GROUP, VERSION, KINDS.Bucket.plural, (object) => admissionView(object, KINDS.Bucket.kind)) },
      { kind: KINDS.Table.kind, informer: informer<CustomObject>(GROUP, VERSION, KINDS.Table.plural, (object) => admissionView(object, KINDS.Table.kind)) },
    ];
    for (const { informer: managed } of this.managed) managed.cache.addIndex(EXTERNAL_NAME_INDEX, (object) => [givenExternalName(object) ?? '']);
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

  resourcesNaming(kind: ManagedKindName, externalName: string): CustomObject[] {
    const cache = this.#cacheOf(kind);
    if (!cache) return [];
    return externalName === '' ? cache.byIndex(EXTERNAL_NAME_INDEX, '') : [...cache.byIndex(EXTERNAL_NAME_INDEX, externalName), ...cache.byIndex(EXTERNAL_NAME_INDEX, '')];
  }

  getResource(kind: ManagedKindName, namespace: string, name: string): CustomObject | undefined {
    return this.#cacheOf(kind)?.get(`${namespace}/${name}`);
  }

  #cacheOf(kind: ManagedKindName): Informer<CustomObject>['cache'] | undefined {
    return this.managed.find((m) => m.kind === kind)?.informer.cache;
  }
}

/** The external name an object gives itself: `spec.name`, else the `k8or.io/external-name` annotation (the engine's order). */
function givenExternalName(object: unknown): string | undefined {
  return stringField(object, 'spec', 'name') ?? annotation(object, Annotations.externalName);
}

/** The annotations admission reads of another object. */
const KEPT_ANNOTATIONS = [Annotations.externalName, Annotations.createPending, Annotations.createSucceeded];

/**
 * What the webhook reads of a cached Bucket or Table: which ProviderConfig it uses
 * (`resourcesUsingProviderConfig`), which cloud resource it names (`spec.name`, the
 * `k8or.io/external-name` annotation) and whether it may have created it (the create markers,
 * `status.atProvider.id`). The rest of the object (the spec's settings, other annotations, the
 * rest of status) is dropped from the cache: in `operator --webhook` the engine caches every
 * object whole already, and the webhook's copy would double it.
 */
export function admissionView(object: CustomObject, kind: ManagedKindName): CustomObject {
  const { name, namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp } = object.metadata ?? {};
  const annotations = Object.fromEntries(KEPT_ANNOTATIONS.flatMap((key) => (object.metadata?.annotations?.[key] !== undefined ? [[key, object.metadata.annotations[key]]] : [])));
  const spec = (object.spec ?? {}) as { providerConfigRef?: unknown; name?: unknown };
  const atProviderId = (object.status as { atProvider?: { id?: unknown } } | undefined)?.atProvider?.id;
  return {
    apiVersion: object.apiVersion ?? API_VERSION,
    kind,
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion,
      ...(creationTimestamp !== undefined ? { creationTimestamp } : {}),
      ...(deletionTimestamp !== undefined ? { deletionTimestamp } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
    spec: { ...(spec.providerConfigRef !== undefined ? { providerConfigRef: spec.providerConfigRef } : {}), ...(spec.name !== undefined ? { name: spec.name } : {}) },
    ...(atProviderId !== undefined ? { status: { atProvider: { id: atProviderId } } } : {}),
  };
}

export function toMap(providers: ReadonlyMap<string, ProviderPlugin> | readonly ProviderPlugin[]): ReadonlyMap<string, ProviderPlugin> {
  return providers instanceof Map ? providers : new Map((providers as readonly ProviderPlugin[]).map((p) => [p.provider, p]));
}
