import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '@k8or/apiserver';
import { installCrds } from '@k8or/core';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { k8or } from './support.ts';

// `k8or validate` in a CI pipeline: an application repository holds Buckets and Tables, not the
// cluster's ProviderConfigs. Without them, the objects are checked as each installed provider, or as
// the one `--provider` names, or against the ProviderConfigs of `--provider-configs FILE` or of a
// cluster (`--context`, read-only). Exit 0 for what a cluster would admit, 1 otherwise, 2 for usage.

const bucket = (name: string, spec: Record<string, unknown>, namespace = 'default'): string =>
  stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'Bucket', metadata: { name, namespace }, spec });
const table = (name: string, namespace = 'default'): string =>
  stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'Table', metadata: { name, namespace }, spec: { partitionKey: { name: 'customerId', type: 'string' } } });
const providerConfig = (name: string, provider: string, extra: Record<string, unknown> = {}): string =>
  stringify({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec: { provider, ...extra } });
const namespace = (name: string, providerConfigName: string): string =>
  stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, annotations: { 'k8or.io/provider-config': providerConfigName } } });
const docs = (...documents: string[]): string => documents.join('---\n');

interface Verdict {
  kind: string;
  name: string;
  valid: boolean;
  violations: { field: string; rule: string; message: string }[];
  providerConfig?: string;
  assumedProvider?: string;
}
interface Report {
  valid: boolean;
  objects: Verdict[];
  providerConfigs?: { name: string; admittedAs: string[]; refusedAs: string[] }[];
  assumedProvider?: string;
}

const PROVIDERS = ['aws', 'azure', 'gcp'];

