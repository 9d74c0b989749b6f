import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { defaultS3BucketName } from '@k8or/provider-aws';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startWebhookWorker, type WebhookWorker } from '@k8or/webhook';
import { pino } from 'pino';

const CLUSTER_ID = 'webhook-worker-test';
const group = 'k8or.io';
const version = 'v1alpha1';

describe('the webhook server in a worker thread, registered with the sandbox API server', () => {
  let sandbox: Sandbox;
  let webhook: WebhookWorker;
  let dir: string;
  let custom: CustomObjectsApi;
  const logged: Record<string, unknown>[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-webhook-worker-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    custom = kubeConfig.makeApiClient(CustomObjectsApi);
    await waitFor('the CRDs are served', () => custom.listClusterCustomObject({ group, version, plural: 'providerconfigs' }));
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'apps' } } });
    await custom.createClusterCustomObject({ group, version, plural: 'providerconfigs', body: { apiVersion: `${group}/${version}`, kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'aws', region: 'us-east-1' } } });
    // The parent's logger receives the worker's lines.
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    webhook = await startWebhookWorker({
      port: 0,
      tls: { selfSigned: {} },
      kubeConfig,
      providers: [{ url: import.meta.resolve('@k8or/provider-aws'), export: 'awsProvider' }],
      clusterId: CLUSTER_ID,
      caBundle: { register: true },
      logger,
      processMetrics: false,
    });
    await waitFor('the worker caches are synced', () => webhook.isReady());
  });

  after(async () => {
    await webhook?.close();
    await sandbox?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('defaults a Bucket the API server creates (mutate) with the provider the worker imported', async () => {
    const created = (await custom.createNamespacedCustomObject({ group, version, namespace: 'apps', plural: 'buckets', body: { apiVersion: `${group}/${version}`, kind: 'Bucket', metadata: { name: 'photos' }, spec: {} } })) as { spec: Record<string, unknown> };
    assert.equal(created.spec['name'], defaultS3BucketName({ clusterId: CLUSTER_ID, namespace: 'apps', name: 'photos' }));
    assert.equal(created.spec['deletionPolicy'], 'Delete');
  });

  it('denies a Bucket that breaks the provider rule (validate), naming the field and the rule', async () => {
    await assert.rejects(
      custom.createNamespacedCustomObject({ group, version, namespace: 'apps', plural: 'buckets', body: { apiVersion: `${group}/${version}`, kind: 'Bucket', metadata: { name: 'bad' }, spec: { name: 'x' } } }),
      (error: Error & { body?: string }) => {
        assert.match(String(error.body ?? error.message), /spec\.name.*\(rule s3\.length\)/s);
        return true;
      },
    );
    await waitFor('the denial is logged through the parent logger', () => logged.some((line) => line['msg'] === 'denied' && line['name'] === 'bad'));
  });

  it('serves its metrics from the worker (both Buckets were defaulted; the second was then denied)', async () => {
    const text = await webhook.metricsText();
    assert.match(text, /k8or_admission_reviews_total\{webhook="mutate",kind="Bucket",operation="CREATE",result="patched"\} 2/);
    assert.match(text, /k8or_admission_reviews_total\{webhook="validate",kind="Bucket",operation="CREATE",result="denied"\} 1/);
  });

  it('fails to start with the reason when a provider module has no such export', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await assert.rejects(
      startWebhookWorker({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [{ url: import.meta.resolve('@k8or/provider-aws'), export: 'noSuchProvider' }], logLevel: 'silent', processMetrics: false }),
      /has no export "noSuchProvider"/,
    );
  });
});
