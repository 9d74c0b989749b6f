import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { allCrds, type Bucket, type ProviderConfig, type Table } from '@k8or/api';
import { KubeRest, k8orPath } from '@k8or/core';
import { awsValidation, validateProviderConfig } from '@k8or/provider-aws';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

const examplesDirectory = new URL('../../../examples/aws/', import.meta.url);
const load = (file: string): unknown[] =>
  parseAllDocuments(readFileSync(new URL(file, examplesDirectory), 'utf8')).map((document) => document.toJSON() as unknown);

describe('examples/aws', () => {
  const [secret, providerConfig] = load('providerconfig.yaml') as [Record<string, unknown>, ProviderConfig];
  const [bucket] = load('bucket.yaml') as [Bucket];
  const [table] = load('table.yaml') as [Table];
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

  it('hold a Secret with the keys the provider reads, and a valid ProviderConfig', () => {
    assert.deepEqual(Object.keys(secret['stringData'] as object).sort(), ['accessKeyId', 'secretAccessKey']);
    assert.deepEqual(validateProviderConfig(providerConfig), { violations: [], warnings: [] });
  });

  it('pass the AWS provider\'s rules, with only the expected portability notes', () => {
    const bucketResult = awsValidation.validate('Bucket', bucket, providerConfig);
    assert.deepEqual(bucketResult.violations, []);
    assert.ok(bucketResult.warnings.every((w) => /STANDARD_IA|GLACIER/.test(w)), bucketResult.warnings.join('\n'));
    assert.deepEqual(awsValidation.validate('Table', table, providerConfig).violations, []);
  });

  it('are accepted by the CRD schemas and their CEL rules', async () => {
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    await user.create(k8orPath('Bucket', 'default'), bucket);
    await user.create(k8orPath('Table', 'default'), table);
    assert.equal((await user.get<Bucket>(k8orPath('Bucket', 'default', 'media-archive')))?.spec.lifecycle?.length, 3);
    assert.equal((await user.get<Table>(k8orPath('Table', 'default', 'customer-orders')))?.spec.sortKey?.name, 'orderedAt');
  });
});
