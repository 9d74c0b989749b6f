import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import azureModule, { azureProvider } from '@k8or/provider-azure';
import azureOperatorEntry from '@k8or/provider-azure/module';

describe('the package as the operator loads it', () => {
  it('binds the Azure plugin through its default export, a ContainerModule, the same as its ./module entry', async () => {
    assert.equal(azureOperatorEntry, azureModule);
    const container = new Container();
    await container.load(azureModule);
    const plugin = loadedProviders(container).get('azure');
    assert.equal(plugin, azureProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-azure');
    assert.equal(typeof plugin?.connectors.Bucket?.list, 'function');
    assert.equal(typeof plugin?.connectors.Table?.connect, 'function');
    assert.ok(plugin?.naming?.Bucket && plugin.naming.Table);
  });

  it('loads none of the cloud\'s SDKs with the plugin and its validation: they load with the first resource', () => {
    const script = `
      import { registerHooks } from 'node:module';
      const sdks = new Set();
      registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); const m = /@azure\\/[a-z-]+/.exec(found.url); if (m) sdks.add(m[0]); return found; } });
      const { Container } = await import('inversify');
      const { loadedProviders } = await import('@k8or/core');
      const container = new Container();
      await container.load((await import('@k8or/provider-azure/module')).default);
      const plugin = loadedProviders(container).get('azure');
      plugin.validation.validateProviderConfig({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'azure' } });
      console.log(JSON.stringify([...sdks].sort()));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), []);
  });

  it("loads its SDKs without node's undici, which their ES module builds load through node:http (4 MiB resident)", () => {
    const script = `
      await import('@k8or/provider-azure');
      console.log(JSON.stringify(process.moduleLoadList.filter((name) => name.includes('undici'))));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), []);
  });
});

describe('targetOf: where a ProviderConfig points, for the engine\'s pinned target', () => {
  const providerConfig = (spec: Record<string, unknown>) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'p' }, spec: { provider: 'azure', ...spec } }) as Parameters<NonNullable<typeof azureProvider.targetOf>>[1];
  const targetOf = (kind: 'Bucket' | 'Table', spec: Record<string, unknown>, credentials?: Record<string, string>) => azureProvider.targetOf?.(kind, providerConfig(spec), credentials);

  it('the storage account, the kind\'s endpoint and the endpoint suffix', () => {
    assert.deepEqual(targetOf('Bucket', { storageAccount: 'acct' }), { storageAccount: 'acct', endpoint: '', endpointSuffix: 'core.windows.net' });
    assert.deepEqual(targetOf('Table', { storageAccount: 'acct', endpoints: { table: 'http://127.0.0.1:10002/acct' } }), { storageAccount: 'acct', endpoint: 'http://127.0.0.1:10002/acct', endpointSuffix: 'core.windows.net' });
  });

  it('takes the account and endpoint a connection string names, never its key or SAS: rotating the key keeps the target', () => {
    const connection = (key: string) => ({ connectionString: `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${key};BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;` });
    const before = targetOf('Bucket', {}, connection('old-key'));
    assert.deepEqual(before, { storageAccount: 'devstoreaccount1', endpoint: 'http://127.0.0.1:10000/devstoreaccount1', endpointSuffix: 'core.windows.net' });
    assert.deepEqual(targetOf('Bucket', {}, connection('new-key')), before);
    assert.deepEqual(targetOf('Bucket', { storageAccount: 'acct' }, { sasToken: 'sv=1&sig=secret' }), { storageAccount: 'acct', endpoint: '', endpointSuffix: 'core.windows.net' });
  });
});
