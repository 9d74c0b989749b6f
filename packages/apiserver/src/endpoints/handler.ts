/** The request entry point: authentication, routing, the request log, and errors as Status bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestLogEntry } from '../types.js';
import { aggregatedContentType, aggregatedDiscovery, aggregatedRequested } from './discovery/aggregated.js';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery/discovery.js';
import type { OpenApiDocuments } from './discovery/openapi.js';
import type { ServerContext } from './context.js';
import type { UserInfo } from '../auth/user.js';
import { forbiddenMessage, type RequestAttributes } from '../auth/rbac.js';
import { impersonatedUser } from '../auth/impersonation.js';
import { handleTokenRequest } from './token-request.js';
import { handleDelete, handleDeleteCollection } from './delete.js';
import { handleGet, handleList } from './read.js';
import { parseRequestInfo, type RequestInfo } from './request-info.js';
import { sendJson, sendStatus } from './respond.js';
import { handleReview } from './review.js';
import { makeScope } from './scope.js';
import { ApiError, forbidden, methodNotAllowed, notFound, toApiError } from '../status.js';
import { handleCreate, handlePatch, handleUpdate } from './write.js';
import { handleWatch } from './watch.js';
import { retryAfterHeader } from './faults.js';
import { queryFlag } from './query.js';

export interface HandlerOptions {
  ctx: ServerContext;
  openapi: OpenApiDocuments;
  /** Where served requests are recorded, when they are. */
  requestLog: RequestLogEntry[] | undefined;
}

const HEALTH_PATHS = new Set(['/healthz', '/livez', '/readyz']);

function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export function createHandler(options: HandlerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { ctx, openapi, requestLog } = options;
  return (req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      // a bug must never take the server down or leave a client hanging
      ctx.logger.error({ err }, 'request handler crashed');
      if (!res.headersSent) sendStatus(res, toApiError(err).status);
      else res.destroy();
    }
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = process.hrtime.bigint();
    const url = new URL(req.url ?? '/', 'https://sandbox');
    const method = req.method ?? 'GET';
    let info: RequestInfo;
    try {
      info = parseRequestInfo(method, url.pathname, url.searchParams);
    } catch {
      requestLog?.push({ method, path: url.pathname, verb: 'other', group: '', version: '', resource: '', status: 400, dryRun: false });
      req.resume();
      sendStatus(res, new ApiError(400, 'BadRequest', `malformed request path: ${url.pathname}`).status);
      return;
    }
    const entry: RequestLogEntry = {
      method,
      path: url.pathname,
      verb: info.verb,
      group: info.group,
      version: info.version,
      resource: info.resource,
      status: 0,
      dryRun: url.searchParams.getAll('dryRun').includes('All'),
      ...(url.searchParams.has('labelSelector') ? { labelSelector: url.searchParams.get('labelSelector') ?? '' } : {}),
    };
    if (info.subresource) entry.subresource = info.subresource;
    if (info.namespace) entry.namespace = info.namespace;
    if (info.name) entry.name = info.name;
    const userAgent = req.headers['user-agent'];
    if (userAgent) entry.userAgent = userAgent;
    requestLog?.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
      ctx.logger.debug({ method, path: url.pathname, query: url.search, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 }, 'request');
    });
    res.on('close', () => {
      if (entry.status === 0) entry.status = res.statusCode;
    });

    const fail = (err: unknown): void => {
      const apiError = toApiError(err);
      if (!(err instanceof ApiError)) ctx.logger.error({ err, path: url.pathname }, 'request failed');
      else ctx.logger.debug({ status: apiError.code, message: apiError.message, path: url.pathname }, 'request refused');
      if (res.headersSent) {
        res.end();
        return;
      }
      sendStatus(res, apiError.status, apiError.warnings);
    };
    try {
      if (HEALTH_PATHS.has(url.pathname)) {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return;
      }
      const authenticated = ctx.authenticator.authenticate(req.headers.authorization);
      if (!authenticated) {
        req.resume();
        throw unauthorized();
      }
      let user: UserInfo;
      try {
        user = impersonatedUser(authenticated, req.headersDistinct, ctx.authorizer, url.pathname);
      } catch (err) {
        req.resume();
        throw err;
      }
      const attributes = requestAttributes(method, info, url.pathname);
      if (!ctx.authorizer.check(user, attributes).allowed) {
        req.resume();
        throw forbiddenRequest(user, attributes);
      }
      if (info.isResourceRequest && injectFault(ctx, req, res, info, url, user.username)) return;
      route(ctx, openapi, req, res, info, url, user).catch(fail);
    } catch (err) {
      fail(err);
    }
  }
}

/**
 * Answers the request with an injected fault when the injector picks one (true), or arms a fault
 * that comes while or after it is served (false: serve it as usual): a watch's cut, or a write's
 * answer lost after the write was stored.
 */
function injectFault(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, info: RequestInfo, url: URL, username: string): boolean {
  const query = url.searchParams;
  const resourceVersion = query.get('resourceVersion') ?? '';
  const resumes = info.verb === 'watch' ? resourceVersion !== '' && resourceVersion !== '0' && !queryFlag(query, 'sendInitialEvents') : (query.get('continue') ?? '') !== '';
  const decision = ctx.faults.decide({ verb: info.verb, username, group: info.group, resource: info.resource, name: info.name, resumes });
  if (!decision) return false;
  ctx.logger.debug({ fault: decision.kind, path: url.pathname, username }, 'injected fault');
  if (decision.kind === 'dropWatch') {
    const timer = setTimeout(() => res.destroy(), decision.afterMs);
    res.on('close', () => clearTimeout(timer));
    return false;
  }
  if ('afterWrite' in decision) {
    loseSuccessfulAnswer(res, decision.error);
    return false;
  }
  req.resume();
  if (decision.watchEvent) {
    // as the real server: the watch opens, then its one event is the 410 Status
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.end(`${JSON.stringify({ type: 'ERROR', object: decision.error.status })}\n`);
    return true;
  }
  for (const [name, value] of Object.entries(retryAfterHeader(decision))) res.setHeader(name, value);
  sendStatus(res, decision.error.status);
  return true;
}

