export * from './object-key.js';
export * from './indexer.js';
export * from './informer.js';
export { ApiStatusError, requestJson, resourcePath, type JsonRequestOptions } from './request.js';
