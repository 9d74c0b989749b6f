// A process that runs the webhook in a worker thread as `k8or sandbox` does (the parent holds a
// client-node KubeConfig), waits for its caches, and stops it. Argument: the kubeconfig file.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '@k8or/core/testing';
import { startWebhookWorker } from '@k8or/webhook';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(readFileSync(process.argv[2] ?? '', 'utf8'));
const webhook = await startWebhookWorker({
  port: 0,
  tls: { selfSigned: {} },
  kubeConfig,
  providers: [{ url: import.meta.resolve('@k8or/provider-aws') }],
  clusterId: 'worker-modules-test',
  logLevel: 'error',
  processMetrics: false,
});
await waitFor('the worker caches are synced', () => webhook.isReady());
await webhook.close();
