export * from './leader-elector.js';
export * from './lease-observation.js';
