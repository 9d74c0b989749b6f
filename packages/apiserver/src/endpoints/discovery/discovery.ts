/** Discovery documents: /version, /api, /apis, /apis/{group}, /api/v1 and /apis/{group}/{version}. */
import type { ResourceRegistry, ResolvedResource } from '../../registry/registry.js';

export function versionInfo(): Record<string, unknown> {
  return {
    major: '1',
    minor: '33',
    gitVersion: 'v1.33.0-k8or-sandbox',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.24.0',
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupDocument(name: string, versions: string[], preferred: string): Record<string, unknown> {
  return {
    name,
    versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
    preferredVersion: { groupVersion: `${name}/${preferred}`, version: preferred },
  };
}

export function apiGroupList(registry: ResourceRegistry): Record<string, unknown> {
  const groups = registry.groups().filter((g) => g.name !== '');
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => groupDocument(g.name, g.versions, g.preferredVersion)) };
}

export function apiGroup(registry: ResourceRegistry, group: string): Record<string, unknown> | undefined {
  const info = registry.groups().find((g) => g.name === group);
  if (!info || group === '') return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupDocument(info.name, info.versions, info.preferredVersion) };
}

function resourceEntries(r: ResolvedResource): Array<Record<string, unknown>> {
  const { type, version } = r;
  const main: Record<string, unknown> = {
    name: type.plural,
    singularName: type.singular,
    namespaced: type.namespaced,
    kind: type.kind,
    verbs: type.verbs,
  };
  if (type.shortNames.length > 0) main['shortNames'] = type.shortNames;
  if (type.categories.length > 0) main['categories'] = type.categories;
  main['storageVersionHash'] = Buffer.from(`${type.group}/${version.name}/${type.kind}`).toString('base64').slice(0, 11);
  const entries = [main];
  if (version.hasStatus) {
    entries.push({ name: `${type.plural}/status`, singularName: '', namespaced: type.namespaced, kind: type.kind, verbs: ['get', 'patch', 'update'] });
  }
  if (type.key === '/namespaces') {
    entries.push({ name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] });
  }
  return entries;
}

export function apiResourceList(registry: ResourceRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const resources = registry.resourcesIn(group, version);
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: resources.flatMap(resourceEntries),
  };
}
