export * from './reasons.js';
export * from './conditions.js';
export * from './progress.js';
export * from './ports.js';
export * from './reconciler.js';
export * from './write-record.js';
