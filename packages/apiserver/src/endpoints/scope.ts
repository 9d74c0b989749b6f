/** One resource request: what it addresses and how to answer it. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeObject } from '../types.js';
import { metadataOf } from '../util.js';
import type { ResolvedResource } from '../registry/registry.js';
import { apiVersionOf, type ResourceType, type ResourceVersion } from '../registry/types.js';
import { tableRequested, toTable, type TableRequest } from './table/table.js';
import type { ServerContext } from './context.js';
import type { UserInfo } from '../auth/user.js';
import type { RequestInfo } from './request-info.js';
import { sendJson, sendJsonText } from './respond.js';
import type { CompiledSchema } from '../schema/index.js';

/**
 * What a request addresses and who sends it, without its HTTP exchange: enough to admit, store and
 * show objects. The server's own controllers send their deletes with one of these (see loopback.ts).
 */
export interface RequestScope {
  ctx: ServerContext;
  /** Who sent the request. */
  user: UserInfo;
  info: Pick<RequestInfo, 'namespace' | 'subresource'>;
  query: URLSearchParams;
  type: ResourceType;
  version: ResourceVersion;
  /** group/version of the request, e.g. "k8or.io/v1alpha1". */
  apiVersion: string;
  dryRun: boolean;
  /** Warnings gathered while handling (admission, schema): sent as Warning headers. */
  warnings: string[];
}

export interface Scope extends RequestScope {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  table: TableRequest | undefined;
}

export function makeScope(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, info: RequestInfo, query: URLSearchParams, resolved: ResolvedResource, user: UserInfo): Scope {
  return {
    ctx,
    user,
    req,
    res,
    info,
    query,
    type: resolved.type,
    version: resolved.version,
    apiVersion: apiVersionOf(resolved.type.group, resolved.version.name),
    dryRun: query.getAll('dryRun').includes('All'),
    // a deprecated CRD version warns on every request, as the real server does
    warnings: resolved.version.deprecationWarning ? [resolved.version.deprecationWarning] : [],
    table: tableRequested(req.headers.accept, query.get('includeObject')),
  };
}

/** The stored object as the request's version shows it (CRs are stored once and served in every version). */
export function present(scope: RequestScope, obj: KubeObject, schema: CompiledSchema | undefined = schemaOfVersion(scope)): KubeObject {
  const served = scope.type.conversion ? scope.type.conversion.fromStorage(obj) : obj;
  let out: KubeObject = { ...served, apiVersion: scope.apiVersion, kind: scope.type.kind };
  if (schema) out = schema.applyDefaults(out);
  // keep the usual key order: apiVersion, kind, metadata first
  const { apiVersion, kind, metadata, ...rest } = out;
  return { apiVersion, kind, metadata, ...rest };
}

/**
 * Stored objects are never changed in place, so the JSON a version shows of one is worked out once:
 * a write's response and the watch events it causes send the same bytes. Keyed by the compiled
 * schema too, since a CRD's new defaults change what is shown.
 */
const shownJson = new WeakMap<KubeObject, Map<string, { schema: CompiledSchema | undefined; json: string }>>();

/** `present(scope, obj)` as JSON. */
export function presentJson(scope: RequestScope, obj: KubeObject): string {
  const schema = schemaOfVersion(scope);
  let byVersion = shownJson.get(obj);
  if (!byVersion) shownJson.set(obj, (byVersion = new Map()));
  const cached = byVersion.get(scope.apiVersion);
  if (cached && cached.schema === schema) return cached.json;
  const json = JSON.stringify(present(scope, obj, schema));
  byVersion.set(scope.apiVersion, { schema, json });
  return json;
}

/** The schema a CR version defaults with; none for built-ins and schemaless versions. */
function schemaOfVersion(scope: RequestScope): CompiledSchema | undefined {
  return !scope.type.builtin && scope.version.schema !== undefined ? schemaFor(scope) : undefined;
}

/** Answer one object, as JSON or as a one-row Table. */
export function sendObject(scope: Scope, code: number, obj: KubeObject): void {
  if (scope.table) {
    const shown = present(scope, obj);
    sendJson(scope.res, code, toTable([shown], scope.type, scope.version, scope.table, { resourceVersion: metadataOf(shown)['resourceVersion'] }), scope.warnings);
    return;
  }
  sendJsonText(scope.res, code, presentJson(scope, obj), scope.warnings);
}

/** The compiled schema for this CR version (pass-through for built-ins). */
export function schemaFor(scope: RequestScope): ReturnType<ServerContext['schemas']['get']> {
  const crd = scope.type.crdName ? scope.ctx.store.get('apiextensions.k8s.io/customresourcedefinitions', '', scope.type.crdName) : undefined;
  const meta = crd ? metadataOf(crd) : {};
  // generation changes with the CRD's spec (not its status), so the compiled schema survives status writes
  return scope.ctx.schemas.get(`${String(meta['uid'] ?? '')}/${String(meta['generation'] ?? '')}/${scope.version.name}`, scope.type.builtin ? undefined : scope.version.schema);
}
