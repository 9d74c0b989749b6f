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

function ruleMatches(rule: Record<string, unknown>, target: AdmissionTarget): boolean {
  const ops = strings(rule['operations']);
  if (!ops.includes('*') && !ops.includes(target.operation)) return false;
  const groups = strings(rule['apiGroups']);
  if (!groups.includes('*') && !groups.includes(target.group)) return false;
  const versions = strings(rule['apiVersions']);
  if (!versions.includes('*') && !versions.includes(target.version)) return false;
  if (!resourceMatches(strings(rule['resources']), target.resource, target.subresource)) return false;
  const scope = stringField(rule, 'scope') ?? '*';
  if (scope === 'Cluster' && target.namespaced) return false;
  if (scope === 'Namespaced' && !target.namespaced) return false;
  return true;
}

/** Whether one webhook entry of a (Validating|Mutating)WebhookConfiguration applies. */
export function webhookMatches(webhook: KubeObject, target: AdmissionTarget): boolean {
  const rules = Array.isArray(webhook['rules']) ? webhook['rules'].filter(isObject) : [];
  if (!rules.some((r) => ruleMatches(r, target))) return false;
  // namespaceSelector: applies to namespaced objects and to Namespace objects themselves
  if (webhook['namespaceSelector'] !== undefined && (target.namespaced || target.isNamespace)) {
    const selector = labelSelectorFromObject(webhook['namespaceSelector']);
    if (!selector(target.namespaceLabels ?? {})) return false;
  }
  if (webhook['objectSelector'] !== undefined) {
    const selector = labelSelectorFromObject(webhook['objectSelector']);
    const candidates = target.objectLabels.length > 0 ? target.objectLabels : [{}];
    if (!candidates.some((labels) => selector(labels))) return false;
  }
  return true;
}
