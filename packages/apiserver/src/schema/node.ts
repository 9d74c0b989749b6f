import { invalid, required } from './errors.js';
import { SchemaCompileError, type FieldError } from './types.js';

/** One CEL rule of `x-kubernetes-validations`, as written in the CRD. */
export interface ValidationRuleSpec {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** A structural schema node, narrowed from the CRD's JSON. */
export interface SchemaNode {
  type?: string;
  format?: string;
  nullable: boolean;
  properties?: Map<string, SchemaNode>;
  required: string[];
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  enum?: unknown[];
  pattern?: { source: string; regexp: RegExp };
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  hasDefault: boolean;
  default?: unknown;
  preserveUnknownFields: boolean;
  embeddedResource: boolean;
  intOrString: boolean;
  listType?: string;
  listMapKeys: string[];
  rules: ValidationRuleSpec[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/**
 * Kubernetes patterns are RE2 (Go) syntax; JavaScript's `u` regexps accept nearly all of what CRDs use.
 * Inline flags like `(?i)` at the start are translated.
 */
function compilePattern(source: string): RegExp {
  let flags = 'u';
  let body = source;
  const inline = /^\(\?([imsU]+)\)/.exec(body);
  if (inline) {
    body = body.slice(inline[0].length);
    if (inline[1]!.includes('i')) flags += 'i';
    if (inline[1]!.includes('s')) flags += 's';
    if (inline[1]!.includes('m')) flags += 'm';
  }
  try {
    return new RegExp(body, flags);
  } catch {
    return new RegExp(body, flags.replace('u', ''));
  }
}

/** Narrow a CRD openAPIV3Schema (unknown JSON) into SchemaNodes; throws SchemaCompileError on bad input. */
export function toSchemaNode(raw: unknown, path: string, problems: FieldError[]): SchemaNode {
  if (!isRecord(raw)) {
    problems.push(invalid(path, raw, 'must be an object'));
    return toSchemaNode({}, path, []);
  }
  const node: SchemaNode = {
    type: typeof raw.type === 'string' && raw.type !== '' ? raw.type : undefined,
    format: typeof raw.format === 'string' && raw.format !== '' ? raw.format : undefined,
    nullable: raw.nullable === true,
    required: Array.isArray(raw.required) ? raw.required.filter((r): r is string => typeof r === 'string') : [],
    exclusiveMinimum: raw.exclusiveMinimum === true,
    exclusiveMaximum: raw.exclusiveMaximum === true,
    hasDefault: 'default' in raw && raw.default !== undefined,
    default: raw.default,
    preserveUnknownFields: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: raw['x-kubernetes-embedded-resource'] === true,
    intOrString: raw['x-kubernetes-int-or-string'] === true,
    listType: typeof raw['x-kubernetes-list-type'] === 'string' ? raw['x-kubernetes-list-type'] : undefined,
    listMapKeys: Array.isArray(raw['x-kubernetes-list-map-keys'])
      ? raw['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
      : [],
    rules: [],
    minLength: num(raw.minLength),
    maxLength: num(raw.maxLength),
    minimum: num(raw.minimum),
    maximum: num(raw.maximum),
    multipleOf: num(raw.multipleOf),
    minItems: num(raw.minItems),
    maxItems: num(raw.maxItems),
    minProperties: num(raw.minProperties),
    maxProperties: num(raw.maxProperties),
  };
  if (Array.isArray(raw.enum)) node.enum = raw.enum;
  if (typeof raw.pattern === 'string') {
    try {
      node.pattern = { source: raw.pattern, regexp: compilePattern(raw.pattern) };
    } catch (err) {
      problems.push(invalid(`${path}.pattern`, raw.pattern, `must be a valid regular expression, but isn't: ${(err as Error).message}`));
    }
  }
  if (isRecord(raw.properties)) {
    node.properties = new Map();
    for (const [name, prop] of Object.entries(raw.properties)) {
      node.properties.set(name, toSchemaNode(prop, `${path}.properties[${name}]`, problems));
    }
  }
  if (raw.items !== undefined) {
    node.items = toSchemaNode(raw.items, `${path}.items`, problems);
  }
  if (typeof raw.additionalProperties === 'boolean') {
    node.additionalProperties = raw.additionalProperties;
  } else if (isRecord(raw.additionalProperties)) {
    node.additionalProperties = toSchemaNode(raw.additionalProperties, `${path}.additionalProperties`, problems);
  }
  const rules = raw['x-kubernetes-validations'];
  if (Array.isArray(rules)) {
    rules.forEach((rule, i) => {
      if (!isRecord(rule) || typeof rule.rule !== 'string') {
        problems.push(required(`${path}.x-kubernetes-validations[${i}].rule`));
        return;
      }
      node.rules.push({
        rule: rule.rule,
        message: typeof rule.message === 'string' ? rule.message : undefined,
        messageExpression: typeof rule.messageExpression === 'string' ? rule.messageExpression : undefined,
        reason: typeof rule.reason === 'string' ? rule.reason : undefined,
        fieldPath: typeof rule.fieldPath === 'string' ? rule.fieldPath : undefined,
        optionalOldSelf: rule.optionalOldSelf === true,
      });
    });
  }
  return node;
}

export function parseSchema(raw: unknown): SchemaNode {
  const problems: FieldError[] = [];
  const node = toSchemaNode(raw ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'openAPIV3Schema', problems);
  if (problems.length) throw new SchemaCompileError(problems);
  return node;
}

/** Is this node an object node (declares properties, additionalProperties or type object)? */
export const isObjectNode = (s: SchemaNode): boolean =>
  s.type === 'object' || s.properties !== undefined || s.additionalProperties !== undefined;

export { isRecord };
