export * from './types.js';
export { admit, nestsDeeperThan, MAX_OBJECT_DEPTH, type WebhookKind } from './admit.js';
export { defaultObject, type DefaultingOptions } from './defaulting.js';
export { reviewObject, type ObjectReview } from './review-object.js';
export { validateObject, Rules, type ValidationOptions } from './validation.js';
export { checkImmutableFields, ImmutableRules } from './immutability.js';
export { checkDeletion } from './protection.js';
export { escapePointerToken, pointer, PatchBuilder } from './patch.js';
export { providerConfigFor, deletionPolicyFor, type ProviderConfigChoice, type DeletionPolicyChoice } from './resource.js';
