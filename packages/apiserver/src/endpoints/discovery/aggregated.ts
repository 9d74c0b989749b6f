/**
 * Aggregated discovery (apidiscovery.k8s.io v2 and v2beta1): every group, version and resource in one
 * document for /api and one for /apis, which kubectl 1.27+ asks for first (and falls back from).
 */
import type { ResourceRegistry, ResolvedResource } from '../../registry/registry.js';

export type DiscoveryVersion = 'v2' | 'v2beta1';

/** The aggregated discovery version the Accept header asks for, preferring v2. */
export function aggregatedRequested(accept: string | undefined): DiscoveryVersion | undefined {
  const offers = (accept ?? '').toLowerCase().replace(/\s+/g, '').split(',');
  const wants = (v: string): boolean => offers.some((o) => o.includes('g=apidiscovery.k8s.io') && o.includes(`v=${v};`) || (o.includes('g=apidiscovery.k8s.io') && o.endsWith(`v=${v}`)));
  if (wants('v2')) return 'v2';
  if (wants('v2beta1')) return 'v2beta1';
  return undefined;
}

export function aggregatedContentType(version: DiscoveryVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

function resourceEntry(r: ResolvedResource): Record<string, unknown> {
  const { type, version } = r;
  const responseKind = { group: type.group, version: version.name, kind: type.kind };
  const entry: Record<string, unknown> = {
    resource: type.plural,
    responseKind,
    scope: type.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: type.singular,
    verbs: type.verbs,
  };
  if (type.shortNames.length > 0) entry['shortNames'] = type.shortNames;
  if (type.categories.length > 0) entry['categories'] = type.categories;
  const subresources: Array<Record<string, unknown>> = [];
  if (version.hasStatus) subresources.push({ subresource: 'status', responseKind, verbs: ['get', 'patch', 'update'] });
  if (type.key === '/namespaces') subresources.push({ subresource: 'finalize', responseKind, verbs: ['update'] });
  if (subresources.length > 0) entry['subresources'] = subresources;
  return entry;
}

/** The document for /api (core group only) or /apis (every named group). */
export function aggregatedDiscovery(registry: ResourceRegistry, core: boolean, version: DiscoveryVersion): Record<string, unknown> {
  const groups = registry.groups().filter((g) => (core ? g.name === '' : g.name !== ''));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name ? { name: g.name, creationTimestamp: null } : { creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        resources: registry
          .resourcesIn(g.name, v)
          .sort((a, b) => (a.type.plural < b.type.plural ? -1 : 1))
          .map(resourceEntry),
        freshness: 'Current',
      })),
    })),
  };
}
