export * from './rate-limiter.js';
export * from './item-exponential-failure-rate-limiter.js';
export * from './bucket-rate-limiter.js';
export * from './max-of-rate-limiter.js';
export * from './default-controller-rate-limiter.js';
export * from './managed-resource-rate-limiter.js';
export * from './metrics.js';
export * from './work-queue.js';
