import { createHash } from 'node:crypto';
import {
  BUILTIN_KINDS,
  DELETE_OPTIONS,
  META_SCHEMAS,
  METADATA_DESCRIPTION,
  OBJECT_META,
  PATCH,
  STATUS,
  listSchema,
  objectFields,
  ref,
  type JsonSchema,
} from './components.js';

/** A resource the sandbox serves, as the OpenAPI builders need it. */
export interface ServedResource {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** The CRD version's openAPIV3Schema (custom resources); built-ins use the sandbox's own schemas. */
  schema?: unknown;
  builtin: boolean;
  /** Subresources served, e.g. ['status']; custom resources with a `status` property get /status when absent. */
  subresources?: string[];
}

const KUBERNETES_VERSION = 'v1.33.0';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `apis/k8or.io/v1alpha1` or `api/v1`: the key of a group version in /openapi/v3. */
export const groupVersionPath = (group: string, version: string): string => (group ? `apis/${group}/${version}` : `api/${version}`);

/** io.k8or.v1alpha1.Bucket: the model name apiextensions-apiserver publishes for a custom resource. */
function customModelName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function modelName(r: ServedResource): string {
  if (r.builtin) {
    const known = BUILTIN_KINDS.find((b) => b.group === r.group && b.version === r.version && b.kind === r.kind);
    if (known) return known.model;
    // A built-in without a schema here yet: upstream's naming, served as preserve-unknown-fields.
    return `io.k8s.api.${r.group ? r.group.replace(/\.k8s\.io$/, '') : 'core'}.${r.version}.${r.kind}`;
  }
  return customModelName(r.group, r.version, r.kind);
}

/** The published schema of a custom resource: the CRD's, with apiVersion/kind/metadata as kube-apiserver fills them in. */
function customResourceSchema(r: ServedResource): JsonSchema {
  const base: JsonSchema = isRecord(r.schema) ? structuredClone(r.schema) : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const properties = isRecord(base.properties) ? base.properties : {};
  base.type = 'object';
  base.properties = { ...properties, ...objectFields() };
  for (const key of ['apiVersion', 'kind'] as const) {
    const own = properties[key];
    if (isRecord(own) && typeof own.description === 'string') (base.properties as Record<string, JsonSchema>)[key] = { ...own, type: 'string' };
  }
  (base.properties as Record<string, JsonSchema>).metadata = { allOf: [ref(OBJECT_META)], description: METADATA_DESCRIPTION };
  base['x-kubernetes-group-version-kind'] = [{ group: r.group, kind: r.kind, version: r.version }];
  return base;
}

/** Every component schema the resources of one group version need (closure over $refs). */
function componentsFor(resources: ServedResource[]): Record<string, JsonSchema> {
  const available: Record<string, JsonSchema> = { ...META_SCHEMAS };
  for (const builtin of BUILTIN_KINDS) Object.assign(available, builtin.components ?? {});
  const roots: Record<string, JsonSchema> = {};
  for (const r of resources) {
    const name = modelName(r);
    const builtin = r.builtin ? BUILTIN_KINDS.find((b) => b.model === name) : undefined;
    const schema = builtin
      ? { ...builtin.schema, 'x-kubernetes-group-version-kind': [{ group: r.group, kind: r.kind, version: r.version }] }
      : customResourceSchema(r);
    roots[name] = schema;
    roots[`${name}List`] = listSchema(name, r.kind, r);
  }
  const out: Record<string, JsonSchema> = {};
  const visit = (name: string, schema: JsonSchema | undefined): void => {
    if (out[name] || !schema) return;
    out[name] = schema;
    for (const target of refsIn(schema)) visit(target, available[target] ?? roots[target]);
  };
  for (const [name, schema] of Object.entries(roots)) visit(name, schema);
  for (const name of [STATUS, PATCH, DELETE_OPTIONS]) visit(name, available[name]);
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]!]));
}

function refsIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const v of value) refsIn(v, found);
  } else if (isRecord(value)) {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') found.add(v.replace(/^#\/(components\/schemas|definitions)\//, ''));
      else refsIn(v, found);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------- paths

const queryParam = (name: string, description: string, schema: JsonSchema = { type: 'string', uniqueItems: true }): JsonSchema => ({
  name,
  in: 'query',
  description,
  schema,
});
const DRY_RUN = queryParam('dryRun', 'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed');
const FIELD_MANAGER = queryParam('fieldManager', 'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.');
const FIELD_VALIDATION = queryParam(
  'fieldValidation',
  'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.',
);
const FORCE = queryParam('force', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.', { type: 'boolean', uniqueItems: true });
const PRETTY = queryParam('pretty', "If 'true', then the output is pretty printed.");
const LIST_PARAMS = [
  queryParam('allowWatchBookmarks', 'allowWatchBookmarks requests watch events with type "BOOKMARK".', { type: 'boolean', uniqueItems: true }),
  queryParam('continue', 'The continue option should be set when retrieving more results from the server.'),
  queryParam('fieldSelector', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  queryParam('labelSelector', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  queryParam('limit', 'limit is a maximum number of responses to return for a list call.', { type: 'integer', uniqueItems: true }),
  queryParam('resourceVersion', 'resourceVersion sets a constraint on what resource versions a request may be served from.'),
  queryParam('timeoutSeconds', 'Timeout for the list/watch call.', { type: 'integer', uniqueItems: true }),
  queryParam('watch', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.', { type: 'boolean', uniqueItems: true }),
];
const pathParam = (name: string, description: string): JsonSchema => ({ name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } });

/** Custom resources take no strategic merge patch (kube-apiserver answers 415); built-ins do. */
const patchContentTypes = (builtin: boolean): string[] =>
  builtin
    ? ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']
    : ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

const jsonBody = (model: string): JsonSchema => ({
  content: { '*/*': { schema: ref(model) } },
  required: true,
});
const response = (model: string, description = 'OK'): JsonSchema => ({
  description,
  content: { 'application/json': { schema: ref(model) }, 'application/yaml': { schema: ref(model) } },
});

function groupIdentifier(group: string): string {
  if (!group) return 'Core';
  const trimmed = group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group;
  return trimmed
    .split(/[.-]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

function operationsFor(r: ServedResource): Record<string, JsonSchema> {
  const model = modelName(r);
  const gvk = { group: r.group, kind: r.kind, version: r.version };
  const id = `${groupIdentifier(r.group)}${r.version.charAt(0).toUpperCase()}${r.version.slice(1)}${r.namespaced ? 'Namespaced' : ''}${r.kind}`;
  const tag = `${r.group ? groupIdentifier(r.group).replace(/^./, (c) => c.toLowerCase()) : 'core'}_${r.version}`;
  const prefix = `/${groupVersionPath(r.group, r.version)}`;
  const collection = r.namespaced ? `${prefix}/namespaces/{namespace}/${r.plural}` : `${prefix}/${r.plural}`;
  const item = `${collection}/{name}`;
  const ns = r.namespaced ? [pathParam('namespace', 'object name and auth scope, such as for teams and projects')] : [];
  const op = (action: string, verb: string, description: string, extra: JsonSchema): JsonSchema => ({
    tags: [tag],
    description,
    operationId: `${verb}${id}`,
    ...extra,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  });
  const writeParams = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const patchOp = (description: string): JsonSchema =>
    op('patch', 'patch', description, {
      parameters: [...writeParams, FORCE],
      requestBody: { content: Object.fromEntries(patchContentTypes(r.builtin).map((t) => [t, { schema: ref(PATCH) }])), required: true },
      responses: { '200': response(model), '201': response(model, 'Created') },
    });
  const paths: Record<string, JsonSchema> = {
    [collection]: {
      get: op('list', 'list', `list or watch objects of kind ${r.kind}`, { parameters: LIST_PARAMS, responses: { '200': response(`${model}List`) } }),
      post: op('post', 'create', `create a ${r.kind}`, {
        parameters: writeParams,
        requestBody: jsonBody(model),
        responses: { '200': response(model), '201': response(model, 'Created'), '202': response(model, 'Accepted') },
      }),
      delete: op('deletecollection', 'deleteCollection', `delete collection of ${r.kind}`, {
        parameters: [...LIST_PARAMS.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks'), DRY_RUN],
        requestBody: { content: { '*/*': { schema: ref(DELETE_OPTIONS) } } },
        responses: { '200': response(STATUS) },
      }),
      parameters: [...ns, PRETTY],
    },
    [item]: {
      get: op('get', 'read', `read the specified ${r.kind}`, { responses: { '200': response(model) } }),
      put: op('put', 'replace', `replace the specified ${r.kind}`, {
        parameters: writeParams,
        requestBody: jsonBody(model),
        responses: { '200': response(model), '201': response(model, 'Created') },
      }),
      delete: op('delete', 'delete', `delete a ${r.kind}`, {
        parameters: [DRY_RUN, queryParam('gracePeriodSeconds', 'The duration in seconds before the object should be deleted.', { type: 'integer', uniqueItems: true }), queryParam('propagationPolicy', 'Whether and how garbage collection will be performed.')],
        requestBody: { content: { '*/*': { schema: ref(DELETE_OPTIONS) } } },
        responses: { '200': response(STATUS), '202': response(STATUS, 'Accepted') },
      }),
      patch: patchOp(`partially update the specified ${r.kind}`),
      parameters: [pathParam('name', `name of the ${r.kind}`), ...ns, PRETTY],
    },
  };
  if (r.namespaced) {
    paths[`${prefix}/${r.plural}`] = {
      get: op('list', 'list', `list or watch objects of kind ${r.kind}`, { operationId: `list${id.replace('Namespaced', '')}ForAllNamespaces`, parameters: LIST_PARAMS, responses: { '200': response(`${model}List`) } }),
      parameters: [PRETTY],
    };
  }
  const hasStatus =
    r.subresources?.includes('status') ??
    (!r.builtin && isRecord(r.schema) && isRecord(r.schema.properties) && 'status' in r.schema.properties);
  if (hasStatus) {
    paths[`${item}/status`] = {
      get: op('get', 'read', `read status of the specified ${r.kind}`, { operationId: `read${id}Status`, responses: { '200': response(model) } }),
      put: op('put', 'replace', `replace status of the specified ${r.kind}`, {
        operationId: `replace${id}Status`,
        parameters: writeParams,
        requestBody: jsonBody(model),
        responses: { '200': response(model), '201': response(model, 'Created') },
      }),
      patch: { ...patchOp(`partially update status of the specified ${r.kind}`), operationId: `patch${id}Status` },
      parameters: [pathParam('name', `name of the ${r.kind}`), ...ns, PRETTY],
    };
  }
  return paths;
}

// ---------------------------------------------------------------------------------------------- v3

/** The OpenAPI v3 document of one group version, or undefined when nothing is served there. */
export function openApiV3GroupVersion(group: string, version: string, resources: ServedResource[]): object | undefined {
  const served = resources.filter((r) => r.group === group && r.version === version);
  if (!served.length) return undefined;
  const paths: Record<string, JsonSchema> = {};
  for (const r of [...served].sort((a, b) => a.plural.localeCompare(b.plural))) Object.assign(paths, operationsFor(r));
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION },
    paths,
    components: {
      schemas: componentsFor(served),
      securitySchemes: { BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' } },
    },
  };
}

/** A stable hash of a document (the `hash` kube-apiserver appends to serverRelativeURL for caching). */
export function documentHash(document: object): string {
  return createHash('sha512').update(JSON.stringify(document)).digest('hex').toUpperCase();
}

/** GET /openapi/v3: one entry per served group version, with a content hash for client caches. */
export function openApiV3Root(resources: ServedResource[]): object {
  const groupVersions = new Map<string, { group: string; version: string }>();
  for (const r of resources) groupVersions.set(groupVersionPath(r.group, r.version), { group: r.group, version: r.version });
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of [...groupVersions.keys()].sort()) {
    const { group, version } = groupVersions.get(key)!;
    const document = openApiV3GroupVersion(group, version, resources)!;
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${documentHash(document)}` };
  }
  return { paths };
}

// ---------------------------------------------------------------------------------------------- v2

/** Rewrite a v3 schema for Swagger 2.0: refs to #/definitions, `allOf: [ref]` wrappers back to plain refs. */
export function toV2Schema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toV2Schema);
  if (!isRecord(value)) return value;
  if (Array.isArray(value.allOf) && value.allOf.length === 1 && isRecord(value.allOf[0]) && typeof value.allOf[0].$ref === 'string') {
    const { allOf: _allOf, ...rest } = value;
    return toV2Schema({ ...rest, $ref: value.allOf[0].$ref });
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string') out.$ref = v.replace('#/components/schemas/', '#/definitions/');
    else if (key === 'nullable') continue; // not Swagger 2.0
    else out[key] = toV2Schema(v);
  }
  return out;
}

function toV2Parameter(param: JsonSchema): JsonSchema {
  const { schema, ...rest } = param;
  return { ...rest, ...(isRecord(schema) ? schema : {}) };
}

/** A v3 operation in Swagger 2.0 form: body parameter, consumes/produces, response schemas. */
function toV2Operation(operation: JsonSchema): JsonSchema {
  const { requestBody, responses, parameters, ...rest } = operation;
  const out: JsonSchema = { ...rest };
  const params = Array.isArray(parameters) ? parameters.filter(isRecord).map(toV2Parameter) : [];
  if (isRecord(requestBody) && isRecord(requestBody.content)) {
    const types = Object.keys(requestBody.content);
    const first = requestBody.content[types[0]!];
    out.consumes = types;
    params.unshift({ name: 'body', in: 'body', required: requestBody.required === true, schema: toV2Schema(isRecord(first) ? first.schema : {}) });
  }
  if (params.length) out.parameters = params;
  out.produces = ['application/json', 'application/yaml'];
  if (isRecord(responses)) {
    out.responses = Object.fromEntries(
      Object.entries(responses).map(([code, value]) => {
        const r = isRecord(value) ? value : {};
        const content = isRecord(r.content) ? r.content['application/json'] : undefined;
        const schema = isRecord(content) ? toV2Schema(content.schema) : undefined;
        return [code, schema ? { description: r.description, schema } : { description: r.description }];
      }),
    );
  }
  out.schemes = ['https'];
  return out;
}

/**
 * The Swagger 2.0 document (GET /openapi/v2). kubectl reads it (as protobuf, see protobuf.ts) for the
 * PATCH content types of a kind, client-side validation and server-side field validation support.
 */
export function openApiV2(resources: ServedResource[]): object {
  const definitions: Record<string, unknown> = {};
  const paths: Record<string, JsonSchema> = {};
  const seen = new Set<string>();
  for (const r of resources) {
    const key = groupVersionPath(r.group, r.version);
    if (seen.has(key)) continue;
    seen.add(key);
    const doc = openApiV3GroupVersion(r.group, r.version, resources) as {
      paths: Record<string, JsonSchema>;
      components: { schemas: Record<string, unknown> };
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) definitions[name] = toV2Schema(schema);
    for (const [path, item] of Object.entries(doc.paths)) {
      const v2Item: JsonSchema = {};
      for (const [method, operation] of Object.entries(item)) {
        if (method === 'parameters') v2Item.parameters = (operation as JsonSchema[]).map(toV2Parameter);
        else if (isRecord(operation)) v2Item[method] = toV2Operation(operation);
      }
      paths[path] = v2Item;
    }
  }
  const sortedKeys = <T>(record: Record<string, T>): Record<string, T> => Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]!]));
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: KUBERNETES_VERSION },
    paths: sortedKeys(paths),
    definitions: sortedKeys(definitions),
    securityDefinitions: { BearerToken: { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  };
}