describe('k8or validate for CI: Buckets and Tables without the cluster\'s ProviderConfigs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-validate-ci-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const json = async (args: string[]): Promise<{ code: number; report: Report; stderr: string }> => {
    const result = await k8or(['validate', '-o', 'json', ...args]);
    return { code: result.code, report: JSON.parse(result.stdout) as Report, stderr: result.stderr };
  };

  it('admits an app repository\'s Bucket and Table with no ProviderConfig anywhere: checked as each installed provider, reported per cloud', async () => {
    // (before, this exited 1 with rule providerconfig.required on objects a cluster admits)
    const app = file('app.yaml', docs(bucket('photos', { versioning: true }, 'media'), table('orders', 'shop')));
    const result = await k8or(['validate', '-f', app]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, /providerconfig\.required/);
    for (const provider of PROVIDERS) {
      assert.match(result.stdout, new RegExp(`^as ${provider} \\(ProviderConfig "default", which the files do not hold, taken to be ${provider}, its settings unknown\\):\\n  .*app\\.yaml#1: Bucket media/photos: valid`, 'm'));
    }
    assert.match(result.stdout, /^ProviderConfig "default": admitted as aws, azure, gcp$/m);
    assert.match(result.stdout, /^2 objects: 2 valid, 0 invalid$/m);

    const { code, report } = await json(['-f', app]);
    assert.equal(code, 0);
    assert.equal(report.valid, true);
    assert.deepEqual(report.providerConfigs, [{ name: 'default', admittedAs: PROVIDERS, refusedAs: [] }]);
    assert.deepEqual(report.objects.map((o) => `${o.kind}/${o.name} ${o.assumedProvider} ${o.providerConfig} ${o.valid}`).sort(), [
      'Bucket/photos aws default true',
      'Bucket/photos azure default true',
      'Bucket/photos gcp default true',
      'Table/orders aws default true',
      'Table/orders azure default true',
      'Table/orders gcp default true',
    ]);
  });

  it('exits 0 when one cloud admits it, naming the clouds that would refuse it and why', async () => {
    // underscores: only Cloud Storage allows them
    const result = await json(['-f', file('gcs-only.yaml', bucket('raw', { name: 'raw_events' }))]);
    assert.equal(result.code, 0);
    assert.deepEqual(result.report.providerConfigs, [{ name: 'default', admittedAs: ['gcp'], refusedAs: ['aws', 'azure'] }]);
    const rules = (provider: string): string[] => result.report.objects.find((o) => o.assumedProvider === provider)?.violations.map((v) => v.rule) ?? [];
    assert.deepEqual(rules('aws'), ['s3.characters']);
    assert.deepEqual(rules('azure'), ['azure-container.characters']);
    assert.deepEqual(rules('gcp'), []);
  });

  it('exits 1 when no installed provider admits it, and when no one provider admits every object of one ProviderConfig', async () => {
    const nowhere = await k8or(['validate', '-f', file('nowhere.yaml', bucket('bad', { name: 'BAD' }))]);
    assert.equal(nowhere.code, 1, nowhere.stdout);
    assert.match(nowhere.stdout, /ProviderConfig "default": no installed provider admits every object that uses it \(refused as aws, azure, gcp\)/);
    assert.match(nowhere.stdout, /1 object: 0 valid, 1 invalid/);

    // "goog-logs" is refused by Cloud Storage only, "raw_events" admitted by it only: one cluster's
    // "default" is of one provider, so no cluster admits both...
    const split = await json(['-f', file('split.yaml', docs(bucket('a', { name: 'goog-logs' }), bucket('b', { name: 'raw_events' })))]);
    assert.equal(split.code, 1);
    assert.deepEqual(split.report.providerConfigs, [{ name: 'default', admittedAs: [], refusedAs: PROVIDERS }]);
    // ...but with a ProviderConfig each, a cluster with an S3 one and a Cloud Storage one does
    const apart = await json(['-f', file('apart.yaml', docs(bucket('a', { name: 'goog-logs', providerConfigRef: { name: 's3' } }), bucket('b', { name: 'raw_events', providerConfigRef: { name: 'gcs' } })))]);
    assert.equal(apart.code, 0, JSON.stringify(apart.report.providerConfigs));
    assert.deepEqual(apart.report.providerConfigs, [
      { name: 's3', admittedAs: ['aws', 'azure'], refusedAs: ['gcp'] },
      { name: 'gcs', admittedAs: ['gcp'], refusedAs: ['aws', 'azure'] },
    ]);
  });

  it('--provider checks as that cloud only; a ProviderConfig in the files still wins', async () => {
    const raw = file('raw.yaml', bucket('raw', { name: 'raw_events' }));
    const onAws = await k8or(['validate', '-f', raw, '--provider', 'aws']);
    assert.equal(onAws.code, 1);
    assert.match(onAws.stdout, /raw\.yaml#1: Bucket default\/raw: 1 violation\n {2}spec\.name: S3 bucket names may contain only lowercase letters, digits, dots \(\.\) and hyphens \(-\) \(rule s3\.characters\)/);
    assert.match(onAws.stdout, /ProviderConfig "default", which the files do not hold, taken to be aws \(its settings unknown\)/);
    assert.doesNotMatch(onAws.stdout, /^as /m, 'one provider: no per-cloud sections');
    const onGcp = await json(['-f', raw, '--provider', 'gcp']);
    assert.equal(onGcp.code, 0);
    assert.equal(onGcp.report.assumedProvider, 'gcp');
    assert.equal(onGcp.report.objects[0]?.assumedProvider, 'gcp');

    const withOwn = await json(['-f', file('own.yaml', docs(providerConfig('default', 'gcp', { project: 'media-prod' }), bucket('raw', { name: 'raw_events' }))), '--provider', 'aws']);
    assert.equal(withOwn.code, 0, JSON.stringify(withOwn.report));
    assert.equal(withOwn.report.objects.find((o) => o.kind === 'Bucket')?.assumedProvider, undefined);
  });

  it('--provider-configs FILE: only the ProviderConfigs of FILE (and its Namespaces\' defaults) exist, as in that cluster', async () => {
    const cluster = file('cluster.yaml', docs(providerConfig('default', 'aws', { region: 'eu-west-1' }), providerConfig('gcs-prod', 'gcp', { project: 'media-prod' }), namespace('media', 'gcs-prod')));
    const app = file('pc-app.yaml', docs(
      bucket('raw', { name: 'raw_events' }, 'media'), // media's default: gcs-prod, a Cloud Storage one
      bucket('photos', { name: 'photos-2026' }), // default: aws
      bucket('lost', { providerConfigRef: { name: 'missing' } }),
    ));
    const result = await json(['-f', app, '--provider-configs', cluster]);
    assert.equal(result.code, 1);
    assert.equal(result.report.providerConfigs, undefined);
    const verdict = (name: string): string => {
      const v = result.report.objects.find((o) => o.name === name);
      return `${v?.providerConfig} ${v?.valid} ${v?.violations.map((x) => x.rule).join(',')}`;
    };
    assert.equal(verdict('raw'), 'gcs-prod true ');
    assert.equal(verdict('photos'), 'default true ');
    assert.equal(verdict('lost'), 'missing false providerconfig.exists');
    assert.ok(result.report.objects.every((o) => o.assumedProvider === undefined));
    assert.equal(result.report.objects.length, 3, 'FILE\'s own objects are the cluster, not checked');
  });

  const usage: [string, string[], RegExp][] = [
    ['--provider with --provider-configs', ['--provider', 'aws', '--provider-configs', 'x.yaml'], /option '--provider <NAME>' cannot be used with option '--provider-configs <FILE>'/],
    ['--provider with --context', ['--provider', 'aws', '--context', 'prod'], /option '--provider <NAME>' cannot be used with option '--context <NAME>'/],
    ['--provider-configs with --context', ['--provider-configs', 'x.yaml', '--context', 'prod'], /option '--provider-configs <FILE>' cannot be used with option '--context <NAME>'/],
    ['a provider not installed', ['--provider', 'oracle'], /--provider oracle: not installed \(installed: aws, azure, gcp\)/],
    ['a missing --provider-configs file', ['--provider-configs', '/no/such/pcs.yaml'], /--provider-configs \/no\/such\/pcs\.yaml: no such file or directory/],
  ];
  for (const [what, args, message] of usage) {
    it(`exits 2 for ${what}`, async () => {
      const result = await k8or(['validate', '-f', file('usage.yaml', table('t')), ...args]);
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.match(result.stderr, message);
    });
  }

  it('exits 2 for a --provider-configs file without a ProviderConfig', async () => {
    const result = await k8or(['validate', '-f', file('t.yaml', table('t')), '--provider-configs', file('empty.yaml', namespace('media', 'x'))]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--provider-configs .*empty\.yaml: holds no ProviderConfig/);
  });
});

