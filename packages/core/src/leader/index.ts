export * from './leader-elector.js';
