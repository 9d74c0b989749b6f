/**
 * The webhook server on a thread of its own. In `k8or sandbox` the API server and the webhook share
 * one process; on one event loop every admitted write pays both sides of two HTTPS calls in turn.
 * In a worker thread the webhook's side (TLS, fastify, admission) runs on another core, as the
 * webhook runs in a pod of its own in a real cluster.
 */
import { Worker } from 'node:worker_threads';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { WebhookServerOptions } from './start.js';
import type { FromWorker, ProviderModule, ToWorker, WorkerStart } from './worker-protocol.js';

export type { ProviderModule } from './worker-protocol.js';

export interface WebhookWorkerOptions extends Omit<WebhookServerOptions, 'context' | 'kubeConfig' | 'providers'> {
  kubeConfig: KubeConfig;
  /** Provider plugins by module URL and export name; the worker imports them. */
  providers: readonly ProviderModule[];
}

export interface WebhookWorker {
  /** https://host:port */
  url: string;
  /** The CA that kube-apiserver must trust for this server (the caBundle). */
  caPem: string;
  /** True once the worker's caches are synced. */
  isReady(): boolean;
  /** The worker's Prometheus metrics, in the text format. */
  metricsText(): Promise<string>;
  close(): Promise<void>;
}

const LEVEL_NAMES: Record<number, pino.Level> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** Starts the webhook server (as `startWebhookServer` does) in a worker thread; resolves once it listens. */
export async function startWebhookWorker(options: WebhookWorkerOptions): Promise<WebhookWorker> {
  const { kubeConfig, providers, logger: given, logLevel, ...server } = options;
  const logger: Logger = given ?? pino({ name: 'k8or-webhook', level: logLevel ?? 'info' });
  const start: WorkerStart = { server, kubeConfig: kubeConfig.exportConfig(), providers: [...providers], logLevel: logger.level };
  // Named, so the thread shows as k8or-webhook in top -H and /proc/PID/task/*/comm.
  const worker = new Worker(new URL('./worker-main.js', import.meta.url), { workerData: start, name: 'k8or-webhook' });

  let ready = false;
  let closing = false;
  let nextMetricsId = 0;
  const metricsWaiters = new Map<number, (text: string) => void>();
  worker.on('message', (message: FromWorker) => {
    if (message.type === 'log') relayLog(logger, message.line);
    else if (message.type === 'synced') ready = true;
    else if (message.type === 'metrics') {
      metricsWaiters.get(message.id)?.(message.text);
      metricsWaiters.delete(message.id);
    }
  });

  const listening = await new Promise<{ url: string; caPem: string }>((resolve, reject) => {
    const onMessage = (message: FromWorker): void => {
      if (message.type === 'listening') resolve(message);
      else if (message.type === 'failed') reject(new Error(message.message));
      else return;
      worker.off('message', onMessage);
      worker.off('error', reject);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the webhook worker exited with code ${code} before it listened`)));
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });
  worker.on('error', (error) => logger.error({ err: error }, 'webhook worker failed'));
  worker.on('exit', (code) => {
    if (!closing) logger.error({ code }, 'webhook worker exited; admission calls to it will fail');
  });

  return {
    url: listening.url,
    caPem: listening.caPem,
    isReady: () => ready,
    metricsText: () =>
      new Promise((resolve) => {
        const id = nextMetricsId++;
        metricsWaiters.set(id, resolve);
        worker.postMessage({ type: 'metrics', id } satisfies ToWorker);
      }),
    close: async () => {
      if (closing) return;
      closing = true;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'close' } satisfies ToWorker);
      await exited;
    },
  };
}

/** Writes a pino line from the worker through the parent's logger, at its level and with its fields. */
function relayLog(logger: Logger, line: string): void {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    logger.info({ line }, 'webhook worker output');
    return;
  }
  const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = record;
  const name = LEVEL_NAMES[typeof level === 'number' ? level : 30] ?? 'info';
  logger[name](fields, typeof msg === 'string' ? msg : '');
}
