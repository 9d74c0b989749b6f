import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { installCrds } from '@k8or/core';
import { waitFor } from '@k8or/core/testing';
import { awsProvider, defaultDynamoDbTableName } from '@k8or/provider-aws';
import { startWebhookServer, type WebhookServer } from '@k8or/webhook';
import { kubectlFor, type Kubectl, type Run } from './helpers/kubectl.ts';

const CLUSTER_ID = 'one-object-test';

const table = (namespace: string, name: string, spec: string, annotations = ''): string =>
  `apiVersion: k8or.io/v1alpha1\nkind: Table\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n${annotations ? `  annotations:\n${annotations}` : ''}spec:\n  partitionKey: { name: id, type: string }\n${spec}`;

/**
 * One object per cloud resource, as a user meets it: real kubectl through the sandbox API server
 * and the webhook. A second Bucket or Table that names a cloud resource another object already
 * names (same cloud target, kind and external name) is refused, naming the first.
 */
describe('one object per cloud resource: the webhook refuses a second object naming the same resource', () => {
  let sandbox: Sandbox;
  let webhook: WebhookServer;
  let dir: string;
  let kubectl: Kubectl;

  /**
   * The webhook sees other objects through its list+watch caches, a moment after they are stored:
   * a server-side dry run (no side effects) is retried until the denial shows, then the real apply
   * must be denied too.
   */
  const denied = async (file: string, yaml: string): Promise<Run> => {
    const dry = await waitFor(`${file} is denied`, async () => {
      const run = await kubectl.apply(file, yaml, ['--dry-run=server']);
      return run.code !== 0 ? run : undefined;
    }, 30_000);
    const real = await kubectl.apply(file, yaml);
    assert.notEqual(real.code, 0, real.stdout);
    assert.equal(real.stderr, dry.stderr);
    return real;
  };
  const created = async (file: string, yaml: string): Promise<void> => {
    const run = await kubectl.apply(file, yaml);
    assert.equal(run.code, 0, run.stderr);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'k8or-one-object-'));
    sandbox = await startSandbox({ kubeconfigPath: join(dir, 'kubeconfig'), logLevel: 'error' });
    kubectl = kubectlFor(join(dir, 'kubeconfig'), dir);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    await installCrds(kubeConfig);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    await waitFor('the CRDs are served', () => custom.listClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs' }).catch(() => undefined));
    const core = kubeConfig.makeApiClient(CoreV1Api);
    for (const name of ['apps', 'shop', 'k8or-system']) await core.createNamespace({ body: { metadata: { name } } });
    for (const [name, region] of [
      ['default', 'us-east-1'],
      ['staging', 'eu-west-1'],
      ['solo', 'ap-south-1'],
    ]) {
      await custom.createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: { provider: 'aws', region } } });
    }
    webhook = await startWebhookServer({ port: 0, tls: { selfSigned: {} }, kubeConfig, providers: [awsProvider], clusterId: CLUSTER_ID, caBundle: { register: true }, logLevel: 'silent', processMetrics: false });
    await waitFor('the webhook caches are synced', () => webhook.isReady());
  });

  after(async () => {
    await webhook?.close();
    await sandbox?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl apply of a second Table with the same spec.name is denied, naming the first, the field and the rule', async () => {
    await created('orders', table('shop', 'orders', '  name: orders\n'));
    const run = await denied('orders-copy', table('apps', 'orders-copy', '  name: orders\n'));
    assert.match(run.stderr, /The Table "orders-copy" is invalid/);
    assert.match(run.stderr, /spec\.name: .*Table shop\/orders already names DynamoDB table "orders"|spec\.name: .*Table shop\/orders .*"orders"/);
    assert.match(run.stderr, /one object per cloud resource/);
    assert.match(run.stderr, /\(rule cloud-resource\.one-object\)/);
    assert.equal((await kubectl.run(['get', 'table', 'orders-copy', '-n', 'apps'])).code, 1, 'nothing was stored');
    // The first object itself is still free to change.
    const relabelled = await kubectl.run(['label', 'table', 'orders', '-n', 'shop', 'team=sales']);
    assert.equal(relabelled.code, 0, relabelled.stderr);
    await created('orders', table('shop', 'orders', '  name: orders\n  pointInTimeRecovery: true\n'));
  });

  it('the k8or.io/external-name annotation counts', async () => {
    const run = await denied('by-annotation', table('apps', 'by-annotation', '', '    k8or.io/external-name: orders\n'));
    assert.match(run.stderr, /Table shop\/orders/);
    assert.match(run.stderr, /\(rule cloud-resource\.one-object\)/);
  });

  it('a defaulted external name counts: naming it in another object is denied', async () => {
    await created('ledger', table('apps', 'ledger', ''));
    const defaulted = defaultDynamoDbTableName({ clusterId: CLUSTER_ID, namespace: 'apps', name: 'ledger' });
    const stored = await kubectl.run(['get', 'table', 'ledger', '-n', 'apps', '-o', 'jsonpath={.spec.name}']);
    assert.equal(stored.stdout, defaulted);
    const run = await denied('ledger-copy', table('shop', 'ledger-copy', `  name: ${defaulted}\n`));
    assert.match(run.stderr, /Table apps\/ledger/);
  });

  it('the same name under another cloud target is another resource; moving onto the first one is denied', async () => {
    await created('orders-eu', table('apps', 'orders-eu', '  name: orders\n  providerConfigRef: { name: staging }\n'));
    const moved = await waitFor('the move is denied', async () => {
      const run = await kubectl.run(['patch', 'table', 'orders-eu', '-n', 'apps', '--dry-run=server', '--type', 'merge', '-p', '{"spec":{"providerConfigRef":{"name":"default"}}}']);
      return run.code !== 0 ? run : undefined;
    });
    assert.match(moved.stderr, /Table shop\/orders/);
    assert.match(moved.stderr, /\(rule cloud-resource\.one-object\)/);
    const real = await kubectl.run(['patch', 'table', 'orders-eu', '-n', 'apps', '--type', 'merge', '-p', '{"spec":{"providerConfigRef":{"name":"default"}}}']);
    assert.notEqual(real.code, 0);
    assert.equal((await kubectl.run(['get', 'table', 'orders-eu', '-n', 'apps', '-o', 'jsonpath={.spec.providerConfigRef.name}'])).stdout, 'staging');
  });

  it('editing a ProviderConfig so that two objects would name one resource is denied, naming both', async () => {
    const run = await waitFor('the retarget is denied', async () => {
      const attempt = await kubectl.run(['patch', 'providerconfig', 'staging', '--dry-run=server', '--type', 'merge', '-p', '{"spec":{"region":"us-east-1"}}']);
      return attempt.code !== 0 ? attempt : undefined;
    });
    assert.match(run.stderr, /Table apps\/orders-eu/);
    assert.match(run.stderr, /Table shop\/orders/);
    assert.match(run.stderr, /\(rule cloud-resource\.one-object\)/);
    assert.notEqual((await kubectl.run(['patch', 'providerconfig', 'staging', '--type', 'merge', '-p', '{"spec":{"region":"us-east-1"}}'])).code, 0);
    assert.equal((await kubectl.run(['get', 'providerconfig', 'staging', '-o', 'jsonpath={.spec.region}'])).stdout, 'eu-west-1');
  });

  it('pointing a ProviderConfig away from resources its objects created is admitted with a warning (the target is pinned)', async () => {
    await created('made', table('apps', 'made', '  name: made-in-mumbai\n  providerConfigRef: { name: solo }\n', '    k8or.io/create-succeeded: "2026-01-01T00:00:00Z"\n'));
    const run = await waitFor('the warning shows', async () => {
      const attempt = await kubectl.run(['patch', 'providerconfig', 'solo', '--dry-run=server', '--type', 'merge', '-p', '{"spec":{"region":"ap-southeast-1"}}']);
      return attempt.code === 0 && /Warning/.test(attempt.stderr) ? attempt : undefined;
    }, 30_000);
    assert.match(run.stderr, /Warning: ProviderConfig "solo" now points elsewhere for Table apps\/made, which may have created its resource in aws \(region=ap-south-1\): the target of a created resource is pinned/);
  });

  it('a second Bucket naming the same bucket is denied too', async () => {
    const bucket = (namespace: string, name: string): string => `apiVersion: k8or.io/v1alpha1\nkind: Bucket\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec:\n  name: shared-assets-0f3c\n`;
    await created('assets', bucket('apps', 'assets'));
    const run = await denied('assets-copy', bucket('shop', 'assets-copy'));
    assert.match(run.stderr, /Bucket apps\/assets/);
    assert.match(run.stderr, /\(rule cloud-resource\.one-object\)/);
  });
});
