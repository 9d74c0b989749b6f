import type { ProviderConfig } from '@k8or/api';
import type { NamespaceInfo } from '@k8or/webhook';
import { apiErrorMessage, ClusterReader } from '../cluster/reads.js';
import { identityOf } from '../manifests/objects.js';
import { ManifestPathError, readManifests } from '../manifests/read.js';

/**
 * Where `k8or validate` finds the ProviderConfigs (and Namespaces) that the files it checks do not
 * hold. App repositories hold Buckets and Tables, not the cluster's ProviderConfigs:
 * - `each-provider` (no flag): a ProviderConfig missing from the files is taken, in turn, to be of
 *   every installed provider, and the report says which providers admit the objects;
 * - `provider` (`--provider NAME`): it is taken to be of that provider;
 * - `file` (`--provider-configs FILE`) and `cluster` (`--context NAME`, `--kubeconfig FILE`): only
 *   those ProviderConfigs exist, as in that cluster; a missing one is refused as the cluster would.
 */
export type ProviderConfigSource =
  | { from: 'each-provider' }
  | { from: 'provider'; provider: string }
  | { from: 'file'; path: string }
  | { from: 'cluster'; kubeconfig: string | undefined; context: string | undefined };

/** A flag of `k8or validate` that cannot be used as given: exit 2. */
export class ValidateUsageError extends Error {}

/** The cluster of `--context` could not be read: exit 1, never "it has no ProviderConfigs". */
export class ClusterReadError extends Error {}

/** What admission reads of a cluster besides the object: its ProviderConfigs and Namespaces. */
export interface ClusterView {
  providerConfigs: ProviderConfig[];
  namespaces: NamespaceInfo[];
}

export interface SourceFlags {
  provider?: string | undefined;
  providerConfigs?: string | undefined;
  context?: string | undefined;
  kubeconfig?: string | undefined;
}

/** The source the flags name (commander has already refused two of them together). */
export function sourceFrom(flags: SourceFlags, installed: readonly string[]): ProviderConfigSource {
  if (flags.provider !== undefined) {
    if (!installed.includes(flags.provider)) {
      throw new ValidateUsageError(`--provider ${flags.provider}: not installed (installed: ${installed.join(', ') || 'none'})`);
    }
    return { from: 'provider', provider: flags.provider };
  }
  if (flags.providerConfigs !== undefined) return { from: 'file', path: flags.providerConfigs };
  if (flags.context !== undefined || flags.kubeconfig !== undefined) return { from: 'cluster', kubeconfig: flags.kubeconfig, context: flags.context };
  return { from: 'each-provider' };
}

/** The ProviderConfigs and Namespaces of the source: read from its file or, read-only, from its cluster. */
export async function clusterViewOf(source: ProviderConfigSource): Promise<ClusterView> {
  if (source.from === 'file') return viewOfFile(source.path);
  if (source.from === 'cluster') {
    const reader = ClusterReader.from(source.kubeconfig, source.context);
    try {
      const [providerConfigs, namespaces] = await Promise.all([reader.providerConfigs(), reader.namespaces()]);
      return { providerConfigs, namespaces: namespaces.map(namespaceInfo) };
    } catch (error) {
      // A 403 or a timeout is not an empty cluster: validate stops rather than refuse every object.
      throw new ClusterReadError(`cannot read the ProviderConfigs and Namespaces of context ${reader.kubeConfig.getCurrentContext()}: ${apiErrorMessage(error)}`);
    }
  }
  return { providerConfigs: [], namespaces: [] };
}

function viewOfFile(path: string): ClusterView {
  const view: ClusterView = { providerConfigs: [], namespaces: [] };
  let documents;
  try {
    documents = readManifests([path]);
  } catch (error) {
    if (error instanceof ManifestPathError) throw new ValidateUsageError(`--provider-configs ${path}: no such file or directory`);
    throw error;
  }
  for (const document of documents) {
    if (document.error !== undefined) throw new ValidateUsageError(`--provider-configs ${path}: document ${document.index}: ${document.error}`);
    const id = identityOf(document.object);
    if (id.kind === 'ProviderConfig' && id.apiVersion.startsWith('k8or.io/')) view.providerConfigs.push(document.object as ProviderConfig);
    if (id.kind === 'Namespace' && id.apiVersion === 'v1') view.namespaces.push(namespaceInfo(document.object));
  }
  if (view.providerConfigs.length === 0) throw new ValidateUsageError(`--provider-configs ${path}: holds no ProviderConfig (apiVersion k8or.io/v1alpha1)`);
  return view;
}

/** A Namespace as admission reads it: its name and string annotations. */
export function namespaceInfo(object: unknown): NamespaceInfo {
  const metadata = (object as { metadata?: { name?: unknown; annotations?: unknown } } | null)?.metadata;
  const annotations = metadata?.annotations && typeof metadata.annotations === 'object' ? metadata.annotations : {};
  return {
    metadata: {
      ...(typeof metadata?.name === 'string' ? { name: metadata.name } : {}),
      annotations: Object.fromEntries(Object.entries(annotations).filter((entry): entry is [string, string] => typeof entry[1] === 'string')),
    },
  };
}

/** The view with the files' own ProviderConfigs and Namespaces laid over it by name, as applying the files would. */
export function withManifests(view: ClusterView, manifests: readonly unknown[]): ClusterView {
  const byName = <T extends { metadata?: { name?: string | undefined } }>(items: readonly T[]): Map<string, T> => new Map(items.map((i) => [i.metadata?.name ?? '', i]));
  const providerConfigs = byName(view.providerConfigs);
  const namespaces = byName(view.namespaces);
  for (const manifest of manifests) {
    const id = identityOf(manifest);
    if (id.kind === 'ProviderConfig' && id.apiVersion.startsWith('k8or.io/')) providerConfigs.set(id.name, manifest as ProviderConfig);
    if (id.kind === 'Namespace' && id.apiVersion === 'v1') namespaces.set(id.name, namespaceInfo(manifest));
  }
  return { providerConfigs: [...providerConfigs.values()], namespaces: [...namespaces.values()] };
}
