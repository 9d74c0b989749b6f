import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { defaultS3BucketName } from '@k8or/provider-aws';
import { installCrds } from '@k8or/core';
import { awsProvider } from '@k8or/provider-aws';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { startWebhookServer, webhookConfigurations, type WebhookServer } from '@k8or/webhook';
import { kubectlFor, type Kubectl, type Run } from './helpers/kubectl.ts';

const CLUSTER_ID = 'webhook-cluster-test';
async function eventually<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt().catch(() => undefined);
    if (result !== undefined) return result;
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('kubectl through the sandbox API server and the webhook', () => {
  let sandbox: Sandbox;
  let webhook: WebhookServer;
  let dir: string;
  let kubeConfig: KubeConfig;

  let cli: Kubectl;
  const kubectl = (args: string[], stdin?: string): Promise<Run> => cli.run(args, stdin);
  const apply = (name: string, yaml: string, extra: string[] = []): Promise<Run> => cli.apply(name, yaml, extra);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-webhook-cluster-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
    cli = kubectlFor(join(dir, 'kubeconfig'), dir);
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    await eventually('the CRDs are served', () => custom.listClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs' }));
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const [name, annotations] of [
      ['apps', {}],
      ['team-a', { 'k8or.io/provider-config': 'staging', 'k8or.io/deletion-policy': 'Retain' }],
      ['k8or-system', {}],
    ] as const) {
      await core.createNamespace({ body: { metadata: { name, annotations } } });
    }
    for (const [name, region] of [
      ['default', 'us-east-1'],
      ['staging', 'eu-west-1'],
    ]) {
      await custom.createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: { provider: 'aws', region } } });
    }
    // Self-signed mode: the webhook makes its CA and registers both configurations, pointing at itself, with the caBundle.
    webhook = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [awsProvider], clusterId: CLUSTER_ID, caBundle: { register: true }, logLevel: 'silent', processMetrics: false });
    await eventually('the webhook caches are synced', async () => (webhook.isReady() ? true : undefined));
  });

  after(async () => {
    await webhook?.close();
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('registered its configurations with its own URL and CA (caBundle patched at start-up)', async () => {
    const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const validating = await api.readValidatingWebhookConfiguration({ name: 'k8or-validating-webhook' });
    const mutating = await api.readMutatingWebhookConfiguration({ name: 'k8or-mutating-webhook' });
    const caBundle = Buffer.from(webhook.caPem).toString('base64');
    assert.equal(validating.webhooks?.[0]?.clientConfig.caBundle, caBundle);
    assert.equal(validating.webhooks?.[0]?.clientConfig.url, `${webhook.url}/validate`);
    assert.equal(mutating.webhooks?.[0]?.clientConfig.caBundle, caBundle);
    assert.equal(mutating.webhooks?.[0]?.sideEffects, 'None');
  });

  it('patches the caBundle into configurations that already exist (installed by a chart, without one)', async () => {
    const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const preinstalled = webhookConfigurations({ url: 'https://127.0.0.1:1', names: { validating: 'chart-validating', mutating: 'chart-mutating' } });
    // Match nothing, so these extra configurations never take part in the other tests.
    for (const w of [...(preinstalled.validating.webhooks ?? []), ...(preinstalled.mutating.webhooks ?? [])]) w.objectSelector = { matchLabels: { 'k8or.io/never': 'true' } };
    await api.createValidatingWebhookConfiguration({ body: preinstalled.validating });
    await api.createMutatingWebhookConfiguration({ body: preinstalled.mutating });
    const second = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [awsProvider], clusterId: CLUSTER_ID, caBundle: { validating: 'chart-validating', mutating: 'chart-mutating' }, logLevel: 'silent', processMetrics: false });
    try {
      const caBundle = Buffer.from(second.caPem).toString('base64');
      assert.equal((await api.readValidatingWebhookConfiguration({ name: 'chart-validating' })).webhooks?.[0]?.clientConfig.caBundle, caBundle);
      assert.equal((await api.readMutatingWebhookConfiguration({ name: 'chart-mutating' })).webhooks?.[0]?.clientConfig.caBundle, caBundle);
      assert.equal((await api.readValidatingWebhookConfiguration({ name: 'chart-validating' })).webhooks?.[0]?.clientConfig.url, 'https://127.0.0.1:1/validate', 'only the caBundle changed');
    } finally {
      await second.close();
      await api.deleteValidatingWebhookConfiguration({ name: 'chart-validating' });
      await api.deleteMutatingWebhookConfiguration({ name: 'chart-mutating' });
    }
  });

  it('points its registered configurations at its new URL when it starts again (a persisted cluster restarted)', async () => {
    const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
    const names = { validating: 'restarted-validating', mutating: 'restarted-mutating' };
    // What the previous run registered: its own URL, long gone.
    const previous = webhookConfigurations({ url: 'https://127.0.0.1:1', names });
    for (const w of [...(previous.validating.webhooks ?? []), ...(previous.mutating.webhooks ?? [])]) w.objectSelector = { matchLabels: { 'k8or.io/never': 'true' } };
    await api.createValidatingWebhookConfiguration({ body: previous.validating });
    await api.createMutatingWebhookConfiguration({ body: previous.mutating });
    const restarted = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [awsProvider], clusterId: CLUSTER_ID, caBundle: { register: true, ...names }, logLevel: 'silent', processMetrics: false });
    try {
      const validating = (await api.readValidatingWebhookConfiguration({ name: names.validating })).webhooks?.[0];
      const mutating = (await api.readMutatingWebhookConfiguration({ name: names.mutating })).webhooks?.[0];
      assert.equal(validating?.clientConfig.url, `${restarted.url}/validate`);
      assert.equal(mutating?.clientConfig.url, `${restarted.url}/mutate`);
      assert.equal(validating?.clientConfig.caBundle, Buffer.from(restarted.caPem).toString('base64'));
      assert.deepEqual(validating?.objectSelector?.matchLabels, { 'k8or.io/never': 'true' }, 'only where it is and whom to trust changed');
    } finally {
      await restarted.close();
      await api.deleteValidatingWebhookConfiguration({ name: names.validating });
      await api.deleteMutatingWebhookConfiguration({ name: names.mutating });
    }
  });

  it('kubectl apply of a bare Bucket stores it with the defaults filled in', async () => {
    const run = await apply('reports', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: reports\n  namespace: team-a\nspec:\n  versioning: true\n');
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /bucket\.k8or\.io\/reports created/);
    const got = await kubectl(['get', 'bucket', 'reports', '-n', 'team-a', '-o', 'yaml']);
    assert.match(got.stdout, /providerConfigRef:\n\s+name: staging/);
    assert.match(got.stdout, new RegExp(`\\n\\s+name: ${defaultS3BucketName({ clusterId: CLUSTER_ID, namespace: 'team-a', name: 'reports' })}\\n`));
    assert.match(got.stdout, /deletionPolicy: Retain/);
    const again = await apply('reports', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: reports\n  namespace: team-a\nspec:\n  versioning: true\n');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /unchanged/, 'a second apply changes nothing: defaulting is idempotent');
  });

  it('kubectl apply --server-side keeps the defaults across re-applies that omit them', async () => {
    const manifest = 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: ssa\n  namespace: apps\nspec:\n  versioning: false\n';
    const first = await apply('ssa', manifest, ['--server-side']);
    assert.equal(first.code, 0, first.stderr);
    const second = await apply('ssa', manifest.replace('versioning: false', 'versioning: true'), ['--server-side']);
    assert.equal(second.code, 0, second.stderr);
    const got = await kubectl(['get', 'bucket', 'ssa', '-n', 'apps', '-o', 'jsonpath={.spec.name} {.spec.deletionPolicy} {.spec.providerConfigRef.name} {.spec.versioning}']);
    assert.equal(got.stdout, `${defaultS3BucketName({ clusterId: CLUSTER_ID, namespace: 'apps', name: 'ssa' })} Delete default true`);
  });

  it('follows a namespace annotation change without a restart', async () => {
    const manifest = 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: follow\n  namespace: apps\n';
    const providerConfigOnDryRun = async (): Promise<string> => (await apply('follow', manifest, ['--dry-run=server', '-o', 'jsonpath={.spec.providerConfigRef.name}'])).stdout;
    assert.equal((await kubectl(['annotate', 'namespace', 'apps', 'k8or.io/provider-config=staging'])).code, 0);
    await eventually('new Buckets in apps default to staging', async () => ((await providerConfigOnDryRun()) === 'staging' ? true : undefined));
    assert.equal((await kubectl(['annotate', 'namespace', 'apps', 'k8or.io/provider-config-'])).code, 0);
    await eventually('new Buckets in apps default to the cluster default again', async () => ((await providerConfigOnDryRun()) === 'default' ? true : undefined));
  });

  it('kubectl prints the denial, naming every field and rule', async () => {
    const run = await apply('bad', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: bad\n  namespace: apps\nspec:\n  name: Bad_Bucket\n  location: moon-1\n');
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /spec\.name: S3 bucket names may contain only lowercase letters.*\(rule s3\.characters\)/);
    assert.match(run.stderr, /spec\.location: "moon-1" is not an AWS region name.*\(rule aws\.region\)/);
    assert.equal((await kubectl(['get', 'bucket', 'bad', '-n', 'apps'])).code, 1, 'nothing was stored');
  });

  it('kubectl prints the portability warnings', async () => {
    const run = await apply(
      'archive',
      'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: archive\n  namespace: apps\nspec:\n  lifecycle:\n  - id: cold\n    transitions:\n    - days: 180\n      tier: Archive\n',
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /Warning: spec\.lifecycle\[0\]\.transitions: tier Archive maps to S3 GLACIER/);
    // Said once: a later unrelated write does not repeat it.
    const labelled = await kubectl(['label', 'bucket', 'archive', '-n', 'apps', 'team=media']);
    assert.equal(labelled.code, 0, labelled.stderr);
    assert.doesNotMatch(labelled.stderr, /Warning/);
  });

  it('a server-side dry run is admitted the same way and stores nothing', async () => {
    const denied = await apply('dry-bad', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: dry\n  namespace: apps\nspec:\n  name: x\n', ['--dry-run=server']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /\(rule s3\.length\)/);
    const ok = await apply('dry-good', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: dry\n  namespace: apps\n', ['--dry-run=server', '-o', 'yaml']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`name: ${defaultS3BucketName({ clusterId: CLUSTER_ID, namespace: 'apps', name: 'dry' })}`));
    assert.equal((await kubectl(['get', 'bucket', 'dry', '-n', 'apps'])).code, 1);
  });

  it('kubectl delete of a protected Bucket is denied with the command that lifts the protection', async () => {
    assert.equal((await apply('ledger', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: ledger\n  namespace: apps\n  annotations:\n    k8or.io/protect: "true"\n')).code, 0);
    const denied = await kubectl(['delete', 'bucket', 'ledger', '-n', 'apps']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /lift the protection with: kubectl annotate bucket ledger -n apps k8or\.io\/protect-/);
    assert.equal((await kubectl(['annotate', 'bucket', 'ledger', '-n', 'apps', 'k8or.io/protect-'])).code, 0);
    const deleted = await kubectl(['delete', 'bucket', 'ledger', '-n', 'apps']);
    assert.equal(deleted.code, 0, deleted.stderr);
  });

  it('a ProviderConfig that Buckets use cannot be deleted, and a Secret the operator cannot read is refused', async () => {
    // Poll with a dry run (no side effects) until the webhook's cache has seen the Bucket using `staging`.
    const denied = await eventually('the webhook sees team-a/reports using staging', async () => {
      const run = await kubectl(['delete', 'providerconfig', 'staging', '--dry-run=server']);
      return run.code !== 0 ? run : undefined;
    });
    assert.match(denied.stderr, /ProviderConfig "staging" cannot be deleted: 1 resource\(s\) still use it \(Bucket team-a\/reports\).*\(rule providerconfig\.in-use\)/);
    assert.notEqual((await kubectl(['delete', 'providerconfig', 'staging'])).code, 0);
    assert.equal((await kubectl(['get', 'providerconfig', 'staging'])).code, 0, 'still there');

    const secret = await apply(
      'creds',
      'apiVersion: k8or.io/v1alpha1\nkind: ProviderConfig\nmetadata:\n  name: creds\nspec:\n  provider: aws\n  region: us-east-1\n  credentials:\n    source: Secret\n    secretRef:\n      namespace: kube-system\n      name: aws\n',
    );
    assert.notEqual(secret.code, 0);
    assert.match(secret.stderr, /spec\.credentials\.secretRef\.namespace: the operator cannot read Secrets in namespace "kube-system"/);
  });

  it('a Bucket naming a ProviderConfig that does not exist is refused', async () => {
    const run = await apply('nowhere', 'apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: nowhere\n  namespace: apps\nspec:\n  providerConfigRef:\n    name: prod\n');
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /spec\.providerConfigRef\.name: ProviderConfig "prod" does not exist \(rule providerconfig\.exists\)/);
  });
});
