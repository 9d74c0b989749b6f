/** The webhook server inside a worker thread (see worker.ts): starts it, reports to the parent, stops on request. */
import { parentPort, workerData } from 'node:worker_threads';
import { kubeAccessFromText, loadedProviders, type ProviderPlugin } from '@k8or/core';
import { Container, type ContainerModule } from 'inversify';
import { pino } from 'pino';
import { startWebhookServer, type WebhookServer } from './start.js';
import type { FromWorker, ProviderModule, ToWorker, WorkerStart } from './worker-protocol.js';

const port = parentPort!;
const start = workerData as WorkerStart;
const send = (message: FromWorker): void => port.postMessage(message);

let server: WebhookServer | undefined;
try {
  // Core's reader, not client-node's KubeConfig: client-node would cost this thread tens of MiB of
  // RSS (its generated API client) for what KubeAccess does. Exec and auth-provider users still load it.
  const kubeConfig = await kubeAccessFromText(start.kubeConfig);
  const providers: ProviderPlugin[] = [];
  for (const module of start.providers) providers.push(...(await importProviders(module)));
  // Log lines go to the parent, which writes them through its own logger.
  const logger = pino({ level: start.logLevel }, { write: (line: string) => send({ type: 'log', line }) });
  server = await startWebhookServer({ ...start.server, kubeConfig, providers, logger });
  send({ type: 'listening', url: server.url, caPem: server.caPem });
  if (server.isReady()) send({ type: 'synced' });
  else {
    const poll = setInterval(() => {
      if (!server?.isReady()) return;
      clearInterval(poll);
      send({ type: 'synced' });
    }, 20);
  }
} catch (error) {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

/** The named plugin export, or every plugin the package's default ContainerModule binds (as the operator loads packages). */
async function importProviders(module: ProviderModule): Promise<ProviderPlugin[]> {
  const exports = (await import(module.url)) as Record<string, unknown>;
  if (module.export !== undefined) {
    const plugin = exports[module.export];
    if (typeof plugin !== 'object' || plugin === null) throw new Error(`${module.url} has no export "${module.export}"`);
    return [plugin as ProviderPlugin];
  }
  const container = new Container();
  await container.load(exports['default'] as ContainerModule);
  const plugins = [...loadedProviders(container).values()];
  if (plugins.length === 0) throw new Error(`${module.url}: its default export binds no ProviderPlugin`);
  return plugins;
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'metrics' && server) {
    void server.metrics.registry.metrics().then((text) => send({ type: 'metrics', id: message.id, text }));
  } else if (message.type === 'close') {
    void (server?.close() ?? Promise.resolve()).finally(() => {
      send({ type: 'closed' });
      // Ends this thread even if a watch or timer of the server's is still winding down.
      process.exit(0);
    });
  }
});
