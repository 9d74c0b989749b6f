export * from './ring.js';
export * from './keys.js';
export * from './labels.js';
