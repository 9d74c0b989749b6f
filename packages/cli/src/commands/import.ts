import { API_VERSION, Annotations, MANAGED_KINDS, OwnerTags, shortHash, type ManagedKindName, type ManagedResource } from '@k8or/api';
import { cloudTargetFor, type CloudCallRecorder, type Connector, type InventoryItem, type ProviderPlugin } from '@k8or/core';
import { ProviderLoader } from '@k8or/operator';
import { objectsNaming } from '@k8or/webhook';
import { CloudPacing } from '../cloud-pacing.js';
import { stringify } from 'yaml';
import { clusterObjects } from '../cluster/named-resources.js';
import { ClusterReader } from '../cluster/reads.js';

export interface ImportOptions {
  providerConfig: string;
  kubeconfig: string | undefined;
  namespace: string;
  kinds: ManagedKindName[];
  includeManaged: boolean;
  providers: string[];
  providerRoot: string | undefined;
  timeoutMs: number;
}

/** A failure that stops the import before anything is printed (exit 1). */
export class ImportError extends Error {}

/**
 * `k8or import`: lists what the ProviderConfig's account holds (Connector.list)
 * and prints a Bucket or Table manifest for each, ObserveOnly with
 * `k8or.io/adopt: "true"` and deletionPolicy Retain, so applying them brings
 * an existing estate under k8or without a single cloud write. Settings the
 * cloud reports (an observe per resource) go into the spec, so the manifests
 * start without drift. A resource that an object in the cluster already
 * names (same cloud target, kind and external name, as the webhook decides:
 * one object per cloud resource) is skipped with a note, tags or no tags; so is
 * one whose owner tags say k8or manages it. Reads the cluster and the cloud
 * only, keeping to the ProviderConfig's rate limits as the operator does
 * (CloudPacing).
 */
