import { Annotations } from '@k8or/api';
import { ProviderError } from '../provider/errors.js';
import { annotation, field } from './read.js';

/**
 * How far the engine got with creating the cloud resource of an object, from
 * its markers:
 *
 * - `never`: no create call was made.
 * - `pending` (`k8or.io/create-pending` without `create-failed`): a create was
 *   about to be, or was, sent and its outcome is unknown (a timeout, a crash).
 * - `failed` (`k8or.io/create-failed`): the cloud definitely refused the last
 *   create; nothing of this object's is there from it.
 * - `created` (`k8or.io/create-succeeded`): a create (or a takeover) succeeded.
 */
export type CreationState = 'never' | 'pending' | 'failed' | 'created';

export function creationStateOf(resource: unknown): CreationState {
  if (annotation(resource, Annotations.createSucceeded) !== undefined) return 'created';
  if (annotation(resource, Annotations.createPending) !== undefined) return 'pending';
  if (annotation(resource, Annotations.createFailed) !== undefined) return 'failed';
  return 'never';
}

/**
 * "Was it created?": may a cloud resource of this object exist? True once a
 * create was sent with an outcome other than a definite refusal, or the engine
 * observed one (`status.atProvider.id`, an imported or ObserveOnly resource).
 */
export function mayHaveCreated(resource: unknown): boolean {
  const state = creationStateOf(resource);
  return state === 'pending' || state === 'created' || field(resource, 'status', 'atProvider', 'id') !== undefined;
}

/**
 * What a failed create call tells: `refused` when the cloud definitely did
 * nothing (ProviderError.noEffect: a 4xx, a throttle answered before acting, a
 * name taken by someone else), recorded as create-failed; `unknown` for
 * anything else (a timeout, a 5xx, a dropped connection, an abort), which
 * leaves create-pending in place.
 */
export function createOutcomeOf(error: unknown): 'refused' | 'unknown' {
  return error instanceof ProviderError && error.noEffect ? 'refused' : 'unknown';
}
