import type { Http2ServerResponse } from 'node:http2';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifySchemaValidationError } from 'fastify';
import { nodeHttp } from '@k8or/core';
import type { Logger } from 'pino';
import secureJson from 'secure-json-parse';
import type { AdmissionContext } from '../admission/types.js';
import { admissionRoutes } from './admission-routes.js';
import { Http2ResponseWithoutTrailers } from './h2-response.js';
import type { WebhookMetrics } from './metrics.js';
import { probeRoutes } from './probe-routes.js';


export interface AppOptions {
  https: { key: string; cert: string };
  logger: Logger;
  /** Largest accepted body in bytes; larger ones get 413. */
  bodyLimit: number;
  /** Whole-request deadline in ms (kube-apiserver gives up at the webhook's timeoutSeconds anyway). */
  requestTimeoutMs: number;
  context: AdmissionContext;
  metrics: WebhookMetrics;
  isReady(): boolean;
  waitUntilReady(waitMs: number): Promise<boolean>;
}

/**
 * The fastify HTTPS app: admission routes and probes as encapsulated plugins,
 * and one error handler that turns every bad request (not JSON, not an
 * AdmissionReview v1, too large, wrong content type) into a 4xx with a reason,
 * logged once, so no input can take the server down.
 */
export function buildApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    // HTTP/2 for clients that offer it (kube-apiserver's Go client does: every admission call a stream on
    // one connection), HTTP/1.1 for the rest.
    http2: true,
    https: { ...options.https, allowHTTP1: true, Http2ServerResponse: Http2ResponseWithoutTrailers as typeof Http2ServerResponse },
    loggerInstance: options.logger,
    // Every request would be two log lines; bad requests are logged once by the error handler instead.
    logController: new LogController({ disableRequestLogging: true }),
    // A child logger per request (for its reqId) costs a review more than its metrics do; at info and
    // above a review logs at most one line, which names its uid and webhook, so the server's logger serves.
    childLoggerFactory: (logger, bindings, childOptions) => (options.logger.isLevelEnabled('debug') ? logger.child(bindings, childOptions) : logger),
    bodyLimit: options.bodyLimit,
    requestTimeout: options.requestTimeoutMs,
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
    schemaErrorFormatter: (errors, dataVar) => new Error(`not an AdmissionReview v1: ${describe(errors, dataVar)}`),
  }) as unknown as FastifyInstance;

  // Only JSON is an AdmissionReview: without the text parser other types get 415. The JSON parser names the
  // problem (truncated, not JSON, a __proto__ or constructor.prototype key) instead of fastify's generic text.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, secureJson.parse(body as string, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      done(Object.assign(new Error(`the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`), { statusCode: 400, code: 'K8OR_INVALID_JSON' }), undefined);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    const webhook = request.url.replace(/^\/|\?.*$/g, '');
    if (status >= 500) request.log.error({ err: error, url: request.url }, 'request failed');
    else request.log.warn({ status, code: error.code, reason: error.message, url: request.url, contentType: request.headers['content-type'] }, 'bad request');
    options.metrics.rejected(webhook, status >= 500 ? 'error' : 'bad_request');
    const message = status >= 500 ? 'internal error' : error.message;
    return reply.code(status).send({ statusCode: status, error: nodeHttp.STATUS_CODES[status] ?? 'Error', code: error.code, message });
  });
  app.setNotFoundHandler((request, reply) => {
    request.log.info({ method: request.method, url: request.url }, 'not found');
    return reply.code(404).send({ statusCode: 404, error: 'Not Found', message: `${request.method} ${request.url.slice(0, 200)} is not served here; use POST /validate or POST /mutate` });
  });

  void app.register(admissionRoutes, { context: options.context, metrics: options.metrics, isReady: options.isReady, waitUntilReady: options.waitUntilReady, syncWaitMs: Math.max(0, options.requestTimeoutMs - 1000) });
  void app.register(probeRoutes, { metrics: options.metrics, isReady: options.isReady });
  return app;
}

function describe(errors: FastifySchemaValidationError[], dataVar: string): string {
  return errors
    .map((e) => {
      const where = `${dataVar}${e.instancePath.replace(/\//g, '.')}`;
      const params = e.params as Record<string, unknown>;
      if (e.keyword === 'const') return `${where} must be ${JSON.stringify(params.allowedValue)}`;
      if (e.keyword === 'enum') return `${where} must be one of ${JSON.stringify(params.allowedValues)}`;
      return `${where} ${e.message ?? 'is invalid'}`;
    })
    .join('; ');
}
