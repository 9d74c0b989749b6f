/**
 * How server-side apply treats a list: as a map keyed by some fields (`x-kubernetes-list-type: map`),
 * as a set of scalars (`set`), or atomically (everything else), found from the CRD schema or, for the
 * metadata every kind shares and the built-in kinds, from what the Go types declare.
 */
import { isObject } from '../../util.js';

export type ListType = { kind: 'map'; keys: string[] } | { kind: 'set' };
/** Schema path: property names, with "[]" stepping into list items. */
export type ListTypeOf = (schemaPath: string[]) => ListType | undefined;

const BUILTIN: Record<string, ListType> = {
  'metadata.ownerReferences': { kind: 'map', keys: ['uid'] },
  'metadata.finalizers': { kind: 'set' },
  webhooks: { kind: 'map', keys: ['name'] },
  'spec.ports': { kind: 'map', keys: ['port', 'protocol'] },
};

export function builtinListTypes(): ListTypeOf {
  return (path) => BUILTIN[path.join('.')];
}

/** List types declared in a CRD version's openAPIV3Schema (metadata lists as for every kind). */
export function schemaListTypes(openAPIV3Schema: unknown): ListTypeOf {
  const cache = new Map<string, ListType | undefined>();
  return (path) => {
    const joined = path.join('.');
    if (BUILTIN[joined] && path[0] === 'metadata') return BUILTIN[joined];
    if (cache.has(joined)) return cache.get(joined);
    let node: unknown = openAPIV3Schema;
    for (const segment of path) {
      if (!isObject(node)) break;
      if (segment === '[]') node = node['items'];
      else {
        const props = isObject(node['properties']) ? node['properties'] : undefined;
        node = props?.[segment] ?? (isObject(node['additionalProperties']) ? node['additionalProperties'] : undefined);
      }
    }
    let result: ListType | undefined;
    if (isObject(node)) {
      const listType = node['x-kubernetes-list-type'];
      const keys = node['x-kubernetes-list-map-keys'];
      if (listType === 'map' && Array.isArray(keys)) result = { kind: 'map', keys: keys.filter((k): k is string => typeof k === 'string') };
      else if (listType === 'set') result = { kind: 'set' };
    }
    cache.set(joined, result);
    return result;
  };
}
