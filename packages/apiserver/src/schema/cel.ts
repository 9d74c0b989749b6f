import { Environment, Optional, type ParseResult } from '@marcbachmann/cel-js';
import { isRecord, type SchemaNode, type ValidationRuleSpec } from './node.js';
import { typedEnvironment, typeProblem } from './cel-types.js';
import { registerKubernetesLibraries } from './cel-library.js';
import { invalid } from './errors.js';
import type { FieldError } from './types.js';

// x-kubernetes-validations evaluated with a real CEL implementation. Values are bound the way the
// Kubernetes CEL adaptor binds them: integers as int (bigint here), numbers as double, date-time strings
// as timestamps, objects as maps, arrays as lists.

const environment = registerKubernetesLibraries(new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false, enableOptionalTypes: true }))
  .registerVariable('self', 'dyn')
  .registerVariable('oldSelf', 'dyn');

/** One compiled rule of a schema node. */
export interface CompiledRule {
  spec: ValidationRuleSpec;
  program: ParseResult;
  messageProgram?: ParseResult;
  /** A transition rule (references oldSelf): only evaluated on update, when an old value exists. */
  usesOldSelf: boolean;
}

function referencesOldSelf(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(referencesOldSelf);
  if (!isRecord(node)) return false;
  if (node.op === 'id' && node.args === 'oldSelf') return true;
  return referencesOldSelf(node.args);
}

const summaryOf = (err: unknown): string => {
  if (isRecord(err) && typeof err.summary === 'string') return err.summary;
  return err instanceof Error ? err.message.split('\n')[0]! : String(err);
};

/** Compile every rule of a node; problems are collected as CRD validation errors. */
export function compileRules(node: SchemaNode, path: string, problems: FieldError[]): CompiledRule[] {
  const compiled: CompiledRule[] = [];
  let typed: Environment | undefined;
  try {
    typed = typedEnvironment(node);
  } catch {
    typed = undefined; // a schema shape this checker cannot express: evaluate untyped
  }
  node.rules.forEach((spec, i) => {
    try {
      const program = environment.parse(spec.rule);
      // With optionalOldSelf, oldSelf is an optional; the checker below only knows it as the node's type.
      const problem = typed && !spec.optionalOldSelf && typeProblem(typed, spec.rule);
      if (problem) {
        problems.push(invalid(`${path}.x-kubernetes-validations[${i}].rule`, spec.rule, `compilation failed: ${problem}`));
        return;
      }
      let messageProgram: ParseResult | undefined;
      if (spec.messageExpression) messageProgram = environment.parse(spec.messageExpression);
      compiled.push({ spec, program, messageProgram, usesOldSelf: referencesOldSelf(program.ast) });
    } catch (err) {
      problems.push(invalid(`${path}.x-kubernetes-validations[${i}].rule`, spec.rule, `compilation failed: ${summaryOf(err)}`));
    }
  });
  return compiled;
}

/** Convert a JSON value to its CEL binding, guided by the schema. */
export function toCel(value: unknown, schema: SchemaNode | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    // int in CEL unless the schema says number (double); untyped (preserved) integral values are ints too.
    return schema?.type !== 'number' && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (typeof value === 'string') {
    if (schema?.format === 'date-time') {
      const date = new Date(value);
      if (!Number.isNaN(date.getTime())) return date;
    }
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => toCel(item, schema?.items));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const prop = schema?.properties?.get(key) ?? (typeof schema?.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      out[key] = toCel(v, prop);
    }
    return out;
  }
  return value;
}

export type RuleOutcome = { ok: true } | { ok: false; message: string } | { ok: false; evaluationError: string };

/**
 * Evaluate one rule against `self` and, for transition rules, `oldSelf` (the correlated old value, when
 * there is one). With `optionalOldSelf`, oldSelf is bound as an optional, empty on create.
 */
export function evaluateRule(rule: CompiledRule, self: unknown, old: { value: unknown } | undefined, schema: SchemaNode): RuleOutcome {
  const oldSelf = rule.spec.optionalOldSelf
    ? old === undefined
      ? Optional.none()
      : Optional.of(toCel(old.value, schema))
    : toCel(old?.value, schema);
  const context = { self: toCel(self, schema), oldSelf };
  let result: unknown;
  try {
    result = rule.program(context);
  } catch (err) {
    return { ok: false, evaluationError: summaryOf(err) };
  }
  if (result === true) return { ok: true };
  if (typeof result !== 'boolean') return { ok: false, evaluationError: `rule did not evaluate to a bool, but ${typeof result}` };
  let message = ruleMessage(rule.spec);
  if (rule.messageProgram) {
    try {
      const text: unknown = rule.messageProgram(context);
      if (typeof text === 'string' && text.trim() !== '') message = text.trim();
    } catch {
      // kube-apiserver falls back to the static message when messageExpression fails.
    }
  }
  return { ok: false, message };
}

/** ruleErrorString in apiextensions-apiserver: the message if set, else the rule. */
export const ruleErrorString = (spec: ValidationRuleSpec): string => (spec.message?.trim() ? spec.message.trim() : spec.rule.trim());

/** ruleMessageOrDefault in apiextensions-apiserver. */
export const ruleMessage = (spec: ValidationRuleSpec): string =>
  spec.message?.trim() ? spec.message.trim() : `failed rule: ${ruleErrorString(spec)}`;
