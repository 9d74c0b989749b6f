export * from './core-metrics.js';
