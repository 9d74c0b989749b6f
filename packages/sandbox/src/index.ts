export {};
export * from './backends/index.js';
