import { isRecord, type SchemaNode } from './node.js';

// Pruning as apiextensions-apiserver's structural pruning: fields the schema does not declare are dropped,
// unless x-kubernetes-preserve-unknown-fields is set on the enclosing object. At the resource root (and in
// embedded resources) apiVersion, kind and metadata are always kept; metadata is the server's business.

const RESOURCE_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

export const childPath = (parent: string, name: string): string => (parent ? `${parent}.${name}` : name);
export const indexPath = (parent: string, index: number): string => `${parent}[${index}]`;

/** Remove unknown fields in place; returns the paths of the removed fields (`spec.foo`, `spec.items[0].bar`). */
export function prune(value: unknown, schema: SchemaNode, path = '', isResourceRoot = true): string[] {
  const pruned: string[] = [];
  pruneInto(value, schema, path, isResourceRoot, pruned);
  return pruned;
}

function pruneInto(value: unknown, schema: SchemaNode | undefined, path: string, isResourceRoot: boolean, pruned: string[]): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => pruneInto(item, schema.items, indexPath(path, i), false, pruned));
    return;
  }
  if (!isRecord(value)) return;
  const keepResourceFields = isResourceRoot || schema.embeddedResource;
  for (const key of Object.keys(value)) {
    if (keepResourceFields && RESOURCE_FIELDS.has(key)) continue;
    const prop = schema.properties?.get(key);
    if (prop) {
      pruneInto(value[key], prop, childPath(path, key), false, pruned);
    } else if (typeof schema.additionalProperties === 'object') {
      pruneInto(value[key], schema.additionalProperties, childPath(path, key), false, pruned);
    } else if (schema.additionalProperties === true || schema.preserveUnknownFields) {
      continue;
    } else {
      delete value[key];
      pruned.push(childPath(path, key));
    }
  }
}

/** Whether `prune` would drop anything from `value`. Reads only. */
export function hasUnknownFields(value: unknown, schema: SchemaNode | undefined, isResourceRoot = true): boolean {
  if (schema === undefined) return false;
  if (Array.isArray(value)) return schema.items ? value.some((item) => hasUnknownFields(item, schema.items, false)) : false;
  if (!isRecord(value)) return false;
  const keepResourceFields = isResourceRoot || schema.embeddedResource;
  for (const key of Object.keys(value)) {
    if (keepResourceFields && RESOURCE_FIELDS.has(key)) continue;
    const prop = schema.properties?.get(key);
    if (prop) {
      if (hasUnknownFields(value[key], prop, false)) return true;
    } else if (typeof schema.additionalProperties === 'object') {
      if (hasUnknownFields(value[key], schema.additionalProperties, false)) return true;
    } else if (!(schema.additionalProperties === true || schema.preserveUnknownFields)) {
      return true;
    }
  }
  return false;
}
