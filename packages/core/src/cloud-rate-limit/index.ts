export * from './cloud-rate-limits.js';
