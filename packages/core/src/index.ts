export * from './provider/index.js';
export * from './queue/index.js';
export * from './informer/index.js';
export * from './leader/index.js';
export * from './metrics/index.js';
export * from './health/index.js';
export * from './logging.js';
