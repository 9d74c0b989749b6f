// Replicas of the webhook in self-signed mode share one CA and serving certificate through a Secret:
// the caBundle of the webhook configurations holds one CA, and the Service sends each admission call
// to any replica. Before, each replica made its own CA and the last to start won the caBundle, so the
// API server failed TLS with every other replica (found by test/reliability's leader-killed suite).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { AdmissionregistrationV1Api, KubeConfig } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';

describe('self-signed webhook replicas share one certificate', () => {
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;
  const servers: WebhookServer[] = [];
  const sharedSecret = { namespace: 'default', name: 'k8or-webhook-tls' };

  before(async () => {
    sandbox = await startSandbox({ logLevel: 'error' });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
  });

  after(async () => {
    for (const server of servers) await server.close();
    await sandbox?.stop();
  });

  const start = async (): Promise<WebhookServer> => {
    const server = await startWebhookServer({
      port: 0,
      tls: { selfSigned: { service: { name: 'k8or-webhook', namespace: 'default' }, sharedSecret } },
      kubeConfig,
      providers: [],
      caBundle: { register: true, service: { name: 'k8or-webhook', namespace: 'default', port: 443 } },
      logLevel: 'silent',
      processMetrics: false,
    });
    servers.push(server);
    return server;
  };

  /** Whether a TLS client that trusts only the caBundle's CA accepts this server. */
  const trusted = (server: WebhookServer, caPem: string): Promise<string> =>
    new Promise((resolve) => {
      const { port } = new URL(server.url);
      https
        .get({ host: '127.0.0.1', port, path: '/healthz', ca: caPem, servername: 'k8or-webhook.default.svc' }, (res) => {
          res.resume();
          resolve('trusted');
        })
        .on('error', (error) => resolve(error.message));
    });

  it('two replicas started at once serve certificates the one caBundle trusts', async () => {
    const [first, second] = await Promise.all([start(), start()]);
    assert.equal(first!.caPem, second!.caPem, 'one CA for both');
    const caBundle = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).readValidatingWebhookConfiguration({ name: 'k8or-validating-webhook' })).webhooks?.[0]?.clientConfig.caBundle;
    const ca = Buffer.from(caBundle ?? '', 'base64').toString('utf8');
    assert.deepEqual([await trusted(first!, ca), await trusted(second!, ca)], ['trusted', 'trusted']);
  });

  it('a replica started later (a restart) serves the certificate kept in the Secret', async () => {
    const third = await start();
    assert.equal(third.caPem, servers[0]!.caPem);
    assert.equal(await trusted(third, servers[0]!.caPem), 'trusted');
  });
});
