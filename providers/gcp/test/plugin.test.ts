import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Container } from 'inversify';
import { loadedProviders } from '@k8or/core';
import gcpModule, { gcpProvider, gcpSettingsSchema } from '@k8or/provider-gcp';
import gcpOperatorEntry from '@k8or/provider-gcp/module';

describe('the package as the operator loads it', () => {
  it('binds the GCP plugin through its default export, a ContainerModule, the same as its ./module entry', async () => {
    assert.equal(gcpOperatorEntry, gcpModule);
    const container = new Container();
    await container.load(gcpModule);
    const plugin = loadedProviders(container).get('gcp');
    assert.equal(plugin, gcpProvider);
    assert.equal(plugin?.packageName, '@k8or/provider-gcp');
    assert.equal(typeof plugin?.connectors.Bucket?.list, 'function');
    assert.equal(typeof plugin?.connectors.Table?.connect, 'function');
    assert.equal(plugin?.settingsSchema, gcpSettingsSchema);
    assert.ok(plugin?.naming?.Bucket && plugin.naming.Table);
  });

  it('loads none of the cloud\'s SDKs with the plugin and its validation: they load with the first resource', () => {
    const script = `
      import { registerHooks } from 'node:module';
      const sdks = new Set();
      registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); const m = /@google-cloud\\/[a-z-]+/.exec(found.url); if (m) sdks.add(m[0]); return found; } });
      const { Container } = await import('inversify');
      const { loadedProviders } = await import('@k8or/core');
      const container = new Container();
      await container.load((await import('@k8or/provider-gcp/module')).default);
      const plugin = loadedProviders(container).get('gcp');
      plugin.validation.validateProviderConfig({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'default' }, spec: { provider: 'gcp' } });
      console.log(JSON.stringify([...sdks].sort()));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout.trim()), []);
  });
});

describe('targetOf: where a ProviderConfig points, for the engine\'s pinned target', () => {
  const providerConfig = (spec: Record<string, unknown>) => ({ apiVersion: 'k8or.io/v1alpha1', kind: 'ProviderConfig', metadata: { name: 'p' }, spec: { provider: 'gcp', ...spec } }) as Parameters<NonNullable<typeof gcpProvider.targetOf>>[1];
  const targetOf = (kind: 'Bucket' | 'Table', spec: Record<string, unknown>, credentials?: Record<string, string>) => gcpProvider.targetOf?.(kind, providerConfig(spec), credentials);

  it('a Table: the project, the Bigtable instance and the emulator host', () => {
    assert.deepEqual(targetOf('Table', { project: 'p1', bigtableInstance: 'i1' }), { project: 'p1', instance: 'i1', endpoint: '' });
    assert.deepEqual(targetOf('Table', { project: 'p1', bigtableInstance: 'i1', endpoints: { table: 'http://127.0.0.1:8086' } }), { project: 'p1', instance: 'i1', endpoint: '127.0.0.1:8086' });
  });

  it('a Bucket: the Cloud Storage endpoint only (bucket names are global; the identity tells another project\'s bucket)', () => {
    assert.deepEqual(targetOf('Bucket', { project: 'p1', region: 'EU' }), { endpoint: '' });
    assert.deepEqual(targetOf('Bucket', { project: 'p1', endpoint: 'http://gcs:4443' }), { endpoint: 'http://gcs:4443' });
  });

  it('never holds credentials: a new key for the same project keeps the target', () => {
    const spec = { project: 'p1', bigtableInstance: 'i1' };
    assert.deepEqual(targetOf('Table', spec, { 'credentials.json': '{"private_key":"old"}' }), targetOf('Table', spec, { 'credentials.json': '{"private_key":"new"}' }));
  });
});
