/** Deletion as the real server does it: finalizers hold an object (with deletionTimestamp) until they are gone. */
import type { KubeObject } from '../types.js';
import { clone, metadataOf, nowIso } from '../util.js';
import type { ObjectStore } from '../storage/store.js';
import type { ResourceType } from './types.js';
import { finalizersOf, isTerminating } from './meta.js';

export interface DeletionOutcome {
  /** True when the object is gone; false when it waits for finalizers. */
  deleted: boolean;
  object: KubeObject;
}

/** Finalizer the sandbox adds to namespaces (spec) and CRDs (metadata) while their contents are deleted. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
export const CRD_KEY = 'apiextensions.k8s.io/customresourcedefinitions';

/**
 * What deleting `current` leads to, without storing anything: the terminating object when
 * finalizers remain, else the object as deleted.
 */
export function planDeletion(type: ResourceType, current: KubeObject): DeletionOutcome {
  const next = clone(current);
  const meta = metadataOf(next);
  // namespaces and CRDs first delete what they contain
  const holdsContents = type.key === '/namespaces' || type.key === CRD_KEY;
  if (finalizersOf(current).length === 0 && !holdsContents) return { deleted: true, object: next };
  if (!isTerminating(current)) {
    if (type.key === CRD_KEY) meta['finalizers'] = [...finalizersOf(current), CRD_CLEANUP_FINALIZER];
    meta['deletionTimestamp'] = nowIso();
    meta['deletionGracePeriodSeconds'] = 0;
    if (typeof meta['generation'] === 'number') meta['generation'] = meta['generation'] + 1;
    if (type.key === '/namespaces') next['status'] = { phase: 'Terminating' };
  }
  return { deleted: false, object: next };
}

/** Carry out a deletion plan against the store. */
export function commitDeletion(store: ObjectStore, type: ResourceType, current: KubeObject, plan: DeletionOutcome): KubeObject {
  const meta = metadataOf(current);
  const namespace = String(meta['namespace'] ?? '');
  const name = String(meta['name'] ?? '');
  if (plan.deleted) return store.delete(type.key, namespace, name, plan.object) ?? plan.object;
  if (isTerminating(current)) return current;
  return store.update(type.key, namespace, name, plan.object);
}
