import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Result label of `k8or_admission_reviews_total`. */
export type ReviewResult = 'allowed' | 'patched' | 'denied' | 'bad_request' | 'error';

/** The webhook's Prometheus metrics, in a registry of their own (several servers can share a process). */
export class WebhookMetrics {
  readonly registry: Registry;
  private readonly duration: Histogram<'webhook' | 'kind' | 'operation'>;
  private readonly reviews: Counter<'webhook' | 'kind' | 'operation' | 'result'>;

  constructor(options: { registry?: Registry; defaultMetrics?: boolean } = {}) {
    this.registry = options.registry ?? new Registry();
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    this.duration = new Histogram({
      name: 'k8or_admission_review_duration_seconds',
      help: 'Time to answer one AdmissionReview, from parsed request to response, by webhook (validate or mutate), kind and operation.',
      labelNames: ['webhook', 'kind', 'operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.reviews = new Counter({
      name: 'k8or_admission_reviews_total',
      help: 'AdmissionReviews answered, by webhook, kind, operation and result (allowed, patched, denied, bad_request, error).',
      labelNames: ['webhook', 'kind', 'operation', 'result'],
      registers: [this.registry],
    });
  }

  observe(webhook: string, kind: string, operation: string, result: ReviewResult, seconds: number): void {
    this.duration.observe({ webhook, kind, operation }, seconds);
    this.reviews.inc({ webhook, kind, operation, result });
  }

  /** A request that never became a review (bad body, wrong apiVersion, over the size limit). */
  rejected(webhook: string, result: 'bad_request' | 'error'): void {
    this.reviews.inc({ webhook, kind: '', operation: '', result });
  }
}
