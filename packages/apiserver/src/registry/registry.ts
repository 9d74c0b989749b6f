/** The set of served resources: built-ins plus one entry per established CRD. */
import type { KubeObject } from '../types.js';
import { isObject, stringField } from '../util.js';
import { builtinResources } from './builtins.js';
import { ALL_VERBS, resourceKey, type PrinterColumn, type ResourceType, type ResourceVersion } from './types.js';

export interface ResolvedResource {
  type: ResourceType;
  version: ResourceVersion;
}

export interface GroupInfo {
  name: string;
  versions: string[];
  preferredVersion: string;
}

/** Names a CRD asks for, checked against what is already served. */
export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

const BUILTIN_GROUP_ORDER = ['', 'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'coordination.k8s.io', 'events.k8s.io'];

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Read a CRD's spec.names with the real server's defaults (singular = lowercased kind, listKind = kind + "List"). */
export function crdNames(crd: KubeObject): CrdNames {
  const spec = isObject(crd['spec']) ? crd['spec'] : {};
  const names = isObject(spec['names']) ? spec['names'] : {};
  const kind = stringField(names, 'kind') ?? '';
  return {
    plural: stringField(names, 'plural') ?? '',
    singular: stringField(names, 'singular') ?? kind.toLowerCase(),
    kind,
    listKind: stringField(names, 'listKind') ?? `${kind}List`,
    shortNames: stringList(names['shortNames']),
    categories: stringList(names['categories']),
  };
}

function printerColumns(value: unknown): PrinterColumn[] {
  if (!Array.isArray(value)) return [];
  const columns: PrinterColumn[] = [];
  for (const c of value) {
    if (!isObject(c)) continue;
    const name = stringField(c, 'name');
    const jsonPath = stringField(c, 'jsonPath');
    if (!name || !jsonPath) continue;
    const column: PrinterColumn = { name, jsonPath, type: stringField(c, 'type') ?? 'string' };
    const format = stringField(c, 'format');
    const description = stringField(c, 'description');
    if (format) column.format = format;
    if (description) column.description = description;
    if (typeof c['priority'] === 'number') column.priority = c['priority'];
    columns.push(column);
  }
  return columns;
}

/** The ResourceType a CRD object describes. */
export function resourceTypeFromCrd(crd: KubeObject): ResourceType {
  const spec = isObject(crd['spec']) ? crd['spec'] : {};
  const group = stringField(spec, 'group') ?? '';
  const names = crdNames(crd);
  const versions: ResourceVersion[] = [];
  for (const v of Array.isArray(spec['versions']) ? spec['versions'] : []) {
    if (!isObject(v)) continue;
    const name = stringField(v, 'name');
    if (!name) continue;
    const schema = isObject(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    const subresources = isObject(v['subresources']) ? v['subresources'] : {};
    const version: ResourceVersion = {
      name,
      served: v['served'] !== false,
      storage: v['storage'] === true,
      printerColumns: printerColumns(v['additionalPrinterColumns']),
      hasStatus: isObject(subresources['status']),
    };
    if (schema !== undefined) version.schema = schema;
    if (v['deprecated'] === true) {
      const custom = stringField(v, 'deprecationWarning');
      version.deprecationWarning = custom ?? `${group}/${name} ${stringField(isObject(spec['names']) ? spec['names'] : {}, 'kind') ?? ''} is deprecated`;
    }
    versions.push(version);
  }
  const meta = isObject(crd['metadata']) ? crd['metadata'] : {};
  const crdName = stringField(meta, 'name') ?? '';
  return {
    key: resourceKey(group, names.plural),
    group,
    kind: names.kind,
    listKind: names.listKind,
    plural: names.plural,
    singular: names.singular,
    namespaced: stringField(spec, 'scope') !== 'Cluster',
    shortNames: names.shortNames,
    categories: names.categories,
    versions,
    builtin: false,
    hasGeneration: true,
    crdName,
    verbs: ALL_VERBS,
  };
}

/** Kubernetes orders versions: GA > beta > alpha, higher numbers first, then others alphabetically. */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string): [number, number, number, string] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0, v];
    const stability = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0), v];
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] as number) - (pb[i] as number);
    if (d !== 0) return d;
  }
  return pa[3] < pb[3] ? -1 : pa[3] > pb[3] ? 1 : 0;
}

export class ResourceRegistry {
  private readonly builtins: ResourceType[] = builtinResources();
  /** CRD name -> served type. */
  private readonly crds = new Map<string, ResourceType>();
  private readonly listeners: Array<() => void> = [];

  /** Called whenever the set of served resources changes. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  all(): ResourceType[] {
    return [...this.builtins, ...this.crds.values()];
  }

  /** The served type for group + resource in any version (for storage, CRD cleanup). */
  byKey(key: string): ResourceType | undefined {
    // the stored shape's own type first (events.k8s.io Events are a view of core's)
    return this.all().find((t) => t.key === key && !t.conversion) ?? this.all().find((t) => t.key === key);
  }

  lookup(group: string, version: string, plural: string): ResolvedResource | undefined {
    for (const type of this.all()) {
      if (type.group !== group || type.plural !== plural) continue;
      const v = type.versions.find((x) => x.name === version && x.served);
      if (v) return { type, version: v };
    }
    return undefined;
  }

  /** Groups with their served versions, core group first, as /apis lists them. */
  groups(): GroupInfo[] {
    const byGroup = new Map<string, Set<string>>();
    for (const type of this.all()) {
      for (const v of type.versions) {
        if (!v.served) continue;
        let set = byGroup.get(type.group);
        if (!set) byGroup.set(type.group, (set = new Set()));
        set.add(v.name);
      }
    }
    const names = [...byGroup.keys()].sort((a, b) => {
      const ia = BUILTIN_GROUP_ORDER.indexOf(a);
      const ib = BUILTIN_GROUP_ORDER.indexOf(b);
      if (ia >= 0 || ib >= 0) return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
      return a < b ? -1 : a > b ? 1 : 0;
    });
    return names.map((name) => {
      const versions = [...(byGroup.get(name) ?? [])].sort(compareKubeVersions);
      return { name, versions, preferredVersion: versions[0] ?? '' };
    });
  }

  resourcesIn(group: string, version: string): ResolvedResource[] {
    const out: ResolvedResource[] = [];
    for (const type of this.all()) {
      if (type.group !== group) continue;
      const v = type.versions.find((x) => x.name === version && x.served);
      if (v) out.push({ type, version: v });
    }
    return out;
  }

  /**
   * Check a CRD's names against every other served resource; returns the conflict message, if any
   * (the real server sets NamesAccepted=False with the same kind of message).
   */
  namesConflict(crd: KubeObject): string | undefined {
    const candidate = resourceTypeFromCrd(crd);
    for (const other of this.all()) {
      if (other.crdName === candidate.crdName || other.group !== candidate.group) continue;
      if (other.plural === candidate.plural) return `"${candidate.plural}" is already in use`;
      if (other.kind === candidate.kind) return `"${candidate.kind}" is already in use`;
      for (const s of candidate.shortNames) if (other.shortNames.includes(s)) return `"${s}" is already in use`;
    }
    return undefined;
  }

  /** Serve (or re-serve) the resource a CRD describes. */
  serveCrd(crd: KubeObject): ResourceType {
    const type = resourceTypeFromCrd(crd);
    this.crds.set(type.crdName ?? type.key, type);
    this.changed();
    return type;
  }

  stopServingCrd(crdName: string): void {
    if (this.crds.delete(crdName)) this.changed();
  }

  crdType(crdName: string): ResourceType | undefined {
    return this.crds.get(crdName);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
