export { startSandbox } from './sandbox.js';
export type { Sandbox, SandboxOptions, RequestLogEntry, RequestVerb, ApiFaultKind, ApiFaultOptions, ApiFaults } from './types.js';
export { API_FAULT_KINDS } from './endpoints/faults.js';
export { compileCrdSchema, fieldErrorText, SchemaCompileError } from './schema/index.js';
export type { AdmitOptions, AdmitResult, CompiledSchema, FieldError } from './schema/index.js';
export { openApiV3Root, openApiV3GroupVersion, openApiV2, openApiV2Protobuf, OPENAPI_V2_PROTOBUF } from './openapi/index.js';
export type { ServedResource } from './openapi/index.js';
export { createCertificateAuthority, createServingCertificate, type CertificateAuthority, type ServingCertificate } from './tls/certs.js';
