import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Bucket, ProviderConfig, Table } from '@k8or/api';
import { k8orPath } from '@k8or/core';
import { azureProvider, azureValidation, validateProviderConfig } from '@k8or/provider-azure';
import { crdSandboxForSuite, loadExample } from '@k8or/provider-testkit';

describe('examples/azure and examples/sandbox/azure', () => {
  const [secret, providerConfig] = loadExample('azure', 'providerconfig.yaml') as [Record<string, unknown>, ProviderConfig];
  const buckets = [loadExample('azure', 'bucket.yaml')[0], loadExample('sandbox/azure', 'bucket.yaml')[0]] as Bucket[];
  const tables = [loadExample('azure', 'table.yaml')[0], loadExample('sandbox/azure', 'table.yaml')[0]] as Table[];
  const cluster = crdSandboxForSuite();

  it('hold a Secret with one of the keys the provider reads, and a valid ProviderConfig', () => {
    assert.deepEqual(Object.keys(secret['stringData'] as object), ['accountKey']);
    assert.deepEqual(validateProviderConfig(providerConfig), { violations: [], warnings: [] });
  });

  it('pass the Azure naming rules and spec rules, with only the key-mapping and deletion-protection notes', () => {
    for (const bucket of buckets) {
      if (bucket.spec.name) assert.deepEqual(azureProvider.naming?.Bucket?.validate(bucket.spec.name, 'spec.name'), []);
      assert.deepEqual(azureValidation.validate('Bucket', bucket, providerConfig), { violations: [], warnings: [] });
    }
    for (const table of tables) {
      if (table.spec.name) assert.deepEqual(azureProvider.naming?.Table?.validate(table.spec.name, 'spec.name'), []);
      const result = azureValidation.validate('Table', table, providerConfig);
      assert.deepEqual(result.violations, []);
      assert.ok(result.warnings.every((w) => /^spec\.(partitionKey|deletionProtection)/.test(w)), result.warnings.join('\n'));
    }
  });

  it('are accepted by the CRD schemas and their CEL rules', async () => {
    await cluster.user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    for (const bucket of buckets) await cluster.user.create(k8orPath('Bucket', 'default'), bucket);
    for (const table of tables) await cluster.user.create(k8orPath('Table', 'default'), table);
    assert.equal((await cluster.user.get<Bucket>(k8orPath('Bucket', 'default', 'invoices')))?.spec.labels?.['cost_centre'], 'cc42');
    assert.equal((await cluster.user.get<Table>(k8orPath('Table', 'default', 'orders')))?.spec.deletionProtection, true);
  });
});
