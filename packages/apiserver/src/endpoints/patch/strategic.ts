/**
 * Strategic merge patch for the built-in kinds the sandbox serves. Lists merge by the keys the
 * real Go types declare (patchMergeKey); other lists are replaced. Supports the directives kubectl
 * sends: $patch (replace/delete/merge), $retainKeys, $deleteFromPrimitiveList/, $setElementOrder/.
 */
import { badRequest } from '../../status.js';
import { clone, isObject, jsonEqual } from '../../util.js';

type ListStrategy = { mergeKey: string } | { primitiveMerge: true };

/** Paths (dot-joined, list items as []) whose lists merge instead of replacing. */
const LIST_STRATEGIES: Record<string, ListStrategy> = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': { primitiveMerge: true },
  webhooks: { mergeKey: 'name' },
  'spec.ports': { mergeKey: 'port' },
};

function strategyFor(path: string): ListStrategy | undefined {
  return LIST_STRATEGIES[path];
}

export function applyStrategicMergePatch(target: Record<string, unknown>, patch: unknown): Record<string, unknown> {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  const result = mergeMap(clone(target), patch, '');
  return isObject(result) ? result : {};
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function mergeMap(target: Record<string, unknown> | undefined, patch: Record<string, unknown>, path: string): Record<string, unknown> | undefined {
  const directive = patch['$patch'];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return stripDirectives(patch) as Record<string, unknown>;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  const deletions: Array<[string, unknown[]]> = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/')) continue;
    if (key.startsWith('$deleteFromPrimitiveList/')) {
      deletions.push([key.slice('$deleteFromPrimitiveList/'.length), Array.isArray(value) ? value : []]);
      continue;
    }
    const childPath = join(path, key);
    if (value === null) {
      delete result[key];
    } else if (Array.isArray(value)) {
      result[key] = mergeList(result[key], value, childPath);
    } else if (isObject(value)) {
      const merged = mergeMap(isObject(result[key]) ? (result[key] as Record<string, unknown>) : undefined, value, childPath);
      if (merged === undefined) delete result[key];
      else result[key] = merged;
    } else {
      result[key] = value;
    }
  }
  for (const [key, values] of deletions) {
    const list = result[key];
    if (Array.isArray(list)) result[key] = list.filter((item) => !values.some((v) => jsonEqual(v, item)));
  }
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    for (const key of Object.keys(result)) if (!retain.includes(key)) delete result[key];
  }
  return result;
}

function mergeList(target: unknown, patch: unknown[], path: string): unknown[] {
  const strategy = strategyFor(path);
  const current = Array.isArray(target) ? [...target] : [];
  if (!strategy) return patch.filter((item) => !(isObject(item) && item['$patch'] !== undefined)).map(stripDirectives);
  if ('primitiveMerge' in strategy) {
    for (const item of patch) if (!current.some((c) => jsonEqual(c, item))) current.push(item);
    return current;
  }
  const key = strategy.mergeKey;
  if (patch.some((item) => isObject(item) && item['$patch'] === 'replace')) {
    return patch.filter((item) => !(isObject(item) && item['$patch'] === 'replace')).map(stripDirectives);
  }
  for (const item of patch) {
    if (!isObject(item)) continue;
    const index = current.findIndex((c) => isObject(c) && c[key] !== undefined && jsonEqual(c[key], item[key]));
    if (item['$patch'] === 'delete') {
      if (index >= 0) current.splice(index, 1);
      continue;
    }
    if (index >= 0) {
      const merged = mergeMap(current[index] as Record<string, unknown>, item, `${path}[]`);
      if (merged) current[index] = merged;
    } else {
      current.push(stripDirectives(item));
    }
  }
  return current;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(v);
  }
  return out;
}
