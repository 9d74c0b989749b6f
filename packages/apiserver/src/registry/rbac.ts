/** Strategies of rbac.authorization.k8s.io/v1 kinds: the rules kube-apiserver's RBAC validation enforces. */
import type { KubeObject } from '../types.js';
import { isObject, jsonEqual } from '../util.js';
import type { FieldCause } from '../status.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

function nonEmptyStrings(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string');
}

/** Roles and ClusterRoles: every rule names verbs, and either resources (with apiGroups) or nonResourceURLs (cluster roles only). */
export function validateRole(obj: KubeObject, clusterScoped: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  const rules = obj['rules'];
  if (rules !== undefined && rules !== null && !Array.isArray(rules)) {
    return [{ field: 'rules', reason: 'FieldValueInvalid', message: 'Invalid value: must be a list of policy rules' }];
  }
  (Array.isArray(rules) ? rules : []).forEach((r: unknown, i) => {
    const rule = isObject(r) ? r : {};
    const field = `rules[${i}]`;
    if (!nonEmptyStrings(rule['verbs'])) causes.push({ field: `${field}.verbs`, reason: 'FieldValueRequired', message: 'Required value: verbs must contain at least one value' });
    const hasUrls = Array.isArray(rule['nonResourceURLs']) && rule['nonResourceURLs'].length > 0;
    const hasResources = Array.isArray(rule['resources']) && rule['resources'].length > 0;
    if (hasUrls) {
      if (!clusterScoped) causes.push({ field: `${field}.nonResourceURLs`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(rule['nonResourceURLs'])}: namespaced rules cannot apply to non-resource URLs` });
      if (hasResources || (Array.isArray(rule['apiGroups']) && rule['apiGroups'].length > 0)) {
        causes.push({ field: `${field}.nonResourceURLs`, reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(rule['nonResourceURLs'])}: rules cannot apply to both regular resources and non-resource URLs` });
      }
    } else {
      if (!hasResources) causes.push({ field: `${field}.resources`, reason: 'FieldValueRequired', message: 'Required value: resource rules must supply at least one resource' });
      if (!Array.isArray(rule['apiGroups']) || rule['apiGroups'].length === 0) causes.push({ field: `${field}.apiGroups`, reason: 'FieldValueRequired', message: 'Required value: resource rules must supply at least one api group' });
    }
  });
  return causes;
}

const SUBJECT_KINDS = ['ServiceAccount', 'User', 'Group'];

/** RoleBindings and ClusterRoleBindings: a roleRef that never changes, subjects of known kinds. */
export function validateBinding(obj: KubeObject, old: KubeObject | undefined, clusterScoped: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  const roleRef = isObject(obj['roleRef']) ? obj['roleRef'] : undefined;
  if (!roleRef) {
    causes.push({ field: 'roleRef', reason: 'FieldValueRequired', message: 'Required value' });
  } else {
    const kinds = clusterScoped ? ['ClusterRole'] : ['Role', 'ClusterRole'];
    if (roleRef['apiGroup'] !== RBAC_GROUP) causes.push({ field: 'roleRef.apiGroup', reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(roleRef['apiGroup'] ?? '')}: supported values: "${RBAC_GROUP}"` });
    if (typeof roleRef['kind'] !== 'string' || !kinds.includes(roleRef['kind'])) {
      causes.push({ field: 'roleRef.kind', reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(roleRef['kind'] ?? '')}: supported values: ${kinds.map((k) => `"${k}"`).join(', ')}` });
    }
    if (typeof roleRef['name'] !== 'string' || roleRef['name'] === '') causes.push({ field: 'roleRef.name', reason: 'FieldValueRequired', message: 'Required value' });
  }
  if (old && !jsonEqual(old['roleRef'], obj['roleRef'])) {
    causes.push({ field: 'roleRef', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(obj['roleRef'])}: cannot change roleRef` });
  }
  const subjects = Array.isArray(obj['subjects']) ? obj['subjects'] : [];
  subjects.forEach((s: unknown, i) => {
    const subject = isObject(s) ? s : {};
    const field = `subjects[${i}]`;
    if (typeof subject['kind'] !== 'string' || !SUBJECT_KINDS.includes(subject['kind'])) {
      causes.push({ field: `${field}.kind`, reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(subject['kind'] ?? '')}: supported values: "ServiceAccount", "User", "Group"` });
    }
    if (typeof subject['name'] !== 'string' || subject['name'] === '') causes.push({ field: `${field}.name`, reason: 'FieldValueRequired', message: 'Required value' });
    if (subject['kind'] === 'ServiceAccount' && clusterScoped && (typeof subject['namespace'] !== 'string' || subject['namespace'] === '')) {
      causes.push({ field: `${field}.namespace`, reason: 'FieldValueRequired', message: 'Required value' });
    }
  });
  return causes;
}
