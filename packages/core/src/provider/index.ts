export * from './contract.js';
export * from './errors.js';
export * from './registry.js';
export * from './lazy-connector.js';
export * from './retry-after.js';
