/** What the controllers need of the API: they reach it as any client does, so admission applies to them. */
import type { ResourceType } from '../registry/types.js';

/**
 * DELETE one object through the API (admission included), with the uid it had when the controller
 * chose it as a precondition. Resolves once the delete is accepted (the object gone, or Terminating
 * on its finalizers) or the object is already gone; rejects with the API's error otherwise (a
 * webhook's denial is a 403).
 */
export type DeleteThroughApi = (type: ResourceType, namespace: string, name: string, uid: string) => Promise<void>;
