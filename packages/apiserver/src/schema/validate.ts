import { duplicate, invalid, notSupported, required, tooLong, tooMany, typeInvalid, goFloat, forbidden } from './errors.js';
import { evaluateRule, ruleErrorString, type CompiledRule } from './cel.js';
import { isRecord, type SchemaNode } from './node.js';
import { childPath, indexPath } from './prune.js';
import type { FieldError } from './types.js';

// OpenAPI value validation as kube-openapi's SchemaValidator runs it for CRDs (each validator applies by
// the kind of the value, so a wrong type can also fail an enum), x-kubernetes-list-type invariants, and
// CEL rules. Message texts follow kube-openapi and apiextensions-apiserver so clients print what a real
// cluster prints. Updates ratchet: a subtree equal to its old counterpart is not re-validated
// (CRDValidationRatcheting, on by default since Kubernetes 1.30).

/** The correlated old value at the same place, when there is one. */
type Old = { value: unknown } | undefined;

export type RulesOf = (node: SchemaNode) => CompiledRule[];

export function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

const typeMatches = (schema: SchemaNode, value: unknown): boolean => {
  const actual = jsonType(value);
  if (schema.intOrString) return actual === 'integer' || actual === 'string';
  if (!schema.type) return true;
  return schema.type === actual || (schema.type === 'number' && actual === 'integer');
};

const unchanged = (value: unknown, old: Old): boolean => old !== undefined && deepEqual(value, old.value);

const childOld = (old: Old, key: string): Old =>
  old !== undefined && isRecord(old.value) && key in old.value ? { value: old.value[key] } : undefined;

