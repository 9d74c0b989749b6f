export * from './process/index.js';
export * from './aws/index.js';
export * from './azure/index.js';
export * from './gcp/index.js';
export * from './faults/index.js';
