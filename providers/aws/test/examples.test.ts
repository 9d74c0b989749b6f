import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import { k8orPath } from '@k8or/core';
import { awsValidation, validateProviderConfig } from '@k8or/provider-aws';
import { crdSandboxForSuite, loadExample } from '@k8or/provider-testkit';

const load = (file: string): unknown[] => loadExample('aws', file);

describe('examples/aws', () => {
  const [secret, providerConfig] = load('providerconfig.yaml') as [Record<string, unknown>, ProviderConfig];
  const [bucket] = load('bucket.yaml') as [Bucket];
  const [table] = load('table.yaml') as [Table];
  const cluster = crdSandboxForSuite();

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
    await cluster.user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    await cluster.user.create(k8orPath('Bucket', 'default'), bucket);
    await cluster.user.create(k8orPath('Table', 'default'), table);
    assert.equal((await cluster.user.get<Bucket>(k8orPath('Bucket', 'default', 'media-archive')))?.spec.lifecycle?.length, 3);
    assert.equal((await cluster.user.get<Table>(k8orPath('Table', 'default', 'customer-orders')))?.spec.sortKey?.name, 'orderedAt');
  });
});
