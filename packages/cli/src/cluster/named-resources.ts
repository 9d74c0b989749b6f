import { KINDS, type ManagedKindName, type ManagedResource, type ProviderConfig } from '@k8or/api';
import { cloudTargetFor, type ProviderPlugin } from '@k8or/core';
import { objectsNaming, staticContext, type AdmissionContext, type NamedResource, type NamespaceInfo } from '@k8or/webhook';
import type { ClusterReader } from './reads.js';

/** What decides which cloud resource each object of a cluster names. */
interface ClusterLists {
  providerConfigs: ProviderConfig[];
  namespaces: NamespaceInfo[];
  /** Buckets and Tables, each with its kind. */
  resources: unknown[];
}

/** Lists only; a denied or failed list is an error, never an empty cluster. */
async function listCluster(cluster: ClusterReader): Promise<ClusterLists> {
  const [providerConfigs, namespaces, buckets, tables] = await Promise.all([
    cluster.listAll(KINDS.ProviderConfig.plural),
    cluster.namespaces(),
    cluster.listAll(KINDS.Bucket.plural),
    cluster.listAll(KINDS.Table.plural),
  ]);
  // A list's items carry no kind in some servers' answers: give each its own.
  const ofKind = (kind: ManagedKindName, items: unknown[]): unknown[] => items.map((item) => ({ ...(item as object), kind }));
  return {
    providerConfigs: providerConfigs as ProviderConfig[],
    namespaces: namespaces.map((ns) => ({ metadata: (ns as NamespaceInfo).metadata })),
    resources: [...ofKind(KINDS.Bucket.kind, buckets), ...ofKind(KINDS.Table.kind, tables)],
  };
}

/**
 * The cluster's Buckets and Tables, with the ProviderConfigs and Namespaces that decide which
 * cloud resource each one names, as an admission context: `objectsNaming` of @k8or/webhook then
 * tells which object already names a cloud resource, exactly as the webhook decides it.
 */
export async function clusterObjects(cluster: ClusterReader, providers: ReadonlyMap<string, ProviderPlugin>, clusterId: string): Promise<AdmissionContext> {
  return staticContext({ providers, clusterId, ...(await listCluster(cluster)) });
}

const keyOf = (kind: string | undefined, namespace: string | undefined, name: string | undefined): string => `${kind ?? ''}/${namespace ?? 'default'}/${name ?? ''}`;

/**
 * For `k8or plan`: the objects that came first to a cloud resource a planned object names (one
 * object per cloud resource), among the cluster's objects and the new ones of the files. A stored
 * object comes before any new one, older before younger; new ones come in file order. The webhook
 * refuses the later object, and the engine lets only the older one call the cloud.
 */
export class FirstNamers {
  private constructor(
    private readonly context: AdmissionContext,
    /** Place in line by object key: stored objects by creationTimestamp, then new ones by file order (`~` sorts after digits). */
    private readonly ranks: ReadonlyMap<string, string>,
    private readonly providerConfigFromFile: ProviderConfig | undefined,
  ) {}

  /** Reads the cluster's objects when there is a cluster. With `providerConfigFromFile`, every object uses it, as `plan --provider-config` does. */
  static async load(options: {
    cluster: ClusterReader | undefined;
    files: readonly ManagedResource[];
    providerConfigFromFile: ProviderConfig | undefined;
    providers: ReadonlyMap<string, ProviderPlugin>;
    clusterId: string;
  }): Promise<FirstNamers> {
    const lists = options.cluster ? await listCluster(options.cluster) : { providerConfigs: [], namespaces: [], resources: [] };
    const ranks = new Map<string, string>();
    for (const object of lists.resources) {
      const { kind, metadata } = object as ManagedResource;
      ranks.set(keyOf(kind, metadata?.namespace, metadata?.name), String(metadata?.creationTimestamp ?? ''));
    }
    const newOnes = options.files.filter((object, index) => {
      const key = keyOf(object.kind, object.metadata.namespace, object.metadata.name);
      if (ranks.has(key)) return false;
      ranks.set(key, `~${String(index).padStart(9, '0')}`);
      return true;
    });
    const context = staticContext({ providers: options.providers, clusterId: options.clusterId, ...lists, resources: [...lists.resources, ...newOnes] });
    return new FirstNamers(context, ranks, options.providerConfigFromFile);
  }

  /** The objects ahead of `resource` in line for the cloud resource it names through `providerConfig`, first first. */
  ahead(resource: ManagedResource, plugin: ProviderPlugin, providerConfig: ProviderConfig, externalName: string): NamedResource[] {
    const key = keyOf(resource.kind, resource.metadata.namespace, resource.metadata.name);
    const mine = this.ranks.get(key) ?? '~~';
    const fromFile = this.providerConfigFromFile;
    const lookup = fromFile ? (): ProviderConfig => fromFile : undefined;
    // Credentials left out, as the webhook (which cannot read them) decides.
    const target = cloudTargetFor(plugin, resource.kind, providerConfig);
    return objectsNaming(resource.kind, externalName, target, this.context, lookup)
      .map((other) => ({ other, rank: this.ranks.get(keyOf(other.kind, other.namespace, other.name)) ?? '~~' }))
      .filter(({ other, rank }) => keyOf(other.kind, other.namespace, other.name) !== key && rank < mine)
      .sort((a, b) => a.rank.localeCompare(b.rank))
      .map(({ other }) => other);
  }
}