export async function importCommand(options: ImportOptions): Promise<number> {
  const cluster = ClusterReader.from(options.kubeconfig);
  const providerConfig = await cluster.providerConfig(options.providerConfig);
  if (!providerConfig) throw new ImportError(`ProviderConfig "${options.providerConfig}" not found`);
  const { providers } = await new ProviderLoader(options.providerRoot ? { root: options.providerRoot } : {}).loadAll(options.providers);
  const plugin = providers.get(providerConfig.spec.provider);
  if (!plugin) throw new ImportError(`no installed provider serves "${providerConfig.spec.provider}" (installed: ${[...providers.keys()].join(', ') || 'none'})`);
  let credentials: Record<string, string> | undefined;
  if (providerConfig.spec.credentials?.source === 'Secret') {
    const ref = providerConfig.spec.credentials.secretRef;
    credentials = ref ? await cluster.secretData(ref.namespace, ref.name) : undefined;
    if (!credentials) throw new ImportError(`the credentials Secret ${ref?.namespace ?? '?'}/${ref?.name ?? '?'} of ProviderConfig "${options.providerConfig}" not found`);
  }
  const clusterId = process.env.K8OR_CLUSTER_ID ?? (await cluster.kubeSystemUid()) ?? 'unknown';
  let recordCall: CloudCallRecorder;
  try {
    recordCall = new CloudPacing().recorder(plugin, providerConfig);
  } catch (error) {
    throw new ImportError(error instanceof Error ? error.message : String(error));
  }
  const context = { providerConfig, credentials, recordCall };
  const existing = await clusterObjects(cluster, providers, clusterId).catch((error: unknown) => {
    throw new ImportError(`cannot list the cluster's Buckets and Tables, which decide what is already managed: ${error instanceof Error ? error.message : String(error)}`);
  });
  const call = () => ({ signal: AbortSignal.timeout(options.timeoutMs) });

  const manifests: ManagedResource[] = [];
  const notes: string[] = [];
  const listable = options.kinds.filter((kind) => connectorOf(plugin, kind)?.list);
  if (listable.length === 0) throw new ImportError(`provider ${plugin.provider} (${plugin.packageName}) cannot list ${options.kinds.join(' or ')}: it has no Connector.list`);
  for (const kind of options.kinds) {
    const connector = connectorOf(plugin, kind);
    if (!connector?.list) {
      notes.push(`provider ${plugin.provider} cannot list ${kind}s; skipped`);
      continue;
    }
    const names = new Set<string>();
    const target = cloudTargetFor(plugin, kind, providerConfig);
    for (const item of await connector.list(context, call())) {
      const named = objectsNaming(kind, item.externalName, target, existing);
      if (named.length > 0) {
        const objects = named.map((o) => `${o.kind} ${o.namespace}/${o.name}`).join(', ');
        notes.push(`${kind} "${item.externalName}" is already named by ${objects} (one object per cloud resource); skipped`);
        continue;
      }
      const manifest = manifestFor(kind, item, options, names);
      const client = await connector.connect(manifest, { ...context, externalName: item.externalName, ownerTags: {} });
      const observation = await client.observe(manifest, call());
      if (!observation.exists) continue;
      const managedBy = observation.ownerTags?.[OwnerTags.managedBy];
      if (managedBy && !options.includeManaged) {
        const owner = `${observation.ownerTags?.[OwnerTags.namespace] ?? '?'}/${observation.ownerTags?.[OwnerTags.name] ?? '?'} in cluster ${observation.ownerTags?.[OwnerTags.cluster] ?? '?'}`;
        notes.push(`${kind} "${item.externalName}" is already managed by k8or (${owner}${observation.ownerTags?.[OwnerTags.cluster] === clusterId ? ', this cluster' : ''}); skipped (--include-managed to list it)`);
        continue;
      }
      // Take the cloud's values for the top-level settings it reports, so the manifest starts without drift.
      for (const diff of observation.diff ?? []) {
        const match = /^spec\.([A-Za-z]+)$/.exec(diff.field);
        if (match?.[1] && diff.actual !== undefined) (manifest.spec as unknown as Record<string, unknown>)[match[1]] = diff.actual;
      }
      manifests.push(manifest);
    }
  }
  process.stdout.write(manifests.map((m) => `---\n${stringify(m)}`).join(''));
  for (const note of notes) process.stderr.write(`k8or import: ${note}\n`);
  const count = (kind: ManagedKindName): number => manifests.filter((m) => m.kind === kind).length;
  process.stderr.write(
    `k8or import: ${MANAGED_KINDS.map((kind) => `${count(kind)} ${kind}${count(kind) === 1 ? '' : 's'}`).join(', ')} from ProviderConfig ${options.providerConfig}, ObserveOnly; kubectl apply -f the output to bring them under k8or\n`,
  );
  return 0;
}

function connectorOf(plugin: ProviderPlugin, kind: ManagedKindName): Connector | undefined {
  return plugin.connectors[kind] as Connector | undefined;
}

function manifestFor(kind: ManagedKindName, item: InventoryItem, options: ImportOptions, taken: Set<string>): ManagedResource {
  const name = objectNameFor(item.externalName, taken);
  return {
    apiVersion: API_VERSION,
    kind,
    metadata: { name, namespace: options.namespace, annotations: { [Annotations.adopt]: 'true' } },
    spec: {
      ...item.spec,
      providerConfigRef: { name: options.providerConfig },
      name: item.externalName,
      managementPolicy: 'ObserveOnly',
      deletionPolicy: 'Retain',
    },
  } as ManagedResource;
}

/**
 * A Kubernetes object name for a cloud name: the name itself when it is a
 * valid DNS subdomain, else a cleaned form with a hash of the original (so
 * `My_Table` and `my-table` cannot land on one object).
 */
export function objectNameFor(externalName: string, taken: Set<string>): string {
  const valid = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(externalName) && !externalName.includes('..');
  let name = externalName;
  if (!valid || taken.has(name)) {
    const stem = externalName.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, 200);
    name = `${stem || 'imported'}-${shortHash(externalName)}`;
  }
  taken.add(name);
  return name;
}
