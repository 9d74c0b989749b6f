/**
 * The decisions the engine and the webhook share, one module each, so a
 * resource is judged the same way at `kubectl apply` and at reconcile.
 * Exported from `@k8or/core/policy` (and the package root).
 */
export * from './read.js';
export * from './deletion-policy.js';
export * from './provider-config-choice.js';
export * from './creation.js';
export * from './ownership.js';
export * from './cloud-target.js';
export * from './claim-order.js';
export * from './protection-asked.js';
export * from './immutability.js';
export * from './resync.js';
export * from './secrets.js';
export * from './naming.js';
export * from './settings.js';
export * from './rate-limits.js';
export * from './drift.js';
export * from './drift-schedule.js';
export * from './drift-check-gate.js';
export * from './sliding-window.js';
