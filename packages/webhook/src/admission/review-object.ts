import type { Violation } from '@k8or/api';
import { defaultObject } from './defaulting.js';
import type { AdmissionContext, JsonPatchOperation } from './types.js';
import { validateObject } from './validation.js';

export interface ObjectReview {
  /** The object as the API server would store it: defaults applied. */
  object: unknown;
  /** What the mutating webhook would add. */
  patch: JsonPatchOperation[];
  /** What the validating webhook would deny (empty when it would admit). */
  violations: Violation[];
  /** Defaulting and portability warnings together, as kubectl would print them. */
  warnings: string[];
}

/**
 * Both webhooks in the order kube-apiserver calls them, for one object:
 * defaulting, then validation of the defaulted object. What `k8or validate -f`
 * reports for each manifest.
 */
export function reviewObject(object: unknown, context: AdmissionContext, options: { operation?: 'CREATE' | 'UPDATE'; oldObject?: unknown; namespace?: string } = {}): ObjectReview {
  const defaulted = defaultObject(object, context, options);
  const validated = validateObject(defaulted.object, context, options);
  return { object: defaulted.object, patch: defaulted.patch, violations: validated.violations, warnings: [...defaulted.warnings, ...validated.warnings] };
}
