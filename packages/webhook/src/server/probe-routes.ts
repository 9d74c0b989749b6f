import type { FastifyPluginAsync } from 'fastify';
import type { WebhookMetrics } from './metrics.js';

export interface ProbeRoutesOptions {
  metrics: WebhookMetrics;
  /** True once the caches are synced and a certificate is loaded. */
  isReady(): boolean;
}

/** `/healthz` (the process serves), `/readyz` (it can admit correctly) and `/metrics` (Prometheus text). */
export const probeRoutes: FastifyPluginAsync<ProbeRoutesOptions> = async (app, options) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ready = options.isReady();
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'caches not synced' });
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.metrics.registry.metrics();
    return reply.type(options.metrics.registry.contentType).send(text);
  });
};