/**
 * Lets the request be served as usual and, if it succeeds (the write is stored and its watchers told),
 * replaces its answer with `error`, or cuts the connection when there is none. An answer that is
 * already a failure goes out as it is: then nothing was stored. Every handler answers through one
 * writeHead and one end, so those two are what is taken over, on this one response only.
 */
function loseSuccessfulAnswer(res: ServerResponse, error: ApiError | undefined): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: Record<string, string | string[]>) => ServerResponse;
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse;
  let lost = false;
  const restore = (): void => {
    res.writeHead = writeHead as ServerResponse['writeHead'];
    res.end = end as ServerResponse['end'];
  };
  res.writeHead = ((status: number, headers?: Record<string, string | string[]>) => {
    if (status < 200 || status >= 300) {
      restore();
      return writeHead(status, headers);
    }
    lost = true;
    return res;
  }) as ServerResponse['writeHead'];
  res.end = ((chunk?: unknown) => {
    restore();
    if (!lost) return end(chunk);
    if (!error) {
      res.destroy();
      return res;
    }
    sendStatus(res, error.status);
    return res;
  }) as ServerResponse['end'];
}

/** authorizer.Attributes of a request: resource requests by their verb, others by their path and lowercased method. */
function requestAttributes(method: string, info: RequestInfo, path: string): RequestAttributes {
  if (!info.isResourceRequest) {
    return { verb: method.toLowerCase(), resourceRequest: false, apiGroup: '', resource: '', subresource: '', namespace: '', name: '', path };
  }
  return { verb: info.verb, resourceRequest: true, apiGroup: info.group, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name, path };
}

function forbiddenRequest(user: UserInfo, attributes: RequestAttributes): ApiError {
  const why = forbiddenMessage(user, attributes);
  if (!attributes.resourceRequest) return new ApiError(403, 'Forbidden', `forbidden: ${why}`, {});
  return forbidden(attributes.apiGroup, attributes.resource, attributes.name, why);
}

async function route(ctx: ServerContext, openapi: OpenApiDocuments, req: IncomingMessage, res: ServerResponse, info: RequestInfo, url: URL, user: UserInfo): Promise<void> {
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (!info.isResourceRequest) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      req.resume();
      throw methodNotAllowed();
    }
    const aggregated = (path === '/api' || path === '/apis') && aggregatedRequested(req.headers.accept);
    if (aggregated) {
      const body = JSON.stringify(aggregatedDiscovery(ctx.registry, path === '/api', aggregated));
      res.writeHead(200, { 'Content-Type': aggregatedContentType(aggregated), 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-cache, private' });
      res.end(body);
      return;
    }
    const doc = discovery(ctx, path, info);
    if (doc !== undefined) {
      sendJson(res, 200, doc);
      return;
    }
    if (path.startsWith('/openapi/')) {
      const doc = openapi.get(path, req.headers.accept);
      if (doc !== undefined) {
        res.writeHead(200, { 'Content-Type': doc.contentType, 'Content-Length': String(doc.body.length), 'Cache-Control': 'no-cache, private' });
        res.end(doc.body);
        return;
      }
    }
    if (path === '/') {
      sendJson(res, 200, { paths: ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v2', '/openapi/v3', '/readyz', '/version'] });
      return;
    }
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }

  const resolved = ctx.registry.lookup(info.group, info.version, info.resource);
  if (!resolved) {
    req.resume();
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }
  if (info.namespace && !resolved.type.namespaced && info.resource !== 'namespaces') {
    req.resume();
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
  }
  const scope = makeScope(ctx, req, res, info, url.searchParams, resolved, user);
  if (resolved.type.review) {
    await handleReview(scope);
    return;
  }
  if (resolved.type.key === '/serviceaccounts' && info.subresource === 'token') {
    await handleTokenRequest(scope);
    return;
  }
  switch (info.verb) {
    case 'get':
      if (info.subresource && !(info.subresource === 'status' && resolved.version.hasStatus)) throw notFound(resolved.type.group, `${resolved.type.plural}/${info.subresource}`, info.name);
      handleGet(scope);
      return;
    case 'list':
      handleList(scope);
      return;
    case 'watch':
      handleWatch(scope);
      return;
    case 'create':
      await handleCreate(scope);
      return;
    case 'update':
      await handleUpdate(scope);
      return;
    case 'patch':
      await handlePatch(scope);
      return;
    case 'delete':
      await handleDelete(scope);
      return;
    case 'deletecollection':
      await handleDeleteCollection(scope);
      return;
    default:
      req.resume();
      throw methodNotAllowed();
  }
}

function discovery(ctx: ServerContext, path: string, info: RequestInfo): unknown {
  if (path === '/version') return versionInfo();
  if (path === '/api') return apiVersions(ctx.serverAddress);
  if (path === '/apis') return apiGroupList(ctx.registry);
  if (info.apiPrefix === 'api' && info.parts.length === 0 && info.version) return apiResourceList(ctx.registry, '', info.version);
  if (info.apiPrefix === 'apis' && info.parts.length === 0) {
    if (info.group && !info.version) return apiGroup(ctx.registry, info.group);
    if (info.group && info.version) return apiResourceList(ctx.registry, info.group, info.version);
  }
  return undefined;
}
