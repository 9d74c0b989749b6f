import { Annotations, DELETION_POLICIES, type DeletionPolicy } from '@k8or/api';
import { annotation, stringField } from './read.js';

export function isDeletionPolicy(value: unknown): value is DeletionPolicy {
  return typeof value === 'string' && (DELETION_POLICIES as readonly string[]).includes(value);
}

/** Which deletion policy applies, and where it came from. */
export interface DeletionPolicyChoice {
  policy: DeletionPolicy;
  source: 'resource-annotation' | 'spec' | 'namespace-annotation' | 'operator-default';
}

/**
 * The deletion policy of a managed resource: its `k8or.io/deletion-policy`
 * annotation, else `spec.deletionPolicy`, else its namespace's annotation,
 * else the operator default. A value that is neither Delete nor Retain is
 * skipped (the webhook refuses it on the resource and warns about it on the
 * namespace). The engine deletes by it; the webhook defaults and warns by it.
 */
export function deletionPolicyFor(resource: unknown, namespace: unknown, operatorDefault: DeletionPolicy): DeletionPolicyChoice {
  const own = annotation(resource, Annotations.deletionPolicy);
  if (isDeletionPolicy(own)) return { policy: own, source: 'resource-annotation' };
  const spec = stringField(resource, 'spec', 'deletionPolicy');
  if (isDeletionPolicy(spec)) return { policy: spec, source: 'spec' };
  const fromNamespace = annotation(namespace, Annotations.deletionPolicy);
  if (isDeletionPolicy(fromNamespace)) return { policy: fromNamespace, source: 'namespace-annotation' };
  return { policy: operatorDefault, source: 'operator-default' };
}

/** What deleting the object does to the cloud: ObserveOnly always retains, else the deletion policy. */
export function deletionActionFor(resource: unknown, namespace: unknown, operatorDefault: DeletionPolicy): DeletionPolicy {
  return stringField(resource, 'spec', 'managementPolicy') === 'ObserveOnly' ? 'Retain' : deletionPolicyFor(resource, namespace, operatorDefault).policy;
}
