export * from './group.js';
export * from './annotations.js';
export * from './types/index.js';
export * from './schemas/index.js';
export * from './naming/index.js';
export * from './crds.js';
export * from './drift-policy.js';
