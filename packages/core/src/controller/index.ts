export * from './controller.js';

export * from './engine.js';
