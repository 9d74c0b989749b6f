export {};
export * from './backends/index.js';
export { compileCrdSchema, fieldErrorText, SchemaCompileError } from './schema/index.js';
export type { AdmitOptions, AdmitResult, CompiledSchema, FieldError } from './schema/index.js';
