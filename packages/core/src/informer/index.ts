export * from './object-key.js';
export * from './indexer.js';
export * from './compact-codec.js';
export * from './informer.js';
export { requestJson, resourcePath, type JsonRequestOptions } from './request.js';
