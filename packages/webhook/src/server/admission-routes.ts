import type { FastifyPluginAsync } from 'fastify';
import { admit, type WebhookKind } from '../admission/admit.js';
import { ADMISSION_API_VERSION, type AdmissionContext, type AdmissionReview } from '../admission/types.js';
import type { ReviewResult, WebhookMetrics } from './metrics.js';
import { admissionResponseSchema, admissionReviewSchema, errorSchema } from './schema.js';

export interface AdmissionRoutesOptions {
  context: AdmissionContext;
  metrics: WebhookMetrics;
  /** True once the context's caches are synced. */
  isReady(): boolean;
  /** Resolves true once the context's caches are synced, false if that takes longer than `waitMs`. */
  waitUntilReady(waitMs: number): Promise<boolean>;
  /** How long a review may wait for the first cache sync before it is denied as unavailable. */
  syncWaitMs: number;
}

/**
 * `POST /validate` and `POST /mutate`: fastify checks the body against the
 * AdmissionReview v1 schema (a 400 with the reason otherwise), the handler
 * hands the request to the pure `admit` and answers what it decided.
 */
export const admissionRoutes: FastifyPluginAsync<AdmissionRoutesOptions> = async (app, options) => {
  app.addSchema(admissionReviewSchema);
  const route = (webhook: WebhookKind): void => {
    app.post(`/${webhook}`, {
      schema: { body: { $ref: 'AdmissionReview#' }, response: { 200: admissionResponseSchema, '4xx': errorSchema, '5xx': errorSchema } },
      handler: async (request) => {
        const started = process.hrtime.bigint();
        const review = request.body as AdmissionReview & { request: NonNullable<AdmissionReview['request']> };
        const { uid, kind, operation, name, namespace, dryRun } = review.request;
        // Log fields are built only when something is logged: a child logger per review costs more than admitting it.
        const fields = (): Record<string, unknown> => ({ webhook, uid, kind: kind.kind, operation, namespace, name, dryRun: dryRun === true });
        let answer: AdmissionReview;
        let result: ReviewResult;
        // Once synced (every review but the first few), no promise to wait on.
        if (!options.isReady() && !(await options.waitUntilReady(options.syncWaitMs))) {
          answer = unavailable(uid, 'the webhook has not finished loading ProviderConfigs and Namespaces from the API server yet; retry shortly');
          result = 'error';
        } else {
          try {
            answer = admit(review, options.context, webhook);
            result = !answer.response?.allowed ? 'denied' : answer.response.patch ? 'patched' : 'allowed';
          } catch (error) {
            request.log.error({ ...fields(), err: error }, 'admission failed');
            answer = unavailable(uid, `internal error while admitting: ${error instanceof Error ? error.message : String(error)}`);
            result = 'error';
          }
        }
        options.metrics.observe(webhook, kind.kind, operation, result, Number(process.hrtime.bigint() - started) / 1e9);
        if (result === 'denied') request.log.info({ ...fields(), reason: answer.response?.status?.message }, 'denied');
        else if (request.log.level === 'debug' || request.log.level === 'trace') request.log.debug({ ...fields(), result, warnings: answer.response?.warnings }, 'admitted');
        return answer;
      },
    });
  };
  route('validate');
  route('mutate');
};

function unavailable(uid: string, message: string): AdmissionReview {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    response: { uid, allowed: false, status: { code: 503, reason: 'ServiceUnavailable', message } },
  };
}
