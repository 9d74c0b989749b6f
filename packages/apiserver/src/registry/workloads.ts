/** Strategies of apps/v1 Deployments and policy/v1 PodDisruptionBudgets: stored, defaulted, validated; no Pods run. */
import type { KubeObject } from '../types.js';
import { isObject, jsonEqual } from '../util.js';
import { labelSelectorFromObject } from '../selectors/labels.js';
import type { FieldCause } from '../status.js';

/** apps/v1 defaults (k8s.io/kubernetes pkg/apis/apps/v1/defaults.go), and an empty status: nothing rolls out. */
export function defaultDeployment(obj: KubeObject): void {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  obj['spec'] = spec;
  spec['replicas'] ??= 1;
  spec['revisionHistoryLimit'] ??= 10;
  spec['progressDeadlineSeconds'] ??= 600;
  const strategy = isObject(spec['strategy']) ? spec['strategy'] : {};
  strategy['type'] ??= 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') strategy['rollingUpdate'] ??= { maxUnavailable: '25%', maxSurge: '25%' };
  spec['strategy'] = strategy;
}

export function validateDeployment(obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  const selector = spec['selector'];
  const template = isObject(spec['template']) ? spec['template'] : undefined;
  if (!isObject(selector)) {
    causes.push({ field: 'spec.selector', reason: 'FieldValueRequired', message: 'Required value' });
  } else if (!isObject(selector['matchLabels']) && !Array.isArray(selector['matchExpressions'])) {
    causes.push({ field: 'spec.selector', reason: 'FieldValueInvalid', message: 'Invalid value: "{}": empty selector is invalid for deployment' });
  }
  if (typeof spec['replicas'] === 'number' && spec['replicas'] < 0) {
    causes.push({ field: 'spec.replicas', reason: 'FieldValueInvalid', message: `Invalid value: ${spec['replicas']}: must be greater than or equal to 0` });
  }
  const templateMeta = template && isObject(template['metadata']) ? template['metadata'] : {};
  const labels = isObject(templateMeta['labels']) ? (templateMeta['labels'] as Record<string, string>) : {};
  if (isObject(selector) && !labelSelectorFromObject(selector)(labels)) {
    causes.push({ field: 'spec.template.metadata.labels', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\`` });
  }
  const podSpec = template && isObject(template['spec']) ? template['spec'] : {};
  const containers = Array.isArray(podSpec['containers']) ? podSpec['containers'] : [];
  if (containers.length === 0) causes.push({ field: 'spec.template.spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
  containers.forEach((c: unknown, i) => {
    const container = isObject(c) ? c : {};
    if (typeof container['name'] !== 'string' || container['name'] === '') causes.push({ field: `spec.template.spec.containers[${i}].name`, reason: 'FieldValueRequired', message: 'Required value' });
    if (typeof container['image'] !== 'string' || container['image'] === '') causes.push({ field: `spec.template.spec.containers[${i}].image`, reason: 'FieldValueRequired', message: 'Required value' });
  });
  if (old) {
    const oldSpec = isObject(old['spec']) ? old['spec'] : {};
    if (!jsonEqual(oldSpec['selector'], spec['selector'])) {
      causes.push({ field: 'spec.selector', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec['selector'])}: field is immutable` });
    }
  }
  return causes;
}

export function validatePodDisruptionBudget(obj: KubeObject): FieldCause[] {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  if (spec['minAvailable'] !== undefined && spec['maxUnavailable'] !== undefined) {
    return [{ field: 'spec', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(spec)}: minAvailable and maxUnavailable cannot be both set` }];
  }
  return [];
}
