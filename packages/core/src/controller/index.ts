export * from './controller.js';

export * from './engine.js';
export * from './cached-resources.js';
export * from './drift-check-planner.js';