const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const FORMATS: Record<string, (s: string) => boolean> = {
  'date-time': (s) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  datetime: (s) => DATE_TIME.test(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  uuid: (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  ipv4: (s) => /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(s),
  hostname: (s) => s.length <= 255 && /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/.test(s),
};

/** OpenAPI value validations of one value (recursively); list-type errors go to `listErrors`. */
export function validateValue(
  schema: SchemaNode,
  value: unknown,
  path: string,
  old: Old,
  errors: FieldError[],
  listErrors: FieldError[],
  isResourceRoot = false,
): void {
  if (unchanged(value, old)) return;
  if (value === null) {
    if (!schema.nullable && (schema.type || schema.intOrString)) {
      errors.push(typeInvalid(path, 'null', `${path} in body must be of type ${schema.type ?? 'integer,string'}: "null"`));
    }
    return;
  }
  if (!typeMatches(schema, value)) {
    const actual = jsonType(value);
    errors.push(typeInvalid(path, actual, `${path} in body must be of type ${schema.intOrString ? 'integer,string' : schema.type}: "${actual}"`));
  }
  if (typeof value === 'string') validateString(schema, value, path, errors);
  if (typeof value === 'number') validateNumber(schema, value, path, errors);
  if (Array.isArray(value)) validateArray(schema, value, path, old, errors, listErrors);
  if (schema.enum && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
    errors.push(notSupported(path, value, schema.enum));
  }
  if (isRecord(value)) validateObject(schema, value, path, old, errors, listErrors, isResourceRoot);
}

function validateString(schema: SchemaNode, value: string, path: string, errors: FieldError[]): void {
  const length = [...value].length;
  if (schema.maxLength !== undefined && length > schema.maxLength) {
    errors.push(tooLong(path, schema.maxLength));
  } else if (schema.minLength !== undefined && length < schema.minLength) {
    errors.push(invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
  } else if (schema.pattern && !schema.pattern.regexp.test(value)) {
    errors.push(invalid(path, value, `${path} in body should match '${schema.pattern.source}'`));
  }
  const check = schema.format ? FORMATS[schema.format] : undefined;
  if (check && !check(value)) {
    errors.push(typeInvalid(path, value, `${path} in body must be of type ${schema.format}: ${JSON.stringify(value)}`));
  }
}

function validateNumber(schema: SchemaNode, value: number, path: string, errors: FieldError[]): void {
  if (schema.multipleOf !== undefined && schema.multipleOf > 0) {
    const q = value / schema.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) {
      errors.push(invalid(path, value, `${path} in body should be a multiple of ${goFloat(schema.multipleOf)}`));
    }
  }
  if (schema.maximum !== undefined) {
    const over = schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum;
    if (over) {
      const relation = schema.exclusiveMaximum ? 'less than' : 'less than or equal to';
      errors.push(invalid(path, value, `${path} in body should be ${relation} ${goFloat(schema.maximum)}`));
    }
  }
  if (schema.minimum !== undefined) {
    const under = schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum;
    if (under) {
      const relation = schema.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      errors.push(invalid(path, value, `${path} in body should be ${relation} ${goFloat(schema.minimum)}`));
    }
  }
}

/** For a map list, the old item with the same keys. */
function correlateMapItem(schema: SchemaNode, item: unknown, old: Old): Old {
  if (old === undefined || !Array.isArray(old.value) || !isRecord(item)) return undefined;
  const keys = schema.listMapKeys;
  const match = old.value.find((o) => isRecord(o) && keys.every((k) => deepEqual(o[k], item[k])));
  return match === undefined ? undefined : { value: match };
}

function validateArray(schema: SchemaNode, value: unknown[], path: string, old: Old, errors: FieldError[], listErrors: FieldError[]): void {
  const items = schema.items;
  if (items) {
    value.forEach((item, i) => {
      const itemOld = schema.listType === 'map' ? correlateMapItem(schema, item, old) : undefined;
      validateValue(items, item, indexPath(path, i), itemOld, errors, listErrors);
    });
  }
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    errors.push(invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`));
  }
  if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    errors.push(tooMany(path, value.length, schema.maxItems));
  }
  if (schema.listType === 'set') {
    value.forEach((item, i) => {
      if (value.slice(0, i).some((earlier) => deepEqual(earlier, item))) listErrors.push(duplicate(indexPath(path, i), item));
    });
  } else if (schema.listType === 'map' && schema.listMapKeys.length) {
    const seen: Record<string, unknown>[] = [];
    value.forEach((item, i) => {
      if (!isRecord(item)) return;
      const key: Record<string, unknown> = {};
      for (const k of schema.listMapKeys) {
        const keySchema = items?.properties?.get(k);
        key[k] = k in item ? item[k] : keySchema?.hasDefault ? keySchema.default : undefined;
      }
      if (seen.some((s) => deepEqual(s, key))) listErrors.push(duplicate(indexPath(path, i), key));
      else seen.push(key);
    });
  }
}

function validateObject(
  schema: SchemaNode,
  value: Record<string, unknown>,
  path: string,
  old: Old,
  errors: FieldError[],
  listErrors: FieldError[],
  isResourceRoot: boolean,
): void {
  const count = Object.keys(value).length;
  // kube-openapi stops at a property-count failure without looking inside the object.
  if (schema.minProperties !== undefined && count < schema.minProperties) {
    errors.push(invalid(path, count, `${path} in body should have at least ${schema.minProperties} properties`));
    return;
  }
  if (schema.maxProperties !== undefined && count > schema.maxProperties) {
    errors.push(tooMany(path, count, schema.maxProperties));
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (isResourceRoot && key === 'metadata') {
      validateMetadataNames(schema.properties?.get('metadata'), child, childOld(old, key), errors);
      continue;
    }
    const prop = schema.properties?.get(key);
    const target = prop ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (target) validateValue(target, child, childPath(path, key), childOld(old, key), errors, listErrors);
  }
  for (const name of schema.required) {
    if (!(name in value)) errors.push(required(childPath(path, name)));
  }
}

/**
 * The server owns metadata, but a CRD schema may restrict metadata.name and metadata.generateName
 * (the only metadata a structural schema may constrain); those restrictions apply.
 */
function validateMetadataNames(metadataSchema: SchemaNode | undefined, metadata: unknown, old: Old, errors: FieldError[]): void {
  if (!metadataSchema?.properties || !isRecord(metadata)) return;
  for (const field of ['name', 'generateName']) {
    const fieldSchema = metadataSchema.properties.get(field);
    if (fieldSchema && field in metadata) validateValue(fieldSchema, metadata[field], `metadata.${field}`, childOld(old, field), errors, []);
  }
}

const BLOCKING = new Set<FieldError['reason']>([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** apiextensions-apiserver skips CEL rules when the object does not have the shape the rules were written for. */
export function blockingError(errors: FieldError[]): FieldError | undefined {
  if (!errors.some((e) => BLOCKING.has(e.reason))) return undefined;
  return invalid('<nil>', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation');
}

function ruleFieldPath(path: string, fieldPath: string | undefined): string {
  if (!fieldPath) return path;
  const relative = fieldPath
    .replace(/^\./, '')
    .replace(/\[['"]([^'"\]]*)['"]\]/g, '.$1')
    .replace(/^\./, '');
  return relative ? childPath(path, relative) : path;
}

function ruleError(rule: CompiledRule, schema: SchemaNode, path: string, message: string): FieldError {
  // A rule on the resource root reports the nil path, which Go prints as "<nil>".
  const field = ruleFieldPath(path, rule.spec.fieldPath) || '<nil>';
  const typeName = schema.type ?? '';
  switch (rule.spec.reason) {
    case 'FieldValueForbidden':
      return forbidden(field, message);
    case 'FieldValueRequired':
      return required(field, message);
    case 'FieldValueDuplicate':
      return duplicate(field, typeName, message);
    default:
      return invalid(field, typeName, message);
  }
}

/** Evaluate x-kubernetes-validations rules over the value tree. */
export function validateRules(schema: SchemaNode, value: unknown, path: string, old: Old, rulesOf: RulesOf, errors: FieldError[], isResourceRoot = false): void {
  if (value === undefined || value === null || !typeMatches(schema, value)) return;
  if (unchanged(value, old)) return;
  for (const rule of rulesOf(schema)) {
    if (rule.usesOldSelf && old === undefined && !rule.spec.optionalOldSelf) continue;
    const outcome = evaluateRule(rule, value, old, schema);
    if (outcome.ok) continue;
    if ('message' in outcome) {
      errors.push(ruleError(rule, schema, path, outcome.message));
    } else {
      errors.push(invalid(path || '<nil>', schema.type ?? '', `${outcome.evaluationError} evaluating rule: ${ruleErrorString(rule.spec)}`));
    }
  }
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    value.forEach((item, i) => {
      const itemOld = schema.listType === 'map' ? correlateMapItem(schema, item, old) : undefined;
      validateRules(items, item, indexPath(path, i), itemOld, rulesOf, errors);
    });
  } else if (isRecord(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (isResourceRoot && key === 'metadata') continue;
      const prop = schema.properties?.get(key);
      const target = prop ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (target) validateRules(target, child, childPath(path, key), childOld(old, key), rulesOf, errors);
    }
  }
}
