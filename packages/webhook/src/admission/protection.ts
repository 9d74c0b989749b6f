import { Annotations, KINDS, type KindName, type Violation } from '@k8or/api';
import { annotation, stringField } from './resource.js';
import type { AdmissionContext } from './types.js';

/** How many referencing resources a denial names before it says "and N more". */
const LISTED_USERS = 5;

/**
 * Why a DELETE must not happen, if it must not: the object is annotated
 * `k8or.io/protect: "true"` (the message says how to lift it), or it is a
 * ProviderConfig that resources still use (deleting it would orphan them).
 */
export function checkDeletion(kind: string, oldObject: unknown, context: AdmissionContext, requestName?: string): Violation[] {
  const violations: Violation[] = [];
  const name = stringField(oldObject, 'metadata', 'name') ?? requestName ?? '';
  const namespace = stringField(oldObject, 'metadata', 'namespace');
  if (annotation(oldObject, Annotations.protect)?.toLowerCase() === 'true') {
    const resource = kind in KINDS ? KINDS[kind as KindName].singular : kind.toLowerCase();
    const where = namespace ? ` -n ${namespace}` : '';
    violations.push({
      field: `metadata.annotations[${Annotations.protect}]`,
      rule: 'protect.delete',
      message: `${kind} "${name}" is protected from deletion; lift the protection with: kubectl annotate ${resource} ${name}${where} ${Annotations.protect}-`,
    });
  }
  if (kind === 'ProviderConfig') {
    const users = providerConfigUsers(name, context);
    if (users) violations.push({ field: 'metadata.name', rule: 'providerconfig.in-use', message: `ProviderConfig "${name}" cannot be deleted: ${users}` });
  }
  return violations;
}

/** A sentence naming the resources that use a ProviderConfig, or undefined when none do (or the lookup is unavailable). */
export function providerConfigUsers(name: string, context: AdmissionContext): string | undefined {
  const users = context.resourcesUsingProviderConfig?.(name) ?? [];
  if (users.length === 0) return undefined;
  const listed = users.slice(0, LISTED_USERS).map((u) => `${u.kind} ${u.namespace}/${u.name}`);
  const more = users.length > LISTED_USERS ? ` and ${users.length - LISTED_USERS} more` : '';
  return `${users.length} resource(s) still use it (${listed.join(', ')}${more}), and they would be orphaned; delete them or point them at another ProviderConfig first`;
}
