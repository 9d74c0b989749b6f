/** /openapi/v2 (JSON or protobuf) and /openapi/v3 documents, built by src/openapi from the served resources. */
import { openApiV2, openApiV2Protobuf, openApiV3GroupVersion, openApiV3Root, type ServedResource } from '../../openapi/index.js';
import type { ResourceRegistry } from '../../registry/registry.js';

export interface OpenApiDocument {
  contentType: string;
  body: Buffer;
}

function servedResources(registry: ResourceRegistry): ServedResource[] {
  const out: ServedResource[] = [];
  for (const type of registry.all()) {
    for (const v of type.versions) {
      if (!v.served) continue;
      const r: ServedResource = { group: type.group, version: v.name, kind: type.kind, plural: type.plural, namespaced: type.namespaced, builtin: type.builtin };
      if (v.schema !== undefined) r.schema = v.schema;
      out.push(r);
    }
  }
  return out;
}

function json(doc: object | undefined): OpenApiDocument | undefined {
  return doc === undefined ? undefined : { contentType: 'application/json', body: Buffer.from(JSON.stringify(doc)) };
}

/** The OpenAPI document for a path under /openapi, or undefined (404). Cached until the served resources change. */
export class OpenApiDocuments {
  private readonly cache = new Map<string, OpenApiDocument | undefined>();

  constructor(private readonly registry: ResourceRegistry) {
    registry.onChange(() => this.cache.clear());
  }

  get(path: string, accept: string | undefined): OpenApiDocument | undefined {
    // client-go asks for v2 as protobuf and cannot decode JSON there
    const protobuf = path === '/openapi/v2' && (accept ?? '').includes('application/com.github.proto-openapi.spec.v2');
    const key = `${protobuf ? 'pb:' : ''}${path}`;
    if (this.cache.has(key)) return this.cache.get(key);
    const doc = this.build(path, protobuf);
    this.cache.set(key, doc);
    return doc;
  }

  private build(path: string, protobuf: boolean): OpenApiDocument | undefined {
    const resources = servedResources(this.registry);
    if (path === '/openapi/v2') {
      // Go's mime parser rejects the '@' of the deprecated media type name, so answer with the dotted one
      return protobuf ? { contentType: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', body: openApiV2Protobuf(resources) } : json(openApiV2(resources));
    }
    if (path === '/openapi/v3') return json(openApiV3Root(resources));
    const core = /^\/openapi\/v3\/api\/([^/]+)$/.exec(path);
    if (core) return json(openApiV3GroupVersion('', core[1] as string, resources));
    const grouped = /^\/openapi\/v3\/apis\/([^/]+)\/([^/]+)$/.exec(path);
    if (grouped) return json(openApiV3GroupVersion(grouped[1] as string, grouped[2] as string, resources));
    return undefined;
  }
}
