import { encodeOpenApiV2 } from './protobuf.js';
import { openApiV2, type ServedResource } from './documents.js';

export { openApiV3Root, openApiV3GroupVersion, openApiV2, documentHash, groupVersionPath } from './documents.js';
export type { ServedResource } from './documents.js';
export { encodeOpenApiV2, OPENAPI_V2_PROTOBUF } from './protobuf.js';

/** GET /openapi/v2 in protobuf form (what client-go and kubectl request). */
export function openApiV2Protobuf(resources: ServedResource[]): Buffer {
  return encodeOpenApiV2(openApiV2(resources));
}
