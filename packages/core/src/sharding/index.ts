export * from './assigner.js';
export * from './keys.js';
export * from './labels.js';
export * from './plan.js';
export * from './resource-key.js';
export * from './ring.js';
export * from './shard-lease.js';
export * from './shard-leases.js';
