import { Annotations } from '@k8or/api';
import { annotation, field } from './read.js';

/**
 * How far the engine got with creating the cloud resource of an object, from
 * its markers: `never` (no create call was made), `pending` (the
 * `k8or.io/create-pending` marker: a create was about to be, or was, sent, and
 * its success was not recorded), `created` (`k8or.io/create-succeeded`).
 */
export type CreationState = 'never' | 'pending' | 'created';

export function creationStateOf(resource: unknown): CreationState {
  if (annotation(resource, Annotations.createSucceeded) !== undefined) return 'created';
  if (annotation(resource, Annotations.createPending) !== undefined) return 'pending';
  return 'never';
}

/**
 * "Was it created?": may a cloud resource exist for this object? True once a
 * create was attempted (either marker) or the engine observed one
 * (`status.atProvider.id`, an imported or ObserveOnly resource).
 */
export function mayHaveCreated(resource: unknown): boolean {
  return creationStateOf(resource) !== 'never' || field(resource, 'status', 'atProvider', 'id') !== undefined;
}
