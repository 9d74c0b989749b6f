export * from './in-memory-cloud.js';
export * from './in-memory-provider.js';
export * from './wait-for.js';
