import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import { k8orPath } from '@k8or/core';
import { gcpValidation, serviceAccountKeyFrom, validateProviderConfig } from '@k8or/provider-gcp';
import { crdSandboxForSuite, loadExample } from '@k8or/provider-testkit';

describe('examples/gcp and examples/sandbox/gcp', () => {
  const [secret, providerConfig] = loadExample('gcp', 'providerconfig.yaml') as [{ stringData: Record<string, string> }, ProviderConfig];
  const [bucket] = loadExample('gcp', 'bucket.yaml') as [Bucket];
  const [table] = loadExample('gcp', 'table.yaml') as [Table];
  const [sandboxBucket] = loadExample('sandbox/gcp', 'bucket.yaml') as [Bucket];
  const [sandboxTable] = loadExample('sandbox/gcp', 'table.yaml') as [Table];
  const cluster = crdSandboxForSuite();

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
    await cluster.user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    for (const resource of [bucket, sandboxBucket]) await cluster.user.create(k8orPath('Bucket', 'default'), resource);
    for (const resource of [table, sandboxTable]) await cluster.user.create(k8orPath('Table', 'default'), resource);
    assert.equal((await cluster.user.get<Bucket>(k8orPath('Bucket', 'default', 'photos')))?.spec.encryption?.type, 'CustomerManaged');
    assert.equal((await cluster.user.get<ProviderConfig>(k8orPath('ProviderConfig', undefined, 'gcp')))?.spec.settings?.['storageClass'], 'STANDARD');
  });
});
