import { immutableFieldChanges, ImmutableRules } from '@k8or/core/policy';

export { ImmutableRules };

/**
 * What an UPDATE may not change (external name, a bucket's location, a
 * table's key schema): core's rule, shared with the engine.
 */
export const checkImmutableFields = immutableFieldChanges;
