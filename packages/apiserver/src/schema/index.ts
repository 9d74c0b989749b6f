import { compileRules, type CompiledRule } from './cel.js';
import { applyDefaultsInPlace, needsDefaulting, pruneNonNullableNulls } from './defaults.js';
import { parseSchema, type SchemaNode } from './node.js';
import { hasUnknownFields, prune } from './prune.js';
import { SchemaCompileError, type AdmitOptions, type AdmitResult, type CompiledSchema, type FieldError } from './types.js';
import { blockingError, validateRules, validateValue } from './validate.js';

export type { AdmitOptions, AdmitResult, CompiledSchema, FieldError } from './types.js';
export { SchemaCompileError } from './types.js';
export { fieldErrorText } from './errors.js';

const inStatus = (e: FieldError): boolean => e.field === 'status' || e.field.startsWith('status.') || e.field.startsWith('status[');

/**
 * Compile a CRD version's `openAPIV3Schema` (structural schema) for admission of custom objects.
 * Throws {@link SchemaCompileError} when a pattern or a CEL rule does not compile, as kube-apiserver
 * would reject such a CRD. An absent schema admits anything (preserve-unknown-fields).
 */
export function compileCrdSchema(openAPIV3Schema: unknown): CompiledSchema {
  const root = parseSchema(openAPIV3Schema);
  const rules = new Map<SchemaNode, CompiledRule[]>();
  const problems: FieldError[] = [];
  const collect = (node: SchemaNode, path: string): void => {
    if (node.rules.length) rules.set(node, compileRules(node, path, problems));
    node.properties?.forEach((child, name) => collect(child, `${path}.properties[${name}]`));
    if (node.items) collect(node.items, `${path}.items`);
    if (typeof node.additionalProperties === 'object') collect(node.additionalProperties, `${path}.additionalProperties`);
  };
  collect(root, 'openAPIV3Schema');
  if (problems.length) throw new SchemaCompileError(problems);
  const rulesOf = (node: SchemaNode): CompiledRule[] => rules.get(node) ?? [];

  /** Pruned and defaulted: a copy, or (nothing to prune or default) `object` itself, which is then only read. */
  const normalize = (object: Record<string, unknown>): { object: Record<string, unknown>; unknown: string[] } => {
    if (!hasUnknownFields(object, root) && !needsDefaulting(object, root)) return { object, unknown: [] };
    const copy = structuredClone(object);
    const unknown = prune(copy, root).sort();
    applyDefaultsInPlace(copy, root);
    pruneNonNullableNulls(copy, root);
    return { object: copy, unknown };
  };

  return {
    applyDefaults(object) {
      if (!needsDefaulting(object, root)) return object;
      const copy = structuredClone(object);
      applyDefaultsInPlace(copy, root);
      pruneNonNullableNulls(copy, root);
      return copy;
    },

    admit(object, oldObject, options: AdmitOptions): AdmitResult {
      const { object: admitted, unknown } = normalize(object);
      const warnings: string[] = [];
      const unknownMessages = unknown.map((path) => `unknown field ${JSON.stringify(path)}`);
      if (unknown.length && options.fieldValidation === 'Strict') {
        return {
          object: admitted,
          errors: unknown.map((path, i) => ({ field: path, reason: 'FieldValueInvalid', message: unknownMessages[i]! })),
          warnings,
          strictDecodingError: `strict decoding error: ${unknownMessages.join(', ')}`,
        };
      }
      if (options.fieldValidation === 'Warn') warnings.push(...unknownMessages);

      const old = oldObject === undefined ? undefined : { value: normalize(oldObject).object };
      const keep = options.subresource === 'status' ? inStatus : () => true;
      const schemaErrors: FieldError[] = [];
      const listErrors: FieldError[] = [];
      validateValue(root, admitted, '', old, schemaErrors, listErrors, true);
      const errors = [...schemaErrors, ...listErrors].filter(keep);
      const blocked = blockingError(errors);
      if (blocked) {
        errors.push(blocked);
      } else {
        const ruleErrors: FieldError[] = [];
        validateRules(root, admitted, '', old, rulesOf, ruleErrors, true);
        errors.push(...ruleErrors.filter(keep));
      }
      return { object: admitted, errors, warnings };
    },
  };
}
