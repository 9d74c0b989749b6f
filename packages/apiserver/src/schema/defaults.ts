import { isRecord, type SchemaNode } from './node.js';

// Defaulting as apiextensions-apiserver's structural defaulting: a property's default is set when the
// property is absent (or null and not nullable) and its parent object exists; the walk then descends into
// the (possibly just defaulted) value, so defaults nested inside defaults apply too. Afterwards nulls in
// non-nullable fields without a default are dropped (PruneNonNullableNullsWithoutDefaults).

const isNonNullableNull = (v: unknown, s: SchemaNode): boolean => v === null && !s.nullable;

/** Apply defaults in place. */
export function applyDefaultsInPlace(value: unknown, schema: SchemaNode | undefined): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      if (isNonNullableNull(value[i], items) && items.hasDefault) value[i] = structuredClone(items.default);
      applyDefaultsInPlace(value[i], items);
    }
    return;
  }
  if (!isRecord(value)) return;
  if (schema.properties) {
    for (const [key, prop] of schema.properties) {
      if (!prop.hasDefault) continue;
      if (!(key in value) || isNonNullableNull(value[key], prop)) value[key] = structuredClone(prop.default);
    }
  }
  for (const key of Object.keys(value)) {
    const prop = schema.properties?.get(key);
    if (prop) {
      applyDefaultsInPlace(value[key], prop);
    } else if (typeof schema.additionalProperties === 'object') {
      const ap = schema.additionalProperties;
      if (isNonNullableNull(value[key], ap) && ap.hasDefault) value[key] = structuredClone(ap.default);
      applyDefaultsInPlace(value[key], ap);
    }
  }
}

/** Drop `null` values of non-nullable fields that have no default (in place). */
export function pruneNonNullableNulls(value: unknown, schema: SchemaNode | undefined): void {
  if (schema === undefined) return;
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) pruneNonNullableNulls(item, schema.items);
    return;
  }
  if (!isRecord(value)) return;
  for (const key of Object.keys(value)) {
    const prop = schema.properties?.get(key) ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!prop) continue;
    if (value[key] === null) {
      if (!prop.nullable && !prop.hasDefault) delete value[key];
    } else {
      pruneNonNullableNulls(value[key], prop);
    }
  }
}

/**
 * Whether applyDefaultsInPlace or pruneNonNullableNulls would change `value`: a default missing, or a
 * null in a non-nullable field. Reads only, so an object already defaulted (nearly every stored one)
 * is served as it is, without a copy.
 */
export function needsDefaulting(value: unknown, schema: SchemaNode | undefined): boolean {
  if (schema === undefined) return false;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items) return false;
    return value.some((item) => (isNonNullableNull(item, items) && items.hasDefault) || needsDefaulting(item, items));
  }
  if (!isRecord(value)) return false;
  if (schema.properties) {
    for (const [key, prop] of schema.properties) {
      if (prop.hasDefault && (!(key in value) || isNonNullableNull(value[key], prop))) return true;
    }
  }
  for (const key of Object.keys(value)) {
    const prop = schema.properties?.get(key) ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (!prop) continue;
    // a null here is either defaulted or dropped
    if (isNonNullableNull(value[key], prop)) return true;
    if (needsDefaulting(value[key], prop)) return true;
  }
  return false;
}
