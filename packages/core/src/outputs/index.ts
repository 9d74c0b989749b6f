export * from './configmap.js';
