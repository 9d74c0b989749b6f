export * from './ring.js';
export * from './keys.js';
export * from './labels.js';
export * from './shard-lease.js';
export * from './shard-leases.js';
export * from './plan.js';
