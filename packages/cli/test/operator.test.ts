import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_VERSION } from '@k8or/api';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { AdmissionregistrationV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { k8or, startK8or } from './support.ts';

const fixture = fileURLToPath(new URL('./fixtures/k8or-provider-foo/', import.meta.url));
const workspaceCore = fileURLToPath(new URL('../../core/', import.meta.url));

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

describe('k8or operator: a third party provider, installed outside the workspace, loaded by its package name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-operator-'));
  // Where the user installed the operator's providers: an npm prefix of its own.
  const install = join(dir, 'install');
  const cloud = join(dir, 'foo-cloud');
  const kubeconfigPath = join(dir, 'kubeconfig');
  let sandbox: Sandbox;
  let kubeConfig: KubeConfig;

  before(async () => {
    sandbox = await startSandbox({ port: 0, kubeconfigPath, logLevel: 'warn' });
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    await kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'k8or-system' } } });
    cpSync(fixture, join(install, 'node_modules', 'k8or-provider-foo'), { recursive: true });
    // Its peer dependency, as npm would install it beside it.
    mkdirSync(join(install, 'node_modules', '@k8or'), { recursive: true });
    symlinkSync(workspaceCore, join(install, 'node_modules', '@k8or', 'core'), 'dir');
    mkdirSync(cloud);
    await kubeConfig.makeApiClient(CustomObjectsApi).createClusterCustomObject({
      group: 'k8or.io',
      version: 'v1alpha1',
      plural: 'providerconfigs',
      body: { apiVersion: API_VERSION, kind: 'ProviderConfig', metadata: { name: 'foo-local' }, spec: { provider: 'foo', settings: { root: cloud } } },
    });
  });

  after(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const operatorArgs = ['operator', '--kubeconfig', kubeconfigPath, '--cluster-id', 'test-cluster', '--health-probe-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0'];

  it('reconciles a Bucket with it, and on SIGTERM drains and releases the Lease', async () => {
    const operator = startK8or([...operatorArgs, '--providers', 'k8or-provider-foo', '--provider-root', install, '--leader-elect', '--leader-election-namespace', 'k8or-system']);
    try {
      await waitFor('the operator is ready', () => {
        if (operator.child.exitCode !== null) throw new Error(`k8or operator exited early:\n${operator.output()}`);
        return operator.output().includes('"msg":"ready"');
      }, 120_000);
      assert.match(operator.output(), /"providers":\["foo"\]/);

      const custom = kubeConfig.makeApiClient(CustomObjectsApi);
      await custom.createNamespacedCustomObject({
        group: 'k8or.io',
        version: 'v1alpha1',
        namespace: 'default',
        plural: 'buckets',
        body: { apiVersion: API_VERSION, kind: 'Bucket', metadata: { name: 'reports' }, spec: { providerConfigRef: { name: 'foo-local' }, versioning: true } },
      });
      const ready = await waitFor(
        'the Bucket is Ready',
        async () => {
          const bucket = (await custom.getNamespacedCustomObject({ group: 'k8or.io', version: 'v1alpha1', namespace: 'default', plural: 'buckets', name: 'reports' })) as {
            spec: { name?: string };
            status?: { conditions?: Condition[] };
          };
          return bucket.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? bucket : undefined;
        },
        90_000,
      );
      const externalName = ready.spec.name ?? '';
      assert.ok(externalName, 'the engine persisted an external name');
      const meta = JSON.parse(readFileSync(join(cloud, externalName, 'meta.json'), 'utf8')) as { tags: Record<string, string>; versioning: boolean };
      assert.equal(meta.versioning, true);
      assert.equal(meta.tags['k8or.io/cluster'], 'test-cluster');
      assert.equal(meta.tags['k8or.io/name'], 'reports');

      const lease = () => kubeConfig.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: 'k8or-system', name: 'k8or-operator' });
      assert.ok((await lease()).spec?.holderIdentity, 'the operator holds the Lease while it runs');
      operator.child.kill('SIGTERM');
      assert.equal(await operator.exited, 0, operator.output());
      assert.match(operator.output(), /SIGTERM: draining/);
      assert.ok(!(await lease()).spec?.holderIdentity, 'the Lease is released on the way out');
      assert.ok(existsSync(join(cloud, externalName)), 'stopping the operator deletes nothing');
    } finally {
      if (operator.child.exitCode === null) operator.child.kill('SIGKILL');
    }
  });

  it('fails at start for a provider that is not installed, listing the installed ones', async () => {
    const result = await k8or([...operatorArgs, '--providers', 'nimbus', '--provider-root', install]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /k8or operator: cannot start: provider "nimbus" is not installed/);
    assert.match(result.stderr, /installed providers: .*@k8or\/provider-aws.*k8or-provider-foo|installed providers: .*k8or-provider-foo/);
  });

  it('refuses a setting that breaks its rule, naming the flag, the variable and the rule (exit 2)', async () => {
    const flag = await k8or([...operatorArgs, '--workers', 'lots']);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /k8or operator: --workers \(K8OR_WORKERS\) must be a number from 1 to 1000, or per kind as Bucket=N,Table=N, got "lots"/);
    const env = await k8or(operatorArgs, { env: { ...process.env, K8OR_RESYNC_PERIOD: 'hourly' } });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /--resync-period \(K8OR_RESYNC_PERIOD\) must be a duration such as 30s, 5m or 1h, got "hourly"/);
    const unknown = await k8or(['operator', '--bogus']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown option '--bogus'/);
  });

  it('k8or webhook serves the admission webhook alone', async () => {
    const webhook = startK8or(['webhook', '--kubeconfig', kubeconfigPath, '--providers', 'aws', '--webhook-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0']);
    try {
      await waitFor('the webhook is ready', () => {
        if (webhook.child.exitCode !== null) throw new Error(`k8or webhook exited early:\n${webhook.output()}`);
        return webhook.output().includes('"msg":"ready"');
      }, 120_000);
      assert.match(webhook.output(), /"webhook":"https:\/\/127\.0\.0\.1:\d+"/);
      assert.match(webhook.output(), /"engines":0/);
      webhook.child.kill('SIGTERM');
      assert.equal(await webhook.exited, 0, webhook.output());
    } finally {
      if (webhook.child.exitCode === null) webhook.child.kill('SIGKILL');
    }
  });

  it('k8or webhook with the Service the chart names: the self-signed certificate names the Service, and the configurations point at it', async () => {
    const webhook = startK8or([
      'webhook', '--kubeconfig', kubeconfigPath, '--providers', 'aws', '--webhook-bind-address', '127.0.0.1:0', '--health-probe-bind-address', '127.0.0.1:0', '--metrics-bind-address', '127.0.0.1:0',
    ], { ...process.env, K8OR_WEBHOOK_SERVICE_NAME: 'k8or-webhook', K8OR_WEBHOOK_SERVICE_NAMESPACE: 'k8or-system' });
    const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    try {
      await waitFor('the webhook is ready', () => {
        if (webhook.child.exitCode !== null) throw new Error(`k8or webhook exited early:\n${webhook.output()}`);
        return webhook.output().includes('"msg":"ready"');
      }, 120_000);
      const clientConfig = (await admission.readValidatingWebhookConfiguration({ name: 'k8or-validating-webhook' })).webhooks?.[0]?.clientConfig;
      assert.deepEqual({ ...clientConfig?.service }, { name: 'k8or-webhook', namespace: 'k8or-system', port: 443, path: '/validate' });
      const caPem = Buffer.from(clientConfig?.caBundle ?? '', 'base64').toString();
      const url = /"webhook":"(https:\/\/127\.0\.0\.1:\d+)"/.exec(webhook.output())?.[1] ?? '';
      // What kube-apiserver does: trust the caBundle and check the name it called, <svc>.<ns>.svc.
      const served = await servedCertificate(url, caPem, 'k8or-webhook.k8or-system.svc');
      for (const name of ['k8or-webhook', 'k8or-webhook.k8or-system', 'k8or-webhook.k8or-system.svc', 'k8or-webhook.k8or-system.svc.cluster.local']) {
        assert.ok(served.subjectaltname?.split(', ').includes(`DNS:${name}`), `${name} in ${served.subjectaltname ?? 'no SANs'}`);
      }
      webhook.child.kill('SIGTERM');
      assert.equal(await webhook.exited, 0, webhook.output());
    } finally {
      if (webhook.child.exitCode === null) webhook.child.kill('SIGKILL');
      // The Service does not exist here: later writes must not be sent to it.
      await admission.deleteValidatingWebhookConfiguration({ name: 'k8or-validating-webhook' }).catch(() => undefined);
      await admission.deleteMutatingWebhookConfiguration({ name: 'k8or-mutating-webhook' }).catch(() => undefined);
    }
  });

  it('k8or webhook refuses a Service name without its namespace, naming both flags (exit 2)', async () => {
    const result = await k8or(['webhook', '--kubeconfig', kubeconfigPath, '--webhook-service-name', 'k8or-webhook']);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(result.stderr, /--webhook-service-name \(K8OR_WEBHOOK_SERVICE_NAME\) needs --webhook-service-namespace too: the Service is named by both, got "k8or-webhook"/);
  });
});

/** The certificate a server serves, in a handshake that verifies it against `ca` for `servername`. */
async function servedCertificate(url: string, ca: string, servername: string): Promise<PeerCertificate> {
  const { hostname, port } = new URL(url);
  return await new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, servername }, () => {
      const certificate = socket.getPeerCertificate();
      socket.end();
      resolve(certificate);
    });
    socket.once('error', reject);
  });
}
