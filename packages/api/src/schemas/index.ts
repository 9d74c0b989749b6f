export * from './json-schema.js';
export * from './common.js';
export { bucketSchema, bucketSpecSchema } from './bucket.js';
export { tableSchema, tableSpecSchema } from './table.js';
export { providerConfigSchema, providerConfigSpecSchema } from './provider-config.js';
