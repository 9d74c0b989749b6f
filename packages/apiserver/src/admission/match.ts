/** Which webhooks of a configuration apply to a request (rules, scope, namespace and object selectors). */
import type { KubeObject } from '../types.js';
import { isObject, stringField } from '../util.js';
import { labelSelectorFromObject } from '../selectors/labels.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionTarget {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespaced: boolean;
  namespace: string;
  /** Labels of the object (new, then old) for objectSelector. */
  objectLabels: Array<Record<string, string>>;
  /** Labels of the request's namespace (or of the namespace object itself), for namespaceSelector. */
  namespaceLabels?: Record<string, string>;
  /** True when the object is a Namespace (its own labels feed namespaceSelector). */
  isNamespace: boolean;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `resources` entries: "buckets", "buckets/status", "*", "*\/*", "buckets/*", "*\/status". */
function resourceMatches(patterns: string[], resource: string, subresource: string): boolean {
  return patterns.some((p) => {
    const [res, sub] = p.split('/', 2) as [string, string | undefined];
    if (sub === undefined) return (res === '*' || res === resource) && subresource === '';
    if (sub === '*') return res === '*' || res === resource;
    return (res === '*' || res === resource) && sub === subresource;
  });
}

interface CompiledRule {
  operations: Set<string>;
  groups: Set<string>;
  versions: Set<string>;
  resources: string[];
  scope: string;
}

function compileRule(rule: Record<string, unknown>): CompiledRule {
  return {
    operations: new Set(strings(rule['operations'])),
    groups: new Set(strings(rule['apiGroups'])),
    versions: new Set(strings(rule['apiVersions'])),
    resources: strings(rule['resources']),
    scope: stringField(rule, 'scope') ?? '*',
  };
}

function ruleMatches(rule: CompiledRule, target: AdmissionTarget): boolean {
  if (!rule.operations.has('*') && !rule.operations.has(target.operation)) return false;
  if (!rule.groups.has('*') && !rule.groups.has(target.group)) return false;
  if (!rule.versions.has('*') && !rule.versions.has(target.version)) return false;
  if (!resourceMatches(rule.resources, target.resource, target.subresource)) return false;
  if (rule.scope === 'Cluster' && target.namespaced) return false;
  if (rule.scope === 'Namespaced' && !target.namespaced) return false;
  return true;
}

/** Whether one webhook entry of a (Validating|Mutating)WebhookConfiguration applies to a request. */
export type WebhookMatcher = (target: AdmissionTarget) => boolean;

/**
 * Compiles one webhook entry's rules and selectors into a matcher, once per stored configuration
 * rather than once per call.
 */
export function webhookMatcher(webhook: KubeObject): WebhookMatcher {
  const rules = (Array.isArray(webhook['rules']) ? webhook['rules'].filter(isObject) : []).map(compileRule);
  const namespaceSelector = webhook['namespaceSelector'] !== undefined ? labelSelectorFromObject(webhook['namespaceSelector']) : undefined;
  const objectSelector = webhook['objectSelector'] !== undefined ? labelSelectorFromObject(webhook['objectSelector']) : undefined;
  return (target) => {
    if (!rules.some((r) => ruleMatches(r, target))) return false;
    // namespaceSelector: applies to namespaced objects and to Namespace objects themselves
    if (namespaceSelector && (target.namespaced || target.isNamespace) && !namespaceSelector(target.namespaceLabels ?? {})) return false;
    if (objectSelector) {
      const candidates = target.objectLabels.length > 0 ? target.objectLabels : [{}];
      if (!candidates.some((labels) => objectSelector(labels))) return false;
    }
    return true;
  };
}
