export * from './provider/index.js';
