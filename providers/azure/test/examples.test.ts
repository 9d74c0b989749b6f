import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { allCrds, type Bucket, type ProviderConfig, type Table } from '@k8or/api';
import { KubeRest, k8orPath } from '@k8or/core';
import { azureProvider, azureValidation, validateProviderConfig } from '@k8or/provider-azure';
import { startSandbox, type Sandbox } from '@k8or/apiserver';

const load = (directory: string, file: string): unknown[] =>
  parseAllDocuments(readFileSync(new URL(`../../../examples/${directory}/${file}`, import.meta.url), 'utf8')).map((document) => document.toJSON() as unknown);

describe('examples/azure and examples/sandbox/azure', () => {
  const [secret, providerConfig] = load('azure', 'providerconfig.yaml') as [Record<string, unknown>, ProviderConfig];
  const buckets = [load('azure', 'bucket.yaml')[0], load('sandbox/azure', 'bucket.yaml')[0]] as Bucket[];
  const tables = [load('azure', 'table.yaml')[0], load('sandbox/azure', 'table.yaml')[0]] as Table[];
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
    await user.create(k8orPath('ProviderConfig', undefined), providerConfig);
    for (const bucket of buckets) await user.create(k8orPath('Bucket', 'default'), bucket);
    for (const table of tables) await user.create(k8orPath('Table', 'default'), table);
    assert.equal((await user.get<Bucket>(k8orPath('Bucket', 'default', 'invoices')))?.spec.labels?.['cost_centre'], 'cc42');
    assert.equal((await user.get<Table>(k8orPath('Table', 'default', 'orders')))?.spec.deletionProtection, true);
  });
});
