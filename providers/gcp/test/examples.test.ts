import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { allCrds, type Bucket, type ProviderConfig, type Table } from '@k8or/api';
import { KubeRest, k8orPath } from '@k8or/core';
import { gcpValidation, serviceAccountKeyFrom, validateProviderConfig } from '@k8or/provider-gcp';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

const load = (directory: string, file: string): unknown[] =>
  parseAllDocuments(readFileSync(new URL(`../../../examples/${directory}/${file}`, import.meta.url), 'utf8')).map((document) => document.toJSON() as unknown);

describe('examples/gcp and examples/sandbox/gcp', () => {
  const [secret, providerConfig] = load('gcp', 'providerconfig.yaml') as [{ stringData: Record<string, string> }, ProviderConfig];
  const [bucket] = load('gcp', 'bucket.yaml') as [Bucket];
  const [table] = load('gcp', 'table.yaml') as [Table];
  const [sandboxBucket] = load('sandbox/gcp', 'bucket.yaml') as [Bucket];
  const [sandboxTable] = load('sandbox/gcp', 'table.yaml') as [Table];
  let sandbox: Sandbox;
  let user: KubeRest;

  before(async () => {
    sandbox = await startSandbox();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromString(sandbox.kubeconfig);
    user = new KubeRest(kubeConfig, { userAgent: 'examples-test' });
    for (const crd of allCrds()) await user.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  });
  after(async () => {
    user?.close();
    await sandbox?.stop();
  });

  it('hold a Secret with the key the provider reads, and a valid ProviderConfig', () => {
    assert.deepEqual(Object.keys(secret.stringData), ['credentials.json']);
    assert.equal(serviceAccountKeyFrom(providerConfig, secret.stringData)?.client_email, 'k8or-operator@my-project-123.iam.gserviceaccount.com');
    assert.deepEqual(validateProviderConfig(providerConfig).violations, []);
  });

  it('pass the GCP provider\'s rules, with only the expected portability notes', () => {
    for (const resource of [bucket, sandboxBucket]) {
      const result = gcpValidation.validate('Bucket', resource, providerConfig);
      assert.deepEqual(result.violations, []);
      assert.ok(result.warnings.every((w) => /NEARLINE|ARCHIVE/.test(w)), result.warnings.join('\n'));
    }
    for (const resource of [table, sandboxTable]) {
      const result = gcpValidation.validate('Table', resource, providerConfig);
      assert.deepEqual(result.violations, []);
      assert.ok(result.warnings.every((w) => /partitionKey#sortKey/.test(w)), result.warnings.join('\n'));
    }
  });

  it('are accepted by the CRD schemas and their CEL rules', async () => {
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    for (const resource of [bucket, sandboxBucket]) await user.create(k8orPath('Bucket', 'default'), resource);
    for (const resource of [table, sandboxTable]) await user.create(k8orPath('Table', 'default'), resource);
    assert.equal((await user.get<Bucket>(k8orPath('Bucket', 'default', 'photos')))?.spec.encryption?.type, 'CustomerManaged');
    assert.equal((await user.get<ProviderConfig>(k8orPath('ProviderConfig', undefined, 'gcp')))?.spec.settings?.['storageClass'], 'STANDARD');
  });
});
