export * from './health-checks.js';
export * from './probe-server.js';