describe('k8or validate --context: the ProviderConfigs of a cluster, read-only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8or-validate-context-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  let sandbox: Sandbox;
  let app: string;

  before(async () => {
    sandbox = await startSandbox({ port: 0, logLevel: 'warn', recordRequests: true });
    const admin = new KubeConfig();
    admin.loadFromString(sandbox.kubeconfig);
    await installCrds(admin);
    const custom = admin.makeApiClient(CustomObjectsApi);
    const core = admin.makeApiClient(CoreV1Api);
    for (const [name, spec] of [['default', { provider: 'aws', region: 'eu-west-1' }], ['gcs-prod', { provider: 'gcp', project: 'media-prod' }]] as const) {
      await custom.createClusterCustomObject({ group: 'k8or.io', version: 'v1alpha1', plural: 'providerconfigs', body: { apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name }, spec } });
    }
    await core.createNamespace({ body: { metadata: { name: 'media', annotations: { 'k8or.io/provider-config': 'gcs-prod' } } } });
    // a second context, whose ServiceAccount may read nothing: a 403 must never pass for "no ProviderConfigs"
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'nobody' } } });
    const token = (await core.createNamespacedServiceAccountToken({ namespace: 'default', name: 'nobody', body: { spec: { audiences: [], expirationSeconds: 3600 } } })).status?.token;
    assert.ok(token, 'a token for nobody');
    const cluster = admin.getCurrentCluster()!;
    writeFileSync(kubeconfigPath, stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'sandbox', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(sandbox.caPem).toString('base64') } }],
      users: [{ name: 'admin', user: { token: sandbox.token } }, { name: 'nobody', user: { token } }],
      contexts: [{ name: 'prod', context: { cluster: 'sandbox', user: 'admin' } }, { name: 'restricted', context: { cluster: 'sandbox', user: 'nobody' } }],
      'current-context': 'restricted',
    }));
    app = join(dir, 'app.yaml');
    writeFileSync(app, docs(bucket('raw', { name: 'raw_events' }, 'media'), bucket('photos', { name: 'photos-2026' }), bucket('lost', { providerConfigRef: { name: 'missing' } })));
  });

  after(async () => {
    await sandbox?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('checks against the context\'s ProviderConfigs and Namespaces, and only reads', async () => {
    sandbox.clearRequestLog();
    const result = await k8or(['validate', '-f', app, '--context', 'prod', '--kubeconfig', kubeconfigPath, '-o', 'json']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assert.deepEqual(
      report.objects.map((o) => `${o.name} ${o.providerConfig} ${o.valid} ${o.violations.map((v) => v.rule).join(',')}`),
      ['raw gcs-prod true ', 'photos default true ', 'lost missing false providerconfig.exists'],
    );
    const verbs = new Set(sandbox.requestLog.map((r) => r.verb));
    assert.deepEqual([...verbs].sort(), ['list'], 'LISTs only');

    // the same with KUBECONFIG instead of --kubeconfig
    const fromEnv = await k8or(['validate', '-f', app, '--context', 'prod'], { env: { ...process.env, KUBECONFIG: kubeconfigPath } });
    assert.equal(fromEnv.code, 1);
    assert.match(fromEnv.stdout, /Bucket default\/lost: 1 violation\n {2}spec\.providerConfigRef\.name: ProviderConfig "missing" does not exist/);
  });

  it('a 403 stops validate (exit 1) with the API server\'s words, rather than refuse every object', async () => {
    const result = await k8or(['validate', '-f', app, '--kubeconfig', kubeconfigPath]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /k8or validate: cannot read the ProviderConfigs and Namespaces of context restricted: 403: .*forbidden/);
  });

  it('exits 2 for a context the kubeconfig does not have', async () => {
    const result = await k8or(['validate', '-f', app, '--kubeconfig', kubeconfigPath, '--context', 'staging']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--context staging: no such context in the kubeconfig \(contexts: prod, restricted\)/);
  });
});
