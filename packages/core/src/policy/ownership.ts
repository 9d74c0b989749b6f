import { Annotations, MANAGED_BY, OwnerTags } from '@k8or/api';
import { creationStateOf } from './creation.js';
import { annotationIsTrue, stringField } from './read.js';

/** The owner tags k8or writes on (and expects to find on) the cloud resource of this object. */
export function ownerTagsFor(resource: unknown, clusterId: string): Record<string, string> {
  return {
    [OwnerTags.managedBy]: MANAGED_BY,
    [OwnerTags.cluster]: clusterId,
    [OwnerTags.namespace]: stringField(resource, 'metadata', 'namespace') ?? '',
    [OwnerTags.name]: stringField(resource, 'metadata', 'name') ?? '',
    [OwnerTags.kind]: stringField(resource, 'kind') ?? '',
  };
}

/**
 * Whose an existing cloud resource is:
 *
 * - `ours`: every owner tag matches; or the cloud has no tags / the tags are
 *   gone, nothing names another owner, and the create was recorded as done.
 * - `interrupted-create`: nothing names another owner and the create-pending
 *   marker is set but not create-succeeded: a create cut short (a crash,
 *   throttle or denial between the create call and its tags or its marker).
 *   The engine finishes it (update writes the tags). The marker is written
 *   only after an observe found the name free, so this is never someone
 *   else's resource created before ours.
 * - `adopt`: not provably ours and `k8or.io/adopt: "true"`.
 * - `foreign`: an owner tag names another owner (another cluster, namespace,
 *   object or kind), or the resource predates any create of ours. Never
 *   updated or deleted.
 *
 * `found` is Observation.ownerTags: undefined where the cloud has no tags.
 */
export type Ownership = 'ours' | 'interrupted-create' | 'adopt' | 'foreign';

export function ownershipOf(resource: unknown, found: Readonly<Record<string, string>> | undefined, expected: Readonly<Record<string, string>>): Ownership {
  const entries = Object.entries(expected);
  const allOurs = found !== undefined && entries.every(([key, value]) => found[key] === value);
  const namesAnotherOwner = found !== undefined && entries.some(([key, value]) => found[key] !== undefined && found[key] !== value);
  const adopt = annotationIsTrue(resource, Annotations.adopt);
  if (allOurs) return 'ours';
  if (namesAnotherOwner) return adopt ? 'adopt' : 'foreign';
  const state = creationStateOf(resource);
  if (state === 'created') return 'ours';
  if (state === 'pending') return 'interrupted-create';
  return adopt ? 'adopt' : 'foreign';
}
