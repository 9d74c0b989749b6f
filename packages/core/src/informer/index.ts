export * from './object-key.js';
export * from './indexer.js';
export * from './informer.js';
export { ApiStatusError, resourcePath } from './request.js';
