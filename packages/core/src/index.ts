export * from './provider/index.js';
export * from './queue/index.js';
export * from './informer/index.js';
