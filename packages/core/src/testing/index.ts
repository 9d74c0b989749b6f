export * from './in-memory-cloud.js';
export * from './in-memory-provider.js';
export * from './wait-for.js';
export * from './conformance/conformance.js';
export * from './conformance/in-memory-objects.js';
export * from './call-rate.js';
