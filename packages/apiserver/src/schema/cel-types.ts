import { Environment } from '@marcbachmann/cel-js';
import { isObjectNode, type SchemaNode } from './node.js';
import { registerKubernetesLibraries } from './cel-library.js';

// Type-checking of x-kubernetes-validations against the schema, as kube-apiserver does when a CRD is
// written: `self` (and `oldSelf`) get the type the schema declares at the rule's node, so a rule that
// names an undeclared field fails at CRD creation ("undefined field 'colour'"), not on every object.

/** A CEL environment where `self` and `oldSelf` have the declared type of `node`. */
export function typedEnvironment(node: SchemaNode): Environment {
  const env = registerKubernetesLibraries(new Environment({ homogeneousAggregateLiterals: false }));
  let counter = 0;
  const typeOf = (s: SchemaNode): string => {
    if (s.intOrString) return 'dyn';
    switch (s.type) {
      case 'string':
        return s.format === 'date-time' ? 'google.protobuf.Timestamp' : 'string';
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'array':
        return s.items ? `list<${typeOf(s.items)}>` : 'list<dyn>';
      default:
        break;
    }
    if (!isObjectNode(s) || s.preserveUnknownFields) return 'dyn';
    if (typeof s.additionalProperties === 'object') return `map<string, ${typeOf(s.additionalProperties)}>`;
    if (!s.properties) return 'map<string, dyn>';
    const name = `k8or.schema.Object${counter++}`;
    const fields: Record<string, string> = {};
    for (const [field, prop] of s.properties) fields[field] = typeOf(prop);
    env.registerType(name, { fields });
    // Objects compare by value in Kubernetes CEL (self == oldSelf on an object is the usual immutability rule).
    env.registerOperator(`${name} == ${name}`, () => false);
    return name;
  };
  const selfType = typeOf(node);
  env.registerVariable('self', selfType);
  env.registerVariable('oldSelf', selfType);
  return env;
}

const SCALAR_RESULTS = new Set(['int', 'uint', 'double', 'string', 'bytes', 'null_type', 'google.protobuf.Timestamp', 'google.protobuf.Duration']);

/**
 * Problems kube-apiserver reports for this rule at CRD creation, if any: an undefined field, or a
 * result that is not a bool. Other checker complaints are not reported (this checker is not cel-go,
 * and a false alarm would refuse a CRD a real cluster accepts).
 */
export function typeProblem(env: Environment, rule: string): string | undefined {
  let result: ReturnType<Environment['check']>;
  try {
    result = env.check(rule);
  } catch {
    return undefined;
  }
  if (!result.valid) {
    const error = result.error as (Error & { summary?: string; range?: { start: number } }) | undefined;
    const summary = error?.summary ?? error?.message ?? '';
    const key = /^No such key: (.+)$/.exec(summary.split('\n')[0]!.trim());
    if (!key) return undefined;
    const column = (error?.range?.start ?? 0) + 1;
    return `ERROR: <input>:1:${column}: undefined field '${key[1]}'`;
  }
  const type = result.type ?? '';
  if (SCALAR_RESULTS.has(type) || type.startsWith('list<') || type.startsWith('map<') || type.startsWith('k8or.schema.')) {
    return `rule must evaluate to a bool, but evaluates to ${type}`;
  }
  return undefined;
}
